package store

import (
	"encoding/binary"
	"errors"

	"github.com/kstreams-go/kstreams/internal/serdeapi"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// ValueAndTimestamp is a value with the timestamp (ms) of its last update, as the DSL's
// timestamped stores keep it. Java counterpart: org.apache.kafka.streams.state.ValueAndTimestamp.
type ValueAndTimestamp[V any] struct {
	// Value is the stored value (never null: a null value is a missing entry).
	Value V
	// Timestamp is the record timestamp in ms.
	Timestamp int64
}

// MakeValueAndTimestamp returns &ValueAndTimestamp{value, timestamp}, or nil when value is
// null (nil, or a nil pointer, slice or map). Java: ValueAndTimestamp.make.
func MakeValueAndTimestamp[V any](value V, timestamp int64) *ValueAndTimestamp[V] {
	if isNil(value) {
		return nil
	}
	return &ValueAndTimestamp[V]{Value: value, Timestamp: timestamp}
}

// TimestampedKeyValueStore is a key-value store whose values carry a timestamp; a nil
// *ValueAndTimestamp is null (Put with nil deletes, Get of a missing key returns nil). The DSL's
// aggregations and materialized tables use it. Java counterpart:
// org.apache.kafka.streams.state.TimestampedKeyValueStore (KeyValueStore<K, ValueAndTimestamp<V>>).
type TimestampedKeyValueStore[K, V any] = KeyValueStore[K, *ValueAndTimestamp[V]]

// errShortTimestampedValue is returned when timestamped value bytes are shorter than the 8-byte
// timestamp.
var errShortTimestampedValue = errors.New("timestamped value shorter than 8 bytes")

// vatSerde is the serde of a timestamped store's values: the 8-byte big-endian timestamp, then
// the value's bytes (Java: ValueAndTimestampSerde). Build it with newVatSerde and change the
// inner serde with setInner only.
type vatSerde[V any] struct {
	inner serde.Serde[V]
	// app is inner as an AppendSerializer when it also has a fixed size (fixed, in bytes):
	// Serialize then builds its output in one allocation. Decided when inner is set, not on
	// every record.
	app   serde.AppendSerializer[V]
	fixed int
}

func newVatSerde[V any](inner serde.Serde[V]) *vatSerde[V] {
	s := &vatSerde[V]{}
	s.setInner(inner)
	return s
}

// setInner makes inner the value serde.
func (s *vatSerde[V]) setInner(inner serde.Serde[V]) {
	s.inner, s.app, s.fixed = inner, nil, 0
	if a, ok := inner.(serde.AppendSerializer[V]); ok {
		if n := fixedSizeOf(inner); n > 0 {
			s.app, s.fixed = a, n
		}
	}
}

func (s *vatSerde[V]) Serialize(topic string, h *serde.Headers, v *ValueAndTimestamp[V]) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if s.inner == nil {
		return nil, ErrNoSerde
	}
	if s.app != nil {
		// One allocation: the timestamp, then the value appended in place.
		out := binary.BigEndian.AppendUint64(make([]byte, 0, 8+s.fixed), uint64(v.Timestamp))
		return s.app.AppendSerialize(out, topic, h, v.Value)
	}
	raw, err := s.inner.Serialize(topic, h, v.Value)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 8+len(raw))
	binary.BigEndian.PutUint64(out, uint64(v.Timestamp))
	copy(out[8:], raw)
	return out, nil
}

func (s *vatSerde[V]) Deserialize(topic string, h *serde.Headers, b []byte) (*ValueAndTimestamp[V], error) {
	if b == nil {
		return nil, nil
	}
	if len(b) < 8 {
		return nil, errShortTimestampedValue
	}
	if s.inner == nil {
		return nil, ErrNoSerde
	}
	v, err := s.inner.Deserialize(topic, h, b[8:])
	if err != nil {
		return nil, err
	}
	// Detach: b may be a view of a Pebble iterator, and a []byte value deserializer
	// (serde.ByteArray) returns its input.
	return &ValueAndTimestamp[V]{Value: storeapi.Detach(v), Timestamp: int64(binary.BigEndian.Uint64(b))}, nil
}

// freshBytes marks Serialize as returning a new slice on every call (see freshSerializer).
func (s *vatSerde[V]) freshBytes() {}

// longValues reports whether the values are the Long serde's (a count's): 16 bytes, the
// timestamp then the value, both big-endian.
func (s *vatSerde[V]) longValues() bool { return serdeapi.IsLong(s.inner) }

// IgnoresHeaders is serdeapi.HeaderFree: the headers only reach the value's serde.
func (s *vatSerde[V]) IgnoresHeaders() bool { return serdeapi.IgnoresHeaders(s.inner) }

func (s *vatSerde[V]) String() string { return "ValueAndTimestampSerde(" + serde.Name(s.inner) + ")" }

// rawValue returns the value part of timestamped value bytes (nil for nil or short input).
// Java: ValueAndTimestampDeserializer.rawValue.
func rawValue(b []byte) []byte {
	if len(b) < 8 {
		return nil
	}
	return b[8:]
}

// timestampOf returns the timestamp part of timestamped value bytes (0 for nil or short input).
func timestampOf(b []byte) int64 {
	if len(b) < 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b))
}

// changeLoggingTimestampedKeyValueBytesStore is the change-logging layer of timestamped stores:
// the changelog record's value is the raw value (without the 8-byte timestamp) and its
// timestamp is the stored one; a delete (or a nil put) logs a tombstone with the timestamp of the
// record being processed. Java counterpart: changeLoggingTimestampedKeyValueBytesStore.
type changeLoggingTimestampedKeyValueBytesStore struct {
	KeyValueBytesStore
	logger changelogContext
	// withHeaders: log with the headers of the record being processed (see
	// storeapi.LogChangelogHeaders); headers and rc are the context's, when it offers them.
	withHeaders bool
	headers     storeapi.HeadersChangelogContext
	rc          storeapi.RecordContextAccess
}

