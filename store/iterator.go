package store

import (
	"errors"
	"iter"

	"github.com/kstreams-go/kstreams/internal/storeapi"
)

// KeyValue is one entry of a store or of an iterator: a key and its value.
// Java counterpart: org.apache.kafka.streams.KeyValue.
type KeyValue[K, V any] struct {
	// Key is the entry's key.
	Key K
	// Value is the entry's value.
	Value V
}

// Pair returns the KeyValue of k and v. Java counterpart: KeyValue.pair(k, v).
func Pair[K, V any](k K, v V) KeyValue[K, V] { return KeyValue[K, V]{Key: k, Value: v} }

// KeyValueIterator walks the entries of a store range in key order (or reverse key order for the
// Reverse* methods). It is pull-style, as Java's KeyValueIterator, and must be closed:
//
//	it := s.Range(from, to)
//	defer it.Close()
//	for it.Next() {
//		use(it.Key(), it.Value())
//	}
//	if err := it.Err(); err != nil { ... }
//
// For range-over-func loops use [All]. Next returns false at the end, after Close, or when an
// error occurred (then Err returns it, e.g. a deserialization error or [ErrStoreClosed]). Key and
// Value return the entry Next moved to; they are only valid after Next returned true.
//
// Lifetime of slices: the []byte keys and values of a bytes-level iterator
// (KeyValueIterator[[]byte, []byte] of a [KeyValueBytesStore], and the window and session
// bytes iterators) may be views into the engine's buffers, valid only until the next call to
// Next or Close; the Pebble engines hand out such views (as a Pebble or RocksDB iterator does)
// so that a scan allocates nothing per entry. Code that keeps a key or value beyond that must
// copy it. The typed layers (the metered key-value store, the typed window and session stores) do
// this for keys and values of type []byte (whose deserializer, serde.ByteArray for example,
// returns its input); other types are decoded into fresh values. [Collect] copies too.
// Java counterpart: org.apache.kafka.streams.state.KeyValueIterator (hasNext/next/close/peekNextKey).
type KeyValueIterator[K, V any] interface {
	// Next advances to the next entry and reports whether there is one.
	Next() bool
	// Key returns the key of the current entry.
	Key() K
	// Value returns the value of the current entry.
	Value() V
	// Err returns the first error met while iterating, or nil.
	Err() error
	// Close releases the iterator; Next returns false afterwards. It is safe to call twice and
	// always returns nil for the in-memory engine.
	Close() error
}

// ErrIteratorClosed is reported by Err when Next is called on an iterator after Close.
// Java counterpart: the IllegalStateException "Iterator for store ... has already been closed".
var ErrIteratorClosed = errors.New("store: iterator has already been closed")

// All adapts a KeyValueIterator to a range-over-func sequence and closes it when the loop ends.
// Check it.Err() after the loop to see whether the walk stopped on an error.
func All[K, V any](it KeyValueIterator[K, V]) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		defer it.Close()
		for it.Next() {
			if !yield(it.Key(), it.Value()) {
				return
			}
		}
	}
}

// Collect drains the iterator into a slice, closes it and returns its error, if any. Keys and
// values of type []byte are copied, so the result stays valid after the iterator moved on.
func Collect[K, V any](it KeyValueIterator[K, V]) ([]KeyValue[K, V], error) {
	defer it.Close()
	var out []KeyValue[K, V]
	for it.Next() {
		out = append(out, KeyValue[K, V]{Key: storeapi.Detach(it.Key()), Value: storeapi.Detach(it.Value())})
	}
	return out, it.Err()
}

// SliceIterator returns an iterator over a fixed slice of entries, in slice order.
// Useful for tests and for mocks that must return an iterator.
func SliceIterator[K, V any](entries []KeyValue[K, V]) KeyValueIterator[K, V] {
	return &sliceIterator[K, V]{entries: entries, pos: -1}
}

// emptyIterator returns an iterator without entries. Java counterpart: KeyValueIterators.emptyIterator().
func emptyIterator[K, V any]() KeyValueIterator[K, V] { return &sliceIterator[K, V]{pos: -1} }

// ErrorIterator returns an iterator without entries whose Err returns err.
func ErrorIterator[K, V any](err error) KeyValueIterator[K, V] {
	return &sliceIterator[K, V]{pos: -1, err: err}
}

type sliceIterator[K, V any] struct {
	entries []KeyValue[K, V]
	pos     int
	err     error
	closed  bool
}

func (s *sliceIterator[K, V]) Next() bool {
	if s.closed {
		if s.err == nil {
			s.err = ErrIteratorClosed
		}
		return false
	}
	if s.err != nil || s.pos+1 >= len(s.entries) {
		s.pos = len(s.entries)
		return false
	}
	s.pos++
	return true
}

func (s *sliceIterator[K, V]) cur() (kv KeyValue[K, V]) {
	if s.pos >= 0 && s.pos < len(s.entries) {
		kv = s.entries[s.pos]
	}
	return kv
}

func (s *sliceIterator[K, V]) Key() K       { return s.cur().Key }
func (s *sliceIterator[K, V]) Value() V     { return s.cur().Value }
func (s *sliceIterator[K, V]) Err() error   { return s.err }
func (s *sliceIterator[K, V]) Close() error { s.closed = true; return nil }
