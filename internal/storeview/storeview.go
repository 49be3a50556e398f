// Package storeview gives typed views of the DSL's state stores, for the test driver and for
// interactive queries. The DSL builds its stores with untyped keys and values (keys any,
// values any or *store.ValueAndTimestamp[any]) because one engine serves every operator; the
// Materialized the store came from says which types it really holds, and the DSL records them
// in the topology (topology.Store.KeyType and ValueType). A view converts between those and
// the types the caller asks for, and [Check] refuses a request whose types the store cannot
// hold, so a wrong-typed view fails when it is made, not on its first read.
package storeview

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"reflect"
	"strings"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Kind is the kind of view asked for, for messages.
type Kind string

// The kinds of views.
const (
	KeyValue            Kind = "key-value store"
	TimestampedKeyValue Kind = "timestamped key-value store"
	Window              Kind = "window store"
	TimestampedWindow   Kind = "timestamped window store"
	Session             Kind = "session store"
)

// Untyped store interfaces of the DSL.
type (
	// TSKV is the DSL's key-value store (aggregations, tables).
	TSKV = store.KeyValueStore[any, *store.ValueAndTimestamp[any]]
	// TSWindow is the DSL's window store (windowed aggregations).
	TSWindow = store.WindowStore[any, *store.ValueAndTimestamp[any]]
	// UntypedSession is the DSL's session store (session aggregations).
	UntypedSession = store.SessionStore[any, any]
	// UntypedKV is an untyped plain key-value store.
	UntypedKV = store.KeyValueStore[any, any]
	// UntypedWindow is an untyped plain window store.
	UntypedWindow = store.WindowStore[any, any]
)

// KindOf names the kind of an untyped DSL store, "" when s is none of them.
func KindOf(s processor.StateStore) Kind {
	switch s.(type) {
	case TSKV:
		return TimestampedKeyValue
	case UntypedKV:
		return KeyValue
	case TSWindow:
		return TimestampedWindow
	case UntypedWindow:
		return Window
	case UntypedSession:
		return Session
	case UntypedVersioned:
		return Versioned
	}
	return ""
}

// Compatible reports whether the values a store declares of type declared can be read as
// requested: the same type, an interface declared implements (any), or, when the store only
// declares an interface, a type that implements it (checked per value on reads). A nil
// declared type (not known) is compatible with everything (checked per value).
func Compatible(declared, requested reflect.Type) bool {
	switch {
	case declared == nil || requested == declared:
		return true
	case requested.Kind() == reflect.Interface && declared.Implements(requested):
		return true
	case declared.Kind() == reflect.Interface && requested.Implements(declared):
		return true
	}
	return false
}

// Check returns nil when a store whose DSL types are key and value (nil when unknown) can be
// viewed as a kind store of K and V; else a *processor.StoreTypeError naming the store's
// kind and types and the views it offers.
func Check[K, V any](name string, have Kind, key, value reflect.Type, want Kind) error {
	return CheckTypes(name, have, key, value, want, reflect.TypeFor[K](), reflect.TypeFor[V]())
}

// CheckTypes is Check with the requested key and value types k and v given as values.
func CheckTypes(name string, have Kind, key, value reflect.Type, want Kind, k, v reflect.Type) error {
	if Compatible(key, k) && Compatible(value, v) {
		return nil
	}
	return &processor.StoreTypeError{Store: name, Got: Describe(have, key, value), Want: Describe(want, k, v),
		Use: suggest(have, key, value)}
}

// TimestampedValueType returns X for t = *store.ValueAndTimestamp[X], else t.
func TimestampedValueType(t reflect.Type) reflect.Type {
	if x, ok := timestampedValue(t); ok {
		return x
	}
	return t
}

// timestampedValue returns X and true for v = *store.ValueAndTimestamp[X].
func timestampedValue(v reflect.Type) (reflect.Type, bool) {
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return v, false
	}
	e := v.Elem()
	f, ok := e.FieldByName("Value")
	if !ok || e.PkgPath() != reflect.TypeFor[store.ValueAndTimestamp[any]]().PkgPath() || !strings.HasPrefix(e.Name(), "ValueAndTimestamp[") {
		return v, false
	}
	return f.Type, true
}

