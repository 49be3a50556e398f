package kstream

import (
	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// tableImpl is the untyped state of a KTable (Java: KTableImpl's fields).
type tableImpl struct {
	b          *StreamsBuilder
	name       string
	node       *graphNode
	keySerde   serde.Serde[any]
	valueSerde serde.Serde[any]
	// supplier is the operator producing the table: it gives value getters and old values.
	supplier ktable.Supplier
	// queryableName is the store name when the table is materialized under a user name.
	queryableName string
	// sourceNodes: see streamImpl.sourceNodes.
	sourceNodes []string
	// versioned: the table is versioned (KIP-914): materialized with a versioned store, or an
	// unmaterialized filter/mapValues/transformValues of a versioned table. Java:
	// InternalStreamsBuilder.isVersionedOrVersionedUpstream.
	versioned bool
}

// versionedOutput reports whether an operator on t with the materialization mi (nil: none)
// produces a versioned table: a materialized result is versioned when its store is, an
// unmaterialized one when t is (Java: KTableImpl.maybeSetOutputVersioned).
func (t *tableImpl) versionedOutput(mi *materializedInternal, storeName string) bool {
	if storeName != "" && mi != nil {
		return mi.versioned != nil
	}
	return t.versioned
}

// KTable is a changelog stream seen as a table: the latest value per key, updated by upserts
// and deleted by tombstones. Operators forward Changes (new and, when a downstream operator
// asks for them, old values) between table processors. The zero value is not usable. Java
// counterpart: org.apache.kafka.streams.kstream.KTable.
type KTable[K, V any] struct{ t *tableImpl }

// Name returns the name of the processor node that produces this table.
func (t KTable[K, V]) Name() string { return t.t.name }

// QueryableStoreName returns the store name if the table is materialized under a user-given
// name, else "". Java: queryableStoreName().
func (t KTable[K, V]) QueryableStoreName() string { return t.t.queryableName }

// Table returns a table reading topic as a changelog (null keys are dropped, null values delete
// rows). consumed gives serdes, extractor, reset and name (the source becomes "<name>-source"
// and the table processor "<name>"); its zero value means the defaults. The optional
// Materialized describes the store; without a name the store "<topic>-STATE-STORE-<n>" exists
// only if a later operator needs it. The Consumed's serdes, when set, override the
// Materialized's (else the Materialized's are used to read the topic too). The store's changelog is
// "<application.id>-<store>-changelog" (reusing the source topic is an optimization not
// implemented yet). Java: StreamsBuilder.table.
func Table[K, V any](b *StreamsBuilder, topic string, consumed Consumed[K, V], materialized ...Materialized[K, V]) KTable[K, V] {
	c, mat := tableSourceOptions(consumed, materialized)
	mi := materialize(b, mat, topic+"-")
	srcName := b.suffixOrElseGenerate(c.name, "-source", sourceName)
	tblName := b.orElseGenerate(c.name, tableSourceName)
	src := ktable.NewSource(mi.storeName, mi.queryable)
	opt := c.sourceOptions()
	n := b.addNode(&graphNode{name: tblName, write: func(t *processor.Topology, _ []string) error {
		if err := t.AddSource(srcName, []string{topic}, opt...); err != nil {
			return err
		}
		if err := t.AddProcessor(tblName, processor.ProcessorSupplier[any, any, any, any](src), srcName); err != nil {
			return err
		}
		if !src.Materialized() {
			return nil
		}
		if b.reuseSources {
			// reuse.ktable.source.topics: the topic is the store's changelog (Java:
			// TableSourceNode with shouldReuseSourceTopicForChangelog).
			mi.logging, mi.logConfig = false, nil
			if sb, ok := mi.storeBuilder().(*store.Builder[store.TimestampedKeyValueStore[any, any]]); ok && sb.LoggingEnabled() {
				sb.WithLoggingDisabled()
			}
		}
		if err := t.AddStateStore(mi.storeBuilder(), tblName); err != nil {
			return err
		}
		if b.reuseSources {
			return topology.Of(t).ConnectSourceStoreAndTopic(mi.storeName, topic)
		}
		return nil
	}})
	if topic == "" {
		b.fail(dslErr(tblName, nil, "table %s: a topic is needed", tblName))
	}
	return KTable[K, V]{t: &tableImpl{b: b, name: tblName, node: n, keySerde: untyped(c.keySerde), valueSerde: untyped(c.valueSerde),
		supplier: src, queryableName: mi.queryableName(), sourceNodes: []string{srcName}, versioned: mi.versioned != nil}}
}

// GlobalKTable is a table fully replicated to every instance, read by stream-globalTable
// joins. Its store is always materialized (named "<topic>-STATE-STORE-<n>" unless a
// Materialized names it) and has no changelog: the topic is restored directly. Java
// counterpart: org.apache.kafka.streams.kstream.GlobalKTable.
type GlobalKTable[K, V any] struct {
	getter        ktable.ValueGetterSupplier
	queryableName string
}

// QueryableStoreName returns the store name if the user named it, else "". Java: queryableStoreName().
func (g GlobalKTable[K, V]) QueryableStoreName() string { return g.queryableName }

// GlobalTable returns a global table reading topic, with consumed and materialized as for
// [Table] (source name "<name>-source", processor "<name>"). Java: StreamsBuilder.globalTable.
func GlobalTable[K, V any](b *StreamsBuilder, topic string, consumed Consumed[K, V], materialized ...Materialized[K, V]) GlobalKTable[K, V] {
	c, mat := tableSourceOptions(consumed, materialized)
	mi := materialize(b, mat, topic+"-")
	mi.logging, mi.logConfig = false, nil
	srcName := b.suffixOrElseGenerate(c.name, "-source", sourceName)
	procName := b.orElseGenerate(c.name, tableSourceName)
	src := ktable.NewSource(mi.storeName, true)
	keyDeser, valueDeser := untyped(c.keySerde), untyped(c.valueSerde)
	b.addNode(&graphNode{name: procName, write: func(t *processor.Topology, _ []string) error {
		var kd, vd, ex any
		if keyDeser != nil {
			kd = keyDeser
		}
		if valueDeser != nil {
			vd = valueDeser
		}
		if c.extractor != nil {
			ex = c.extractor
		}
		return topology.Of(t).AddGlobalStore(mi.storeBuilder(), srcName, ex, kd, vd, topic, procName,
			processor.ProcessorSupplier[any, any, any, any](src), false)
	}})
	return GlobalKTable[K, V]{getter: ktable.StoreValueGetterSupplier(mi.storeName), queryableName: mi.queryableName()}
}

// tableSourceOptions combines the Consumed and the (last) Materialized of a table source: the
// Consumed's serdes win when it has any (Java: table(topic, consumed, materialized) overrides
// the Materialized's serdes), else the Materialized's are used for reading too.
func tableSourceOptions[K, V any](c Consumed[K, V], materialized []Materialized[K, V]) (*Consumed[K, V], *Materialized[K, V]) {
	var mat Materialized[K, V]
	if len(materialized) > 0 {
		mat = materialized[len(materialized)-1]
		if c.keySerde == nil && c.valueSerde == nil {
			c.keySerde, c.valueSerde = mat.keySerde, mat.valueSerde
		}
	}
	mat.keySerde, mat.valueSerde = c.keySerde, c.valueSerde
	return &c, &mat
}

// Filter keeps the rows whose value passes pred; other rows become deletes (tombstones
// downstream). pred only sees non-null values. Options: TableNamed, Materialized[K, V] (a named
// store materializes the result). Java: KTable.filter.
func (t KTable[K, V]) Filter(pred func(K, V) bool, opts ...TableOption[K, V]) KTable[K, V] {
	return t.filter(pred, false, opts)
}

// FilterNot keeps the rows whose value fails pred. Java: KTable.filterNot.
func (t KTable[K, V]) FilterNot(pred func(K, V) bool, opts ...TableOption[K, V]) KTable[K, V] {
	return t.filter(pred, true, opts)
}

func predicateOf[K, V any](f func(K, V) bool) ktable.Predicate {
	return func(key, value any) (bool, error) {
		k, v, err := cast2[K, V](key, value)
		if err != nil {
			return false, err
		}
		return f(k, v), nil
	}
}

func (t KTable[K, V]) filter(pred func(K, V) bool, not bool, opts []TableOption[K, V]) KTable[K, V] {
	b := t.t.b
	named, mat := splitTableOptions(opts)
	keySerde, valueSerde := t.t.keySerde, t.t.valueSerde
	var storeName string
	var mi *materializedInternal
	if mat != nil {
		mi = materializeNoGen(b, mat, tableFilterName)
		if mi.keySerde != nil {
			keySerde = mi.keySerde
		}
		if mi.valueSerde != nil {
			valueSerde = mi.valueSerde
		}
		storeName = mi.queryableName()
	}
	name := b.orElseGenerate(named, tableFilterName)
	if pred == nil {
		b.fail(dslErr(name, nil, "%s: predicate must not be nil", name))
	}
	sup := ktable.NewFilter(t.t.supplier, predicateOf(pred), not, storeName)
	if t.t.versioned {
		sup.UseVersionedSemantics()
	}
	n := b.addNode(processorNode(name, sup, nil, storeBuilderIf(storeName, mi)), t.t.node)
	return KTable[K, V]{t: &tableImpl{b: b, name: name, node: n, keySerde: keySerde, valueSerde: valueSerde, supplier: sup, queryableName: storeName,
		sourceNodes: t.t.sourceNodes, versioned: t.t.versionedOutput(mi, storeName)}}
}

// materializeNoGen resolves a Materialized given to a table operator: without a store name it
// only uses up a counter value (Java: doFilter/doMapValues call newStoreName and discard it) and
// the result is not materialized.
func materializeNoGen[K, V any](b *StreamsBuilder, m *Materialized[K, V], prefix string) *materializedInternal {
	if m.storeName == "" {
		b.newStoreName(prefix)
		return &materializedInternal{keySerde: untyped(m.keySerde), valueSerde: untyped(m.valueSerde)}
	}
	return materialize(b, m, prefix)
}

func storeBuilderIf(storeName string, mi *materializedInternal) func() processor.StoreBuilder {
	if storeName == "" {
		return nil
	}
	return mi.storeBuilder
}

// MapValues maps every row's value (f sees only non-null values; deletes stay deletes).
// Options: TableNamed, Materialized[K, VR]. Java: KTable.mapValues(ValueMapper).
func (t KTable[K, V]) MapValues[VR any](f func(V) VR, opts ...TableOption[K, VR]) KTable[K, VR] {
	var g func(K, V) VR
	if f != nil {
		g = func(_ K, v V) VR { return f(v) }
	}
	return tableMapValues(t, g, opts)
}

// MapValuesWithKey maps every row's value with a function of key and value. Java:
// KTable.mapValues(ValueMapperWithKey).
func (t KTable[K, V]) MapValuesWithKey[VR any](f func(K, V) VR, opts ...TableOption[K, VR]) KTable[K, VR] {
	return tableMapValues(t, f, opts)
}

func tableMapValues[K, V, VR any](t KTable[K, V], f func(K, V) VR, opts []TableOption[K, VR]) KTable[K, VR] {
	b := t.t.b
	named, mat := splitTableOptions(opts)
	keySerde := t.t.keySerde
	var valueSerde serde.Serde[any]
	var storeName string
	var mi *materializedInternal
	if mat != nil {
		mi = materializeNoGen(b, mat, tableMapValuesName)
		if mi.keySerde != nil {
			keySerde = mi.keySerde
		}
		valueSerde = mi.valueSerde
		storeName = mi.queryableName()
	}
	name := b.orElseGenerate(named, tableMapValuesName)
	if f == nil {
		b.fail(dslErr(name, nil, "%s: mapper must not be nil", name))
	}
	mapper := func(key, value any) (any, error) {
		k, v, err := cast2[K, V](key, value)
		if err != nil {
			return nil, err
		}
		return box(f(k, v)), nil
	}
	sup := ktable.NewMapValues(t.t.supplier, mapper, storeName)
	n := b.addNode(processorNode(name, sup, nil, storeBuilderIf(storeName, mi)), t.t.node)
	return KTable[K, VR]{t: &tableImpl{b: b, name: name, node: n, keySerde: keySerde, valueSerde: valueSerde, supplier: sup, queryableName: storeName,
		sourceNodes: t.t.sourceNodes, versioned: t.t.versionedOutput(mi, storeName)}}
}

// ToStream returns the stream of the table's updates (deletes as null values). Java: toStream.
func (t KTable[K, V]) ToStream(named ...Named) KStream[K, V] {
	b := t.t.b
	name := b.orElseGenerate(lastNamed(named), tableToStreamName)
	n := b.addNode(processorNode(name, funcSupplier{f: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		r.Value = r.Value.(ktable.Change).New
		return ctx.Forward(r)
	}}, nil, nil), t.t.node)
	return KStream[K, V]{s: &streamImpl{b: b, name: name, node: n, keySerde: t.t.keySerde, valueSerde: t.t.valueSerde, sourceNodes: t.t.sourceNodes}}
}

