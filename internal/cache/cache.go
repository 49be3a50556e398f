// Package cache is the record cache of kstreams-go: one byte-budgeted cache per stream thread
// (per application instance in the test driver), shared by the caching store layers of all the
// thread's tasks. It is the counterpart of Java's ThreadCache, NamedCache and LRUCacheEntry
// (org.apache.kafka.streams.state.internals, Kafka Streams 4.4) and reproduces their observable
// behaviour: the same size accounting per entry, the same eviction points (only the named cache
// that was written to evicts, least recently used entry first), dirty keys flushed in the order
// of their last write, and the evicted entry flushed first together with every other dirty entry
// of its named cache.
//
// Concurrency: a named cache belongs to one task's store and is used by whoever holds that
// task (its executor, the stream thread between passes, an interactive query holding the
// task's lock): the operations on one named cache, iterators included, must not run at the
// same time, and the caller orders them (the runtime's task locks do). A flush listener may
// use the cache again, its own named cache included (Java's locks are re-entrant). Operations
// on different named caches may run at the same time: the executors of a stream thread process
// different tasks, so they write different named caches and do not wait for each other. The
// size of the whole cache is an atomic sum; the set of named caches is replaced as a whole
// when one is created or closed, so finding a namespace takes no lock. The ThreadCache-wide
// readers and Resize (Size, Puts, Gets, Evicts, Flushes, Resize) read every named cache: call
// them while none is in use.
package cache

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// ErrNoListener is returned when a named cache with dirty entries must flush but no flush
// listener was registered for it. Java: IllegalArgumentException "No listener for namespace
// ... registered with cache".
var ErrNoListener = errors.New("cache: no flush listener registered for namespace")

// residentSize estimates the memory of a record context in bytes exactly as Java's
// ProcessorRecordContext.residentMemorySizeEstimate: 8 (timestamp) + 8 (offset) + the topic's
// length in UTF-16 code units + 4 (partition) + for every header its key's length in UTF-16
// code units and its value's length in bytes (0 for a null value).
func residentSize(c processor.RecordContext) int64 {
	return residentSizeOf(c, utf16Len(c.Topic))
}

// residentSizeOf is residentSize given the topic's length in UTF-16 code units.
func residentSizeOf(c processor.RecordContext, topicLen int64) int64 {
	n := int64(8+8+4) + topicLen
	if c.Headers.Len() > 0 {
		// Only records with headers pay for the iterator's allocations.
		n += headersSize(c.Headers)
	}
	return n
}

func headersSize(hs serde.Headers) int64 {
	n := int64(0)
	for h := range hs.All() {
		n += utf16Len(h.Key) + int64(len(h.Value))
	}
	return n
}

// utf16Len is the length of s in UTF-16 code units (Java's String.toCharArray().length).
// Invalid UTF-8 bytes count one unit each, as Java decodes them to U+FFFD.
func utf16Len(s string) int64 {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return int64(len(s))
	}
	n := int64(0)
	for _, r := range s {
		n += int64(utf16.RuneLen(r))
	}
	return n
}

// Entry is one cached value with the context of the write that cached it and its dirty flag
// (dirty: written by the processor and not yet flushed to the store below the cache).
// Java counterpart: LRUCacheEntry.
type Entry struct {
	value []byte
	ctx   processor.RecordContext
	dirty bool
	// lent: value was handed to a flush listener, which may keep it (a store below); its bytes
	// are then never written again (see PutDirtyStringCopy).
	lent bool
	size int64
}

// NewEntry returns an entry for value (nil is a tombstone) written in context ctx. Entries put
// by a write are dirty; entries loaded from the store below by a read are clean.
// Its size in bytes is 1 (dirty flag) + len(value) + the context's estimate (see
// residentSize), fixed at creation as in Java. The context is the record being processed at the
// time of the write (Java's ProcessorRecordContext): the caching store restores it while it
// flushes the entry, so changelog writes and forwarded records carry it.
func NewEntry(value []byte, ctx processor.RecordContext, dirty bool) *Entry {
	return &Entry{value: value, ctx: ctx, dirty: dirty, size: 1 + int64(len(value)) + residentSize(ctx)}
}

// NewCleanEntry returns a clean entry for a value read from the store below the cache: no topic,
// offset, partition and timestamp -1, no headers (Java: new LRUCacheEntry(value)).
func NewCleanEntry(value []byte) *Entry {
	return NewEntry(value, processor.RecordContext{Timestamp: -1, Offset: -1, Partition: -1}, false)
}

// Value returns the cached value; nil is a tombstone (a cached delete).
func (e *Entry) Value() []byte { return e.value }

// Context returns the context of the write that cached the entry.
func (e *Entry) Context() processor.RecordContext { return e.ctx }

// IsDirty reports whether the entry still has to be flushed to the store below.
func (e *Entry) IsDirty() bool { return e.dirty }

// Size returns the entry's accounted size in bytes (without the key and the 24 bytes of
// per-node overhead the named cache adds).
func (e *Entry) Size() int64 { return e.size }

