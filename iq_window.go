package kstreams

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/internal/topology"
	"math"
	"reflect"
	"sort"

	"github.com/kstreams-go/kstreams/internal/runtime"
	"github.com/kstreams-go/kstreams/internal/storeview"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// WindowStore returns a read-only view of the window store name, keys K and plain values V,
// across the instance's local active tasks. Java: store(StoreQueryParameters.fromNameAndType(
// name, QueryableStoreTypes.windowStore())), a CompositeReadOnlyWindowStore. It serves the
// DSL's windowed aggregations with the types of their Materialized (a windowed Count by string
// keys: WindowStore[string, int64]) and Processor API window stores of K and V. Window starts
// and times are epoch ms, ranges inclusive.
//
// Fetch(key, windowStart) and the key's fetches (FetchTimeRange, BackwardFetchTimeRange) read
// the task holding the key; the range and all-key fetches (FetchKeyRange, FetchAll, All and
// their Backward forms) give each local task's entries in turn, tasks by id, each task's in
// the store's order. As the key-value views' iterators (see KeyValueStore), these read each
// task's store in chunks of a few hundred entries (storeapi.WindowScan), each chunk while its
// stream thread keeps off the store (at most a processing batch or a cache flush), and hold
// one chunk in memory, never the store, whatever its size and engine; the stream threads keep
// processing between chunks. A task's entries come in the store's order, each once, and an
// iterator sees a window written meanwhile when it has not passed it yet (Java's RocksDB
// iterators read a snapshot instead). A custom store type that cannot resume a scan is read a
// task at a time, its matches held until the iterator moves on. Reads never fill the record
// cache. Do not read the view from the
// instance's own processing code (see KeyValueStore). Errors: processor.ErrUnknownStore when the
// topology has no store of that name; *processor.StoreTypeError (processor.ErrWrongStoreType)
// when the store is no window store of K and V; ErrStoreNotAvailable when the instance is not
// Running, no local task has the store, or (from reads) the task migrated since the view
// found it. Options: EnableStaleStores (standbys and restoring tasks answer too, KIP-535), WithPartition (one
// partition's task).
func WindowStore[K, V any](k *KafkaStreams, name string, opts ...StoreQueryOption) (store.ReadOnlyWindowStore[K, V], error) {
	l, err := newLookup(k, name, queryOptions(opts), storeview.Window, reflect.TypeFor[K](), reflect.TypeFor[V]())
	if err != nil {
		return nil, err
	}
	c := &compositeWindow[K, V]{l: l, view: storeview.ReadOnlyWindow[K, V]}
	if _, err := c.stores(); err != nil {
		return nil, l.notReady(err)
	}
	return c, nil
}

// TimestampedWindowStore returns a read-only view of the timestamped window store name (the
// DSL's windowed aggregations), keys K and values *store.ValueAndTimestamp[V] (the aggregate
// and the timestamp of the record that last updated it, ms), across the instance's local
// active tasks. It behaves as WindowStore otherwise, errors included. Java:
// QueryableStoreTypes.timestampedWindowStore().
func TimestampedWindowStore[K, V any](k *KafkaStreams, name string, opts ...StoreQueryOption) (store.ReadOnlyWindowStore[K, *store.ValueAndTimestamp[V]], error) {
	l, err := newLookup(k, name, queryOptions(opts), storeview.TimestampedWindow, reflect.TypeFor[K](), reflect.TypeFor[V]())
	if err != nil {
		return nil, err
	}
	c := &compositeWindow[K, *store.ValueAndTimestamp[V]]{l: l, view: storeview.ReadOnlyTimestampedWindow[K, V]}
	if _, err := c.stores(); err != nil {
		return nil, l.notReady(err)
	}
	return c, nil
}

// SessionStore returns a read-only view of the session store name, keys K and values V (the
// DSL's session-windowed aggregations: a session Count by string keys is
// SessionStore[string, int64]), across the instance's local active tasks. Java:
// QueryableStoreTypes.sessionStore(), a CompositeReadOnlySessionStore. Sessions are
// serde.Windowed keys whose window is [start, end] in epoch ms, both inclusive.
//
// FetchSession and the key's lookups (FindSessions, Fetch(key) and their Backward forms) read
// the task holding the key; the range lookups (FindSessionsRange, FetchRange and their Backward
// forms) give each local task's sessions in turn. Reads, memory and errors are as for
// WindowStore.
func SessionStore[K, V any](k *KafkaStreams, name string, opts ...StoreQueryOption) (store.ReadOnlySessionStore[K, V], error) {
	l, err := newLookup(k, name, queryOptions(opts), storeview.Session, reflect.TypeFor[K](), reflect.TypeFor[V]())
	if err != nil {
		return nil, err
	}
	c := &compositeSession[K, V]{l: l, view: storeview.ReadOnlySession[K, V]}
	if _, err := c.stores(); err != nil {
		return nil, l.notReady(err)
	}
	return c, nil
}

