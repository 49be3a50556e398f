import java.time.*;
import java.util.*;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.*;
import org.apache.kafka.streams.processor.api.Record;

public class LoopOrder {
    public static void main(String[] args) {
        Topology t = new Topology();
        t.addSource("in", "in");
        t.addProcessor("P", () -> new Processor<String, String, String, String>() {
            ProcessorContext<String, String> ctx;
            public void init(ProcessorContext<String, String> c) {
                ctx = c;
                c.schedule(Duration.ofMillis(100), PunctuationType.WALL_CLOCK_TIME, ts -> {
                    c.forward(new Record<>("w", "wa", 5), "SA");
                    c.forward(new Record<>("w", "wb", 5), "SB");
                    c.forward(new Record<>("w", "wa2", 5), "SA");
                });
            }
            public void process(Record<String, String> r) {
                long ts = r.timestamp();
                ctx.forward(r.withValue(r.value() + "-a1").withTimestamp(ts), "SA");
                ctx.forward(r.withValue(r.value() + "-b1").withTimestamp(ts), "SB");
                ctx.forward(r.withValue(r.value() + "-a2").withTimestamp(ts - 1), "SA");
                ctx.forward(r.withValue(r.value() + "-b2").withTimestamp(ts + 1), "SB");
                ctx.forward(r.withValue(r.value() + "-b3").withTimestamp(ts), "SB");
            }
        }, "in");
        t.addSink("SA", "la", "P");
        t.addSink("SB", "lb", "P");
        t.addSource("la", "la");
        t.addSource("lb", "lb");
        t.addProcessor("Q", () -> new Processor<String, String, String, String>() {
            ProcessorContext<String, String> ctx;
            public void init(ProcessorContext<String, String> c) { ctx = c; }
            public void process(Record<String, String> r) {
                RecordMetadata md = ctx.recordMetadata().get();
                ctx.forward(r.withValue(md.topic() + "@" + md.offset() + ":" + r.value() + "/st" + ctx.currentStreamTimeMs()));
            }
        }, "la", "lb");
        t.addSink("out", "out", "Q");
        Properties p = new Properties();
        p.put("application.id", "x");
        p.put("default.key.serde", Serdes.StringSerde.class.getName());
        p.put("default.value.serde", Serdes.StringSerde.class.getName());
        try (TopologyTestDriver d = new TopologyTestDriver(t, p, Instant.ofEpochMilli(0))) {
            TestInputTopic<String, String> in = d.createInputTopic("in", new StringSerializer(), new StringSerializer());
            TestOutputTopic<String, String> out = d.createOutputTopic("out", new StringDeserializer(), new StringDeserializer());
            in.pipeInput("k", "x", 10L);
            System.out.println(String.join("|", out.readValuesToList()));
            in.pipeInput("k", "y", 3L);
            System.out.println(String.join("|", out.readValuesToList()));
            d.advanceWallClockTime(Duration.ofMillis(100));
            System.out.println(String.join("|", out.readValuesToList()));
        }
    }
}
