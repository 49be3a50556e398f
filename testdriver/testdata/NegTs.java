import java.time.*;
import java.util.*;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;

public class NegTs {
    public static void main(String[] args) {
        List<String> log = new ArrayList<>();
        Topology t = new Topology();
        t.addSource("in", "in");
        t.addSink("out", "out", "in");
        for (String extractor : List.of("", "org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp", "org.apache.kafka.streams.processor.UsePartitionTimeOnInvalidTimestamp")) {
            Properties p = new Properties();
            p.put("application.id", "x");
            p.put("default.key.serde", Serdes.StringSerde.class.getName());
            p.put("default.value.serde", Serdes.StringSerde.class.getName());
            if (!extractor.isEmpty()) p.put("default.timestamp.extractor", extractor);
            try (TopologyTestDriver d = new TopologyTestDriver(t, p, Instant.ofEpochMilli(0))) {
                TestInputTopic<String, String> in = d.createInputTopic("in", new StringSerializer(), new StringSerializer());
                TestOutputTopic<String, String> out = d.createOutputTopic("out", new StringDeserializer(), new StringDeserializer());
                for (long ts : new long[]{5, -1, 7, -3}) {
                    try { in.pipeInput("k", "v" + ts, Instant.ofEpochMilli(ts)); log.add("ok"); } catch (Exception e) { log.add("error"); }
                }
                for (var r : out.readRecordsToList()) log.add(r.value() + "@" + r.timestamp());
            }
            log.add("|");
        }
        System.out.println(String.join(",", log));
    }
}