// ToStreamNullable is t.ToStream(named...) with the values seen through pointers
// (NullableValues): a tombstone (a deleted row, a retracted session, a filtered-out update) is
// a nil *V, any other value a pointer to a copy of it. It is the typed way to see deletes
// whatever V is, for instance to re-key them (Map, SelectKey), where a function of a
// non-nillable V is not called for them (see the package doc). It adds only ToStream's node.
// It is a function, not a method, because a method of KTable[K, V] cannot return KTable or
// KStream of *V (Go refuses the instantiation cycle). Java: toStream(), whose functions see null.
func ToStreamNullable[K, V any](t KTable[K, V], named ...Named) KStream[K, *V] {
	return NullableValues(t.ToStream(named...))
}

// NullableTableValues returns t with its values seen through pointers: functions given its
// values (joiners, filters, mappers, selectors) get nil for null and a pointer to a copy of the
// value otherwise; a left or outer join's missing side becomes nil instead of the zero value.
// The table is the same (no node, no store): Materialized and Produced serdes of the view are
// Serde[*V] (serde.Nullable) and serialize the underlying values through it. (No Java
// counterpart: Java's functions see null.)
func NullableTableValues[K, V any](t KTable[K, V]) KTable[K, *V] { return KTable[K, *V](t) }

// ToStreamMapper returns the stream of the table's updates (deletes as null values), each
// re-keyed by mapper from the row's key and new value (a windowed table's Windowed key to its
// plain key, for instance). As in Java it is ToStream(named) followed by SelectKey(mapper):
// named names the to-stream node, the key selector gets a generated name
// (KSTREAM-KEY-SELECT-...), and a grouping or join downstream repartitions. A nil mapper is
// reported by StreamsBuilder.Build (a *processor.TopologyError). Java: KTable.toStream(KeyValueMapper[,
// Named]).
func (t KTable[K, V]) ToStreamMapper[KR any](mapper func(K, V) KR, named ...Named) KStream[KR, V] {
	return t.ToStream(named...).SelectKey(mapper)
}

