import java.time.Duration;
import java.util.*;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.api.*;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.test.TestRecord;

public class PunctMix {
    public static void main(String[] args) {
        Topology t = new Topology();
        t.addSource("in", "in");
        t.addProcessor("P1", () -> new Processor<String, String, String, String>() {
            ProcessorContext<String, String> ctx;
            public void init(ProcessorContext<String, String> c) {
                ctx = c;
                c.schedule(Duration.ofMillis(10), PunctuationType.STREAM_TIME, ts -> c.forward(new Record<>("P1-st", ts + "/" + c.currentStreamTimeMs(), ts)));
                c.schedule(Duration.ofMillis(7), PunctuationType.WALL_CLOCK_TIME, ts -> c.forward(new Record<>("P1-wc", ts + "/" + c.currentSystemTimeMs(), ts)));
            }
            public void process(Record<String, String> r) {
                ctx.forward(new Record<>("P1", r.value() + "@" + ctx.currentStreamTimeMs(), r.timestamp()));
            }
        }, "in");
        t.addProcessor("P2", () -> new Processor<String, String, String, String>() {
            ProcessorContext<String, String> ctx;
            int fired = 0;
            Cancellable c2;
            public void init(ProcessorContext<String, String> c) {
                ctx = c;
                c2 = c.schedule(Duration.ofMillis(15), PunctuationType.STREAM_TIME, ts -> {
                    fired++;
                    c.forward(new Record<>("P2-st", ts + "#" + fired, ts));
                    if (fired == 3) c2.cancel();
                });
            }
            public void process(Record<String, String> r) {
                if (r.value().equals("sched")) {
                    ctx.schedule(Duration.ofMillis(5), PunctuationType.STREAM_TIME, ts -> ctx.forward(new Record<>("P2-new", String.valueOf(ts), ts)));
                }
                ctx.forward(new Record<>("P2", r.value(), r.timestamp()));
            }
        }, "in");
        t.addSink("out", "out", "P1", "P2");
        Properties p = new Properties();
        p.put("application.id", "x");
        p.put("default.key.serde", Serdes.StringSerde.class.getName());
        p.put("default.value.serde", Serdes.StringSerde.class.getName());
        try (TopologyTestDriver d = new TopologyTestDriver(t, p, java.time.Instant.ofEpochMilli(1000))) {
            TestInputTopic<String, String> in = d.createInputTopic("in", new StringSerializer(), new StringSerializer());
            TestOutputTopic<String, String> out = d.createOutputTopic("out", new StringDeserializer(), new StringDeserializer());
            Object[] events = {0L, "a", 3L, "b", "w5", 12L, "sched", 12L, "c", "w3", 31L, "d", 29L, "late", "w20", 45L, "e", 46L, "f", "w0", 61L, "g"};
            for (int i = 0; i < events.length; ) {
                if (events[i] instanceof String && ((String) events[i]).startsWith("w")) {
                    d.advanceWallClockTime(Duration.ofMillis(Long.parseLong(((String) events[i]).substring(1))));
                    i++;
                } else {
                    in.pipeInput(null, (String) events[i + 1], (Long) events[i]);
                    i += 2;
                }
                for (TestRecord<String, String> r : out.readRecordsToList()) {
                    System.out.println(r.key() + " " + r.value() + " " + r.timestamp());
                }
                System.out.println("--");
            }
        }
    }
}
