package store

import (
	"bytes"
	"encoding/binary"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// cachingSessionStore is the record-cache layer of a session store, between the typed layer and
// the change-logging layer, as Java's. Entries are cached under "int64 segment id ‖ session
// store key" (segment id = session end / segment interval; the session store key is
// key ‖ int64 end ‖ int64 start). Put caches a dirty entry and Remove a dirty tombstone;
// FetchSession reads the cache, then the store below; finds merge the cache with the store below
// as Java's merged session iterator does (per segment when the store below is persistent and one
// key is searched). Flushes and evictions write the entries below (a tombstone removes the
// session) and hand them to the flush listener with the session store key as key. Without a
// cache (see [storeapi.CacheContext]) it passes everything through.
// Java counterpart: org.apache.kafka.streams.state.internals.cachingSessionStore.
type cachingSessionStore struct {
	inner           SessionBytesStore
	segmentInterval int64
	ctx             storeapi.CacheContext
	cacheSlot
	listener      storeapi.CacheFlushListener[[]byte, []byte]
	sendOldValues bool
	maxObserved   int64 // largest session end put (it determines the segment)
}

var (
	_ SessionBytesStore                         = (*cachingSessionStore)(nil)
	_ storeapi.CachedStateStore[[]byte, []byte] = (*cachingSessionStore)(nil)
)

// newCachingSessionStore wraps inner with a record cache; segmentInterval (ms) is the store
// supplier's (Java: SessionStoreBuilder passes storeSupplier.segmentIntervalMs()). A value
// below 1 is taken as 1.
func newCachingSessionStore(inner SessionBytesStore, segmentInterval int64) *cachingSessionStore {
	return &cachingSessionStore{inner: inner, segmentInterval: max(segmentInterval, 1), maxObserved: -1}
}

// Inner returns the wrapped store.
func (c *cachingSessionStore) Inner() SessionBytesStore { return c.inner }

// Name returns the store name.
func (c *cachingSessionStore) Name() string { return c.inner.Name() }

// Persistent reports whether the store below is persistent.
func (c *cachingSessionStore) Persistent() bool { return c.inner.Persistent() }

// IsOpen reports whether the store is open.
func (c *cachingSessionStore) IsOpen() bool { return c.inner.IsOpen() }

// Init picks up the context's cache, if any, registers the named cache "<task id>-<store>"
// and initialises the store below.
func (c *cachingSessionStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if cc, ok := ctx.(storeapi.CacheContext); ok && cc.Cache() != nil {
		c.ctx, c.cache = cc, cc.Cache()
		c.namespace = cache.NameSpace(ctx.TaskID().String(), c.Name())
		c.named = c.cache.AddDirtyEntryFlushListener(c.namespace, c.flushEntries)
	}
	return c.inner.Init(ctx, root)
}

// SetFlushListener sets the flush listener (keys are session store keys: key ‖ end ‖ start)
// and reports whether the store has an active cache.
func (c *cachingSessionStore) SetFlushListener(l storeapi.CacheFlushListener[[]byte, []byte], sendOldValues bool) bool {
	c.listener, c.sendOldValues = l, sendOldValues
	return c.cache != nil
}

func (c *cachingSessionStore) segmentID(ts int64) int64 { return ts / c.segmentInterval }

func (c *cachingSessionStore) cacheKeyIn(storeKey []byte, segmentID int64) []byte {
	out := make([]byte, 8+len(storeKey))
	binary.BigEndian.PutUint64(out, uint64(segmentID))
	copy(out[8:], storeKey)
	return out
}

func (c *cachingSessionStore) cacheKey(storeKey []byte) []byte {
	return c.cacheKeyIn(storeKey, c.segmentID(sessionSegTime(storeKey)))
}

func (c *cachingSessionStore) flushEntries(entries []cache.DirtyEntry) error {
	for _, e := range entries {
		if err := c.flushEntry(e); err != nil {
			return err
		}
	}
	return nil
}

// flushEntry is Java's CachingSessionStore.putAndMaybeForward.
func (c *cachingSessionStore) flushEntry(e cache.DirtyEntry) error {
	storeKey := e.Key[8:]
	key, start, end, err := splitSessionStoreKey(storeKey)
	if err != nil {
		return storeErr(c.Name(), "flush", err)
	}
	session := serde.Windowed[[]byte]{Key: key, Window: serde.Window{Start: start, End: end}}
	rc := e.Entry.Context()
	if c.listener == nil {
		restore := c.ctx.SetRecordContext(rc)
		defer restore()
		return c.inner.Put(session, e.NewValue)
	}
	var old []byte
	if e.NewValue == nil || c.sendOldValues {
		if old, _, err = c.inner.FetchSession(key, start, end); err != nil {
			return err
		}
	}
	if e.NewValue == nil && old == nil {
		return nil
	}
	restore := c.ctx.SetRecordContext(rc)
	defer restore()
	if err := c.inner.Put(session, e.NewValue); err != nil {
		return err
	}
	rec := storeapi.CacheFlushRecord[[]byte, []byte]{Key: storeKey, NewValue: e.NewValue, HasNewValue: e.NewValue != nil,
		Timestamp: rc.Timestamp, Headers: rc.Headers, Topic: rc.Topic, Partition: rc.Partition, Offset: rc.Offset}
	if c.sendOldValues && old != nil {
		rec.OldValue, rec.HasOldValue = old, true
	}
	return c.listener(rec)
}

// Put caches the session's aggregate (nil: a tombstone) as a dirty entry.
func (c *cachingSessionStore) Put(session serde.Windowed[[]byte], value []byte) error {
	if c.cache == nil {
		return c.inner.Put(session, value)
	}
	if !c.IsOpen() {
		return storeErr(c.Name(), "put", ErrStoreClosed)
	}
	storeKey := storeapi.SessionStoreKey(session.Key, session.Window.Start, session.Window.End)
	rc := c.ctx.CurrentRecordContext()
	rc.Headers = rc.Headers.Clone()
	if err := c.named.Put(c.cacheKey(storeKey), cache.NewEntry(bytes.Clone(value), rc, true)); err != nil {
		return storeErr(c.Name(), "put", err)
	}
	c.maxObserved = max(c.maxObserved, session.Window.End)
	return nil
}

// Remove caches a tombstone for the session.
func (c *cachingSessionStore) Remove(session serde.Windowed[[]byte]) error {
	if c.cache == nil {
		return c.inner.Remove(session)
	}
	return c.Put(session, nil)
}

// FetchSession returns the aggregate of the session with exactly this start and end, from the
// cache or below.
func (c *cachingSessionStore) FetchSession(key []byte, start, end int64) ([]byte, bool, error) {
	if c.cache == nil {
		return c.inner.FetchSession(key, start, end)
	}
	if !c.IsOpen() {
		return nil, false, storeErr(c.Name(), "fetchSession", ErrStoreClosed)
	}
	if e := c.named.Get(c.cacheKey(storeapi.SessionStoreKey(key, start, end))); e != nil {
		return e.Value(), e.Value() != nil, nil
	}
	return c.inner.FetchSession(key, start, end)
}

// sessionLowerRange is Java's SessionKeySchema.lowerRange: key ‖ 16 zero bytes.
func sessionLowerRange(key []byte) []byte {
	return append(bytes.Clone(key), make([]byte, sessionSuffixLen)...)
}

// sessionUpperRange is Java's SessionKeySchema.upperRange: OrderedBytes.upperRange with the
// suffix int64 MaxInt64 (end) ‖ int64 to (start).
func sessionUpperRange(key []byte, to int64) []byte {
	suffix := make([]byte, sessionSuffixLen)
	binary.BigEndian.PutUint64(suffix, uint64(math.MaxInt64))
	binary.BigEndian.PutUint64(suffix[8:], uint64(to))
	i := 0
	for i < len(key) && (i < 1 || key[i] >= suffix[0]) {
		i++
	}
	return append(bytes.Clone(key[:i]), suffix...)
}

// sessionFilter is Java's SessionKeySchema.hasNextCondition over cache keys.
type sessionFilter struct {
	in                      cacheCursor
	keyFrom, keyTo          []byte
	earliestEnd, latestStrt int64
}

func (f *sessionFilter) HasNext() bool {
	for f.in.HasNext() {
		k, start, end, err := splitSessionStoreKey(f.in.PeekNextKey()[8:])
		if err == nil && (f.keyFrom == nil || bytes.Compare(k, f.keyFrom) >= 0) &&
			(f.keyTo == nil || bytes.Compare(k, f.keyTo) <= 0) && end >= f.earliestEnd && start <= f.latestStrt {
			return true
		}
		f.in.Next()
	}
	return false
}

func (f *sessionFilter) PeekNextKey() []byte {
	if !f.HasNext() {
		return nil
	}
	return f.in.PeekNextKey()
}

func (f *sessionFilter) PeekNext() *cache.Entry {
	if !f.HasNext() {
		return nil
	}
	return f.in.PeekNext()
}

func (f *sessionFilter) Next() ([]byte, *cache.Entry) {
	if !f.HasNext() {
		return nil, nil
	}
	return f.in.Next()
}

// newSegmentCursor is Java's CachingSessionStore.CacheIteratorWrapper (one key): segments
// from that of earliestEnd to that of the largest session end put.
func (c *cachingSessionStore) newSegmentCursor(key []byte, earliestEnd, latestStart int64, forward bool) *segmentCursor {
	s := &segmentCursor{cache: c.cache, namespace: c.namespace, interval: c.segmentInterval, forward: forward,
		refreshLast:     func() int64 { return c.segmentID(c.maxObserved) },
		segmentLastTime: func(begin int64) int64 { return begin + c.segmentInterval - 1 },
	}
	s.keyRange = func(_, lowerTime, upperTime int64) (from, to []byte) {
		return c.cacheKey(storeapi.SessionStoreKey(key, 0, max(0, lowerTime))),
			c.cacheKey(storeapi.SessionStoreKey(key, min(latestStart, upperTime), upperTime))
	}
	if forward {
		s.currentSegID = c.segmentID(earliestEnd)
		s.lastSegment = s.refreshLast()
		s.open(earliestEnd, s.segmentLastTime(s.begin()))
	} else {
		s.lastSegment = c.segmentID(earliestEnd)
		s.currentSegID = c.segmentID(c.maxObserved)
		s.open(s.begin(), min(latestStart, c.maxObserved))
	}
	return s
}

func (c *cachingSessionStore) merge(cur cacheCursor, storeIt KeyValueIterator[serde.Windowed[[]byte], []byte], forward bool) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return &mergedWindowIterator[serde.Windowed[[]byte], serde.Windowed[[]byte]]{
		cache: cur, store: &peekIter[serde.Windowed[[]byte]]{it: storeIt}, forward: forward,
		compare: func(ck []byte, sk serde.Windowed[[]byte]) int {
			if s := cmpInt64(int64(binary.BigEndian.Uint64(ck)), c.segmentID(sk.Window.End)); s != 0 {
				return s
			}
			return bytes.Compare(ck[8:], storeapi.SessionStoreKey(sk.Key, sk.Window.Start, sk.Window.End))
		},
		fromKey: func(ck []byte) (serde.Windowed[[]byte], error) {
			k, start, end, err := splitSessionStoreKey(ck[8:])
			return serde.Windowed[[]byte]{Key: k, Window: serde.Window{Start: start, End: end}}, err
		},
	}
}