// newChangeLoggingTimestampedKeyValueBytesStore wraps inner (holding ts ‖ value bytes).
func newChangeLoggingTimestampedKeyValueBytesStore(inner KeyValueBytesStore) *changeLoggingTimestampedKeyValueBytesStore {
	return &changeLoggingTimestampedKeyValueBytesStore{KeyValueBytesStore: inner}
}

// Inner returns the wrapped store.
func (c *changeLoggingTimestampedKeyValueBytesStore) Inner() KeyValueBytesStore {
	return c.KeyValueBytesStore
}

// Init initialises the inner store and picks up the context's changelog writer, if any.
func (c *changeLoggingTimestampedKeyValueBytesStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if l, ok := ctx.(changelogContext); ok {
		c.logger = l
	}
	if c.withHeaders {
		c.headers, _ = ctx.(storeapi.HeadersChangelogContext)
		c.rc, _ = ctx.(storeapi.RecordContextAccess)
	}
	return c.KeyValueBytesStore.Init(ctx, root)
}

func (c *changeLoggingTimestampedKeyValueBytesStore) log(key, value []byte) error {
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
	if c.headers != nil && c.rc != nil {
		return storeErr(c.Name(), "log change", c.headers.LogChangeWithHeaders(c.Name(), key, raw, ts, c.rc.CurrentRecordContext().Headers))
	}
	return storeErr(c.Name(), "log change", c.logger.LogChange(c.Name(), key, raw, ts))
}

// Put writes to the inner store, then logs the change.
func (c *changeLoggingTimestampedKeyValueBytesStore) Put(key, value []byte) error {
	if err := c.KeyValueBytesStore.Put(key, value); err != nil {
		return err
	}
	return c.log(key, value)
}

// PutIfAbsent writes when absent and logs only what was written.
func (c *changeLoggingTimestampedKeyValueBytesStore) PutIfAbsent(key, value []byte) ([]byte, bool, error) {
	old, found, err := c.KeyValueBytesStore.PutIfAbsent(key, value)
	if err != nil {
		return nil, false, err
	}
	if !found {
		if err := c.log(key, value); err != nil {
			return nil, false, err
		}
	}
	return old, found, nil
}

// PutAll writes all entries, then logs each.
func (c *changeLoggingTimestampedKeyValueBytesStore) PutAll(entries []KeyValue[[]byte, []byte]) error {
	if err := c.KeyValueBytesStore.PutAll(entries); err != nil {
		return err
	}
	for _, e := range entries {
		if err := c.log(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes key and logs a tombstone.
func (c *changeLoggingTimestampedKeyValueBytesStore) Delete(key []byte) ([]byte, bool, error) {
	old, found, err := c.KeyValueBytesStore.Delete(key)
	if err != nil {
		return nil, false, err
	}
	if err := c.log(key, nil); err != nil {
		return nil, false, err
	}
	return old, found, nil
}

// TimestampedKeyValueStoreBuilder returns a builder of [TimestampedKeyValueStore] stores over
// supplier's engines, which hold int64 timestamp ‖ value bytes: the engine is wrapped (inside
// out) in timestamped change logging (the changelog record's value is the plain value, its
// timestamp the stored one), the record cache and the typed layer, which implements
// storeapi.CachedStateStore[K, *ValueAndTimestamp[V]]. Nil serdes mean the configuration's
// default serdes, resolved at Init. Java: Stores.timestampedKeyValueStoreBuilder(supplier,
// keySerde, valueSerde).
func (StoresFactory) TimestampedKeyValueStoreBuilder[K, V any](supplier KeyValueBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *Builder[TimestampedKeyValueStore[K, V]] {
	b := newBuilder(supplier, nil, func(o *builderOptions) TimestampedKeyValueStore[K, V] {
		var inner KeyValueBytesStore = supplier.Get()
		if o.logging {
			l := newChangeLoggingTimestampedKeyValueBytesStore(inner)
			l.withHeaders = o.headers
			inner = l
		}
		if o.caching {
			inner = newCachingKeyValueStore(inner)
		}
		vs := newVatSerde(valueSerde)
		return &timestampedStore[K, V]{meteredKeyValueStore: newMeteredKeyValueStore(inner, keySerde, serde.Serde[*ValueAndTimestamp[V]](vs)), vs: vs}
	})
	b.core.headersOK = true
	return b
}

// timestampedStore is the metered layer of a timestamped store; it resolves a nil value serde
// to the context default at Init.
type timestampedStore[K, V any] struct {
	*meteredKeyValueStore[K, *ValueAndTimestamp[V]]
	vs *vatSerde[V]
}

// FreshValues implements storeapi.FreshValuesStore: Get deserializes a new value on every call and Put
// serializes the value it is given.
func (t *timestampedStore[K, V]) FreshValues() {}

// Init resolves default serdes and initialises the layers below.
func (t *timestampedStore[K, V]) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if t.vs.inner == nil && ctx != nil {
		s, err := defaultSerde[V](ctx.ValueSerde(), "value")
		if err != nil {
			return storeErr(t.Name(), "init: value serde", err)
		}
		t.vs.setInner(s)
	}
	return t.meteredKeyValueStore.Init(ctx, root)
}

// fixedSizeOf returns s's serde.FixedSizer size, or 0.
func fixedSizeOf(s any) int {
	if fs, ok := s.(serde.FixedSizer); ok {
		return fs.FixedSize()
	}
	return 0
}
