package io.kstreams.conformance.changelog;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.StateQueryResult;
import org.apache.kafka.streams.query.VersionedKeyQuery;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.ReadOnlySessionStore;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.TimestampedKeyValueStore;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.WindowStore;

/**
 * A Java Kafka Streams application on a real broker for the changelog cross-restore tests of
 * kstreams-go (package changelog, TestIntegrationJavaChangelog...).
 *
 * <p>The topology reads the input topic (String key, String value) and writes three persistent,
 * logged stores with the Processor API, for every record (key k, value v, timestamp ts):
 * <ul>
 *   <li>"kv" (key-value, String/String): put(k, v), or delete(k) when v is "del";</li>
 *   <li>"tskv" (timestamped key-value, String/String): put(k, (v, ts)), or delete(k) when v is "del";</li>
 *   <li>"win" (window, retention 1 h, size 10 s, String/Long): put(k, n, ts - ts % 10000);</li>
 *   <li>"sess" (session, retention 1 h, String/Long): put([k@ts/ts+1000], n), or remove it when v is "del";</li>
 *   <li>"ver" (versioned key-value, history retention 10 s, String/String): put(k, v, vts), or
 *       delete(k, vts) when v is "del", where vts = ts - ((ts / 1000) % 7) * 3000 (out of order,
 *       some beyond the history retention);</li>
 * </ul>
 * where n = Long.parseLong(v) (0 for "del").
 *
 * <pre>
 * ChangelogApp fill --bootstrap HOST:PORT --app-id ID --input TOPIC --state-dir DIR --expect N
 *     runs until N input records are processed, then closes (commit, checkpoint) and exits.
 * ChangelogApp dump --bootstrap HOST:PORT --app-id ID --input TOPIC --state-dir DIR --output FILE [--ver-probes T1,T2,...]
 *     starts (restoring the stores from their changelogs), waits until RUNNING, writes every
 *     entry of the three stores (interactive queries) as JSON lines, closes and exits:
 *     {"store":"kv","key":K,"value":V}
 *     {"store":"tskv","key":K,"value":V,"timestamp":TS}
 *     {"store":"win","key":K,"start":S,"end":E,"value":N}
 *     {"store":"sess","key":K,"start":S,"end":E,"value":N}
 *     {"store":"ver","key":K,"asOf":T,"value":V,"timestamp":TS}   (IQv2 VersionedKeyQuery, for
 *     the keys key-0 .. key-10, asOf -1 for the latest version and each probe T; null results left out)
 * ChangelogApp suppress --bootstrap HOST:PORT --app-id ID --input TOPIC --output TOPIC --state-dir DIR --expect N
 *     runs {@link #suppressTopology} until N input records are processed, then closes (the
 *     suppress buffer's changelog then holds the windows still open) and exits.
 * </pre>
 *
 * Exit status 0 on success, 2 on a usage error, 1 otherwise.
 */
public final class ChangelogApp {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long WINDOW_SIZE = 10_000L;
    private static final long SESSION_LENGTH = 1_000L;

    private ChangelogApp() {
    }