// GroupBy re-keys the table's rows with f (which returns the new key and value) for an
// aggregation; updates are sent as a subtraction of the old row and an addition of the new one
// through the repartition topic "<store or Grouped name>-repartition". Without a Grouped the
// serdes are the defaults. The table is asked for old values (materializing a source table).
// Java: KTable.groupBy.
func (t KTable[K, V]) GroupBy[KR, VR any](f func(K, V) (KR, VR), grouped ...Grouped[KR, VR]) KGroupedTable[KR, VR] {
	b := t.t.b
	var gr Grouped[KR, VR]
	if len(grouped) > 0 {
		gr = grouped[len(grouped)-1]
	}
	name := b.orElseGenerate(gr.name, tableSelectName)
	if f == nil {
		b.fail(dslErr(name, nil, "%s: selector must not be nil", name))
	}
	mapper := func(key, value any) (any, any, error) {
		k, v, err := cast2[K, V](key, value)
		if err != nil {
			return nil, nil, err
		}
		nk, nv := f(k, v)
		return box(nk), box(nv), nil
	}
	sup := ktable.NewRepartitionMap(t.t.supplier, mapper)
	n := b.addNode(processorNode(name, sup, nil, nil), t.t.node)
	t.t.supplier.EnableSendingOldValues(true)
	return KGroupedTable[KR, VR]{g: &groupedTableImpl{b: b, node: n, keySerde: untyped(gr.keySerde), valueSerde: untyped(gr.valueSerde), userName: gr.name}}
}

