package kstream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// The table-table and foreign-key join reference topologies of
// conformance/java/.../TableJoinTopologies.java, rebuilt with the Go DSL. Expected outputs
// (including changelog and internal subscription/response topics) and Describe text always
// come from Java. Joiners print a null side as "-" (see joinVals).

var tableJoinTopologies = []dslTopology{
	{name: "ver-tt", caching: true, types: kinds{"output": {kS, kS}, "left-output": {kS, kS}, "outer": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "ver-tt-left", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedSupplier("ver-tt-l")))
		r := kstream.Table(b, "ver-tt-right", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedSupplier("ver-tt-r")))
		l.Join(r, joinVals).ToStream().To("ver-tt-output", kstream.ProducedWith(S, S))
		l.LeftJoin(r, joinVals, kstream.MaterializedWith(S, S)).ToStream().To("ver-tt-left-output", kstream.ProducedWith(S, S))
		plain := kstream.Table(b, "ver-tt-plain", kstream.ConsumedWith(S, S))
		plain.OuterJoin(r, joinVals).ToStream().To("ver-tt-outer", kstream.ProducedWith(S, S))
	}},
	{name: "ver-agg", caching: true, types: kinds{"count": {kS, kL}, "reduce": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		v := kstream.Table(b, "ver-agg-versioned", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedSupplier("ver-agg-v")))
		v.GroupBy(func(k, x string) (string, string) { return x[:1], k }, kstream.GroupedWith(S, S)).
			Count().ToStream().To("ver-agg-count", kstream.ProducedWith(S, L))
		v.GroupBy(func(_, x string) (string, string) { return "all", x }, kstream.GroupedAs[string, string]("ver-agg-all").WithKeySerde(S).WithValueSerde(S)).
			Reduce(func(a, x string) string { return a + "+" + x }, func(a, x string) string { return a + "-" + x }).
			ToStream().To("ver-agg-reduce", kstream.ProducedWith(S, S))
	}},
	{name: "tt-inner", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "tt-inner-left", kstream.ConsumedWith(S, S)).
			Filter(func(_ string, v string) bool { return !strings.HasPrefix(v, "x") })
		r := kstream.Table(b, "tt-inner-right", kstream.ConsumedWith(S, S))
		l.Join(r, joinVals).ToStream().To("tt-inner-output", kstream.ProducedWith(S, S))
	}},
	{name: "tt-left", caching: true, types: kinds{"output": {kS, kS}, "count": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "tt-left-left", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("tt-left-l"))
		r := kstream.Table(b, "tt-left-right", kstream.ConsumedWith(S, S))
		j := l.LeftJoin(r, joinVals, kstream.TableNamedAs[string, string]("lj"),
			kstream.MaterializedAs[string, string]("tt-left-store").WithKeySerde(S).WithValueSerde(S))
		j.ToStream().To("tt-left-output", kstream.ProducedWith(S, S))
		j.GroupBy(func(k, v string) (string, string) { return v[strings.IndexByte(v, '|')+1:], k }, kstream.GroupedWith(S, S)).
			Count().ToStream().To("tt-left-count", kstream.ProducedWith(S, L))
	}},
	{name: "tt-outer", caching: true, types: kinds{"output": {kS, kS}, "chain": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "tt-outer-left", kstream.ConsumedWith(S, S))
		r := kstream.Table(b, "tt-outer-right", kstream.ConsumedWith(S, S))
		t3 := kstream.Table(b, "tt-outer-third", kstream.ConsumedWith(S, S))
		o := l.OuterJoin(r, joinVals, kstream.MaterializedWith(S, S))
		o.ToStream().To("tt-outer-output", kstream.ProducedWith(S, S))
		o.LeftJoin(t3, joinVals).ToStream().To("tt-outer-chain", kstream.ProducedWith(S, S))
	}},
	{name: "tt-chain", caching: true, types: kinds{"output": {kS, kS}, "outer": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "tt-chain-left", kstream.ConsumedWith(S, S))
		agg := kstream.Stream(b, "tt-chain-events", kstream.ConsumedWith(S, S)).GroupByKey(kstream.GroupedWith(S, S)).
			Reduce(func(a, v string) string { return a + "+" + v })
		m := kstream.KTable[string, string].MapValues(l.Join(agg, joinVals), strings.ToUpper)
		kstream.Stream(b, "tt-chain-stream", kstream.ConsumedWith(S, S)).Join(m, joinVals).To("tt-chain-output", kstream.ProducedWith(S, S))
		m.OuterJoin(kstream.Table(b, "tt-chain-right", kstream.ConsumedWith(S, S)), joinVals, kstream.TableNamedAs[string, string]("oj")).ToStream().
			To("tt-chain-outer", kstream.ProducedWith(S, S))
	}},
	{name: "tt-types", caching: true, types: kinds{"output": {kS, kL}, "self": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "tt-types-left", kstream.ConsumedWith(S, L))
		r := kstream.Table(b, "tt-types-right", kstream.ConsumedWith(S, serde.Integer()))
		l.OuterJoin(r, func(a int64, c int32) int64 { return a + int64(c) }, kstream.TableNamedAs[string, int64]("sum"), kstream.MaterializedWith(S, L)).
			ToStream().To("tt-types-output", kstream.ProducedWith(S, L))
		l.Join(l, func(a, c int64) int64 { return a * c }).ToStream().To("tt-types-self", kstream.ProducedWith(S, L))
	}},
	{name: "fk-inner", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "fk-inner-left", kstream.ConsumedWith(S, S))
		r := kstream.Table(b, "fk-inner-right", kstream.ConsumedWith(NS, S))
		l.JoinFK(r, foreignKeyOf, joinVals).ToStream().To("fk-inner-output", kstream.ProducedWith(S, S))
	}},
	{name: "fk-left", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "fk-left-left", kstream.ConsumedWith(S, S))
		r := kstream.Table(b, "fk-left-right", kstream.ConsumedWith(NS, S), kstream.MaterializedAs[*string, string]("fk-left-r"))
		l.LeftJoinFK(r, foreignKeyOf, joinVals, kstream.TableJoinedAs[string, *string]("fkl"),
			kstream.MaterializedAs[string, string]("fk-left-store").WithKeySerde(S).WithValueSerde(S)).
			ToStream().To("fk-left-output", kstream.ProducedWith(S, S))
	}},
	{name: "fk-chain", caching: true, types: kinds{"output": {kS, kS}, "chain": {kS, kS}, "count": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Table(b, "fk-chain-left", kstream.ConsumedWith(S, S)).Filter(func(_ string, v string) bool { return !strings.HasPrefix(v, "#") })
		r := kstream.Table(b, "fk-chain-right", kstream.ConsumedWith(NS, S))
		j := l.JoinFKWithKey(r, func(k, v string) *string {
			if k == "z" {
				return nil
			}
			return foreignKeyOf(v)
		}, joinVals, kstream.TableJoinedWith[string, *string](
			processor.StreamPartitionerFunc[string, struct{}](func(_ string, _ string, _ struct{}, _ int32) ([]int32, bool, error) {
				return []int32{0}, true, nil
			}),
			processor.StreamPartitionerFunc[*string, struct{}](func(_ string, _ *string, _ struct{}, n int32) ([]int32, bool, error) {
				return []int32{n - 1}, true, nil
			})))
		j.ToStream().To("fk-chain-output", kstream.ProducedWith(S, S))
		j.Join(kstream.Table(b, "fk-chain-third", kstream.ConsumedWith(S, S)), joinVals).ToStream().To("fk-chain-chain", kstream.ProducedWith(S, S))
		j.GroupBy(func(k, v string) (string, string) { return v[strings.IndexByte(v, '|')+1:], k }, kstream.GroupedWith(S, S)).
			Count().ToStream().To("fk-chain-count", kstream.ProducedWith(S, L))
	}},
}

// foreignKeyOf is the foreign key of a value "fk:payload": the part before ':', nil (Java
// null) when there is no ':'.
func foreignKeyOf(v string) *string {
	i := strings.IndexByte(v, ':')
	if i < 0 {
		return nil
	}
	return ptr(v[:i])
}

func TestConformanceTableJoins(t *testing.T) {
	for _, d := range tableJoinTopologies {
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

// versionedSupplier is the Pebble versioned store (history retention 50 ms) of the versioned
// table topologies.
func versionedSupplier(name string) store.VersionedBytesStoreSupplier {
	s, err := store.Stores.PersistentVersionedKeyValueStore(name, 50*time.Millisecond)
	if err != nil {
		panic(err)
	}
	return s
}
