package store

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"maps"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// TimestampedWindowStore is a window store whose values carry the timestamp (ms) of their last
// update, as the DSL's windowed aggregations keep them; a nil *ValueAndTimestamp is null. Java
// counterpart: org.apache.kafka.streams.state.TimestampedWindowStore.
type TimestampedWindowStore[K, V any] = WindowStore[K, *ValueAndTimestamp[V]]

// changeLoggingTimestampedWindowBytesStore is the change-logging layer of timestamped window
// stores: every put is logged with key = key ‖ int64 windowStart ‖ int32 seqnum, value = the
// raw value (without the 8-byte timestamp) and the stored timestamp as record timestamp; a
// nil put logs a tombstone with the timestamp of the record being processed. Java counterpart:
// changeLoggingTimestampedWindowBytesStore.
type changeLoggingTimestampedWindowBytesStore struct {
	WindowBytesStore
	retainDuplicates bool
	seqnum           int32
	logger           changelogContext
}

// newChangeLoggingTimestampedWindowBytesStore wraps inner (holding ts ‖ value bytes).
func newChangeLoggingTimestampedWindowBytesStore(inner WindowBytesStore, retainDuplicates bool) *changeLoggingTimestampedWindowBytesStore {
	return &changeLoggingTimestampedWindowBytesStore{WindowBytesStore: inner, retainDuplicates: retainDuplicates}
}

// Inner returns the wrapped store.
func (c *changeLoggingTimestampedWindowBytesStore) Inner() WindowBytesStore {
	return c.WindowBytesStore
}

// Init initialises the inner store and picks up the context's changelog writer, if any.
func (c *changeLoggingTimestampedWindowBytesStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if l, ok := ctx.(changelogContext); ok {
		c.logger = l
	}
	return c.WindowBytesStore.Init(ctx, root)
}

// Put writes to the inner store, then logs the change.
func (c *changeLoggingTimestampedWindowBytesStore) Put(key, value []byte, windowStart int64) error {
	if err := c.WindowBytesStore.Put(key, value, windowStart); err != nil {
		return err
	}
	if c.retainDuplicates {
		c.seqnum = (c.seqnum + 1) & 0x7fffffff
	}
	if c.logger == nil {
		return nil
	}
	ts := c.logger.RecordTimestamp()
	var raw []byte
	if value != nil {
		raw, ts = rawValue(value), timestampOf(value)
		if raw == nil {
			raw = []byte{}
		}
	}
	return storeErr(c.Name(), "log change", c.logger.LogChange(c.Name(), storeapi.WindowStoreKey(key, windowStart, c.seqnum), raw, ts))
}

// TimestampedWindowStoreBuilder builds timestamped window stores: an engine from the supplier,
// wrapped (inside out) in timestamped change logging (default on), the record cache
// ([cachingWindowStore], when caching is enabled) and the typed layer with the
// ValueAndTimestamp serde of valueSerde (nil serdes resolve to the defaults at Init). It
// satisfies processor.StoreBuilder. Java counterpart: TimestampedWindowStoreBuilder
// (Stores.timestampedWindowStoreBuilder).
type TimestampedWindowStoreBuilder[K, V any] struct {
	supplier   WindowBytesStoreSupplier
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	opts       builderOptions
}

var _ processor.StoreBuilder = (*TimestampedWindowStoreBuilder[string, int64])(nil)