// DirtyEntry is one entry handed to a flush listener. Java counterpart: ThreadCache.DirtyEntry.
type DirtyEntry struct {
	// Key is the entry's key.
	Key []byte
	// NewValue is the value to write below the cache; nil is a delete.
	NewValue []byte
	// Entry is the cache entry, for its record context.
	Entry *Entry
}

// FlushListener receives the dirty entries of a named cache when it flushes (commit) or evicts a
// dirty entry: on eviction the evicted entry comes first, then every other dirty entry in the
// order of its last write. An error aborts the operation that caused the flush and is returned
// by it. Java counterpart: ThreadCache.DirtyEntryFlushListener.
type FlushListener func(entries []DirtyEntry) error

// NameSpace returns the name of the named cache of a store in a task: "<taskID>-<store>".
// Java counterpart: ThreadCache.nameSpaceFromTaskIdAndStore.
func NameSpace(taskID, storeName string) string { return taskID + "-" + storeName }

// ThreadCache is the byte-budgeted record cache of one stream thread: a set of named caches (one
// per task and caching store) whose sizes add up to at most MaxBytes after every operation that
// can evict (once the operations running at the same time, on other named caches, have
// returned too). Java counterpart: org.apache.kafka.streams.state.internals.ThreadCache.
type ThreadCache struct {
	// mu serializes creating and closing named caches, and reading the counters.
	mu sync.Mutex
	// caches holds the named caches by namespace. The map is never changed: creating or closing
	// a named cache stores a new one (under mu).
	caches    atomic.Pointer[map[string]*namedCache]
	maxBytes  atomic.Int64
	sizeBytes atomic.Int64
	// gone holds the counters of the named caches closed so far, and of the operations on
	// namespaces that had no named cache (under mu).
	gone counters
}

// counters are the operation counters of a named cache (Java's ThreadCache internal stats).
type counters struct{ puts, gets, evicts, flushes int64 }

func (c *counters) add(o counters) {
	c.puts += o.puts
	c.gets += o.gets
	c.evicts += o.evicts
	c.flushes += o.flushes
}

// lookup returns the named cache of namespace, or nil.
func (t *ThreadCache) lookup(namespace string) *namedCache {
	return (*t.caches.Load())[namespace]
}

// countGone counts an operation on a namespace without a named cache.
func (t *ThreadCache) countGone(f func(*counters)) {
	t.mu.Lock()
	f(&t.gone)
	t.mu.Unlock()
}

// New returns a cache of at most maxBytes bytes (Java: statestore.cache.max.bytes, divided
// among the stream threads; the test driver uses the whole value). A maxBytes of 0 (or less)
// evicts every entry as soon as it is put, so each write reaches the store and its listener
// at once.
func New(maxBytes int64) *ThreadCache {
	t := &ThreadCache{}
	t.maxBytes.Store(max(maxBytes, 0))
	t.caches.Store(&map[string]*namedCache{})
	return t
}

// MaxBytes returns the budget in bytes.
func (t *ThreadCache) MaxBytes() int64 { return t.maxBytes.Load() }

// SizeBytes returns the accounted size of all named caches in bytes.
func (t *ThreadCache) SizeBytes() int64 { return t.sizeBytes.Load() }

// Size returns the number of entries in all named caches. Java: size().
func (t *ThreadCache) Size() int64 {
	n := int64(0)
	for _, c := range *t.caches.Load() {
		n += int64(c.len())
	}
	return n
}

// counters returns the operation counters of all named caches, closed ones included.
func (t *ThreadCache) counters() counters {
	t.mu.Lock()
	defer t.mu.Unlock()
	sum := t.gone
	for _, c := range *t.caches.Load() {
		sum.add(c.ops)
	}
	return sum
}

// Puts, Gets, Evicts and Flushes return the operation counters (Java's internal stats).
func (t *ThreadCache) Puts() int64 { return t.counters().puts }

// Gets returns the number of Get calls.
func (t *ThreadCache) Gets() int64 { return t.counters().gets }

// Evicts returns the number of entries evicted.
func (t *ThreadCache) Evicts() int64 { return t.counters().evicts }

// Flushes returns the number of Flush calls.
func (t *ThreadCache) Flushes() int64 { return t.counters().flushes }

// NamedCacheSizeBytes returns the accounted size in bytes of one named cache (0 if absent).
func (t *ThreadCache) NamedCacheSizeBytes(namespace string) int64 {
	c := t.lookup(namespace)
	if c == nil {
		return 0
	}
	return c.sizeBytes
}

