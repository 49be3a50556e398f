package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Window store key layout (Java's WindowKeySchema.toStoreKeyBinary), big-endian:
//
//	key bytes ‖ int64 windowStart (ms) ‖ int32 seqnum
//
// The seqnum is 0 unless the store retains duplicates. The changelog key of a window store is
// the same bytes.
const windowSuffixLen = 12

// errShortStoreKey is returned when a window or session store key is shorter than its
// fixed-size suffix (12 bytes for windows, 16 for sessions).
var errShortStoreKey = errors.New("store: store key shorter than its timestamp suffix")

// splitWindowStoreKey splits a window store key into key bytes (aliasing b), window start (ms)
// and seqnum. Errors: [errShortStoreKey]. Java: WindowKeySchema.extractStoreKeyBytes,
// extractStoreTimestamp, extractStoreSequence.
func splitWindowStoreKey(b []byte) (key []byte, windowStart int64, seqnum int32, err error) {
	if len(b) < windowSuffixLen {
		return nil, 0, 0, errShortStoreKey
	}
	n := len(b) - windowSuffixLen
	return b[:n:n], int64(binary.BigEndian.Uint64(b[n:])), int32(binary.BigEndian.Uint32(b[n+8:])), nil
}

func windowSegTime(b []byte) int64 {
	if len(b) < windowSuffixLen {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b[len(b)-windowSuffixLen:]))
}

// windowEnd returns start + size, or math.MaxInt64 on overflow (Java's TimeWindow rule).
func windowEnd(start, size int64) int64 {
	if e := start + size; e >= start {
		return e
	}
	return math.MaxInt64
}

// ReadOnlyWindowStore is the read side of a window store. Times are epoch ms, bounds
// inclusive. Iterators must be closed. Java counterpart: org.apache.kafka.streams.state.ReadOnlyWindowStore.
type ReadOnlyWindowStore[K, V any] interface {
	// Fetch returns the value of key in the window starting at windowStart, and false when
	// there is none (or it expired). Java: fetch(key, time).
	Fetch(key K, windowStart int64) (V, bool, error)
	// FetchTimeRange iterates the windows of key with timeFrom <= start <= timeTo, by
	// ascending start; the iterator's keys are window starts. Java: fetch(key, timeFrom, timeTo).
	FetchTimeRange(key K, timeFrom, timeTo int64) KeyValueIterator[int64, V]
	// BackwardFetchTimeRange is FetchTimeRange by descending start. Java: backwardFetch(key, from, to).
	BackwardFetchTimeRange(key K, timeFrom, timeTo int64) KeyValueIterator[int64, V]
	// FetchKeyRange iterates the windows of keys in [keyFrom, keyTo] (serialized order) with
	// timeFrom <= start <= timeTo, ordered by segment, then key bytes, then start (Java's
	// RocksDB order). Java: fetch(keyFrom, keyTo, timeFrom, timeTo).
	FetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], V]
	// BackwardFetchKeyRange is FetchKeyRange in reverse order. Java: backwardFetch(keyFrom, keyTo, from, to).
	BackwardFetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], V]
	// FetchAll iterates the windows of all keys with timeFrom <= start <= timeTo.
	// Java: fetchAll(timeFrom, timeTo).
	FetchAll(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], V]
	// BackwardFetchAll is FetchAll in reverse order. Java: backwardFetchAll(timeFrom, timeTo).
	BackwardFetchAll(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], V]
	// All iterates every retained window. Java: all().
	All() KeyValueIterator[serde.Windowed[K], V]
	// BackwardAll iterates every retained window in reverse order. Java: backwardAll().
	BackwardAll() KeyValueIterator[serde.Windowed[K], V]
}

// WindowStore is a read-write window store. Java counterpart: org.apache.kafka.streams.state.WindowStore.
type WindowStore[K, V any] interface {
	StateStore
	ReadOnlyWindowStore[K, V]
	// Put stores value for key in the window starting at windowStart (ms); a nil value deletes
	// it (ignored when duplicates are retained, as Java). Records whose window is older than the
	// retention period behind the observed stream time are dropped. Java: put(key, value, windowStartTimestamp).
	Put(key K, value V, windowStart int64) error
}

// WindowBytesStore is the bytes-level window store engines implement; a nil key bound of
// FetchKeyRange means unbounded. Java counterpart: WindowStore<Bytes, byte[]>.
type WindowBytesStore = WindowStore[[]byte, []byte]

// windowBytesStore is the window engine over segments (in memory or Pebble).
type windowBytesStore struct {
	seg              *segmentedBytesStore
	windowSize       int64
	retainDuplicates bool
	seqnum           int32
}

func newWindowBytesStore(name string, retention, segmentInterval, windowSize int64, retainDuplicates bool, eng segmentEngine) windowBytesStore {
	return windowBytesStore{seg: newSegmentedBytesStore(name, retention, segmentInterval, windowSegTime, eng),
		windowSize: windowSize, retainDuplicates: retainDuplicates}
}

