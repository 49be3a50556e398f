package serde

import (
	"fmt"
	"reflect"

	"github.com/kstreams-go/kstreams/internal/serdeapi"
)

// Serializer turns a value of type T into bytes for the given topic (Java:
// org.apache.kafka.common.serialization.Serializer, method
// serialize(topic, headers, data)). headers may be nil and may be modified
// by the serializer. A nil returned slice means Java null (a tombstone when
// it is a record value).
type Serializer[T any] interface {
	Serialize(topic string, headers *Headers, data T) ([]byte, error)
}

// Deserializer turns bytes read from the given topic into a value of type T
// (Java: org.apache.kafka.common.serialization.Deserializer, method
// deserialize(topic, headers, data)). headers may be nil. data is never
// retained unless the serde documents so (ByteArray and Bytes return it).
type Deserializer[T any] interface {
	Deserialize(topic string, headers *Headers, data []byte) (T, error)
}

// Serde pairs a Serializer and a Deserializer of the same type (Java:
// org.apache.kafka.common.serialization.Serde). The serdes of this package
// also implement fmt.Stringer, returning the name used in errors.
type Serde[T any] interface {
	Serializer[T]
	Deserializer[T]
}

// NullDecoder is implemented by deserializers that, like their Java
// counterpart, decode some non-nil inputs to null: the time- and
// session-windowed key deserializers return null for empty input. Untyped and
// Nullable consult it and yield nil.
type NullDecoder interface {
	// DecodesToNull reports whether Deserialize(data) means Java null.
	DecodesToNull(data []byte) bool
}

// FixedSizer is implemented by serdes whose every non-null value serializes
// to the same number of bytes. ListSerde uses it to pick Java's CONSTANT_SIZE
// strategy; the Java list serdes do that exactly for Short (2), Integer (4),
// Float (4), Long (8), Double (8) and UUID (36), which implement it here, as
// does Nullable of them.
type FixedSizer interface {
	// FixedSize returns the size in bytes of every serialized value.
	FixedSize() int
}

// Name returns a printable name for a serde, serializer or deserializer: its
// String method if it has one, else its Go type.
func Name(s any) string {
	if st, ok := s.(fmt.Stringer); ok {
		return st.String()
	}
	return fmt.Sprintf("%T", s)
}

// SerializerFunc adapts a function to Serializer.
type SerializerFunc[T any] func(topic string, headers *Headers, data T) ([]byte, error)

// Serialize calls f.
func (f SerializerFunc[T]) Serialize(topic string, headers *Headers, data T) ([]byte, error) {
	return f(topic, headers, data)
}

// DeserializerFunc adapts a function to Deserializer.
type DeserializerFunc[T any] func(topic string, headers *Headers, data []byte) (T, error)

// Deserialize calls f.
func (f DeserializerFunc[T]) Deserialize(topic string, headers *Headers, data []byte) (T, error) {
	return f(topic, headers, data)
}

// New returns a Serde made of two functions; its name (String) is
// "Serde<T>" with T's Go type. The functions receive nil data as described
// in the package documentation and should follow the same null conventions.
// Java counterpart: Serdes.serdeFrom(serializer, deserializer) with lambdas.
func New[T any](ser func(topic string, headers *Headers, data T) ([]byte, error),
	deser func(topic string, headers *Headers, data []byte) (T, error)) Serde[T] {
	return &pair[T]{ser: SerializerFunc[T](ser), deser: DeserializerFunc[T](deser),
		name: "Serde<" + typeName[T]() + ">"}
}

// From pairs an existing Serializer and Deserializer into a Serde named
// after the serializer (Java: Serdes.serdeFrom(serializer, deserializer)).
// If either one implements NullDecoder or FixedSizer, the Serde forwards it:
// NullDecoder from the deserializer, FixedSizer from the serializer.
func From[T any](ser Serializer[T], deser Deserializer[T]) Serde[T] {
	return &pair[T]{ser: ser, deser: deser, name: Name(ser)}
}

