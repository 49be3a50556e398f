package store

import (
	"fmt"
	"time"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// VersionedBytesStoreSupplier supplies versioned engines, one per task.
// Java counterpart: org.apache.kafka.streams.state.VersionedBytesStoreSupplier.
type VersionedBytesStoreSupplier interface {
	// Name returns the name of the stores supplied.
	Name() string
	// Get returns a new, uninitialised engine.
	Get() VersionedBytesStore
	// HistoryRetentionMs returns the history retention in ms (also the grace period of puts).
	HistoryRetentionMs() int64
	// MetricsScope returns the metrics scope ("pebble" or "in-memory").
	MetricsScope() string
}

type versionedSupplier struct {
	name               string
	retention, segment int64
	persistent         bool
}

func (s versionedSupplier) Name() string              { return s.name }
func (s versionedSupplier) HistoryRetentionMs() int64 { return s.retention }

// SegmentIntervalMs returns the segment interval in ms (Java: segmentIntervalMs()).
func (s versionedSupplier) SegmentIntervalMs() int64 { return s.segment }
func (s versionedSupplier) MetricsScope() string {
	if s.persistent {
		return storeapi.PebbleMetricsScope
	}
	return "in-memory"
}
func (s versionedSupplier) Get() VersionedBytesStore {
	if s.persistent {
		return newPebbleVersionedKeyValueStore(s.name, s.retention, s.segment)
	}
	return newInMemoryVersionedKeyValueStore(s.name, s.retention)
}

// defaultVersionedSegmentInterval is Java's default segment interval for a history retention
// (RocksDbVersionedKeyValueBytesStoreSupplier.defaultSegmentInterval).
func defaultVersionedSegmentInterval(retention int64) int64 {
	switch {
	case retention <= 60_000:
		return max(retention/3, 2_000)
	case retention <= 300_000:
		return max(retention/5, 20_000)
	case retention <= 3_600_000:
		return max(retention/12, 60_000)
	default:
		return max(retention/24, 300_000)
	}
}

// PersistentVersionedKeyValueStore returns a supplier of Pebble versioned engines named name
// that keep history for historyRetention (which is also the grace period of puts; whole ms,
// >= 0). segmentInterval (optional, at most one, >= 1 ms) is accepted for Java's API and
// reported by the supplier; our layout has no segments. Its default is Java's (a fraction of
// the history retention). Errors: ErrInvalidStoreArgument (negative retention, segment
// interval < 1 ms, more than one segment interval). Java:
// Stores.persistentVersionedKeyValueStore(name, historyRetention[, segmentInterval]).
func (StoresFactory) PersistentVersionedKeyValueStore(name string, historyRetention time.Duration, segmentInterval ...time.Duration) (VersionedBytesStoreSupplier, error) {
	r := historyRetention.Milliseconds()
	if r < 0 {
		return nil, fmt.Errorf("%w: historyRetention cannot be negative", ErrInvalidStoreArgument)
	}
	seg := defaultVersionedSegmentInterval(r)
	switch len(segmentInterval) {
	case 0:
	case 1:
		seg = segmentInterval[0].Milliseconds()
		if seg < 1 {
			return nil, fmt.Errorf("%w: segmentInterval cannot be zero or negative", ErrInvalidStoreArgument)
		}
	default:
		return nil, fmt.Errorf("%w: at most one segmentInterval", ErrInvalidStoreArgument)
	}
	return versionedSupplier{name: name, retention: r, segment: seg, persistent: true}, nil
}

// InMemoryVersionedKeyValueStore returns a supplier of in-memory versioned engines named name
// that keep history for historyRetention (also the grace period of puts; whole ms, >= 0).
// Errors: ErrInvalidStoreArgument for a negative retention. Java has no in-memory versioned
// store; the behaviour is the one of Stores.persistentVersionedKeyValueStore.
func (StoresFactory) InMemoryVersionedKeyValueStore(name string, historyRetention time.Duration) (VersionedBytesStoreSupplier, error) {
	r := historyRetention.Milliseconds()
	if r < 0 {
		return nil, fmt.Errorf("%w: historyRetention cannot be negative", ErrInvalidStoreArgument)
	}
	return versionedSupplier{name: name, retention: r, segment: defaultVersionedSegmentInterval(r)}, nil
}

// changeLoggingVersionedKeyValueBytesStore writes every put and delete of the versioned store
// below it to the store's changelog: the key, the plain value (a tombstone for a delete or a
// nil put) and the version's timestamp as record timestamp, also for puts the store did not
// apply (as Java). Java counterpart: changeLoggingVersionedKeyValueBytesStore.
type changeLoggingVersionedKeyValueBytesStore struct {
	VersionedBytesStore
	logger changelogContext
}

// newChangeLoggingVersionedKeyValueBytesStore wraps inner with change logging.
func newChangeLoggingVersionedKeyValueBytesStore(inner VersionedBytesStore) *changeLoggingVersionedKeyValueBytesStore {
	return &changeLoggingVersionedKeyValueBytesStore{VersionedBytesStore: inner}
}

// Inner returns the wrapped store.
func (c *changeLoggingVersionedKeyValueBytesStore) Inner() VersionedBytesStore {
	return c.VersionedBytesStore
}

// HistoryRetentionMs returns the engine's history retention (ms), 0 when unknown.
func (c *changeLoggingVersionedKeyValueBytesStore) HistoryRetentionMs() int64 {
	if v, ok := c.VersionedBytesStore.(storeapi.VersionedEngine); ok {
		return v.HistoryRetentionMs()
	}
	return 0
}

// Init initialises the inner store and picks up the context's changelog writer, if any.
func (c *changeLoggingVersionedKeyValueBytesStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if l, ok := ctx.(changelogContext); ok {
		c.logger = l
	}
	return c.VersionedBytesStore.Init(ctx, root)
}

func (c *changeLoggingVersionedKeyValueBytesStore) log(key, value []byte, ts int64) error {
	if c.logger == nil {
		return nil
	}
	return storeErr(c.Name(), "log change", c.logger.LogChange(c.Name(), key, value, ts))
}

// Put writes to the inner store, then logs the record.
func (c *changeLoggingVersionedKeyValueBytesStore) Put(key, value []byte, timestamp int64) (int64, error) {
	res, err := c.VersionedBytesStore.Put(key, value, timestamp)
	if err != nil {
		return 0, err
	}
	return res, c.log(key, value, timestamp)
}

// Delete deletes in the inner store, then logs a tombstone at timestamp.
func (c *changeLoggingVersionedKeyValueBytesStore) Delete(key []byte, timestamp int64) (*VersionedRecord[[]byte], error) {
	old, err := c.VersionedBytesStore.Delete(key, timestamp)
	if err != nil {
		return nil, err
	}
	return old, c.log(key, nil, timestamp)
}

// meteredVersionedKeyValueStore is the typed layer of a versioned store: it serializes keys
// and values with its serdes (serde topic: the changelog topic). Nil serdes are taken from the
// context's default serdes at Init. Java counterpart: meteredVersionedKeyValueStore.
type meteredVersionedKeyValueStore[K, V any] struct {
	inner         VersionedBytesStore
	keySerde      serde.Serde[K]
	valueSerde    serde.Serde[V]
	topic         string
	keyNillable   bool
	valueNillable bool
}

var _ VersionedKeyValueStore[string, int32] = (*meteredVersionedKeyValueStore[string, int32])(nil)

// newMeteredVersionedKeyValueStore wraps inner with key and value serdes.
func newMeteredVersionedKeyValueStore[K, V any](inner VersionedBytesStore, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *meteredVersionedKeyValueStore[K, V] {
	return &meteredVersionedKeyValueStore[K, V]{inner: inner, keySerde: keySerde, valueSerde: valueSerde,
		keyNillable: nillable[K](), valueNillable: nillable[V]()}
}

// Name returns the store name.
func (m *meteredVersionedKeyValueStore[K, V]) Name() string { return m.inner.Name() }

// Inner returns the bytes-level store below this layer.
func (m *meteredVersionedKeyValueStore[K, V]) Inner() VersionedBytesStore { return m.inner }

// HistoryRetentionMs returns the engine's history retention (ms), 0 when unknown.
func (m *meteredVersionedKeyValueStore[K, V]) HistoryRetentionMs() int64 {
	for _, l := range storeapi.Layers(m) {
		if v, ok := l.(storeapi.VersionedEngine); ok && l != processor.StateStore(m) {
			return v.HistoryRetentionMs()
		}
	}
	return 0
}

// Init resolves default serdes, sets the serde topic and initialises the inner store.
func (m *meteredVersionedKeyValueStore[K, V]) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	topic, err := initSerdes(ctx, m.Name(), &m.keySerde, &m.valueSerde)
	if err != nil {
		return err
	}
	if ctx != nil {
		m.topic = topic
	}
	return m.inner.Init(ctx, root)
}

// Flush flushes the inner store.
func (m *meteredVersionedKeyValueStore[K, V]) Flush() error { return m.inner.Flush() }

// Close closes the inner store.
func (m *meteredVersionedKeyValueStore[K, V]) Close() error { return m.inner.Close() }

// Persistent reports whether the engine below is persistent.
func (m *meteredVersionedKeyValueStore[K, V]) Persistent() bool { return m.inner.Persistent() }

// IsOpen reports whether the store is open.
func (m *meteredVersionedKeyValueStore[K, V]) IsOpen() bool { return m.inner.IsOpen() }

func (m *meteredVersionedKeyValueStore[K, V]) keyBytes(op string, key K) ([]byte, error) {
	if m.keyNillable && isNil(key) {
		return nil, storeErr(m.Name(), op, ErrNullKey)
	}
	if m.keySerde == nil {
		return nil, storeErr(m.Name(), op, ErrStoreClosed)
	}
	b, err := m.keySerde.Serialize(m.topic, &serde.Headers{}, key)
	if err != nil {
		return nil, storeErr(m.Name(), op+": serialize key", err)
	}
	if b == nil {
		return nil, storeErr(m.Name(), op, ErrNullKey)
	}
	return b, nil
}

func (m *meteredVersionedKeyValueStore[K, V]) record(op string, r *VersionedRecord[[]byte]) (*VersionedRecord[V], error) {
	if r == nil {
		return nil, nil
	}
	v, err := m.valueSerde.Deserialize(m.topic, &serde.Headers{}, r.Value)
	if err != nil {
		return nil, storeErr(m.Name(), op+": deserialize value", err)
	}
	return &VersionedRecord[V]{Value: storeapi.Detach(v), Timestamp: r.Timestamp, ValidTo: r.ValidTo, HasValidTo: r.HasValidTo}, nil
}

// Put implements [VersionedKeyValueStore].
func (m *meteredVersionedKeyValueStore[K, V]) Put(key K, value V, timestamp int64) (int64, error) {
	k, err := m.keyBytes("put", key)
	if err != nil {
		return 0, err
	}
	var v []byte
	if !(m.valueNillable && isNil(value)) {
		if v, err = m.valueSerde.Serialize(m.topic, &serde.Headers{}, value); err != nil {
			return 0, storeErr(m.Name(), "put: serialize value", err)
		}
	}
	return m.inner.Put(k, v, timestamp)
}

// Delete implements [VersionedKeyValueStore].
func (m *meteredVersionedKeyValueStore[K, V]) Delete(key K, timestamp int64) (*VersionedRecord[V], error) {
	k, err := m.keyBytes("delete", key)
	if err != nil {
		return nil, err
	}
	r, err := m.inner.Delete(k, timestamp)
	if err != nil {
		return nil, err
	}
	return m.record("delete", r)
}

// Get implements [VersionedKeyValueStore].
func (m *meteredVersionedKeyValueStore[K, V]) Get(key K) (*VersionedRecord[V], error) {
	k, err := m.keyBytes("get", key)
	if err != nil {
		return nil, err
	}
	r, err := m.inner.Get(k)
	if err != nil {
		return nil, err
	}
	return m.record("get", r)
}

// GetAsOf implements [VersionedKeyValueStore].
func (m *meteredVersionedKeyValueStore[K, V]) GetAsOf(key K, asOfTimestamp int64) (*VersionedRecord[V], error) {
	k, err := m.keyBytes("get", key)
	if err != nil {
		return nil, err
	}
	r, err := m.inner.GetAsOf(k, asOfTimestamp)
	if err != nil {
		return nil, err
	}
	return m.record("get", r)
}

// VersionedKeyValueStoreBuilder returns a builder of [VersionedKeyValueStore] stores over
// supplier's engines: the engine wrapped in versioned change logging (every put and delete,
// with the version's timestamp) and the typed layer; versioned stores have no record cache
// (see Builder). The changelog topic gets cleanup.policy=compact and min.compaction.lag.ms =
// history retention + 24 h unless the log config sets it (Java's
// VersionedChangelogTopicConfig). Nil serdes mean the configuration's default serdes,
// resolved at Init. Java: Stores.versionedKeyValueStoreBuilder(supplier, keySerde, valueSerde).
func (StoresFactory) VersionedKeyValueStoreBuilder[K, V any](supplier VersionedBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *Builder[VersionedKeyValueStore[K, V]] {
	info := func() storeapi.BuilderInfo {
		return storeapi.BuilderInfo{Versioned: true, HistoryRetentionMs: supplier.HistoryRetentionMs()}
	}
	b := newBuilder(supplier, info, func(o *builderOptions) VersionedKeyValueStore[K, V] {
		inner := supplier.Get()
		if o.logging {
			inner = newChangeLoggingVersionedKeyValueBytesStore(inner)
		}
		return newMeteredVersionedKeyValueStore(inner, keySerde, valueSerde)
	})
	b.core.versioned = true
	return b
}
