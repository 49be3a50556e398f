package io.kstreams.conformance;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.Change;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.CacheFlushListener;
import org.apache.kafka.streams.state.internals.CachedStateStore;

/**
 * Reference topologies for the record cache (statestore.cache.max.bytes). They use Kafka
 * Streams' internal flush-listener hook (CachedStateStore.setFlushListener, as the DSL's
 * TimestampedTupleForwarder does) from Processor API processors, so the cache's flush and
 * eviction behaviour is observable without the DSL. Described in conformance/README.md.
 */
final class CacheTopologies {

    private CacheTopologies() {
    }

    /**
     * "new|old|origin" where origin is topic@partition/offset of the current record, or "-" when
     * there is none (in a punctuation Java's recordMetadata() holds a null topic and -1/-1).
     */
    static String describe(final Object newValue, final Object oldValue, final ProcessorContext<?, ?> ctx) {
        final String origin = ctx.recordMetadata()
            .filter((RecordMetadata m) -> m.topic() != null)
            .map((RecordMetadata m) -> m.topic() + "@" + m.partition() + "/" + m.offset())
            .orElse("-");
        return newValue + "|" + oldValue + "|" + origin;
    }

    /**
     * Registers a listener on store that forwards every flushed entry as (prefix + key,
     * describe(new, old)) with the entry's timestamp and headers, from the processor's own node
     * (as TimestampedCacheFlushListener does). Returns whether the store has a cache.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static <V> boolean forwardOnFlush(final Object store, final ProcessorContext<String, String> ctx, final String prefix,
                                      final boolean sendOldValues) {
        final InternalProcessorContext<String, String> ic = (InternalProcessorContext<String, String>) ctx;
        final ProcessorNode myNode = ic.currentNode();
        final CacheFlushListener<String, V> listener = record -> {
            final ProcessorNode prev = ic.currentNode();
            ic.setCurrentNode(myNode);
            try {
                final Change<V> change = record.value();
                ctx.forward(new Record<>(prefix + record.key(), describe(change.newValue, change.oldValue, ctx),
                    record.timestamp(), record.headers()));
            } finally {
                ic.setCurrentNode(prev);
            }
        };
        return ((CachedStateStore<String, V>) store).setFlushListener(listener, sendOldValues);
    }

    /**
     * papi-cache: processors "Count" (word counts in the cached store "Counts", old values sent)
     * and "Last" (last value per key in the cached store "Last", old values not sent), both
     * children of source "Input" and parents of sink "Output".
     */
    static final class PapiCache implements RefTopology {
        @Override
        public String name() {
            return "papi-cache";
        }

        @Override
        public String applicationId() {
            return "papi-cache";
        }

        @Override
        public Properties defaults() {
            return Topologies.stringDefaultSerdes();
        }