// groupedTableImpl is the untyped state of a KGroupedTable (Java: KGroupedTableImpl).
type groupedTableImpl struct {
	b          *StreamsBuilder
	node       *graphNode
	keySerde   serde.Serde[any]
	valueSerde serde.Serde[any]
	userName   string
	repNode    *graphNode
}

// KGroupedTable is a re-keyed table ready for an aggregation with adder and subtractor. Java
// counterpart: KGroupedTable.
type KGroupedTable[K, V any] struct{ g *groupedTableImpl }

// aggregate writes a grouped table's aggregation as Java's KGroupedTableImpl.doAggregate:
// the repartition sink and source, then the aggregating processor (named, else prefix and
// the next index). missing names the user functions that are nil ("" for none), which fails
// the build naming that processor.
func (g *groupedTableImpl) aggregate(named, prefix, missing string, mi *materializedInternal, sup ktable.Supplier) *tableImpl {
	b := g.b
	sink := b.suffixOrElseGenerate(named, "-sink", sinkName)
	source := b.suffixOrElseGenerate(named, "-source", sourceName)
	funcName := b.orElseGenerate(named, prefix)
	if missing != "" {
		b.fail(dslErr(funcName, nil, "%s: %s must not be nil", funcName, missing))
	}
	topicPrefix := g.userName
	if topicPrefix == "" {
		topicPrefix = mi.storeName
	}
	if g.repNode == nil || g.userName == "" {
		g.repNode = b.addNode(tableRepartitionNode(topicPrefix+repartitionSuffix, sink, source, g.keySerde, g.valueSerde), g.node)
	} else {
		b.addNode(g.repNode, g.node)
	}
	n := b.addNode(processorNode(funcName, sup, nil, mi.storeBuilder), g.repNode)
	return &tableImpl{b: b, name: funcName, node: n, keySerde: mi.keySerde, valueSerde: mi.valueSerde, supplier: sup, queryableName: mi.queryableName(),
		sourceNodes: []string{source}}
}