    public static void main(final String[] args) throws Exception {
        if (args.length < 1) {
            usage("missing mode");
        }
        final Map<String, String> opts = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage("bad argument " + args[i]);
            }
            opts.put(args[i].substring(2), args[++i]);
        }
        for (final String required : new String[] {"bootstrap", "app-id", "input", "state-dir"}) {
            if (!opts.containsKey(required)) {
                usage("missing --" + required);
            }
        }
        try {
            switch (args[0]) {
                case "fill":
                    fill(opts, Long.parseLong(required(opts, "expect")));
                    break;
                case "dump":
                    dump(opts, Path.of(required(opts, "output")));
                    break;
                case "suppress":
                    suppress(opts, required(opts, "output"), Long.parseLong(required(opts, "expect")));
                    break;
                default:
                    usage("unknown mode " + args[0]);
            }
        } catch (final Exception e) {
            System.err.println("ChangelogApp: " + e);
            e.printStackTrace(System.err);
            System.exit(1);
        }
        System.exit(0);
    }

    private static String required(final Map<String, String> opts, final String name) {
        final String v = opts.get(name);
        if (v == null) {
            usage("missing --" + name);
        }
        return v;
    }

    private static void usage(final String message) {
        System.err.println("ChangelogApp: " + message);
        System.err.println("usage: ChangelogApp fill|dump --bootstrap B --app-id ID --input TOPIC --state-dir DIR [--expect N] [--output FILE]");
        System.exit(2);
    }

    static Topology topology(final String input, final AtomicLong processed) {
        final Topology t = new Topology();
        t.addSource("source", Serdes.String().deserializer(), Serdes.String().deserializer(), input);
        t.addProcessor("writer", () -> new Writer(processed), "source");
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("kv"), Serdes.String(), Serdes.String()), "writer");
        t.addStateStore(Stores.timestampedKeyValueStoreBuilder(Stores.persistentTimestampedKeyValueStore("tskv"),
            Serdes.String(), Serdes.String()), "writer");
        t.addStateStore(Stores.windowStoreBuilder(
            Stores.persistentWindowStore("win", Duration.ofHours(1), Duration.ofMillis(WINDOW_SIZE), false),
            Serdes.String(), Serdes.Long()), "writer");
        t.addStateStore(Stores.sessionStoreBuilder(
            Stores.persistentSessionStore("sess", Duration.ofHours(1)), Serdes.String(), Serdes.Long()), "writer");
        t.addStateStore(Stores.versionedKeyValueStoreBuilder(
            Stores.persistentVersionedKeyValueStore("ver", Duration.ofSeconds(10)), Serdes.String(), Serdes.String()), "writer");
        return t;
    }

    /**
     * The suppress buffer cross-restore topology (package kstreams, suppress_java_integration_test.go
     * builds the same one in Go): input (String/String) -> peek (counts) -> groupByKey ->
     * 1 s tumbling windows with 10 s grace -> count (store KSTREAM-AGGREGATE-STATE-STORE-0000000002)
     * -> suppress(untilWindowCloses(unbounded)) (store KTABLE-SUPPRESS-STATE-STORE-0000000005,
     * logged) -> toStream -> selectKey "key@windowStart" -> output (String/Long).
     */
    static Topology suppressTopology(final String input, final String output, final AtomicLong processed, final Properties props) {
        final StreamsBuilder b = new StreamsBuilder();
        b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .peek((k, v) -> processed.incrementAndGet())
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(1), Duration.ofSeconds(10)))
            .count()
            .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
            .toStream()
            .selectKey((wk, v) -> wk.key() + "@" + wk.window().start())
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return b.build(props);
    }

    private static void suppress(final Map<String, String> opts, final String output, final long expect) throws Exception {
        final AtomicLong processed = new AtomicLong();
        final Properties props = props(opts);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        final KafkaStreams streams = new KafkaStreams(suppressTopology(opts.get("input"), output, processed, props), props);
        streams.setUncaughtExceptionHandler(e -> {
            e.printStackTrace(System.err);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (processed.get() < expect) {
            if (System.nanoTime() > deadline || streams.state() == KafkaStreams.State.ERROR
                || streams.state() == KafkaStreams.State.PENDING_ERROR) {
                streams.close(Duration.ofSeconds(30));
                throw new IllegalStateException("processed " + processed.get() + " of " + expect + " records; state " + streams.state());
            }
            Thread.sleep(20);
        }
        if (!streams.close(Duration.ofSeconds(60))) {
            throw new IllegalStateException("close timed out");
        }
    }

    /** Writes every input record into the three stores. */
    static final class Writer implements Processor<String, String, Void, Void> {
        private final AtomicLong processed;
        private KeyValueStore<String, String> kv;
        private TimestampedKeyValueStore<String, String> tskv;
        private WindowStore<String, Long> win;
        private SessionStore<String, Long> sess;
        private VersionedKeyValueStore<String, String> ver;

        Writer(final AtomicLong processed) {
            this.processed = processed;
        }

        @Override
        public void init(final ProcessorContext<Void, Void> context) {
            kv = context.getStateStore("kv");
            tskv = context.getStateStore("tskv");
            win = context.getStateStore("win");
            sess = context.getStateStore("sess");
            ver = context.getStateStore("ver");
        }

        @Override
        public void process(final Record<String, String> r) {
            final boolean del = "del".equals(r.value());
            final long n = del ? 0L : Long.parseLong(r.value());
            final long ts = r.timestamp();
            if (del) {
                kv.delete(r.key());
                tskv.delete(r.key());
            } else {
                kv.put(r.key(), r.value());
                tskv.put(r.key(), ValueAndTimestamp.make(r.value(), ts));
            }
            win.put(r.key(), n, ts - ts % WINDOW_SIZE);
            final Windowed<String> session = new Windowed<>(r.key(), new SessionWindow(ts, ts + SESSION_LENGTH));
            if (del) {
                sess.remove(session);
            } else {
                sess.put(session, n);
            }
            final long vts = ts - ((ts / 1000) % 7) * 3000;
            if (del) {
                ver.delete(r.key(), vts);
            } else {
                ver.put(r.key(), r.value(), vts);
            }
            processed.incrementAndGet();
        }
    }

    private static Properties props(final Map<String, String> opts) {
        final Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, opts.get("app-id"));
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        p.put(StreamsConfig.STATE_DIR_CONFIG, opts.get("state-dir"));
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        p.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 10_000);
        p.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 1_000);
        return p;
    }

    private static KafkaStreams start(final Map<String, String> opts, final AtomicLong processed, final CountDownLatch running) {
        final KafkaStreams streams = new KafkaStreams(topology(opts.get("input"), processed), props(opts));
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        streams.setUncaughtExceptionHandler(e -> {
            failure.set(e);
            e.printStackTrace(System.err);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING) {
                running.countDown();
            }
        });
        streams.start();
        return streams;
    }

    private static void fill(final Map<String, String> opts, final long expect) throws Exception {
        final AtomicLong processed = new AtomicLong();
        final KafkaStreams streams = start(opts, processed, new CountDownLatch(1));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (processed.get() < expect) {
            if (System.nanoTime() > deadline || streams.state() == KafkaStreams.State.ERROR
                || streams.state() == KafkaStreams.State.PENDING_ERROR) {
                streams.close(Duration.ofSeconds(30));
                throw new IllegalStateException("processed " + processed.get() + " of " + expect + " records; state " + streams.state());
            }
            Thread.sleep(20);
        }
        // A clean close commits (flushes the stores and the changelog producer, writes the checkpoint).
        if (!streams.close(Duration.ofSeconds(60))) {
            throw new IllegalStateException("close timed out");
        }
    }

    private static void dump(final Map<String, String> opts, final Path output) throws Exception {
        final CountDownLatch running = new CountDownLatch(1);
        final KafkaStreams streams = start(opts, new AtomicLong(), running);
        try {
            if (!running.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("not RUNNING after 120 s: " + streams.state());
            }
            final ReadOnlyKeyValueStore<String, String> kv = waitForStore(streams, "kv", QueryableStoreTypes.keyValueStore());
            final ReadOnlyKeyValueStore<String, ValueAndTimestamp<String>> tskv =
                waitForStore(streams, "tskv", QueryableStoreTypes.timestampedKeyValueStore());
            final ReadOnlyWindowStore<String, Long> win = waitForStore(streams, "win", QueryableStoreTypes.windowStore());
            final ReadOnlySessionStore<String, Long> sess = waitForStore(streams, "sess", QueryableStoreTypes.sessionStore());
            try (BufferedWriter w = Files.newBufferedWriter(output, StandardCharsets.UTF_8)) {
                try (KeyValueIterator<String, String> it = kv.all()) {
                    while (it.hasNext()) {
                        final KeyValue<String, String> e = it.next();
                        final ObjectNode o = JSON.createObjectNode();
                        o.put("store", "kv").put("key", e.key).put("value", e.value);
                        w.write(JSON.writeValueAsString(o));
                        w.newLine();
                    }
                }
                try (KeyValueIterator<String, ValueAndTimestamp<String>> it = tskv.all()) {
                    while (it.hasNext()) {
                        final KeyValue<String, ValueAndTimestamp<String>> e = it.next();
                        final ObjectNode o = JSON.createObjectNode();
                        o.put("store", "tskv").put("key", e.key).put("value", e.value.value()).put("timestamp", e.value.timestamp());
                        w.write(JSON.writeValueAsString(o));
                        w.newLine();
                    }
                }
                try (KeyValueIterator<Windowed<String>, Long> it = win.all()) {
                    writeWindowed(w, "win", it);
                }
                try (KeyValueIterator<Windowed<String>, Long> it = sess.fetch("", "\uffff")) {
                    writeWindowed(w, "sess", it);
                }
                final java.util.List<Long> probes = new java.util.ArrayList<>();
                probes.add(-1L);
                if (opts.containsKey("ver-probes")) {
                    for (final String p : opts.get("ver-probes").split(",")) {
                        probes.add(Long.parseLong(p));
                    }
                }
                for (int k = 0; k <= 10; k++) {
                    for (final long asOf : probes) {
                        VersionedKeyQuery<String, String> q = VersionedKeyQuery.withKey("key-" + k);
                        if (asOf >= 0) {
                            q = q.asOf(java.time.Instant.ofEpochMilli(asOf));
                        }
                        final StateQueryResult<VersionedRecord<String>> res = streams.query(StateQueryRequest.inStore("ver").withQuery(q));
                        VersionedRecord<String> rec = null;
                        for (final org.apache.kafka.streams.query.QueryResult<VersionedRecord<String>> one : res.getPartitionResults().values()) {
                            if (!one.isSuccess()) {
                                throw new IllegalStateException("versioned query failed: " + one.getFailureMessage());
                            }
                            if (one.getResult() != null) {
                                rec = one.getResult();
                            }
                        }
                        if (rec == null) {
                            continue;
                        }
                        final ObjectNode o = JSON.createObjectNode();
                        o.put("store", "ver").put("key", "key-" + k).put("asOf", asOf).put("value", rec.value()).put("timestamp", rec.timestamp());
                        w.write(JSON.writeValueAsString(o));
                        w.newLine();
                    }
                }
            }
        } finally {
            streams.close(Duration.ofSeconds(60));
        }
    }

    private static void writeWindowed(final BufferedWriter w, final String store, final KeyValueIterator<Windowed<String>, Long> it) throws Exception {
        while (it.hasNext()) {
            final KeyValue<Windowed<String>, Long> e = it.next();
            final ObjectNode o = JSON.createObjectNode();
            o.put("store", store).put("key", e.key.key()).put("start", e.key.window().start())
                .put("end", e.key.window().end()).put("value", e.value);
            w.write(JSON.writeValueAsString(o));
            w.newLine();
        }
    }

    private static <T> T waitForStore(final KafkaStreams streams, final String name,
                                      final org.apache.kafka.streams.state.QueryableStoreType<T> type) throws InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                return streams.store(StoreQueryParameters.fromNameAndType(name, type));
            } catch (final org.apache.kafka.streams.errors.InvalidStateStoreException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }
}
