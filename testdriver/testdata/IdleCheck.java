import java.time.*;
import java.util.*;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.*;

public class IdleCheck {
    public static void main(String[] args) {
        for (String idle : List.of("0", "1000", "-1")) {
            List<String> log = new ArrayList<>();
            Topology t = new Topology();
            t.addSource("a", "a");
            t.addSource("b", "b");
            t.addSink("out", "out", "a", "b");
            Properties p = new Properties();
            p.put("application.id", "x");
            p.put("default.key.serde", Serdes.StringSerde.class.getName());
            p.put("default.value.serde", Serdes.StringSerde.class.getName());
            p.put("max.task.idle.ms", idle);
            try (TopologyTestDriver d = new TopologyTestDriver(t, p, Instant.ofEpochMilli(0))) {
                TestInputTopic<String, String> a = d.createInputTopic("a", new StringSerializer(), new StringSerializer());
                TestInputTopic<String, String> b = d.createInputTopic("b", new StringSerializer(), new StringSerializer());
                TestOutputTopic<String, String> out = d.createOutputTopic("out", new StringDeserializer(), new StringDeserializer());
                a.pipeInput("k", "a1", 10L);
                log.add("after a1:" + out.readValuesToList());
                a.pipeInput("k", "a2", 5L);
                log.add("after a2:" + out.readValuesToList());
                d.advanceWallClockTime(Duration.ofMillis(999));
                log.add("after 999:" + out.readValuesToList());
                d.advanceWallClockTime(Duration.ofMillis(1));
                log.add("after 1000:" + out.readValuesToList());
                b.pipeInput("k", "b1", 7L);
                log.add("after b1:" + out.readValuesToList());
                a.pipeInput("k", "a3", 8L);
                log.add("after a3:" + out.readValuesToList());
            }
            System.out.println("idle=" + idle + " " + String.join(" ", log));
        }
    }
}
