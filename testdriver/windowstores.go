package testdriver

import (
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// windowStoreFacade is the plain view of a timestamped window store that Java's driver returns
// from getWindowStore: reads drop the timestamps, writes store timestamp -1.
// Java: TopologyTestDriver.WindowStoreFacade.
type windowStoreFacade[K, V any] struct {
	inner store.TimestampedWindowStore[K, V]
}

var _ store.WindowStore[string, int64] = windowStoreFacade[string, int64]{}

func (f windowStoreFacade[K, V]) Name() string { return f.inner.Name() }
func (f windowStoreFacade[K, V]) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	return f.inner.Init(ctx, root)
}
func (f windowStoreFacade[K, V]) Flush() error     { return f.inner.Flush() }
func (f windowStoreFacade[K, V]) Close() error     { return f.inner.Close() }
func (f windowStoreFacade[K, V]) Persistent() bool { return f.inner.Persistent() }
func (f windowStoreFacade[K, V]) IsOpen() bool     { return f.inner.IsOpen() }

func (f windowStoreFacade[K, V]) Put(key K, value V, windowStart int64) error {
	return f.inner.Put(key, store.MakeValueAndTimestamp(value, noTimestamp), windowStart)
}

func (f windowStoreFacade[K, V]) Fetch(key K, windowStart int64) (V, bool, error) {
	vt, _, err := f.inner.Fetch(key, windowStart)
	v, ok := valueOf(vt)
	return v, ok, err
}

func (f windowStoreFacade[K, V]) FetchTimeRange(key K, timeFrom, timeTo int64) store.KeyValueIterator[int64, V] {
	return facadeIterator[int64, V]{f.inner.FetchTimeRange(key, timeFrom, timeTo)}
}
func (f windowStoreFacade[K, V]) BackwardFetchTimeRange(key K, timeFrom, timeTo int64) store.KeyValueIterator[int64, V] {
	return facadeIterator[int64, V]{f.inner.BackwardFetchTimeRange(key, timeFrom, timeTo)}
}
func (f windowStoreFacade[K, V]) FetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return facadeIterator[serde.Windowed[K], V]{f.inner.FetchKeyRange(keyFrom, keyTo, timeFrom, timeTo)}
}
func (f windowStoreFacade[K, V]) BackwardFetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return facadeIterator[serde.Windowed[K], V]{f.inner.BackwardFetchKeyRange(keyFrom, keyTo, timeFrom, timeTo)}
}
func (f windowStoreFacade[K, V]) FetchAll(timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return facadeIterator[serde.Windowed[K], V]{f.inner.FetchAll(timeFrom, timeTo)}
}
func (f windowStoreFacade[K, V]) BackwardFetchAll(timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[K], V] {
	return facadeIterator[serde.Windowed[K], V]{f.inner.BackwardFetchAll(timeFrom, timeTo)}
}
func (f windowStoreFacade[K, V]) All() store.KeyValueIterator[serde.Windowed[K], V] {
	return facadeIterator[serde.Windowed[K], V]{f.inner.All()}
}
func (f windowStoreFacade[K, V]) BackwardAll() store.KeyValueIterator[serde.Windowed[K], V] {
	return facadeIterator[serde.Windowed[K], V]{f.inner.BackwardAll()}
}
