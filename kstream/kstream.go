package kstream

import (
	"regexp"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// KeyValue is a key and a value, as returned by FlatMap's function. Java: KeyValue.
type KeyValue[K, V any] = store.KeyValue[K, V]

// Pair returns KeyValue{Key: k, Value: v}. Java: KeyValue.pair.
func Pair[K, V any](k K, v V) KeyValue[K, V] { return store.Pair(k, v) }

// streamImpl is the untyped state of a KStream (Java: KStreamImpl's fields).
type streamImpl struct {
	b                   *StreamsBuilder
	name                string
	node                *graphNode
	keySerde            serde.Serde[any]
	valueSerde          serde.Serde[any]
	repartitionRequired bool
	// sourceNodes are the source nodes of the sub-topology this stream comes from (Java:
	// subTopologySourceNodes); joins co-partition their topics.
	sourceNodes []string
	// repartitionNode is the repartition a join created for this stream (Java:
	// KStreamImpl.repartitionNode), reused when the same stream is joined again.
	repartitionNode *graphNode
}

// KStream is a record stream of keys K and values V. Operators return new streams; the value is
// a small handle and can be copied. The zero value is not usable: streams come from [Stream],
// [StreamTopics], [StreamPattern] and operators. Java counterpart:
// org.apache.kafka.streams.kstream.KStream.
type KStream[K, V any] struct{ s *streamImpl }

// impl is the stream's state; a zero KStream (declared, never made by Stream or an operator)
// panics here with a message that says so, instead of a nil pointer dereference deep inside.
func (s KStream[K, V]) impl() *streamImpl {
	if s.s == nil {
		panic("kstream: zero KStream: make a KStream with kstream.Stream(builder, topic, ...) or from an operator of another KStream or KTable, not with var or KStream{}")
	}
	return s.s
}

func (s KStream[K, V]) derive(name string, node *graphNode, keySerde, valueSerde serde.Serde[any], repartition bool) *streamImpl {
	return &streamImpl{b: s.impl().b, name: name, node: node, keySerde: keySerde, valueSerde: valueSerde, repartitionRequired: repartition,
		sourceNodes: s.impl().sourceNodes}
}

func (s KStream[K, V]) stateless(name string, f procFunc) *graphNode {
	return s.impl().b.addNode(processorNode(name, funcSupplier{f: f}, nil, nil), s.impl().node)
}

// keyChanging adds a key-changing stateless node (Java: keyChangingOperation(true)).
func (s KStream[K, V]) keyChanging(name string, f procFunc) *graphNode {
	n := processorNode(name, funcSupplier{f: f}, nil, nil)
	n.keyChanging = true
	return s.impl().b.addNode(n, s.impl().node)
}

// valueChanging adds a value-changing stateless node (Java: setValueChangingOperation(true)).
func (s KStream[K, V]) valueChanging(name string, f procFunc) *graphNode {
	n := processorNode(name, funcSupplier{f: f}, nil, nil)
	n.valueChanging = true
	return s.impl().b.addNode(n, s.impl().node)
}

// Stream returns a stream reading topic with the optional Consumed (the last one given wins;
// without one, default serdes and extractor). Java: StreamsBuilder.stream(topic[, consumed]).
func Stream[K, V any](b *StreamsBuilder, topic string, consumed ...Consumed[K, V]) KStream[K, V] {
	return StreamTopics(b, []string{topic}, consumed...)
}

// StreamTopics returns a stream reading all of topics (in one source node). Streams of exactly
// the same topics (or the same pattern) share the first one's source node, serdes and name, as
// in Java. Java: StreamsBuilder.stream(Collection<String>[, consumed]).
// Errors (at Build, a *processor.TopologyError): no topics, topics overlapping another stream's
// without being equal, a topic also read by a table.
func StreamTopics[K, V any](b *StreamsBuilder, topics []string, consumed ...Consumed[K, V]) KStream[K, V] {
	c := lastConsumed(consumed)
	name := b.orElseGenerate(c.name, sourceName)
	topics = append([]string(nil), topics...)
	n := b.addNode(&graphNode{name: name, source: true, sourceTopics: topics, write: func(t *processor.Topology, _ []string) error {
		return t.AddSource(name, topics, c.sourceOptions()...)
	}})
	if len(topics) == 0 {
		b.fail(dslErr(name, nil, "stream %s: topics cannot be empty; give at least one topic", name))
	}
	return KStream[K, V]{s: &streamImpl{b: b, name: name, node: n, keySerde: untyped(c.keySerde), valueSerde: untyped(c.valueSerde),
		sourceNodes: []string{name}}}
}

// StreamPattern returns a stream reading every topic whose whole name matches pattern (Go RE2
// syntax). Java: StreamsBuilder.stream(Pattern[, consumed]).
func StreamPattern[K, V any](b *StreamsBuilder, pattern string, consumed ...Consumed[K, V]) KStream[K, V] {
	c := lastConsumed(consumed)
	name := b.orElseGenerate(c.name, sourceName)
	n := b.addNode(&graphNode{name: name, source: true, sourcePattern: pattern, write: func(t *processor.Topology, _ []string) error {
		return t.AddSourcePattern(name, pattern, c.sourceOptions()...)
	}})
	if _, err := regexp.Compile(pattern); err != nil {
		b.fail(dslErr(name, err, "stream %s: invalid topic pattern: %v", name, err))
	}
	return KStream[K, V]{s: &streamImpl{b: b, name: name, node: n, keySerde: untyped(c.keySerde), valueSerde: untyped(c.valueSerde),
		sourceNodes: []string{name}}}
}

// Name returns the name of the processor node that produces this stream.
func (s KStream[K, V]) Name() string { return s.impl().name }

// NullableValues returns s with its values seen through pointers: downstream functions get a
// null value as nil and any other value as a pointer to a copy of it, so that they can see
// tombstones (functions of non-nillable value types are never called for them: see the package
// doc). The stream is the same (no node is added, Describe is unchanged); serdes given
// downstream of the view are Serde[*V] (serde.Nullable) and serialize the underlying values
// through it. It is a function because a method of KStream[K, V] cannot return KStream[K, *V]
// (Go refuses the instantiation cycle). (No Java counterpart: Java's functions see null.)
func NullableValues[K, V any](s KStream[K, V]) KStream[K, *V] { return KStream[K, *V]{s: s.impl()} }

// Filter keeps the records for which pred returns true. Java: filter.
func (s KStream[K, V]) Filter(pred func(K, V) bool, named ...Named) KStream[K, V] {
	return s.filter(pred, false, named)
}

// FilterNot drops the records for which pred returns true. Java: filterNot.
func (s KStream[K, V]) FilterNot(pred func(K, V) bool, named ...Named) KStream[K, V] {
	return s.filter(pred, true, named)
}

func (s KStream[K, V]) filter(pred func(K, V) bool, not bool, named []Named) KStream[K, V] {
	name := s.impl().b.orElseGenerate(lastNamed(named), filterName)
	s.checkFunc(name, pred == nil)
	vNil := nillable[V]()
	n := s.stateless(name, func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		if tombstoneFor(vNil, r.Value) {
			return ctx.Forward(r) // the predicate is not called on a tombstone: it passes
		}
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return err
		}
		if pred(k, v) != not {
			return ctx.Forward(r)
		}
		return nil
	})
	return KStream[K, V]{s: s.derive(name, n, s.impl().keySerde, s.impl().valueSerde, s.impl().repartitionRequired)}
}