type pair[T any] struct {
	ser   Serializer[T]
	deser Deserializer[T]
	name  string
}

func (p *pair[T]) Serialize(topic string, headers *Headers, data T) ([]byte, error) {
	return p.ser.Serialize(topic, headers, data)
}

func (p *pair[T]) Deserialize(topic string, headers *Headers, data []byte) (T, error) {
	return p.deser.Deserialize(topic, headers, data)
}

func (p *pair[T]) String() string { return p.name }

func (p *pair[T]) DecodesToNull(data []byte) bool { return decodesToNull(p.deser, data) }

func (p *pair[T]) FixedSize() int { return fixedSize(p.ser) }

func decodesToNull(d any, data []byte) bool {
	if data == nil {
		return true
	}
	nd, ok := d.(NullDecoder)
	return ok && nd.DecodesToNull(data)
}

// fixedSize returns s's FixedSize, or 0 when it has none.
func fixedSize(s any) int {
	if fs, ok := s.(FixedSizer); ok {
		return fs.FixedSize()
	}
	return 0
}

func typeName[T any]() string {
	return reflect.TypeFor[T]().String()
}

// nillable reports whether T's zero value is nil (pointer, slice, map,
// interface, channel or function types).
func nillable[T any]() bool {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
		return true
	}
	return false
}

// isNil reports whether v holds nil, for a T known to be nillable.
func isNil[T any](v T) bool {
	a := any(v)
	if a == nil {
		return true
	}
	rv := reflect.ValueOf(a)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
		return rv.IsNil()
	}
	return false
}

// Untyped adapts s to Serde[any] for the processing engine, which holds keys
// and values as any with nil meaning null. Serialize(nil) returns nil bytes
// without calling s; any other value must have type T or the result is an
// *Error wrapping ErrWrongType. Deserialize(nil) returns nil without calling
// s, as does input that s reports as null through NullDecoder; otherwise it
// returns s's value as any. FixedSizer and NullDecoder are forwarded, and
// String is s's name; Untyped of TimeWindowed or SessionWindowed also
// has SerializeBaseKey(topic, headers, data any), data a Windowed[K] of the
// wrapped serde's K (else an *Error wrapping ErrWrongType). There is no Java counterpart; Java's serdes are
// already untyped at run time.
func Untyped[T any](s Serde[T]) Serde[any] {
	if u, ok := s.(*typedOf[T]); ok {
		return u.s
	}
	if _, ok := any(s).(baseKeyAny); ok {
		return &untypedWindowed[T]{newUntyped(s)}
	}
	u := newUntyped(s)
	return &u
}

// untypedWindowed is Untyped of a windowed serde: it also has SerializeBaseKey.
type untypedWindowed[T any] struct{ untyped[T] }

func (u *untypedWindowed[T]) SerializeBaseKey(topic string, headers *Headers, data any) ([]byte, error) {
	return any(u.s).(baseKeyAny).serializeBaseKeyAny(topic, headers, data)
}

// untyped is Untyped of a serde that is not windowed. app and nd are s as an
// AppendSerializer and as a NullDecoder (nil when it is not one), decided once here rather
// than by an interface assertion on every record.
type untyped[T any] struct {
	s   Serde[T]
	app AppendSerializer[T]
	nd  NullDecoder
}

func newUntyped[T any](s Serde[T]) untyped[T] {
	u := untyped[T]{s: s}
	u.app, _ = s.(AppendSerializer[T])
	u.nd, _ = s.(NullDecoder)
	return u
}

// decodesToNull is decodesToNull(u.s, data) without the assertion.
func (u *untyped[T]) decodesToNull(data []byte) bool {
	return data == nil || u.nd != nil && u.nd.DecodesToNull(data)
}

