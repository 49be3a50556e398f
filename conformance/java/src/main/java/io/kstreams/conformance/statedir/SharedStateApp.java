package io.kstreams.conformance.statedir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.StateRestoreListener;

/**
 * A Java Kafka Streams 4.4 application on a real broker for kstreams-go's shared state
 * directory tests (package internal/interop): a Go and this Java instance take turns on one
 * state.dir, and either refuses to start while the other runs on it.
 *
 * <p>The topology (identical to the Go test's, {@code describe()} included) splits each input
 * line (String key, String value) into words ({@code \W+}, lower case) and
 * <ul>
 *   <li>counts every word into "counts-store" and writes each update to OUTPUT (String word, Long);</li>
 *   <li>counts every word per one-minute window (grace one day) into "windowed-counts" and
 *       writes each update to WINDOWED with the key "word@windowStart" (String, Long).</li>
 * </ul>
 * Every store is a default DSL store (persistent RocksDB, logged, cached).
 *
 * <pre>
 * SharedStateApp run --bootstrap HOST:PORT --app-id ID --input TOPIC --output TOPIC --windowed TOPIC
 *                    --state-dir DIR --guarantee at_least_once|exactly_once_v2 [--describe FILE]
 *                    [--group-protocol classic|streams]
 * </pre>
 * writes describe() to FILE (when given), starts, prints "state RUNNING" (and every other state)
 * and "restored STORE PARTITION N" at the end of each store restore on stdout, and runs until
 * its standard input closes; then it closes (leaving the group), prints "closed" and exits 0.
 * When the state directory is held by another instance, the KafkaStreams constructor fails:
 * it prints "locked: MESSAGE" on stdout and exits 3. Exit status 2 on a usage error, 1 on any
 * other failure.
 */
public final class SharedStateApp {
    private SharedStateApp() {
    }

    /** The shared topology; the Go test builds the same one. */
    static Topology topology(final String input, final String output, final String windowed) {
        final StreamsBuilder b = new StreamsBuilder();
        final KStream<String, String> words = b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(v -> Arrays.asList(v.toLowerCase(Locale.ROOT).split("\\W+")));
        words.groupBy((k, w) -> w, Grouped.with(Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts-store"))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        words.groupBy((k, w) -> w, Grouped.with(Serdes.String(), Serdes.String()))
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(1), Duration.ofDays(1)))
            .count(Materialized.as("windowed-counts"))
            .toStream()
            .selectKey((wk, n) -> wk.key() + "@" + wk.window().start())
            .to(windowed, Produced.with(Serdes.String(), Serdes.Long()));
        return b.build();
    }

    public static void main(final String[] args) throws Exception {
        if (args.length < 1 || !"run".equals(args[0])) {
            usage("missing mode run");
        }
        final Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage("bad argument " + args[i]);
            }
            opts.put(args[i].substring(2), args[++i]);
        }
        for (final String required : new String[] {"bootstrap", "app-id", "input", "output", "windowed", "state-dir", "guarantee"}) {
            if (!opts.containsKey(required)) {
                usage("missing --" + required);
            }
        }
        final Topology topology = topology(opts.get("input"), opts.get("output"), opts.get("windowed"));
        if (opts.containsKey("describe")) {
            Files.writeString(Path.of(opts.get("describe")), topology.describe().toString(), StandardCharsets.UTF_8);
        }
        final KafkaStreams streams;
        try {
            streams = new KafkaStreams(topology, props(opts));
        } catch (final RuntimeException e) {
            System.out.println("locked: " + e.getMessage());
            System.out.flush();
            System.exit(3);
            return;
        }
        final AtomicBoolean failed = new AtomicBoolean();
        streams.setStateListener((now, before) -> {
            System.out.println("state " + now);
            System.out.flush();
        });
        streams.setGlobalStateRestoreListener(new StateRestoreListener() {
            @Override
            public void onRestoreStart(final TopicPartition tp, final String store, final long start, final long end) {
            }

            @Override
            public void onBatchRestored(final TopicPartition tp, final String store, final long end, final long n) {
            }

            @Override
            public void onRestoreEnd(final TopicPartition tp, final String store, final long total) {
                System.out.println("restored " + store + " " + tp.partition() + " " + total);
                System.out.flush();
            }
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("failed: " + e);
            e.printStackTrace(System.out);
            System.out.flush();
            failed.set(true);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        waitForStdinClose(System.in);
        streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(60)));
        System.out.println("closed");
        System.out.flush();
        System.exit(failed.get() ? 1 : 0);
    }

    private static void waitForStdinClose(final InputStream in) throws IOException {
        final byte[] buf = new byte[256];
        while (in.read(buf) >= 0) {
            // the test writes nothing; it only closes the pipe
        }
    }

    private static Properties props(final Map<String, String> opts) {
        final Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, opts.get("app-id"));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        p.put(StreamsConfig.STATE_DIR_CONFIG, opts.get("state-dir"));
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, opts.get("guarantee"));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        p.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 6_000);
        p.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 500);
        if (opts.containsKey("group-protocol")) {
            p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, opts.get("group-protocol"));
        }
        return p;
    }

    private static void usage(final String message) {
        System.err.println("SharedStateApp: " + message);
        System.err.println("usage: SharedStateApp run --bootstrap B --app-id ID --input T --output T --windowed T "
            + "--state-dir DIR --guarantee G [--describe FILE] [--group-protocol classic|streams]");
        System.exit(2);
    }
}
