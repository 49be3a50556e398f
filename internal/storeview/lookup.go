package storeview

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"reflect"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// Fits reports whether a view of kind want can be made of a store of kind have: a plain view
// of a plain or timestamped store, a timestamped view of a timestamped store, a session view
// of a session store.
func Fits(have, want Kind) bool {
	switch want {
	case KeyValue:
		return have == KeyValue || have == TimestampedKeyValue
	case Window:
		return have == Window || have == TimestampedWindow
	}
	return have == want
}

// CheckDeclared checks a view of kind want with keys K and values V of the DSL store s, whose
// Materialized declared the types key and value: nil when it fits, else a
// *processor.StoreTypeError.
func CheckDeclared[K, V any](name string, s processor.StateStore, key, value reflect.Type, want Kind) error {
	have := KindOf(s)
	if !Fits(have, want) {
		return Mismatch[K, V](name, s, key, value, want)
	}
	return Check[K, V](name, have, key, value, want)
}

// unwrap reads a timestamped value as its plain value (nil: the zero V).
func unwrap[V any](x *store.ValueAndTimestamp[V]) (V, error) {
	if x == nil {
		var zero V
		return zero, nil
	}
	return x.Value, nil
}

// unwrapAny reads an untyped timestamped value as a plain V.
func unwrapAny[V any](x *store.ValueAndTimestamp[any]) (V, error) {
	if x == nil {
		var zero V
		return zero, nil
	}
	return Cast[V]("value", x.Value)
}

// The read-only views of interactive queries. Key-value stores are read through their query
// view (queryView: reads never fill the record cache). Each returns false when s cannot
// be viewed so; the types of a DSL store must have been checked with CheckDeclared first.

// ReadOnlyKeyValue views s with keys K and plain values V.
func ReadOnlyKeyValue[K, V any](s processor.StateStore) (store.ReadOnlyKeyValueStore[K, V], bool) {
	if kv, ok := queryView[K, V](s); ok {
		return kv, true
	}
	if ts, ok := queryView[K, *store.ValueAndTimestamp[V]](s); ok {
		return readSame[K](ts, unwrap[V]), true
	}
	if u, ok := queryView[any, *store.ValueAndTimestamp[any]](s); ok {
		return ReadKV[K](u, unwrapAny[V]), true
	}
	if u, ok := queryView[any, any](s); ok {
		return ReadKV[K](u, PlainTo[V]), true
	}
	// Values of an interface type (any) from a typed store of keys K: its values boxed.
	if reflect.TypeFor[V]().Kind() == reflect.Interface {
		if q, ok := s.(interface {
			QueryViewAny() store.ReadOnlyKeyValueStore[K, any]
		}); ok {
			return readSame[K](q.QueryViewAny(), PlainTo[V]), true
		}
	}
	return nil, false
}

// ReadOnlyTimestampedKeyValue views s with keys K and values *store.ValueAndTimestamp[V].
func ReadOnlyTimestampedKeyValue[K, V any](s processor.StateStore) (store.ReadOnlyKeyValueStore[K, *store.ValueAndTimestamp[V]], bool) {
	if ts, ok := queryView[K, *store.ValueAndTimestamp[V]](s); ok {
		return ts, true
	}
	if u, ok := queryView[any, *store.ValueAndTimestamp[any]](s); ok {
		return ReadKV[K](u, TimestampedTo[V]), true
	}
	return nil, false
}

// ReadOnlyWindow views s with keys K and plain values V.
func ReadOnlyWindow[K, V any](s processor.StateStore) (store.ReadOnlyWindowStore[K, V], bool) {
	switch w := s.(type) {
	case store.ReadOnlyWindowStore[K, V]:
		return w, true
	case store.ReadOnlyWindowStore[K, *store.ValueAndTimestamp[V]]:
		return readSameWindow[K](w, unwrap[V]), true
	case store.ReadOnlyWindowStore[any, *store.ValueAndTimestamp[any]]:
		return ReadWindow[K](w, unwrapAny[V]), true
	case store.ReadOnlyWindowStore[any, any]:
		return ReadWindow[K](w, PlainTo[V]), true
	}
	return nil, false
}

