package storeview

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// ReadKV views a read-only store of untyped keys and values X as one of keys K and values Y.
func ReadKV[K, X, Y any](s store.ReadOnlyKeyValueStore[any, X], to func(X) (Y, error)) store.ReadOnlyKeyValueStore[K, Y] {
	return &readKV[K, X, Y]{s: s, to: to}
}

type readKV[K, X, Y any] struct {
	s  store.ReadOnlyKeyValueStore[any, X]
	to func(X) (Y, error)
}

func (r *readKV[K, X, Y]) Get(key K) (Y, bool, error) {
	var zero Y
	x, ok, err := r.s.Get(Box(key))
	if err != nil || !ok {
		return zero, ok, err
	}
	y, err := r.to(x)
	if err != nil {
		return zero, false, err
	}
	return y, true, nil
}

func (r *readKV[K, X, Y]) it(it store.KeyValueIterator[any, X]) store.KeyValueIterator[K, Y] {
	return iterOf(it, keyTo[K], r.to)
}
func (r *readKV[K, X, Y]) Range(from, to K) store.KeyValueIterator[K, Y] {
	return r.it(r.s.Range(Box(from), Box(to)))
}
func (r *readKV[K, X, Y]) ReverseRange(from, to K) store.KeyValueIterator[K, Y] {
	return r.it(r.s.ReverseRange(Box(from), Box(to)))
}
func (r *readKV[K, X, Y]) All() store.KeyValueIterator[K, Y]        { return r.it(r.s.All()) }
func (r *readKV[K, X, Y]) ReverseAll() store.KeyValueIterator[K, Y] { return r.it(r.s.ReverseAll()) }
func (r *readKV[K, X, Y]) PrefixScan(prefix []byte) store.KeyValueIterator[K, Y] {
	return r.it(r.s.PrefixScan(prefix))
}
func (r *readKV[K, X, Y]) ApproximateNumEntries() int64 { return r.s.ApproximateNumEntries() }

// KV views a store of untyped keys and values X as one of keys K and values Y, for reads and
// writes (writes go through the store's own layers: cache, changelog).
func KV[K, X, Y any](s store.KeyValueStore[any, X], to func(X) (Y, error), from func(Y) X) store.KeyValueStore[K, Y] {
	return &kv[K, X, Y]{StateStore: s, readKV: readKV[K, X, Y]{s: s, to: to}, s: s, from: from}
}

type kv[K, X, Y any] struct {
	processor.StateStore
	readKV[K, X, Y]
	s    store.KeyValueStore[any, X]
	from func(Y) X
}

func (w *kv[K, X, Y]) Put(key K, value Y) error { return w.s.Put(Box(key), w.from(value)) }

func (w *kv[K, X, Y]) PutIfAbsent(key K, value Y) (Y, bool, error) {
	var zero Y
	x, ok, err := w.s.PutIfAbsent(Box(key), w.from(value))
	if err != nil || !ok {
		return zero, ok, err
	}
	y, err := w.to(x)
	return y, err == nil, err
}

func (w *kv[K, X, Y]) PutAll(entries []store.KeyValue[K, Y]) error {
	out := make([]store.KeyValue[any, X], 0, len(entries))
	for _, e := range entries {
		out = append(out, store.Pair(Box(e.Key), w.from(e.Value)))
	}
	return w.s.PutAll(out)
}

func (w *kv[K, X, Y]) Delete(key K) (Y, bool, error) {
	var zero Y
	x, ok, err := w.s.Delete(Box(key))
	if err != nil || !ok {
		return zero, ok, err
	}
	y, err := w.to(x)
	return y, err == nil, err
}

// ReadWindow views a read-only window store of untyped keys and values X as one of keys K
// and values Y.
func ReadWindow[K, X, Y any](s store.ReadOnlyWindowStore[any, X], to func(X) (Y, error)) store.ReadOnlyWindowStore[K, Y] {
	return &readWindow[K, X, Y]{s: s, to: to}
}

type readWindow[K, X, Y any] struct {
	s  store.ReadOnlyWindowStore[any, X]
	to func(X) (Y, error)
}

