package io.kstreams.conformance;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TableJoined;
import org.apache.kafka.streams.kstream.ValueJoiner;
import org.apache.kafka.streams.state.Stores;

/**
 * Table-table and foreign-key join reference topologies (issue 4 item 6); the Go port rebuilds
 * each in kstream/join_table_conformance_test.go. Same conventions as {@link DslTopologies}
 * (application id = name, String default serdes, caching off unless --config says otherwise).
 * Joiners print a null side as "-".
 */
final class TableJoinTopologies {

    private TableJoinTopologies() {
    }

    static final Serde<String> S = Serdes.String();

    static String d(final String s) {
        return s == null ? "-" : s;
    }

    static final ValueJoiner<String, String, String> J = (a, b) -> d(a) + "|" + d(b);

    /** The foreign key of a value "fk:payload"; null when there is no ':'. */
    static String fk(final String v) {
        final int i = v.indexOf(':');
        return i < 0 ? null : v.substring(0, i);
    }

    static List<RefTopology> all() {
        return List.of(
            // inner join of a filtered (not materialized) table with a source table.
            new DslTopologies.Dsl("tt-inner", b -> {
                final KTable<String, String> l = b.table("tt-inner-left", Consumed.with(S, S))
                    .filter((k, v) -> !v.startsWith("x"));
                final KTable<String, String> r = b.table("tt-inner-right", Consumed.with(S, S));
                l.join(r, J).toStream().to("tt-inner-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // named, materialized left join, then a table aggregation over the result (old values).
            new DslTopologies.Dsl("tt-left", b -> {
                final KTable<String, String> l = b.table("tt-left-left", Consumed.with(S, S), Materialized.as("tt-left-l"));
                final KTable<String, String> r = b.table("tt-left-right", Consumed.with(S, S));
                final KTable<String, String> j = l.leftJoin(r, J, Named.as("lj"),
                    Materialized.<String, String, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("tt-left-store")
                        .withKeySerde(S).withValueSerde(S));
                j.toStream().to("tt-left-output", Produced.with(S, S));
                j.groupBy((k, v) -> KeyValue.pair(v.substring(v.indexOf('|') + 1), k), Grouped.with(S, S))
                    .count().toStream().to("tt-left-count", Produced.with(S, Serdes.Long()));
            }, "output", DslTopologies.SS, "count", DslTopologies.SL),
            // outer join materialized without a name (generated store), a chained join on the result.
            new DslTopologies.Dsl("tt-outer", b -> {
                final KTable<String, String> l = b.table("tt-outer-left", Consumed.with(S, S));
                final KTable<String, String> r = b.table("tt-outer-right", Consumed.with(S, S));
                final KTable<String, String> t3 = b.table("tt-outer-third", Consumed.with(S, S));
                final KTable<String, String> o = l.outerJoin(r, J, Materialized.with(S, S));
                o.toStream().to("tt-outer-output", Produced.with(S, S));
                o.leftJoin(t3, J).toStream().to("tt-outer-chain", Produced.with(S, S));
            }, "output", DslTopologies.SS, "chain", DslTopologies.SS),
            // unmaterialized inner join with an aggregation, mapped, read by a stream-table join
            // (value getters through the join) and outer-joined (named) with a source table.
            new DslTopologies.Dsl("tt-chain", b -> {
                final KTable<String, String> l = b.table("tt-chain-left", Consumed.with(S, S));
                final KTable<String, String> agg = b.stream("tt-chain-events", Consumed.with(S, S))
                    .groupByKey(Grouped.with(S, S)).reduce((a, v) -> a + "+" + v);
                final KTable<String, String> m = l.join(agg, J).mapValues(v -> v.toUpperCase(java.util.Locale.ROOT));
                b.stream("tt-chain-stream", Consumed.with(S, S)).join(m, J).to("tt-chain-output", Produced.with(S, S));
                m.outerJoin(b.table("tt-chain-right", Consumed.with(S, S)), J, Named.as("oj")).toStream()
                    .to("tt-chain-outer", Produced.with(S, S));
            }, "output", DslTopologies.SS, "outer", DslTopologies.SS),
            // non-String values: outer join of Long and Integer tables into a Long sum (named,
            // materialized with a Long serde), and a self-join of the Long table.
            new DslTopologies.Dsl("tt-types", b -> {
                final KTable<String, Long> l = b.table("tt-types-left", Consumed.with(S, Serdes.Long()));
                final KTable<String, Integer> r = b.table("tt-types-right", Consumed.with(S, Serdes.Integer()));
                l.outerJoin(r, (a, c) -> (a == null ? 0L : a) + (c == null ? 0 : c), Named.as("sum"),
                    Materialized.<String, Long, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>with(S, Serdes.Long()))
                    .toStream().to("tt-types-output", Produced.with(S, Serdes.Long()));
                l.join(l, (a, c) -> a * c).toStream().to("tt-types-self", Produced.with(S, Serdes.Long()));
            }, "output", DslTopologies.SL, "self", DslTopologies.SL),
            // foreign-key inner join: the foreign key is the part of the value before ':' (null without ':').
            new DslTopologies.Dsl("fk-inner", b -> {
                final KTable<String, String> l = b.table("fk-inner-left", Consumed.with(S, S));
                final KTable<String, String> r = b.table("fk-inner-right", Consumed.with(S, S));
                l.join(r, TableJoinTopologies::fk, J).toStream().to("fk-inner-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // foreign-key left join, named with TableJoined, materialized result.
            new DslTopologies.Dsl("fk-left", b -> {
                final KTable<String, String> l = b.table("fk-left-left", Consumed.with(S, S));
                final KTable<String, String> r = b.table("fk-left-right", Consumed.with(S, S), Materialized.as("fk-left-r"));
                l.leftJoin(r, TableJoinTopologies::fk, J, TableJoined.as("fkl"),
                    Materialized.<String, String, org.apache.kafka.streams.state.KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]>>as("fk-left-store")
                        .withKeySerde(S).withValueSerde(S))
                    .toStream().to("fk-left-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // foreign-key join of a filtered table (key-aware extractor, TableJoined partitioners),
            // its unmaterialized result then joined with a third table (materializes it) and
            // re-grouped (old values).
            new DslTopologies.Dsl("fk-chain", b -> {
                final KTable<String, String> l = b.table("fk-chain-left", Consumed.with(S, S)).filter((k, v) -> !v.startsWith("#"));
                final KTable<String, String> r = b.table("fk-chain-right", Consumed.with(S, S));
                final KTable<String, String> j = l.join(r, (k, v) -> k.equals("z") ? null : fk(v), J,
                    TableJoined.<String, String>with((topic, key, value, n) -> Optional.of(Set.of(0)),
                        (topic, key, value, n) -> Optional.of(Set.of(n - 1))));
                j.toStream().to("fk-chain-output", Produced.with(S, S));
                j.join(b.table("fk-chain-third", Consumed.with(S, S)), J).toStream().to("fk-chain-chain", Produced.with(S, S));
                j.groupBy((k, v) -> KeyValue.pair(v.substring(v.indexOf('|') + 1), k), Grouped.with(S, S))
                    .count().toStream().to("fk-chain-count", Produced.with(S, Serdes.Long()));
            }, "output", DslTopologies.SS, "chain", DslTopologies.SS, "count", DslTopologies.SL),
            // versioned tables (KIP-889, history retention 50 ms) joined: out-of-order updates
            // are not joined and updates beyond the history retention are dropped (KIP-914); a
            // non-versioned table joined with a versioned one.
            new DslTopologies.Dsl("ver-tt", b -> {
                final KTable<String, String> l = b.table("ver-tt-left", Consumed.with(S, S),
                    Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("ver-tt-l", Duration.ofMillis(50))));
                final KTable<String, String> r = b.table("ver-tt-right", Consumed.with(S, S),
                    Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("ver-tt-r", Duration.ofMillis(50))));
                l.join(r, J).toStream().to("ver-tt-output", Produced.with(S, S));
                l.leftJoin(r, J, Materialized.with(S, S)).toStream().to("ver-tt-left-output", Produced.with(S, S));
                final KTable<String, String> plain = b.table("ver-tt-plain", Consumed.with(S, S));
                plain.outerJoin(r, J).toStream().to("ver-tt-outer", Produced.with(S, S));
            }, "output", DslTopologies.SS, "left-output", DslTopologies.SS, "outer", DslTopologies.SS),
            // versioned tables reaching joins through mapValues and filter, joined in both
            // directions and with a plain table: out-of-order updates (and those beyond the
            // history) are stored but never joined, from either side; a join materialized as a
            // versioned table feeds another join.
            new DslTopologies.Dsl("ver-tt-chain", b -> {
                final KTable<String, String> l = b.table("ver-tt-chain-left", Consumed.with(S, S),
                    Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("ver-tt-chain-l", Duration.ofMillis(50))));
                final KTable<String, String> r = b.table("ver-tt-chain-right", Consumed.with(S, S),
                    Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("ver-tt-chain-r", Duration.ofMillis(50))));
                final KTable<String, String> plain = b.table("ver-tt-chain-plain", Consumed.with(S, S));
                final KTable<String, String> lm = l.mapValues(v -> v.toLowerCase(java.util.Locale.ROOT));
                final KTable<String, String> rf = r.filter((k, v) -> !v.startsWith("x"));
                lm.join(rf, J).toStream().to("ver-tt-chain-output", Produced.with(S, S));
                rf.join(lm, J).toStream().to("ver-tt-chain-reverse", Produced.with(S, S));
                plain.leftJoin(rf, J).toStream().to("ver-tt-chain-left-output", Produced.with(S, S));
                rf.outerJoin(plain, J).toStream().to("ver-tt-chain-outer", Produced.with(S, S));
                l.join(r, J, Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("ver-tt-chain-j", Duration.ofMillis(50)))
                        .withKeySerde(S).withValueSerde(S))
                    .join(plain, J).toStream().to("ver-tt-chain-chain", Produced.with(S, S));
            }, "output", DslTopologies.SS, "reverse", DslTopologies.SS, "left-output", DslTopologies.SS,
                "outer", DslTopologies.SS, "chain", DslTopologies.SS),
            // a table aggregation over a versioned table: out-of-order updates are not aggregated.
            new DslTopologies.Dsl("ver-agg", b -> {
                final KTable<String, String> v = b.table("ver-agg-versioned", Consumed.with(S, S),
                    Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("ver-agg-v", Duration.ofMillis(50))));
                v.groupBy((k, x) -> KeyValue.pair(x.substring(0, 1), k), Grouped.with(S, S))
                    .count().toStream().to("ver-agg-count", Produced.with(S, Serdes.Long()));
                v.groupBy((k, x) -> KeyValue.pair("all", x), Grouped.with("ver-agg-all", S, S))
                    .reduce((a, x) -> a + "+" + x, (a, x) -> a + "-" + x).toStream().to("ver-agg-reduce", Produced.with(S, S));
            }, "count", DslTopologies.SL, "reduce", DslTopologies.SS)
        );
    }
}
