package storeapi

import (
	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// CacheContext is implemented by the StateStoreContext of an engine that runs a record cache
// (the task engine in internal/task, used by the test driver and the runtime). A caching store
// layer looks for it at Init; with a context that does not implement it, or whose Cache is nil
// (caching switched off for the instance: statestore.cache.max.bytes=0), the layer passes every
// operation straight to the store below and [CachedStateStore.SetFlushListener] reports false.
// The caching layer sets a cached entry's record context (see [RecordContextAccess]) while it
// writes the entry below and calls the flush listener, then restores the previous one.
// Java counterpart: InternalProcessorContext.cache(), recordContext() and setRecordContext().
type CacheContext interface {
	RecordContextAccess
	// Cache returns the record cache shared by the tasks of the stream thread (of the test
	// driver), or nil when caching is off.
	Cache() *cache.ThreadCache
}

// CacheFlushRecord is what a cache flush listener receives for one flushed entry: the entry's
// key, its new value and (when old values are sent) the value the store below the cache held
// before the flush, with the timestamp, headers and origin of the write that put the entry in
// the cache. Java counterpart: the Record<K, Change<V>> handed to a CacheFlushListener, with the
// ProcessorRecordContext the caching store restores while calling it.
type CacheFlushRecord[K, V any] struct {
	// Key is the entry's key.
	Key K
	// NewValue is the flushed value; the zero V (nil for pointer types) when HasNewValue is
	// false, i.e. the entry is a delete (Java: a null newValue).
	NewValue V
	// HasNewValue reports whether NewValue is present.
	HasNewValue bool
	// OldValue is the value the store below the cache held for Key before this flush; the zero V
	// when HasOldValue is false: the key was absent, or old values are not sent (Java: null).
	OldValue V
	// HasOldValue reports whether OldValue is present.
	HasOldValue bool
	// Timestamp is the timestamp (ms) of the record being processed when the entry was written.
	Timestamp int64
	// Headers are the headers of that record.
	Headers serde.Headers
	// Topic, Partition and Offset are the origin of that record ("", -1, -1 when it was written
	// in a punctuator).
	Topic     string
	Partition int32
	Offset    int64
}

// CacheFlushListener is called for every entry a caching store flushes (on commit) or evicts
// while it is dirty, after the entry was written to the store below the cache (and so to the
// changelog). It runs with the engine's record context set to the entry's (see
// [CacheFlushRecord]); a returned error aborts the flush and is returned by the operation that
// caused it (Put, Get, Flush, ...). Java counterpart:
// org.apache.kafka.streams.state.internals.CacheFlushListener.
type CacheFlushListener[K, V any] func(rec CacheFlushRecord[K, V]) error

// CachedStateStore is implemented by stores that can have a record cache layer: the typed
// metered key-value layer of package store (over any bytes store) and its caching layer itself (K and V
// []byte). Java counterpart: org.apache.kafka.streams.state.internals.CachedStateStore.
type CachedStateStore[K, V any] interface {
	// SetFlushListener makes l receive the entries the cache flushes and reports whether the
	// store has an active cache. When it reports false, l is never called: the caller must
	// forward its updates itself (Java's TimestampedTupleForwarder). With sendOldValues the
	// listener also gets the old value read from the store below the cache.
	SetFlushListener(l CacheFlushListener[K, V], sendOldValues bool) bool
	// FlushCache flushes the cache only (dirty entries are written below and handed to the
	// listener), not the store below. Java: flushCache().
	FlushCache() error
	// ClearCache drops the cached entries without flushing them. Java: clearCache().
	ClearCache() error
}

// RecordContextAccess is implemented by the engine's StateStoreContext (internal/task): it
// exposes the context of the record being processed and lets a store layer replace it for a
// while, as Java's caching layer does when it flushes an entry with the context of the write
// that cached it (changelog writes and forwards then carry that context).
// Java counterpart: InternalProcessorContext.recordContext() / setRecordContext().
type RecordContextAccess interface {
	// CurrentRecordContext returns the current context (Topic "" and Partition/Offset -1 in a
	// punctuation).
	CurrentRecordContext() processor.RecordContext
	// SetRecordContext replaces the context (Topic "" means no record metadata) and returns a
	// function restoring the previous one: call it once, before restoring any context replaced
	// earlier (as a deferred call does).
	SetRecordContext(rc processor.RecordContext) (restore func())
}

// HeadersChangelogContext is implemented by the engine's StateStoreContext (internal/task) to
// write changelog records with headers. The change-logging layer of a timestamped key-value
// store whose builder went through [LogChangelogHeaders] uses it (with the headers of the
// record being processed, from [RecordContextAccess]); without it, changes are logged without
// headers.
// Java counterpart: the changelog writes of the KIP-1271 headers stores
// (InternalProcessorContext.logChange with the record context's headers).
type HeadersChangelogContext interface {
	// LogChangeWithHeaders is the engine's LogChange with headers on the record (copied).
	LogChangeWithHeaders(storeName string, key, value []byte, timestamp int64, headers serde.Headers) error
}

// FreshValuesStore is implemented by the timestamped key-value stores this package builds: their
// Get returns a newly deserialized *ValueAndTimestamp on every call, which no one else
// references, and their Put keeps no reference to the value it is given (it serializes it), so
// the caller may change a value it read and put it back (the DSL's
// aggregations do, saving an allocation per record). FreshValues does nothing. There is no
// Java counterpart.
type FreshValuesStore interface{ FreshValues() }

// KeptKeysStore is implemented by the typed key-value stores whose caching layer can keep a
// String key as it is given instead of a copy: GetKept and PutKept are Get and Put for a key
// that never changes and holds no memory beyond its own bytes, as a key the engine decoded from
// a record. A user's key may be a slice of a larger string, which the cache would then keep
// alive without counting it, so only the DSL's stream aggregations, whose keys come from a
// source or repartition topic, use them. There is no Java counterpart.
type KeptKeysStore[K, V any] interface {
	GetKept(key K) (V, bool, error)
	PutKept(key K, value V) error
}

// CountStore is implemented by the timestamped key-value stores of this package whose values
// are the Long serde's, as a count's are: GetCountKept and PutCountKept read and write a count
// and its timestamp as KeptKeysStore's GetKept and PutKept do, straight from and to the bytes
// (8-byte big-endian timestamp, then the 8-byte big-endian count), without a
// *ValueAndTimestamp, a boxed count or the serdes. Counts reports whether they apply: only
// above a caching layer, with the String serde for keys and the Long serde for values (the
// methods of a store whose Counts is false do the same through the serdes). The DSL's count
// uses them. There is no Java counterpart.
type CountStore[K any] interface {
	Counts() bool
	// GetCountKept returns the count of key and its timestamp; found is false when key has
	// none.
	GetCountKept(key K) (count, ts int64, found bool, err error)
	// PutCountKept stores count with timestamp ts under key.
	PutCountKept(key K, count, ts int64) error
}

// VersionedEngine is implemented by the versioned engines of this package; the typed Layers
// and the DSL use it to learn the history retention.
type VersionedEngine interface {
	// HistoryRetentionMs returns the history retention in ms (also the grace period of puts).
	HistoryRetentionMs() int64
}

// BulkRestorer is implemented by engines that restore a long changelog faster when told where
// the restore begins and ends (the Pebble key-value store); reach it through a store's Layers
// with [FindBulkRestorer]. Between BeginBulkRestore and EndBulkRestore the restore callback may
// keep records in memory instead of writing them at once: only after EndBulkRestore returns
// nil is every record handed to the callback in the store, so a caller must not record (or
// checkpoint) a changelog offset as restored before that. There is no Java counterpart (Kafka
// Streams 2.x toggled RocksDB's bulk-loading options around a restore).
type BulkRestorer interface {
	// BeginBulkRestore starts a bulk restore. Errors: ErrStoreClosed, a bulk restore already
	// running.
	BeginBulkRestore() error
	// EndBulkRestore writes every record still held and ends the bulk restore; the store holds
	// everything restored when it returns nil. Errors: write errors of the engine (the store
	// then holds an unknown prefix of the restored records, each complete).
	EndBulkRestore() error
	// AbortBulkRestore ends the bulk restore after a failed restore, dropping the records still
	// held (what was already written stays). Calling it without a bulk restore running does
	// nothing.
	AbortBulkRestore()
}

// FindBulkRestorer returns the [BulkRestorer] among st's layers (see [Layers]), if any.
func FindBulkRestorer(st processor.StateStore) (BulkRestorer, bool) {
	for _, l := range Layers(st) {
		if t, ok := l.(BulkRestorer); ok {
			return t, true
		}
	}
	return nil, false
}
