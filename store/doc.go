// Package store holds the state stores of kstreams-go, the Go counterpart of Java's
// org.apache.kafka.streams.state package (Kafka Streams 4.x).
//
// Store kinds: key-value ([KeyValueStore], [TimestampedKeyValueStore]), versioned key-value
// ([VersionedKeyValueStore], KIP-889), window
// ([WindowStore]) and session ([SessionStore]) stores, with read-only views
// ([ReadOnlyKeyValueStore], [ReadOnlyWindowStore], [ReadOnlySessionStore]).
//
// Layers, from the outside in, as in Java: the typed metered layer (serdes, with the changelog
// topic as serde topic, and the store's metrics), the record cache (when caching is enabled),
// change logging (when logging is enabled, the default), then a bytes-level engine: in memory
// (an ordered skip list, or an LRU map) or persistent (Pebble, under the task's state
// directory). Stores are built per task by
// builders obtained from the [Stores] factory, which mirrors Java's Stores:
//
//	b := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer())
//	topology.AddStateStore(b, "Process")
//
// Suppliers: InMemoryKeyValueStore, PersistentKeyValueStore, PersistentTimestampedKeyValueStore,
// LruMap, InMemoryWindowStore, PersistentWindowStore, InMemorySessionStore,
// PersistentSessionStore, PersistentVersionedKeyValueStore, InMemoryVersionedKeyValueStore.
// Builders: KeyValueStoreBuilder, TimestampedKeyValueStoreBuilder, VersionedKeyValueStoreBuilder
// (no record cache), WindowStoreBuilder, TimestampedWindowStoreBuilder and SessionStoreBuilder
// all return a [Builder], typed by the store it builds (*Builder[KeyValueStore[K, V]] and so
// on), with Java's WithLoggingEnabled(config) / WithLoggingDisabled / WithCachingEnabled /
// WithCachingDisabled and BuildStore for a typed store outside a topology.
//
// Ordering: keys are ordered by their serialized bytes in unsigned lexicographic order (Java's
// Bytes comparator), so ranges of a typed store follow the serialized order, not Go's order of
// the key type. A range whose from sorts after its to is empty.
//
// Null: putting a nil value deletes the key (Java's put(key, null)); Get reports absence with a
// false second result instead of Java's null; nil bytes are never handed to a deserializer and
// a nil value is never serialized.
//
// Iterators: [KeyValueIterator] is pull-style (Next/Key/Value/Err/Close), like Java's closeable
// iterator, and must be closed; [All] adapts one to a range-over-func iter.Seq2 and [Collect]
// drains one into a slice. Errors met while iterating are reported by Err. The []byte keys and
// values of the bytes-level iterators of the Pebble engines are views valid until the next Next
// or Close (nothing is copied per entry); the typed layers and Collect copy them.
//
// Errors are values: [ErrStoreClosed], [ErrNullKey], [ErrNoSerde] and others, wrapped in
// [*StoreError] with the store name and operation.
package store