func (c *cachingSessionStore) findKey(key []byte, earliestEnd, latestStart int64, forward bool) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	var storeIt KeyValueIterator[serde.Windowed[[]byte], []byte]
	if forward {
		storeIt = c.inner.FindSessions(key, earliestEnd, latestStart)
	} else {
		storeIt = c.inner.BackwardFindSessions(key, earliestEnd, latestStart)
	}
	if c.cache == nil {
		return storeIt
	}
	var cur cacheCursor
	switch {
	case c.inner.Persistent():
		cur = c.newSegmentCursor(key, earliestEnd, latestStart, forward)
	default:
		from := c.cacheKey(storeapi.SessionStoreKey(key, 0, max(0, earliestEnd)))
		to := c.cacheKey(storeapi.SessionStoreKey(key, latestStart, math.MaxInt64))
		if forward {
			cur = c.cache.Range(c.namespace, from, to)
		} else {
			cur = c.cache.ReverseRange(c.namespace, from, to)
		}
	}
	return c.merge(&sessionFilter{in: cur, keyFrom: key, keyTo: key, earliestEnd: earliestEnd, latestStrt: latestStart}, storeIt, forward)
}

func (c *cachingSessionStore) findRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64, forward bool) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if c.cache != nil && keyFrom != nil && keyTo != nil && bytes.Compare(keyFrom, keyTo) > 0 {
		return emptyIterator[serde.Windowed[[]byte], []byte]()
	}
	var storeIt KeyValueIterator[serde.Windowed[[]byte], []byte]
	if forward {
		storeIt = c.inner.FindSessionsRange(keyFrom, keyTo, earliestEnd, latestStart)
	} else {
		storeIt = c.inner.BackwardFindSessionsRange(keyFrom, keyTo, earliestEnd, latestStart)
	}
	if c.cache == nil {
		return storeIt
	}
	var from, to []byte
	if keyFrom != nil {
		from = c.cacheKey(sessionLowerRange(keyFrom))
	}
	if keyTo != nil {
		to = c.cacheKey(sessionUpperRange(keyTo, latestStart))
	}
	var cur cacheCursor
	if forward {
		cur = c.cache.Range(c.namespace, from, to)
	} else {
		cur = c.cache.ReverseRange(c.namespace, from, to)
	}
	return c.merge(&sessionFilter{in: cur, keyFrom: keyFrom, keyTo: keyTo, earliestEnd: earliestEnd, latestStrt: latestStart}, storeIt, forward)
}

