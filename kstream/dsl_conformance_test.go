package kstream_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// The DSL reference topologies of conformance/java/.../DslTopologies.java, rebuilt with the Go
// DSL. Expected outputs and Describe text always come from Java.

type kinds = map[string][2]conformance.Kind

func dslProps(name string) map[string]string {
	p := stringDefaults(name)
	p[cacheMaxBytes] = "0"
	return p
}

func prefixed(name string, m kinds) kinds {
	out := kinds{}
	for k, v := range m {
		out[name+"-"+k] = v
	}
	return out
}

// dslTopology registers one DSL reference topology; build gets a fresh builder.
type dslTopology struct {
	name    string
	types   kinds
	build   func(b *kstream.StreamsBuilder)
	caching bool // also run with caching on
	dropped bool // the Java topology reports dropped records (RefTopology.reportsDroppedRecords)
}

var (
	S  = serde.String()
	L  = serde.Long()
	NS = serde.Nullable(serde.String())
)

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func ptr(s string) *string { return &s }

var dslTopologies = []dslTopology{
	{name: "dsl-stateless", types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		s := kstream.Stream(b, "dsl-stateless-input", kstream.ConsumedWith(NS, NS))
		notNull := s.Filter(func(_ *string, v *string) bool { return v != nil })
		up := kstream.KStream[*string, *string].MapValues(notNull.FilterNot(func(_ *string, v *string) bool { return strings.HasPrefix(*v, "#") }),
			func(v *string) string { return strings.ToUpper(*v) })
		withKey := up.MapValuesWithKey(func(k *string, v string) string {
			if k == nil {
				return "null:" + v
			}
			return *k + ":" + v
		})
		withKey.FlatMapValues(func(v string) []string { return []string{v, strconv.Itoa(len(v))} }).
			Peek(func(*string, string) {}).
			To("dsl-stateless-output", kstream.ProducedWith(NS, S))
		s.Foreach(func(*string, *string) {})
		kstream.GlobalTable(b, "dsl-stateless-global", kstream.ConsumedWith(S, S))
	}},
	{name: "dsl-map", types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dsl-map-input", kstream.ConsumedWith(NS, NS)).
			Map(func(k, v *string) (*string, *string) { return v, k }).
			FlatMap(func(k, v *string) []kstream.KeyValue[*string, *string] {
				if k == nil {
					return nil
				}
				return []kstream.KeyValue[*string, *string]{kstream.Pair(k, v), kstream.Pair(ptr(*k+"!"), v)}
			}).
			SelectKey(func(k, _ *string) string { return strings.ToLower(*k) }).
			To("dsl-map-output", kstream.ProducedWith(S, NS))
	}},
	{name: "dsl-branch", types: kinds{"a": {kS, kS}, "b": {kS, kS}, "c": {kS, kS}, "other": {kS, kS}, "long": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		s := kstream.Stream(b, "dsl-branch-input", kstream.ConsumedWith(S, S))
		m := s.Split(kstream.NamedAs("split-")).
			Branch(func(_, v string) bool { return strings.HasPrefix(v, "a") }, kstream.BranchedAs[string, string]("a")).
			Branch(func(_, v string) bool { return strings.HasPrefix(v, "b") }, kstream.BranchedWithFunction(func(ks kstream.KStream[string, string]) kstream.KStream[string, string] {
				return ks.MapValues(func(v string) string { return v + "!" })
			})).
			Branch(func(_, v string) bool { return strings.HasPrefix(v, "c") }, kstream.BranchedWithConsumer(func(ks kstream.KStream[string, string]) {
				ks.To("dsl-branch-c")
			})).
			DefaultBranch(kstream.BranchedAs[string, string]("other"))
		m["split-a"].To("dsl-branch-a")
		m["split-2"].To("dsl-branch-b")
		m["split-other"].To("dsl-branch-other")
		for _, ks := range s.Split().Branch(func(_, v string) bool { return len(v) > 3 }).NoDefaultBranch() {
			ks.To("dsl-branch-long")
		}
	}},
	{name: "dsl-merge", types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		a := kstream.Stream(b, "dsl-merge-a", kstream.ConsumedWith(NS, NS))
		c := kstream.Stream(b, "dsl-merge-b", kstream.ConsumedWith(NS, NS))
		a.MapValues(func(v *string) *string {
			if v == nil {
				return ptr("a:null") // Java: "a:" + null
			}
			return ptr("a:" + *v)
		}).
			Merge(c.Filter(func(k *string, _ *string) bool { return k != nil })).
			To("dsl-merge-output", kstream.ProducedWith(NS, NS))
	}},
	{name: "dsl-repartition", types: kinds{"output": {kS, kS}, "rekeyed": {kS, kS}, "KSTREAM-REPARTITION-0000000001-repartition": {kS, kS},
		"rekeyed-repartition": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		s := kstream.Stream(b, "dsl-repartition-input", kstream.ConsumedWith(S, NS))
		s.Repartition().MapValues(func(v *string) *string {
			if v == nil {
				return ptr("null@") // Java: null + "@"
			}
			return ptr(*v + "@")
		}).To("dsl-repartition-output", kstream.ProducedWith(S, NS))
		s.SelectKey(func(_ string, v *string) *string { return v }).
			Repartition(kstream.RepartitionedAs[*string, *string]("rekeyed").WithKeySerde(NS).WithValueSerde(NS)).
			To("dsl-repartition-rekeyed")
	}},
	{name: "dsl-extractor", types: kinds{"a": {kS, kS}, "b": {kS, kS}, "none": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dsl-extractor-input", kstream.ConsumedWith(S, S)).
			ToExtractor(firstCharExtractor{}, kstream.ProducedWith(S, S))
	}},
	{name: "dsl-process", types: kinds{"output": {kS, kS}, "seen-changelog": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		b.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("seen"), S, L))
		kstream.Stream(b, "dsl-process-input", kstream.ConsumedWith(S, S)).
			Process(processor.NewSupplier(func() processor.Processor[string, string, string, string] {
				return &seenProcessor{}
			}), "seen").
			ProcessValuesNamed(processor.NewFixedKeySupplier(func() processor.FixedKeyProcessor[string, string, string] {
				return &upperProcessor{}
			}), kstream.NamedAs("upper")).
			To("dsl-process-output", kstream.ProducedWith(S, S))
	}},
	{name: "dsl-count", caching: true, types: kinds{"output": {kS, kL}, "counts-changelog": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dsl-count-input", kstream.ConsumedWith(S, S)).
			GroupByKey().
			Count(kstream.MaterializedAs[string, int64]("counts")).
			ToStream().To("dsl-count-output", kstream.ProducedWith(S, L))
	}},
	{name: "dsl-reduce", caching: true, types: kinds{"output": {kS, kS}, "KSTREAM-REDUCE-STATE-STORE-0000000002-repartition": {kS, kS},
		"KSTREAM-REDUCE-STATE-STORE-0000000002-changelog": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dsl-reduce-input", kstream.ConsumedWith(S, NS)).
			SelectKey(func(_ string, v *string) *string {
				if v == nil {
					return nil
				}
				return ptr((*v)[:1])
			}).
			GroupByKey(kstream.GroupedWith(NS, NS)).
			Reduce(func(a, v *string) *string { return ptr(*a + "+" + *v) }).
			ToStream().To("dsl-reduce-output")
	}},
	{name: "dsl-aggregate", caching: true, types: kinds{"output": {kS, kL}, "by-parity-repartition": {kS, kS}, "lengths-changelog": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dsl-aggregate-input", kstream.ConsumedWith(S, S)).
			GroupBy(func(_, v string) string {
				if len(v)%2 == 0 { // a null value is "" here, as Java's selector maps null to "even"
					return "even"
				}
				return "odd"
			}, kstream.GroupedAs[string, string]("by-parity").WithKeySerde(S).WithValueSerde(S)).
			Aggregate(func() int64 { return 0 }, func(_ string, v string, agg int64) int64 { return agg + int64(len(v)) },
				kstream.MaterializedAs[string, int64]("lengths").WithValueSerde(L)).
			ToStream().To("dsl-aggregate-output", kstream.ProducedWith(S, L))
	}},
	{name: "dsl-cogroup", caching: true, types: kinds{"output": {kS, kL}, "COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-repartition": {kS, kS},
		"COGROUPKSTREAM-AGGREGATE-STATE-STORE-0000000004-changelog": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		ga := kstream.Stream(b, "dsl-cogroup-a", kstream.ConsumedWith(S, S)).GroupByKey()
		gb := kstream.Stream(b, "dsl-cogroup-b", kstream.ConsumedWith(S, L)).GroupByKey(kstream.GroupedWith(S, L))
		gc := kstream.Stream(b, "dsl-cogroup-c", kstream.ConsumedWith(S, S)).
			SelectKey(func(_, v string) string { return v }).GroupByKey(kstream.GroupedWith(S, S))
		kstream.KGroupedStream[string, string].Cogroup(ga, func(_ string, v string, agg int64) int64 { return agg + int64(len(v)) }).
			Cogroup(gb, func(_ string, v int64, agg int64) int64 { return agg + v }).
			Cogroup(gc, func(_ string, _ string, agg int64) int64 { return agg + 100 }).
			Aggregate(func() int64 { return 0 }, kstream.MaterializedWith(S, L)).
			ToStream().To("dsl-cogroup-output", kstream.ProducedWith(S, L))
	}},
	{name: "dsl-table", caching: true, types: kinds{"output": {kS, kI}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, "dsl-table-input", kstream.ConsumedWith(S, S))
		t.Filter(func(_, v string) bool { return !strings.HasPrefix(v, "x") }).
			MapValues(func(v string) int32 { return int32(len(v)) }).
			ToStream().To("dsl-table-output", kstream.ProducedWith(S, serde.Integer()))
	}},
	{name: "dsl-table-mat", caching: true, types: kinds{"output": {kS, kS}, "source-store-changelog": {kS, kS}, "filtered-store-changelog": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Table(b, "dsl-table-mat-input", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("source-store")).
			Filter(func(_, v string) bool { return !strings.HasPrefix(v, "x") }, kstream.MaterializedAs[string, string]("filtered-store")).
			MapValues(func(v string) string { return v + "!" }, kstream.TableNamedAs[string, string]("bang")).
			ToStream().To("dsl-table-mat-output")
	}},
	{name: "dsl-table-count", caching: true, types: kinds{"output": {kS, kL}, "dsl-table-count-input-STATE-STORE-0000000000-changelog": {kS, kS},
		"KTABLE-AGGREGATE-STATE-STORE-0000000004-changelog": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Table(b, "dsl-table-count-input", kstream.ConsumedWith(S, S)).
			GroupBy(func(k, v string) (string, string) { return v, k }, kstream.GroupedWith(S, S)).
			Count().
			ToStream().To("dsl-table-count-output", kstream.ProducedWith(S, L))
	}},
	{name: "dsl-table-reduce", caching: true, types: kinds{"output": {kS, kL}, "dsl-table-reduce-input-STATE-STORE-0000000000-changelog": {kS, kL},
		"KTABLE-AGGREGATE-STATE-STORE-0000000004-changelog": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Table(b, "dsl-table-reduce-input", kstream.ConsumedWith(S, L)).
			GroupBy(func(k string, v int64) (string, int64) { return k[:1], v }, kstream.GroupedWith(S, L)).
			Reduce(func(a, v int64) int64 { return a + v }, func(a, v int64) int64 { return a - v }).
			ToStream().To("dsl-table-reduce-output", kstream.ProducedWith(S, L))
	}},
	{name: "dsl-table-aggregate", caching: true, types: kinds{"output": {kS, kS}, "agg-store-changelog": {kS, kS},
		"dsl-table-aggregate-input-STATE-STORE-0000000000-changelog": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Table(b, "dsl-table-aggregate-input", kstream.Consumed[string, string]{}).
			GroupBy(func(k, v string) (string, string) { return v, k }).
			Aggregate(func() string { return "" },
				func(_ string, v string, agg string) string { return agg + "+" + v },
				func(_ string, v string, agg string) string { return agg + "-" + v },
				kstream.TableNamedAs[string, string]("agg"), kstream.MaterializedAs[string, string]("agg-store").WithValueSerde(S)).
			ToStream().To("dsl-table-aggregate-output")
	}},
	{name: "dsl-totable", caching: true, types: kinds{"out-a": {kS, kS}, "out-b": {kS, kS}, "tt-store-changelog": {kS, kS},
		"KSTREAM-TOTABLE-0000000006-repartition": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dsl-totable-a", kstream.ConsumedWith(S, S)).
			ToTable(kstream.MaterializedAs[string, string]("tt-store")).
			ToStream().To("dsl-totable-out-a")
		kstream.Stream(b, "dsl-totable-b", kstream.ConsumedWith(S, S)).
			SelectKey(func(_, v string) string { return v }).
			ToTable().
			Filter(func(k, _ string) bool { return len(k) > 1 }).
			ToStream().To("dsl-totable-out-b")
	}},
	{name: "dsl-table-chain", caching: true, types: kinds{"output": {kS, kL}, "chain-store-changelog": {kS, kL},
		"dsl-table-chain-input-STATE-STORE-0000000000-changelog": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Table(b, "dsl-table-chain-input", kstream.ConsumedWith(S, S)).
			Filter(func(_, v string) bool { return !strings.HasPrefix(v, "x") }).
			MapValues(func(v string) int64 { return int64(len(v)) }).
			GroupBy(func(k string, v int64) (string, int64) { return k[:1], v }, kstream.GroupedWith(S, L)).
			Reduce(func(a, v int64) int64 { return a + v }, func(a, v int64) int64 { return a - v },
				kstream.MaterializedAs[string, int64]("chain-store")).
			ToStream().To("dsl-table-chain-output", kstream.ProducedWith(S, L))
	}},
	{name: "dsl-dupsrc", types: kinds{"a": {kS, kS}, "b": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dsl-dupsrc-input", kstream.ConsumedWith(S, S)).
			Filter(func(_, v string) bool { return strings.HasPrefix(v, "a") }).To("dsl-dupsrc-a")
		kstream.Stream(b, "dsl-dupsrc-input", kstream.ConsumedWith(S, S)).
			MapValues(strings.ToUpper).To("dsl-dupsrc-b")
	}},
	{name: "dsl-named", caching: true, types: kinds{"output": {kS, kL}, "regroup-repartition": {kS, kS}, "count-store-changelog": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dsl-named-input", kstream.ConsumedAs[string, *string]("input").WithKeySerde(S).WithValueSerde(NS)).
			Filter(func(_ string, v *string) bool { return v != nil }, kstream.NamedAs("keep")).
			GroupBy(func(_ string, v *string) string { return *v }, kstream.GroupedAs[string, *string]("regroup").WithKeySerde(S).WithValueSerde(NS)).
			Count(kstream.TableNamedAs[string, int64]("counter"), kstream.MaterializedAs[string, int64]("count-store")).
			ToStream(kstream.NamedAs("updates")).
			To("dsl-named-output", kstream.ProducedAs[string, int64]("sink").WithKeySerde(S).WithValueSerde(L))
	}},
	{name: "dsl-tostream-mapper", caching: true, types: kinds{"rekeyed": {kS, kS}, "counts": {kS, kL}, "unwindowed": {kS, kL},
		"first-counts-repartition": {kS, kS}, "first-counts-changelog": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, "dsl-tostream-mapper-input", kstream.ConsumedWith(S, NS))
		t.ToStreamMapper(func(k string, v *string) string {
			if v == nil {
				return k + ":null"
			}
			return k + ":" + *v
		}).To("dsl-tostream-mapper-rekeyed", kstream.ProducedWith(S, NS))
		t.ToStreamMapper(func(_ string, v *string) *string {
			if v == nil {
				return nil
			}
			return ptr((*v)[:1])
		}, kstream.NamedAs("first-char")).
			GroupByKey(kstream.GroupedWith(NS, NS)).
			Count(kstream.MaterializedAs[*string, int64]("first-counts")).
			ToStream().To("dsl-tostream-mapper-counts", kstream.ProducedWith(NS, L))
		kstream.WindowedBy(kstream.Stream(b, "dsl-tostream-mapper-events", kstream.ConsumedWith(S, S)).GroupByKey(),
			kstream.TimeWindowsOfSizeWithNoGrace(100*time.Millisecond)).
			Count().
			ToStreamMapper(func(wk kstream.Windowed[string], _ int64) string {
				return wk.Key + "@" + strconv.FormatInt(wk.Window.Start, 10)
			}).
			To("dsl-tostream-mapper-unwindowed", kstream.ProducedWith(S, L))
	}},
}

