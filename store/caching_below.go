package store

// GetBelowCache returns the value of key as the layers below the record cache hold it: the value
// the cache last flushed (and handed to its flush listener), ignoring an entry still dirty in the
// cache. The cache is left untouched (no entry added, no recency change). Without a caching
// layer it is the same as Get. The foreign-key join answers subscriptions this way, so that
// every later change of the answer reaches the subscriber through the table's flushed changes
// (see ktable.SubscriptionJoin). Errors: as Get (ErrNullKey, ErrStoreClosed, serde errors
// wrapped with the store name). Java has no counterpart.
func (m *meteredKeyValueStore[K, V]) GetBelowCache(key K) (V, bool, error) {
	var zero V
	kb, err := m.keyBytes("get", key)
	if err != nil {
		return zero, false, err
	}
	vb, _, err := belowCache(m.inner).Get(kb)
	if err != nil {
		return zero, false, err
	}
	return m.value("get", vb)
}

// belowCache returns the store below the first active caching layer among st and the layers
// it wraps, or st when there is none.
func belowCache(st KeyValueBytesStore) KeyValueBytesStore {
	for cur := st; cur != nil; {
		if c, ok := cur.(*cachingKeyValueStore); ok {
			if c.cache == nil {
				return st
			}
			return c.inner
		}
		w, ok := cur.(interface{ Inner() KeyValueBytesStore })
		if !ok {
			break
		}
		cur = w.Inner()
	}
	return st
}