// Namespaces returns the names of the named caches, sorted.
func (t *ThreadCache) Namespaces() []string {
	m := *t.caches.Load()
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (t *ThreadCache) getOrCreate(namespace string) *namedCache {
	if c := t.lookup(namespace); c != nil {
		return c
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.caches.Load()
	if c := old[namespace]; c != nil {
		return c
	}
	c := newNamedCache(namespace, t)
	m := make(map[string]*namedCache, len(old)+1)
	maps.Copy(m, old)
	m[namespace] = c
	t.caches.Store(&m)
	return c
}

// AddDirtyEntryFlushListener sets the flush listener of a named cache, creating the named cache
// if needed (the caching store calls it at Init), and returns the named cache.
// Java: addDirtyEntryFlushListener.
func (t *ThreadCache) AddDirtyEntryFlushListener(namespace string, l FlushListener) *Named {
	for {
		c := t.getOrCreate(namespace)
		if !c.closed {
			c.listener = l
			return &Named{t: t, ns: namespace, c: c}
		}
	}
}

// Flush hands every dirty entry of the named cache to its listener (in the order of their last
// write), marks them clean and drops the tombstones. Java: flush(namespace).
func (t *ThreadCache) Flush(namespace string) error {
	for {
		c := t.lookup(namespace)
		if c == nil {
			t.countGone(func(n *counters) { n.flushes++ })
			return nil
		}
		if done, err := c.flushOp(); done {
			return err
		}
	}
}

// DirtyLen returns the number of dirty entries (written since their last flush, not yet handed
// to the listener) of the named cache; 0 if it does not exist. A commit flushes caches until
// none of its task is dirty, because a flush listener may write into another store's cache.
func (t *ThreadCache) DirtyLen(namespace string) int {
	c := t.lookup(namespace)
	if c == nil {
		return 0
	}
	return c.dirtyLen
}

// Get returns the cached entry of key, or nil, and makes it the most recently used.
// Java: get(namespace, key).
func (t *ThreadCache) Get(namespace string, key []byte) *Entry {
	for {
		c := t.lookup(namespace)
		if c == nil {
			t.countGone(func(n *counters) { n.gets++ })
			return nil
		}
		if e, ok := c.getOp(key); ok {
			return e
		}
	}
}

// Put caches entry under key (most recently used; a dirty entry moves the key to the end of the
// flush order), then evicts least recently used entries of this named cache while the whole
// cache is over budget; evicting a dirty entry flushes the named cache (see FlushListener).
// The cache copies key when it adds a new entry (callers may reuse the slice); the key handed to
// the flush listener is that copy. Java: put(namespace, key, value).
func (t *ThreadCache) Put(namespace string, key []byte, entry *Entry) error {
	for {
		if done, err := t.getOrCreate(namespace).putOp(key, "", false, entry); done {
			return err
		}
	}
}

// PutDirty is Put of a dirty entry (NewEntry(value, ctx, true)) that may reuse the memory of
// the key's current entry instead of allocating one: the cache keeps value, and an *Entry a
// caller got earlier for this key must not be used after the call.
func (t *ThreadCache) PutDirty(namespace string, key, value []byte, ctx processor.RecordContext) error {
	for {
		if done, err := t.getOrCreate(namespace).putDirtyOp(key, "", false, value, ctx); done {
			return err
		}
	}
}

// StringBytes returns the bytes of s without a copy, for the *String methods: they must never be
// written to. An empty s gives an empty, non-nil slice (nil is a null key).
func StringBytes(s string) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// GetString is Get of the key whose bytes are those of key (a key of the String serde), read
// without a copy. An entry added by PutString or PutDirtyString keeps that string as its map
// key, so the map's comparison with the same string is equal on the pointer, without reading
// the entry's key bytes (the lookup still hashes key).
func (t *ThreadCache) GetString(namespace, key string) *Entry {
	return t.Get(namespace, StringBytes(key))
}

// PutString is Put of the key whose bytes are those of key: a new entry keeps key itself as its
// map key, instead of a copy; the key bytes it hands the flush listener are a copy. key must hold
// no memory beyond its own bytes (not a slice of a larger string), which the cache would keep
// alive without counting it.
func (t *ThreadCache) PutString(namespace, key string, entry *Entry) error {
	for {
		if done, err := t.getOrCreate(namespace).putOp(StringBytes(key), key, true, entry); done {
			return err
		}
	}
}

// PutDirtyString is PutDirty of the key whose bytes are those of key, kept as PutString keeps it.
func (t *ThreadCache) PutDirtyString(namespace, key string, value []byte, ctx processor.RecordContext) error {
	for {
		if done, err := t.getOrCreate(namespace).putDirtyOp(StringBytes(key), key, true, value, ctx); done {
			return err
		}
	}
}

// PutIfAbsent caches entry only if key has no entry and returns the existing entry, or nil.
// Java: putIfAbsent(namespace, key, value).
func (t *ThreadCache) PutIfAbsent(namespace string, key []byte, entry *Entry) (*Entry, error) {
	for {
		c := t.getOrCreate(namespace)
		if existing, done, err := c.putIfAbsentOp(key, entry); done {
			return existing, err
		}
	}
}

// Delete removes key from the named cache without flushing it and returns its entry, or nil.
// Java: delete(namespace, key).
func (t *ThreadCache) Delete(namespace string, key []byte) *Entry {
	c := t.lookup(namespace)
	if c == nil || c.closed {
		return nil
	}
	old := c.sizeBytes
	e := c.deleteKey(key)
	c.account(old)
	return e
}

// Named is one named cache of a ThreadCache, as AddDirtyEntryFlushListener returns it: a
// caching store's handle. Its methods are the ThreadCache's methods of the same names for its
// namespace, without finding the namespace on every call. Once the namespace is closed they
// find it again, as the ThreadCache's methods do (a write then creates it anew).
type Named struct {
	t  *ThreadCache
	ns string
	c  *namedCache
}

// Get is ThreadCache.Get of the named cache.
func (n *Named) Get(key []byte) *Entry {
	if e, ok := n.c.getOp(key); ok {
		return e
	}
	return n.t.Get(n.ns, key)
}

// GetString is ThreadCache.GetString of the named cache.
func (n *Named) GetString(key string) *Entry { return n.Get(StringBytes(key)) }

// Put is ThreadCache.Put of the named cache.
func (n *Named) Put(key []byte, entry *Entry) error {
	if done, err := n.c.putOp(key, "", false, entry); done {
		return err
	}
	return n.t.Put(n.ns, key, entry)
}

// PutString is ThreadCache.PutString of the named cache.
func (n *Named) PutString(key string, entry *Entry) error {
	if done, err := n.c.putOp(StringBytes(key), key, true, entry); done {
		return err
	}
	return n.t.PutString(n.ns, key, entry)
}

// PutDirty is ThreadCache.PutDirty of the named cache.
func (n *Named) PutDirty(key, value []byte, ctx processor.RecordContext) error {
	if done, err := n.c.putDirtyOp(key, "", false, value, ctx); done {
		return err
	}
	return n.t.PutDirty(n.ns, key, value, ctx)
}

// PutDirtyString is ThreadCache.PutDirtyString of the named cache.
func (n *Named) PutDirtyString(key string, value []byte, ctx processor.RecordContext) error {
	if done, err := n.c.putDirtyOp(StringBytes(key), key, true, value, ctx); done {
		return err
	}
	return n.t.PutDirtyString(n.ns, key, value, ctx)
}

// PutDirtyStringCopy is PutDirtyString of a copy of value: the caller keeps value (it may be a
// buffer it reuses). While the key's entry is dirty, was never handed to a flush listener and
// is overwritten in place (see putDirtyKept), a value of the same length is copied into its
// bytes instead of a new slice: a count's 16 bytes, rewritten on every record of the key
// between two flushes, then cost no allocation. The bytes of an entry read from below (clean)
// or handed to a flush listener are never written (the store below may keep them); an *Entry
// or value slice got from Get must not be used after a put of its key, as with PutDirty.
func (n *Named) PutDirtyStringCopy(key string, value []byte, ctx processor.RecordContext) error {
	if done, err := n.c.write(func() error { return n.c.putDirtyCopy(key, value, ctx) }); done {
		return err
	}
	return n.t.PutDirtyString(n.ns, key, bytes.Clone(value), ctx)
}

// putDirtyCopy is putDirtyKept of key (kept) with a copy of value: into the bytes of the key's
// entry when PutDirtyStringCopy allows it, else into a new slice.
func (c *namedCache) putDirtyCopy(key string, value []byte, ctx processor.RecordContext) error {
	kb := StringBytes(key)
	if n := c.find(kb); n != nil && c.flushing == 0 && c.index == nil && n.entry.dirty && !n.entry.lent &&
		n.entry.value != nil && len(n.entry.value) == len(value) {
		copy(n.entry.value, value)
		return c.putDirtyKept(kb, key, true, n.entry.value, ctx)
	}
	return c.putDirtyKept(kb, key, true, bytes.Clone(value), ctx)
}

// getOp is get counted as a Get call; ok is false, and nothing done, when c is closed.
func (c *namedCache) getOp(key []byte) (e *Entry, ok bool) {
	if c.closed {
		return nil, false
	}
	c.ops.gets++
	if key == nil {
		return nil, true
	}
	return c.get(key), true
}

// putOp is putAs as a write (see write); done is false, and nothing done, when c is closed.
func (c *namedCache) putOp(key []byte, kstr string, kept bool, e *Entry) (done bool, err error) {
	return c.write(func() error { return c.putAs(key, kstr, kept, e) })
}

// putDirtyOp is putDirtyKept as a write (see write); done is false, and nothing done, when
// c is closed.
func (c *namedCache) putDirtyOp(key []byte, kstr string, kept bool, value []byte, ctx processor.RecordContext) (done bool, err error) {
	return c.write(func() error { return c.putDirtyKept(key, kstr, kept, value, ctx) })
}

// write runs put, a write of one entry into c, counted as a put, with its size change
// accounted, then maybeEvict; done is false, and nothing done, when c is closed.
func (c *namedCache) write(put func() error) (done bool, err error) {
	if c.closed {
		return false, nil
	}
	c.ops.puts++
	old := c.sizeBytes
	err = put()
	c.account(old)
	if err != nil {
		return true, err
	}
	return true, c.maybeEvict()
}

// putIfAbsentOp is PutIfAbsent of c; done is false, and nothing done, when c is closed.
func (c *namedCache) putIfAbsentOp(key []byte, entry *Entry) (existing *Entry, done bool, err error) {
	if c.closed {
		return nil, false, nil
	}
	existing = c.get(key)
	if existing == nil {
		old := c.sizeBytes
		err := c.put(key, entry)
		c.account(old)
		if err != nil {
			return nil, true, err
		}
	}
	if err := c.maybeEvict(); err != nil {
		return existing, true, err
	}
	if existing == nil {
		c.ops.puts++
	}
	return existing, true, nil
}

// flushOp is flush(nil) counted as a Flush call; done is false, and nothing done, when c is
// closed.
func (c *namedCache) flushOp() (done bool, err error) {
	if c.closed {
		return false, nil
	}
	c.ops.flushes++
	old := c.sizeBytes
	err = c.flush(nil)
	c.account(old)
	return true, err
}

// maybeEvict evicts from c (and only from c: a put may have caused puts into other named caches
// through a flush listener) while the whole cache is over budget. Java: maybeEvict.
func (c *namedCache) maybeEvict() error {
	for c.t.sizeBytes.Load() > c.t.maxBytes.Load() {
		if c.len() == 0 {
			return nil
		}
		c.ops.evicts++ // before the listener runs, in case it closes c
		old := c.sizeBytes
		err := c.evict()
		c.account(old)
		if err != nil {
			return err
		}
	}
	return nil
}

// Resize changes the budget; when it shrinks, entries are evicted from the named caches in turn
// (one entry per named cache per round, names in sorted order; Java walks its hash map) until
// the cache fits. Java: resize(newCacheSizeBytes).
//
// A flush listener an eviction calls may write into other named caches; a named cache closed
// meanwhile is skipped. Call it while no named cache is in use (the stream thread between two
// passes, as Java resizes from the stream thread): an eviction while a flush listener of the
// same named cache runs would be counted twice in the whole cache's size.
func (t *ThreadCache) Resize(maxBytes int64) error {
	shrink := maxBytes < t.maxBytes.Load()
	t.maxBytes.Store(max(maxBytes, 0))
	if !shrink {
		return nil
	}
	names := t.Namespaces()
	for i := 0; len(names) > 0 && t.sizeBytes.Load() > t.maxBytes.Load() && t.Size() > 0; i++ {
		c := t.lookup(names[i%len(names)])
		if c == nil {
			continue
		}
		if err := c.evictOneOp(); err != nil {
			return err
		}
	}
	return nil
}

// evictOneOp evicts c's least recently used entry, if any, counted as an eviction.
func (c *namedCache) evictOneOp() error {
	if c.closed {
		return nil
	}
	c.ops.evicts++ // every step counts, an empty named cache's too, as in Java
	if c.len() == 0 {
		return nil
	}
	old := c.sizeBytes
	err := c.evict()
	c.account(old)
	return err
}

// Close drops a named cache and its listener without flushing (the caching store flushes first).
// Java: close(namespace).
func (t *ThreadCache) Close(namespace string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.caches.Load()
	c := old[namespace]
	if c == nil {
		return
	}
	m := make(map[string]*namedCache, len(old))
	maps.Copy(m, old)
	delete(m, namespace)
	t.caches.Store(&m)
	c.closed = true
	t.gone.add(c.ops)
	t.sizeBytes.Add(-c.sizeBytes)
	c.clear()
	c.listener = nil
}

// Clear drops every entry of a named cache without flushing, keeping its listener.
// Java: clear(namespace).
func (t *ThreadCache) Clear(namespace string) {
	c := t.lookup(namespace)
	if c == nil {
		return
	}
	c.t.sizeBytes.Add(-c.sizeBytes)
	c.clear()
}

// Range iterates the cached entries with from <= key <= to (nil bounds are unbounded) in
// ascending key order; see Iterator. Java: range(namespace, from, to).
func (t *ThreadCache) Range(namespace string, from, to []byte) *Iterator {
	return t.RangeInclusive(namespace, from, to, true)
}

// RangeInclusive is Range with a choice of an inclusive or exclusive upper bound (the exclusive
// form serves prefix scans). Java: range(namespace, from, to, toInclusive).
func (t *ThreadCache) RangeInclusive(namespace string, from, to []byte, toInclusive bool) *Iterator {
	c := t.lookup(namespace)
	if c == nil {
		return &Iterator{}
	}
	return &Iterator{keys: c.keysBetween(from, to, toInclusive), c: c}
}

// ReverseRange iterates from <= key <= to in descending key order.
// Java: reverseRange(namespace, from, to).
func (t *ThreadCache) ReverseRange(namespace string, from, to []byte) *Iterator {
	it := t.Range(namespace, from, to)
	slices.Reverse(it.keys)
	return it
}

// All iterates every cached entry of the named cache in ascending key order. Java: all(namespace).
func (t *ThreadCache) All(namespace string) *Iterator { return t.Range(namespace, nil, nil) }

// ReverseAll iterates every cached entry in descending key order. Java: reverseAll(namespace).
func (t *ThreadCache) ReverseAll(namespace string) *Iterator {
	return t.ReverseRange(namespace, nil, nil)
}

// PageKeys is how many keys a paged iterator (RangePaged) takes from the cache at a time.
const PageKeys = 256

// RangePaged iterates the cached entries between from and to (nil bounds are unbounded; to
// exclusive when !toInclusive), descending when reverse, as Range and ReverseRange do, but
// takes the keys from the cache a page of PageKeys at a time, each page starting after the
// last key of the one before, instead of copying the range's keys when it is created: an
// iteration costs one page of memory and as much time as it goes. A key written into the range
// ahead of the iterator between two pages is seen, unlike Range's; the interactive queries,
// which read while the stream thread keeps off the cache, see exactly Range's entries.
func (t *ThreadCache) RangePaged(namespace string, from, to []byte, toInclusive, reverse bool) *Iterator {
	c := t.lookup(namespace)
	if c == nil {
		return &Iterator{}
	}
	p := &pager{toInclusive: toInclusive, reverse: reverse}
	if from != nil {
		s := string(from)
		p.from = &s
	}
	if to != nil {
		s := string(to)
		p.to = &s
	}
	it := &Iterator{c: c, pager: p}
	it.refill()
	return it
}

// pager is the state of a paged iterator: the range and the last key taken.
type pager struct {
	from, to    *string
	toInclusive bool
	reverse     bool
	last        *string
	done        bool
}

// refill takes the next page of keys.
func (it *Iterator) refill() bool {
	p := it.pager
	if p == nil || p.done {
		return false
	}
	it.c.ensureIndex()
	it.keys, it.pos = it.c.index.page(p.from, p.to, p.toInclusive, p.last, p.reverse, PageKeys), 0
	if len(it.keys) < PageKeys {
		p.done = true
	}
	if len(it.keys) > 0 {
		last := it.keys[len(it.keys)-1]
		p.last = &last
	}
	return len(it.keys) > 0
}

// Iterator walks the keys a named cache held in a range when the iterator was created (or,
// made by RangePaged, a page at a time); it reads each entry when it reaches it (a Get: the
// entry becomes the most recently used), skipping keys removed meanwhile. It is a peeking
// iterator, as Java's MemoryLRUCacheBytesIterator.
type Iterator struct {
	keys  []string
	c     *namedCache
	pos   int
	next  *Entry
	key   []byte
	pager *pager
}

// HasNext reports whether there is a next entry, reading it from the cache if needed.
func (it *Iterator) HasNext() bool {
	for it.next == nil && (it.pos < len(it.keys) || it.refill()) {
		k := it.keys[it.pos]
		it.pos++
		e := it.c.getString(k)
		if e != nil {
			it.next, it.key = e, []byte(k)
		}
	}
	return it.next != nil
}

// PeekNextKey returns the next key without advancing (nil at the end).
func (it *Iterator) PeekNextKey() []byte {
	if !it.HasNext() {
		return nil
	}
	return it.key
}

// PeekNext returns the next entry without advancing (nil at the end).
func (it *Iterator) PeekNext() *Entry {
	if !it.HasNext() {
		return nil
	}
	return it.next
}

// Next returns the next key and entry and advances; the entry is nil at the end.
func (it *Iterator) Next() ([]byte, *Entry) {
	if !it.HasNext() {
		return nil, nil
	}
	k, e := it.key, it.next
	it.key, it.next = nil, nil
	return k, e
}

// lruNode is one entry of a named cache in its recency list (head = most recently used) and,
// while its entry is dirty, in the named cache's dirty list (order of the last dirty write).
type lruNode struct {
	key        []byte
	skey       string // key as a string: the key of the named cache's map and index
	entry      *Entry
	prev, next *lruNode
	// dirtyPrev and dirtyNext link the dirty list; inDirty is true while the node is in it.
	dirtyPrev, dirtyNext *lruNode
	inDirty              bool
}

// size is the node's accounted size: key bytes + 3*8 bytes (Java's entry, previous and next
// references) + the entry's size. Java: NamedCache.LRUNode.size().
func (n *lruNode) size() int64 { return int64(len(n.key)) + 24 + n.entry.size }

// namedCache is the cache of one store in one task. Java counterpart: NamedCache.
type namedCache struct {
	// t is the thread cache, whose budget and total size the named cache's writes and evictions
	// read and update.
	t *ThreadCache
	// closed is set when ThreadCache.Close drops the named cache: its operations then do
	// nothing and report so (the callers find the namespace again).
	closed bool
	name   string
	nodes  map[string]*lruNode
	// index holds the keys in order for range scans; nil until the first range scan of the
	// named cache (then built from nodes and maintained), so that caches that are never
	// scanned (most key-value stores) do not pay for it on every new key.
	index *keyIndex
	// dirtyHead and dirtyTail are the ends of the dirty list (oldest dirty write first);
	// dirtyLen its length.
	dirtyHead, dirtyTail *lruNode
	dirtyLen             int
	listener             FlushListener
	head                 *lruNode
	tail                 *lruNode
	sizeBytes            int64
	// last is the node found or written last: a store's read-modify-write of one key (an
	// aggregation's Get then Put) and runs of the same key find it without a map lookup.
	// Cleared when that node leaves the map.
	last *lruNode
	// flushing counts flush listeners running: the entries they were handed must not change.
	flushing int
	// topic and topicLen are the topic of the last dirty write's context and its length in
	// UTF-16 code units (see residentSize): a named cache is written from the records of few
	// topics, so the length is not counted again on every write. The zero values agree.
	topic    string
	topicLen int64

	hits, misses, overwrites, flushes int64
	// ops are the ThreadCache's counters of the operations on this named cache.
	ops counters
}

func newNamedCache(name string, t *ThreadCache) *namedCache {
	return &namedCache{t: t, name: name, nodes: map[string]*lruNode{}}
}

// account adds the change of c's size since it was old to the whole cache's size. Operations
// call it once they return, as Java does: the whole cache's size does not change while a flush
// listener they call runs.
func (c *namedCache) account(old int64) {
	if d := c.sizeBytes - old; d != 0 {
		c.t.sizeBytes.Add(d)
	}
}

func (c *namedCache) len() int { return len(c.nodes) }

func (c *namedCache) count(n *lruNode) *lruNode {
	if n == nil {
		c.misses++
	} else {
		c.hits++
	}
	return n
}

// find returns the node of key, or nil.
func (c *namedCache) find(key []byte) *lruNode {
	if l := c.last; l != nil && l.skey == string(key) {
		return l
	}
	n := c.nodes[string(key)]
	if n != nil {
		c.last = n
	}
	return n
}

func (c *namedCache) get(key []byte) *Entry {
	n := c.count(c.find(key))
	if n == nil {
		return nil
	}
	c.touch(n)
	return n.entry
}

func (c *namedCache) getString(k string) *Entry {
	n := c.count(c.nodes[k])
	if n == nil {
		return nil
	}
	c.touch(n)
	return n.entry
}

func (c *namedCache) unlink(n *lruNode) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		c.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		c.tail = n.prev
	}
}

