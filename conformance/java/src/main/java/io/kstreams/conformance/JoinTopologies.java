package io.kstreams.conformance;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.ValueJoiner;

/**
 * Join reference topologies (issue 4 item 6); the Go port rebuilds each in
 * kstream/join_conformance_test.go. Same conventions as {@link DslTopologies} (application id =
 * name, String default serdes, caching off unless --config says otherwise). Joiners print a
 * null side as "-" (the Go port's typed joiners see "" for a null string, and vectors never
 * carry empty strings).
 */
final class JoinTopologies {

    private JoinTopologies() {
    }

    static final Serde<String> S = Serdes.String();

    static String d(final String s) {
        return s == null ? "-" : s;
    }

    static final ValueJoiner<String, String, String> J = (a, b) -> d(a) + "|" + d(b);

    static List<RefTopology> all() {
        return List.of(
            // stream-table inner join; the table is not materialized by the user.
            new DslTopologies.Dsl("join-st-inner", b -> {
                final KTable<String, String> t = b.table("join-st-inner-table", Consumed.with(S, S));
                b.stream("join-st-inner-stream", Consumed.with(S, S)).join(t, J).to("join-st-inner-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // stream-table left join against a materialized table, named with Joined.
            new DslTopologies.Dsl("join-st-left", b -> {
                final KTable<String, String> t = b.table("join-st-left-table", Consumed.with(S, S), Materialized.as("lt-store"));
                b.stream("join-st-left-stream", Consumed.with(S, S))
                    .leftJoin(t, J, Joined.<String, String, String>with(S, S, S).withName("enrich"))
                    .to("join-st-left-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // re-keyed stream joined with a table: automatic repartition before the join.
            new DslTopologies.Dsl("join-st-rekey", b -> {
                final KTable<String, String> t = b.table("join-st-rekey-table", Consumed.with(S, S));
                b.stream("join-st-rekey-stream", Consumed.with(S, S))
                    .selectKey((k, v) -> v == null ? null : v.substring(0, 1))
                    .join(t, J)
                    .to("join-st-rekey-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // stream-globalTable inner and left joins with a key selector on the value.
            new DslTopologies.Dsl("join-global", b -> {
                final GlobalKTable<String, String> g = b.globalTable("join-global-table", Consumed.with(S, S));
                final KStream<String, String> s = b.stream("join-global-stream", Consumed.with(S, S));
                s.join(g, (k, v) -> v == null ? null : v.substring(0, 1), J).to("join-global-inner", Produced.with(S, S));
                s.leftJoin(g, (k, v) -> v == null ? null : v.substring(0, 1), J, Named.as("gleft")).to("join-global-left", Produced.with(S, S));
            }, "inner", DslTopologies.SS, "left", DslTopologies.SS),
            // self-joins (KIP-862): an inner join of a stream with itself, which
            // topology.optimization=all or single.store.self.join rewrites to one store and one
            // processor; a left self-join and a join with a mapped copy are not rewritten.
            new DslTopologies.Dsl("join-self", b -> {
                final KStream<String, String> s = b.stream("join-self-input", Consumed.with(S, S));
                s.join(s, J, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10))).to("join-self-output", Produced.with(S, S));
                s.leftJoin(s, J, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10))).to("join-self-left", Produced.with(S, S));
                s.join(s.mapValues(v -> v + "'"), J, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(10)))
                    .to("join-self-mapped", Produced.with(S, S));
            }, "output", DslTopologies.SS, "left", DslTopologies.SS, "mapped", DslTopologies.SS),
            // stream-stream inner join, 100 ms, no grace.
            new DslTopologies.Dsl("join-ss-inner", b -> {
                final KStream<String, String> l = b.stream("join-ss-inner-left", Consumed.with(S, S));
                final KStream<String, String> r = b.stream("join-ss-inner-right", Consumed.with(S, S));
                l.join(r, J, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(100)), StreamJoined.with(S, S, S))
                    .to("join-ss-inner-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // stream-stream left join, 100 ms with 50 ms grace (KIP-633 held-back results).
            new DslTopologies.Dsl("join-ss-left", b -> {
                final KStream<String, String> l = b.stream("join-ss-left-left", Consumed.with(S, S));
                final KStream<String, String> r = b.stream("join-ss-left-right", Consumed.with(S, S));
                l.leftJoin(r, J, JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(100), Duration.ofMillis(50)), StreamJoined.with(S, S, S))
                    .to("join-ss-left-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // stream-stream outer join with named processors and stores.
            new DslTopologies.Dsl("join-ss-outer", b -> {
                final KStream<String, String> l = b.stream("join-ss-outer-left", Consumed.with(S, S));
                final KStream<String, String> r = b.stream("join-ss-outer-right", Consumed.with(S, S));
                l.outerJoin(r, J, JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(100), Duration.ofMillis(20)),
                        StreamJoined.<String, String, String>with(S, S, S).withName("oj").withStoreName("ojs"))
                    .to("join-ss-outer-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // asymmetric windows (before 10 ms, after 50 ms), outer join, changelogs off.
            new DslTopologies.Dsl("join-ss-asym", b -> {
                final KStream<String, String> l = b.stream("join-ss-asym-left", Consumed.with(S, S));
                final KStream<String, String> r = b.stream("join-ss-asym-right", Consumed.with(S, S));
                l.outerJoin(r, J, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(30)).before(Duration.ofMillis(10)).after(Duration.ofMillis(50)),
                        StreamJoined.<String, String, String>with(S, S, S).withLoggingDisabled())
                    .to("join-ss-asym-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // both sides re-keyed: repartitioned before a left stream-stream join.
            new DslTopologies.Dsl("join-ss-rekey", b -> {
                final KStream<String, String> l = b.stream("join-ss-rekey-left", Consumed.with(S, S))
                    .selectKey((k, v) -> v == null ? null : v.substring(0, 1));
                final KStream<String, String> r = b.stream("join-ss-rekey-right", Consumed.with(S, S))
                    .selectKey((k, v) -> v == null ? null : v.substring(0, 1));
                l.leftJoin(r, J, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(50)), StreamJoined.with(S, S, S))
                    .to("join-ss-rekey-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // stream-table join chained after a stream-stream join.
            new DslTopologies.Dsl("join-chain", b -> {
                final KStream<String, String> l = b.stream("join-chain-left", Consumed.with(S, S));
                final KStream<String, String> r = b.stream("join-chain-right", Consumed.with(S, S));
                final KTable<String, String> t = b.table("join-chain-table", Consumed.with(S, S));
                l.join(r, J, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(100)))
                    .leftJoin(t, J)
                    .to("join-chain-output", Produced.with(S, S));
            }, "output", DslTopologies.SS)
        );
    }
}