// Name returns the store name.
func (w *windowBytesStore) Name() string { return w.seg.name }

// Init opens the segments and registers root for restore.
func (w *windowBytesStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	return w.seg.init(ctx, root)
}

// Flush flushes the engine.
func (w *windowBytesStore) Flush() error { return storeErr(w.Name(), "flush", w.seg.eng.flush()) }

// Close closes the engine.
func (w *windowBytesStore) Close() error { return storeErr(w.Name(), "close", w.seg.eng.close()) }

// Persistent reports whether the engine is Pebble.
func (w *windowBytesStore) Persistent() bool { return w.seg.eng.persistent() }

// IsOpen reports whether the store is open.
func (w *windowBytesStore) IsOpen() bool { return w.seg.eng.isOpen() }

// Put implements WindowStore.Put.
func (w *windowBytesStore) Put(key, value []byte, windowStart int64) error {
	if value == nil && w.retainDuplicates {
		return nil
	}
	if w.retainDuplicates {
		w.seqnum = (w.seqnum + 1) & math.MaxInt32
	}
	return w.seg.put(storeapi.WindowStoreKey(key, windowStart, w.seqnum), value)
}

// Fetch implements WindowStore.Fetch.
func (w *windowBytesStore) Fetch(key []byte, windowStart int64) ([]byte, bool, error) {
	return w.seg.get(storeapi.WindowStoreKey(key, windowStart, w.seqnum))
}

// FetchTimeRange implements WindowStore.FetchTimeRange.
func (w *windowBytesStore) FetchTimeRange(key []byte, timeFrom, timeTo int64) KeyValueIterator[int64, []byte] {
	return w.fetchKey(key, timeFrom, timeTo, true)
}

// BackwardFetchTimeRange implements WindowStore.BackwardFetchTimeRange.
func (w *windowBytesStore) BackwardFetchTimeRange(key []byte, timeFrom, timeTo int64) KeyValueIterator[int64, []byte] {
	return w.fetchKey(key, timeFrom, timeTo, false)
}

func (w *windowBytesStore) fetchKey(key []byte, timeFrom, timeTo int64, forward bool) KeyValueIterator[int64, []byte] {
	from := w.seg.actualFrom(timeFrom)
	if timeTo < from {
		return emptyIterator[int64, []byte]()
	}
	lower := storeapi.WindowStoreKey(key, from, 0)
	upper := storeapi.WindowStoreKey(key, timeTo, math.MaxInt32)
	it := w.seg.fetch(from, timeTo, lower, upper, forward, func(sk []byte) bool {
		k, ts, _, err := splitWindowStoreKey(sk)
		return err == nil && bytes.Equal(k, key) && ts >= from && ts <= timeTo
	})
	return &mapKeyIterator[int64]{it: it, conv: func(sk []byte) (int64, error) {
		_, ts, _, err := splitWindowStoreKey(sk)
		return ts, err
	}}
}

// FetchKeyRange implements WindowStore.FetchKeyRange (nil bounds: unbounded).
func (w *windowBytesStore) FetchKeyRange(keyFrom, keyTo []byte, timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return w.fetchRange(keyFrom, keyTo, timeFrom, timeTo, true)
}

// BackwardFetchKeyRange implements WindowStore.BackwardFetchKeyRange.
func (w *windowBytesStore) BackwardFetchKeyRange(keyFrom, keyTo []byte, timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return w.fetchRange(keyFrom, keyTo, timeFrom, timeTo, false)
}

// FetchAll implements WindowStore.FetchAll.
func (w *windowBytesStore) FetchAll(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return w.fetchRange(nil, nil, timeFrom, timeTo, true)
}

// BackwardFetchAll implements WindowStore.BackwardFetchAll.
func (w *windowBytesStore) BackwardFetchAll(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return w.fetchRange(nil, nil, timeFrom, timeTo, false)
}

// All implements WindowStore.All.
func (w *windowBytesStore) All() KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return w.fetchRange(nil, nil, math.MinInt64, math.MaxInt64, true)
}

// BackwardAll implements WindowStore.BackwardAll.
func (w *windowBytesStore) BackwardAll() KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return w.fetchRange(nil, nil, math.MinInt64, math.MaxInt64, false)
}

