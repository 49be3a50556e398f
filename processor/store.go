package processor

import "github.com/kstreams-go/kstreams/serde"

// StateStore is a storage engine a processor can read and write: key-value, window, session
// or a custom store. It is the counterpart of Java's org.apache.kafka.streams.processor.StateStore.
// Concrete store interfaces (store.KeyValueStore[K, V], ...) embed it.
//
// Lifecycle: the engine builds the store from its [StoreBuilder] per task, calls Init once
// (the store registers itself with StateStoreContext.Register so that the engine can restore
// it from its changelog), Flush on every commit, and Close when the task closes.
type StateStore interface {
	// Name returns the store name (unique in a topology). Java: name().
	Name() string
	// Init initialises the store; root is the outermost store of the wrapping chain (the one
	// to register), or the store itself if it is not wrapped. Java: init(StateStoreContext, StateStore).
	Init(ctx StateStoreContext, root StateStore) error
	// Flush persists cached data. Java: flush().
	Flush() error
	// Close closes the store; any later call but IsOpen may fail. Java: close().
	Close() error
	// Persistent reports whether the store keeps its data on disk (and needs a state
	// directory). Java: persistent().
	Persistent() bool
	// IsOpen reports whether the store is open (between Init and Close). Java: isOpen().
	IsOpen() bool
}

// RestoreRecord is one changelog record handed to a [StateRestoreCallback] on restore.
// Java counterpart: the ConsumerRecord<byte[], byte[]> given to a
// RecordBatchingStateRestoreCallback (or the key/value of StateRestoreCallback.restore).
type RestoreRecord struct {
	// Key is the serialized key.
	Key []byte
	// Value is the serialized value; nil is a tombstone (delete).
	Value []byte
	// Timestamp is the changelog record's timestamp in ms (the stored timestamp of a
	// timestamped store).
	Timestamp int64
	// Partition is the changelog partition of the record.
	Partition int32
	// Offset is the record's offset in the changelog partition.
	Offset int64
	// Headers are the changelog record's headers.
	Headers serde.Headers
}

// StateRestoreCallback writes a batch of changelog records into a store during restore, in
// changelog order. Java counterpart: org.apache.kafka.streams.processor.StateRestoreCallback
// and BatchingStateRestoreCallback.restoreAll.
type StateRestoreCallback func(batch []RestoreRecord) error

// StateStoreContext is what a [StateStore] can ask of the engine in Init. Counterpart of
// Java's org.apache.kafka.streams.processor.StateStoreContext.
type StateStoreContext interface {
	// ApplicationID returns the application.id config. Java: applicationId().
	ApplicationID() string
	// TaskID returns the task owning the store. Java: taskId().
	TaskID() TaskID
	// RecordMetadata returns the origin of the record being processed, if any.
	// Java: recordMetadata().
	RecordMetadata() (RecordMetadata, bool)
	// KeySerde returns the default key serde, or nil. Java: keySerde().
	KeySerde() serde.Serde[any]
	// ValueSerde returns the default value serde, or nil. Java: valueSerde().
	ValueSerde() serde.Serde[any]
	// StateDir returns the task's state directory. Java: stateDir().
	StateDir() string
	// AppConfigs returns the application's configuration (a copy). Java: appConfigs().
	AppConfigs() map[string]string
	// Register registers store (the root store given to Init) for restore and flush; restore
	// receives its changelog records, if the store is logged. Registering a store twice is an
	// error. Java: register(StateStore, StateRestoreCallback).
	Register(store StateStore, restore StateRestoreCallback) error
}

// StoreBuilder builds one state store instance per task. It is the minimal part of Java's
// org.apache.kafka.streams.state.StoreBuilder<T> the topology needs; the library's builder
// (store.Builder, with caching and logging options, made by store.Stores) lives in package
// store.
//
// The changelog topic of a logged store gets cleanup.policy=compact and
// message.timestamp.type=CreateTime, overridden by LogConfig. Only the library's store.Builder
// (or a type embedding one) gets more: a window or session store's changelog
// cleanup.policy=compact,delete with retention.ms from its retention period, a versioned
// store's min.compaction.lag.ms from its history retention. A StoreBuilder written by the user
// gets the plain compacted changelog even when it builds a window, session or versioned store;
// set those configs in its LogConfig. Java does the same: its StoreBuilderWrapper derives the
// windowed and versioned changelog configs only from its own builders.
type StoreBuilder interface {
	// Name returns the name of the stores it builds (the store name in the topology).
	// Java: name().
	Name() string
	// Build returns a new store instance (not yet initialised). Java: build().
	Build() (StateStore, error)
	// LoggingEnabled reports whether the store is backed by a changelog topic
	// (<application.id>-<name>-changelog). Java: loggingEnabled().
	LoggingEnabled() bool
	// LogConfig returns the topic configs for the changelog topic (may be nil).
	// Java: logConfig().
	LogConfig() map[string]string
}
