package kstream_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// Reference topologies for behaviour at the edges of the DSL, each checked against Java 4.4's
// TopologyTestDriver with caching off and on and with topology.optimization=all (Java's
// sources: the ver-tt-chain entry of TableJoinTopologies.java, win-session-emit-close-late of
// WindowTopologies.java, join-self of JoinTopologies.java, dsl-partitioner-drop and
// dsl-table-transform of DslTopologies.java).

var edgeTopologies = []dslTopology{
	// Versioned tables (KIP-914) reaching joins through mapValues and filter, in both
	// directions: an out-of-order update is stored as history and joined by neither side.
	{name: "ver-tt-chain", caching: true, types: kinds{"output": {kS, kS}, "reverse": {kS, kS}, "left-output": {kS, kS}, "outer": {kS, kS}, "chain": {kS, kS}},
		build: func(b *kstream.StreamsBuilder) {
			l := kstream.Table(b, "ver-tt-chain-left", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedSupplier("ver-tt-chain-l")))
			r := kstream.Table(b, "ver-tt-chain-right", kstream.ConsumedWith(S, S), kstream.MaterializedAsVersioned[string, string](versionedSupplier("ver-tt-chain-r")))
			plain := kstream.Table(b, "ver-tt-chain-plain", kstream.ConsumedWith(S, S))
			lm := kstream.KTable[string, string].MapValues(l, strings.ToLower)
			rf := r.Filter(func(_ string, v string) bool { return !strings.HasPrefix(v, "x") })
			lm.Join(rf, joinVals).ToStream().To("ver-tt-chain-output", kstream.ProducedWith(S, S))
			rf.Join(lm, joinVals).ToStream().To("ver-tt-chain-reverse", kstream.ProducedWith(S, S))
			plain.LeftJoin(rf, joinVals).ToStream().To("ver-tt-chain-left-output", kstream.ProducedWith(S, S))
			rf.OuterJoin(plain, joinVals).ToStream().To("ver-tt-chain-outer", kstream.ProducedWith(S, S))
			l.Join(r, joinVals, kstream.MaterializedAsVersioned[string, string](versionedSupplier("ver-tt-chain-j")).WithKeySerde(S).WithValueSerde(S)).
				Join(plain, joinVals).ToStream().To("ver-tt-chain-chain", kstream.ProducedWith(S, S))
		}},
	// A session aggregation emitting on window close never caches its store.
	{name: "win-session-emit-close-late", caching: true, types: kinds{"output": {kB, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBySession(winGrouped(b, "win-session-emit-close-late"), kstream.SessionWindowsOfInactivityGapAndGrace(5*wms, 1*wms)).
			EmitStrategy(kstream.EmitOnWindowClose()).Count().ToStream().To("win-session-emit-close-late-output")
	}},
	// Self-joins (KIP-862): rewritten to one store and one processor when optimized.
	{name: "join-self", caching: true, types: kinds{"output": {kS, kS}, "left": {kS, kS}, "mapped": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		s := kstream.Stream(b, "join-self-input", kstream.ConsumedWith(S, S))
		w := kstream.OfTimeDifferenceWithNoGrace(10 * jms)
		s.JoinStream(s, joinVals, w).To("join-self-output", kstream.ProducedWith(S, S))
		s.LeftJoinStream(s, joinVals, w).To("join-self-left", kstream.ProducedWith(S, S))
		s.JoinStream(s.MapValues(func(v string) string { return v + "'" }), joinVals, w).To("join-self-mapped", kstream.ProducedWith(S, S))
	}},
	// A StreamPartitioner that returns no partitions drops the record and counts it (KIP-837).
	{name: "dsl-partitioner-drop", dropped: true, types: kinds{"output": {kS, kS}, "rp": {kS, kS}, "rp-repartition": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		s := kstream.Stream(b, "dsl-partitioner-drop-input", kstream.ConsumedWith(NS, NS))
		s.To("dsl-partitioner-drop-output", kstream.ProducedWith(NS, NS).WithStreamPartitioner(dropPartitioner))
		kstream.KStream[*string, *string].MapValues(s, func(v *string) *string {
			if v == nil {
				return nil
			}
			return ptr((*v)[strings.IndexByte(*v, ':')+1:])
		}).Repartition(kstream.RepartitionedAs[*string, *string]("rp").WithKeySerde(NS).WithValueSerde(NS).WithStreamPartitioner(dropPartitioner)).
			To("dsl-partitioner-drop-rp", kstream.ProducedWith(NS, NS))
	}},
	// KTable.TransformValues: record metadata, value getters, stores, materialization, old values.
	{name: "dsl-table-transform", caching: true, types: kinds{"output": {kS, kS}, "joined": {kS, kS}, "count": {kS, kL}, "count2": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		for _, n := range []string{"tv-seen", "tv-seen2"} {
			b.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore(n), S, L))
		}
		t := kstream.Table(b, "dsl-table-transform-input", kstream.ConsumedWith(S, NS))
		meta := t.TransformValues(func() kstream.ValueTransformerWithKey[string, *string, *string] { return &metaTransformer{} }, nil)
		meta.ToStream().To("dsl-table-transform-output", kstream.ProducedWith(S, NS))
		kstream.Stream(b, "dsl-table-transform-lookup", kstream.ConsumedWith(S, S)).
			Join(meta, func(a string, m *string) string { return a + "|" + str(m) }).To("dsl-table-transform-joined", kstream.ProducedWith(S, S))
		counted := t.TransformValues(func() kstream.ValueTransformerWithKey[string, *string, *string] {
			return &countingTransformer{store: "tv-seen"}
		},
			[]string{"tv-seen"}, kstream.MaterializedAs[string, *string]("tv-store").WithValueSerde(NS), kstream.TableNamedAs[string, *string]("tv-count"))
		counted.GroupBy(func(k string, v *string) (string, string) { return (*v)[:1], k }, kstream.GroupedWith(S, S)).
			Count().ToStream().To("dsl-table-transform-count", kstream.ProducedWith(S, L))
		t.TransformValues(func() kstream.ValueTransformerWithKey[string, *string, *string] {
			return &countingTransformer{store: "tv-seen2"}
		}, []string{"tv-seen2"}).
			GroupBy(func(k string, v *string) (string, string) { return (*v)[strings.IndexByte(*v, '#'):], k }, kstream.GroupedWith(S, S)).
			Count().ToStream().To("dsl-table-transform-count2", kstream.ProducedWith(S, L))
	}},
}

