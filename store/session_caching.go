package store

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// CachingSessionStore is the record-cache layer of session stores: puts and removes go to the
// thread's record cache (named cache "<task id>-<store name>"; cache key = 8-byte segment id of
// the session end ‖ session store key, as Java's SegmentedCacheFunction) and reach the store
// below when the cache flushes (commit) or evicts, in last-write order, each handed to the flush
// listener. Reads merge the cache (which keeps flushed entries until evicted, so a cached
// session stays visible after the store below stopped returning it for retention) with the
// store below; a cached remove hides the stored session. A remove of a session absent below is
// neither written nor forwarded (Java's optimisation). Without a cache in the context
// (statestore.cache.max.bytes=0) every operation passes straight through. Java counterpart:
// CachingSessionStore.
type CachingSessionStore struct {
	SessionBytesStore
	segmentInterval int64
	ctx             CacheContext
	cache           *cache.ThreadCache
	namespace       string
	listener        CacheFlushListener[[]byte, []byte]
	sendOldValues   bool
	minSeg, maxSeg  int64 // segment ids of cached puts (for per-segment cache scans)
}

// NewCachingSessionStore wraps inner; segmentInterval (ms) is the store's segment interval
// (cache keys are prefixed with the segment id, which orders cached sessions as the store does).
func NewCachingSessionStore(inner SessionBytesStore, segmentInterval int64) *CachingSessionStore {
	if segmentInterval <= 0 {
		segmentInterval = MinSegmentInterval
	}
	return &CachingSessionStore{SessionBytesStore: inner, segmentInterval: segmentInterval, minSeg: maxTime, maxSeg: minTime}
}

// Inner returns the wrapped store.
func (c *CachingSessionStore) Inner() SessionBytesStore { return c.SessionBytesStore }

// Init picks up the context's cache, if any, then initialises the store below.
func (c *CachingSessionStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if cc, ok := ctx.(CacheContext); ok && cc.Cache() != nil {
		c.ctx, c.cache = cc, cc.Cache()
		c.namespace = cache.NameSpace(ctx.TaskID().String(), c.Name())
		c.cache.AddDirtyEntryFlushListener(c.namespace, c.flushEntries)
	}
	return c.SessionBytesStore.Init(ctx, root)
}

// SetFlushListener sets the bytes-level listener (keys are session store keys: key ‖ end ‖
// start); it reports whether the store has an active cache.
func (c *CachingSessionStore) SetFlushListener(l CacheFlushListener[[]byte, []byte], sendOldValues bool) bool {
	c.listener, c.sendOldValues = l, sendOldValues
	return c.cache != nil
}

// FlushCache flushes only the cache.
func (c *CachingSessionStore) FlushCache() error {
	if c.cache == nil {
		return nil
	}
	return storeErr(c.Name(), "flush cache", c.cache.Flush(c.namespace))
}

// ClearCache drops the cached entries without flushing.
func (c *CachingSessionStore) ClearCache() error {
	if c.cache != nil {
		c.cache.Clear(c.namespace)
	}
	return nil
}

// Flush flushes the cache, then the store below.
func (c *CachingSessionStore) Flush() error {
	if err := c.FlushCache(); err != nil {
		return err
	}
	return c.SessionBytesStore.Flush()
}

// Close drops the named cache and closes the store below.
func (c *CachingSessionStore) Close() error {
	if c.cache != nil {
		c.cache.Close(c.namespace)
	}
	return c.SessionBytesStore.Close()
}

func (c *CachingSessionStore) cacheKey(storeKey []byte) []byte {
	return append(cacheSegPrefix(SegmentID(sessionSegTime(storeKey), c.segmentInterval)), storeKey...)
}

// cacheSegPrefix is the 8-byte big-endian segment id prefixing cache keys (Java:
// SegmentedCacheFunction.cacheKey).
func cacheSegPrefix(id int64) []byte {
	k := make([]byte, 8, 64)
	binary.BigEndian.PutUint64(k, uint64(id))
	return k
}

func (c *CachingSessionStore) flushEntries(entries []cache.DirtyEntry) error {
	for _, e := range entries {
		if err := c.flushEntry(e); err != nil {
			return err
		}
	}
	return nil
}