// Describe names a kind of store with its key and value types, e.g. "timestamped key-value
// store of string keys and float64 values".
func Describe(kind Kind, key, value reflect.Type) string {
	if kind == "" {
		kind = "store"
	}
	if key == nil || value == nil {
		return string(kind)
	}
	return fmt.Sprintf("%s of %s keys and %s values", kind, typeString(key), typeString(value))
}

// typeString is t as Go source writes it (any, not interface {}).
func typeString(t reflect.Type) string { return strings.ReplaceAll(t.String(), "interface {}", "any") }

// suggest lists the views of a store of kind with these types, as the calls a user writes.
func suggest(kind Kind, key, value reflect.Type) string {
	if key == nil || value == nil {
		return ""
	}
	kv := typeString(key) + ", " + typeString(value)
	switch kind {
	case TimestampedKeyValue:
		return "KeyValueStore[" + kv + "] or TimestampedKeyValueStore[" + kv + "]"
	case KeyValue:
		return "KeyValueStore[" + kv + "]"
	case TimestampedWindow:
		return "WindowStore[" + kv + "] or TimestampedWindowStore[" + kv + "]"
	case Window:
		return "WindowStore[" + kv + "]"
	case Session:
		return "SessionStore[" + kv + "]"
	case Versioned:
		return "VersionedKeyValueStore[" + kv + "]"
	}
	return ""
}

// Cast returns v as a T (nil gives the zero T); a value of another type is an error saying
// what the store holds.
func Cast[T any](what string, v any) (T, error) {
	var zero T
	if v == nil {
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%w: the store holds a %s of type %T, not %s", processor.ErrWrongStoreType, what, v, typeString(reflect.TypeFor[T]()))
	}
	return t, nil
}

// Box turns a typed value into a store value: nil pointers, slices, maps, funcs, interfaces and
// channels become untyped nil (null), as the DSL stores them.
func Box[T any](v T) any {
	a := any(v)
	switch a.(type) {
	case nil:
		return nil
	case string, int64, int32, int16, int, float64, float32, bool:
		return a
	}
	rv := reflect.ValueOf(a)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Func, reflect.Interface, reflect.Chan:
		if rv.IsNil() {
			return nil
		}
	}
	return a
}

// Value converters between the DSL's untyped values and typed ones.

// PlainTo reads an untyped value as a V.
func PlainTo[V any](x any) (V, error) { return Cast[V]("value", x) }

// PlainFrom writes a V as an untyped value.
func PlainFrom[V any](v V) any { return Box(v) }

// TimestampedTo reads an untyped timestamped value as a *ValueAndTimestamp[V] (nil stays nil).
func TimestampedTo[V any](x *store.ValueAndTimestamp[any]) (*store.ValueAndTimestamp[V], error) {
	if x == nil {
		return nil, nil
	}
	v, err := Cast[V]("value", x.Value)
	if err != nil {
		return nil, err
	}
	return &store.ValueAndTimestamp[V]{Value: v, Timestamp: x.Timestamp}, nil
}

// TimestampedFrom writes a *ValueAndTimestamp[V] as an untyped timestamped value (nil, or a
// null value, stays nil).
func TimestampedFrom[V any](v *store.ValueAndTimestamp[V]) *store.ValueAndTimestamp[any] {
	if v == nil {
		return nil
	}
	return store.MakeValueAndTimestamp(Box(v.Value), v.Timestamp)
}

// key converters

func keyTo[K any](k any) (K, error) { return Cast[K]("key", k) }

func windowedKeyTo[K any](w serde.Windowed[any]) (serde.Windowed[K], error) {
	k, err := keyTo[K](w.Key)
	return serde.Windowed[K]{Key: k, Window: w.Window}, err
}

func windowedKeyFrom[K any](w serde.Windowed[K]) serde.Windowed[any] {
	return serde.Windowed[any]{Key: Box(w.Key), Window: w.Window}
}

func same[T any](t T) (T, error) { return t, nil }

// convIter converts an iterator's keys and values; a conversion error ends it with that error.
type convIter[KX, KY, X, Y any] struct {
	it    store.KeyValueIterator[KX, X]
	key   func(KX) (KY, error)
	value func(X) (Y, error)
	k     KY
	v     Y
	err   error
}

func iterOf[KX, KY, X, Y any](it store.KeyValueIterator[KX, X], key func(KX) (KY, error), value func(X) (Y, error)) store.KeyValueIterator[KY, Y] {
	return &convIter[KX, KY, X, Y]{it: it, key: key, value: value}
}

