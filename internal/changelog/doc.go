// Package changelog restores state stores from their changelog topics and keeps the task's
// checkpoint, the Go counterpart of Java's ProcessorStateManager, StoreChangelogReader and
// OffsetCheckpoint (Kafka Streams 4.x). The change-logging store layers themselves live in
// package store (unexported, with the timestamped, window and session variants), because the
// store builders wrap them and this package depends on store. What users see of a restore is
// the public package changelog's RestoreListener.
//
// # Record format (same bytes as Java)
//
//   - key-value store: key = the serialized key, value = the serialized value (tombstone for a
//     delete), timestamp = the timestamp of the record being processed;
//   - timestamped key-value store: the value is the raw value without the 8-byte timestamp and
//     the record timestamp carries it; restore rebuilds int64 ts ‖ value;
//   - window store: key = key ‖ int64 windowStart ‖ int32 seqnum;
//   - session store: key = key ‖ int64 sessionEnd ‖ int64 sessionStart.
//
// The topic is <application.id>-<store>-changelog, partition = the task's partition.
//
// # Restore
//
// [TaskState.Restore] runs after the task's stores are initialised. For each logged store it
// reads the changelog from the offset after the one the store holds to the end offset – the
// high-water mark, also under exactly-once, where the fetches are read_committed and so wait
// for an open transaction of a previous owner to be aborted rather than stop in front of it
// (SaramaReader.EndOffset) – and stops when the fetch position reaches it, since the last
// offset of a transactional log is a commit marker, never a record. Records go to the store's restore callback in batches
// (default 1000), which the Pebble engines write as one Pebble batch together with the offset
// of the batch's last record; fetches run ahead of the writes, but no more than four fetch
// responses (of at most SaramaReader.MaxBytes, 1 MiB by default) are held at a time, so memory
// stays flat in the size of the changelog. A restore of at least
// TaskStateConfig.BulkRestoreMinRecords records into the Pebble key-value store runs as a bulk
// restore ([storeapi.BulkRestorer]): the store gathers the records in chunks of its memtable size,
// sorts each and has Pebble ingest it as a table file (durable before the chunk's last offset
// is stored with the data), and the restored offset is recorded for the checkpoint only when
// the bulk restore ended. A [RestoreListener] sees start, each batch and end
// (Java's StateRestoreListener); progress is logged through log/slog. Kafka is reached through
// the small [Reader] interface: [SaramaReader] for a real cluster, [MemoryLog] for tests.
// SaramaReader lists offsets through sarama but fetches with a Fetch of its own (rawfetch.go)
// on connections of its own, one per restore fetching: the record batches are decoded
// straight into the records handed to the store, whose keys and values alias the response.
//
// # Checkpoints
//
// <task dir>/.kstreams-go.checkpoint ([CheckpointFileName]) in Java's OffsetCheckpoint format
// ([ReadCheckpoint], [WriteCheckpoint]): version line "0", count line, then "topic partition
// offset" lines, where offset is the last changelog offset the store holds (OffsetUnknown = -4
// when unknown), written to a .tmp file, synced and renamed. In-memory stores are not
// checkpointed and always restore from the start.
//
// The state directory can be shared with Java Kafka Streams (one after the other; the
// application's lock keeps them from running on it at once), so neither side may trust the
// other's offsets: they describe stores the other does not have (our Pebble databases under
// pebble/, Java's RocksDB under rocksdb/ and <store>/). Java reads <task>/.checkpoint (Kafka
// Streams 4.3+ moves it into its RocksDB stores and deletes it) and .checkpoint_<store>, and
// never reads our file; we never read Java's. A <task>/.checkpoint left by a version of this
// library from before that change is read once as ours, moved to our place and deleted —
// unless Java's stores are in the task directory, in which case it is Java's and left alone.
// A Pebble store whose directory is missing (first start, or wiped by Java) restores from
// the beginning whatever a checkpoint says.
// Under exactly-once the file is deleted once loaded (Java does the same), so after a crash a
// persistent store with neither a checkpoint nor an offset committed with its data is wiped and
// restored, with a warning log; a corrupt Pebble database is wiped at open, also with a log.
//
// # Exactly-once without wipes (beyond Java)
//
// Java 4.x cannot tell, after an unclean shutdown under exactly-once, whether a RocksDB store
// holds writes of a transaction that was later aborted, so it wipes the store and restores it
// from scratch. Here each Pebble store keeps the writes of the open transaction in an indexed
// Pebble batch: reads of the processing thread see them (the batch reads through to the
// database), the database does not. When the Kafka transaction has committed, the runtime
// calls [TaskState.CommitTransaction], and every store applies its batch together with the
// offset of the last changelog record written for it, in one atomic Pebble write (the offset
// lives in the store's own database under a reserved metadata key). If the process dies:
//
//   - before the Kafka commit: the transaction is aborted by the broker, the batch was never
//     applied; the store holds the previous committed state and offset;
//   - after the Kafka commit but before the batch is applied: the store holds the previous
//     state and offset; restore replays the committed transaction from offset+1 to the last
//     stable offset;
//   - after both: nothing to replay.
//
// In every case restore starts from the offset stored with the data, reads only the tail, and
// never needs a wipe. [TaskState.AbortTransaction] drops the batches after an aborted
// transaction. Interactive queries from other goroutines are safe (the store guards its batch
// with a lock) and see the open transaction's writes, as Java's stores do under exactly-once.
package changelog