func (c *CachingSessionStore) flushEntry(e cache.DirtyEntry) error {
	sk := e.Key[8:]
	k, start, end, err := SplitSessionStoreKey(sk)
	if err != nil {
		return storeErr(c.Name(), "flush", err)
	}
	session := serde.Windowed[[]byte]{Key: k, Window: serde.Window{Start: start, End: end}}
	rc := e.Entry.Context()
	write := func() error {
		if e.NewValue == nil {
			return c.SessionBytesStore.Remove(session)
		}
		return c.SessionBytesStore.Put(session, e.NewValue)
	}
	if c.listener == nil {
		restore := c.ctx.SetRecordContext(rc)
		defer restore()
		return write()
	}
	var old []byte
	if e.NewValue == nil || c.sendOldValues {
		if old, _, err = c.SessionBytesStore.FetchSession(k, start, end); err != nil {
			return err
		}
	}
	if e.NewValue == nil && old == nil {
		return nil
	}
	restore := c.ctx.SetRecordContext(rc)
	defer restore()
	if err := write(); err != nil {
		return err
	}
	rec := CacheFlushRecord[[]byte, []byte]{Key: sk, NewValue: e.NewValue, HasNewValue: e.NewValue != nil,
		Timestamp: rc.Timestamp, Headers: rc.Headers, Topic: rc.Topic, Partition: rc.Partition, Offset: rc.Offset}
	if c.sendOldValues && old != nil {
		rec.OldValue, rec.HasOldValue = old, true
	}
	return c.listener(rec)
}

func (c *CachingSessionStore) write(session serde.Windowed[[]byte], value []byte) error {
	sk := SessionStoreKey(session.Key, session.Window.Start, session.Window.End)
	seg := SegmentID(session.Window.End, c.segmentInterval)
	c.minSeg, c.maxSeg = min(c.minSeg, seg), max(c.maxSeg, seg)
	rc := c.ctx.CurrentRecordContext()
	return storeErr(c.Name(), "put", c.cache.Put(c.namespace, c.cacheKey(sk), cache.NewEntry(bytes.Clone(value), rc, true)))
}

// Put caches the session's aggregate.
func (c *CachingSessionStore) Put(session serde.Windowed[[]byte], value []byte) error {
	if c.cache == nil {
		return c.SessionBytesStore.Put(session, value)
	}
	return c.write(session, value)
}

// Remove caches the session's removal.
func (c *CachingSessionStore) Remove(session serde.Windowed[[]byte]) error {
	if c.cache == nil {
		return c.SessionBytesStore.Remove(session)
	}
	return c.write(session, nil)
}

// FetchSession returns the cached value if cached, else the stored one.
func (c *CachingSessionStore) FetchSession(key []byte, start, end int64) ([]byte, bool, error) {
	if c.cache != nil {
		if e := c.cache.Get(c.namespace, c.cacheKey(SessionStoreKey(key, start, end))); e != nil {
			return e.Value(), e.Value() != nil, nil
		}
	}
	return c.SessionBytesStore.FetchSession(key, start, end)
}

type sessionKV struct {
	order []byte // segment id ‖ store key
	key   serde.Windowed[[]byte]
	value []byte
}

// merged returns the sessions of keys in [keyFrom, keyTo] (nil: unbounded) with end >=
// earliestEnd and start <= latestStart from the cache and the store below (cache wins), ordered
// by segment then store key (reversed when !forward).
func (c *CachingSessionStore) merged(keyFrom, keyTo []byte, earliestEnd, latestStart int64, forward bool,
	below KeyValueIterator[serde.Windowed[[]byte], []byte]) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if c.cache == nil {
		return below
	}
	m := map[string]*sessionKV{}
	for below.Next() {
		k := below.Key()
		sk := SessionStoreKey(k.Key, k.Window.Start, k.Window.End)
		m[string(sk)] = &sessionKV{order: c.cacheKey(sk), key: k, value: below.Value()}
	}
	err := below.Err()
	_ = below.Close()
	if err != nil {
		return ErrorIterator[serde.Windowed[[]byte], []byte](err)
	}
	var its []*cache.Iterator
	if keyFrom != nil && bytes.Equal(keyFrom, keyTo) {
		// One key: a range scan per cached segment that can hold sessions ending >= earliestEnd.
		for seg := max(SegmentID(max(earliestEnd, 0), c.segmentInterval), c.minSeg); seg <= c.maxSeg; seg++ {
			from := append(cacheSegPrefix(seg), SessionStoreKey(keyFrom, 0, max(earliestEnd, 0))...)
			to := append(cacheSegPrefix(seg), SessionStoreKey(keyFrom, maxTime, maxTime)...)
			its = append(its, c.cache.Range(c.namespace, from, to))
		}
	} else {
		its = append(its, c.cache.All(c.namespace))
	}
	for _, it := range its {
		c.mergeCache(m, it, keyFrom, keyTo, earliestEnd, latestStart)
	}
	out := make([]*sessionKV, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *sessionKV) int { return bytes.Compare(a.order, b.order) })
	if !forward {
		slices.Reverse(out)
	}
	return &sliceSessionIterator{items: out, i: -1}
}