func (c *convIter[KX, KY, X, Y]) Next() bool {
	if c.err != nil || !c.it.Next() {
		var zk KY
		var zv Y
		c.k, c.v = zk, zv
		return false
	}
	if c.k, c.err = c.key(c.it.Key()); c.err != nil {
		return false
	}
	c.v, c.err = c.value(c.it.Value())
	return c.err == nil
}
func (c *convIter[KX, KY, X, Y]) Key() KY  { return c.k }
func (c *convIter[KX, KY, X, Y]) Value() Y { return c.v }
func (c *convIter[KX, KY, X, Y]) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.it.Err()
}
func (c *convIter[KX, KY, X, Y]) Close() error { return c.it.Close() }

// rawConvIter is convIter over a storeapi.RawKeyIterator, passing its raw keys through.
type rawConvIter[KX, KY, X, Y any] struct {
	convIter[KX, KY, X, Y]
	raw storeapi.RawKeyIterator[KX, X]
}

func rawIterOf[KX, KY, X, Y any](it storeapi.RawKeyIterator[KX, X], key func(KX) (KY, error), value func(X) (Y, error)) storeapi.RawKeyIterator[KY, Y] {
	return &rawConvIter[KX, KY, X, Y]{convIter: convIter[KX, KY, X, Y]{it: it, key: key, value: value}, raw: it}
}

func (c *rawConvIter[KX, KY, X, Y]) RawKey() []byte { return c.raw.RawKey() }

// Inspect finds the kind, key and value types of a typed store from its methods (Get of a
// key-value store, Fetch(key, windowStart) of a window store, FetchSession of a session store);
// a value type *store.ValueAndTimestamp[X] makes the kind timestamped with values X. It
// returns "" for a store of none of these kinds.
func Inspect(s processor.StateStore) (Kind, reflect.Type, reflect.Type) {
	t := reflect.TypeOf(s)
	if t == nil {
		return "", nil, nil
	}
	get := func(name string, in int) (reflect.Type, reflect.Type, bool) {
		m, ok := t.MethodByName(name)
		if !ok || m.Type.NumIn() != in+1 || m.Type.NumOut() != 3 {
			return nil, nil, false
		}
		return m.Type.In(1), m.Type.Out(0), true
	}
	if k, v, ok := get("FetchSession", 3); ok {
		return Session, k, v
	}
	if k, v, ok := get("Fetch", 2); ok {
		if x, ts := timestampedValue(v); ts {
			return TimestampedWindow, k, x
		}
		return Window, k, v
	}
	if m, ok := t.MethodByName("GetAsOf"); ok && m.Type.NumIn() == 3 && m.Type.NumOut() == 2 {
		if r := m.Type.Out(0); r.Kind() == reflect.Pointer && r.Elem().Kind() == reflect.Struct {
			if f, ok := r.Elem().FieldByName("Value"); ok {
				return Versioned, m.Type.In(1), f.Type
			}
		}
	}
	if k, v, ok := get("Get", 1); ok {
		if x, ts := timestampedValue(v); ts {
			return TimestampedKeyValue, k, x
		}
		return KeyValue, k, v
	}
	return "", nil, nil
}

// Mismatch is the error for store name asked for as a want store of K and V when s is not of
// that kind: its kind comes from Inspect, its types from the DSL (key, value) when known, else
// from Inspect.
func Mismatch[K, V any](name string, s processor.StateStore, key, value reflect.Type, want Kind) error {
	return MismatchTypes(name, s, key, value, want, reflect.TypeFor[K](), reflect.TypeFor[V]())
}

// MismatchTypes is Mismatch with the requested key and value types k and v given as values.
func MismatchTypes(name string, s processor.StateStore, key, value reflect.Type, want Kind, wantKey, wantValue reflect.Type) error {
	kind, k, v := Inspect(s)
	if kind == "" {
		kind = KindOf(s)
	}
	if key != nil && value != nil {
		k, v = key, value
	}
	have := fmt.Sprintf("%T", s)
	if kind != "" {
		have = Describe(kind, k, v)
	}
	return &processor.StoreTypeError{Store: name, Got: have, Want: Describe(want, wantKey, wantValue),
		Use: suggest(kind, k, v)}
}

type serdeWindowed[K any] = serde.Windowed[K]
