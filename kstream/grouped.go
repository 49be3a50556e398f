package kstream

import (
	"strings"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// groupedStreamImpl is the untyped state of a KGroupedStream (Java: KGroupedStreamImpl).
type groupedStreamImpl struct {
	b                   *StreamsBuilder
	name                string
	node                *graphNode
	keySerde            serde.Serde[any]
	valueSerde          serde.Serde[any]
	repartitionRequired bool
	userName            string
	repartitionNode     *graphNode
	sourceNodes         []string
}

// KGroupedStream is a stream grouped by key, ready for an aggregation that produces a
// [KTable]. If the stream was re-keyed, the aggregation reads it through a repartition topic
// "<store name or Grouped name>-repartition". Java counterpart: KGroupedStream.
type KGroupedStream[K, V any] struct{ g *groupedStreamImpl }

// aggregate adds the repartition (if needed) and the aggregation node with its store. Java:
// GroupedStreamAggregateBuilder.build.
func (g *groupedStreamImpl) aggregate(name string, mi *materializedInternal, sup ktable.Supplier) *tableImpl {
	b := g.b
	parent, sources := g.node, g.sourceNodes
	if g.repartitionRequired {
		prefix := g.userName
		if prefix == "" {
			prefix = mi.storeName
		}
		rp := b.newRepartition(prefix, g.keySerde, g.valueSerde, nil)
		if g.repartitionNode == nil || g.userName == "" {
			g.repartitionNode = rp.node()
			b.addNode(g.repartitionNode, g.node)
		}
		parent, sources = g.repartitionNode, []string{rp.source}
	}
	n := b.addNode(processorNode(name, sup, nil, mi.storeBuilder), parent)
	return &tableImpl{b: b, name: name, node: n, keySerde: mi.keySerde, valueSerde: mi.valueSerde, supplier: sup,
		queryableName: mi.queryableName(), sourceNodes: sources}
}

// Count counts the records per key (records with a null key or value are dropped). The store
// is "KSTREAM-AGGREGATE-STATE-STORE-<n>" unless a Materialized names it; its serdes default to
// the grouping's key serde and serde.Long(). Options: TableNamed, Materialized[K, int64]. Java: count.
func (g KGroupedStream[K, V]) Count(opts ...TableOption[K, int64]) KTable[K, int64] {
	b := g.g.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, streamAggName)
	if mi.keySerde == nil {
		mi.keySerde = g.g.keySerde
	}
	if mi.valueSerde == nil {
		mi.valueSerde = untyped(serde.Long())
	}
	name := b.orElseGenerate(named, streamAggName)
	return KTable[K, int64]{t: g.g.aggregate(name, mi, ktable.NewStreamCount(mi.storeName))}
}

// Reduce combines the values of each key with reducer (the first value is the initial
// aggregate; null keys and values are dropped). Store serdes default to the grouping's.
// Options: TableNamed, Materialized[K, V]. Java: reduce.
func (g KGroupedStream[K, V]) Reduce(reducer func(agg, value V) V, opts ...TableOption[K, V]) KTable[K, V] {
	b := g.g.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, streamReduceName)
	if mi.keySerde == nil {
		mi.keySerde = g.g.keySerde
	}
	if mi.valueSerde == nil {
		mi.valueSerde = g.g.valueSerde
	}
	name := b.orElseGenerate(named, streamReduceName)
	if reducer == nil {
		b.fail(dslErr(name, nil, "%s: reducer must not be nil", name))
	}
	sup := ktable.NewStreamReduce(mi.storeName, reducerOf(reducer))
	return KTable[K, V]{t: g.g.aggregate(name, mi, sup)}
}

func reducerOf[V any](f func(V, V) V) ktable.Reducer {
	return func(agg, value any) (any, error) {
		a, err := cast[V]("aggregate", agg)
		if err != nil {
			return nil, err
		}
		v, err := cast[V]("value", value)
		if err != nil {
			return nil, err
		}
		return box(f(a, v)), nil
	}
}

func initializerOf[VR any](f func() VR) ktable.Initializer {
	return func() (any, error) { return box(f()), nil }
}

func aggregatorOf[K, V, VR any](f func(K, V, VR) VR) ktable.Aggregator {
	return func(key, value, agg any) (any, error) {
		k, v, err := cast2[K, V](key, value)
		if err != nil {
			return nil, err
		}
		a, err := cast[VR]("aggregate", agg)
		if err != nil {
			return nil, err
		}
		return box(f(k, v, a)), nil
	}
}

// Aggregate folds the values of each key into an aggregate: initializer gives the first
// aggregate, aggregator adds a value (null keys and values are dropped). The store's key serde
// defaults to the grouping's, its value serde to default.value.serde. Options: TableNamed,
// Materialized[K, VR]. Java: aggregate.
func (g KGroupedStream[K, V]) Aggregate[VR any](initializer func() VR, aggregator func(key K, value V, agg VR) VR, opts ...TableOption[K, VR]) KTable[K, VR] {
	b := g.g.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, streamAggName)
	if mi.keySerde == nil {
		mi.keySerde = g.g.keySerde
	}
	name := b.orElseGenerate(named, streamAggName)
	if initializer == nil || aggregator == nil {
		b.fail(dslErr(name, nil, "%s: initializer and aggregator must not be nil", name))
	}
	sup := ktable.NewStreamAggregate(mi.storeName, initializerOf(initializer), aggregatorOf(aggregator))
	return KTable[K, VR]{t: g.g.aggregate(name, mi, sup)}
}