// FindSessions iterates key's sessions with end >= earliestEnd and start <= latestStart,
// merging cached sessions with the store's.
func (c *cachingSessionStore) FindSessions(key []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.findKey(key, earliestEnd, latestStart, true)
}

// BackwardFindSessions is FindSessions in reverse order.
func (c *cachingSessionStore) BackwardFindSessions(key []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.findKey(key, earliestEnd, latestStart, false)
}

// FindSessionsRange is FindSessions for the keys in [keyFrom, keyTo] (nil: unbounded).
func (c *cachingSessionStore) FindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.findRange(keyFrom, keyTo, earliestEnd, latestStart, true)
}

// BackwardFindSessionsRange is FindSessionsRange in reverse order.
func (c *cachingSessionStore) BackwardFindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.findRange(keyFrom, keyTo, earliestEnd, latestStart, false)
}

// Fetch iterates every session of key (Java: findSessions(key, 0, Long.MAX_VALUE)).
func (c *cachingSessionStore) Fetch(key []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if c.cache == nil {
		return c.inner.Fetch(key)
	}
	return c.findKey(key, 0, math.MaxInt64, true)
}

// BackwardFetch is Fetch in reverse order.
func (c *cachingSessionStore) BackwardFetch(key []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if c.cache == nil {
		return c.inner.BackwardFetch(key)
	}
	return c.findKey(key, 0, math.MaxInt64, false)
}

