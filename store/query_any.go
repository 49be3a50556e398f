package store

// QueryViewAny is QueryView with the values boxed as any: the view of readers that do not
// know the store's value type, such as interactive queries asking for values of type any
// (the live page's key lookup).
func (m *meteredKeyValueStore[K, V]) QueryViewAny() ReadOnlyKeyValueStore[K, any] {
	return anyValues[K, V]{s: m.QueryView()}
}

// anyValues views a typed store with its values boxed as any.
type anyValues[K, V any] struct{ s ReadOnlyKeyValueStore[K, V] }

func (a anyValues[K, V]) Get(key K) (any, bool, error) {
	v, ok, err := a.s.Get(key)
	if err != nil || !ok {
		return nil, ok, err
	}
	return v, true, nil
}
func (a anyValues[K, V]) Range(from, to K) KeyValueIterator[K, any] {
	return anyIter[K, V]{a.s.Range(from, to)}
}
func (a anyValues[K, V]) ReverseRange(from, to K) KeyValueIterator[K, any] {
	return anyIter[K, V]{a.s.ReverseRange(from, to)}
}
func (a anyValues[K, V]) All() KeyValueIterator[K, any] { return anyIter[K, V]{a.s.All()} }
func (a anyValues[K, V]) ReverseAll() KeyValueIterator[K, any] {
	return anyIter[K, V]{a.s.ReverseAll()}
}
func (a anyValues[K, V]) PrefixScan(prefix []byte) KeyValueIterator[K, any] {
	return anyIter[K, V]{a.s.PrefixScan(prefix)}
}
func (a anyValues[K, V]) ApproximateNumEntries() int64 { return a.s.ApproximateNumEntries() }

// anyIter boxes an iterator's values.
type anyIter[K, V any] struct{ it KeyValueIterator[K, V] }

func (i anyIter[K, V]) Next() bool   { return i.it.Next() }
func (i anyIter[K, V]) Key() K       { return i.it.Key() }
func (i anyIter[K, V]) Value() any   { return i.it.Value() }
func (i anyIter[K, V]) Err() error   { return i.it.Err() }
func (i anyIter[K, V]) Close() error { return i.it.Close() }