func (s KStream[K, V]) checkFunc(name string, isNil bool) {
	if isNil {
		s.impl().b.fail(dslErr(name, nil, "%s: function must not be nil", name))
	}
}

// SelectKey gives every record the key f returns (the value is kept). The stream is marked for
// repartitioning: a later grouping or join reads it through a repartition topic. Java: selectKey.
func (s KStream[K, V]) SelectKey[KR any](f func(K, V) KR, named ...Named) KStream[KR, V] {
	name := s.impl().b.orElseGenerate(lastNamed(named), keySelectName)
	s.checkFunc(name, f == nil)
	n := s.keyChanging(name, selectKeyFunc(f))
	return KStream[KR, V]{s: s.derive(name, n, nil, s.impl().valueSerde, true)}
}

// selectKeyFunc calls f even for a tombstone (with the zero V when V is not nillable): its
// result is only the key, the value stays null (see the package doc).
func selectKeyFunc[K, V, KR any](f func(K, V) KR) procFunc {
	return func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return err
		}
		r.Key = boxLike(f(k, v), r.Value)
		return ctx.Forward(r)
	}
}

// Map replaces every record's key and value with what f returns; the stream is marked for
// repartitioning. Java: map.
func (s KStream[K, V]) Map[KR, VR any](f func(K, V) (KR, VR), named ...Named) KStream[KR, VR] {
	name := s.impl().b.orElseGenerate(lastNamed(named), mapName)
	s.checkFunc(name, f == nil)
	vNil := nillable[V]()
	n := s.keyChanging(name, func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		if tombstoneFor(vNil, r.Value) {
			return dropTombstone(ctx)
		}
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return err
		}
		nk, nv := f(k, v)
		r.Key, r.Value = box(nk), box(nv)
		return ctx.Forward(r)
	})
	return KStream[KR, VR]{s: s.derive(name, n, nil, nil, true)}
}

