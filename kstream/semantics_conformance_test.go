package kstream_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// The reference topologies of conformance/java/.../SemanticsTopologies.java,
// rebuilt with the Go DSL: stream-table joins with a grace period against versioned
// tables (KIP-923), and tables whose tombstones reach typed functions. Expected outputs
// (changelogs included, the join buffers' byte for byte) and Describe text come from Java.

var semanticsTopologies = []dslTopology{
	{name: "ver-st", caching: true, types: kinds{"output": {kS, kS}, "left-output": {kS, kS}, "nograce": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		tbl := kstream.Table(b, "ver-st-table", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedRetention("ver-st-t", 100*time.Millisecond)))
		s := kstream.Stream(b, "ver-st-stream", kstream.ConsumedWith(S, S))
		s.Join(tbl, joinVals, kstream.JoinedWith(S, S, S).WithGracePeriod(20*time.Millisecond)).To("ver-st-output", kstream.ProducedWith(S, S))
		s.LeftJoin(tbl, joinVals, kstream.JoinedAs[string, string, string]("lj").WithGracePeriod(20*time.Millisecond)).
			To("ver-st-left-output", kstream.ProducedWith(S, S))
		s.Join(tbl, joinVals).To("ver-st-nograce", kstream.ProducedWith(S, S))
	}},
	{name: "ver-st-derived", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		tbl := kstream.Table(b, "ver-st-derived-table", kstream.ConsumedWith(S, S),
			kstream.MaterializedAsVersioned[string, string](versionedRetention("ver-st-derived-t", 100*time.Millisecond)))
		m := kstream.KTable[string, string].MapValues(tbl.Filter(func(_, v string) bool { return !strings.HasPrefix(v, "x") }), strings.ToUpper)
		kstream.Stream(b, "ver-st-derived-stream", kstream.ConsumedWith(S, S)).
			SelectKey(func(_, v string) string { return v[:1] }).
			LeftJoin(m, joinVals, kstream.JoinedWith(S, S, S).WithGracePeriod(0)).
			To("ver-st-derived-output", kstream.ProducedWith(S, S))
	}},
	// Typed tombstones (package doc, "Nulls"): the session merge's retractions reach a
	// re-keying Map through the nullable view (nil *int64) and pass a MapValues and a Filter of
	// int64 without calling them; Java's equivalents are null-safe functions.
	{name: "tomb-session", caching: true, types: kinds{"rekeyed": {kS, kL}, "scaled": {conformance.KindBytes, kL}}, build: func(b *kstream.StreamsBuilder) {
		c := kstream.WindowedBySession(kstream.Stream(b, "tomb-session-input", kstream.ConsumedWith(S, S)).GroupByKey(),
			kstream.SessionWindowsOfInactivityGapWithNoGrace(10*time.Millisecond)).Count()
		kstream.ToStreamNullable(c).Map(func(k kstream.Windowed[string], v *int64) (string, *int64) {
			return fmt.Sprintf("%s@%d-%d", k.Key, k.Window.Start, k.Window.End), v
		}).To("tomb-session-rekeyed", kstream.ProducedWith(S, serde.Nullable(L)))
		c.ToStream().MapValues(func(v int64) int64 { return v * 10 }).
			Filter(func(_ kstream.Windowed[string], v int64) bool { return v > 10 }).
			To("tomb-session-scaled", kstream.ProducedWith(serde.SessionWindowed(S), L))
	}},
	// A table count after deletes (0, not null), a filter of it (tombstones) and a mapValues of
	// the source table (its deletes), after ToStream: typed int64 functions are not called on
	// the tombstones, the nullable view shows them to a Filter and a re-keying Map.
	{name: "tomb-count", caching: true, types: kinds{"counts": {kS, kL}, "even": {kS, kL}, "lengths": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, "tomb-count-input", kstream.ConsumedWith(S, S))
		c := t.GroupBy(func(k, v string) (string, string) { return v, k }, kstream.GroupedWith(S, S)).Count()
		c.ToStream().MapValues(func(v int64) int64 { return v + 100 }).To("tomb-count-counts", kstream.ProducedWith(S, L))
		c.Filter(func(_ string, v int64) bool { return v%2 == 0 }).ToStream().
			MapValues(func(v int64) int64 { return v + 100 }).To("tomb-count-even", kstream.ProducedWith(S, L))
		lengths := kstream.KTable[string, string].MapValues(t, func(v string) int64 { return int64(len(v)) })
		kstream.ToStreamNullable(lengths).Filter(func(_ string, v *int64) bool { return v == nil || *v > 1 }).
			Map(func(k string, v *int64) (string, *int64) { return strings.ToUpper(k), v }).
			To("tomb-count-lengths", kstream.ProducedWith(S, serde.Nullable(L)))
	}},
}

func TestConformanceSemantics(t *testing.T) {
	for _, d := range semanticsTopologies {
		t.Run(d.name, func(t *testing.T) { runDSLConformance(t, d.testCase()) })
		t.Run(d.name+"/optimized", func(t *testing.T) {
			if !javaAvailable() {
				t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the topology.optimization=all expectation")
			}
			runDSLConformance(t, d.testCase(optimizeAllConfig))
		})
		if d.caching {
			t.Run(d.name+"/caching", func(t *testing.T) {
				if !javaAvailable() {
					t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the caching-on expectation")
				}
				runDSLConformance(t, d.testCase(cachingOnConfig))
			})
		}
	}
}

// versionedRetention is a Pebble versioned store with the given history retention.
func versionedRetention(name string, retention time.Duration) store.VersionedBytesStoreSupplier {
	s, err := store.Stores.PersistentVersionedKeyValueStore(name, retention)
	if err != nil {
		panic(err)
	}
	return s
}