func (r *readWindow[K, X, Y]) Fetch(key K, windowStart int64) (Y, bool, error) {
	var zero Y
	x, ok, err := r.s.Fetch(Box(key), windowStart)
	if err != nil || !ok {
		return zero, ok, err
	}
	y, err := r.to(x)
	if err != nil {
		return zero, false, err
	}
	return y, true, nil
}
func (r *readWindow[K, X, Y]) times(it store.KeyValueIterator[int64, X]) store.KeyValueIterator[int64, Y] {
	return iterOf(it, same[int64], r.to)
}
func (r *readWindow[K, X, Y]) windowed(it store.KeyValueIterator[serde.Windowed[any], X]) store.KeyValueIterator[serde.Windowed[K], Y] {
	return iterOf(it, windowedKeyTo[K], r.to)
}
func (r *readWindow[K, X, Y]) FetchTimeRange(key K, timeFrom, timeTo int64) store.KeyValueIterator[int64, Y] {
	return r.times(r.s.FetchTimeRange(Box(key), timeFrom, timeTo))
}
func (r *readWindow[K, X, Y]) BackwardFetchTimeRange(key K, timeFrom, timeTo int64) store.KeyValueIterator[int64, Y] {
	return r.times(r.s.BackwardFetchTimeRange(Box(key), timeFrom, timeTo))
}
func (r *readWindow[K, X, Y]) FetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], Y] {
	return r.windowed(r.s.FetchKeyRange(Box(keyFrom), Box(keyTo), timeFrom, timeTo))
}
func (r *readWindow[K, X, Y]) BackwardFetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], Y] {
	return r.windowed(r.s.BackwardFetchKeyRange(Box(keyFrom), Box(keyTo), timeFrom, timeTo))
}
func (r *readWindow[K, X, Y]) FetchAll(timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], Y] {
	return r.windowed(r.s.FetchAll(timeFrom, timeTo))
}
func (r *readWindow[K, X, Y]) BackwardFetchAll(timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], Y] {
	return r.windowed(r.s.BackwardFetchAll(timeFrom, timeTo))
}
func (r *readWindow[K, X, Y]) All() store.KeyValueIterator[serde.Windowed[K], Y] {
	return r.windowed(r.s.All())
}
func (r *readWindow[K, X, Y]) BackwardAll() store.KeyValueIterator[serde.Windowed[K], Y] {
	return r.windowed(r.s.BackwardAll())
}

// WindowStore views a window store of untyped keys and values X as one of keys K and values
// Y, for reads and writes.
func WindowStore[K, X, Y any](s store.WindowStore[any, X], to func(X) (Y, error), from func(Y) X) store.WindowStore[K, Y] {
	return &window[K, X, Y]{StateStore: s, readWindow: readWindow[K, X, Y]{s: s, to: to}, s: s, from: from}
}

type window[K, X, Y any] struct {
	processor.StateStore
	readWindow[K, X, Y]
	s    store.WindowStore[any, X]
	from func(Y) X
}

func (w *window[K, X, Y]) Put(key K, value Y, windowStart int64) error {
	return w.s.Put(Box(key), w.from(value), windowStart)
}

// SessionStore views a session store of untyped keys and values as one of keys K and values
// V, for reads and writes.
func SessionStore[K, V any](s UntypedSession) store.SessionStore[K, V] {
	return &session[K, V]{StateStore: s, s: s}
}

type session[K, V any] struct {
	processor.StateStore
	s UntypedSession
}