// TimestampedWindowStoreBuilder returns a builder of timestamped window stores over
// supplier's engines. Java: Stores.timestampedWindowStoreBuilder(supplier, keySerde, valueSerde).
func (StoresFactory) TimestampedWindowStoreBuilder[K, V any](supplier WindowBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *TimestampedWindowStoreBuilder[K, V] {
	return &TimestampedWindowStoreBuilder[K, V]{supplier: supplier, keySerde: keySerde, valueSerde: valueSerde, opts: builderOptions{logging: true}}
}

// Name returns the store name. Java: name().
func (b *TimestampedWindowStoreBuilder[K, V]) Name() string { return b.supplier.Name() }

// WithLoggingEnabled enables the changelog topic with extra topic configs. Java: withLoggingEnabled(Map).
func (b *TimestampedWindowStoreBuilder[K, V]) WithLoggingEnabled(config map[string]string) *TimestampedWindowStoreBuilder[K, V] {
	b.opts.logging, b.opts.logConfig = true, maps.Clone(config)
	return b
}

// WithLoggingDisabled disables the changelog topic. Java: withLoggingDisabled().
func (b *TimestampedWindowStoreBuilder[K, V]) WithLoggingDisabled() *TimestampedWindowStoreBuilder[K, V] {
	b.opts.logging, b.opts.logConfig = false, nil
	return b
}

// WithCachingEnabled asks for a record cache. Java: withCachingEnabled().
func (b *TimestampedWindowStoreBuilder[K, V]) WithCachingEnabled() *TimestampedWindowStoreBuilder[K, V] {
	b.opts.caching = true
	return b
}

// WithCachingDisabled removes the record cache. Java: withCachingDisabled().
func (b *TimestampedWindowStoreBuilder[K, V]) WithCachingDisabled() *TimestampedWindowStoreBuilder[K, V] {
	b.opts.caching = false
	return b
}

// LoggingEnabled reports whether the store has a changelog. Java: loggingEnabled().
func (b *TimestampedWindowStoreBuilder[K, V]) LoggingEnabled() bool { return b.opts.logging }

// LogConfig returns a copy of the changelog topic configs. Java: logConfig().
func (b *TimestampedWindowStoreBuilder[K, V]) LogConfig() map[string]string { return b.opts.logCfg() }

// CachingEnabled reports whether WithCachingEnabled was called.
func (b *TimestampedWindowStoreBuilder[K, V]) CachingEnabled() bool { return b.opts.caching }

// RetentionPeriodMs returns the supplier's retention period in ms; the runtime gives the
// changelog cleanup.policy=compact,delete and retention.ms = this + 24 h, as Java's
// WindowedChangelogTopicConfig.
func (b *TimestampedWindowStoreBuilder[K, V]) RetentionPeriodMs() int64 {
	return b.supplier.RetentionPeriod()
}

// WindowSizeMs returns the supplier's window size in ms.
func (b *TimestampedWindowStoreBuilder[K, V]) WindowSizeMs() int64 { return b.supplier.WindowSize() }

// Build returns a new store (a TimestampedWindowStore[K, V]). Java: build().
func (b *TimestampedWindowStoreBuilder[K, V]) Build() (processor.StateStore, error) {
	return b.BuildTimestampedWindowStore(), nil
}

// BuildTimestampedWindowStore returns a new typed store (not initialised).
func (b *TimestampedWindowStoreBuilder[K, V]) BuildTimestampedWindowStore() TimestampedWindowStore[K, V] {
	inner := b.supplier.Get()
	if b.opts.logging {
		inner = newChangeLoggingTimestampedWindowBytesStore(inner, b.supplier.RetainDuplicates())
	}
	if b.opts.caching && !b.supplier.RetainDuplicates() {
		inner = newCachingWindowStore(inner, b.supplier.WindowSize(), b.supplier.SegmentIntervalMs())
	}
	vs := &vatSerde[V]{inner: b.valueSerde}
	return &timestampedWindowStore[K, V]{meteredWindowStore: newMeteredWindowStore(inner, b.keySerde, serde.Serde[*ValueAndTimestamp[V]](vs)), vs: vs}
}

// timestampedWindowStore resolves a nil value serde to the context default at Init.
type timestampedWindowStore[K, V any] struct {
	*meteredWindowStore[K, *ValueAndTimestamp[V]]
	vs *vatSerde[V]
}

// Init resolves default serdes and initialises the layers below.
func (t *timestampedWindowStore[K, V]) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if t.vs.inner == nil && ctx != nil {
		s, err := defaultSerde[V](ctx.ValueSerde(), "value")
		if err != nil {
			return storeErr(t.Name(), "init: value serde", err)
		}
		t.vs.inner = s
	}
	return t.meteredWindowStore.Init(ctx, root)
}

// RetentionPeriodMs returns the supplier's retention period in ms (see
// TimestampedWindowStoreBuilder.RetentionPeriodMs).
func (b *SessionStoreBuilder[K, V]) RetentionPeriodMs() int64 { return b.supplier.RetentionPeriod() }

// RetentionPeriodMs returns the supplier's retention period in ms (see
// TimestampedWindowStoreBuilder.RetentionPeriodMs).
func (b *WindowStoreBuilder[K, V]) RetentionPeriodMs() int64 { return b.supplier.RetentionPeriod() }

// fetchAllRetained is FetchAll with the read-side retention bound of Java's time-ordered
// window store (used by emit-on-close aggregations): the lower bound is raised to observed
// stream time - retention (not + 1 as the key-first store does).
func (w *windowBytesStore) fetchAllRetained(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	w.seg.mu.Lock()
	timeFrom = max(timeFrom, w.seg.observed-w.seg.retention)
	w.seg.mu.Unlock()
	if timeTo < timeFrom {
		return emptyIterator[serde.Windowed[[]byte], []byte]()
	}
	it := w.seg.fetch(timeFrom, timeTo, nil, nil, true, func(sk []byte) bool {
		_, ts, _, err := splitWindowStoreKey(sk)
		return err == nil && ts >= timeFrom && ts <= timeTo
	})
	return &mapKeyIterator[serde.Windowed[[]byte]]{it: it, conv: func(sk []byte) (serde.Windowed[[]byte], error) {
		k, ts, _, err := splitWindowStoreKey(sk)
		return serde.Windowed[[]byte]{Key: k, Window: serde.Window{Start: ts, End: windowEnd(ts, w.windowSize)}}, err
	}}
}

// FetchAllRetained iterates every window with max(timeFrom, observed stream time - retention)
// <= start <= timeTo (ms, inclusive): the emit-on-close aggregations of internal/ktable call it.
// Java: the fetchAll of the time-ordered window store.
func (t *timestampedWindowStore[K, V]) FetchAllRetained(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], *ValueAndTimestamp[V]] {
	var inner WindowBytesStore = t.meteredWindowStore.inner
	for {
		switch s := inner.(type) {
		case interface {
			fetchAllRetained(int64, int64) KeyValueIterator[serde.Windowed[[]byte], []byte]
		}:
			return t.meteredWindowStore.s.windowed(s.fetchAllRetained(timeFrom, timeTo))
		case interface{ Inner() WindowBytesStore }:
			inner = s.Inner()
		default:
			return t.meteredWindowStore.FetchAll(timeFrom, timeTo)
		}
	}
}
