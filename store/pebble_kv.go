package store

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kstreams-go/kstreams/processor"
)

// pebbleKeyValueStore is the persistent bytes-level key-value engine: one Pebble database per
// store per task, at <task state dir>/pebble/<name>, opened with the application instance's
// shared Pebble environment (pebbleEnv). Keys keep Java's unsigned lexicographic order. Iterators read a
// consistent snapshot taken when they are created. Writes wait in a batch that reads see (see
// pebbleDB): the transaction under exactly-once, a write-behind batch that Flush applies under
// at-least-once. A corrupt database found at Init is wiped (with a warning log) and restored
// from the changelog.
// Java counterpart: org.apache.kafka.streams.state.internals.RocksDBStore.
type pebbleKeyValueStore struct {
	name string
	mu   sync.Mutex
	db   *pebbleDB
	kv   space
}

var (
	_ KeyValueBytesStore          = (*pebbleKeyValueStore)(nil)
	_ storeapi.TransactionalStore = (*pebbleKeyValueStore)(nil)
	_ storeapi.WipeableStore      = (*pebbleKeyValueStore)(nil)
)

// newPebbleKeyValueStore returns a closed Pebble store named name; Init opens it. Most users get
// one through Stores.PersistentKeyValueStore(name).Get().
func newPebbleKeyValueStore(name string) *pebbleKeyValueStore {
	return &pebbleKeyValueStore{name: name}
}

// Name returns the store name.
func (s *pebbleKeyValueStore) Name() string { return s.name }

// Init opens the database in ctx's state directory (an in-memory file system when ctx is nil
// or has no state directory) and registers root with a restore callback that writes each batch
// of changelog records, and the offset of its last record, in one Pebble batch.
func (s *pebbleKeyValueStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	db, err := openPebbleDB(ctx, s.name)
	if err != nil {
		return storeErr(s.name, "init", err)
	}
	s.mu.Lock()
	s.db, s.kv = db, space{p: db, prefix: []byte{nsKV}}
	s.mu.Unlock()
	if ctx != nil {
		if err := ctx.Register(root, s.restoreBatch); err != nil {
			_ = db.close()
			return storeErr(s.name, "init", err)
		}
	}
	return nil
}

// restoreBatch writes a batch of changelog records straight into the database, or hands them
// to the running bulk restore.
func (s *pebbleKeyValueStore) restoreBatch(batch []processor.RestoreRecord) error {
	p := s.db
	p.mu.Lock()
	if b := p.bulk; b != nil {
		err := b.restoreBatch(s.kv.prefix, batch)
		p.mu.Unlock()
		return err
	}
	p.mu.Unlock()
	return restoreInto(s.db, batch, func(w pebble.Writer, r processor.RestoreRecord) error {
		return s.kv.putLocked(w, r.Key, r.Value)
	})
}

// restoreInto applies batch to p in one Pebble batch with the offset of its last record.
func restoreInto(p *pebbleDB, batch []processor.RestoreRecord, apply func(pebble.Writer, processor.RestoreRecord) error) error {
	if len(batch) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return ErrStoreClosed
	}
	if err := p.settleLocked(); err != nil {
		return err
	}
	// One batch per database is reused from restore batch to restore batch (Reset keeps its
	// buffer), so a long restore does not grow a fresh ~100 KiB buffer for every batch.
	b := p.restoreBatch
	if b == nil {
		b = p.db.NewBatch()
		p.restoreBatch = b
	}
	defer b.Reset()
	for _, r := range batch {
		if err := apply(b, r); err != nil {
			return err
		}
	}
	if err := b.Set(metaOffsetKey, offsetBytes(batch[len(batch)-1].Offset), nil); err != nil {
		return err
	}
	return p.db.Apply(b, p.wo)
}

// Flush applies the write-behind batch and makes the written data durable (a memtable flush);
// under exactly-once it does nothing, as data only reaches the database with CommitTransaction.
func (s *pebbleKeyValueStore) Flush() error {
	if s.db == nil {
		return storeErr(s.name, "flush", ErrStoreClosed)
	}
	return storeErr(s.name, "flush", s.db.flush())
}

// Close closes the database. Writes not applied are dropped: an open transaction, or the
// at-least-once writes since the last Flush (a clean close flushes first). Calling it twice is
// allowed.
func (s *pebbleKeyValueStore) Close() error {
	if s.db == nil {
		return nil
	}
	return storeErr(s.name, "close", s.db.close())
}

// Persistent reports true.
func (s *pebbleKeyValueStore) Persistent() bool { return true }

// IsOpen reports whether Init was called and Close was not.
func (s *pebbleKeyValueStore) IsOpen() bool {
	return s.db != nil && s.db.live.Load()
}

// Get returns a copy of key's value, or (nil, false, nil) when absent.
func (s *pebbleKeyValueStore) Get(key []byte) ([]byte, bool, error) {
	if s.db == nil {
		return nil, false, storeErr(s.name, "get", ErrStoreClosed)
	}
	v, ok, err := s.kv.get(key)
	return v, ok, storeErr(s.name, "get", err)
}

// Put stores value under key; a nil value deletes key.
func (s *pebbleKeyValueStore) Put(key, value []byte) error {
	if s.db == nil {
		return storeErr(s.name, "put", ErrStoreClosed)
	}
	return storeErr(s.name, "put", s.kv.put(key, value))
}

