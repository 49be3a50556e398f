package io.kstreams.conformance;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.EmitStrategy;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.Suppressed.BufferConfig;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * Windowed-aggregation reference topologies (issue 5): tumbling, hopping, sliding and session
 * windows, grace and late records, emit-on-close, suppress. The Go port rebuilds each in
 * kstream/window_conformance_test.go. Application id = topology name; default serdes String;
 * statestore.cache.max.bytes=0 unless --config says otherwise. Input topic "<name>-input"
 * (String keys and values), output "<name>-output" (windowed key bytes as written by the
 * result table's windowed serde).
 */
final class WindowTopologies {

    private WindowTopologies() {
    }

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();
    static final RefTopology.TopicTypes BL = new RefTopology.TopicTypes(ValueType.BYTES, ValueType.LONG);
    static final RefTopology.TopicTypes BS = new RefTopology.TopicTypes(ValueType.BYTES, ValueType.STRING);
    static final RefTopology.TopicTypes SS = new RefTopology.TopicTypes(ValueType.STRING, ValueType.STRING);

    /** A window topology: name = application id, String default serdes, caching off. */
    static final class Win implements RefTopology {
        private final String name;
        private final Consumer<StreamsBuilder> body;
        private final Map<String, TopicTypes> types = new LinkedHashMap<>();

        Win(final String name, final Consumer<StreamsBuilder> body, final Object... types) {
            this.name = name;
            this.body = body;
            for (int i = 0; i < types.length; i += 2) {
                this.types.put(name + "-" + types[i], (TopicTypes) types[i + 1]);
            }
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String applicationId() {
            return name;
        }

        @Override
        public Properties defaults() {
            final Properties p = Topologies.stringDefaultSerdes();
            p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
            return p;
        }

        @Override
        public Topology build(final Properties props) {
            final StreamsBuilder b = new StreamsBuilder();
            body.accept(b);
            return b.build(props);
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            return types;
        }
    }

    static KGroupedStream<String, String> grouped(final StreamsBuilder b, final String name) {
        return b.stream(name + "-input", Consumed.with(S, S)).groupByKey();
    }

    static List<RefTopology> all() {
        return List.of(
            // Tumbling 10 ms, no grace: records on window boundaries, null key (dropped), null
            // value (counted, as Java's KStreamWindowAggregate only drops null keys), late record.
            new Win("win-tumbling", b -> grouped(b, "win-tumbling")
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(10)))
                .count()
                .toStream().to("win-tumbling-output"),
                "output", BL),
            // Tumbling 10 ms with 5 ms grace: out-of-order records inside grace, exactly at and one
            // ms past the close time.
            new Win("win-grace", b -> grouped(b, "win-grace")
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
                .count(Materialized.as("grace-counts"))
                .toStream().to("win-grace-output"),
                "output", BL),
            // Hopping 10 ms advancing 5 ms, grace 2 ms, reduce by concatenation (overlap).
            new Win("win-hopping", b -> grouped(b, "win-hopping")
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2)).advanceBy(Duration.ofMillis(5)))
                .reduce((a, v) -> a + "+" + v)
                .toStream().to("win-hopping-output"),
                "output", BS),
            // Hopping 15/5 aggregate with a named store, named processor, retention and a
            // mapValues on the windowed table.
            new Win("win-aggregate", b -> grouped(b, "win-aggregate")
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(15), Duration.ofMillis(3)).advanceBy(Duration.ofMillis(5)))
                .aggregate(() -> "<", (k, v, agg) -> agg + v, Named.as("win-agg"),
                    Materialized.<String, String, org.apache.kafka.streams.state.WindowStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("agg-store")
                        .withValueSerde(S).withRetention(Duration.ofMillis(100)))
                .mapValues(v -> v + ">")
                .toStream().to("win-aggregate-output"),
                "output", BS),
            // Re-keyed stream: repartition topic named after the window store.
            new Win("win-repartition", b -> b.stream("win-repartition-input", Consumed.with(S, S))
                .groupBy((k, v) -> v.substring(0, 1), Grouped.with(S, S))
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(10)))
                .count()
                .toStream().to("win-repartition-output"),
                "output", BL),
            // Sliding windows, time difference 10 ms, no grace: equal timestamps, records exactly
            // 10 ms apart, early records (t < 10), late records.
            new Win("win-sliding", b -> grouped(b, "win-sliding")
                .windowedBy(SlidingWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)))
                .count()
                .toStream().to("win-sliding-output"),
                "output", BL),
            // Sliding windows, difference 10 ms, grace 5 ms, reduce: out-of-order records that
            // create and update left/right windows.
            new Win("win-sliding-grace", b -> grouped(b, "win-sliding-grace")
                .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)))
                .reduce((a, v) -> a + "+" + v)
                .toStream().to("win-sliding-grace-output"),
                "output", BS),
            // Session windows, gap 5 ms, no grace: sessions merge, a record between two sessions
            // joins them, late record.
            new Win("win-session", b -> grouped(b, "win-session")
                .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofMillis(5)))
                .count()
                .toStream().to("win-session-output"),
                "output", BL),
            // Session windows, gap 5 ms, grace 3 ms, aggregate with merger (order-sensitive).
            new Win("win-session-agg", b -> grouped(b, "win-session-agg")
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5), Duration.ofMillis(3)))
                .aggregate(() -> "", (k, v, agg) -> agg + v, (k, a1, a2) -> a1 + "|" + a2,
                    Materialized.with(S, S))
                .toStream().to("win-session-agg-output"),
                "output", BS),
            // Session reduce with a named store.
            new Win("win-session-reduce", b -> grouped(b, "win-session-reduce")
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(10), Duration.ofMillis(0)))
                .reduce((a, v) -> a + "+" + v, Materialized.as("sessions"))
                .toStream().to("win-session-reduce-output"),
                "output", BS),
            // EmitStrategy.onWindowClose on tumbling windows (checks throttled by 1 s of wall
            // clock: the vector advances the clock between records).
            new Win("win-emit-close", b -> grouped(b, "win-emit-close")
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .count()
                .toStream().to("win-emit-close-output"),
                "output", BL),
            // EmitStrategy.onWindowClose on hopping windows.
            new Win("win-emit-close-hopping", b -> grouped(b, "win-emit-close-hopping")
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(10)).advanceBy(Duration.ofMillis(5)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .reduce((a, v) -> a + "+" + v)
                .toStream().to("win-emit-close-hopping-output"),
                "output", BS),
            // Suppress until the window closes (unbounded buffer, no changelog).
            new Win("win-suppress-close", b -> grouped(b, "win-suppress-close")
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(3)))
                .count()
                .suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded().withLoggingDisabled()))
                .toStream().to("win-suppress-close-output"),
                "output", BL),
            // Suppress with a time limit and a buffer of 2 records that emits early when full.
            new Win("win-suppress-full", b -> grouped(b, "win-suppress-full")
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(100)))
                .count()
                .suppress(Suppressed.untilTimeLimit(Duration.ofMillis(20), BufferConfig.maxRecords(2).withLoggingDisabled())
                    .withName("limit"))
                .toStream().to("win-suppress-full-output"),
                "output", BL),
            // Suppress with a time limit and a buffer of 130 bytes (Java's size estimate).
            new Win("win-suppress-bytes", b -> grouped(b, "win-suppress-bytes")
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(100)))
                .count()
                .suppress(Suppressed.untilTimeLimit(Duration.ofMillis(20), BufferConfig.maxBytes(130).withLoggingDisabled()))
                .toStream().to("win-suppress-bytes-output"),
                "output", BL),
            // The suppress buffer's changelog (issue 15 item 4): untilWindowCloses with an
            // unbounded buffer and logging on (the default): buffered keys are logged at each
            // commit in Java's BufferValue layout with header v=3, emitted keys as tombstones.
            new Win("win-suppress-log", b -> grouped(b, "win-suppress-log")
                .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(3)))
                .count()
                .suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded()))
                .toStream().to("win-suppress-log-output"),
                "output", BL),
            // A logged buffer that emits early when full (two records), records with headers.
            new Win("win-suppress-log-full", b -> grouped(b, "win-suppress-log-full")
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(100)))
                .count()
                .suppress(Suppressed.untilTimeLimit(Duration.ofMillis(20), BufferConfig.maxRecords(2))
                    .withName("limit"))
                .toStream().to("win-suppress-log-full-output"),
                "output", BL),
            // Session windows closing under suppress(untilWindowCloses): deletes of merged
            // sessions are dropped.
            new Win("win-session-suppress", b -> grouped(b, "win-session-suppress")
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5), Duration.ofMillis(2)))
                .count()
                .suppress(Suppressed.untilWindowCloses(BufferConfig.unbounded().withLoggingDisabled()))
                .toStream().to("win-session-suppress-output"),
                "output", BL),
            // EmitStrategy.onWindowClose on session windows (gap 5 ms, grace 1 ms).
            new Win("win-session-emit-close", b -> grouped(b, "win-session-emit-close")
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5), Duration.ofMillis(1)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .count()
                .toStream().to("win-session-emit-close-output"),
                "output", BL),
            // EmitStrategy.onWindowClose on session windows: Java never caches that store, so a
            // record within the gap of a session already emitted and past the store's retention
            // opens a new session, with caching on as with caching off.
            new Win("win-session-emit-close-late", b -> grouped(b, "win-session-emit-close-late")
                .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofMillis(5), Duration.ofMillis(1)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .count()
                .toStream().to("win-session-emit-close-late-output"),
                "output", BL),
            // EmitStrategy.onWindowClose on sliding windows (difference 5 ms, grace 2 ms).
            new Win("win-sliding-emit-close", b -> grouped(b, "win-sliding-emit-close")
                .windowedBy(SlidingWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(5), Duration.ofMillis(2)))
                .emitStrategy(EmitStrategy.onWindowClose())
                .count()
                .toStream().to("win-sliding-emit-close-output"),
                "output", BL),
            // Cogrouped streams (two input topics) in hopping windows with grace.
            new Win("win-cogroup", b -> {
                final KGroupedStream<String, String> g1 = grouped(b, "win-cogroup");
                final KGroupedStream<String, String> g2 = b.stream("win-cogroup-input2", Consumed.with(S, S)).groupByKey();
                g1.<String>cogroup((k, v, agg) -> agg + "a" + v)
                    .cogroup(g2, (k, v, agg) -> agg + "b" + v)
                    .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2)).advanceBy(Duration.ofMillis(5)))
                    .aggregate(() -> "", Materialized.with(S, S))
                    .toStream().to("win-cogroup-output");
            }, "output", BS),
            // Cogrouped streams in session windows (merger) with a named processor prefix.
            new Win("win-cogroup-session", b -> {
                final KGroupedStream<String, String> g1 = grouped(b, "win-cogroup-session");
                final KGroupedStream<String, String> g2 = b.stream("win-cogroup-session-input2", Consumed.with(S, S)).groupByKey();
                g1.<String>cogroup((k, v, agg) -> agg + "a" + v)
                    .cogroup(g2, (k, v, agg) -> agg + "b" + v)
                    .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofMillis(5)))
                    .aggregate(() -> "", (k, a1, a2) -> a1 + "|" + a2, Named.as("cg"), Materialized.with(S, S))
                    .toStream().to("win-cogroup-session-output");
            }, "output", BS)
        );
    }
}