func (w *windowBytesStore) fetchRange(keyFrom, keyTo []byte, timeFrom, timeTo int64, forward bool) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if keyFrom != nil && keyTo != nil && bytes.Compare(keyFrom, keyTo) > 0 {
		return emptyIterator[serde.Windowed[[]byte], []byte]()
	}
	from := w.seg.actualFrom(timeFrom)
	if timeTo < from {
		return emptyIterator[serde.Windowed[[]byte], []byte]()
	}
	var upper []byte
	if keyTo != nil {
		// Every store key of a key <= keyTo sorts below prefixEnd(keyTo) (nil: unbounded);
		// keep filters the exact bounds.
		upper = prefixEnd(keyTo)
	}
	it := w.seg.fetch(from, timeTo, keyFrom, upper, forward, func(sk []byte) bool {
		k, ts, _, err := splitWindowStoreKey(sk)
		return err == nil && ts >= from && ts <= timeTo &&
			(keyFrom == nil || bytes.Compare(k, keyFrom) >= 0) && (keyTo == nil || bytes.Compare(k, keyTo) <= 0)
	})
	return &mapKeyIterator[serde.Windowed[[]byte]]{it: it, conv: func(sk []byte) (serde.Windowed[[]byte], error) {
		k, ts, _, err := splitWindowStoreKey(sk)
		return serde.Windowed[[]byte]{Key: k, Window: serde.Window{Start: ts, End: windowEnd(ts, w.windowSize)}}, err
	}}
}

// mapKeyIterator turns store keys into another key type.
type mapKeyIterator[K any] struct {
	it   KeyValueIterator[[]byte, []byte]
	conv func([]byte) (K, error)
	key  K
	err  error
}

func (m *mapKeyIterator[K]) Next() bool {
	if m.err != nil || !m.it.Next() {
		return false
	}
	k, err := m.conv(m.it.Key())
	if err != nil {
		m.err = err
		return false
	}
	m.key = k
	return true
}
func (m *mapKeyIterator[K]) Key() K        { return m.key }
func (m *mapKeyIterator[K]) Value() []byte { return m.it.Value() }
func (m *mapKeyIterator[K]) Err() error {
	if m.err != nil {
		return m.err
	}
	return m.it.Err()
}
func (m *mapKeyIterator[K]) Close() error { return m.it.Close() }

// inMemoryWindowStore is the in-memory window engine. Data is kept in time segments as the
// Pebble engine does, so both return results in the same order (Java's RocksDB order: segment,
// key bytes, window start; Java's own in-memory window store orders by window start first).
// Java counterpart: org.apache.kafka.streams.state.internals.inMemoryWindowStore.
type inMemoryWindowStore struct{ windowBytesStore }

// pebbleWindowStore is the persistent window engine: one Pebble database per store per task
// whose segments are key prefixes (segment id = window start / segment interval); expired
// segments are dropped with one range deletion. It implements [storeapi.TransactionalStore] and
// [storeapi.WipeableStore]. Java counterpart: RocksDBWindowStore over RocksDBSegmentedBytesStore.
type pebbleWindowStore struct {
	windowBytesStore
	segmentedEngineOps
}

var (
	_ WindowBytesStore            = (*inMemoryWindowStore)(nil)
	_ WindowBytesStore            = (*pebbleWindowStore)(nil)
	_ storeapi.TransactionalStore = (*pebbleWindowStore)(nil)
	_ storeapi.WipeableStore      = (*pebbleWindowStore)(nil)
)

// newInMemoryWindowStore returns a closed in-memory window engine. retention and windowSize
// are in ms; duplicates are kept with increasing seqnums when retainDuplicates is set.
func newInMemoryWindowStore(name string, retention, windowSize int64, retainDuplicates bool) *inMemoryWindowStore {
	return &inMemoryWindowStore{newWindowBytesStore(name, retention, storeapi.DefaultSegmentInterval(retention), windowSize, retainDuplicates, newMemSegments())}
}

// newPebbleWindowStore returns a closed Pebble window engine; segmentInterval <= 0 means
// [storeapi.DefaultSegmentInterval](retention).
func newPebbleWindowStore(name string, retention, segmentInterval, windowSize int64, retainDuplicates bool) *pebbleWindowStore {
	if segmentInterval <= 0 {
		segmentInterval = storeapi.DefaultSegmentInterval(retention)
	}
	eng := newPebbleSegments()
	return &pebbleWindowStore{
		windowBytesStore:   newWindowBytesStore(name, retention, segmentInterval, windowSize, retainDuplicates, eng),
		segmentedEngineOps: segmentedEngineOps{eng: eng, name: name},
	}
}

// Segments returns the ids of the store's live segments (ascending); for tests and tools.
func (w *windowBytesStore) Segments() []int64 { return w.seg.eng.ids() }

// ExpiredRecords returns how many puts were dropped because their window had expired.
// Java: the dropped-records (expired-window-record-drop) sensor.
func (w *windowBytesStore) ExpiredRecords() int64 {
	w.seg.mu.Lock()
	defer w.seg.mu.Unlock()
	return w.seg.expired
}

// RetainDuplicates reports whether the store keeps every put with its own seqnum.
func (w *windowBytesStore) RetainDuplicates() bool { return w.retainDuplicates }

// WindowSize returns the window size in ms.
func (w *windowBytesStore) WindowSize() int64 { return w.windowSize }