        @Override
        public Topology build(final Properties props) {
            final Topology t = new Topology();
            t.addSource("Input", new StringDeserializer(), new StringDeserializer(), "papi-cache-input");
            t.addProcessor("Count", CountProc::new, "Input");
            t.addProcessor("Last", LastProc::new, "Input");
            t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("Counts"), Serdes.String(), Serdes.Long())
                .withCachingEnabled(), "Count");
            t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("Last"), Serdes.String(), Serdes.String())
                .withCachingEnabled(), "Last");
            t.addSink("Output", "papi-cache-output", new StringSerializer(), new StringSerializer(), "Count", "Last");
            return t;
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            m.put("papi-cache-Counts-changelog", new TopicTypes(ValueType.STRING, ValueType.LONG));
            m.put("papi-cache-Last-changelog", new TopicTypes(ValueType.STRING, ValueType.STRING));
            m.put("papi-cache-output", new TopicTypes(ValueType.STRING, ValueType.STRING));
            return m;
        }
    }

    /**
     * papi-session-cache: processor "Sess" keeps per-token sessions (gap 5 s) in the cached
     * persistent session store "Sessions" and forwards from the store's flush listener (old
     * values sent) as ("token@start-end", describe(new, old)).
     */
    static final class PapiSessionCache implements RefTopology {
        @Override
        public String name() {
            return "papi-session-cache";
        }

        @Override
        public String applicationId() {
            return "papi-session-cache";
        }

        @Override
        public Properties defaults() {
            return Topologies.stringDefaultSerdes();
        }

        @Override
        public Topology build(final Properties props) {
            final Topology t = new Topology();
            t.addSource("Input", new StringDeserializer(), new StringDeserializer(), "papi-session-cache-input");
            t.addProcessor("Sess", SessProc::new, "Input");
            t.addStateStore(Stores.sessionStoreBuilder(Stores.persistentSessionStore("Sessions", Duration.ofHours(1)),
                Serdes.String(), Serdes.Long()).withCachingEnabled(), "Sess");
            t.addSink("Output", "papi-session-cache-output", new StringSerializer(), new StringSerializer(), "Sess");
            return t;
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            m.put("papi-session-cache-Sessions-changelog", new TopicTypes(ValueType.BYTES, ValueType.LONG));
            m.put("papi-session-cache-output", new TopicTypes(ValueType.STRING, ValueType.STRING));
            return m;
        }
    }

    /**
     * Tokens of the value (split(" ")) at the record's timestamp ts: "*" forwards ("*",
     * "k@start-end=v,...") of findSessions(null, null, 0, Long.MAX_VALUE); "<w" forwards ("<w",
     * "start-end=v,...") of backwardFetch(w); "-w" removes every session of w found by
     * findSessions(w, ts, ts); anything else merges [ts, ts] with the token's sessions found by
     * findSessions(token, ts - 5000, ts + 5000): the counts are summed plus one, the found sessions
     * removed, the merged session put. Without a cache every write is forwarded at once.
     */
    static final class SessProc implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> ctx;
        private SessionStore<String, Long> sessions;
        private boolean caching;

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void init(final ProcessorContext<String, String> context) {
            ctx = context;
            sessions = context.getStateStore("Sessions");
            final InternalProcessorContext<String, String> ic = (InternalProcessorContext<String, String>) context;
            final ProcessorNode myNode = ic.currentNode();
            final CacheFlushListener<Windowed<String>, Long> listener = record -> {
                final ProcessorNode prev = ic.currentNode();
                ic.setCurrentNode(myNode);
                try {
                    ctx.forward(new Record<>(sessionName(record.key()),
                        describe(record.value().newValue, record.value().oldValue, ctx), record.timestamp(), record.headers()));
                } finally {
                    ic.setCurrentNode(prev);
                }
            };
            caching = ((CachedStateStore<Windowed<String>, Long>) sessions).setFlushListener(listener, true);
        }

        static String sessionName(final Windowed<String> w) {
            return w.key() + "@" + w.window().start() + "-" + w.window().end();
        }

        @Override
        public void process(final Record<String, String> record) {
            if (record.value() == null) {
                return;
            }
            final long ts = record.timestamp();
            for (final String token : record.value().split(" ")) {
                if (token.equals("*")) {
                    final StringBuilder sb = new StringBuilder();
                    try (KeyValueIterator<Windowed<String>, Long> it = sessions.findSessions(null, null, 0L, Long.MAX_VALUE)) {
                        while (it.hasNext()) {
                            final KeyValue<Windowed<String>, Long> kv = it.next();
                            sb.append(sb.length() == 0 ? "" : ",").append(sessionName(kv.key)).append("=").append(kv.value);
                        }
                    }
                    ctx.forward(record.withKey("*").withValue(sb.toString()));
                } else if (token.startsWith("<")) {
                    final StringBuilder sb = new StringBuilder();
                    try (KeyValueIterator<Windowed<String>, Long> it = sessions.backwardFetch(token.substring(1))) {
                        while (it.hasNext()) {
                            final KeyValue<Windowed<String>, Long> kv = it.next();
                            sb.append(sb.length() == 0 ? "" : ",").append(kv.key.window().start()).append("-")
                                .append(kv.key.window().end()).append("=").append(kv.value);
                        }
                    }
                    ctx.forward(record.withKey(token).withValue(sb.toString()));
                } else if (token.startsWith("-")) {
                    final java.util.List<KeyValue<Windowed<String>, Long>> found = new java.util.ArrayList<>();
                    try (KeyValueIterator<Windowed<String>, Long> it = sessions.findSessions(token.substring(1), ts, ts)) {
                        it.forEachRemaining(found::add);
                    }
                    for (final KeyValue<Windowed<String>, Long> kv : found) {
                        sessions.remove(kv.key);
                        if (!caching) {
                            ctx.forward(record.withKey(sessionName(kv.key)).withValue(describe(null, kv.value, ctx)));
                        }
                    }
                } else {
                    long start = ts;
                    long end = ts;
                    long sum = 1;
                    final java.util.List<KeyValue<Windowed<String>, Long>> found = new java.util.ArrayList<>();
                    try (KeyValueIterator<Windowed<String>, Long> it = sessions.findSessions(token, ts - 5000, ts + 5000)) {
                        it.forEachRemaining(found::add);
                    }
                    for (final KeyValue<Windowed<String>, Long> kv : found) {
                        start = Math.min(start, kv.key.window().start());
                        end = Math.max(end, kv.key.window().end());
                        sum += kv.value;
                        sessions.remove(kv.key);
                        if (!caching) {
                            ctx.forward(record.withKey(sessionName(kv.key)).withValue(describe(null, kv.value, ctx)));
                        }
                    }
                    final Windowed<String> merged = new Windowed<>(token, new SessionWindow(start, end));
                    sessions.put(merged, sum);
                    if (!caching) {
                        ctx.forward(record.withKey(sessionName(merged)).withValue(describe(sum, null, ctx)));
                    }
                }
            }
        }
    }

    /**
     * dsl-window-cache: a windowed count over flatMapValues (one record updates its key's
     * windows several times between two commits), with the DSL's default caching.
     */
    static final class DslWindowCache implements RefTopology {
        @Override
        public String name() {
            return "dsl-window-cache";
        }

        @Override
        public String applicationId() {
            return "dsl-window-cache";
        }

        @Override
        public Properties defaults() {
            return Topologies.stringDefaultSerdes();
        }

        @Override
        public Topology build(final Properties props) {
            final StreamsBuilder b = new StreamsBuilder();
            b.stream("dsl-window-cache-input", Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(v -> Arrays.asList(v.split(" ")))
                .groupByKey()
                .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofSeconds(10)).advanceBy(Duration.ofSeconds(5)))
                .count(Materialized.as("window-counts"))
                .toStream().to("dsl-window-cache-output");
            return b.build(props);
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            m.put("dsl-window-cache-window-counts-changelog", new TopicTypes(ValueType.BYTES, ValueType.LONG));
            m.put("dsl-window-cache-output", new TopicTypes(ValueType.BYTES, ValueType.LONG));
            return m;
        }
    }

    /**
     * papi-window-cache: processor "Win" counts tokens per 10 s window (the record's tumbling
     * window and the one before it) in the cached persistent window store "Windows" and forwards
     * from the store's flush listener (old values sent) as ("token@start", describe(new, old)).
     */
    static final class PapiWindowCache implements RefTopology {
        @Override
        public String name() {
            return "papi-window-cache";
        }

        @Override
        public String applicationId() {
            return "papi-window-cache";
        }

        @Override
        public Properties defaults() {
            return Topologies.stringDefaultSerdes();
        }

        @Override
        public Topology build(final Properties props) {
            final Topology t = new Topology();
            t.addSource("Input", new StringDeserializer(), new StringDeserializer(), "papi-window-cache-input");
            t.addProcessor("Win", WinProc::new, "Input");
            t.addStateStore(Stores.windowStoreBuilder(
                Stores.persistentWindowStore("Windows", Duration.ofHours(1), Duration.ofSeconds(10), false),
                Serdes.String(), Serdes.Long()).withCachingEnabled(), "Win");
            t.addSink("Output", "papi-window-cache-output", new StringSerializer(), new StringSerializer(), "Win");
            return t;
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            m.put("papi-window-cache-Windows-changelog", new TopicTypes(ValueType.BYTES, ValueType.LONG));
            m.put("papi-window-cache-output", new TopicTypes(ValueType.STRING, ValueType.STRING));
            return m;
        }
    }

    /**
     * Tokens of the value (split(" ")), with base = the record's 10 s window start: "-w" deletes
     * w's window at base; "?w" reads it; "*" forwards ("*", "k@start=v,...") of
     * fetchAll(0, Long.MAX_VALUE); "<w" forwards ("<w", "start=v,...") of backwardFetch(w, 0,
     * Long.MAX_VALUE); anything else increments the token's count in the windows starting at base
     * and base - 10000 (when >= 0). Without a cache each write is forwarded at once.
     */
    static final class WinProc implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> ctx;
        private WindowStore<String, Long> windows;
        private boolean caching;

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void init(final ProcessorContext<String, String> context) {
            ctx = context;
            windows = context.getStateStore("Windows");
            final InternalProcessorContext<String, String> ic = (InternalProcessorContext<String, String>) context;
            final ProcessorNode myNode = ic.currentNode();
            final CacheFlushListener<Windowed<String>, Long> listener = record -> {
                final ProcessorNode prev = ic.currentNode();
                ic.setCurrentNode(myNode);
                try {
                    ctx.forward(new Record<>(record.key().key() + "@" + record.key().window().start(),
                        describe(record.value().newValue, record.value().oldValue, ctx), record.timestamp(), record.headers()));
                } finally {
                    ic.setCurrentNode(prev);
                }
            };
            caching = ((CachedStateStore<Windowed<String>, Long>) windows).setFlushListener(listener, true);
        }

        @Override
        public void process(final Record<String, String> record) {
            if (record.value() == null) {
                return;
            }
            final long base = record.timestamp() / 10000 * 10000;
            for (final String token : record.value().split(" ")) {
                if (token.startsWith("-")) {
                    final String w = token.substring(1);
                    final Long old = windows.fetch(w, base);
                    windows.put(w, null, base);
                    if (!caching) {
                        ctx.forward(record.withKey(w + "@" + base).withValue(describe(null, old, ctx)));
                    }
                } else if (token.startsWith("?")) {
                    windows.fetch(token.substring(1), base);
                } else if (token.equals("*")) {
                    final StringBuilder sb = new StringBuilder();
                    try (KeyValueIterator<Windowed<String>, Long> it = windows.fetchAll(0L, Long.MAX_VALUE)) {
                        while (it.hasNext()) {
                            final KeyValue<Windowed<String>, Long> kv = it.next();
                            sb.append(sb.length() == 0 ? "" : ",").append(kv.key.key()).append("@")
                                .append(kv.key.window().start()).append("=").append(kv.value);
                        }
                    }
                    ctx.forward(record.withKey("*").withValue(sb.toString()));
                } else if (token.startsWith("<")) {
                    final StringBuilder sb = new StringBuilder();
                    try (WindowStoreIterator<Long> it = windows.backwardFetch(token.substring(1), 0L, Long.MAX_VALUE)) {
                        while (it.hasNext()) {
                            final KeyValue<Long, Long> kv = it.next();
                            sb.append(sb.length() == 0 ? "" : ",").append(kv.key).append("=").append(kv.value);
                        }
                    }
                    ctx.forward(record.withKey(token).withValue(sb.toString()));
                } else {
                    for (long start = base; start >= Math.max(0, base - 10000); start -= 10000) {
                        final Long old = windows.fetch(token, start);
                        final long now = old == null ? 1 : old + 1;
                        windows.put(token, now, start);
                        if (!caching) {
                            ctx.forward(record.withKey(token + "@" + start).withValue(describe(now, old, ctx)));
                        }
                    }
                }
            }
        }
    }

    /**
     * dsl-cache: DSL aggregations whose cached stores see several updates per input record
     * (flatMapValues keeps the key, so one record updates one key many times between two
     * commits) and values that grow past small cache budgets, plus a cached table source feeding a
     * table aggregation with adder and subtractor.
     */
    static final class DslCache implements RefTopology {
        @Override
        public String name() {
            return "dsl-cache";
        }

        @Override
        public String applicationId() {
            return "dsl-cache";
        }

        @Override
        public Properties defaults() {
            return Topologies.stringDefaultSerdes();
        }

        @Override
        public Topology build(final Properties props) {
            final StreamsBuilder b = new StreamsBuilder();
            final KGroupedStream<String, String> tokens = b.stream("dsl-cache-input", Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(v -> Arrays.asList(v.split(" ")))
                .groupByKey();
            tokens.count(Materialized.as("token-counts"))
                .toStream().to("dsl-cache-counts", Produced.with(Serdes.String(), Serdes.Long()));
            tokens.reduce((a, v) -> a + "+" + v, Materialized.as("token-concat"))
                .toStream().to("dsl-cache-concat", Produced.with(Serdes.String(), Serdes.String()));
            final KTable<String, String> table = b.table("dsl-cache-table", Consumed.with(Serdes.String(), Serdes.String()),
                Materialized.as("table-store"));
            table.groupBy((k, v) -> KeyValue.pair(v.isEmpty() ? "" : v.substring(0, 1), k), Grouped.with(Serdes.String(), Serdes.String()))
                .aggregate(() -> "", (k, v, agg) -> agg + "+" + v, (k, v, agg) -> agg + "-" + v,
                    Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("by-initial").withValueSerde(Serdes.String()))
                .toStream().to("dsl-cache-initials", Produced.with(Serdes.String(), Serdes.String()));
            return b.build(props);
        }

        @Override
        public Map<String, TopicTypes> topicTypes() {
            final Map<String, TopicTypes> m = new LinkedHashMap<>();
            final TopicTypes ss = new TopicTypes(ValueType.STRING, ValueType.STRING);
            m.put("dsl-cache-token-counts-changelog", new TopicTypes(ValueType.STRING, ValueType.LONG));
            m.put("dsl-cache-token-concat-changelog", ss);
            m.put("dsl-cache-table-store-changelog", ss);
            m.put("dsl-cache-by-initial-changelog", ss);
            m.put("dsl-cache-counts", new TopicTypes(ValueType.STRING, ValueType.LONG));
            m.put("dsl-cache-concat", ss);
            m.put("dsl-cache-initials", ss);
            return m;
        }

        @Override
        public TopicTypes typesFor(final String topic) {
            if (topic.endsWith("-repartition")) {
                return new TopicTypes(ValueType.STRING, ValueType.BYTES);
            }
            return RefTopology.super.typesFor(topic);
        }
    }

    /**
     * Splits the value on single spaces; each token: "-w" deletes w, "?w" reads w, "*" forwards
     * ("*", "k=v,k=v,...") of Counts.all() at once, "<" forwards ("<", ...) of Counts.reverseAll()
     * (the value printed as Java's string concatenation does: "null" for null), anything else
     * increments the count of that
     * word. Without a cache every write is forwarded at once as (w, describe(new, old)). A
     * wall-clock punctuator every 10 s increments "tick". Null values are ignored.
     */
    static final class CountProc implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> ctx;
        private KeyValueStore<String, Long> counts;
        private boolean caching;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            ctx = context;
            counts = context.getStateStore("Counts");
            caching = forwardOnFlush(counts, context, "", true);
            context.schedule(Duration.ofSeconds(10), PunctuationType.WALL_CLOCK_TIME, ts -> increment("tick", ts));
        }

        private void increment(final String word, final long ts) {
            final Long old = counts.get(word);
            final long now = old == null ? 1 : old + 1;
            counts.put(word, now);
            if (!caching) {
                ctx.forward(new Record<>(word, describe(now, old, ctx), ts));
            }
        }

        @Override
        public void process(final Record<String, String> record) {
            if (record.value() == null) {
                return;
            }
            for (final String token : record.value().split(" ")) {
                if (token.startsWith("-")) {
                    final String w = token.substring(1);
                    final Long old = counts.delete(w);
                    if (!caching) {
                        ctx.forward(record.withKey(w).withValue(describe(null, old, ctx)));
                    }
                } else if (token.startsWith("?")) {
                    counts.get(token.substring(1));
                } else if (token.equals("*") || token.equals("<")) {
                    final StringBuilder sb = new StringBuilder();
                    try (KeyValueIterator<String, Long> it = token.equals("*") ? counts.all() : counts.reverseAll()) {
                        while (it.hasNext()) {
                            final KeyValue<String, Long> kv = it.next();
                            sb.append(sb.length() == 0 ? "" : ",").append(kv.key).append("=").append(kv.value);
                        }
                    }
                    ctx.forward(record.withKey(token).withValue(sb.toString()));
                } else {
                    final Long old = counts.get(token);
                    final long now = old == null ? 1 : old + 1;
                    counts.put(token, now);
                    if (!caching) {
                        ctx.forward(record.withKey(token).withValue(describe(now, old, ctx)));
                    }
                }
            }
        }
    }

    /**
     * Keeps the last value per key in "Last" (a null value deletes); flushed entries are
     * forwarded as ("L:" + key, describe(new, null)) since old values are not sent; without a
     * cache each write is forwarded at once the same way.
     */
    static final class LastProc implements Processor<String, String, String, String> {
        private ProcessorContext<String, String> ctx;
        private KeyValueStore<String, String> last;
        private boolean caching;

        @Override
        public void init(final ProcessorContext<String, String> context) {
            ctx = context;
            last = context.getStateStore("Last");
            caching = forwardOnFlush(last, context, "L:", false);
        }

        @Override
        public void process(final Record<String, String> record) {
            if (record.key() == null) {
                return;
            }
            if (record.value() == null) {
                last.delete(record.key());
            } else {
                last.put(record.key(), record.value());
            }
            if (!caching) {
                ctx.forward(record.withKey("L:" + record.key()).withValue(describe(record.value(), null, ctx)));
            }
        }
    }
}
