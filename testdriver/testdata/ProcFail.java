import java.time.*;
import java.util.*;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.processor.api.*;
import org.apache.kafka.streams.processor.api.Record;

public class ProcFail {
    public static void main(String[] args) {
        List<String> log = new ArrayList<>();
        Topology t = new Topology();
        t.addSource("in", "in");
        t.addProcessor("p", () -> new Processor<String, String, String, String>() {
            ProcessorContext<String, String> ctx;
            public void init(ProcessorContext<String, String> c) { ctx = c; }
            public void process(Record<String, String> r) {
                ctx.forward(r.withValue("before-" + r.value()));
                if (r.value().equals("bad")) throw new RuntimeException("boom");
                ctx.forward(r.withValue("after-" + r.value()));
            }
        }, "in");
        t.addSink("out", "out", "p");
        Properties p = new Properties();
        p.put("application.id", "x");
        p.put("default.key.serde", Serdes.StringSerde.class.getName());
        p.put("default.value.serde", Serdes.StringSerde.class.getName());
        try (TopologyTestDriver d = new TopologyTestDriver(t, p, Instant.ofEpochMilli(0))) {
            TestInputTopic<String, String> in = d.createInputTopic("in", new StringSerializer(), new StringSerializer());
            TestOutputTopic<String, String> out = d.createOutputTopic("out", new StringDeserializer(), new StringDeserializer());
            for (String v : List.of("a", "bad", "c")) {
                try { in.pipeInput("k", v, 1L); log.add("ok"); } catch (Exception e) { log.add("error"); }
                log.add(String.valueOf(out.readValuesToList()));
            }
        }
        System.out.println(String.join(",", log));
    }
}
