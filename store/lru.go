package store

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/kstreams-go/kstreams/processor"
)

// errNegativeSize is returned by Stores.LruMap for a negative maximum size.
// Java: IllegalArgumentException "maxCacheSize cannot be negative".
var errNegativeSize = errors.New("store: maxCacheSize cannot be negative")

// lruKeyValueStore is an in-memory bytes-level store holding at most maxCacheSize entries:
// when a put makes it exceed the size, the least recently used entry (by Get and Put) is
// evicted, and the eviction listener (set by the change-logging layer, which logs a tombstone
// for the evicted key) is told, except while restoring. Range scans sort a snapshot of the
// entries taken when the iterator is created. Java counterpart:
// org.apache.kafka.streams.state.internals.MemoryNavigableLRUCache (Stores.lruMap).
type lruKeyValueStore struct {
	name      string
	max       int
	mu        sync.Mutex
	ll        *list.List // front = least recently used
	items     map[string]*list.Element
	open      bool
	restoring bool
	listener  func(key, value []byte) error
}

type lruEntry struct {
	key   string
	value []byte
}

var _ KeyValueBytesStore = (*lruKeyValueStore)(nil)

// newLRUKeyValueStore returns a closed LRU store; Init opens it. maxCacheSize must be >= 0.
func newLRUKeyValueStore(name string, maxCacheSize int) *lruKeyValueStore {
	return &lruKeyValueStore{name: name, max: maxCacheSize, ll: list.New(), items: map[string]*list.Element{}}
}

// SetEvictionListener sets the function told about every evicted entry; its error is returned
// by the Put that evicted (Java: setWhenEldestRemoved).
func (s *lruKeyValueStore) SetEvictionListener(l func(key, value []byte) error) {
	s.mu.Lock()
	s.listener = l
	s.mu.Unlock()
}

// Name returns the store name.
func (s *lruKeyValueStore) Name() string { return s.name }

// Init opens the store and registers root with ctx; restored records do not notify the
// eviction listener.
func (s *lruKeyValueStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if ctx != nil {
		if err := ctx.Register(root, func(batch []processor.RestoreRecord) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.restoring = true
			defer func() { s.restoring = false }()
			for _, r := range batch {
				_ = s.putLocked(r.Key, r.Value) // no listener while restoring
			}
			return nil
		}); err != nil {
			return storeErr(s.name, "init", err)
		}
	}
	s.mu.Lock()
	s.open = true
	s.mu.Unlock()
	return nil
}

// Flush does nothing.
func (s *lruKeyValueStore) Flush() error { return nil }

// Close drops all entries.
func (s *lruKeyValueStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ll.Init()
	s.items = map[string]*list.Element{}
	s.open = false
	return nil
}

// Open opens the store without a context (for standalone use and tests).
func (s *lruKeyValueStore) Open() {
	s.mu.Lock()
	s.open = true
	s.mu.Unlock()
}

// Persistent reports false.
func (s *lruKeyValueStore) Persistent() bool { return false }

// IsOpen reports whether the store is open.
func (s *lruKeyValueStore) IsOpen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

func (s *lruKeyValueStore) putLocked(key, value []byte) error {
	k := string(key)
	if value == nil {
		if e, ok := s.items[k]; ok {
			s.ll.Remove(e)
			delete(s.items, k)
		}
		return nil
	}
	if e, ok := s.items[k]; ok {
		e.Value.(*lruEntry).value = bytes.Clone(value)
		s.ll.MoveToBack(e)
	} else {
		s.items[k] = s.ll.PushBack(&lruEntry{key: k, value: bytes.Clone(value)})
	}
	if s.ll.Len() > s.max {
		e := s.ll.Front()
		ent := e.Value.(*lruEntry)
		s.ll.Remove(e)
		delete(s.items, ent.key)
		if !s.restoring && s.listener != nil {
			return s.listener([]byte(ent.key), ent.value)
		}
	}
	return nil
}

// Get returns the value of key and marks it most recently used.
func (s *lruKeyValueStore) Get(key []byte) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return nil, false, storeErr(s.name, "get", ErrStoreClosed)
	}
	e, ok := s.items[string(key)]
	if !ok {
		return nil, false, nil
	}
	s.ll.MoveToBack(e)
	return bytes.Clone(e.Value.(*lruEntry).value), true, nil
}

