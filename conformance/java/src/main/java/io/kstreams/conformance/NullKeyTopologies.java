package io.kstreams.conformance;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.KeyValueMapper;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.StreamJoined;

/**
 * Null keys reaching a join through a repartition topic (KIP-962, issue 15 item 2); the Go port
 * rebuilds each in kstream/join_nullkey_conformance_test.go. A repartition keeps null-key records
 * only when a stream-stream left/outer join, a stream-table left join or a stream-globalTable
 * left join is downstream of it; the repartition topics are part of the output, so what each
 * one carries is checked too. The re-keying function gives a null key for a value starting with
 * "n", else the value's first character. Same conventions as {@link JoinTopologies}.
 */
final class NullKeyTopologies {

    private NullKeyTopologies() {
    }

    static final KeyValueMapper<String, String, String> NK = (k, v) -> v == null || v.startsWith("n") ? null : v.substring(0, 1);

    /** Global-table join key: the value's last character. */
    static final KeyValueMapper<String, String, String> LAST = (k, v) -> v == null ? null : v.substring(v.length() - 1);

    static final JoinWindows W = JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMillis(100));

    static DslTopologies.Dsl streamStream(final String name, final String kind) {
        return new DslTopologies.Dsl(name, b -> {
            final KStream<String, String> l = b.stream(name + "-left", Consumed.with(JoinTopologies.S, JoinTopologies.S)).selectKey(NK);
            final KStream<String, String> r = b.stream(name + "-right", Consumed.with(JoinTopologies.S, JoinTopologies.S)).selectKey(NK);
            final StreamJoined<String, String, String> sj = StreamJoined.with(JoinTopologies.S, JoinTopologies.S, JoinTopologies.S);
            final KStream<String, String> out;
            switch (kind) {
                case "inner":
                    out = l.join(r, JoinTopologies.J, W, sj);
                    break;
                case "left":
                    out = l.leftJoin(r, JoinTopologies.J, W, sj);
                    break;
                default:
                    out = l.outerJoin(r, JoinTopologies.J, W, sj);
            }
            out.to(name + "-output", Produced.with(JoinTopologies.S, JoinTopologies.S));
        }, "output", DslTopologies.SS);
    }

    static DslTopologies.Dsl streamTable(final String name, final boolean left) {
        return new DslTopologies.Dsl(name, b -> {
            final KTable<String, String> t = b.table(name + "-table", Consumed.with(JoinTopologies.S, JoinTopologies.S));
            final KStream<String, String> s = b.stream(name + "-stream", Consumed.with(JoinTopologies.S, JoinTopologies.S)).selectKey(NK);
            (left ? s.leftJoin(t, JoinTopologies.J) : s.join(t, JoinTopologies.J))
                .to(name + "-output", Produced.with(JoinTopologies.S, JoinTopologies.S));
        }, "output", DslTopologies.SS);
    }

    static DslTopologies.Dsl streamGlobal(final String name, final boolean left) {
        return new DslTopologies.Dsl(name, b -> {
            final GlobalKTable<String, String> g = b.globalTable(name + "-table", Consumed.with(JoinTopologies.S, JoinTopologies.S));
            final KStream<String, String> s = b.stream(name + "-stream", Consumed.with(JoinTopologies.S, JoinTopologies.S))
                .selectKey(NK).repartition();
            (left ? s.leftJoin(g, LAST, JoinTopologies.J) : s.join(g, LAST, JoinTopologies.J))
                .to(name + "-output", Produced.with(JoinTopologies.S, JoinTopologies.S));
        }, "output", DslTopologies.SS);
    }

    static List<RefTopology> all() {
        return List.of(
            streamStream("nullkey-ss-inner", "inner"),
            streamStream("nullkey-ss-left", "left"),
            streamStream("nullkey-ss-outer", "outer"),
            streamTable("nullkey-st-inner", false),
            streamTable("nullkey-st-left", true),
            streamGlobal("nullkey-gt-inner", false),
            streamGlobal("nullkey-gt-left", true),
            // one re-keyed stream feeding a count (its repartition drops null keys) and, through
            // mapValues, a left join (its repartition keeps them); with topology.optimization=all
            // the two repartitions merge into one that keeps them, and the count skips them.
            new DslTopologies.Dsl("nullkey-shared", b -> {
                final KTable<String, String> t = b.table("nullkey-shared-table", Consumed.with(JoinTopologies.S, JoinTopologies.S));
                final KStream<String, String> s = b.stream("nullkey-shared-stream", Consumed.with(JoinTopologies.S, JoinTopologies.S)).selectKey(NK);
                s.groupByKey().count().toStream().to("nullkey-shared-count", Produced.with(JoinTopologies.S, Serdes.Long()));
                s.mapValues(v -> v + "!").leftJoin(t, JoinTopologies.J).to("nullkey-shared-output", Produced.with(JoinTopologies.S, JoinTopologies.S));
            }, "output", DslTopologies.SS, "count", DslTopologies.SL),
            // a left join downstream of an aggregation: the aggregation's repartition is upstream
            // of a relaxed join, so it keeps null keys too (the reduce skips them).
            new DslTopologies.Dsl("nullkey-agg-left", b -> {
                final KTable<String, String> t = b.table("nullkey-agg-left-table", Consumed.with(JoinTopologies.S, JoinTopologies.S));
                b.stream("nullkey-agg-left-stream", Consumed.with(JoinTopologies.S, JoinTopologies.S)).selectKey(NK)
                    .groupByKey().reduce((a, v) -> a + v).toStream()
                    .leftJoin(t, JoinTopologies.J)
                    .to("nullkey-agg-left-output", Produced.with(JoinTopologies.S, JoinTopologies.S));
            }, "output", DslTopologies.SS)
        );
    }
}
