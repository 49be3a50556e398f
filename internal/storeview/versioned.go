package storeview

import (
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
