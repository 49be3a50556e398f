package io.kstreams.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * The word count of WordCount in TopologyTestDriver, no broker: pipes every line of a file
 * (reading the output every 10 000 lines so it does not pile up) and prints
 * "java-testdriver lines N words W outputs O seconds S lines/s R".
 *
 * Arguments: lines-file cache-max-bytes.
 */
public final class TestDriverWordCount {
    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]));
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "bench-testdriver");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, args[1]);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        long words = 0;
        for (String l : lines) {
            words += l.split("\\W+").length;
        }
        try (TopologyTestDriver d = new TopologyTestDriver(WordCount.topology("lines", "counts"), props)) {
            TestInputTopic<String, String> in = d.createInputTopic("lines", Serdes.String().serializer(), Serdes.String().serializer());
            TestOutputTopic<String, Long> out = d.createOutputTopic("counts", Serdes.String().deserializer(), Serdes.Long().deserializer());
            long outputs = 0;
            long start = System.nanoTime();
            for (int i = 0; i < lines.size(); i++) {
                in.pipeInput(lines.get(i));
                if (i % 10_000 == 9_999) {
                    outputs += out.readValuesToList().size();
                }
            }
            outputs += out.readValuesToList().size();
            double secs = (System.nanoTime() - start) / 1e9;
            System.out.printf("java-testdriver lines %d words %d outputs %d seconds %.3f lines/s %.0f%n",
                lines.size(), words, outputs, secs, lines.size() / secs);
        }
    }
}
