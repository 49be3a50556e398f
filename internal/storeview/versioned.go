package storeview

import (
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// Versioned is the kind of a versioned key-value store (KIP-889).
const Versioned Kind = "versioned key-value store"

// UntypedVersioned is the DSL's versioned key-value store (a table materialized with a
// versioned store supplier).
type UntypedVersioned = store.VersionedKeyValueStore[any, any]

// VersionedStore views a versioned store of untyped keys and values as one of keys K and
// values V, for reads and writes. A tombstone (nil V) is written as a null value.
func VersionedStore[K, V any](s UntypedVersioned) store.VersionedKeyValueStore[K, V] {
	return &versioned[K, V]{StateStore: s, s: s}
}

type versioned[K, V any] struct {
	processor.StateStore
	s UntypedVersioned
}

func (w *versioned[K, V]) Put(key K, value V, timestamp int64) (int64, error) {
	return w.s.Put(Box(key), Box(value), timestamp)
}

func (w *versioned[K, V]) Delete(key K, timestamp int64) (*store.VersionedRecord[V], error) {
	r, err := w.s.Delete(Box(key), timestamp)
	if err != nil {
		return nil, err
	}
	return versionedTo[V](r)
}

func (w *versioned[K, V]) Get(key K) (*store.VersionedRecord[V], error) {
	r, err := w.s.Get(Box(key))
	if err != nil {
		return nil, err
	}
	return versionedTo[V](r)
}

func (w *versioned[K, V]) GetAsOf(key K, asOfTimestamp int64) (*store.VersionedRecord[V], error) {
	r, err := w.s.GetAsOf(Box(key), asOfTimestamp)
	if err != nil {
		return nil, err
	}
	return versionedTo[V](r)
}

// versionedTo reads an untyped version as a typed one (nil stays nil).
func versionedTo[V any](r *store.VersionedRecord[any]) (*store.VersionedRecord[V], error) {
	if r == nil {
		return nil, nil
	}
	v, err := Cast[V]("value", r.Value)
	if err != nil {
		return nil, err
	}
	return &store.VersionedRecord[V]{Value: v, Timestamp: r.Timestamp, ValidTo: r.ValidTo, HasValidTo: r.HasValidTo}, nil
}

// GetVersions implements store.VersionHistoryReader over the untyped store (errors.ErrUnsupported,
// wrapped, when it cannot list versions).
func (w *versioned[K, V]) GetVersions(key K, fromTime, toTime int64, ascending bool) (store.VersionedRecordIterator[V], error) {
	r, ok := w.s.(store.VersionHistoryReader[any, any])
	if !ok {
		return nil, fmt.Errorf("%w: store %q (%T) cannot list versions", errors.ErrUnsupported, w.s.Name(), w.s)
	}
	it, err := r.GetVersions(Box(key), fromTime, toTime, ascending)
	if err != nil {
		return nil, err
	}
	raw, err := store.CollectVersions(it)
	if err != nil {
		return nil, err
	}
	out := make([]store.VersionedRecord[V], 0, len(raw))
	for i := range raw {
		v, err := versionedTo[V](&raw[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return store.VersionedRecordsIterator(out), nil
}

// ReadOnlyVersioned views s, a versioned store, with keys K and values V for interactive
// queries (the reads of store.VersionedKeyValueStore and store.VersionHistoryReader); false
// when s is none.
func ReadOnlyVersioned[K, V any](s processor.StateStore) (VersionedReader[K, V], bool) {
	switch v := s.(type) {
	case VersionedReader[K, V]:
		return v, true
	case UntypedVersioned:
		return &versioned[K, V]{StateStore: v, s: v}, true
	}
	return nil, false
}

// VersionedReader is what the interactive queries read of a versioned store.
type VersionedReader[K, V any] interface {
	Get(key K) (*store.VersionedRecord[V], error)
	GetAsOf(key K, asOfTimestamp int64) (*store.VersionedRecord[V], error)
	store.VersionHistoryReader[K, V]
}
