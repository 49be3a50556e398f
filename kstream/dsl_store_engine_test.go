package kstream_test

import (
	"github.com/kstreams-go/kstreams/internal/topology"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// storeEngines builds every store of topo and reports, by store name, whether it is
// persistent (a Pebble engine).
func storeEngines(t *testing.T, topo *processor.Topology) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, s := range topology.Of(topo).Stores() {
		b, ok := s.Builder.(interface {
			Build() (processor.StateStore, error)
		})
		if !ok {
			t.Fatalf("store %s: builder %T cannot build", s.Builder.Name(), s.Builder)
		}
		st, err := b.Build()
		if err != nil {
			t.Fatalf("store %s: %v", s.Builder.Name(), err)
		}
		out[s.Builder.Name()] = st.Persistent()
	}
	return out
}

// engineTopology has every DSL operator that creates a store: a table aggregation, time,
// sliding, session and emit-on-window-close windowed aggregations, cogrouped windowed
// aggregations, an outer stream-stream join (two window stores and the shared outer store), a
// foreign-key join (subscription store) and a suppression (Java's buffer is in memory only).
func engineTopology(t *testing.T, props map[string]string) *processor.Topology {
	t.Helper()
	b := kstream.NewStreamsBuilder()
	S := serde.String()
	in := kstream.Stream(b, "in", kstream.ConsumedWith(S, S))
	g := in.GroupByKey(kstream.GroupedWith(S, S))
	g.Count(kstream.MaterializedAs[string, int64]("kv-count"))
	kstream.WindowedBy(g, kstream.TimeWindowsOfSizeAndGrace(time.Minute, time.Minute)).
		Count(kstream.MaterializedAs[string, int64]("time-count"))
	kstream.WindowedBy(g, kstream.TimeWindowsOfSizeAndGrace(time.Minute, time.Minute)).
		EmitStrategy(kstream.EmitOnWindowClose()).Count(kstream.MaterializedAs[string, int64]("emit-close-count"))
	kstream.WindowedBySliding(g, kstream.SlidingWindowsOfTimeDifferenceWithNoGrace(time.Minute)).
		Count(kstream.MaterializedAs[string, int64]("sliding-count"))
	kstream.WindowedBySession(g, kstream.SessionWindowsOfInactivityGapWithNoGrace(time.Minute)).
		Count(kstream.MaterializedAs[string, int64]("session-count")).
		Suppress(kstream.SuppressedUntilWindowCloses(kstream.BufferConfigUnbounded()))
	c := kstream.KGroupedStream[string, string].Cogroup(g, func(_ string, v, agg string) string { return agg + v })
	kstream.CogroupWindowedBy(c, kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).
		Aggregate(func() string { return "" }, kstream.MaterializedAs[string, string]("cogroup-time"))
	c2 := kstream.KGroupedStream[string, string].Cogroup(g, func(_ string, v, agg string) string { return agg + v })
	kstream.CogroupWindowedBySession(c2, kstream.SessionWindowsOfInactivityGapWithNoGrace(time.Minute)).
		Aggregate(func() string { return "" }, func(_ string, a, b string) string { return a + b },
			kstream.MaterializedAs[string, string]("cogroup-session"))
	other := kstream.Stream(b, "other", kstream.ConsumedWith(S, S))
	in.OuterJoinStream(other, func(v, o string) string { return v + o }, kstream.OfTimeDifferenceWithNoGrace(time.Minute),
		kstream.StreamJoinedWith(S, S, S).WithStoreName("ssj")).To("joined")
	left := kstream.Table(b, "left", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("left-table"))
	right := kstream.Table(b, "right", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("right-table"))
	left.JoinFK(right, func(v string) string { return v }, func(v, o string) string { return v + o }).ToStream().To("fk")
	topo, err := b.BuildWithConfig(props)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// Every DSL store persists (Pebble) by default, as Java's default dsl.store.suppliers.class
// (RocksDB) makes them persist, and is in memory under default.dsl.store=in_memory or Java's
// in-memory dsl.store.suppliers.class. Suppress keeps no local store in either (Java's buffer
// is in memory only, restored from its changelog).
func TestDSLStoresPersistByDefault(t *testing.T) {
	want := []string{"cogroup-session", "cogroup-time", "emit-close-count", "kv-count", "left-table",
		"right-table", "session-count", "sliding-count", "ssj-outer-shared-join-store", "ssj-outer-this-join-store",
		"ssj-outer-other-join-store", "time-count"}
	for _, tc := range []struct {
		name       string
		props      map[string]string
		persistent bool
	}{
		{"default", nil, true},
		{"default.dsl.store=rocksDB", map[string]string{kstream.DefaultDSLStoreConfig: "rocksDB"}, true},
		{"default.dsl.store=in_memory", map[string]string{kstream.DefaultDSLStoreConfig: kstream.InMemoryDSLStore}, false},
		{"dsl.store.suppliers.class=in-memory", map[string]string{kstream.DSLStoreSuppliersConfig: "org.apache.kafka.streams.state.BuiltInDslStoreSuppliers$InMemoryDslStoreSuppliers"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := storeEngines(t, engineTopology(t, tc.props))
			for _, name := range want {
				p, ok := got[name]
				if !ok {
					t.Errorf("no store %s (stores: %v)", name, slices.Sorted(maps.Keys(got)))
					continue
				}
				if p != tc.persistent {
					t.Errorf("store %s: persistent = %v, want %v", name, p, tc.persistent)
				}
			}
			fk, suppress := 0, 0
			for name, p := range got {
				switch {
				case strings.Contains(name, "-FK-JOIN-SUBSCRIPTION-STATE-STORE-"):
					fk++
					if p != tc.persistent {
						t.Errorf("foreign-key subscription store %s: persistent = %v, want %v", name, p, tc.persistent)
					}
				case strings.HasPrefix(name, "KTABLE-SUPPRESS-STATE-STORE-"):
					suppress++
					if p {
						t.Errorf("suppression buffer %s is persistent: Java's is in memory only", name)
					}
				}
			}
			if fk != 1 || suppress != 1 {
				t.Errorf("%d foreign-key subscription stores and %d suppression buffers in %v, want 1 and 1", fk, suppress, slices.Sorted(maps.Keys(got)))
			}
		})
	}
}