// mergeCache applies the cached sessions it yields (filtered) to m.
func (c *CachingSessionStore) mergeCache(m map[string]*sessionKV, it *cache.Iterator, keyFrom, keyTo []byte, earliestEnd, latestStart int64) {
	for it.HasNext() {
		ck, e := it.Next()
		sk := ck[8:]
		k, start, end, err := SplitSessionStoreKey(sk)
		if err != nil || end < earliestEnd || start > latestStart ||
			(keyFrom != nil && bytes.Compare(k, keyFrom) < 0) || (keyTo != nil && bytes.Compare(k, keyTo) > 0) {
			continue
		}
		if e.Value() == nil {
			delete(m, string(sk))
			continue
		}
		m[string(sk)] = &sessionKV{order: bytes.Clone(ck), key: serde.Windowed[[]byte]{Key: bytes.Clone(k), Window: serde.Window{Start: start, End: end}},
			value: bytes.Clone(e.Value())}
	}
}

// FindSessions merges cache and store (see CachingSessionStore).
func (c *CachingSessionStore) FindSessions(key []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.merged(key, key, earliestEnd, latestStart, true, c.SessionBytesStore.FindSessions(key, earliestEnd, latestStart))
}

// BackwardFindSessions is FindSessions in reverse order.
func (c *CachingSessionStore) BackwardFindSessions(key []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.merged(key, key, earliestEnd, latestStart, false, c.SessionBytesStore.BackwardFindSessions(key, earliestEnd, latestStart))
}

// FindSessionsRange merges cache and store for keys in [keyFrom, keyTo].
func (c *CachingSessionStore) FindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.merged(keyFrom, keyTo, earliestEnd, latestStart, true, c.SessionBytesStore.FindSessionsRange(keyFrom, keyTo, earliestEnd, latestStart))
}

// BackwardFindSessionsRange is FindSessionsRange in reverse order.
func (c *CachingSessionStore) BackwardFindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.merged(keyFrom, keyTo, earliestEnd, latestStart, false, c.SessionBytesStore.BackwardFindSessionsRange(keyFrom, keyTo, earliestEnd, latestStart))
}

const minTime, maxTime = -1 << 63, 1<<63 - 1

// Fetch iterates every session of key (cache merged).
func (c *CachingSessionStore) Fetch(key []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.merged(key, key, minTime, maxTime, true, c.SessionBytesStore.Fetch(key))
}

// BackwardFetch is Fetch in reverse order.
func (c *CachingSessionStore) BackwardFetch(key []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.merged(key, key, minTime, maxTime, false, c.SessionBytesStore.BackwardFetch(key))
}

// FetchRange iterates every session of keys in [keyFrom, keyTo] (cache merged).
func (c *CachingSessionStore) FetchRange(keyFrom, keyTo []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.merged(keyFrom, keyTo, minTime, maxTime, true, c.SessionBytesStore.FetchRange(keyFrom, keyTo))
}

// BackwardFetchRange is FetchRange in reverse order.
func (c *CachingSessionStore) BackwardFetchRange(keyFrom, keyTo []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return c.merged(keyFrom, keyTo, minTime, maxTime, false, c.SessionBytesStore.BackwardFetchRange(keyFrom, keyTo))
}

type sliceSessionIterator struct {
	items  []*sessionKV
	i      int
	closed bool
}

func (s *sliceSessionIterator) Next() bool {
	if s.closed {
		return false
	}
	s.i++
	return s.i < len(s.items)
}
func (s *sliceSessionIterator) Key() serde.Windowed[[]byte] { return s.items[s.i].key }
func (s *sliceSessionIterator) Value() []byte               { return s.items[s.i].value }
func (s *sliceSessionIterator) Err() error {
	if s.closed {
		return ErrIteratorClosed
	}
	return nil
}
func (s *sliceSessionIterator) Close() error { s.closed = true; return nil }

// SetFlushListener registers l (typed: keys decoded to Windowed[K] with the session's window,
// values with the value serde) on the caching layer below, if any, and reports whether the store
// has an active cache. Call it from a processor's Init (stores are initialised first).
func (m *MeteredSessionStore[K, V]) SetFlushListener(l CacheFlushListener[serde.Windowed[K], V], sendOldValues bool) bool {
	var inner SessionBytesStore = m.inner
	for {
		switch s := inner.(type) {
		case *CachingSessionStore:
			return s.SetFlushListener(AdaptFlushListener(l, func(b []byte) (serde.Windowed[K], error) {
				k, start, end, err := SplitSessionStoreKey(b)
				if err != nil {
					return serde.Windowed[K]{}, err
				}
				key, err := m.s.decodeKey("flush", k)
				return serde.Windowed[K]{Key: key, Window: serde.Window{Start: start, End: end}}, err
			}, func(b []byte) (V, error) {
				v, _, err := m.s.decodeValue("flush", b)
				return v, err
			}), sendOldValues)
		case interface{ Inner() SessionBytesStore }:
			inner = s.Inner()
		default:
			return false
		}
	}
}
