package processor

import (
	"reflect"

	"github.com/kstreams-go/kstreams/serde"
)

// This file adapts typed processors, contexts, serdes, extractors and partitioners to the
// untyped (any-keyed, any-valued) forms the topology graph and the engine hold. nil is null:
// a nil key or value reaching a typed node becomes the zero value of its type, and a typed nil
// (a nil pointer, slice or map) leaving a typed node becomes an untyped nil.

// castValue converts an untyped key or value to T; nil gives the zero value.
func castValue[T any](v any) (T, bool) {
	if v == nil {
		var zero T
		return zero, true
	}
	t, ok := v.(T)
	return t, ok
}

// untypedValue converts a typed key or value to any, turning typed nils into nil.
func untypedValue[T any](v T) any {
	a := any(v)
	if a == nil {
		return nil
	}
	switch reflect.TypeOf(a).Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		if reflect.ValueOf(a).IsNil() {
			return nil
		}
	}
	return a
}

func castRecord[K, V any](node string, r Record[any, any]) (Record[K, V], error) {
	k, ok := castValue[K](r.Key)
	if !ok {
		return Record[K, V]{}, &RecordTypeError{Node: node, Field: "key", Want: typeName[K](), Got: typeNameOf(r.Key)}
	}
	v, ok := castValue[V](r.Value)
	if !ok {
		return Record[K, V]{}, &RecordTypeError{Node: node, Field: "value", Want: typeName[V](), Got: typeNameOf(r.Value)}
	}
	return Record[K, V]{Key: k, Value: v, Timestamp: r.Timestamp, Headers: r.Headers}, nil
}

func untypedRecord[K, V any](r Record[K, V]) Record[any, any] {
	return Record[any, any]{Key: untypedValue(r.Key), Value: untypedValue(r.Value), Timestamp: r.Timestamp, Headers: r.Headers}
}

// untypedProcessorSupplier adapts a typed supplier to the untyped form the topology graph
// holds (processor.ProcessorSupplier[any, any, any, any]): each processor it returns converts
// incoming records to Record[KIn, VIn] (an error wrapping [ErrRecordTypeMismatch] when a key
// or value has another type; nil becomes the zero value) and forwarded records back. node names
// the node in those errors. A supplier that is already untyped is returned as is. Topology's Add*
// methods store it in the graph.
func untypedProcessorSupplier[KIn, VIn, KOut, VOut any](node string, s ProcessorSupplier[KIn, VIn, KOut, VOut]) ProcessorSupplier[any, any, any, any] {
	if u, ok := any(s).(ProcessorSupplier[any, any, any, any]); ok {
		return u
	}
	return &untypedSupplier[KIn, VIn, KOut, VOut]{node: node, s: s}
}

type untypedSupplier[KIn, VIn, KOut, VOut any] struct {
	node string
	s    ProcessorSupplier[KIn, VIn, KOut, VOut]
}

// Get returns a new adapted processor (nil if the wrapped supplier returned nil).
func (u *untypedSupplier[KIn, VIn, KOut, VOut]) Get() Processor[any, any, any, any] {
	p := u.s.Get()
	if untypedValue(p) == nil {
		return nil
	}
	return &untypedProcessor[KIn, VIn, KOut, VOut]{node: u.node, p: p}
}

// Stores passes the wrapped supplier's stores through (ConnectedStoreProvider).
func (u *untypedSupplier[KIn, VIn, KOut, VOut]) Stores() []StoreBuilder {
	if c, ok := u.s.(ConnectedStoreProvider); ok {
		return c.Stores()
	}
	return nil
}

type untypedProcessor[KIn, VIn, KOut, VOut any] struct {
	node string
	p    Processor[KIn, VIn, KOut, VOut]
}

// Init initialises the wrapped processor with a typed view of ctx.
func (u *untypedProcessor[KIn, VIn, KOut, VOut]) Init(ctx ProcessorContext[any, any]) error {
	return u.p.Init(&typedContext[KOut, VOut]{ProcessorContext: ctx})
}

// Process converts the record to the wrapped processor\'s types and processes it.
func (u *untypedProcessor[KIn, VIn, KOut, VOut]) Process(r Record[any, any]) error {
	tr, err := castRecord[KIn, VIn](u.node, r)
	if err != nil {
		return err
	}
	return u.p.Process(tr)
}

