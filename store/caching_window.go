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

// cachingWindowStore is the record-cache layer of a window store, between the typed layer and
// the change-logging layer, as Java's. Entries are cached under the key
// "int64 segment id ‖ window store key" (segment id = window start / segment interval; the
// window store key is key ‖ int64 start ‖ int32 0), so their size counts those 8 extra bytes
// as in Java. Put caches a dirty entry; Fetch reads the cache, then the store below (a read
// never fills the cache); range fetches merge the cache with the store below as Java's merged
// iterators do (per segment when the store below is persistent, one cache range otherwise).
// Flushes and evictions write the entries below and hand them to the flush listener with the
// window store key as key. Without a cache (see [storeapi.CacheContext]) it passes everything through.
// Java counterpart: org.apache.kafka.streams.state.internals.cachingWindowStore.
type cachingWindowStore struct {
	inner           WindowBytesStore
	windowSize      int64
	segmentInterval int64
	ctx             storeapi.CacheContext
	cacheSlot
	listener      storeapi.CacheFlushListener[[]byte, []byte]
	sendOldValues bool
	maxObserved   int64
}

var (
	_ WindowBytesStore                          = (*cachingWindowStore)(nil)
	_ storeapi.CachedStateStore[[]byte, []byte] = (*cachingWindowStore)(nil)
)

// newCachingWindowStore wraps inner with a record cache; windowSize and segmentInterval (ms) are
// the store supplier's (Java: WindowStoreBuilder passes storeSupplier.windowSize() and
// segmentIntervalMs(); Java's in-memory window supplier reports a segment interval of 1).
// A segmentInterval below 1 is taken as 1.
func newCachingWindowStore(inner WindowBytesStore, windowSize, segmentInterval int64) *cachingWindowStore {
	return &cachingWindowStore{inner: inner, windowSize: windowSize, segmentInterval: max(segmentInterval, 1), maxObserved: -1}
}

// Inner returns the wrapped store.
func (c *cachingWindowStore) Inner() WindowBytesStore { return c.inner }

// Name returns the store name.
func (c *cachingWindowStore) Name() string { return c.inner.Name() }

// Persistent reports whether the store below is persistent.
func (c *cachingWindowStore) Persistent() bool { return c.inner.Persistent() }

// IsOpen reports whether the store is open.
func (c *cachingWindowStore) IsOpen() bool { return c.inner.IsOpen() }

// Init picks up the context's cache, if any, registers the named cache "<task id>-<store>"
// and initialises the store below.
func (c *cachingWindowStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if cc, ok := ctx.(storeapi.CacheContext); ok && cc.Cache() != nil {
		c.ctx, c.cache = cc, cc.Cache()
		c.namespace = cache.NameSpace(ctx.TaskID().String(), c.Name())
		c.named = c.cache.AddDirtyEntryFlushListener(c.namespace, c.flushEntries)
	}
	return c.inner.Init(ctx, root)
}

// SetFlushListener sets the flush listener (keys are window store keys: key ‖ start ‖ seqnum)
// and reports whether the store has an active cache.
func (c *cachingWindowStore) SetFlushListener(l storeapi.CacheFlushListener[[]byte, []byte], sendOldValues bool) bool {
	c.listener, c.sendOldValues = l, sendOldValues
	return c.cache != nil
}

func (c *cachingWindowStore) segmentID(ts int64) int64 { return ts / c.segmentInterval }

// cacheKey is Java's SegmentedCacheFunction.cacheKey: int64 segment id of the store key's
// window start ‖ store key.
func (c *cachingWindowStore) cacheKey(storeKey []byte) []byte {
	return c.cacheKeyIn(storeKey, c.segmentID(windowSegTime(storeKey)))
}

func (c *cachingWindowStore) cacheKeyIn(storeKey []byte, segmentID int64) []byte {
	out := make([]byte, 8+len(storeKey))
	binary.BigEndian.PutUint64(out, uint64(segmentID))
	copy(out[8:], storeKey)
	return out
}

func (c *cachingWindowStore) flushEntries(entries []cache.DirtyEntry) error {
	for _, e := range entries {
		if err := c.flushEntry(e); err != nil {
			return err
		}
	}
	return nil
}