func (c *namedCache) pushHead(n *lruNode) {
	n.next, n.prev = c.head, nil
	if c.head != nil {
		c.head.prev = n
	}
	c.head = n
	if c.tail == nil {
		c.tail = n
	}
}

func (c *namedCache) touch(n *lruNode) {
	c.unlink(n)
	c.pushHead(n)
}

// markDirty moves n to the end of the dirty list (adding it if needed).
func (c *namedCache) markDirty(n *lruNode) {
	c.unmarkDirty(n)
	n.dirtyPrev, n.dirtyNext = c.dirtyTail, nil
	if c.dirtyTail != nil {
		c.dirtyTail.dirtyNext = n
	} else {
		c.dirtyHead = n
	}
	c.dirtyTail = n
	n.inDirty = true
	c.dirtyLen++
}

// unmarkDirty removes n from the dirty list if it is in it.
func (c *namedCache) unmarkDirty(n *lruNode) {
	if !n.inDirty {
		return
	}
	if n.dirtyPrev != nil {
		n.dirtyPrev.dirtyNext = n.dirtyNext
	} else {
		c.dirtyHead = n.dirtyNext
	}
	if n.dirtyNext != nil {
		n.dirtyNext.dirtyPrev = n.dirtyPrev
	} else {
		c.dirtyTail = n.dirtyPrev
	}
	n.dirtyPrev, n.dirtyNext, n.inDirty = nil, nil, false
	c.dirtyLen--
}

