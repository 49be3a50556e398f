package store

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kstreams-go/kstreams/processor"
)

// inMemoryKeyValueStore is the in-memory bytes-level engine: an ordered skip list guarded by a
// mutex. Iterators take a snapshot of the keys in range when created and read values live, so
// entries deleted during iteration are skipped and entries added are not seen (Java's
// inMemoryKeyValueStore does the same). Close drops all data. It is not persistent.
// Java counterpart: org.apache.kafka.streams.state.internals.inMemoryKeyValueStore.
type inMemoryKeyValueStore struct {
	name string
	mu   sync.Mutex
	data *skiplist
	// open is written under mu; IsOpen reads it without (the caching layer above asks on
	// every Get and Put).
	open atomic.Bool
}

var _ KeyValueBytesStore = (*inMemoryKeyValueStore)(nil)

// newInMemoryKeyValueStore returns a closed in-memory store named name; Init opens it.
// Most users get one through Stores.InMemoryKeyValueStore(name).Get().
func newInMemoryKeyValueStore(name string) *inMemoryKeyValueStore {
	return &inMemoryKeyValueStore{name: name, data: newSkiplist()}
}

// Name returns the store name.
func (s *inMemoryKeyValueStore) Name() string { return s.name }

// Init opens the store and registers root with ctx (restores replay through Put).
func (s *inMemoryKeyValueStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if ctx != nil {
		if err := ctx.Register(root, func(batch []processor.RestoreRecord) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, r := range batch {
				s.putLocked(r.Key, r.Value)
			}
			return nil
		}); err != nil {
			return storeErr(s.name, "init", err)
		}
	}
	s.mu.Lock()
	s.open.Store(true)
	s.mu.Unlock()
	return nil
}

// Open opens the store without a context (for standalone use and tests).
func (s *inMemoryKeyValueStore) Open() {
	s.mu.Lock()
	s.open.Store(true)
	s.mu.Unlock()
}

// Flush does nothing: the data is in memory.
func (s *inMemoryKeyValueStore) Flush() error { return nil }

// Close drops all entries and marks the store closed.
func (s *inMemoryKeyValueStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = newSkiplist()
	s.open.Store(false)
	return nil
}

// Persistent reports false.
func (s *inMemoryKeyValueStore) Persistent() bool { return false }

// IsOpen reports whether Init was called and Close was not.
func (s *inMemoryKeyValueStore) IsOpen() bool { return s.open.Load() }

func (s *inMemoryKeyValueStore) putLocked(key, value []byte) {
	if value == nil {
		s.data.remove(key)
		return
	}
	s.data.put(bytes.Clone(key), bytes.Clone(value))
}

// Get returns a copy of key's value, or (nil, false, nil) when absent.
func (s *inMemoryKeyValueStore) Get(key []byte) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open.Load() {
		return nil, false, storeErr(s.name, "get", ErrStoreClosed)
	}
	v, ok := s.data.get(key)
	if !ok {
		return nil, false, nil
	}
	return bytes.Clone(v), true, nil
}

// Put stores a copy of value under a copy of key; a nil value deletes key.
func (s *inMemoryKeyValueStore) Put(key, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open.Load() {
		return storeErr(s.name, "put", ErrStoreClosed)
	}
	s.putLocked(key, value)
	return nil
}

// PutIfAbsent stores value when key is absent; otherwise returns the current value and true.
func (s *inMemoryKeyValueStore) PutIfAbsent(key, value []byte) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open.Load() {
		return nil, false, storeErr(s.name, "putIfAbsent", ErrStoreClosed)
	}
	if v, ok := s.data.get(key); ok {
		return bytes.Clone(v), true, nil
	}
	s.putLocked(key, value)
	return nil, false, nil
}

// PutAll applies Put to each entry in order.
func (s *inMemoryKeyValueStore) PutAll(entries []KeyValue[[]byte, []byte]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open.Load() {
		return storeErr(s.name, "putAll", ErrStoreClosed)
	}
	for _, e := range entries {
		s.putLocked(e.Key, e.Value)
	}
	return nil
}

// Delete removes key and returns its old value.
func (s *inMemoryKeyValueStore) Delete(key []byte) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open.Load() {
		return nil, false, storeErr(s.name, "delete", ErrStoreClosed)
	}
	v, ok := s.data.remove(key)
	return v, ok, nil
}