// flushEntry is Java's CachingWindowStore.putAndMaybeForward.
func (c *cachingWindowStore) flushEntry(e cache.DirtyEntry) error {
	storeKey := e.Key[8:]
	key, start, _, err := splitWindowStoreKey(storeKey)
	if err != nil {
		return storeErr(c.Name(), "flush", err)
	}
	rc := e.Entry.Context()
	if c.listener == nil {
		restore := c.ctx.SetRecordContext(rc)
		defer restore()
		return c.inner.Put(key, e.NewValue, start)
	}
	var old []byte
	if e.NewValue == nil || c.sendOldValues {
		if old, _, err = c.inner.Fetch(key, start); err != nil {
			return err
		}
	}
	if e.NewValue == nil && old == nil {
		return nil
	}
	restore := c.ctx.SetRecordContext(rc)
	defer restore()
	if err := c.inner.Put(key, e.NewValue, start); err != nil {
		return err
	}
	rec := storeapi.CacheFlushRecord[[]byte, []byte]{Key: storeKey, NewValue: e.NewValue, HasNewValue: e.NewValue != nil,
		Timestamp: rc.Timestamp, Headers: rc.Headers, Topic: rc.Topic, Partition: rc.Partition, Offset: rc.Offset}
	if c.sendOldValues && old != nil {
		rec.OldValue, rec.HasOldValue = old, true
	}
	return c.listener(rec)
}

// Put caches value for key in the window starting at windowStart as a dirty entry.
func (c *cachingWindowStore) Put(key, value []byte, windowStart int64) error {
	if c.cache == nil {
		return c.inner.Put(key, value, windowStart)
	}
	if !c.IsOpen() {
		return storeErr(c.Name(), "put", ErrStoreClosed)
	}
	storeKey := storeapi.WindowStoreKey(key, windowStart, 0)
	rc := c.ctx.CurrentRecordContext()
	rc.Headers = rc.Headers.Clone()
	if err := c.named.Put(c.cacheKey(storeKey), cache.NewEntry(bytes.Clone(value), rc, true)); err != nil {
		return storeErr(c.Name(), "put", err)
	}
	c.maxObserved = max(c.maxObserved, windowStart)
	return nil
}

// Fetch returns the value of key's window starting at windowStart, from the cache or below.
func (c *cachingWindowStore) Fetch(key []byte, windowStart int64) ([]byte, bool, error) {
	if c.cache == nil {
		return c.inner.Fetch(key, windowStart)
	}
	if !c.IsOpen() {
		return nil, false, storeErr(c.Name(), "fetch", ErrStoreClosed)
	}
	if e := c.named.Get(c.cacheKey(storeapi.WindowStoreKey(key, windowStart, 0))); e != nil {
		return e.Value(), e.Value() != nil, nil
	}
	return c.inner.Fetch(key, windowStart)
}

// cacheCursor is the cache side of a merged iterator (Java's PeekingKeyValueIterator over
// LRUCacheEntry): *cache.Iterator, the segment-wise wrapper and the filter implement it.
type cacheCursor interface {
	HasNext() bool
	PeekNextKey() []byte
	PeekNext() *cache.Entry
	Next() ([]byte, *cache.Entry)
}

// segmentCursor is the CacheIteratorWrapper of Java's CachingWindowStore and
// CachingSessionStore: for a persistent store below it walks the cache one segment at a time,
// each segment through its own cache range (so only the entries in those ranges are read and
// become most recently used, as in Java).
type segmentCursor struct {
	cache           *cache.ThreadCache
	namespace       string
	interval        int64
	forward         bool
	lastSegment     int64
	currentSegID    int64
	refreshLast     func() int64            // forward: the last segment, re-read at every step
	segmentLastTime func(begin int64) int64 // the last time of the segment starting at begin
	keyRange        func(segID, lowerTime, upperTime int64) (from, to []byte)
	current         *cache.Iterator
}

func (s *segmentCursor) begin() int64 { return s.currentSegID * s.interval }

func (s *segmentCursor) open(lowerTime, upperTime int64) {
	from, to := s.keyRange(s.currentSegID, lowerTime, upperTime)
	if s.forward {
		s.current = s.cache.Range(s.namespace, from, to)
	} else {
		s.current = s.cache.ReverseRange(s.namespace, from, to)
	}
}

func (s *segmentCursor) nextSegment() {
	if s.forward {
		s.currentSegID++
		s.lastSegment = s.refreshLast()
		if s.currentSegID > s.lastSegment {
			s.current = nil
			return
		}
	} else {
		s.currentSegID--
		if s.currentSegID < s.lastSegment {
			s.current = nil
			return
		}
	}
	s.open(s.begin(), s.segmentLastTime(s.begin()))
}

