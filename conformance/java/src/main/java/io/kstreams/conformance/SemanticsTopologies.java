package io.kstreams.conformance;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.state.Stores;

/**
 * Reference topologies of issue 15 items 1 and 3: stream-table joins with a grace period
 * against a versioned table (KIP-923), and tables whose tombstones reach typed functions. The Go
 * port rebuilds each in kstream/semantics_conformance_test.go. Same conventions as
 * {@link DslTopologies} (application id = name, String default serdes, caching off unless
 * --config says otherwise). Joiners print a null side as "-".
 */
final class SemanticsTopologies {

    private SemanticsTopologies() {
    }

    static final Serde<String> S = Serdes.String();
    static final Serde<Long> L = Serdes.Long();

    static List<RefTopology> all() {
        return List.of(
            // a versioned table (history retention 100 ms) joined by a stream: inner and left
            // joins with grace 20 ms (the left one named), and an inner join without grace (it
            // reads the version as of each record too).
            new DslTopologies.Dsl("ver-st", b -> {
                final KTable<String, String> t = b.table("ver-st-table", Consumed.with(S, S),
                    Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("ver-st-t", Duration.ofMillis(100))));
                final KStream<String, String> s = b.stream("ver-st-stream", Consumed.with(S, S));
                s.join(t, TableJoinTopologies.J, Joined.<String, String, String>with(S, S, S).withGracePeriod(Duration.ofMillis(20)))
                    .to("ver-st-output", Produced.with(S, S));
                s.leftJoin(t, TableJoinTopologies.J, Joined.<String, String, String>as("lj").withGracePeriod(Duration.ofMillis(20)))
                    .to("ver-st-left-output", Produced.with(S, S));
                s.join(t, TableJoinTopologies.J).to("ver-st-nograce", Produced.with(S, S));
            }, "output", DslTopologies.SS, "left-output", DslTopologies.SS, "nograce", DslTopologies.SS),
            // a re-keyed stream (repartitioned first) left-joined with grace 0 to a filtered and
            // mapped, not materialized, view of a versioned table (its getter is versioned).
            new DslTopologies.Dsl("ver-st-derived", b -> {
                final KTable<String, String> t = b.table("ver-st-derived-table", Consumed.with(S, S),
                    Materialized.<String, String>as(Stores.persistentVersionedKeyValueStore("ver-st-derived-t", Duration.ofMillis(100))));
                final KTable<String, String> m = t.filter((k, v) -> !v.startsWith("x")).mapValues(v -> v.toUpperCase());
                b.stream("ver-st-derived-stream", Consumed.with(S, S)).selectKey((k, v) -> v.substring(0, 1))
                    .leftJoin(m, TableJoinTopologies.J, Joined.<String, String, String>with(S, S, S).withGracePeriod(Duration.ZERO))
                    .to("ver-st-derived-output", Produced.with(S, S));
            }, "output", DslTopologies.SS),
            // a session count (gap 10 ms): merging sessions retracts the old ones with
            // tombstones. Re-keyed by a mapper that passes the null on (the Go port sees it
            // through the nullable view), scaled and filtered by null-safe functions (the Go
            // port's typed functions are not called on tombstones, which pass through).
            new DslTopologies.Dsl("tomb-session", b -> {
                final KTable<Windowed<String>, Long> c = b.stream("tomb-session-input", Consumed.with(S, S)).groupByKey()
                    .windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofMillis(10))).count();
                c.toStream().map((k, v) -> KeyValue.pair(k.key() + "@" + k.window().start() + "-" + k.window().end(), v))
                    .to("tomb-session-rekeyed", Produced.with(S, L));
                c.toStream().mapValues(v -> v == null ? null : v * 10).filter((k, v) -> v == null || v > 10)
                    .to("tomb-session-scaled", Produced.with(WindowedSerdes.sessionWindowedSerdeFrom(String.class), L));
            }, "rekeyed", DslTopologies.SL, "scaled", new RefTopology.TopicTypes(ValueType.BYTES, ValueType.LONG)),
            // counts of a table re-grouped by value: a delete in the source table decrements a
            // count (to 0, not null); a filter of the counts turns the odd ones into tombstones,
            // and a mapValues of the source table forwards its deletes; both reach null-safe
            // functions after toStream.
            new DslTopologies.Dsl("tomb-count", b -> {
                final KTable<String, String> t = b.table("tomb-count-input", Consumed.with(S, S));
                final KTable<String, Long> c = t.groupBy((k, v) -> KeyValue.pair(v, k), Grouped.with(S, S)).count();
                c.toStream().mapValues(v -> v == null ? null : v + 100).to("tomb-count-counts", Produced.with(S, L));
                c.filter((k, v) -> v % 2 == 0).toStream().mapValues(v -> v == null ? null : v + 100).to("tomb-count-even", Produced.with(S, L));
                t.mapValues(v -> (long) v.length()).toStream().filter((k, v) -> v == null || v > 1)
                    .map((k, v) -> KeyValue.pair(k.toUpperCase(), v)).to("tomb-count-lengths", Produced.with(S, L));
            }, "counts", DslTopologies.SL, "even", DslTopologies.SL, "lengths", DslTopologies.SL)
        );
    }
}