type firstCharExtractor struct{}

func (firstCharExtractor) Extract(key, _ string, _ processor.RecordContext) (string, error) {
	if key == "" {
		return "dsl-extractor-none", nil
	}
	return "dsl-extractor-" + key[:1], nil
}

func (firstCharExtractor) String() string { return "FirstCharExtractor" }

// seenProcessor counts records per key in store "seen" and appends the count to the value.
type seenProcessor struct {
	ctx  processor.ProcessorContext[string, string]
	seen store.KeyValueStore[string, int64]
}

func (p *seenProcessor) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	var err error
	p.seen, err = processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "seen")
	return err
}

func (p *seenProcessor) Process(r processor.Record[string, string]) error {
	if r.Key == "" { // a null key (the vector has no empty keys)
		return nil
	}
	old, _, err := p.seen.Get(r.Key)
	if err != nil {
		return err
	}
	if err := p.seen.Put(r.Key, old+1); err != nil {
		return err
	}
	return p.ctx.Forward(r.WithValue(r.Value + "#" + strconv.FormatInt(old+1, 10)))
}

func (p *seenProcessor) Close() error { return nil }

type upperProcessor struct {
	ctx processor.FixedKeyProcessorContext[string, string]
}

func (p *upperProcessor) Init(ctx processor.FixedKeyProcessorContext[string, string]) error {
	p.ctx = ctx
	return nil
}

