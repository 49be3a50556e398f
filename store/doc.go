// Package store holds the state stores of kstreams-go, the Go counterpart of Java's
// org.apache.kafka.streams.state package (Kafka Streams 4.x).
//
// Layers, from the outside in, as in Java: the typed [MeteredKeyValueStore] (serdes),
// then [ChangeLoggingKeyValueBytesStore] (changelog writes, when logging is enabled), then an
// engine implementing [KeyValueBytesStore] ([InMemoryKeyValueStore]; the Pebble engine comes
// later). Stores are built per task by builders obtained from the [Stores] factory:
//
//	b := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer())
//	topology.AddStateStore(b, "Process")
//
// Ordering: keys are ordered by their serialized bytes in unsigned lexicographic order (Java's
// Bytes comparator), so ranges of a typed store follow the serialized order.
//
// Null: putting a nil value deletes the key (Java's put(key, null)); Get reports absence with a
// false second result instead of Java's null.
//
// Iterators: [KeyValueIterator] is pull-style (Next/Key/Value/Err/Close), like Java's closeable
// iterator; [All] adapts one to a range-over-func iter.Seq2.
package store