// Close closes the wrapped processor.
func (u *untypedProcessor[KIn, VIn, KOut, VOut]) Close() error { return u.p.Close() }

// typedContext presents an untyped context as a ProcessorContext[KOut, VOut].
type typedContext[KOut, VOut any] struct {
	ProcessorContext[any, any]
}

// Forward converts the record to the untyped form and forwards it to all children.
func (c *typedContext[KOut, VOut]) Forward(r Record[KOut, VOut]) error {
	return c.ProcessorContext.Forward(untypedRecord(r))
}

// ForwardTo converts the record to the untyped form and forwards it to the named child.
func (c *typedContext[KOut, VOut]) ForwardTo(r Record[KOut, VOut], child string) error {
	return c.ProcessorContext.ForwardTo(untypedRecord(r), child)
}

// untypedFixedKeyProcessorSupplier adapts a fixed-key supplier to the untyped processor
// supplier the topology graph holds; see untypedProcessorSupplier. The adapted processor
// receives FixedKeyRecord[KIn, VIn] and forwards records keeping the input key.
func untypedFixedKeyProcessorSupplier[KIn, VIn, VOut any](node string, s FixedKeyProcessorSupplier[KIn, VIn, VOut]) ProcessorSupplier[any, any, any, any] {
	return &untypedFixedKeySupplier[KIn, VIn, VOut]{node: node, s: s}
}

type untypedFixedKeySupplier[KIn, VIn, VOut any] struct {
	node string
	s    FixedKeyProcessorSupplier[KIn, VIn, VOut]
}

// Get returns a new adapted processor (nil if the wrapped supplier returned nil).
func (u *untypedFixedKeySupplier[KIn, VIn, VOut]) Get() Processor[any, any, any, any] {
	p := u.s.Get()
	if untypedValue(p) == nil {
		return nil
	}
	return &untypedFixedKeyProcessor[KIn, VIn, VOut]{node: u.node, p: p}
}

// Stores passes the wrapped supplier's stores through (ConnectedStoreProvider).
func (u *untypedFixedKeySupplier[KIn, VIn, VOut]) Stores() []StoreBuilder {
	if c, ok := u.s.(ConnectedStoreProvider); ok {
		return c.Stores()
	}
	return nil
}

type untypedFixedKeyProcessor[KIn, VIn, VOut any] struct {
	node string
	p    FixedKeyProcessor[KIn, VIn, VOut]
}

// Init initialises the wrapped processor with a typed view of ctx.
func (u *untypedFixedKeyProcessor[KIn, VIn, VOut]) Init(ctx ProcessorContext[any, any]) error {
	return u.p.Init(&fixedKeyContext[KIn, VOut]{ProcessorContext: ctx})
}

// Process converts the record to the wrapped processor\'s types and processes it.
func (u *untypedFixedKeyProcessor[KIn, VIn, VOut]) Process(r Record[any, any]) error {
	tr, err := castRecord[KIn, VIn](u.node, r)
	if err != nil {
		return err
	}
	return u.p.Process(FixedKeyRecord[KIn, VIn]{key: tr.Key, value: tr.Value, timestamp: tr.Timestamp, headers: tr.Headers})
}

// Close closes the wrapped processor.
func (u *untypedFixedKeyProcessor[KIn, VIn, VOut]) Close() error { return u.p.Close() }

// fixedKeyContext presents an untyped context as a FixedKeyProcessorContext[K, V].
type fixedKeyContext[K, V any] struct {
	ProcessorContext[any, any]
}

// Forward converts the record to the untyped form and forwards it to all children.
func (c *fixedKeyContext[K, V]) Forward(r FixedKeyRecord[K, V]) error {
	return c.ProcessorContext.Forward(Record[any, any]{Key: untypedValue(r.key), Value: untypedValue(r.value), Timestamp: r.timestamp, Headers: r.headers})
}