// ErrCleanOverDirty is returned when a clean entry would replace a dirty one (a bug in the
// caller). Java: IllegalStateException "Attempting to put a clean entry for key ... when it
// already contains a dirty entry for the same key".
var ErrCleanOverDirty = errors.New("cache: attempting to put a clean entry over a dirty entry")

// putDirtyKept caches a dirty entry of value written in context ctx under key. An existing
// key's entry is overwritten in place, saving an allocation per write of a hot key, when nobody
// can hold it: no flush listener runs (it was handed entries) and no range scan was ever made
// (an iterator keeps the entry it peeked; the index exists once one was). Otherwise, and for a
// new key, it is put as a new entry. With kept, kstr is a string of key's bytes that a new node
// keeps as its map key instead of a copy (see putKept).
func (c *namedCache) putDirtyKept(key []byte, kstr string, kept bool, value []byte, ctx processor.RecordContext) error {
	if ctx.Topic != c.topic {
		c.topic, c.topicLen = ctx.Topic, utf16Len(ctx.Topic)
	}
	size := 1 + int64(len(value)) + residentSizeOf(ctx, c.topicLen)
	if n := c.find(key); n != nil && c.flushing == 0 && c.index == nil {
		c.overwrites++
		old := n.size()
		*n.entry = Entry{value: value, ctx: ctx, dirty: true, size: size}
		c.touch(n)
		c.markDirty(n)
		c.sizeBytes += n.size() - old
		return nil
	}
	e := &Entry{value: value, ctx: ctx, dirty: true, size: size}
	if kept {
		return c.putKept(key, kstr, e)
	}
	return c.put(key, e)
}

