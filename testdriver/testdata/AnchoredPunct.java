import java.time.*;
import java.util.*;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.*;
import org.apache.kafka.streams.processor.api.Record;

public class AnchoredPunct {
    public static void main(String[] args) {
        List<String> fired = new ArrayList<>();
        Topology t = new Topology();
        t.addSource("in", "in");
        t.addProcessor("p", () -> new Processor<String, String, Void, Void>() {
            ProcessorContext<Void, Void> ctx;
            boolean scheduled;
            public void init(ProcessorContext<Void, Void> c) {
                ctx = c;
                c.schedule(Instant.ofEpochMilli(1250), Duration.ofMillis(100), PunctuationType.WALL_CLOCK_TIME, ts -> fired.add("wc" + ts));
            }
            public void process(Record<String, String> r) {
                if (!scheduled) {
                    scheduled = true;
                    ctx.schedule(Instant.ofEpochMilli(10), Duration.ofMillis(10), PunctuationType.STREAM_TIME, ts -> fired.add("st" + ts));
                }
            }
        }, "in");
        Properties p = new Properties();
        p.put("application.id", "x");
        p.put("default.key.serde", Serdes.StringSerde.class.getName());
        p.put("default.value.serde", Serdes.StringSerde.class.getName());
        try (TopologyTestDriver d = new TopologyTestDriver(t, p, Instant.ofEpochMilli(1000))) {
            TestInputTopic<String, String> in = d.createInputTopic("in", new StringSerializer(), new StringSerializer());
            in.pipeInput("k", "v", 57L);
            in.pipeInput("k", "v", 59L);
            in.pipeInput("k", "v", 60L);
            for (long adv : new long[]{249, 1, 99, 1}) d.advanceWallClockTime(Duration.ofMillis(adv));
        }
        System.out.println(String.join(",", fired));
    }
}