func (s *segmentCursor) HasNext() bool {
	if s.current == nil {
		return false
	}
	for !s.current.HasNext() {
		s.nextSegment()
		if s.current == nil {
			return false
		}
	}
	return true
}

func (s *segmentCursor) PeekNextKey() []byte {
	if !s.HasNext() {
		return nil
	}
	return s.current.PeekNextKey()
}

func (s *segmentCursor) PeekNext() *cache.Entry {
	if !s.HasNext() {
		return nil
	}
	return s.current.PeekNext()
}

func (s *segmentCursor) Next() ([]byte, *cache.Entry) {
	if !s.HasNext() {
		return nil, nil
	}
	return s.current.Next()
}

// newSegmentCursor is Java's CachingWindowStore.CacheIteratorWrapper: segments from that of
// timeFrom to that of min(timeTo, max observed window start).
func (c *cachingWindowStore) newSegmentCursor(keyFrom, keyTo []byte, timeFrom, timeTo int64, forward bool) *segmentCursor {
	s := &segmentCursor{cache: c.cache, namespace: c.namespace, interval: c.segmentInterval, forward: forward,
		refreshLast:     func() int64 { return c.segmentID(min(timeTo, c.maxObserved)) },
		segmentLastTime: func(begin int64) int64 { return min(timeTo, begin+c.segmentInterval-1) },
	}
	s.keyRange = func(segID, lowerTime, upperTime int64) (from, to []byte) {
		if keyFrom != nil && keyTo != nil && bytes.Equal(keyFrom, keyTo) {
			return c.cacheKey(storeapi.WindowStoreKey(keyFrom, max(0, lowerTime), 0)),
				c.cacheKey(storeapi.WindowStoreKey(keyTo, upperTime, math.MaxInt32))
		}
		if keyFrom != nil {
			from = c.cacheKeyIn(windowLowerRange(keyFrom), segID)
		}
		if keyTo != nil {
			to = c.cacheKeyIn(windowUpperRange(keyTo, timeTo), segID)
		}
		return from, to
	}
	if forward {
		s.lastSegment = s.refreshLast()
		s.currentSegID = c.segmentID(timeFrom)
		s.open(timeFrom, s.segmentLastTime(s.begin()))
	} else {
		s.currentSegID = c.segmentID(min(timeTo, c.maxObserved))
		s.lastSegment = c.segmentID(timeFrom)
		s.open(s.begin(), min(timeTo, c.maxObserved))
	}
	return s
}

// windowLowerRange is Java's WindowKeySchema.lowerRange: key ‖ 12 zero bytes.
func windowLowerRange(key []byte) []byte {
	return append(bytes.Clone(key), make([]byte, windowSuffixLen)...)
}

// windowUpperRange is Java's WindowKeySchema.upperRange (OrderedBytes.upperRange with the
// suffix int64 to ‖ int32 MaxInt32): when the suffix's first byte is not 0, only the key's
// first byte and the following bytes >= that byte are kept before the suffix.
func windowUpperRange(key []byte, to int64) []byte {
	suffix := make([]byte, windowSuffixLen)
	binary.BigEndian.PutUint64(suffix, uint64(to))
	binary.BigEndian.PutUint32(suffix[8:], math.MaxInt32)
	first := suffix[0]
	if first == 0 {
		return append(bytes.Clone(key), suffix...)
	}
	i := 0
	for i < len(key) && (i < 1 || key[i] >= first) {
		i++
	}
	return append(bytes.Clone(key[:i]), suffix...)
}

// filteredCursor is Java's FilteredCacheIterator with WindowKeySchema.hasNextCondition: it skips
// cache entries whose key or window start is outside the bounds (nil key bounds: unbounded).
type filteredCursor struct {
	in             cacheCursor
	keyFrom, keyTo []byte
	from, to       int64
}

func (f *filteredCursor) HasNext() bool {
	for f.in.HasNext() {
		k, ts, _, err := splitWindowStoreKey(f.in.PeekNextKey()[8:])
		if err == nil && (f.keyFrom == nil || bytes.Compare(k, f.keyFrom) >= 0) &&
			(f.keyTo == nil || bytes.Compare(k, f.keyTo) <= 0) && ts >= f.from && ts <= f.to {
			return true
		}
		f.in.Next()
	}
	return false
}

func (f *filteredCursor) PeekNextKey() []byte {
	if !f.HasNext() {
		return nil
	}
	return f.in.PeekNextKey()
}