// FetchRange iterates every session of the keys in [keyFrom, keyTo].
func (c *cachingSessionStore) FetchRange(keyFrom, keyTo []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if c.cache == nil {
		return c.inner.FetchRange(keyFrom, keyTo)
	}
	return c.findRange(keyFrom, keyTo, 0, math.MaxInt64, true)
}

// BackwardFetchRange is FetchRange in reverse order.
func (c *cachingSessionStore) BackwardFetchRange(keyFrom, keyTo []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if c.cache == nil {
		return c.inner.BackwardFetchRange(keyFrom, keyTo)
	}
	return c.findRange(keyFrom, keyTo, 0, math.MaxInt64, false)
}

// FlushCache flushes the cache (entries written below and handed to the listener).
func (c *cachingSessionStore) FlushCache() error { return c.flushCache() }

// ClearCache drops this store's cached entries without flushing them.
func (c *cachingSessionStore) ClearCache() error { c.clearCache(); return nil }

// Flush flushes the cache, then the store below.
func (c *cachingSessionStore) Flush() error { return c.flushThen(c.inner) }

// Close flushes the cache, drops the named cache and closes the store below (all steps run;
// errors joined).
func (c *cachingSessionStore) Close() error { return c.closeThen(c.inner) }

// SetFlushListener registers l on the session caching layer below, if any: the flushed key is
// decoded into a Windowed[K] with the session's start and end, the values with the store's
// value serde. It reports whether that layer has an active cache.
// Java: MeteredSessionStore.setFlushListener.
func (m *meteredSessionStore[K, V]) SetFlushListener(l storeapi.CacheFlushListener[serde.Windowed[K], V], sendOldValues bool) bool {
	cs, ok := m.inner.(*cachingSessionStore)
	if !ok {
		return false
	}
	return cs.SetFlushListener(adaptFlushListener(l,
		func(b []byte) (serde.Windowed[K], error) {
			kb, start, end, err := splitSessionStoreKey(b)
			if err != nil {
				return serde.Windowed[K]{}, storeErr(m.Name(), "flush", err)
			}
			k, err := m.s.decodeKey("flush", kb)
			return serde.Windowed[K]{Key: k, Window: serde.Window{Start: start, End: end}}, err
		},
		func(b []byte) (V, error) {
			v, _, err := m.s.decodeValue("flush", b)
			return v, err
		}), sendOldValues)
}

// FlushCache flushes the session caching layer below, if any. Java: flushCache().
func (m *meteredSessionStore[K, V]) FlushCache() error {
	if cs, ok := m.inner.(*cachingSessionStore); ok {
		return cs.FlushCache()
	}
	return nil
}

// ClearCache clears the session caching layer below, if any. Java: clearCache().
func (m *meteredSessionStore[K, V]) ClearCache() error {
	if cs, ok := m.inner.(*cachingSessionStore); ok {
		return cs.ClearCache()
	}
	return nil
}
