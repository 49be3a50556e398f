package testdriver

import (
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// noTimestamp is the timestamp the facade writes with: -1, Java's ConsumerRecord.NO_TIMESTAMP.
const noTimestamp int64 = -1

// keyValueStoreFacade is the plain key-value view of a timestamped store that Java's driver
// returns from getKeyValueStore: reads drop the timestamps, writes store timestamp -1.
// Java: TopologyTestDriver.KeyValueStoreFacade.
type keyValueStoreFacade[K, V any] struct {
	inner store.TimestampedKeyValueStore[K, V]
}

var _ store.KeyValueStore[string, int64] = keyValueStoreFacade[string, int64]{}

func valueOf[V any](vt *store.ValueAndTimestamp[V]) (V, bool) {
	if vt == nil {
		var zero V
		return zero, false
	}
	return vt.Value, true
}

func (f keyValueStoreFacade[K, V]) Name() string { return f.inner.Name() }
func (f keyValueStoreFacade[K, V]) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	return f.inner.Init(ctx, root)
}
func (f keyValueStoreFacade[K, V]) Flush() error     { return f.inner.Flush() }
func (f keyValueStoreFacade[K, V]) Close() error     { return f.inner.Close() }
func (f keyValueStoreFacade[K, V]) Persistent() bool { return f.inner.Persistent() }
func (f keyValueStoreFacade[K, V]) IsOpen() bool     { return f.inner.IsOpen() }

func (f keyValueStoreFacade[K, V]) Get(key K) (V, bool, error) {
	vt, _, err := f.inner.Get(key)
	v, ok := valueOf(vt)
	return v, ok, err
}

func (f keyValueStoreFacade[K, V]) Put(key K, value V) error {
	return f.inner.Put(key, store.MakeValueAndTimestamp(value, noTimestamp))
}

func (f keyValueStoreFacade[K, V]) PutIfAbsent(key K, value V) (V, bool, error) {
	vt, _, err := f.inner.PutIfAbsent(key, store.MakeValueAndTimestamp(value, noTimestamp))
	v, ok := valueOf(vt)
	return v, ok, err
}

func (f keyValueStoreFacade[K, V]) PutAll(entries []store.KeyValue[K, V]) error {
	out := make([]store.KeyValue[K, *store.ValueAndTimestamp[V]], 0, len(entries))
	for _, e := range entries {
		out = append(out, store.Pair(e.Key, store.MakeValueAndTimestamp(e.Value, noTimestamp)))
	}
	return f.inner.PutAll(out)
}

func (f keyValueStoreFacade[K, V]) Delete(key K) (V, bool, error) {
	vt, _, err := f.inner.Delete(key)
	v, ok := valueOf(vt)
	return v, ok, err
}

func (f keyValueStoreFacade[K, V]) Range(from, to K) store.KeyValueIterator[K, V] {
	return facadeIterator[K, V]{f.inner.Range(from, to)}
}
func (f keyValueStoreFacade[K, V]) ReverseRange(from, to K) store.KeyValueIterator[K, V] {
	return facadeIterator[K, V]{f.inner.ReverseRange(from, to)}
}
func (f keyValueStoreFacade[K, V]) All() store.KeyValueIterator[K, V] {
	return facadeIterator[K, V]{f.inner.All()}
}
func (f keyValueStoreFacade[K, V]) ReverseAll() store.KeyValueIterator[K, V] {
	return facadeIterator[K, V]{f.inner.ReverseAll()}
}
func (f keyValueStoreFacade[K, V]) PrefixScan(prefix []byte) store.KeyValueIterator[K, V] {
	return facadeIterator[K, V]{f.inner.PrefixScan(prefix)}
}
func (f keyValueStoreFacade[K, V]) ApproximateNumEntries() int64 {
	return f.inner.ApproximateNumEntries()
}

// facadeIterator drops the timestamps of a timestamped store's iterator.
type facadeIterator[K, V any] struct {
	store.KeyValueIterator[K, *store.ValueAndTimestamp[V]]
}

func (i facadeIterator[K, V]) Value() V {
	v, _ := valueOf(i.KeyValueIterator.Value())
	return v
}
