package store

import "github.com/kstreams-go/kstreams/serde"

// HeadersChangelogContext is implemented by the engine's StateStoreContext (internal/task) to
// write changelog records with headers. A change-logging layer built with
// [TimestampedKeyValueStoreBuilder.WithChangelogHeaders] uses it (with the headers of the record
// being processed, from [RecordContextAccess]); without it, changes are logged without headers.
// Java counterpart: the changelog writes of the KIP-1271 headers stores
// (InternalProcessorContext.logChange with the record context's headers).
type HeadersChangelogContext interface {
	// LogChangeWithHeaders is [ChangelogContext.LogChange] with headers on the record (copied).
	LogChangeWithHeaders(storeName string, key, value []byte, timestamp int64, headers serde.Headers) error
}

// WithChangelogHeaders makes the store's changelog records carry the headers of the record being
// processed (puts and tombstones alike), as Java 4.4's timestamped key-value stores with headers
// do (Stores.timestampedKeyValueStoreWithHeadersBuilder, KIP-1271; the foreign-key join's
// subscription store is one). The store's contents and the changelog's keys, values and
// timestamps are unchanged; restore ignores the headers. No effect when logging is disabled.
func (b *TimestampedKeyValueStoreBuilder[K, V]) WithChangelogHeaders() *TimestampedKeyValueStoreBuilder[K, V] {
	b.headers = true
	return b
}
