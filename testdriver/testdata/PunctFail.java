import java.time.*;
import java.util.*;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.*;
import org.apache.kafka.streams.processor.api.Record;

public class PunctFail {
    public static void main(String[] args) {
        List<String> log = new ArrayList<>();
        Topology t = new Topology();
        t.addSource("in", "in");
        t.addProcessor("p", () -> new Processor<String, String, String, String>() {
            ProcessorContext<String, String> ctx;
            int n;
            public void init(ProcessorContext<String, String> c) {
                ctx = c;
                c.schedule(Duration.ofMillis(10), PunctuationType.WALL_CLOCK_TIME, ts -> {
                    n++;
                    log.add("fire" + n + "@" + ts);
                    if (n == 2) throw new RuntimeException("boom");
                    c.forward(new Record<>("p", "fired" + n, ts));
                });
            }
            public void process(Record<String, String> r) { ctx.forward(r); }
        }, "in");
        t.addSink("out", "out", "p");
        Properties p = new Properties();
        p.put("application.id", "x");
        p.put("default.key.serde", Serdes.StringSerde.class.getName());
        p.put("default.value.serde", Serdes.StringSerde.class.getName());
        try (TopologyTestDriver d = new TopologyTestDriver(t, p, Instant.ofEpochMilli(0))) {
            TestInputTopic<String, String> in = d.createInputTopic("in", new StringSerializer(), new StringSerializer());
            TestOutputTopic<String, String> out = d.createOutputTopic("out", new StringDeserializer(), new StringDeserializer());
            for (int i = 0; i < 4; i++) {
                try { d.advanceWallClockTime(Duration.ofMillis(10)); log.add("ok"); }
                catch (Exception e) { log.add("error:" + e.getClass().getSimpleName()); }
            }
            in.pipeInput("k", "v", 1L);
            log.add(String.valueOf(out.readValuesToList()));
        }
        System.out.println(String.join(",", log));
    }
}