func (f *filteredCursor) PeekNext() *cache.Entry {
	if !f.HasNext() {
		return nil
	}
	return f.in.PeekNext()
}

func (f *filteredCursor) Next() ([]byte, *cache.Entry) {
	if !f.HasNext() {
		return nil, nil
	}
	return f.in.Next()
}

// peekIter adds a one-entry look-ahead to a KeyValueIterator.
type peekIter[K any] struct {
	it     KeyValueIterator[K, []byte]
	peeked bool
	has    bool
	key    K
	val    []byte
}

func (p *peekIter[K]) hasNext() bool {
	if !p.peeked {
		p.has = p.it.Next()
		if p.has {
			p.key, p.val = p.it.Key(), p.it.Value()
		}
		p.peeked = true
	}
	return p.has
}

func (p *peekIter[K]) next() (K, []byte) {
	p.hasNext()
	p.peeked = false
	return p.key, p.val
}

// mergedWindowIterator merges a cache cursor with a store iterator (Java's
// AbstractMergedSortedCacheStoreIterator with the window stores' key comparisons); the same
// tombstone rule as the key-value merge applies (see mergedCacheIterator.hasNext).
type mergedWindowIterator[SK, K any] struct {
	cache   cacheCursor
	store   *peekIter[SK]
	forward bool
	compare func(cacheKey []byte, storeKey SK) int
	fromKey func(cacheKey []byte) (K, error)
	key     K
	val     []byte
	closed  bool
	err     error
}

func (m *mergedWindowIterator[SK, K]) hasNext() bool {
	for m.cache.HasNext() && m.cache.PeekNext().Value() == nil {
		if !m.store.hasNext() {
			m.cache.Next()
			continue
		}
		switch cmp := m.compare(m.cache.PeekNextKey(), m.store.key); {
		case cmp == 0:
			m.store.next()
			m.cache.Next()
		case cmp < 0:
			m.cache.Next()
		default:
			return true
		}
	}
	return m.cache.HasNext() || m.store.hasNext()
}

func (m *mergedWindowIterator[SK, K]) fromCache() bool {
	ck, e := m.cache.Next()
	k, err := m.fromKey(ck)
	if err != nil {
		m.err = err
		return false
	}
	m.key, m.val = k, e.Value()
	return true
}

func (m *mergedWindowIterator[SK, K]) Next() bool {
	var zero K
	m.key, m.val = zero, nil
	if m.closed {
		if m.err == nil {
			m.err = ErrIteratorClosed
		}
		return false
	}
	if m.err != nil || !m.hasNext() {
		return false
	}
	fromStore := func() bool {
		sk, v := m.store.next()
		m.key, m.val = m.storeKey(sk), v
		return true
	}
	switch {
	case !m.cache.HasNext():
		return fromStore()
	case !m.store.hasNext():
		return m.fromCache()
	}
	cmp := m.compare(m.cache.PeekNextKey(), m.store.key)
	if !m.forward {
		cmp = -cmp
	}
	switch {
	case cmp > 0:
		return fromStore()
	case cmp < 0:
		return m.fromCache()
	}
	m.store.next()
	return m.fromCache()
}

// storeKey converts a store key to the output key; both key types are the same here.
func (m *mergedWindowIterator[SK, K]) storeKey(sk SK) K { return any(sk).(K) }

func (m *mergedWindowIterator[SK, K]) Key() K        { return m.key }
func (m *mergedWindowIterator[SK, K]) Value() []byte { return m.val }
func (m *mergedWindowIterator[SK, K]) Err() error {
	if m.err != nil {
		return m.err
	}
	return m.store.it.Err()
}
func (m *mergedWindowIterator[SK, K]) Close() error {
	m.closed = true
	return m.store.it.Close()
}

// cacheTimestamp is the window start of a cache key.
func cacheTimestamp(cacheKey []byte) (int64, error) {
	_, ts, _, err := splitWindowStoreKey(cacheKey[8:])
	return ts, err
}