// lookup finds a store's local tasks for a view of kind want with the requested key and value
// types (for a timestamped view, the plain value type).
type lookup struct {
	k    *KafkaStreams
	name string
	q    storeQuery
	want storeview.Kind
	// keyType and valueType are the DSL store's declared types (nil for Processor API stores).
	keyType, valueType reflect.Type
	reqKey, reqValue   reflect.Type
}

func newLookup(k *KafkaStreams, name string, q storeQuery, want storeview.Kind, key, value reflect.Type) (lookup, error) {
	st := topology.Of(k.topology).Store(name)
	if st == nil {
		return lookup{}, fmt.Errorf("kstreams: %w: %q", processor.ErrUnknownStore, name)
	}
	return lookup{k: k, name: name, q: q, want: want, keyType: st.KeyType, valueType: st.ValueType, reqKey: key, reqValue: value}, nil
}

// notReady turns a lookup failure into the view's error: while the store is not available the
// declared types still refuse a view of the wrong types.
func (l lookup) notReady(err error) error {
	if errors.Is(err, ErrStoreNotAvailable) {
		if derr := l.check(nil); derr != nil {
			return derr
		}
	}
	return err
}

// check checks the requested types against the DSL store's declared ones (and, given a local
// store s, its kind); nil for Processor API stores, whose type the view itself checks.
func (l lookup) check(s processor.StateStore) error {
	if l.keyType == nil || l.valueType == nil {
		return nil
	}
	if s == nil {
		return storeview.CheckTypes(l.name, "", l.keyType, l.valueType, l.want, l.reqKey, l.reqValue)
	}
	have := storeview.KindOf(s)
	if !storeview.Fits(have, l.want) {
		return storeview.MismatchTypes(l.name, s, l.keyType, l.valueType, l.want, l.reqKey, l.reqValue)
	}
	return storeview.CheckTypes(l.name, have, l.keyType, l.valueType, l.want, l.reqKey, l.reqValue)
}

// taskView is one task's store seen as S, and the way to read it safely.
type taskView[S any] struct {
	s S
	q runtime.QueryableStore
}

// read runs f on the store; ErrStoreNotAvailable when the task moved away meanwhile.
func (t taskView[S]) read(name string, f func(S)) error {
	if !t.q.Read(func() { f(t.s) }) {
		return fmt.Errorf("%w: %q: its task migrated or closed; look the store up again", ErrStoreNotAvailable, name)
	}
	return nil
}

// localViews returns the store's local active tasks, by task id, each viewed with view.
func localViews[S any](l lookup, view func(processor.StateStore) (S, bool)) ([]taskView[S], error) {
	if st := l.k.State(); st != StateRunning && st != StateRebalancing {
		return nil, fmt.Errorf("%w: %q: the instance is %s", ErrStoreNotAvailable, l.name, st)
	}
	if l.k.runtime() == nil {
		return nil, fmt.Errorf("%w: %q", ErrStoreNotAvailable, l.name)
	}
	byTask := l.k.queryStores(l.name, l.q)
	ids := make([]processor.TaskID, 0, len(byTask))
	for id := range byTask {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].Subtopology != ids[j].Subtopology {
			return ids[i].Subtopology < ids[j].Subtopology
		}
		return ids[i].Partition < ids[j].Partition
	})
	var out []taskView[S]
	for _, id := range ids {
		q := byTask[id]
		if err := l.check(q.Store); err != nil {
			return nil, err
		}
		s, ok := view(q.Store)
		if !ok {
			return nil, storeview.MismatchTypes(l.name, q.Store, l.keyType, l.valueType, l.want, l.reqKey, l.reqValue)
		}
		out = append(out, taskView[S]{s: s, q: q})
	}
	if len(out) == 0 {
		return nil, noLocalTask(l.name, l.q)
	}
	return out, nil
}