// PutIfAbsent stores value when key is absent; otherwise returns the current value and true.
func (s *pebbleKeyValueStore) PutIfAbsent(key, value []byte) ([]byte, bool, error) {
	old, ok, err := s.Get(key)
	if err != nil || ok {
		return old, ok, err
	}
	return nil, false, s.Put(key, value)
}

// PutAll writes all entries into the pending batch (the open transaction under exactly-once,
// the write-behind batch under at-least-once).
func (s *pebbleKeyValueStore) PutAll(entries []KeyValue[[]byte, []byte]) error {
	if s.db == nil {
		return storeErr(s.name, "putAll", ErrStoreClosed)
	}
	p := s.db
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return storeErr(s.name, "putAll", ErrStoreClosed)
	}
	for _, e := range entries {
		if err := s.kv.putPendingLocked(e.Key, e.Value); err != nil {
			return storeErr(s.name, "putAll", err)
		}
	}
	return nil
}

// Delete removes key and returns its old value.
func (s *pebbleKeyValueStore) Delete(key []byte) ([]byte, bool, error) {
	old, ok, err := s.Get(key)
	if err != nil {
		return nil, false, err
	}
	return old, ok, s.Put(key, nil)
}

// Range iterates from <= key <= to ascending; nil bounds are unbounded; from > to is empty.
// The iterator reads a snapshot taken now. Its keys and values are views into Pebble's
// buffers, valid until the iterator's next Next or Close: copy what you keep (see
// [KeyValueBytesStore]). The same holds for ReverseRange, All, ReverseAll and PrefixScan.
func (s *pebbleKeyValueStore) Range(from, to []byte) KeyValueIterator[[]byte, []byte] {
	// Small enough to be inlined, so that the caller's Next, Key and Value calls on the
	// concrete iterator can be devirtualized.
	return s.iter(from, to, true)
}

// ReverseRange iterates from <= key <= to descending.
func (s *pebbleKeyValueStore) ReverseRange(from, to []byte) KeyValueIterator[[]byte, []byte] {
	return s.iter(from, to, false)
}

// iter is Range (forward) or ReverseRange with the concrete iterator type; a closed store
// gives an iterator whose Err is ErrStoreClosed.
func (s *pebbleKeyValueStore) iter(from, to []byte, forward bool) *pebbleIterator {
	if s.db == nil {
		return failedIterator(storeErr(s.name, "range", ErrStoreClosed))
	}
	return s.kv.iter(from, to, forward)
}

// All iterates all entries ascending.
func (s *pebbleKeyValueStore) All() KeyValueIterator[[]byte, []byte] { return s.iter(nil, nil, true) }

// ReverseAll iterates all entries descending.
func (s *pebbleKeyValueStore) ReverseAll() KeyValueIterator[[]byte, []byte] {
	return s.iter(nil, nil, false)
}

// PrefixScan iterates the keys that start with prefix, ascending.
func (s *pebbleKeyValueStore) PrefixScan(prefix []byte) KeyValueIterator[[]byte, []byte] {
	if s.db == nil {
		return failedIterator(storeErr(s.name, "prefixScan", ErrStoreClosed))
	}
	return s.kv.prefixIter(prefix)
}

// ApproximateNumEntries counts the entries (an exact count, by a scan: O(n)). Java's RocksDB
// store returns RocksDB's estimate instead. It returns 0 when the store is closed.
func (s *pebbleKeyValueStore) ApproximateNumEntries() int64 {
	it := s.All()
	defer it.Close()
	var n int64
	for it.Next() {
		n++
	}
	return n
}

// CommitTransaction implements [storeapi.TransactionalStore].
func (s *pebbleKeyValueStore) CommitTransaction(changelogOffset int64) error {
	if s.db == nil {
		return storeErr(s.name, "commit", ErrStoreClosed)
	}
	return storeErr(s.name, "commit", s.db.commitTransaction(changelogOffset))
}

// AbortTransaction implements [storeapi.TransactionalStore].
func (s *pebbleKeyValueStore) AbortTransaction() error {
	if s.db == nil {
		return storeErr(s.name, "abort", ErrStoreClosed)
	}
	return storeErr(s.name, "abort", s.db.abortTransaction())
}

// CommittedOffset implements [storeapi.TransactionalStore].
func (s *pebbleKeyValueStore) CommittedOffset() (int64, bool, error) {
	if s.db == nil {
		return 0, false, storeErr(s.name, "offset", ErrStoreClosed)
	}
	o, ok, err := s.db.committedOffset()
	return o, ok, storeErr(s.name, "offset", err)
}

// Transactional implements [storeapi.TransactionalStore].
func (s *pebbleKeyValueStore) Transactional() bool { return s.db != nil && s.db.eos }

// Wipe implements [storeapi.WipeableStore].
func (s *pebbleKeyValueStore) Wipe() error {
	if s.db == nil {
		return storeErr(s.name, "wipe", ErrStoreClosed)
	}
	return storeErr(s.name, "wipe", s.db.wipe())
}

// WipedOnOpen implements [storeapi.WipeableStore].
func (s *pebbleKeyValueStore) WipedOnOpen() bool { return s.db != nil && s.db.wiped }

// IsEmpty implements [storeapi.WipeableStore].
func (s *pebbleKeyValueStore) IsEmpty() (bool, error) {
	it := s.All()
	defer it.Close()
	has := it.Next()
	return !has, it.Err()
}
