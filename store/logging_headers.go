package store

// WithChangelogHeaders makes the store's changelog records carry the headers of the record being
// processed (puts and tombstones alike), as Java 4.4's timestamped key-value stores with headers
// do (Stores.timestampedKeyValueStoreWithHeadersBuilder, KIP-1271; the foreign-key join's
// subscription store is one). The store's contents and the changelog's keys, values and
// timestamps are unchanged; restore ignores the headers. No effect when logging is disabled.
func (b *TimestampedKeyValueStoreBuilder[K, V]) WithChangelogHeaders() *TimestampedKeyValueStoreBuilder[K, V] {
	b.headers = true
	return b
}