// put caches e under key; the key is copied only when a new node is added.
func (c *namedCache) put(key []byte, e *Entry) error {
	return c.putAs(key, "", false, e)
}

// putKept is put of a key whose bytes are kstr's: a new node keeps kstr as its map key instead
// of a copy. A string cannot change, and a lookup made with the same string then compares equal
// on the pointer alone.
func (c *namedCache) putKept(key []byte, kstr string, e *Entry) error {
	return c.putAs(key, kstr, true, e)
}

func (c *namedCache) putAs(key []byte, kstr string, kept bool, e *Entry) error {
	n := c.find(key)
	if !e.dirty && n != nil && n.inDirty {
		return fmt.Errorf("%w: key %x, namespace %s", ErrCleanOverDirty, key, c.name)
	}
	old := int64(0)
	if n != nil {
		c.overwrites++
		old = n.size()
		n.entry = e
		c.touch(n)
	} else {
		k := kstr
		if !kept {
			k = string(key)
		}
		// The key bytes handed on (flush listeners, eviction) are a copy of their own, never the
		// map key's memory: a layer below or a user's handler may get them.
		kb := []byte(k)
		n = &lruNode{key: kb, skey: k, entry: e}
		c.pushHead(n)
		c.nodes[k] = n
		c.last = n
		if c.index != nil {
			c.index.add(k)
		}
	}
	if e.dirty {
		c.markDirty(n)
	}
	c.sizeBytes += n.size() - old
	return nil
}

