package kstream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/store"
)

// The reference topologies of conformance/java/.../SemanticsTopologies.java (issue 15 items 1
// and 3), rebuilt with the Go DSL: stream-table joins with a grace period against versioned
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