// ReadOnlyTimestampedWindow views s with keys K and values *store.ValueAndTimestamp[V].
func ReadOnlyTimestampedWindow[K, V any](s processor.StateStore) (store.ReadOnlyWindowStore[K, *store.ValueAndTimestamp[V]], bool) {
	switch w := s.(type) {
	case store.ReadOnlyWindowStore[K, *store.ValueAndTimestamp[V]]:
		return w, true
	case store.ReadOnlyWindowStore[any, *store.ValueAndTimestamp[any]]:
		return ReadWindow[K](w, TimestampedTo[V]), true
	}
	return nil, false
}

// ReadOnlySession views s with keys K and values V.
func ReadOnlySession[K, V any](s processor.StateStore) (store.ReadOnlySessionStore[K, V], bool) {
	switch w := s.(type) {
	case store.SessionStore[K, V]:
		return w, true
	case UntypedSession:
		return SessionStore[K, V](w), true
	}
	return nil, false
}

// readSame views a typed store with other values (keys unchanged).
func readSame[K, X, Y any](s store.ReadOnlyKeyValueStore[K, X], to func(X) (Y, error)) store.ReadOnlyKeyValueStore[K, Y] {
	return &sameKeyKV[K, X, Y]{s: s, to: to}
}

type sameKeyKV[K, X, Y any] struct {
	s  store.ReadOnlyKeyValueStore[K, X]
	to func(X) (Y, error)
}

func (r *sameKeyKV[K, X, Y]) Get(key K) (Y, bool, error) {
	var zero Y
	x, ok, err := r.s.Get(key)
	if err != nil || !ok {
		return zero, ok, err
	}
	y, err := r.to(x)
	return y, err == nil, err
}
func (r *sameKeyKV[K, X, Y]) it(it store.KeyValueIterator[K, X]) store.KeyValueIterator[K, Y] {
	return iterOf(it, same[K], r.to)
}
func (r *sameKeyKV[K, X, Y]) Range(from, to K) store.KeyValueIterator[K, Y] {
	return r.it(r.s.Range(from, to))
}
func (r *sameKeyKV[K, X, Y]) ReverseRange(from, to K) store.KeyValueIterator[K, Y] {
	return r.it(r.s.ReverseRange(from, to))
}
func (r *sameKeyKV[K, X, Y]) All() store.KeyValueIterator[K, Y]        { return r.it(r.s.All()) }
func (r *sameKeyKV[K, X, Y]) ReverseAll() store.KeyValueIterator[K, Y] { return r.it(r.s.ReverseAll()) }
func (r *sameKeyKV[K, X, Y]) PrefixScan(p []byte) store.KeyValueIterator[K, Y] {
	return r.it(r.s.PrefixScan(p))
}
func (r *sameKeyKV[K, X, Y]) ApproximateNumEntries() int64 { return r.s.ApproximateNumEntries() }

// readSameWindow views a typed window store with other values (keys unchanged).
func readSameWindow[K, X, Y any](s store.ReadOnlyWindowStore[K, X], to func(X) (Y, error)) store.ReadOnlyWindowStore[K, Y] {
	return &sameKeyWindow[K, X, Y]{s: s, to: to}
}

type sameKeyWindow[K, X, Y any] struct {
	s  store.ReadOnlyWindowStore[K, X]
	to func(X) (Y, error)
}