func (c *namedCache) deleteKey(key []byte) *Entry {
	n := c.nodes[string(key)]
	if n == nil {
		return nil
	}
	return c.remove(n)
}

func (c *namedCache) delete(k string) *Entry {
	n := c.nodes[k]
	if n == nil {
		return nil
	}
	return c.remove(n)
}

func (c *namedCache) remove(n *lruNode) *Entry {
	delete(c.nodes, n.skey)
	if c.last == n {
		c.last = nil
	}
	if c.index != nil {
		c.index.remove(n.skey)
	}
	c.unlink(n)
	c.unmarkDirty(n)
	c.sizeBytes -= n.size()
	return n.entry
}

// evict removes the least recently used entry; a dirty one is flushed together with all other
// dirty entries (Java: NamedCache.evict).
func (c *namedCache) evict() error {
	n := c.tail
	if n == nil {
		return nil
	}
	c.sizeBytes -= n.size()
	c.unlink(n)
	delete(c.nodes, n.skey)
	if c.last == n {
		c.last = nil
	}
	if c.index != nil {
		c.index.remove(n.skey)
	}
	if n.entry.dirty {
		return c.flush(n)
	}
	c.unmarkDirty(n)
	return nil
}

// flush hands the dirty entries (evicted first, if any) to the listener. The dirty set is
// emptied before the listener runs, as it may write to this cache again; tombstones are removed
// afterwards. Java: NamedCache.flush(evicted).
func (c *namedCache) flush(evicted *lruNode) error {
	c.flushes++
	if c.listener == nil {
		return fmt.Errorf("%w: %s", ErrNoListener, c.name)
	}
	if c.dirtyLen == 0 {
		return nil
	}
	entries := make([]DirtyEntry, 0, c.dirtyLen)
	if evicted != nil {
		entries = append(entries, DirtyEntry{Key: evicted.key, NewValue: evicted.entry.value, Entry: evicted.entry})
		evicted.entry.lent = true
		c.unmarkDirty(evicted)
	}
	var deleted []string
	for n := c.dirtyHead; n != nil; {
		next := n.dirtyNext
		c.hits++ // Java reads each dirty key back from the cache
		entries = append(entries, DirtyEntry{Key: n.key, NewValue: n.entry.value, Entry: n.entry})
		n.entry.dirty, n.entry.lent = false, true
		if n.entry.value == nil {
			deleted = append(deleted, n.skey)
		}
		n.dirtyPrev, n.dirtyNext, n.inDirty = nil, nil, false
		n = next
	}
	c.dirtyHead, c.dirtyTail, c.dirtyLen = nil, nil, 0
	if err := c.callListener(entries); err != nil {
		return err
	}
	for _, k := range deleted {
		c.delete(k)
	}
	return nil
}

// callListener runs the listener, which may use the cache again; while it runs, the entries it
// was handed are not reused (flushing), even if it panics.
func (c *namedCache) callListener(entries []DirtyEntry) error {
	listener := c.listener
	c.flushing++
	defer func() { c.flushing-- }()
	return listener(entries)
}

func (c *namedCache) keysBetween(from, to []byte, toInclusive bool) []string {
	var f, t *string
	if from != nil {
		s := string(from)
		f = &s
	}
	if to != nil {
		s := string(to)
		t = &s
	}
	if f != nil && t != nil && strings.Compare(*f, *t) > 0 {
		return nil
	}
	c.ensureIndex()
	return c.index.between(f, t, toInclusive)
}

// ensureIndex builds the key index on the first range scan.
func (c *namedCache) ensureIndex() {
	if c.index == nil {
		c.index = newKeyIndex()
		for k := range c.nodes {
			c.index.add(k)
		}
	}
}

func (c *namedCache) clear() {
	c.head, c.tail, c.last = nil, nil, nil
	c.sizeBytes = 0
	c.dirtyHead, c.dirtyTail, c.dirtyLen = nil, nil, 0
	clear(c.nodes)
	if c.index != nil {
		c.index.clear()
	}
}
