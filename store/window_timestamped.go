package store

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
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

// TimestampedWindowStoreBuilder returns a builder of [TimestampedWindowStore] stores over
// supplier's engines, which hold int64 timestamp ‖ value bytes: the engine wrapped (inside
// out) in timestamped change logging (the changelog record's value is the plain value, its
// timestamp the stored one), the record cache (never over a supplier that retains
// duplicates) and the typed layer with the ValueAndTimestamp serde of valueSerde. The
// changelog topic is configured as WindowStoreBuilder's. Nil serdes mean the configuration's
// default serdes, resolved at Init. Java: Stores.timestampedWindowStoreBuilder(supplier,
// keySerde, valueSerde).
func (StoresFactory) TimestampedWindowStoreBuilder[K, V any](supplier WindowBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *Builder[TimestampedWindowStore[K, V]] {
	b := newBuilder(supplier, windowInfo(func() int64 { return supplier.RetentionPeriod() }), func(o *builderOptions) TimestampedWindowStore[K, V] {
		inner := supplier.Get()
		if o.logging {
			inner = newChangeLoggingTimestampedWindowBytesStore(inner, supplier.RetainDuplicates())
		}
		if o.caching && !supplier.RetainDuplicates() {
			inner = newCachingWindowStore(inner, supplier.WindowSize(), supplier.SegmentIntervalMs())
		}
		vs := newVatSerde(valueSerde)
		return &timestampedWindowStore[K, V]{meteredWindowStore: newMeteredWindowStore(inner, keySerde, serde.Serde[*ValueAndTimestamp[V]](vs)), vs: vs}
	})
	b.core.dropsCache = supplier.RetainDuplicates
	return b
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
		t.vs.setInner(s)
	}
	return t.meteredWindowStore.Init(ctx, root)
}

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