// first returns the first task's answer that has one (a key lives in one task).
func first[S, V any](name string, ts []taskView[S], get func(S) (V, bool, error)) (V, bool, error) {
	var zero V
	for _, t := range ts {
		var v V
		var ok bool
		var err error
		if rerr := t.read(name, func(s S) { v, ok, err = get(s) }); rerr != nil {
			return zero, false, rerr
		}
		if err != nil || ok {
			return v, ok, err
		}
	}
	return zero, false, nil
}

// compositeWindow is the read-only window view over the local tasks' stores. Java:
// CompositeReadOnlyWindowStore.
type compositeWindow[K, V any] struct {
	l    lookup
	view func(processor.StateStore) (store.ReadOnlyWindowStore[K, V], bool)
}

func (c *compositeWindow[K, V]) stores() ([]taskView[store.ReadOnlyWindowStore[K, V]], error) {
	return localViews(c.l, c.view)
}

type windowView[K, V any] = store.ReadOnlyWindowStore[K, V]

// scanWindows is the scan of a window view resumed after a raw key; false when the view
// cannot scan.
func scanWindows[K, V any](s windowView[K, V], scan storeapi.WindowScan[K], after []byte) (storeapi.RawKeyIterator[serde.Windowed[K], V], bool) {
	sc, ok := s.(storeapi.WindowScanner[K, V])
	if !ok {
		return nil, false
	}
	scan.After = after
	return sc.ScanWindows(scan)
}

// times is the iterator of a key's windows (scan of kind storeapi.WindowScanKey, or open when
// the store cannot scan): the first task with entries, in chunks, keyed by window start.
func (c *compositeWindow[K, V]) times(scan storeapi.WindowScan[K], open func(windowView[K, V]) store.KeyValueIterator[int64, V]) store.KeyValueIterator[int64, V] {
	ts, err := c.stores()
	return newChunkIter(c.l.name, ts, err, true, func(s windowView[K, V], after []byte) (storeapi.RawKeyIterator[int64, V], bool) {
		it, ok := scanWindows(s, scan, after)
		if !ok {
			return nil, false
		}
		return &startKeys[K, V]{it}, true
	}, open)
}

// windowed is the iterator of a range or all-key scan (or open when the store cannot scan):
// every task in turn, in chunks.
func (c *compositeWindow[K, V]) windowed(scan storeapi.WindowScan[K], open func(windowView[K, V]) store.KeyValueIterator[serde.Windowed[K], V]) store.KeyValueIterator[serde.Windowed[K], V] {
	ts, err := c.stores()
	return newChunkIter(c.l.name, ts, err, false, func(s windowView[K, V], after []byte) (storeapi.RawKeyIterator[serde.Windowed[K], V], bool) {
		return scanWindows(s, scan, after)
	}, open)
}

// startKeys is a window scan's iterator keyed by window start (FetchTimeRange's keys).
type startKeys[K, V any] struct {
	storeapi.RawKeyIterator[serde.Windowed[K], V]
}

func (s *startKeys[K, V]) Key() int64 { return s.RawKeyIterator.Key().Window.Start }

// Fetch implements store.ReadOnlyWindowStore: the key's window starting at windowStart.
func (c *compositeWindow[K, V]) Fetch(key K, windowStart int64) (V, bool, error) {
	ts, err := c.stores()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return first(c.l.name, ts, func(s windowView[K, V]) (V, bool, error) { return s.Fetch(key, windowStart) })
}

// FetchTimeRange implements store.ReadOnlyWindowStore: the key's windows starting in
// [timeFrom, timeTo], by start. Java: fetch(key, timeFrom, timeTo).
func (c *compositeWindow[K, V]) FetchTimeRange(key K, timeFrom, timeTo int64) store.KeyValueIterator[int64, V] {
	return c.times(storeapi.WindowScan[K]{Kind: storeapi.WindowScanKey, Key: key, TimeFrom: timeFrom, TimeTo: timeTo}, func(s windowView[K, V]) store.KeyValueIterator[int64, V] {
		return s.FetchTimeRange(key, timeFrom, timeTo)
	})
}

// BackwardFetchTimeRange implements store.ReadOnlyWindowStore. Java: backwardFetch(key, from, to).
func (c *compositeWindow[K, V]) BackwardFetchTimeRange(key K, timeFrom, timeTo int64) store.KeyValueIterator[int64, V] {
	return c.times(storeapi.WindowScan[K]{Kind: storeapi.WindowScanKey, Key: key, TimeFrom: timeFrom, TimeTo: timeTo, Reverse: true}, func(s windowView[K, V]) store.KeyValueIterator[int64, V] {
		return s.BackwardFetchTimeRange(key, timeFrom, timeTo)
	})
}

