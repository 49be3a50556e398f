package io.kstreams.conformance.migration;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * Kafka Streams' WordCountDemo (the topology of bench/java's WordCount and of kstreams-go's
 * bench/wc: lines split on \W+, lower-cased, grouped by word, counted into "counts-store", every
 * update written to the output topic) on a real broker, for kstreams-go's mixed-group tests
 * (internal/interop): Go and Java instances of one application in one consumer group.
 *
 * <p>Usage: WordCountApp BOOTSTRAP APP_ID INPUT OUTPUT STATE_DIR [key=value ...]. The key=value
 * pairs are StreamsConfig properties (processing.guarantee, num.standby.replicas, ...), except
 * windowed.output=TOPIC, which adds a windowed count of the same grouped words (10 s tumbling
 * windows with a grace of 1 h, store "windowed-counts-store"), written to TOPIC keyed
 * "word@windowStartMs". One
 * stream thread. Prints "STATE &lt;state&gt;" on stdout at every state change, "TASKS active=A
 * standby=S" whenever its task counts change, and "DESCRIBE" followed by the topology's
 * description; runs until stdin closes or SIGTERM, then closes, leaving the group, and exits 0.
 * An uncaught exception is printed and exits 1.
 */
public final class WordCountApp {

    private WordCountApp() {}

    static Topology topology(final String input, final String output, final String windowedOutput) {
        final StreamsBuilder builder = new StreamsBuilder();
        final KStream<String, String> source = builder.stream(input);
        final KGroupedStream<String, String> words = source
            .flatMapValues(value -> Arrays.asList(value.toLowerCase(Locale.getDefault()).split("\\W+")))
            .groupBy((key, value) -> value);
        final KTable<String, Long> counts = words.count(Materialized.as("counts-store"));
        counts.toStream().to(output, Produced.with(Serdes.String(), Serdes.Long()));
        if (windowedOutput != null) {
            words.windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofHours(1)))
                .count(Materialized.as("windowed-counts-store"))
                .toStream((wk, n) -> wk.key() + "@" + wk.window().start())
                .to(windowedOutput, Produced.with(Serdes.String(), Serdes.Long()));
        }
        return builder.build();
    }

    public static void main(final String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: WordCountApp BOOTSTRAP APP_ID INPUT OUTPUT STATE_DIR [key=value ...]");
            System.exit(2);
        }
        Locale.setDefault(Locale.ROOT);
        final Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put("auto.offset.reset", "earliest");
        String windowedOutput = null;
        for (int i = 5; i < args.length; i++) {
            final int eq = args[i].indexOf('=');
            if (eq <= 0) {
                System.err.println("not key=value: " + args[i]);
                System.exit(2);
            }
            if (args[i].substring(0, eq).equals("windowed.output")) {
                windowedOutput = args[i].substring(eq + 1);
                continue;
            }
            props.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        final Topology topology = topology(args[2], args[3], windowedOutput);
        final KafkaStreams streams = new KafkaStreams(topology, props);
        final CountDownLatch closed = new CountDownLatch(1);
        final Runnable close = () -> streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(60)));
        // Only the shutdown hook (SIGTERM, or System.exit after stdin closed) lets main end: had
        // the stdin thread's close let it end, the JVM could exit before that daemon thread printed
        // the final state (Kafka Streams calls the state listener for NOT_RUNNING on its daemon
        // close thread, after close has returned).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            close.run();
            closed.countDown();
        }));
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            System.out.println("STATE FAILED " + e);
            System.out.flush();
            Runtime.getRuntime().halt(1);
            return null;
        });
        System.out.println("DESCRIBE");
        System.out.println(topology.describe().toString());
        System.out.println("END DESCRIBE");
        System.out.flush();
        streams.start();
        final Thread tasks = new Thread(() -> {
            String last = "";
            while (true) {
                try {
                    Thread.sleep(100);
                    if (streams.state() == KafkaStreams.State.RUNNING) {
                        int active = 0;
                        int standby = 0;
                        for (final ThreadMetadata t : streams.metadataForLocalThreads()) {
                            active += t.activeTasks().size();
                            standby += t.standbyTasks().size();
                        }
                        final String now = "TASKS active=" + active + " standby=" + standby;
                        if (!now.equals(last)) {
                            System.out.println(now);
                            System.out.flush();
                            last = now;
                        }
                    }
                } catch (final InterruptedException e) {
                    return;
                } catch (final RuntimeException e) {
                    // closing: stop reporting
                    return;
                }
            }
        });
        tasks.setDaemon(true);
        tasks.start();
        // Closing stdin (the test's way of stopping the app without a signal) closes it too.
        final Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing: wait for EOF
                }
            } catch (final java.io.IOException ignored) {
                // stop as on EOF
            }
            close.run();
            // The state listener may not have printed the last transition yet.
            System.out.println("STATE " + streams.state());
            System.out.println("CLOSED");
            System.out.flush();
            System.exit(0);
        });
        stdin.setDaemon(true);
        stdin.start();
        closed.await();
    }
}
