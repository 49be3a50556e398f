import java.util.*;
import java.util.regex.Pattern;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.processor.api.*;
import org.apache.kafka.streams.processor.api.Record;

public class PatternOffsets {
    public static void main(String[] args) {
        Topology t = new Topology();
        t.addSource("pat", Pattern.compile("orders-.*"));
        t.addSource("named", "other");
        t.addProcessor("echo", () -> new Processor<String, String, String, String>() {
            ProcessorContext<String, String> ctx;
            public void init(ProcessorContext<String, String> c) { ctx = c; }
            public void process(Record<String, String> r) {
                RecordMetadata md = ctx.recordMetadata().get();
                ctx.forward(r.withValue(md.topic() + "@" + md.offset()));
            }
        }, "pat", "named");
        t.addSink("sink", "out", "echo");
        Properties p = new Properties();
        p.put("application.id", "x");
        p.put("default.key.serde", Serdes.StringSerde.class.getName());
        p.put("default.value.serde", Serdes.StringSerde.class.getName());
        try (TopologyTestDriver d = new TopologyTestDriver(t, p)) {
            for (String topic : List.of("orders-eu", "orders-us", "other", "orders-eu")) {
                d.createInputTopic(topic, new StringSerializer(), new StringSerializer()).pipeInput("k", "v");
            }
            System.out.println(d.createOutputTopic("out", new StringDeserializer(), new StringDeserializer()).readValuesToList());
        }
    }
}