// MapValues replaces every record's value with f(value). Java: mapValues(ValueMapper).
func (s KStream[K, V]) MapValues[VR any](f func(V) VR, named ...Named) KStream[K, VR] {
	var g func(K, V) VR
	if f != nil {
		g = func(_ K, v V) VR { return f(v) }
	}
	return mapValuesWithKey(s, g, named)
}

// MapValuesWithKey replaces every record's value with f(key, value). Java:
// mapValues(ValueMapperWithKey).
func (s KStream[K, V]) MapValuesWithKey[VR any](f func(K, V) VR, named ...Named) KStream[K, VR] {
	return mapValuesWithKey(s, f, named)
}

func mapValuesWithKey[K, V, VR any](s KStream[K, V], f func(K, V) VR, named []Named) KStream[K, VR] {
	name := s.s.b.orElseGenerate(lastNamed(named), mapValuesName)
	s.checkFunc(name, f == nil)
	vNil := nillable[V]()
	n := s.valueChanging(name, func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		if tombstoneFor(vNil, r.Value) {
			return ctx.Forward(r) // not called on a tombstone: it passes as a tombstone
		}
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return err
		}
		r.Value = box(f(k, v))
		return ctx.Forward(r)
	})
	return KStream[K, VR]{s: s.derive(name, n, s.s.keySerde, nil, s.s.repartitionRequired)}
}

// FlatMap replaces every record with the records f returns (none, one or more, in order); the
// stream is marked for repartitioning. Java: flatMap.
func (s KStream[K, V]) FlatMap[KR, VR any](f func(K, V) []KeyValue[KR, VR], named ...Named) KStream[KR, VR] {
	name := s.impl().b.orElseGenerate(lastNamed(named), flatMapName)
	s.checkFunc(name, f == nil)
	vNil := nillable[V]()
	n := s.keyChanging(name, func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		if tombstoneFor(vNil, r.Value) {
			return dropTombstone(ctx)
		}
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return err
		}
		for _, kv := range f(k, v) {
			out := r
			out.Key, out.Value = box(kv.Key), box(kv.Value)
			if err := ctx.Forward(out); err != nil {
				return err
			}
		}
		return nil
	})
	return KStream[KR, VR]{s: s.derive(name, n, nil, nil, true)}
}

// FlatMapValues replaces every record with one record per value f returns (same key). Java:
// flatMapValues(ValueMapper).
func (s KStream[K, V]) FlatMapValues[VR any](f func(V) []VR, named ...Named) KStream[K, VR] {
	var g func(K, V) []VR
	if f != nil {
		g = func(_ K, v V) []VR { return f(v) }
	}
	return flatMapValuesWithKey(s, g, named)
}

// FlatMapValuesWithKey is FlatMapValues with a function of key and value. Java:
// flatMapValues(ValueMapperWithKey).
func (s KStream[K, V]) FlatMapValuesWithKey[VR any](f func(K, V) []VR, named ...Named) KStream[K, VR] {
	return flatMapValuesWithKey(s, f, named)
}

func flatMapValuesWithKey[K, V, VR any](s KStream[K, V], f func(K, V) []VR, named []Named) KStream[K, VR] {
	name := s.s.b.orElseGenerate(lastNamed(named), flatMapValuesName)
	s.checkFunc(name, f == nil)
	vNil := nillable[V]()
	n := s.valueChanging(name, func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		if tombstoneFor(vNil, r.Value) {
			return ctx.Forward(r) // not called on a tombstone: it passes as one tombstone
		}
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return err
		}
		for _, vr := range f(k, v) {
			out := r
			out.Value = box(vr)
			if err := ctx.Forward(out); err != nil {
				return err
			}
		}
		return nil
	})
	return KStream[K, VR]{s: s.derive(name, n, s.s.keySerde, nil, s.s.repartitionRequired)}
}