func (u *untyped[T]) Serialize(topic string, headers *Headers, data any) ([]byte, error) {
	if data == nil {
		return nil, nil
	}
	v, ok := data.(T)
	if !ok {
		v, ok = serdeapi.PointerTo[T](data)
	}
	if !ok {
		return nil, serErr(Name(u.s), topic, fmt.Errorf("%w: got %T, want %s", ErrWrongType, data, typeName[T]()))
	}
	return u.s.Serialize(topic, headers, v)
}

func (u *untyped[T]) Deserialize(topic string, headers *Headers, data []byte) (any, error) {
	if u.decodesToNull(data) {
		return nil, nil
	}
	v, err := u.s.Deserialize(topic, headers, data)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (u *untyped[T]) String() string                 { return Name(u.s) }
func (u *untyped[T]) FixedSize() int                 { return fixedSize(u.s) }
func (u *untyped[T]) DecodesToNull(data []byte) bool { return u.decodesToNull(data) }

// Unwrap returns the typed serde Untyped was given.
func (u *untyped[T]) Unwrap() any { return u.s }

// Typed is the reverse of Untyped: it views a Serde[any] as Serde[T].
// Serialize passes the value on as any (a nil pointer, slice or map of a
// nillable T is passed as untyped nil, meaning null). Deserialize returns
// the zero value of T for a nil result and an *Error wrapping ErrWrongType if
// the result has another type. Typed(Untyped(s)) returns s.
func Typed[T any](s Serde[any]) Serde[T] {
	switch u := s.(type) {
	case *untyped[T]:
		return u.s
	case *untypedWindowed[T]:
		return u.s
	}
	return &typedOf[T]{s: s, nillable: nillable[T]()}
}

type typedOf[T any] struct {
	s        Serde[any]
	nillable bool
}

func (t *typedOf[T]) Serialize(topic string, headers *Headers, data T) ([]byte, error) {
	if t.nillable && isNil(data) {
		return t.s.Serialize(topic, headers, nil)
	}
	return t.s.Serialize(topic, headers, data)
}

func (t *typedOf[T]) Deserialize(topic string, headers *Headers, data []byte) (T, error) {
	var zero T
	v, err := t.s.Deserialize(topic, headers, data)
	if err != nil || v == nil {
		return zero, err
	}
	tv, ok := v.(T)
	if !ok {
		return zero, deserErr(Name(t.s), topic, data, fmt.Errorf("%w: got %T, want %s", ErrWrongType, v, typeName[T]()))
	}
	return tv, nil
}

func (t *typedOf[T]) String() string                 { return Name(t.s) }
func (t *typedOf[T]) FixedSize() int                 { return fixedSize(t.s) }
func (t *typedOf[T]) DecodesToNull(data []byte) bool { return decodesToNull(t.s, data) }

// Nullable gives a value-type serde true null semantics: Serialize(nil)
// returns nil bytes and Serialize(&v) returns s's bytes for v; Deserialize
// of nil bytes (or of input s reports as null through NullDecoder) returns
// nil, else a pointer to s's value. Use it where Java code relies on a null
// Long, Integer, String, ... or for List elements that may be null:
// ListSerde(Nullable(Long())). FixedSize is forwarded, so the list strategy stays
// Java's. The name is s's name.
func Nullable[T any](s Serde[T]) Serde[*T] {
	return &nullable[T]{s: s}
}

type nullable[T any] struct{ s Serde[T] }

func (n *nullable[T]) Serialize(topic string, headers *Headers, data *T) ([]byte, error) {
	if data == nil {
		return nil, nil
	}
	return n.s.Serialize(topic, headers, *data)
}

func (n *nullable[T]) Deserialize(topic string, headers *Headers, data []byte) (*T, error) {
	if decodesToNull(n.s, data) {
		return nil, nil
	}
	v, err := n.s.Deserialize(topic, headers, data)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func (n *nullable[T]) String() string                 { return Name(n.s) }
func (n *nullable[T]) FixedSize() int                 { return fixedSize(n.s) }
func (n *nullable[T]) DecodesToNull(data []byte) bool { return decodesToNull(n.s, data) }
