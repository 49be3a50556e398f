// Package serdeapi holds what the library's engine asks of package serde that users never
// write against: whether a serde decodes bytes as the String serde does, whether it appends
// its bytes straight onto a caller's buffer, and the conversion of a value X to *X that serde's
// untyped adapters and the DSL's nullable views share. Package serde implements the interfaces
// below structurally on its own (unexported) serde types; this package does not import serde.
package serdeapi

import "reflect"

// StringDecoder is implemented by the String serde and Untyped of it: a deserializer whose
// result depends on the bytes alone (not on topic or headers), so equal bytes give equal
// strings.
type StringDecoder interface {
	// DecodesString reports whether the serde decodes as the String serde.
	DecodesString() bool
}

// LongDecoder is implemented by the Long serde and Untyped of it: values are an int64 as 8
// big-endian bytes, whatever the topic and headers.
type LongDecoder interface {
	// DecodesLong reports whether the serde encodes and decodes as the Long serde.
	DecodesLong() bool
}

// IsLong reports whether s is the Long serde or Untyped of it. The stores use it to read and
// write a count's bytes without the serde (storeapi.CountStore).
func IsLong(s any) bool {
	d, ok := s.(LongDecoder)
	return ok && d.DecodesLong()
}

// InPlaceAppender is implemented by the Long and String serdes and Untyped of them: their
// AppendSerialize (serde.AppendSerializer) writes the bytes straight onto the caller's buffer.
// Untyped of another serde also has AppendSerialize, but it copies a Serialize result, so a
// caller gains nothing and AppendsInPlace reports false for it.
type InPlaceAppender interface {
	// AppendsInPlace reports whether AppendSerialize writes onto the caller's buffer.
	AppendsInPlace() bool
}

// IsString reports whether s is the String serde or Untyped of it. The processing engine uses
// it to decode a record whose key and value bytes are equal once.
func IsString(s any) bool {
	d, ok := s.(StringDecoder)
	return ok && d.DecodesString()
}

// AppendsInPlace reports whether s is the Long or String serde or Untyped of one of them. The
// processing engine uses it to serialize sink records into a shared buffer instead of one new
// slice per key and value; the metered store layer to serialize keys into a buffer of its own.
func AppendsInPlace(s any) bool {
	a, ok := s.(InPlaceAppender)
	return ok && a.AppendsInPlace()
}

// HeaderFree is implemented by the primitive serdes (String, Long, Integer, ...), Untyped of
// them and the stores' wrappers of them: serdes that never read or write the Headers they are
// given.
type HeaderFree interface {
	// IgnoresHeaders reports whether Serialize and Deserialize leave their Headers untouched.
	IgnoresHeaders() bool
}

// IgnoresHeaders reports whether s never reads or writes the Headers its calls get. The typed
// key-value store layer uses it to hand such serdes one shared empty Headers instead of lending
// one per call.
func IgnoresHeaders(s any) bool {
	h, ok := s.(HeaderFree)
	return ok && h.IgnoresHeaders()
}

// PointerTo returns a new *X holding v when T is *X and v has type X; ok is false otherwise. The
// DSL's nullable views (kstream's NullableValues) show values of type X as *X (nil: null); the
// untyped adapters of package serde and the DSL's functions convert through it.
func PointerTo[T any](v any) (T, bool) {
	var zero T
	pt := reflect.TypeFor[T]()
	if v == nil || pt.Kind() != reflect.Pointer || pt.Elem() != reflect.TypeOf(v) {
		return zero, false
	}
	p := reflect.New(pt.Elem())
	p.Elem().Set(reflect.ValueOf(v))
	return p.Interface().(T), true
}

// IsNil reports whether v is nil or a typed nil of a nillable kind (pointer, map, slice, func,
// chan, interface): the null of Kafka Streams' records and stores. The common key and value
// types (strings, numbers, booleans, byte slices) are answered without reflection, as they
// are asked about once or more per record.
func IsNil(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string, int64, int32, int, float64, bool:
		return false
	case []byte:
		return x == nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