// Put stores value (nil deletes), possibly evicting the least recently used entry.
func (s *lruKeyValueStore) Put(key, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return storeErr(s.name, "put", ErrStoreClosed)
	}
	return s.putLocked(key, value)
}

// PutIfAbsent stores value when key is absent (a present key becomes most recently used).
func (s *lruKeyValueStore) PutIfAbsent(key, value []byte) ([]byte, bool, error) {
	old, found, err := s.Get(key)
	if err != nil || found {
		return old, found, err
	}
	return nil, false, s.Put(key, value)
}

// PutAll applies Put to each entry in order.
func (s *lruKeyValueStore) PutAll(entries []KeyValue[[]byte, []byte]) error {
	for _, e := range entries {
		if err := s.Put(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes key and returns its old value.
func (s *lruKeyValueStore) Delete(key []byte) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return nil, false, storeErr(s.name, "delete", ErrStoreClosed)
	}
	e, ok := s.items[string(key)]
	if !ok {
		return nil, false, nil
	}
	s.ll.Remove(e)
	delete(s.items, string(key))
	return e.Value.(*lruEntry).value, true, nil
}

// snapshot returns the entries with from <= key <= to (nil = unbounded), sorted.
func (s *lruKeyValueStore) snapshot(op string, keep func(k []byte) bool, reverse bool) KeyValueIterator[[]byte, []byte] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return ErrorIterator[[]byte, []byte](storeErr(s.name, op, ErrStoreClosed))
	}
	var out []KeyValue[[]byte, []byte]
	for k, e := range s.items {
		if keep([]byte(k)) {
			out = append(out, KeyValue[[]byte, []byte]{Key: []byte(k), Value: bytes.Clone(e.Value.(*lruEntry).value)})
		}
	}
	slices.SortFunc(out, func(a, b KeyValue[[]byte, []byte]) int { return bytes.Compare(a.Key, b.Key) })
	if reverse {
		slices.Reverse(out)
	}
	return SliceIterator(out)
}

func inRange(from, to []byte) func(k []byte) bool {
	return func(k []byte) bool {
		return (from == nil || bytes.Compare(k, from) >= 0) && (to == nil || bytes.Compare(k, to) <= 0)
	}
}

// Range iterates from <= key <= to ascending over a snapshot; from > to is empty.
func (s *lruKeyValueStore) Range(from, to []byte) KeyValueIterator[[]byte, []byte] {
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return emptyIterator[[]byte, []byte]()
	}
	return s.snapshot("range", inRange(from, to), false)
}

// ReverseRange iterates from <= key <= to descending over a snapshot.
func (s *lruKeyValueStore) ReverseRange(from, to []byte) KeyValueIterator[[]byte, []byte] {
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return emptyIterator[[]byte, []byte]()
	}
	return s.snapshot("reverseRange", inRange(from, to), true)
}

// All iterates all entries ascending.
func (s *lruKeyValueStore) All() KeyValueIterator[[]byte, []byte] { return s.Range(nil, nil) }

// ReverseAll iterates all entries descending.
func (s *lruKeyValueStore) ReverseAll() KeyValueIterator[[]byte, []byte] {
	return s.ReverseRange(nil, nil)
}

// PrefixScan iterates the keys starting with prefix, ascending.
func (s *lruKeyValueStore) PrefixScan(prefix []byte) KeyValueIterator[[]byte, []byte] {
	return s.snapshot("prefixScan", func(k []byte) bool { return bytes.HasPrefix(k, prefix) }, false)
}

// ApproximateNumEntries returns the number of entries.
func (s *lruKeyValueStore) ApproximateNumEntries() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.items))
}

type lruSupplier struct {
	name string
	max  int
}

func (s lruSupplier) Name() string            { return s.name }
func (s lruSupplier) Get() KeyValueBytesStore { return newLRUKeyValueStore(s.name, s.max) }
func (s lruSupplier) MetricsScope() string    { return "in-memory-lru" }

// LruMap returns a supplier of LRU stores named name holding at most maxCacheSize entries.
// Errors: ErrNegativeSize. Java: Stores.lruMap(name, maxCacheSize).
func (StoresFactory) LruMap(name string, maxCacheSize int) (KeyValueBytesStoreSupplier, error) {
	if maxCacheSize < 0 {
		return nil, fmt.Errorf("%w: %d", errNegativeSize, maxCacheSize)
	}
	return lruSupplier{name: name, max: maxCacheSize}, nil
}
