package store

import (
	"bytes"
	"errors"
	"github.com/kstreams-go/kstreams/internal/storeapi"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// adaptFlushListener turns a typed listener into a bytes-level one for the store below a typed
// layer: keys and present values are decoded with key and value (nil bytes are never decoded:
// they leave the zero value and a false Has flag). A decoding error is returned from the flush.
func adaptFlushListener[K, V any](l storeapi.CacheFlushListener[K, V], key func([]byte) (K, error), value func([]byte) (V, error)) storeapi.CacheFlushListener[[]byte, []byte] {
	return func(r storeapi.CacheFlushRecord[[]byte, []byte]) error {
		out := storeapi.CacheFlushRecord[K, V]{HasNewValue: r.HasNewValue, HasOldValue: r.HasOldValue, Timestamp: r.Timestamp,
			Headers: r.Headers, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
		var err error
		if out.Key, err = key(r.Key); err != nil {
			return err
		}
		if r.HasNewValue {
			if out.NewValue, err = value(r.NewValue); err != nil {
				return err
			}
		}
		if r.HasOldValue {
			if out.OldValue, err = value(r.OldValue); err != nil {
				return err
			}
		}
		return l(out)
	}
}

// cachingKeyValueStore is the record-cache layer of a key-value store, between the typed
// (metered) layer and the change-logging layer, as in Java. Writes go to the thread's record
// cache as dirty entries (a delete is a cached tombstone); reads are served from the cache, and a
// value read from below is cached as a clean entry (which counts towards the budget and may
// evict); ranges merge the cache with the store below. When the cache flushes (commit, Flush,
// FlushCache, Close) or evicts a dirty entry, the dirty entries are written below (and so logged)
// in the order of their last write, and handed to the flush listener, each with the record
// context of its write restored. Without a cache (see [storeapi.CacheContext]) every operation passes
// straight through. It is not safe for concurrent use.
// Java counterpart: org.apache.kafka.streams.state.internals.cachingKeyValueStore.
type cachingKeyValueStore struct {
	inner KeyValueBytesStore
	ctx   storeapi.CacheContext
	cacheSlot
	listener      storeapi.CacheFlushListener[[]byte, []byte]
	sendOldValues bool
	// sensors record the cache's hit ratio at DEBUG (nil: not recorded).
	sensors *metrics.StoreOps
}

var (
	_ KeyValueBytesStore                        = (*cachingKeyValueStore)(nil)
	_ storeapi.CachedStateStore[[]byte, []byte] = (*cachingKeyValueStore)(nil)
	_ storeapi.CachedStateStore[string, int32]  = (*meteredKeyValueStore[string, int32])(nil)
	_ interface{ Inner() KeyValueBytesStore }   = (*cachingKeyValueStore)(nil)
)

// newCachingKeyValueStore wraps inner (the change-logging layer, or the engine) with a record
// cache. Builders add it when caching is enabled (WithCachingEnabled).
func newCachingKeyValueStore(inner KeyValueBytesStore) *cachingKeyValueStore {
	return &cachingKeyValueStore{inner: inner}
}

// Inner returns the wrapped store.
func (c *cachingKeyValueStore) Inner() KeyValueBytesStore { return c.inner }

// Name returns the store name.
func (c *cachingKeyValueStore) Name() string { return c.inner.Name() }

// Persistent reports whether the engine below is persistent.
func (c *cachingKeyValueStore) Persistent() bool { return c.inner.Persistent() }

// IsOpen reports whether the store is open.
func (c *cachingKeyValueStore) IsOpen() bool { return c.inner.IsOpen() }

// Caching reports whether the layer has an active cache (false before Init and when the
// context provides none).
func (c *cachingKeyValueStore) Caching() bool { return c.cache != nil }

// Init picks up the context's cache, if any, registers this store's named cache
// "<task id>-<store name>" with its flush handler, then initialises the store below with root.
func (c *cachingKeyValueStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if cc, ok := ctx.(storeapi.CacheContext); ok && cc.Cache() != nil {
		c.ctx, c.cache = cc, cc.Cache()
		c.namespace = cache.NameSpace(ctx.TaskID().String(), c.Name())
		c.named = c.cache.AddDirtyEntryFlushListener(c.namespace, c.flushEntries)
		c.sensors = storeSensors(ctx, c.Name(), c.inner.Persistent())
	}
	return c.inner.Init(ctx, root)
}

// SetFlushListener sets the bytes-level flush listener; it reports whether the store has an
// active cache (false: the listener will never be called).
func (c *cachingKeyValueStore) SetFlushListener(l storeapi.CacheFlushListener[[]byte, []byte], sendOldValues bool) bool {
	c.listener, c.sendOldValues = l, sendOldValues
	return c.cache != nil
}

// flushEntries writes flushed entries below and hands them to the listener (Java:
// CachingKeyValueStore.putAndMaybeForward for each entry).
func (c *cachingKeyValueStore) flushEntries(entries []cache.DirtyEntry) error {
	for _, e := range entries {
		if err := c.flushEntry(e); err != nil {
			return err
		}
	}
	return nil
}

func (c *cachingKeyValueStore) flushEntry(e cache.DirtyEntry) error {
	rc := e.Entry.Context()
	if c.listener == nil {
		restore := c.ctx.SetRecordContext(rc)
		defer restore()
		return c.inner.Put(e.Key, e.NewValue)
	}
	var old []byte
	if e.NewValue == nil || c.sendOldValues {
		var err error
		if old, _, err = c.inner.Get(e.Key); err != nil {
			return err
		}
	}
	// A delete of a key absent below writes and forwards nothing (Java's optimisation).
	if e.NewValue == nil && old == nil {
		return nil
	}
	restore := c.ctx.SetRecordContext(rc)
	defer restore()
	if err := c.inner.Put(e.Key, e.NewValue); err != nil {
		return err
	}
	rec := storeapi.CacheFlushRecord[[]byte, []byte]{Key: e.Key, NewValue: e.NewValue, HasNewValue: e.NewValue != nil,
		Timestamp: rc.Timestamp, Headers: rc.Headers, Topic: rc.Topic, Partition: rc.Partition, Offset: rc.Offset}
	if c.sendOldValues && old != nil {
		rec.OldValue, rec.HasOldValue = old, true
	}
	return c.listener(rec)
}

// entry returns a dirty cache entry for value written in the current record context.
func (c *cachingKeyValueStore) entry(value []byte) *cache.Entry {
	return c.ownedEntry(bytes.Clone(value))
}

// ownedEntry is entry for a value slice the entry may keep (nobody else writes to it).
func (c *cachingKeyValueStore) ownedEntry(value []byte) *cache.Entry {
	rc := c.ctx.CurrentRecordContext()
	rc.Headers = rc.Headers.Clone()
	return cache.NewEntry(value, rc, true)
}

// putOwned is Put for a value slice the store may keep without copying it (a layer above
// that serialized it into a new slice hands it over). keyLent says that key is a buffer the
// caller reuses after the call: the cache copies a key it adds, and a write passed on below is
// given a copy.
func (c *cachingKeyValueStore) putOwned(key, value []byte, keyLent bool) error {
	if key == nil || c.cache == nil || !c.IsOpen() {
		if keyLent {
			key = bytes.Clone(key)
		}
		return c.Put(key, value)
	}
	rc := c.ctx.CurrentRecordContext()
	rc.Headers = rc.Headers.Clone()
	return storeErr(c.Name(), "put", c.named.PutDirty(key, value, rc))
}

// putOwnedString is putOwned for a key of the String serde given as the string: the cache
// keeps the string itself as the map key of an entry it adds (cache.PutDirtyString). The
// caller guarantees what storeapi.KeptKeysStore asks of the key.
func (c *cachingKeyValueStore) putOwnedString(key string, value []byte) error {
	if c.cache == nil || !c.IsOpen() {
		return c.Put([]byte(key), value) // its own copy: the layers below may hand it on
	}
	rc := c.ctx.CurrentRecordContext()
	rc.Headers = rc.Headers.Clone()
	return storeErr(c.Name(), "put", c.named.PutDirtyString(key, value, rc))
}

// putCopiedString is putOwnedString of a copy of value, which the caller keeps: the cache may
// copy it into the bytes of the key's entry instead of a new slice (cache.PutDirtyStringCopy).
func (c *cachingKeyValueStore) putCopiedString(key string, value []byte) error {
	if c.cache == nil || !c.IsOpen() {
		return c.Put([]byte(key), bytes.Clone(value))
	}
	rc := c.ctx.CurrentRecordContext()
	rc.Headers = rc.Headers.Clone()
	return storeErr(c.Name(), "put", c.named.PutDirtyStringCopy(key, value, rc))
}

// getString is Get for a key of the String serde given as the string (see putOwnedString): a
// value read from below is cached under the string itself.
func (c *cachingKeyValueStore) getString(key string) ([]byte, bool, error) {
	if c.cache == nil {
		return c.inner.Get(cache.StringBytes(key))
	}
	if !c.IsOpen() {
		return nil, false, storeErr(c.Name(), "get", ErrStoreClosed)
	}
	e := c.named.GetString(key)
	if c.sensors != nil {
		c.sensors.CacheGet(e != nil)
	}
	if e != nil {
		v := e.Value()
		return v, v != nil, nil
	}
	v, _, err := c.inner.Get(cache.StringBytes(key))
	if err != nil || v == nil {
		return nil, false, err
	}
	return v, true, storeErr(c.Name(), "get", c.named.PutString(key, cache.NewCleanEntry(v)))
}

func (c *cachingKeyValueStore) put(key, value []byte) error {
	// The cache copies the key when it adds an entry.
	return storeErr(c.Name(), "put", c.named.Put(key, c.entry(value)))
}

// get reads key from the cache, or from below (caching a present value as a clean entry).
func (c *cachingKeyValueStore) get(key []byte) ([]byte, error) {
	e := c.named.Get(key)
	if c.sensors != nil {
		c.sensors.CacheGet(e != nil)
	}
	if e != nil {
		return e.Value(), nil
	}
	v, _, err := c.inner.Get(key)
	if err != nil || v == nil {
		return nil, err
	}
	return v, storeErr(c.Name(), "get", c.named.Put(key, cache.NewCleanEntry(v)))
}

// Get returns the value of key from the cache or from below.
func (c *cachingKeyValueStore) Get(key []byte) ([]byte, bool, error) {
	if key == nil {
		return nil, false, storeErr(c.Name(), "get", ErrNullKey)
	}
	if c.cache == nil {
		return c.inner.Get(key)
	}
	if !c.IsOpen() {
		return nil, false, storeErr(c.Name(), "get", ErrStoreClosed)
	}
	v, err := c.get(key)
	return v, v != nil, err
}

// Put caches value (nil: a tombstone) as a dirty entry.
func (c *cachingKeyValueStore) Put(key, value []byte) error {
	if key == nil {
		return storeErr(c.Name(), "put", ErrNullKey)
	}
	if c.cache == nil {
		return c.inner.Put(key, value)
	}
	if !c.IsOpen() {
		return storeErr(c.Name(), "put", ErrStoreClosed)
	}
	return c.put(key, value)
}

// PutIfAbsent caches value when key has no value (in the cache or below) and returns the
// existing value otherwise.
func (c *cachingKeyValueStore) PutIfAbsent(key, value []byte) ([]byte, bool, error) {
	if key == nil {
		return nil, false, storeErr(c.Name(), "putIfAbsent", ErrNullKey)
	}
	if c.cache == nil {
		return c.inner.PutIfAbsent(key, value)
	}
	if !c.IsOpen() {
		return nil, false, storeErr(c.Name(), "putIfAbsent", ErrStoreClosed)
	}
	old, err := c.get(key)
	if err != nil {
		return nil, false, err
	}
	if old != nil {
		return old, true, nil
	}
	return nil, false, c.put(key, value)
}

// PutAll caches each entry in order.
func (c *cachingKeyValueStore) PutAll(entries []KeyValue[[]byte, []byte]) error {
	if c.cache == nil {
		return c.inner.PutAll(entries)
	}
	for _, e := range entries {
		if err := c.Put(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// Delete caches a tombstone for key and returns its old value (from the cache or below).
func (c *cachingKeyValueStore) Delete(key []byte) ([]byte, bool, error) {
	if key == nil {
		return nil, false, storeErr(c.Name(), "delete", ErrNullKey)
	}
	if c.cache == nil {
		return c.inner.Delete(key)
	}
	if !c.IsOpen() {
		return nil, false, storeErr(c.Name(), "delete", ErrStoreClosed)
	}
	old, err := c.get(key)
	if err != nil {
		return nil, false, err
	}
	return old, old != nil, c.put(key, nil)
}

func (c *cachingKeyValueStore) merged(storeIt KeyValueIterator[[]byte, []byte], cacheIt *cache.Iterator, forward bool) KeyValueIterator[[]byte, []byte] {
	return &mergedCacheIterator{cache: cacheIt, store: &peekingIterator{it: storeIt}, forward: forward}
}

func (c *cachingKeyValueStore) rangeOf(from, to []byte, reverse bool) KeyValueIterator[[]byte, []byte] {
	if c.cache == nil {
		if reverse {
			return c.inner.ReverseRange(from, to)
		}
		return c.inner.Range(from, to)
	}
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return emptyIterator[[]byte, []byte]()
	}
	if !c.IsOpen() {
		return ErrorIterator[[]byte, []byte](storeErr(c.Name(), "range", ErrStoreClosed))
	}
	if reverse {
		return c.merged(c.inner.ReverseRange(from, to), c.cache.ReverseRange(c.namespace, from, to), false)
	}
	return c.merged(c.inner.Range(from, to), c.cache.Range(c.namespace, from, to), true)
}

// Range iterates from <= key <= to ascending, merging cached entries (which win over the store's
// and hide its deleted keys) with the store below.
func (c *cachingKeyValueStore) Range(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return c.rangeOf(from, to, false)
}

// ReverseRange is Range in descending order.
func (c *cachingKeyValueStore) ReverseRange(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return c.rangeOf(from, to, true)
}

// All iterates every entry ascending (cache merged with the store below).
func (c *cachingKeyValueStore) All() KeyValueIterator[[]byte, []byte] {
	if c.cache == nil {
		return c.inner.All()
	}
	if !c.IsOpen() {
		return ErrorIterator[[]byte, []byte](storeErr(c.Name(), "all", ErrStoreClosed))
	}
	return c.merged(c.inner.All(), c.cache.All(c.namespace), true)
}

// ReverseAll iterates every entry descending.
func (c *cachingKeyValueStore) ReverseAll() KeyValueIterator[[]byte, []byte] {
	if c.cache == nil {
		return c.inner.ReverseAll()
	}
	if !c.IsOpen() {
		return ErrorIterator[[]byte, []byte](storeErr(c.Name(), "reverseAll", ErrStoreClosed))
	}
	return c.merged(c.inner.ReverseAll(), c.cache.ReverseAll(c.namespace), false)
}

// PrefixScan iterates the entries whose key starts with prefix, ascending, merging the cached
// keys in [prefix, prefix+1) with the store's. (Java fails with an IndexOutOfBoundsException when
// prefix+1 overflows, i.e. for an empty prefix or one of only 0xFF bytes; here every cached key
// from prefix on is taken, which is exactly the keys with that prefix.)
func (c *cachingKeyValueStore) PrefixScan(prefix []byte) KeyValueIterator[[]byte, []byte] {
	if c.cache == nil {
		return c.inner.PrefixScan(prefix)
	}
	if !c.IsOpen() {
		return ErrorIterator[[]byte, []byte](storeErr(c.Name(), "prefixScan", ErrStoreClosed))
	}
	storeIt := c.inner.PrefixScan(prefix)
	from := prefix
	if from == nil {
		from = []byte{}
	}
	return c.merged(storeIt, c.cache.RangeInclusive(c.namespace, from, increment(from), false), true)
}

// increment returns b plus one as an unsigned big-endian number of the same length, or nil when
// that overflows (Java: Bytes.increment, which throws then).
func increment(b []byte) []byte {
	out := bytes.Clone(b)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] != 0xFF {
			out[i]++
			return out
		}
		out[i] = 0
	}
	return nil
}

// ApproximateNumEntries returns the estimate of the store below (cached entries not counted, as
// in Java).
func (c *cachingKeyValueStore) ApproximateNumEntries() int64 { return c.inner.ApproximateNumEntries() }

// FlushCache flushes the cache (dirty entries written below and handed to the listener).
func (c *cachingKeyValueStore) FlushCache() error { return c.flushCache() }

// ClearCache drops this store's cached entries without flushing them.
func (c *cachingKeyValueStore) ClearCache() error { c.clearCache(); return nil }

// Flush flushes the cache, then the store below.
func (c *cachingKeyValueStore) Flush() error { return c.flushThen(c.inner) }

// Close flushes the cache, drops this store's named cache and closes the store below; every
// step runs and their errors are returned joined (Java: executeAll of the three).
func (c *cachingKeyValueStore) Close() error { return c.closeThen(c.inner) }

// cacheSlot is a caching layer's part of the thread's record cache: the cache (nil while
// caching is off or before Init) and the layer's namespace in it. The key-value, window and
// session caching layers embed it for what they do alike.
type cacheSlot struct {
	cache     *cache.ThreadCache
	namespace string
	// named is the layer's named cache in cache (reads, writes and the clean entries a read
	// caches).
	named *cache.Named
}

// flushCache flushes the layer's dirty entries (written below, handed to the flush listener).
func (s *cacheSlot) flushCache() error {
	if s.cache == nil {
		return nil
	}
	return s.cache.Flush(s.namespace)
}

// clearCache drops the layer's cached entries without flushing them.
func (s *cacheSlot) clearCache() {
	if s.cache != nil {
		s.cache.Clear(s.namespace)
	}
}

// flushThen flushes the cache, then inner.
func (s *cacheSlot) flushThen(inner StateStore) error {
	if err := s.flushCache(); err != nil {
		return err
	}
	return inner.Flush()
}

// closeThen flushes the cache, drops the namespace and closes inner; every step runs and the
// errors are joined.
func (s *cacheSlot) closeThen(inner StateStore) error {
	var errs []error
	if s.cache != nil {
		errs = append(errs, s.cache.Flush(s.namespace))
		s.cache.Close(s.namespace)
	}
	errs = append(errs, inner.Close())
	return errors.Join(errs...)
}

// peekingIterator adds a one-entry look-ahead to a KeyValueIterator.
type peekingIterator struct {
	it       KeyValueIterator[[]byte, []byte]
	peeked   bool
	has      bool
	key, val []byte
}

func (p *peekingIterator) hasNext() bool {
	if !p.peeked {
		p.has = p.it.Next()
		if p.has {
			p.key, p.val = p.it.Key(), p.it.Value()
		}
		p.peeked = true
	}
	return p.has
}

func (p *peekingIterator) next() ([]byte, []byte) {
	p.hasNext()
	p.peeked = false
	return p.key, p.val
}

// mergedCacheIterator merges a cache iterator with the store's, both in the same direction:
// on equal keys the cache wins and the store's entry is skipped; cached tombstones hide the
// store's entry of the same key and are not returned (but see hasNext for Java's reverse-order
// quirk). Java counterpart:
// MergedSortedCacheKeyValueBytesStoreIterator (AbstractMergedSortedCacheStoreIterator).
type mergedCacheIterator struct {
	cache    *cache.Iterator
	store    *peekingIterator
	forward  bool
	key, val []byte
	closed   bool
	err      error
}

// hasNext skips cached tombstones as Java 4.4's AbstractMergedSortedCacheStoreIterator.hasNext
// does: a tombstone whose key equals the store's next key hides that entry (both are skipped);
// one that sorts before the store's next key is skipped alone; one that sorts after it stays, so
// the store's smaller entries come out first and the tombstone is met again later. The
// comparison ignores the direction, exactly as Java's: in a reverse iteration a tombstone that
// sorts after the store's next key is therefore returned as an entry with a nil value, as Java
// returns it with a null value.
func (m *mergedCacheIterator) hasNext() bool {
	for m.cache.HasNext() && m.cache.PeekNext().Value() == nil {
		if !m.store.hasNext() {
			m.cache.Next()
			continue
		}
		switch cmp := bytes.Compare(m.cache.PeekNextKey(), m.store.key); {
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

func (m *mergedCacheIterator) fromCache() {
	k, e := m.cache.Next()
	m.key, m.val = k, e.Value()
}

func (m *mergedCacheIterator) fromStore() {
	m.key, m.val = m.store.next()
}

// Next advances to the next merged entry.
func (m *mergedCacheIterator) Next() bool {
	m.key, m.val = nil, nil
	if m.closed {
		if m.err == nil {
			m.err = ErrIteratorClosed
		}
		return false
	}
	if m.err != nil || !m.hasNext() {
		return false
	}
	switch {
	case !m.cache.HasNext():
		m.fromStore()
	case !m.store.hasNext():
		m.fromCache()
	default:
		cmp := bytes.Compare(m.cache.PeekNextKey(), m.store.key)
		if !m.forward {
			cmp = -cmp
		}
		switch {
		case cmp > 0:
			m.fromStore()
		case cmp < 0:
			m.fromCache()
		default:
			m.store.next()
			m.fromCache()
		}
	}
	return true
}

// Key returns the current key.
func (m *mergedCacheIterator) Key() []byte { return m.key }

// Value returns the current value.
func (m *mergedCacheIterator) Value() []byte { return m.val }

// Err returns the first error of the store's iterator, or ErrIteratorClosed after use past Close.
func (m *mergedCacheIterator) Err() error {
	if m.err != nil {
		return m.err
	}
	return m.store.it.Err()
}

// Close closes the store's iterator.
func (m *mergedCacheIterator) Close() error {
	m.closed = true
	return m.store.it.Close()
}

// SetFlushListener registers l (typed: keys and values deserialized with the store's serdes) on
// the caching layer below, if there is one, and reports whether that layer has an active cache.
// Java: MeteredKeyValueStore.setFlushListener.
func (m *meteredKeyValueStore[K, V]) SetFlushListener(l storeapi.CacheFlushListener[K, V], sendOldValues bool) bool {
	cs, ok := m.inner.(storeapi.CachedStateStore[[]byte, []byte])
	if !ok {
		return false
	}
	return cs.SetFlushListener(adaptFlushListener(l,
		func(b []byte) (K, error) {
			k, err := m.keySerde.Deserialize(m.topic, &serde.Headers{}, b)
			if err != nil {
				return k, storeErr(m.Name(), "flush: deserialize key", err)
			}
			return k, nil
		},
		func(b []byte) (V, error) {
			v, _, err := m.value("flush", b)
			return v, err
		}), sendOldValues)
}

// FlushCache flushes the caching layer below, if any. Java: flushCache().
func (m *meteredKeyValueStore[K, V]) FlushCache() error {
	if cs, ok := m.inner.(storeapi.CachedStateStore[[]byte, []byte]); ok {
		return cs.FlushCache()
	}
	return nil
}

// ClearCache clears the caching layer below, if any, without flushing. Java: clearCache().
func (m *meteredKeyValueStore[K, V]) ClearCache() error {
	if cs, ok := m.inner.(storeapi.CachedStateStore[[]byte, []byte]); ok {
		return cs.ClearCache()
	}
	return nil
}

// ErrReadOnly is returned by write operations of a read-only query view.
// Java counterpart: the UnsupportedOperationException of ReadOnlyKeyValueStoreFacade writes.
var ErrReadOnly = errors.New("store: read-only view")

// QueryView returns a read-only view of the store for goroutines other than the one running the
// task (interactive queries), which read it holding the task's lock (the runtime's
// QueryableStore.Read): the record cache is not safe beside the task's own use of it. Reads are served from the cache (which, as in Java, makes the
// entry the most recently used) or from the store below; unlike the task's own reads, a value
// read from below is not put into the cache, so a query never evicts or flushes anything (Java
// only caches reads made by the stream thread). Without a cache it is the store below.
func (c *cachingKeyValueStore) QueryView() ReadOnlyKeyValueStore[[]byte, []byte] {
	if c.cache == nil {
		return c.inner
	}
	return cachingQueryView{c}
}

// cachingQueryView is CachingKeyValueStore.QueryView.
type cachingQueryView struct{ c *cachingKeyValueStore }

func (q cachingQueryView) Get(key []byte) ([]byte, bool, error) {
	if key == nil {
		return nil, false, storeErr(q.c.Name(), "get", ErrNullKey)
	}
	if !q.c.IsOpen() {
		return nil, false, storeErr(q.c.Name(), "get", ErrStoreClosed)
	}
	if e := q.c.named.Get(key); e != nil {
		return e.Value(), e.Value() != nil, nil
	}
	return q.c.inner.Get(key)
}

// The iterators of the caching store only read the cache (recency updates), so they are shared.
func (q cachingQueryView) Range(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return q.c.Range(from, to)
}
func (q cachingQueryView) ReverseRange(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return q.c.ReverseRange(from, to)
}
func (q cachingQueryView) All() KeyValueIterator[[]byte, []byte]        { return q.c.All() }
func (q cachingQueryView) ReverseAll() KeyValueIterator[[]byte, []byte] { return q.c.ReverseAll() }
func (q cachingQueryView) PrefixScan(prefix []byte) KeyValueIterator[[]byte, []byte] {
	return q.c.PrefixScan(prefix)
}
func (q cachingQueryView) ApproximateNumEntries() int64 { return q.c.ApproximateNumEntries() }

// readOnlyBytes adapts a read-only bytes view to KeyValueBytesStore for the typed layer: reads
// go to the view, writes fail with ErrReadOnly, lifecycle methods reach base.
type readOnlyBytes struct {
	KeyValueBytesStore
	view ReadOnlyKeyValueStore[[]byte, []byte]
}

func (r readOnlyBytes) Get(key []byte) ([]byte, bool, error) { return r.view.Get(key) }
func (r readOnlyBytes) Range(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return r.view.Range(from, to)
}
func (r readOnlyBytes) ReverseRange(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return r.view.ReverseRange(from, to)
}
func (r readOnlyBytes) All() KeyValueIterator[[]byte, []byte]        { return r.view.All() }
func (r readOnlyBytes) ReverseAll() KeyValueIterator[[]byte, []byte] { return r.view.ReverseAll() }
func (r readOnlyBytes) PrefixScan(prefix []byte) KeyValueIterator[[]byte, []byte] {
	return r.view.PrefixScan(prefix)
}
func (r readOnlyBytes) ApproximateNumEntries() int64 { return r.view.ApproximateNumEntries() }
func (r readOnlyBytes) Put([]byte, []byte) error     { return storeErr(r.Name(), "put", ErrReadOnly) }
func (r readOnlyBytes) PutIfAbsent([]byte, []byte) ([]byte, bool, error) {
	return nil, false, storeErr(r.Name(), "putIfAbsent", ErrReadOnly)
}
func (r readOnlyBytes) PutAll([]KeyValue[[]byte, []byte]) error {
	return storeErr(r.Name(), "putAll", ErrReadOnly)
}
func (r readOnlyBytes) Delete([]byte) ([]byte, bool, error) {
	return nil, false, storeErr(r.Name(), "delete", ErrReadOnly)
}
func (r readOnlyBytes) Flush() error { return nil }
func (r readOnlyBytes) Close() error { return nil }

// QueryView returns a typed read-only view of the store for goroutines other than the task's
// (interactive queries): with a caching layer below, reads do not populate the cache (see
// CachingKeyValueStore.QueryView); otherwise it reads the same store.
func (m *meteredKeyValueStore[K, V]) QueryView() ReadOnlyKeyValueStore[K, V] {
	q, ok := m.inner.(interface {
		QueryView() ReadOnlyKeyValueStore[[]byte, []byte]
	})
	if !ok {
		return m
	}
	// A new layer over the same serdes (not a copy of m: it has its own headers scratch).
	return &meteredKeyValueStore[K, V]{inner: readOnlyBytes{KeyValueBytesStore: m.inner, view: q.QueryView()},
		keySerde: m.keySerde, valueSerde: m.valueSerde, topic: m.topic, keyNillable: m.keyNillable,
		valueNillable: m.valueNillable}
}