func (p *upperProcessor) Process(r processor.FixedKeyRecord[string, string]) error {
	return p.ctx.Forward(r.WithValue(strings.ToUpper(r.Value())))
}

func (p *upperProcessor) Close() error { return nil }

func (d dslTopology) testCase(configs ...string) dslCase {
	return dslCase{
		name:  d.name,
		props: dslProps(d.name),
		build: func(t *testing.T) *processor.Topology {
			b := kstream.NewStreamsBuilder()
			d.build(b)
			topo, err := b.BuildWithConfig(configMap(configs))
			return must(t, topo, err)
		},
		types:   prefixed(d.name, d.types),
		configs: configs,
		dropped: d.dropped,
	}
}

func TestConformanceDSL(t *testing.T) {
	for _, d := range dslTopologies {
		t.Run(d.name, func(t *testing.T) { runDSLConformance(t, d.testCase()) })
		if d.caching {
			// topology.optimization=all changes only topologies with repartitions or tables (the
			// stateful ones); the stateless ones were checked once and give identical results.
			t.Run(d.name+"/optimized", func(t *testing.T) {
				if !javaAvailable() {
					t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the topology.optimization=all expectation")
				}
				runDSLConformance(t, d.testCase(optimizeAllConfig))
			})
			t.Run(d.name+"/caching", func(t *testing.T) {
				if !javaAvailable() {
					t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the caching-on expectation")
				}
				runDSLConformance(t, d.testCase(cachingOnConfig))
			})
		}
	}
}

const optimizeAllConfig = "topology.optimization=all"

// configMap turns "key=value" configs into the props BuildWithConfig reads.
func configMap(configs []string) map[string]string {
	m := map[string]string{}
	for _, kv := range configs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