func (r *sameKeyWindow[K, X, Y]) Fetch(key K, windowStart int64) (Y, bool, error) {
	var zero Y
	x, ok, err := r.s.Fetch(key, windowStart)
	if err != nil || !ok {
		return zero, ok, err
	}
	y, err := r.to(x)
	return y, err == nil, err
}
func (r *sameKeyWindow[K, X, Y]) times(it store.KeyValueIterator[int64, X]) store.KeyValueIterator[int64, Y] {
	return iterOf(it, same[int64], r.to)
}
func (r *sameKeyWindow[K, X, Y]) windowed(it store.KeyValueIterator[serdeWindowed[K], X]) store.KeyValueIterator[serdeWindowed[K], Y] {
	return iterOf(it, same[serdeWindowed[K]], r.to)
}
func (r *sameKeyWindow[K, X, Y]) FetchTimeRange(key K, from, to int64) store.KeyValueIterator[int64, Y] {
	return r.times(r.s.FetchTimeRange(key, from, to))
}
func (r *sameKeyWindow[K, X, Y]) BackwardFetchTimeRange(key K, from, to int64) store.KeyValueIterator[int64, Y] {
	return r.times(r.s.BackwardFetchTimeRange(key, from, to))
}
func (r *sameKeyWindow[K, X, Y]) FetchKeyRange(kf, kt K, from, to int64) store.KeyValueIterator[serdeWindowed[K], Y] {
	return r.windowed(r.s.FetchKeyRange(kf, kt, from, to))
}
func (r *sameKeyWindow[K, X, Y]) BackwardFetchKeyRange(kf, kt K, from, to int64) store.KeyValueIterator[serdeWindowed[K], Y] {
	return r.windowed(r.s.BackwardFetchKeyRange(kf, kt, from, to))
}
func (r *sameKeyWindow[K, X, Y]) FetchAll(from, to int64) store.KeyValueIterator[serdeWindowed[K], Y] {
	return r.windowed(r.s.FetchAll(from, to))
}
func (r *sameKeyWindow[K, X, Y]) BackwardFetchAll(from, to int64) store.KeyValueIterator[serdeWindowed[K], Y] {
	return r.windowed(r.s.BackwardFetchAll(from, to))
}
func (r *sameKeyWindow[K, X, Y]) All() store.KeyValueIterator[serdeWindowed[K], Y] {
	return r.windowed(r.s.All())
}
func (r *sameKeyWindow[K, X, Y]) BackwardAll() store.KeyValueIterator[serdeWindowed[K], Y] {
	return r.windowed(r.s.BackwardAll())
}

// Scan implements storeapi.Scanner when the typed store below does.
func (r *sameKeyKV[K, X, Y]) Scan(s storeapi.Scan[K]) (storeapi.RawKeyIterator[K, Y], bool) {
	sc, ok := r.s.(storeapi.Scanner[K, X])
	if !ok {
		return nil, false
	}
	it, ok := sc.Scan(s)
	if !ok {
		return nil, false
	}
	return rawIterOf(it, same[K], r.to), true
}

// ScanWindows implements storeapi.WindowScanner when the typed store below does.
func (r *sameKeyWindow[K, X, Y]) ScanWindows(s storeapi.WindowScan[K]) (storeapi.RawKeyIterator[serdeWindowed[K], Y], bool) {
	sc, ok := r.s.(storeapi.WindowScanner[K, X])
	if !ok {
		return nil, false
	}
	it, ok := sc.ScanWindows(s)
	if !ok {
		return nil, false
	}
	return rawIterOf(it, same[serdeWindowed[K]], r.to), true
}

// queryView returns the read-only view of st for interactive queries from goroutines other than
// the one running st's task: st's own QueryView when it has one (typed stores: reads never fill
// the record cache, so they cannot evict or flush), else st itself. ok is false when st is not a
// store.ReadOnlyKeyValueStore[K, V]. Java counterpart: the stores handed out by
// KafkaStreams.store (reads from non-stream threads do not populate the cache).
func queryView[K, V any](st processor.StateStore) (store.ReadOnlyKeyValueStore[K, V], bool) {
	if q, ok := st.(interface {
		QueryView() store.ReadOnlyKeyValueStore[K, V]
	}); ok {
		return q.QueryView(), true
	}
	ro, ok := st.(store.ReadOnlyKeyValueStore[K, V])
	return ro, ok
}