// Count counts the rows per key (adder +1, subtractor -1); store serdes default to the
// grouping's key serde and serde.Long(). Options: TableNamed, Materialized[K, int64]. Java:
// KGroupedTable.count.
func (g KGroupedTable[K, V]) Count(opts ...TableOption[K, int64]) KTable[K, int64] {
	b := g.g.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, tableAggName)
	if mi.keySerde == nil {
		mi.keySerde = g.g.keySerde
	}
	if mi.valueSerde == nil {
		mi.valueSerde = untyped(serde.Long())
	}
	sup := ktable.NewTableAggregate(mi.storeName, func() (any, error) { return int64(0), nil },
		func(_, _, agg any) (any, error) { return agg.(int64) + 1, nil },
		func(_, _, agg any) (any, error) { return agg.(int64) - 1, nil })
	return KTable[K, int64]{t: g.g.aggregate(named, tableAggName, "", mi, sup)}
}

// Reduce combines values per key: adder adds a new value, subtractor removes an old one. Store
// serdes default to the grouping's. Options: TableNamed, Materialized[K, V]. Java: KGroupedTable.reduce.
func (g KGroupedTable[K, V]) Reduce(adder, subtractor func(agg, value V) V, opts ...TableOption[K, V]) KTable[K, V] {
	b := g.g.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, tableAggName) // Java names the store KTABLE-AGGREGATE-STATE-STORE-<n> for reduce too
	if mi.keySerde == nil {
		mi.keySerde = g.g.keySerde
	}
	if mi.valueSerde == nil {
		mi.valueSerde = g.g.valueSerde
	}
	sup := ktable.NewTableReduce(mi.storeName, reducerOf(adder), reducerOf(subtractor))
	return KTable[K, V]{t: g.g.aggregate(named, tableReduceName, nilNames(adder == nil, "adder", subtractor == nil, "subtractor"), mi, sup)}
}

// Aggregate folds values per key: initializer gives the first aggregate, adder adds a new
// value, subtractor removes an old one. The store's key serde defaults to the grouping's, its
// value serde to default.value.serde. Options: TableNamed, Materialized[K, VR]. Java:
// KGroupedTable.aggregate.
func (g KGroupedTable[K, V]) Aggregate[VR any](initializer func() VR, adder, subtractor func(key K, value V, agg VR) VR, opts ...TableOption[K, VR]) KTable[K, VR] {
	b := g.g.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, tableAggName)
	if mi.keySerde == nil {
		mi.keySerde = g.g.keySerde
	}
	sup := ktable.NewTableAggregate(mi.storeName, initializerOf(initializer), aggregatorOf(adder), aggregatorOf(subtractor))
	return KTable[K, VR]{t: g.g.aggregate(named, tableAggName, nilNames(initializer == nil, "initializer", adder == nil, "adder", subtractor == nil, "subtractor"), mi, sup)}
}