// Peek calls f for every record and forwards it unchanged. Java: peek.
func (s KStream[K, V]) Peek(f func(K, V), named ...Named) KStream[K, V] {
	name := s.impl().b.orElseGenerate(lastNamed(named), peekName)
	s.checkFunc(name, f == nil)
	vNil := nillable[V]()
	n := s.stateless(name, func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		if tombstoneFor(vNil, r.Value) {
			return ctx.Forward(r)
		}
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return err
		}
		f(k, v)
		return ctx.Forward(r)
	})
	return KStream[K, V]{s: s.derive(name, n, s.impl().keySerde, s.impl().valueSerde, s.impl().repartitionRequired)}
}

// Foreach calls f for every record (a terminal operation). Java: foreach.
func (s KStream[K, V]) Foreach(f func(K, V), named ...Named) {
	name := s.impl().b.orElseGenerate(lastNamed(named), foreachName)
	s.checkFunc(name, f == nil)
	vNil := nillable[V]()
	s.stateless(name, func(_ processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		if tombstoneFor(vNil, r.Value) {
			return nil
		}
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return err
		}
		f(k, v)
		return nil
	})
}

// Merge returns a stream of the records of both streams (in processing order). Java: merge.
// Errors (at Build, a *processor.TopologyError): other is of another StreamsBuilder.
func (s KStream[K, V]) Merge(other KStream[K, V], named ...Named) KStream[K, V] {
	name := s.impl().b.orElseGenerate(lastNamed(named), mergeName)
	if other.s == nil || other.s.b != s.impl().b {
		s.impl().b.fail(dslErr(name, nil, "merge %s: the other stream belongs to another StreamsBuilder", name))
		return s
	}
	mn := processorNode(name, funcSupplier{f: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		return ctx.Forward(r)
	}}, nil, nil)
	mn.merge = true
	n := s.impl().b.addNode(mn, s.impl().node, other.s.node)
	out := s.derive(name, n, nil, nil, s.impl().repartitionRequired || other.s.repartitionRequired)
	out.sourceNodes = append(append([]string(nil), s.impl().sourceNodes...), other.s.sourceNodes...)
	return KStream[K, V]{s: out}
}

// Repartition writes the stream to a repartition topic ("<name>-repartition", or a generated
// "KSTREAM-REPARTITION-<n>-repartition") and reads it back, always (Java: repartition). Keys
// then go to partitions by the (new) key, or by the Repartitioned partitioner.
func (s KStream[K, V]) Repartition(repartitioned ...Repartitioned[K, V]) KStream[K, V] {
	var r Repartitioned[K, V]
	if len(repartitioned) > 0 {
		r = repartitioned[len(repartitioned)-1]
	}
	name := r.name
	if name == "" {
		name = s.impl().b.newProcessorName(repartitionName)
	} else {
		s.impl().b.checkName(name)
	}
	keySerde, valueSerde := untyped(r.keySerde), untyped(r.valueSerde)
	if valueSerde == nil {
		valueSerde = s.impl().valueSerde
	}
	var part processor.StreamPartitioner[any, any]
	if r.partitioner != nil {
		part = untypedPartitioner(r.partitioner)
	}
	rp := s.impl().b.newRepartition(name, keySerde, valueSerde, part)
	rp.partitions = r.numPartitions
	rn := rp.node()
	rn.optimizable = nil // Java: UnoptimizableRepartitionNode
	n := s.impl().b.addNode(rn, s.impl().node)
	outKey := keySerde
	if outKey == nil {
		outKey = s.impl().keySerde
	}
	out := s.derive(rp.source, n, outKey, valueSerde, false)
	out.sourceNodes = []string{rp.source}
	return KStream[K, V]{s: out}
}

// To writes the stream to topic, with the Produced's serdes (default: the stream's known serdes,
// else the configured defaults) and partitioner. Java: to(topic[, produced]).
func (s KStream[K, V]) To(topic string, produced ...Produced[K, V]) {
	s.to(topic, nil, produced)
}

// ToExtractor writes each record to the topic extractor returns for it. Java:
// to(TopicNameExtractor[, produced]).
func (s KStream[K, V]) ToExtractor(extractor processor.TopicNameExtractor[K, V], produced ...Produced[K, V]) {
	if extractor == nil {
		var p Produced[K, V]
		if len(produced) > 0 {
			p = produced[len(produced)-1]
		}
		b := s.impl().b
		name := b.orElseGenerate(p.name, sinkName)
		b.fail(dslErr(name, nil, "%s: topic name extractor must not be nil", name))
		return
	}
	s.to("", extractor, produced)
}