// ForwardTo converts the record to the untyped form and forwards it to the named child.
func (c *fixedKeyContext[K, V]) ForwardTo(r FixedKeyRecord[K, V], child string) error {
	return c.ProcessorContext.ForwardTo(Record[any, any]{Key: untypedValue(r.key), Value: untypedValue(r.value), Timestamp: r.timestamp, Headers: r.headers}, child)
}

// adaptDeserializer adapts a typed deserializer to serde.Deserializer[any] (typed nils
// become nil). An untyped one is returned as is; nil gives nil.
func adaptDeserializer[T any](d serde.Deserializer[T]) serde.Deserializer[any] {
	if untypedValue(d) == nil {
		return nil
	}
	if u, ok := any(d).(serde.Deserializer[any]); ok {
		return u
	}
	return untypedDeserializer[T]{d}
}

type untypedDeserializer[T any] struct{ d serde.Deserializer[T] }

// Deserialize decodes with the wrapped deserializer; typed nils become nil.
func (u untypedDeserializer[T]) Deserialize(topic string, h *serde.Headers, data []byte) (any, error) {
	v, err := u.d.Deserialize(topic, h, data)
	if err != nil {
		return nil, err
	}
	return untypedValue(v), nil
}

// String names the wrapped deserializer.
func (u untypedDeserializer[T]) String() string { return serde.Name(u.d) }

// adaptSerializer adapts a typed serializer to serde.Serializer[any]; a value of another
// type gives an error wrapping [ErrRecordTypeMismatch], nil is serialized as the zero value
// (the engine never serializes a nil value itself). An untyped one is returned as is; nil
// gives nil.
func adaptSerializer[T any](s serde.Serializer[T]) serde.Serializer[any] {
	if untypedValue(s) == nil {
		return nil
	}
	if u, ok := any(s).(serde.Serializer[any]); ok {
		return u
	}
	return untypedSerializer[T]{s}
}

type untypedSerializer[T any] struct{ s serde.Serializer[T] }

// Serialize encodes data, which must be a T or nil, with the wrapped serializer.
func (u untypedSerializer[T]) Serialize(topic string, h *serde.Headers, data any) ([]byte, error) {
	v, ok := castValue[T](data)
	if !ok {
		return nil, &RecordTypeError{Field: "key or value for topic " + topic, Want: typeName[T](), Got: typeNameOf(data)}
	}
	return u.s.Serialize(topic, h, v)
}

// String names the wrapped serializer.
func (u untypedSerializer[T]) String() string { return serde.Name(u.s) }

// adaptTopicNameExtractor adapts a typed extractor to TopicNameExtractor[any, any].
func adaptTopicNameExtractor[K, V any](e TopicNameExtractor[K, V]) TopicNameExtractor[any, any] {
	if untypedValue(e) == nil {
		return nil
	}
	if u, ok := any(e).(TopicNameExtractor[any, any]); ok {
		return u
	}
	return TopicNameExtractorFunc[any, any](func(key, value any, rc RecordContext) (string, error) {
		k, v, err := castKV[K, V]("topic name extractor", key, value)
		if err != nil {
			return "", err
		}
		return e.Extract(k, v, rc)
	})
}

// adaptStreamPartitioner adapts a typed partitioner to StreamPartitioner[any, any].
func adaptStreamPartitioner[K, V any](p StreamPartitioner[K, V]) StreamPartitioner[any, any] {
	if untypedValue(p) == nil {
		return nil
	}
	if u, ok := any(p).(StreamPartitioner[any, any]); ok {
		return u
	}
	return StreamPartitionerFunc[any, any](func(topic string, key, value any, n int32) ([]int32, bool, error) {
		k, v, err := castKV[K, V]("stream partitioner", key, value)
		if err != nil {
			return nil, false, err
		}
		return p.Partitions(topic, k, v, n)
	})
}

func castKV[K, V any](node string, key, value any) (K, V, error) {
	var zk K
	var zv V
	k, ok := castValue[K](key)
	if !ok {
		return zk, zv, &RecordTypeError{Node: node, Field: "key", Want: typeName[K](), Got: typeNameOf(key)}
	}
	v, ok := castValue[V](value)
	if !ok {
		return zk, zv, &RecordTypeError{Node: node, Field: "value", Want: typeName[V](), Got: typeNameOf(value)}
	}
	return k, v, nil
}