func (c *cachingWindowStore) fetchKey(key []byte, timeFrom, timeTo int64, forward bool) KeyValueIterator[int64, []byte] {
	var storeIt KeyValueIterator[int64, []byte]
	if forward {
		storeIt = c.inner.FetchTimeRange(key, timeFrom, timeTo)
	} else {
		storeIt = c.inner.BackwardFetchTimeRange(key, timeFrom, timeTo)
	}
	if c.cache == nil {
		return storeIt
	}
	var cur cacheCursor
	switch {
	case c.inner.Persistent():
		cur = c.newSegmentCursor(key, key, timeFrom, timeTo, forward)
	case forward:
		cur = c.cache.Range(c.namespace, c.cacheKey(storeapi.WindowStoreKey(key, max(0, timeFrom), 0)), c.cacheKey(storeapi.WindowStoreKey(key, timeTo, math.MaxInt32)))
	default:
		cur = c.cache.ReverseRange(c.namespace, c.cacheKey(storeapi.WindowStoreKey(key, max(0, timeFrom), 0)), c.cacheKey(storeapi.WindowStoreKey(key, timeTo, math.MaxInt32)))
	}
	return &mergedWindowIterator[int64, int64]{
		cache: &filteredCursor{in: cur, keyFrom: key, keyTo: key, from: timeFrom, to: timeTo}, store: &peekIter[int64]{it: storeIt},
		forward: forward,
		compare: func(ck []byte, ts int64) int {
			ct, _ := cacheTimestamp(ck)
			return cmpInt64(ct, ts)
		},
		fromKey: cacheTimestamp,
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FetchTimeRange iterates key's windows with timeFrom <= start <= timeTo by ascending start,
// merging cached windows with the store's.
func (c *cachingWindowStore) FetchTimeRange(key []byte, timeFrom, timeTo int64) KeyValueIterator[int64, []byte] {
	return c.fetchKey(key, timeFrom, timeTo, true)
}

// BackwardFetchTimeRange is FetchTimeRange by descending start.
func (c *cachingWindowStore) BackwardFetchTimeRange(key []byte, timeFrom, timeTo int64) KeyValueIterator[int64, []byte] {
	return c.fetchKey(key, timeFrom, timeTo, false)
}

// windowedMerge merges a cache cursor with a windowed store iterator, comparing as Java's
// SegmentedCacheFunction.compareSegmentedKeys (segment id, then the window store key bytes).
func (c *cachingWindowStore) windowedMerge(cur cacheCursor, storeIt KeyValueIterator[serde.Windowed[[]byte], []byte], forward bool) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return &mergedWindowIterator[serde.Windowed[[]byte], serde.Windowed[[]byte]]{
		cache: cur, store: &peekIter[serde.Windowed[[]byte]]{it: storeIt}, forward: forward,
		compare: func(ck []byte, sk serde.Windowed[[]byte]) int {
			storeKey := storeapi.WindowStoreKey(sk.Key, sk.Window.Start, 0)
			if s := cmpInt64(int64(binary.BigEndian.Uint64(ck)), c.segmentID(sk.Window.Start)); s != 0 {
				return s
			}
			return bytes.Compare(ck[8:], storeKey)
		},
		fromKey: func(ck []byte) (serde.Windowed[[]byte], error) {
			k, ts, _, err := splitWindowStoreKey(ck[8:])
			return serde.Windowed[[]byte]{Key: k, Window: serde.Window{Start: ts, End: windowEnd(ts, c.windowSize)}}, err
		},
	}
}

func (c *cachingWindowStore) fetchRange(keyFrom, keyTo []byte, timeFrom, timeTo int64, forward bool) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if c.cache != nil && keyFrom != nil && keyTo != nil && bytes.Compare(keyFrom, keyTo) > 0 {
		return emptyIterator[serde.Windowed[[]byte], []byte]()
	}
	var storeIt KeyValueIterator[serde.Windowed[[]byte], []byte]
	if forward {
		storeIt = c.inner.FetchKeyRange(keyFrom, keyTo, timeFrom, timeTo)
	} else {
		storeIt = c.inner.BackwardFetchKeyRange(keyFrom, keyTo, timeFrom, timeTo)
	}
	if c.cache == nil {
		return storeIt
	}
	var cur cacheCursor
	if c.inner.Persistent() {
		cur = c.newSegmentCursor(keyFrom, keyTo, timeFrom, timeTo, forward)
	} else {
		var from, to []byte
		if keyFrom != nil {
			from = c.cacheKey(windowLowerRange(keyFrom))
		}
		if keyTo != nil {
			to = c.cacheKey(windowUpperRange(keyTo, timeTo))
		}
		if forward {
			cur = c.cache.Range(c.namespace, from, to)
		} else {
			cur = c.cache.ReverseRange(c.namespace, from, to)
		}
	}
	return c.windowedMerge(&filteredCursor{in: cur, keyFrom: keyFrom, keyTo: keyTo, from: timeFrom, to: timeTo}, storeIt, forward)
}