func (s KStream[K, V]) to(topic string, extractor processor.TopicNameExtractor[K, V], produced []Produced[K, V]) {
	var p Produced[K, V]
	if len(produced) > 0 {
		p = produced[len(produced)-1]
	}
	keySerde, valueSerde := untyped(p.keySerde), untyped(p.valueSerde)
	if keySerde == nil {
		keySerde = s.impl().keySerde
	}
	if valueSerde == nil {
		valueSerde = s.impl().valueSerde
	}
	var part processor.StreamPartitioner[any, any]
	if p.partitioner != nil {
		part = untypedPartitioner(p.partitioner)
	} else {
		part = windowedPartitioner(keySerde) // windowed keys partition by the base key (Java: WindowedStreamPartitioner)
	}
	name := s.impl().b.orElseGenerate(p.name, sinkName)
	s.impl().b.addNode(&graphNode{name: name, write: func(t *processor.Topology, parents []string) error {
		opts := sinkOpts(keySerde, valueSerde, part)
		if extractor != nil {
			return t.AddDynamicSink(name, extractor, parents, opts...)
		}
		return t.AddSink(name, topic, parents, opts...)
	}}, s.impl().node)
}

// Process runs a Processor API processor on the stream, named "KSTREAM-PROCESSOR-<n>" and
// connected to the named stores (added with StreamsBuilder.AddStateStore, or provided by the
// supplier through processor.ConnectedStoreProvider). The result may have any keys, so it is
// marked for repartitioning. Use ProcessNamed to name the processor. Java:
// process(supplier, stateStoreNames...).
func (s KStream[K, V]) Process[KR, VR any](supplier processor.ProcessorSupplier[K, V, KR, VR], stateStoreNames ...string) KStream[KR, VR] {
	return processStream(s, supplier, "", stateStoreNames)
}

// ProcessNamed is Process with the processor named by named (the zero Named generates the
// name). Java: process(supplier, named, stateStoreNames...).
func (s KStream[K, V]) ProcessNamed[KR, VR any](supplier processor.ProcessorSupplier[K, V, KR, VR], named Named, stateStoreNames ...string) KStream[KR, VR] {
	return processStream(s, supplier, named.name, stateStoreNames)
}

func processStream[K, V, KR, VR any](s KStream[K, V], supplier processor.ProcessorSupplier[K, V, KR, VR], name string, stateStoreNames []string) KStream[KR, VR] {
	if name == "" {
		name = s.s.b.newProcessorName(processorName)
	} else {
		s.s.b.checkName(name)
	}
	s.checkFunc(name, supplier == nil)
	stores := append([]string(nil), stateStoreNames...)
	n := s.s.b.addNode(&graphNode{name: name, write: func(t *processor.Topology, parents []string) error {
		if err := t.AddProcessor(name, supplier, parents...); err != nil {
			return err
		}
		if len(stores) > 0 {
			return t.ConnectProcessorAndStateStores(name, stores...)
		}
		return nil
	}}, s.s.node)
	return KStream[KR, VR]{s: s.derive(name, n, nil, nil, true)}
}

// ProcessValues runs a fixed-key processor (it cannot change keys) on the stream, named
// "KSTREAM-PROCESSVALUES-<n>"; otherwise as Process. Java: processValues(supplier,
// stateStoreNames...).
func (s KStream[K, V]) ProcessValues[VR any](supplier processor.FixedKeyProcessorSupplier[K, V, VR], stateStoreNames ...string) KStream[K, VR] {
	return processValues(s, supplier, "", stateStoreNames)
}

// ProcessValuesNamed is ProcessValues with the processor named by named (the zero Named
// generates the name). Java: processValues(supplier, named, stateStoreNames...).
func (s KStream[K, V]) ProcessValuesNamed[VR any](supplier processor.FixedKeyProcessorSupplier[K, V, VR], named Named, stateStoreNames ...string) KStream[K, VR] {
	return processValues(s, supplier, named.name, stateStoreNames)
}