func (w *session[K, V]) FetchSession(key K, sessionStart, sessionEnd int64) (V, bool, error) {
	var zero V
	x, ok, err := w.s.FetchSession(Box(key), sessionStart, sessionEnd)
	if err != nil || !ok {
		return zero, ok, err
	}
	v, err := PlainTo[V](x)
	if err != nil {
		return zero, false, err
	}
	return v, true, nil
}
func (w *session[K, V]) it(it store.KeyValueIterator[serde.Windowed[any], any]) store.KeyValueIterator[serde.Windowed[K], V] {
	return iterOf(it, windowedKeyTo[K], PlainTo[V])
}
func (w *session[K, V]) FindSessions(key K, earliestSessionEnd, latestSessionStart int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return w.it(w.s.FindSessions(Box(key), earliestSessionEnd, latestSessionStart))
}
func (w *session[K, V]) BackwardFindSessions(key K, earliestSessionEnd, latestSessionStart int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return w.it(w.s.BackwardFindSessions(Box(key), earliestSessionEnd, latestSessionStart))
}
func (w *session[K, V]) FindSessionsRange(keyFrom, keyTo K, earliestSessionEnd, latestSessionStart int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return w.it(w.s.FindSessionsRange(Box(keyFrom), Box(keyTo), earliestSessionEnd, latestSessionStart))
}
func (w *session[K, V]) BackwardFindSessionsRange(keyFrom, keyTo K, earliestSessionEnd, latestSessionStart int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return w.it(w.s.BackwardFindSessionsRange(Box(keyFrom), Box(keyTo), earliestSessionEnd, latestSessionStart))
}
func (w *session[K, V]) Fetch(key K) store.KeyValueIterator[serde.Windowed[K], V] {
	return w.it(w.s.Fetch(Box(key)))
}
func (w *session[K, V]) BackwardFetch(key K) store.KeyValueIterator[serde.Windowed[K], V] {
	return w.it(w.s.BackwardFetch(Box(key)))
}
func (w *session[K, V]) FetchRange(keyFrom, keyTo K) store.KeyValueIterator[serde.Windowed[K], V] {
	return w.it(w.s.FetchRange(Box(keyFrom), Box(keyTo)))
}
func (w *session[K, V]) BackwardFetchRange(keyFrom, keyTo K) store.KeyValueIterator[serde.Windowed[K], V] {
	return w.it(w.s.BackwardFetchRange(Box(keyFrom), Box(keyTo)))
}
func (w *session[K, V]) Put(s serde.Windowed[K], value V) error {
	return w.s.Put(windowedKeyFrom(s), PlainFrom(value))
}
func (w *session[K, V]) Remove(s serde.Windowed[K]) error { return w.s.Remove(windowedKeyFrom(s)) }

// Scan implements storeapi.Scanner when the untyped store below does.
func (r *readKV[K, X, Y]) Scan(s storeapi.Scan[K]) (storeapi.RawKeyIterator[K, Y], bool) {
	sc, ok := r.s.(storeapi.Scanner[any, X])
	if !ok {
		return nil, false
	}
	it, ok := sc.Scan(storeapi.Scan[any]{Kind: s.Kind, From: Box(s.From), To: Box(s.To), NoFrom: s.NoFrom, NoTo: s.NoTo, Prefix: s.Prefix, Reverse: s.Reverse, After: s.After})
	if !ok {
		return nil, false
	}
	return rawIterOf(it, keyTo[K], r.to), true
}

// boxScan is s with untyped keys, for the untyped store below a view.
func boxScan[K any](s storeapi.WindowScan[K]) storeapi.WindowScan[any] {
	return storeapi.WindowScan[any]{Kind: s.Kind, Key: Box(s.Key), From: Box(s.From), To: Box(s.To),
		TimeFrom: s.TimeFrom, TimeTo: s.TimeTo, Reverse: s.Reverse, After: s.After}
}

// ScanWindows implements storeapi.WindowScanner when the untyped store below does.
func (r *readWindow[K, X, Y]) ScanWindows(s storeapi.WindowScan[K]) (storeapi.RawKeyIterator[serde.Windowed[K], Y], bool) {
	sc, ok := r.s.(storeapi.WindowScanner[any, X])
	if !ok {
		return nil, false
	}
	it, ok := sc.ScanWindows(boxScan(s))
	if !ok {
		return nil, false
	}
	return rawIterOf(it, windowedKeyTo[K], r.to), true
}

// ScanSessions implements storeapi.SessionScanner when the untyped store below does.
func (w *session[K, V]) ScanSessions(s storeapi.WindowScan[K]) (storeapi.RawKeyIterator[serde.Windowed[K], V], bool) {
	sc, ok := w.s.(storeapi.SessionScanner[any, any])
	if !ok {
		return nil, false
	}
	it, ok := sc.ScanSessions(boxScan(s))
	if !ok {
		return nil, false
	}
	return rawIterOf(it, windowedKeyTo[K], PlainTo[V]), true
}