// FetchKeyRange iterates the windows of keys in [keyFrom, keyTo] (nil: unbounded) with
// timeFrom <= start <= timeTo, merging cached windows with the store's.
func (c *cachingWindowStore) FetchKeyRange(keyFrom, keyTo []byte, timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.fetchRange(keyFrom, keyTo, timeFrom, timeTo, true)
}

// BackwardFetchKeyRange is FetchKeyRange in reverse order.
func (c *cachingWindowStore) BackwardFetchKeyRange(keyFrom, keyTo []byte, timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.fetchRange(keyFrom, keyTo, timeFrom, timeTo, false)
}

func (c *cachingWindowStore) fetchAll(storeIt KeyValueIterator[serde.Windowed[[]byte], []byte], timeFrom, timeTo int64, filter, forward bool) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if c.cache == nil {
		return storeIt
	}
	var cur cacheCursor
	if forward {
		cur = c.cache.All(c.namespace)
	} else {
		cur = c.cache.ReverseAll(c.namespace)
	}
	if filter {
		cur = &filteredCursor{in: cur, from: timeFrom, to: timeTo}
	}
	return c.windowedMerge(cur, storeIt, forward)
}

// FetchAll iterates the windows of all keys with timeFrom <= start <= timeTo.
func (c *cachingWindowStore) FetchAll(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.fetchAll(c.inner.FetchAll(timeFrom, timeTo), timeFrom, timeTo, true, true)
}

// BackwardFetchAll is FetchAll in reverse order.
func (c *cachingWindowStore) BackwardFetchAll(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.fetchAll(c.inner.BackwardFetchAll(timeFrom, timeTo), timeFrom, timeTo, true, false)
}

// All iterates every window (cached ones merged; Java does not filter the cache here).
func (c *cachingWindowStore) All() KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.fetchAll(c.inner.All(), 0, 0, false, true)
}

// BackwardAll is All in reverse order.
func (c *cachingWindowStore) BackwardAll() KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.fetchAll(c.inner.BackwardAll(), 0, 0, false, false)
}

// FlushCache flushes the cache (entries written below and handed to the listener).
func (c *cachingWindowStore) FlushCache() error { return c.flushCache() }

// ClearCache drops this store's cached entries without flushing them.
func (c *cachingWindowStore) ClearCache() error { c.clearCache(); return nil }

// Flush flushes the cache, then the store below.
func (c *cachingWindowStore) Flush() error { return c.flushThen(c.inner) }

// Close flushes the cache, drops the named cache and closes the store below (all steps run;
// errors joined).
func (c *cachingWindowStore) Close() error { return c.closeThen(c.inner) }

// SetFlushListener registers l on the window caching layer below, if any: the flushed key is
// decoded into a Windowed[K] (window end = start + the store's window size) and the values with
// the store's value serde. It reports whether that layer has an active cache.
// Java: MeteredWindowStore.setFlushListener.
func (m *meteredWindowStore[K, V]) SetFlushListener(l storeapi.CacheFlushListener[serde.Windowed[K], V], sendOldValues bool) bool {
	cw, ok := m.inner.(*cachingWindowStore)
	if !ok {
		return false
	}
	return cw.SetFlushListener(adaptFlushListener(l,
		func(b []byte) (serde.Windowed[K], error) {
			kb, start, _, err := splitWindowStoreKey(b)
			if err != nil {
				return serde.Windowed[K]{}, storeErr(m.Name(), "flush", err)
			}
			k, err := m.s.decodeKey("flush", kb)
			return serde.Windowed[K]{Key: k, Window: serde.Window{Start: start, End: windowEnd(start, cw.windowSize)}}, err
		},
		func(b []byte) (V, error) {
			v, _, err := m.s.decodeValue("flush", b)
			return v, err
		}), sendOldValues)
}

// FlushCache flushes the window caching layer below, if any. Java: flushCache().
func (m *meteredWindowStore[K, V]) FlushCache() error {
	if cw, ok := m.inner.(*cachingWindowStore); ok {
		return cw.FlushCache()
	}
	return nil
}

// ClearCache clears the window caching layer below, if any. Java: clearCache().
func (m *meteredWindowStore[K, V]) ClearCache() error {
	if cw, ok := m.inner.(*cachingWindowStore); ok {
		return cw.ClearCache()
	}
	return nil
}
