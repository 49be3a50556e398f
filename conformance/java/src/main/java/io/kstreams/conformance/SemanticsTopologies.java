package io.kstreams.conformance;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
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
            }, "output", DslTopologies.SS)
        );
    }
}