// FetchKeyRange implements store.ReadOnlyWindowStore: the windows of keyFrom..keyTo starting
// in [timeFrom, timeTo]. Java: fetch(keyFrom, keyTo, timeFrom, timeTo).
func (c *compositeWindow[K, V]) FetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.windowed(storeapi.WindowScan[K]{Kind: storeapi.WindowScanRange, From: keyFrom, To: keyTo, TimeFrom: timeFrom, TimeTo: timeTo}, func(s windowView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.FetchKeyRange(keyFrom, keyTo, timeFrom, timeTo)
	})
}

// BackwardFetchKeyRange implements store.ReadOnlyWindowStore. Java: backwardFetch(keyFrom,
// keyTo, timeFrom, timeTo).
func (c *compositeWindow[K, V]) BackwardFetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.windowed(storeapi.WindowScan[K]{Kind: storeapi.WindowScanRange, From: keyFrom, To: keyTo, TimeFrom: timeFrom, TimeTo: timeTo, Reverse: true}, func(s windowView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.BackwardFetchKeyRange(keyFrom, keyTo, timeFrom, timeTo)
	})
}

// FetchAll implements store.ReadOnlyWindowStore: every window starting in [timeFrom, timeTo].
func (c *compositeWindow[K, V]) FetchAll(timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.windowed(storeapi.WindowScan[K]{Kind: storeapi.WindowScanAll, TimeFrom: timeFrom, TimeTo: timeTo}, func(s windowView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.FetchAll(timeFrom, timeTo)
	})
}

// BackwardFetchAll implements store.ReadOnlyWindowStore.
func (c *compositeWindow[K, V]) BackwardFetchAll(timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.windowed(storeapi.WindowScan[K]{Kind: storeapi.WindowScanAll, TimeFrom: timeFrom, TimeTo: timeTo, Reverse: true}, func(s windowView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.BackwardFetchAll(timeFrom, timeTo)
	})
}

// All implements store.ReadOnlyWindowStore: every window.
func (c *compositeWindow[K, V]) All() store.KeyValueIterator[serde.Windowed[K], V] {
	return c.windowed(storeapi.WindowScan[K]{Kind: storeapi.WindowScanAll, TimeFrom: math.MinInt64, TimeTo: math.MaxInt64},
		func(s windowView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] { return s.All() })
}

// BackwardAll implements store.ReadOnlyWindowStore.
func (c *compositeWindow[K, V]) BackwardAll() store.KeyValueIterator[serde.Windowed[K], V] {
	return c.windowed(storeapi.WindowScan[K]{Kind: storeapi.WindowScanAll, TimeFrom: math.MinInt64, TimeTo: math.MaxInt64, Reverse: true},
		func(s windowView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] { return s.BackwardAll() })
}

// compositeSession is the read-only session view over the local tasks' stores. Java:
// CompositeReadOnlySessionStore.
type compositeSession[K, V any] struct {
	l    lookup
	view func(processor.StateStore) (store.ReadOnlySessionStore[K, V], bool)
}

type sessionView[K, V any] = store.ReadOnlySessionStore[K, V]

func (c *compositeSession[K, V]) stores() ([]taskView[store.ReadOnlySessionStore[K, V]], error) {
	return localViews(c.l, c.view)
}

// sessions is the iterator of scan (or open when the store cannot scan), in chunks:
// firstOnly stops after the first task with entries (the key's lookups).
func (c *compositeSession[K, V]) sessions(firstOnly bool, scan storeapi.WindowScan[K], open func(sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V]) store.KeyValueIterator[serde.Windowed[K], V] {
	ts, err := c.stores()
	return newChunkIter(c.l.name, ts, err, firstOnly, func(s sessionView[K, V], after []byte) (storeapi.RawKeyIterator[serde.Windowed[K], V], bool) {
		sc, ok := s.(storeapi.SessionScanner[K, V])
		if !ok {
			return nil, false
		}
		sc2 := scan
		sc2.After = after
		return sc.ScanSessions(sc2)
	}, open)
}

