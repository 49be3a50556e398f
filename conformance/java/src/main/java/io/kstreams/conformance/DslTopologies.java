package io.kstreams.conformance;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.Properties;
import java.util.function.Function;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.RecordContext;
import org.apache.kafka.streams.processor.TopicNameExtractor;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.kstream.ValueTransformerWithKey;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * DSL reference topologies (issue 4). Each is described in conformance/README.md ("DSL
 * topologies"); the Go port in kstream/ rebuilds each with the Go DSL. The application id is the
 * topology name; default serdes are String; statestore.cache.max.bytes=0 unless --config says
 * otherwise. Functions treat null as the Go port's typed functions see it where the two could
 * differ (documented per topology).
 */
final class DslTopologies {

    private DslTopologies() {
    }

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();
    static final Serde<Integer> I = Serdes.Integer();
    static final RefTopology.TopicTypes SS = new RefTopology.TopicTypes(ValueType.STRING, ValueType.STRING);
    static final RefTopology.TopicTypes SL = new RefTopology.TopicTypes(ValueType.STRING, ValueType.LONG);
    static final RefTopology.TopicTypes SI = new RefTopology.TopicTypes(ValueType.STRING, ValueType.INTEGER);

    /** A DSL topology: name = application id, String default serdes, caching off. */
    static final class Dsl implements RefTopology {
        private final String name;
        private final java.util.function.Consumer<StreamsBuilder> body;
        private final Map<String, TopicTypes> types = new LinkedHashMap<>();
        private boolean droppedRecords;

        Dsl(final String name, final java.util.function.Consumer<StreamsBuilder> body, final Object... types) {
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

        /** Makes the Runner report the dropped-records count (RefTopology#reportsDroppedRecords). */
        Dsl withDroppedRecords() {
            droppedRecords = true;
            return this;
        }

        @Override
        public boolean reportsDroppedRecords() {
            return droppedRecords;
        }
    }

    /**
     * A partitioner that drops values starting with "drop" (no partition), sends values starting
     * with "zero" to partition 0, and leaves the rest to the default partitioner.
     */
    static final class DropPartitioner implements StreamPartitioner<String, String> {
        @Override
        public Optional<Set<Integer>> partitions(final String topic, final String key, final String value, final int n) {
            if (value != null && value.startsWith("drop")) {
                return Optional.of(Set.of());
            }
            if (value != null && value.startsWith("zero")) {
                return Optional.of(Set.of(0));
            }
            return Optional.empty();
        }
    }

    /** "value@timestamp/topic:partition:offset" of the record the transformer sees; null stays null. */
    static final class MetaTransformer implements ValueTransformerWithKey<String, String, String> {
        private org.apache.kafka.streams.processor.ProcessorContext ctx;

        @Override
        public void init(final org.apache.kafka.streams.processor.ProcessorContext context) {
            ctx = context;
        }

        @Override
        public String transform(final String key, final String value) {
            if (value == null) {
                return null;
            }
            return value + "@" + ctx.timestamp() + "/" + ctx.topic() + ":" + ctx.partition() + ":" + ctx.offset();
        }

        @Override
        public void close() {
        }
    }

    /** "value#n": n counts the transformer's calls per key in the store it is given; null stays null. */
    static final class CountingTransformer implements ValueTransformerWithKey<String, String, String> {
        private final String storeName;
        private KeyValueStore<String, Long> seen;

        CountingTransformer(final String storeName) {
            this.storeName = storeName;
        }

        @Override
        public void init(final org.apache.kafka.streams.processor.ProcessorContext context) {
            seen = context.getStateStore(storeName);
        }

        @Override
        public String transform(final String key, final String value) {
            final Long prev = seen.get(key);
            final long n = prev == null ? 1 : prev + 1;
            seen.put(key, n);
            return value == null ? null : value + "#" + n;
        }

        @Override
        public void close() {
        }
    }

    /** Topic name extractor: "dsl-extractor-" + first character of the key, or "-none". */
    static final class FirstCharExtractor implements TopicNameExtractor<String, String> {
        @Override
        public String extract(final String key, final String value, final RecordContext rc) {
            return "dsl-extractor-" + (key == null || key.isEmpty() ? "none" : key.substring(0, 1));
        }

        @Override
        public String toString() {
            return "FirstCharExtractor";
        }
    }

    static List<RefTopology> all() {
        return List.of(
            // a StreamPartitioner that returns no partitions drops the record (KIP-837) and
            // counts it in dropped-records, at a sink and at a repartition.
            new Dsl("dsl-partitioner-drop", b -> {
                final KStream<String, String> s = b.stream("dsl-partitioner-drop-input", Consumed.with(S, S));
                s.to("dsl-partitioner-drop-output", Produced.with(S, S).withStreamPartitioner(new DropPartitioner()));
                s.mapValues(v -> v == null ? null : v.substring(v.indexOf(':') + 1))
                    .repartition(Repartitioned.<String, String>as("rp").withStreamPartitioner(new DropPartitioner()))
                    .to("dsl-partitioner-drop-rp", Produced.with(S, S));
            }, "output", SS, "rp", SS, "rp-repartition", SS).withDroppedRecords(),
            // KTable.transformValues: record metadata in the processor and through a value getter
            // (a stream-table join), a store-reading transformer materialized and named (old values
            // from its store), and one not materialized whose old values are transformed again.
            new Dsl("dsl-table-transform", b -> {
                b.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("tv-seen"), S, L));
                b.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("tv-seen2"), S, L));
                final KTable<String, String> t = b.table("dsl-table-transform-input", Consumed.with(S, S));
                final KTable<String, String> meta = t.transformValues(MetaTransformer::new);
                meta.toStream().to("dsl-table-transform-output", Produced.with(S, S));
                b.stream("dsl-table-transform-lookup", Consumed.with(S, S))
                    .join(meta, (a, m) -> a + "|" + m).to("dsl-table-transform-joined", Produced.with(S, S));
                t.transformValues(() -> new CountingTransformer("tv-seen"),
                        Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("tv-store").withValueSerde(S),
                        Named.as("tv-count"), "tv-seen")
                    .groupBy((k, v) -> KeyValue.pair(v.substring(0, 1), k), Grouped.with(S, S))
                    .count().toStream().to("dsl-table-transform-count", Produced.with(S, L));
                t.transformValues(() -> new CountingTransformer("tv-seen2"), "tv-seen2")
                    .groupBy((k, v) -> KeyValue.pair(v.substring(v.indexOf('#')), k), Grouped.with(S, S))
                    .count().toStream().to("dsl-table-transform-count2", Produced.with(S, L));
            }, "output", SS, "joined", SS, "count", SL, "count2", SL),
            // filter, filterNot, mapValues (both forms), flatMapValues, peek, foreach, and a
            // global table (describe only). Null values are filtered out first.
            new Dsl("dsl-stateless", b -> {
                final KStream<String, String> s = b.stream("dsl-stateless-input", Consumed.with(S, S));
                s.filter((k, v) -> v != null)
                    .filterNot((k, v) -> v.startsWith("#"))
                    .mapValues(v -> v.toUpperCase(Locale.ROOT))
                    .mapValues((k, v) -> (k == null ? "null" : k) + ":" + v)
                    .flatMapValues(v -> Arrays.asList(v, Integer.toString(v.length())))
                    .peek((k, v) -> { })
                    .to("dsl-stateless-output");
                s.foreach((k, v) -> { });
                b.globalTable("dsl-stateless-global", Consumed.with(S, S));
            }, "output", SS),
            // map (swap key and value), flatMap, selectKey; nulls flow through the functions.
            new Dsl("dsl-map", b -> {
                b.stream("dsl-map-input", Consumed.with(S, S))
                    .map((k, v) -> KeyValue.pair(v, k))
                    .flatMap((k, v) -> k == null ? List.<KeyValue<String, String>>of()
                        : List.of(KeyValue.pair(k, v), KeyValue.pair(k + "!", v)))
                    .selectKey((k, v) -> k.toLowerCase(Locale.ROOT))
                    .to("dsl-map-output", Produced.with(S, S));
            }, "output", SS),
            // split with named, function, consumer and default branches; a second unnamed split.
            new Dsl("dsl-branch", b -> {
                final KStream<String, String> s = b.stream("dsl-branch-input", Consumed.with(S, S));
                final Map<String, KStream<String, String>> m = s.split(Named.as("split-"))
                    .branch((k, v) -> v.startsWith("a"), Branched.as("a"))
                    .branch((k, v) -> v.startsWith("b"), Branched.withFunction(ks -> ks.mapValues(v -> v + "!")))
                    .branch((k, v) -> v.startsWith("c"), Branched.withConsumer(ks -> ks.to("dsl-branch-c")))
                    .defaultBranch(Branched.as("other"));
                m.get("split-a").to("dsl-branch-a");
                m.get("split-2").to("dsl-branch-b");
                m.get("split-other").to("dsl-branch-other");
                s.split().branch((k, v) -> v.length() > 3).noDefaultBranch()
                    .values().forEach(ks -> ks.to("dsl-branch-long"));
            }, "a", SS, "b", SS, "c", SS, "other", SS, "long", SS),
            // merge of two streams.
            new Dsl("dsl-merge", b -> {
                final KStream<String, String> a = b.stream("dsl-merge-a", Consumed.with(S, S));
                final KStream<String, String> c = b.stream("dsl-merge-b", Consumed.with(S, S));
                a.mapValues(v -> "a:" + v).merge(c.filter((k, v) -> k != null)).to("dsl-merge-output");
            }, "output", SS),
            // repartition(): generated and named repartition topics.
            new Dsl("dsl-repartition", b -> {
                final KStream<String, String> s = b.stream("dsl-repartition-input", Consumed.with(S, S));
                s.repartition().mapValues(v -> v + "@").to("dsl-repartition-output");
                s.selectKey((k, v) -> v).repartition(Repartitioned.<String, String>as("rekeyed").withKeySerde(S).withValueSerde(S))
                    .to("dsl-repartition-rekeyed");
            }, "output", SS, "rekeyed", SS, "KSTREAM-REPARTITION-0000000001-repartition", SS, "rekeyed-repartition", SS),
            // to(TopicNameExtractor).
            new Dsl("dsl-extractor", b -> {
                b.stream("dsl-extractor-input", Consumed.with(S, S)).to(new FirstCharExtractor(), Produced.with(S, S));
            }, "a", SS, "b", SS, "none", SS),
            // process with a builder-added store, then processValues.
            new Dsl("dsl-process", b -> {
                b.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("seen"), S, L));
                b.stream("dsl-process-input", Consumed.with(S, S))
                    .process(() -> new Processor<String, String, String, String>() {
                        private ProcessorContext<String, String> ctx;
                        private KeyValueStore<String, Long> seen;

                        @Override
                        public void init(final ProcessorContext<String, String> context) {
                            ctx = context;
                            seen = context.getStateStore("seen");
                        }

                        @Override
                        public void process(final Record<String, String> r) {
                            if (r.key() == null) {
                                return;
                            }
                            final Long old = seen.get(r.key());
                            final long n = old == null ? 1 : old + 1;
                            seen.put(r.key(), n);
                            ctx.forward(r.withValue(r.value() + "#" + n));
                        }
                    }, "seen")
                    .processValues(() -> new FixedKeyProcessor<String, String, String>() {
                        private FixedKeyProcessorContext<String, String> ctx;

                        @Override
                        public void init(final FixedKeyProcessorContext<String, String> context) {
                            ctx = context;
                        }

                        @Override
                        public void process(final FixedKeyRecord<String, String> r) {
                            ctx.forward(r.withValue(r.value().toUpperCase(Locale.ROOT)));
                        }
                    }, Named.as("upper"))
                    .to("dsl-process-output", Produced.with(S, S));
            }, "output", SS, "seen-changelog", SL),
            // groupByKey().count() into a named store (null keys and values dropped).
            new Dsl("dsl-count", b -> {
                b.stream("dsl-count-input", Consumed.with(S, S))
                    .groupByKey()
                    .count(Materialized.as("counts"))
                    .toStream().to("dsl-count-output", Produced.with(S, L));
            }, "output", SL, "counts-changelog", SL),
            // selectKey (null for a null value) + groupByKey + reduce: generated repartition.
            new Dsl("dsl-reduce", b -> {
                b.stream("dsl-reduce-input", Consumed.with(S, S))
                    .selectKey((k, v) -> v == null ? null : v.substring(0, 1))
                    .groupByKey(Grouped.with(S, S))
                    .reduce((a, v) -> a + "+" + v)
                    .toStream().to("dsl-reduce-output");
            }, "output", SS, "KSTREAM-REDUCE-STATE-STORE-0000000002-repartition", SS,
                "KSTREAM-REDUCE-STATE-STORE-0000000002-changelog", SS),
            // groupBy with a named Grouped + aggregate into a named Long store.
            new Dsl("dsl-aggregate", b -> {
                b.stream("dsl-aggregate-input", Consumed.with(S, S))
                    .groupBy((k, v) -> (v == null || v.length() % 2 == 0) ? "even" : "odd",
                        Grouped.<String, String>as("by-parity").withKeySerde(S).withValueSerde(S))
                    .aggregate(() -> 0L, (k, v, agg) -> agg + v.length(),
                        Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("lengths").withValueSerde(L))
                    .toStream().to("dsl-aggregate-output", Produced.with(S, L));
            }, "output", SL, "by-parity-repartition", SS, "lengths-changelog", SL),
            // cogroup of three grouped streams (one re-keyed, so repartitioned).
            new Dsl("dsl-cogroup", b -> {
                final KGroupedStream<String, String> ga = b.stream("dsl-cogroup-a", Consumed.with(S, S)).groupByKey();
                final KGroupedStream<String, Long> gb = b.stream("dsl-cogroup-b", Consumed.with(S, L)).groupByKey(Grouped.with(S, L));
                final KGroupedStream<String, String> gc = b.stream("dsl-cogroup-c", Consumed.with(S, S))
                    .selectKey((k, v) -> v).groupByKey(Grouped.with(S, S));
                ga.<Long>cogroup((k, v, agg) -> agg + v.length())
                    .cogroup(gb, (k, v, agg) -> agg + v)
                    .cogroup(gc, (k, v, agg) -> agg + 100)
                    .aggregate(() -> 0L, Materialized.with(S, L))
                    .toStream().to("dsl-cogroup-output", Produced.with(S, L));
            }, "output", SL, "COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition", SS,
                "COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-changelog", SL),
            // source table (not materialized) -> filter -> mapValues -> toStream.
            new Dsl("dsl-table", b -> {
                b.table("dsl-table-input", Consumed.with(S, S))
                    .filter((k, v) -> !v.startsWith("x"))
                    .mapValues(v -> v.length())
                    .toStream().to("dsl-table-output", Produced.with(S, I));
            }, "output", SI),
            // materialized source, materialized filter (old values), named mapValues.
            new Dsl("dsl-table-mat", b -> {
                b.table("dsl-table-mat-input", Consumed.with(S, S), Materialized.as("source-store"))
                    .filter((k, v) -> !v.startsWith("x"), Materialized.as("filtered-store"))
                    .mapValues(v -> v + "!", Named.as("bang"))
                    .toStream().to("dsl-table-mat-output");
            }, "output", SS, "source-store-changelog", SS, "filtered-store-changelog", SS),
            // table.groupBy(swap).count(): Change serde on the repartition topic.
            new Dsl("dsl-table-count", b -> {
                b.table("dsl-table-count-input", Consumed.with(S, S))
                    .groupBy((k, v) -> KeyValue.pair(v, k), Grouped.with(S, S))
                    .count()
                    .toStream().to("dsl-table-count-output", Produced.with(S, L));
            }, "output", SL, "dsl-table-count-input-STATE-STORE-0000000000-changelog", SS,
                "KTABLE-AGGREGATE-STATE-STORE-0000000004-changelog", SL),
            // table.groupBy(first char).reduce(adder, subtractor) on Longs.
            new Dsl("dsl-table-reduce", b -> {
                b.table("dsl-table-reduce-input", Consumed.with(S, L))
                    .groupBy((k, v) -> KeyValue.pair(k.substring(0, 1), v), Grouped.with(S, L))
                    .reduce((a, v) -> a + v, (a, v) -> a - v)
                    .toStream().to("dsl-table-reduce-output", Produced.with(S, L));
            }, "output", SL, "dsl-table-reduce-input-STATE-STORE-0000000000-changelog", SL,
                "KTABLE-AGGREGATE-STATE-STORE-0000000004-changelog", SL),
            // table.groupBy(swap).aggregate(adder, subtractor), named; default serdes everywhere
            // (the Change serde of the repartition topic wraps default.value.serde).
            new Dsl("dsl-table-aggregate", b -> {
                b.<String, String>table("dsl-table-aggregate-input")
                    .groupBy((k, v) -> KeyValue.<String, String>pair(v, k))
                    .aggregate(() -> "", (k, v, agg) -> agg + "+" + v, (k, v, agg) -> agg + "-" + v,
                        Named.as("agg"), Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("agg-store").withValueSerde(S))
                    .toStream().to("dsl-table-aggregate-output");
            }, "output", SS, "agg-store-changelog", SS, "dsl-table-aggregate-input-STATE-STORE-0000000000-changelog", SS),
            // toTable (materialized), and a re-keyed toTable (repartitioned) with a filter.
            new Dsl("dsl-totable", b -> {
                b.stream("dsl-totable-a", Consumed.with(S, S)).toTable(Materialized.as("tt-store"))
                    .toStream().to("dsl-totable-out-a");
                b.stream("dsl-totable-b", Consumed.with(S, S)).selectKey((k, v) -> v).toTable()
                    .filter((k, v) -> k.length() > 1)
                    .toStream().to("dsl-totable-out-b");
            }, "out-a", SS, "out-b", SS, "tt-store-changelog", SS, "KSTREAM-TOTABLE-0000000006-repartition", SS),
            // table -> filter -> mapValues (neither materialized) -> groupBy -> reduce: old values are
            // computed through the unmaterialized filter and mapValues (the source gets a store).
            new Dsl("dsl-table-chain", b -> {
                b.table("dsl-table-chain-input", Consumed.with(S, S))
                    .filter((k, v) -> !v.startsWith("x"))
                    .mapValues(v -> (long) v.length())
                    .groupBy((k, v) -> KeyValue.pair(k.substring(0, 1), v), Grouped.with(S, L))
                    .reduce((a, v) -> a + v, (a, v) -> a - v, Materialized.as("chain-store"))
                    .toStream().to("dsl-table-chain-output", Produced.with(S, L));
            }, "output", SL, "chain-store-changelog", SL, "dsl-table-chain-input-STATE-STORE-0000000000-changelog", SS),
            // two streams of the same topic share one source node (mergeDuplicateSourceNodes).
            new Dsl("dsl-dupsrc", b -> {
                b.stream("dsl-dupsrc-input", Consumed.with(S, S)).filter((k, v) -> v.startsWith("a")).to("dsl-dupsrc-a");
                b.stream("dsl-dupsrc-input", Consumed.with(S, S)).mapValues(v -> v.toUpperCase(Locale.ROOT)).to("dsl-dupsrc-b");
            }, "a", SS, "b", SS),
            // everything named: Consumed.as, Named, Grouped.as, Materialized.as, Produced.as.
            new Dsl("dsl-named", b -> {
                b.stream("dsl-named-input", Consumed.<String, String>as("input").withKeySerde(S).withValueSerde(S))
                    .filter((k, v) -> v != null, Named.as("keep"))
                    .groupBy((k, v) -> v, Grouped.<String, String>as("regroup").withKeySerde(S).withValueSerde(S))
                    .count(Named.as("counter"), Materialized.as("count-store"))
                    .toStream(Named.as("updates"))
                    .to("dsl-named-output", Produced.<String, Long>as("sink").withKeySerde(S).withValueSerde(L));
            }, "output", SL, "regroup-repartition", SS, "count-store-changelog", SL),
            // toStream(KeyValueMapper): a table's updates re-keyed (a tombstone maps with a null
            // value); the re-keyed stream is repartitioned before a grouping (named to-stream
            // node, generated key selector); a windowed count re-keyed to its plain key.
            new Dsl("dsl-tostream-mapper", b -> {
                final KTable<String, String> t = b.table("dsl-tostream-mapper-input", Consumed.with(S, S));
                t.toStream((k, v) -> k + ":" + v).to("dsl-tostream-mapper-rekeyed", Produced.with(S, S));
                t.toStream((k, v) -> v == null ? null : v.substring(0, 1), Named.as("first-char"))
                    .groupByKey(Grouped.with(S, S))
                    .count(Materialized.as("first-counts"))
                    .toStream().to("dsl-tostream-mapper-counts", Produced.with(S, L));
                b.stream("dsl-tostream-mapper-events", Consumed.with(S, S))
                    .groupByKey()
                    .windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(100)))
                    .count()
                    .toStream((wk, n) -> wk.key() + "@" + wk.window().start())
                    .to("dsl-tostream-mapper-unwindowed", Produced.with(S, L));
            }, "rekeyed", SS, "counts", SL, "unwindowed", SL, "first-counts-repartition", SS, "first-counts-changelog", SL)
        );
    }
}