// dropPartitioner drops values starting with "drop", sends those starting with "zero" to
// partition 0 and leaves the rest to the default partitioner (Java: DropPartitioner).
var dropPartitioner = processor.StreamPartitionerFunc[*string, *string](func(_ string, _ *string, v *string, _ int32) ([]int32, bool, error) {
	switch {
	case v != nil && strings.HasPrefix(*v, "drop"):
		return nil, true, nil
	case v != nil && strings.HasPrefix(*v, "zero"):
		return []int32{0}, true, nil
	}
	return nil, false, nil
})

// metaTransformer writes "value@timestamp/topic:partition:offset" (Java: MetaTransformer; no
// record metadata prints as Java's null topic and -1 partition and offset).
type metaTransformer struct{ ctx processor.ProcessingContext }

func (m *metaTransformer) Init(ctx processor.ProcessingContext) error { m.ctx = ctx; return nil }
func (m *metaTransformer) Close() error                               { return nil }
func (m *metaTransformer) Transform(r processor.FixedKeyRecord[string, *string]) (*string, error) {
	if r.Value() == nil {
		return nil, nil
	}
	md, ok := m.ctx.RecordMetadata()
	if !ok {
		md = processor.RecordMetadata{Topic: "null", Partition: -1, Offset: -1}
	}
	return ptr(fmt.Sprintf("%s@%d/%s:%d:%d", *r.Value(), r.Timestamp(), md.Topic, md.Partition, md.Offset)), nil
}

// countingTransformer writes "value#n", n counting its calls per key in its store (Java:
// CountingTransformer).
type countingTransformer struct {
	store string
	seen  store.KeyValueStore[string, int64]
}

func (c *countingTransformer) Init(ctx processor.ProcessingContext) error {
	var err error
	c.seen, err = processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, c.store)
	return err
}

func (c *countingTransformer) Close() error { return nil }

func (c *countingTransformer) Transform(r processor.FixedKeyRecord[string, *string]) (*string, error) {
	n, _, err := c.seen.Get(r.Key())
	if err != nil {
		return nil, err
	}
	n++
	if err := c.seen.Put(r.Key(), n); err != nil {
		return nil, err
	}
	if r.Value() == nil {
		return nil, nil
	}
	return ptr(fmt.Sprintf("%s#%d", *r.Value(), n)), nil
}

func TestConformanceEdges(t *testing.T) {
	for _, d := range edgeTopologies {
		t.Run(d.name, func(t *testing.T) { runDSLConformance(t, d.testCase()) })
		for _, cfg := range []struct{ name, config string }{
			{"caching", cachingOnConfig},
			{"optimized", optimizeAllConfig},
			{"self-join-only", "topology.optimization=" + kstream.SingleStoreSelfJoin},
		} {
			if cfg.name == "caching" && !d.caching || cfg.name == "self-join-only" && d.name != "join-self" {
				continue
			}
			t.Run(d.name+"/"+cfg.name, func(t *testing.T) {
				if !javaAvailable() {
					t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the " + cfg.config + " expectation")
				}
				runDSLConformance(t, d.testCase(cfg.config))
			})
		}
	}
}