// FetchSession implements store.ReadOnlySessionStore: the value of the key's session
// [sessionStart, sessionEnd]. Java: fetchSession(key, start, end).
func (c *compositeSession[K, V]) FetchSession(key K, sessionStart, sessionEnd int64) (V, bool, error) {
	ts, err := c.stores()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return first(c.l.name, ts, func(s sessionView[K, V]) (V, bool, error) {
		return s.FetchSession(key, sessionStart, sessionEnd)
	})
}

// FindSessions implements store.ReadOnlySessionStore: the key's sessions ending at or after
// earliestSessionEnd and starting at or before latestSessionStart. Java: findSessions(key,
// earliestSessionEndTime, latestSessionStartTime).
func (c *compositeSession[K, V]) FindSessions(key K, earliestSessionEnd, latestSessionStart int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.sessions(true, storeapi.WindowScan[K]{Kind: storeapi.WindowScanKey, Key: key, TimeFrom: earliestSessionEnd, TimeTo: latestSessionStart}, func(s sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.FindSessions(key, earliestSessionEnd, latestSessionStart)
	})
}

// BackwardFindSessions implements store.ReadOnlySessionStore.
func (c *compositeSession[K, V]) BackwardFindSessions(key K, earliestSessionEnd, latestSessionStart int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.sessions(true, storeapi.WindowScan[K]{Kind: storeapi.WindowScanKey, Key: key, TimeFrom: earliestSessionEnd, TimeTo: latestSessionStart, Reverse: true}, func(s sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.BackwardFindSessions(key, earliestSessionEnd, latestSessionStart)
	})
}

// FindSessionsRange implements store.ReadOnlySessionStore: FindSessions for keyFrom..keyTo.
func (c *compositeSession[K, V]) FindSessionsRange(keyFrom, keyTo K, earliestSessionEnd, latestSessionStart int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.sessions(false, storeapi.WindowScan[K]{Kind: storeapi.WindowScanRange, From: keyFrom, To: keyTo, TimeFrom: earliestSessionEnd, TimeTo: latestSessionStart}, func(s sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.FindSessionsRange(keyFrom, keyTo, earliestSessionEnd, latestSessionStart)
	})
}

// BackwardFindSessionsRange implements store.ReadOnlySessionStore.
func (c *compositeSession[K, V]) BackwardFindSessionsRange(keyFrom, keyTo K, earliestSessionEnd, latestSessionStart int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.sessions(false, storeapi.WindowScan[K]{Kind: storeapi.WindowScanRange, From: keyFrom, To: keyTo, TimeFrom: earliestSessionEnd, TimeTo: latestSessionStart, Reverse: true}, func(s sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.BackwardFindSessionsRange(keyFrom, keyTo, earliestSessionEnd, latestSessionStart)
	})
}

// Fetch implements store.ReadOnlySessionStore: every session of key. Java: fetch(key).
func (c *compositeSession[K, V]) Fetch(key K) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.sessions(true, storeapi.WindowScan[K]{Kind: storeapi.WindowScanKey, Key: key, TimeFrom: 0, TimeTo: math.MaxInt64},
		func(s sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] { return s.Fetch(key) })
}

// BackwardFetch implements store.ReadOnlySessionStore.
func (c *compositeSession[K, V]) BackwardFetch(key K) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.sessions(true, storeapi.WindowScan[K]{Kind: storeapi.WindowScanKey, Key: key, TimeFrom: 0, TimeTo: math.MaxInt64, Reverse: true}, func(s sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.BackwardFetch(key)
	})
}

// FetchRange implements store.ReadOnlySessionStore: every session of keyFrom..keyTo. Java:
// fetch(keyFrom, keyTo).
func (c *compositeSession[K, V]) FetchRange(keyFrom, keyTo K) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.sessions(false, storeapi.WindowScan[K]{Kind: storeapi.WindowScanRange, From: keyFrom, To: keyTo, TimeFrom: 0, TimeTo: math.MaxInt64}, func(s sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.FetchRange(keyFrom, keyTo)
	})
}

// BackwardFetchRange implements store.ReadOnlySessionStore.
func (c *compositeSession[K, V]) BackwardFetchRange(keyFrom, keyTo K) store.KeyValueIterator[serde.Windowed[K], V] {
	return c.sessions(false, storeapi.WindowScan[K]{Kind: storeapi.WindowScanRange, From: keyFrom, To: keyTo, TimeFrom: 0, TimeTo: math.MaxInt64, Reverse: true}, func(s sessionView[K, V]) store.KeyValueIterator[serde.Windowed[K], V] {
		return s.BackwardFetchRange(keyFrom, keyTo)
	})
}