// Cogroup starts a cogrouped aggregation with this stream and its aggregator; add more grouped
// streams (of any value type) with CogroupedKStream.Cogroup, then Aggregate. Java: cogroup.
func (g KGroupedStream[K, V]) Cogroup[VOut any](aggregator func(key K, value V, agg VOut) VOut) CogroupedKStream[K, VOut] {
	c := CogroupedKStream[K, VOut]{c: &cogroupImpl{b: g.g.b}}
	return c.add(g.g, aggregatorOf(aggregator), aggregator == nil)
}

// cogroupImpl is the untyped state of a CogroupedKStream (Java: CogroupedKStreamImpl).
type cogroupImpl struct {
	b      *StreamsBuilder
	groups []*groupedStreamImpl
	aggs   []ktable.Aggregator
}

// CogroupedKStream aggregates several grouped streams (of different value types) into one
// table with one store: each stream has its aggregator, all share the initializer. Java
// counterpart: CogroupedKStream.
type CogroupedKStream[K, VOut any] struct{ c *cogroupImpl }

func (c CogroupedKStream[K, VOut]) add(g *groupedStreamImpl, agg ktable.Aggregator, isNil bool) CogroupedKStream[K, VOut] {
	if isNil {
		c.c.b.fail(dslErr(g.name, nil, "cogroup %s: aggregator must not be nil", g.name))
	}
	if g.b != c.c.b {
		c.c.b.fail(dslErr(g.name, nil, "cogroup %s: the grouped stream belongs to another StreamsBuilder", g.name))
	}
	for i, o := range c.c.groups {
		if o == g {
			c.c.aggs[i] = agg
			return c
		}
	}
	c.c.groups = append(c.c.groups, g)
	c.c.aggs = append(c.c.aggs, agg)
	return c
}

// Cogroup adds another grouped stream with its aggregator (adding the same grouped stream again
// replaces its aggregator, as Java's map). Java: CogroupedKStream.cogroup.
func (c CogroupedKStream[K, VOut]) Cogroup[VIn any](grouped KGroupedStream[K, VIn], aggregator func(key K, value VIn, agg VOut) VOut) CogroupedKStream[K, VOut] {
	return c.add(grouped.g, aggregatorOf(aggregator), aggregator == nil)
}

// Aggregate builds the cogrouped aggregation: one "COGROUPKSTREAM-AGGREGATE-<n>" processor per
// stream (repartitioned first if re-keyed), all writing one store, merged by a
// "COGROUPKSTREAM-MERGE-<n>" processor. Options: TableNamed (the processors become
// "<name>-cogroup-agg-<i>" and "<name>-cogroup-merge"), Materialized[K, VOut]. Java:
// CogroupedKStream.aggregate.
func (c CogroupedKStream[K, VOut]) Aggregate(initializer func() VOut, opts ...TableOption[K, VOut]) KTable[K, VOut] {
	b := c.c.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, cogroupAggName)
	// Repartitions first, in the order the streams were added (Java: processRepartitions).
	parents := make([]*graphNode, len(c.c.groups))
	for i, g := range c.c.groups {
		parents[i] = g.node
		if g.repartitionRequired {
			prefix := g.userName
			if prefix == "" {
				prefix = mi.storeName
			}
			rp := b.newRepartition(prefix, g.keySerde, g.valueSerde, nil)
			parents[i] = b.addNode(rp.node(), g.node)
		}
	}
	var sups []ktable.Supplier
	var aggNodes []*graphNode
	for i := range c.c.groups {
		name := b.suffixOrElseGenerate(named, "-cogroup-agg-"+itoa(i), cogroupAggName)
		sup := ktable.NewStreamAggregate(mi.storeName, initializerOf(initializer), c.c.aggs[i])
		sups = append(sups, sup)
		var n *graphNode
		if i == 0 {
			n = processorNode(name, sup, nil, mi.storeBuilder)
		} else {
			n = processorNode(name, sup, []string{mi.storeName}, nil)
		}
		aggNodes = append(aggNodes, b.addNode(n, parents[i]))
	}
	mergeName := b.suffixOrElseGenerate(named, "-cogroup-merge", cogroupMergeName)
	if initializer == nil {
		b.fail(dslErr(mergeName, nil, "%s: initializer must not be nil", mergeName))
	}
	pass := ktable.NewPassThrough(sups, mi.storeName)
	n := b.addNode(processorNode(mergeName, pass, nil, nil), aggNodes...)
	return KTable[K, VOut]{t: &tableImpl{b: b, name: mergeName, node: n, keySerde: mi.keySerde, valueSerde: mi.valueSerde,
		supplier: pass, queryableName: mi.queryableName(), sourceNodes: []string{mergeName}}}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

var _ processor.ProcessorSupplier[any, any, any, any] = (*ktable.PassThrough)(nil)

// nilNames joins the names of the functions found nil ("initializer and merger"), given as
// pairs of whether it is nil and its name; "" when none is.
func nilNames(pairs ...any) string {
	var names []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i].(bool) {
			names = append(names, pairs[i+1].(string))
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