func processValues[K, V, VR any](s KStream[K, V], supplier processor.FixedKeyProcessorSupplier[K, V, VR], name string, stateStoreNames []string) KStream[K, VR] {
	if name == "" {
		name = s.s.b.newProcessorName(processValuesName)
	} else {
		s.s.b.checkName(name)
	}
	s.checkFunc(name, supplier == nil)
	stores := append([]string(nil), stateStoreNames...)
	n := s.s.b.addNode(&graphNode{name: name, write: func(t *processor.Topology, parents []string) error {
		if err := t.AddFixedKeyProcessor(name, supplier, parents...); err != nil {
			return err
		}
		if len(stores) > 0 {
			return t.ConnectProcessorAndStateStores(name, stores...)
		}
		return nil
	}}, s.s.node)
	return KStream[K, VR]{s: s.derive(name, n, s.s.keySerde, nil, s.s.repartitionRequired)}
}

// ToTable turns the stream into a table (each record an upsert, a null value a delete),
// repartitioning first if the stream was re-keyed. Options: TableNamed, Materialized[K, V]. Java:
// toTable.
func (s KStream[K, V]) ToTable(opts ...TableOption[K, V]) KTable[K, V] {
	b := s.impl().b
	named, mat := splitTableOptions(opts)
	name := b.orElseGenerate(named, toTableName)
	mi := materialize(b, mat, toTableName)
	keySerde, valueSerde := mi.keySerde, mi.valueSerde
	if keySerde == nil {
		keySerde = s.impl().keySerde
	}
	if valueSerde == nil {
		valueSerde = s.impl().valueSerde
	}
	parent, sources := s.impl().node, s.impl().sourceNodes
	if s.impl().repartitionRequired {
		rp := b.newRepartition(name, keySerde, valueSerde, nil)
		parent, sources = b.addNode(rp.node(), parent), []string{rp.source}
	}
	src := ktable.NewSource(mi.storeName, mi.queryable)
	n := b.addNode(processorNode(name, src, nil, func() processor.StoreBuilder {
		if src.Materialized() {
			return mi.storeBuilder()
		}
		return nil
	}), parent)
	return KTable[K, V]{t: &tableImpl{b: b, name: name, node: n, keySerde: keySerde, valueSerde: valueSerde, supplier: src, queryableName: mi.queryableName(), versioned: mi.versioned != nil,
		sourceNodes: sources}}
}

// GroupByKey groups the records by their key for an aggregation. Without a Grouped the stream's
// serdes are used for a repartition topic (needed when the stream was re-keyed); a Grouped gives
// them (nil: defaults) and the repartition topic name. Java: groupByKey([grouped]).
func (s KStream[K, V]) GroupByKey(grouped ...Grouped[K, V]) KGroupedStream[K, V] {
	g := groupedStreamImpl{b: s.impl().b, name: s.impl().name, node: s.impl().node, repartitionRequired: s.impl().repartitionRequired, sourceNodes: s.impl().sourceNodes,
		keySerde: s.impl().keySerde, valueSerde: s.impl().valueSerde}
	if len(grouped) > 0 {
		gr := grouped[len(grouped)-1]
		g.keySerde, g.valueSerde, g.userName = untyped(gr.keySerde), untyped(gr.valueSerde), gr.name
		if gr.name != "" {
			s.impl().b.checkName(gr.name)
		}
	}
	return KGroupedStream[K, V]{g: &g}
}

// GroupBy groups the records by the key f selects (a "KSTREAM-KEY-SELECT-<n>" processor, or the
// Grouped name); the aggregation reads them through a repartition topic. Without a Grouped the
// key serde is the default and the value serde the stream's. Java: groupBy(selector[, grouped]).
func (s KStream[K, V]) GroupBy[KR any](f func(K, V) KR, grouped ...Grouped[KR, V]) KGroupedStream[KR, V] {
	var gr Grouped[KR, V]
	if len(grouped) > 0 {
		gr = grouped[len(grouped)-1]
	} else {
		gr.valueSerde = nil
	}
	name := s.impl().b.orElseGenerate(gr.name, keySelectName)
	s.checkFunc(name, f == nil)
	n := s.keyChanging(name, selectKeyFunc(f))
	g := groupedStreamImpl{b: s.impl().b, name: name, node: n, repartitionRequired: true, sourceNodes: s.impl().sourceNodes,
		keySerde: untyped(gr.keySerde), valueSerde: untyped(gr.valueSerde), userName: gr.name}
	if len(grouped) == 0 {
		g.valueSerde = s.impl().valueSerde
	}
	return KGroupedStream[KR, V]{g: &g}
}
