package store

import (
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/processor"
)

// StateStore is the base interface of every store: processor.StateStore, re-exported here for
// discoverability. Java counterpart: org.apache.kafka.streams.processor.StateStore.
type StateStore = processor.StateStore

// ReadOnlyKeyValueStore is the read side of a key-value store, as handed to interactive queries
// and value getters. Keys are ordered by their serialized bytes in unsigned lexicographic order
// (Java's Bytes comparator), so ranges follow the serialized order, not Go's order of K.
// Java counterpart: org.apache.kafka.streams.state.ReadOnlyKeyValueStore.
type ReadOnlyKeyValueStore[K, V any] interface {
	// Get returns the value of key and true, or the zero V and false when the key is absent
	// (Java returns null). Errors: ErrStoreClosed, serialization errors (wrapped).
	Get(key K) (V, bool, error)
	// Range iterates the entries with from <= key <= to (both inclusive) in ascending key order.
	// When from sorts after to, the iterator is empty (Java logs a warning and does the same).
	// For the bytes-level store a nil bound means unbounded. Errors are reported by the iterator's Err.
	Range(from, to K) KeyValueIterator[K, V]
	// ReverseRange is Range in descending key order (same inclusive bounds, from <= to).
	ReverseRange(from, to K) KeyValueIterator[K, V]
	// All iterates every entry in ascending key order.
	All() KeyValueIterator[K, V]
	// ReverseAll iterates every entry in descending key order.
	ReverseAll() KeyValueIterator[K, V]
	// PrefixScan iterates, in ascending order, the entries whose serialized key starts with the
	// serialized prefix. Java's prefixScan(prefix, prefixKeySerializer) takes the prefix and its
	// serializer; here the caller passes the serialized prefix, or uses the typed helper
	// [PrefixScan]. An empty prefix matches every entry.
	PrefixScan(prefix []byte) KeyValueIterator[K, V]
	// ApproximateNumEntries returns an estimate of the number of entries (exact for the
	// in-memory engine).
	ApproximateNumEntries() int64
}

// KeyValueStore is a read-write key-value state store.
// Java counterpart: org.apache.kafka.streams.state.KeyValueStore.
type KeyValueStore[K, V any] interface {
	StateStore
	ReadOnlyKeyValueStore[K, V]
	// Put stores value under key. A nil value (nil pointer, slice, map or interface) deletes the
	// key, as Java's put(key, null). Errors: ErrStoreClosed, serialization errors.
	Put(key K, value V) error
	// PutIfAbsent stores value only when key has no value; it returns the existing value and true
	// when there was one (and then stores nothing), or the zero V and false.
	PutIfAbsent(key K, value V) (V, bool, error)
	// PutAll applies Put to each entry in order.
	PutAll(entries []KeyValue[K, V]) error
	// Delete removes key and returns its old value and true, or the zero V and false when absent.
	Delete(key K) (V, bool, error)
}

// KeyValueBytesStore is the bytes-level store an engine implements: keys and values are raw
// bytes, keys ordered by unsigned lexicographic byte order (bytes.Compare, Java's Bytes
// comparator). A nil value means "absent": Get returns (nil, false, nil) for absent keys and
// Put(k, nil) deletes. Range bounds may be nil (unbounded). Implementations copy the slices
// they keep. Get returns a value the caller owns; the keys and values of the iterators
// (Range, ReverseRange, All, ReverseAll, PrefixScan) may be views valid only until the
// iterator's next Next or Close, as the Pebble engine's are: copy them (for example with
// bytes.Clone or [Collect]) to keep them. Java counterpart: KeyValueStore<Bytes, byte[]> (whose
// RocksDB iterators copy each entry into a fresh array; Go need not).
type KeyValueBytesStore = KeyValueStore[[]byte, []byte]

// ErrStoreClosed is returned by store operations before Init or after Close.
// Java counterpart: org.apache.kafka.streams.errors.InvalidStateStoreException ("Store ... is currently closed").
var ErrStoreClosed = errors.New("store: state store is not open")

// StoreError wraps an error with the name of the store and the operation it concerns.
type StoreError struct {
	// Store is the store name.
	Store string
	// Op is the operation, e.g. "put", "get", "init".
	Op string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *StoreError) Error() string {
	return fmt.Sprintf("store %q: %s: %v", e.Store, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *StoreError) Unwrap() error { return e.Err }

func storeErr(name, op string, err error) error {
	if err == nil {
		return nil
	}
	return &StoreError{Store: name, Op: op, Err: err}
}