// Range iterates from <= key <= to ascending; nil bounds are unbounded; from > to is empty.
func (s *inMemoryKeyValueStore) Range(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return s.rangeIter(from, to, true)
}

// ReverseRange iterates from <= key <= to descending.
func (s *inMemoryKeyValueStore) ReverseRange(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return s.rangeIter(from, to, false)
}

// All iterates all entries ascending.
func (s *inMemoryKeyValueStore) All() KeyValueIterator[[]byte, []byte] {
	return s.rangeIter(nil, nil, true)
}

// ReverseAll iterates all entries descending.
func (s *inMemoryKeyValueStore) ReverseAll() KeyValueIterator[[]byte, []byte] {
	return s.rangeIter(nil, nil, false)
}

// PrefixScan iterates the keys that start with prefix, ascending.
func (s *inMemoryKeyValueStore) PrefixScan(prefix []byte) KeyValueIterator[[]byte, []byte] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open.Load() {
		return ErrorIterator[[]byte, []byte](storeErr(s.name, "prefixScan", ErrStoreClosed))
	}
	return &memIterator{store: s, keys: s.data.keysWithPrefix(prefix)}
}

func (s *inMemoryKeyValueStore) rangeIter(from, to []byte, forward bool) KeyValueIterator[[]byte, []byte] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open.Load() {
		return ErrorIterator[[]byte, []byte](storeErr(s.name, "range", ErrStoreClosed))
	}
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return emptyIterator[[]byte, []byte]()
	}
	keys := s.data.keysIn(from, to, false)
	if !forward {
		slices.Reverse(keys)
	}
	return &memIterator{store: s, keys: keys}
}

// ApproximateNumEntries returns the exact number of entries.
func (s *inMemoryKeyValueStore) ApproximateNumEntries() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(s.data.size)
}

// pagedRange is the paged range of the storeapi.Scan path (see pagedRanger): the keys are taken a page
// at a time instead of copied for the whole range when the iterator opens.
func (s *inMemoryKeyValueStore) pagedRange(from, to []byte, reverse bool) KeyValueIterator[[]byte, []byte] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open.Load() {
		return ErrorIterator[[]byte, []byte](storeErr(s.name, "range", ErrStoreClosed))
	}
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return emptyIterator[[]byte, []byte]()
	}
	it := &memIterator{store: s, page: &memPage{from: bytes.Clone(from), to: bytes.Clone(to), reverse: reverse}}
	it.refill()
	return it
}

// memPageKeys is how many keys a paged iterator takes at a time.
const memPageKeys = 256

// memPage is the state of a paged iterator: its range and where the last page ended.
type memPage struct {
	from, to, last []byte
	reverse, done  bool
}

// refill takes the next page of keys; the store's lock is held.
func (it *memIterator) refill() bool {
	p := it.page
	if p == nil || p.done {
		return false
	}
	it.keys, it.pos = it.store.data.keysPage(p.from, p.to, p.last, p.reverse, memPageKeys), 0
	if len(it.keys) < memPageKeys {
		p.done = true
	}
	if len(it.keys) > 0 {
		p.last = it.keys[len(it.keys)-1]
	}
	return len(it.keys) > 0
}

// memIterator walks a snapshot of keys (or, paged, one page of keys at a time) and reads their
// values live, skipping deleted keys.
type memIterator struct {
	store  *inMemoryKeyValueStore
	keys   [][]byte
	pos    int
	key    []byte
	value  []byte
	err    error
	closed bool
	page   *memPage
}

func (it *memIterator) Next() bool {
	if it.closed {
		if it.err == nil {
			it.err = ErrIteratorClosed
		}
		return false
	}
	if it.err != nil {
		return false
	}
	it.store.mu.Lock()
	defer it.store.mu.Unlock()
	if !it.store.open.Load() {
		it.err = storeErr(it.store.name, "iterate", ErrStoreClosed)
		return false
	}
	for it.pos < len(it.keys) || it.refill() {
		k := it.keys[it.pos]
		it.pos++
		if v, ok := it.store.data.get(k); ok {
			it.key = bytes.Clone(k)
			it.value = bytes.Clone(v)
			return true
		}
	}
	it.key, it.value = nil, nil
	return false
}

func (it *memIterator) Key() []byte   { return it.key }
func (it *memIterator) Value() []byte { return it.value }
func (it *memIterator) Err() error    { return it.err }
func (it *memIterator) Close() error  { it.closed = true; return nil }
