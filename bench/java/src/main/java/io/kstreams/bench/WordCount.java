package io.kstreams.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Kafka Streams' WordCountDemo topology (lines split on \W+, lower-cased, grouped by word,
 * counted into "counts-store", every update written to the output topic), run until SIGTERM.
 *
 * Arguments: bootstrap application-id input-topic output-topic guarantee commit-interval-ms
 * cache-max-bytes state-dir [num-stream-threads, default 1]. Prints "started" on stdout once running.
 */
public final class WordCount {
    /** WordCountDemo's topology from input to output (default serdes: String). */
    static Topology topology(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> source = builder.stream(input);
        KTable<String, Long> counts = source
            .flatMapValues(value -> Arrays.asList(value.toLowerCase(Locale.getDefault()).split("\\W+")))
            .groupBy((key, value) -> value)
            .count(Materialized.as("counts-store"));
        counts.toStream().to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 8 && args.length != 9) {
            System.err.println("usage: WordCount bootstrap app-id input output guarantee commit-ms cache-bytes state-dir [threads]");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args[4]);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, args[5]);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, args[6]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[7]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, args.length == 9 ? args[8] : "1");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put("auto.offset.reset", "earliest");

        KafkaStreams streams = new KafkaStreams(topology(args[2], args[3]), props);
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            done.countDown();
        }));
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            System.exit(1);
            return null;
        });
        streams.start();
        System.out.println("started");
        done.await();
    }
}
