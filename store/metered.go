package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/serdeapi"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// ErrNullKey is returned when a nil key is passed to a typed store operation.
// Java counterpart: NullPointerException "key cannot be null".
var ErrNullKey = errors.New("store: key cannot be null")

// ErrNoSerde is returned by Init of a typed store built without a key or value serde when the
// context has no default serde usable for the store's type either.
// Java counterpart: ConfigException / StreamsException from WrappingNullableUtils.prepareKeySerde.
var ErrNoSerde = errors.New("store: no serde configured")

// typeName is T as Go source writes it.
func typeName[T any]() string {
	return strings.ReplaceAll(reflect.TypeFor[T]().String(), "interface {}", "any")
}

// meteredKeyValueStore is the typed outer layer of a key-value store: it turns K and V into
// bytes with the store's serdes and calls the bytes-level store below (change-logging layer,
// then engine). Serdes are called with the changelog topic name
// "<application.id>-<store>-changelog" as topic, as in Java. A nil value is never serialized:
// it is passed down as nil bytes (a delete); nil bytes read back are never deserialized: they
// mean "absent". At metrics.recording.level DEBUG its calls are timed (stream-state-metrics).
// Java counterpart: org.apache.kafka.streams.state.internals.meteredKeyValueStore.
type meteredKeyValueStore[K, V any] struct {
	inner         KeyValueBytesStore
	keySerde      serde.Serde[K]
	valueSerde    serde.Serde[V]
	topic         string
	keyNillable   bool
	valueNillable bool
	hdr           headersScratch
	// noHeaders: both serdes ignore their Headers (serdeapi.IgnoresHeaders), so every call gets
	// the shared emptyHeaders instead of a lent one (two atomic operations less per call).
	noHeaders bool
	// cachingBelow is the caching layer right below, when the value serde returns a new slice
	// on every call (freshSerializer): Put then hands it the serialized value without a copy.
	cachingBelow *cachingKeyValueStore
	// keyApp is the key serde when it serializes in place (serdeapi.AppendsInPlace) and the layer
	// below is the caching layer, which keeps no key slice it is given (it copies a key it
	// caches): Get and the caching Put then serialize the key into keyBuf instead of a new
	// slice per call.
	keyApp serde.AppendSerializer[K]
	keyBuf keyScratch
	// stringKeys is the caching layer right below when the key serde is the String serde
	// (serdeapi.IsString), whose bytes are the string's own: GetKept and PutKept then hand it
	// the key as the string, unserialized, and an entry it adds keeps that string as its map
	// key. A key decoded through a task's intern table is then the same string on every record,
	// and the map's comparison of a lookup with it is equal on the pointer, without reading the
	// entry's copy of the bytes (the lookup still hashes them).
	stringKeys *cachingKeyValueStore
	// counts: the values are timestamped Long values (vatSerde.longValues), and stringKeys and
	// cachingBelow are set, so GetCountKept and PutCountKept read and write the cache's bytes
	// themselves (storeapi.CountStore).
	counts bool
	// sensors time the calls at DEBUG (nil: not recorded).
	sensors *metrics.StoreOps
}

// keyScratch is the key buffer the stream thread's Get and Put lend (see lendKey); a
// concurrent caller (an interactive query) that finds it lent serializes into a new slice.
type keyScratch struct {
	busy atomic.Bool
	b    []byte
	// key is the String key b holds the bytes of (valid when hasKey): an aggregation's Get and
	// Put of one key serialize it once.
	key    string
	hasKey bool
	// h is the empty Headers the serdes get while the buffer is lent: the borrower of the key
	// buffer needs no headersScratch (one atomic operation less each way) for the key's and
	// the value's serde calls of one Get or Put. Emptied after every serde call.
	h serde.Headers
}

// done gives the buffer back.
func (s *keyScratch) done() { s.busy.Store(false) }

// headers returns the Headers a serde call gets: the key buffer's when the caller has it lent,
// else one from the headers scratch; release takes it back, emptied.
func (m *meteredKeyValueStore[K, V]) headers(lent bool) *serde.Headers {
	if m.noHeaders {
		return &emptyHeaders
	}
	if lent {
		return &m.keyBuf.h
	}
	return m.hdr.get()
}

func (m *meteredKeyValueStore[K, V]) release(h *serde.Headers) {
	switch h {
	case &emptyHeaders:
	case &m.keyBuf.h:
		m.keyBuf.h = serde.Headers{}
	default:
		m.hdr.put(h)
	}
}

// emptyHeaders is the Headers every serde that ignores them gets (meteredKeyValueStore's
// noHeaders): never written, so shared by every store and goroutine.
var emptyHeaders serde.Headers

// freshSerializer is implemented by the store's own serdes whose Serialize returns a newly
// allocated slice on every call, which the layer below may keep without copying it.
type freshSerializer interface{ freshBytes() }

// headersScratch lends the empty Headers a store layer hands to its serdes (which take a
// pointer, so a fresh one would be a heap allocation per call). The stream thread gets the
// scratch; a concurrent caller (an interactive query) that finds it lent gets a new one.
type headersScratch struct {
	busy atomic.Bool
	h    serde.Headers
}

func (s *headersScratch) get() *serde.Headers {
	if s.busy.CompareAndSwap(false, true) {
		return &s.h
	}
	return &serde.Headers{}
}

// put takes back h (from get), emptied for the next caller.
func (s *headersScratch) put(h *serde.Headers) {
	if h == &s.h {
		s.h = serde.Headers{}
		s.busy.Store(false)
	}
}

var _ KeyValueStore[string, int32] = (*meteredKeyValueStore[string, int32])(nil)

// newMeteredKeyValueStore wraps inner with key and value serdes. Nil serdes are taken from the
// context's default serdes (default.key.serde / default.value.serde) at Init, which works when
// K (or V) is any or the default serde's values are of type K (V).
func newMeteredKeyValueStore[K, V any](inner KeyValueBytesStore, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *meteredKeyValueStore[K, V] {
	return &meteredKeyValueStore[K, V]{inner: inner, keySerde: keySerde, valueSerde: valueSerde,
		keyNillable: nillable[K](), valueNillable: nillable[V]()}
}

// Name returns the store name.
func (m *meteredKeyValueStore[K, V]) Name() string { return m.inner.Name() }

// Inner returns the bytes-level store below this layer.
func (m *meteredKeyValueStore[K, V]) Inner() KeyValueBytesStore { return m.inner }

// Init resolves default serdes, sets the serde topic and initialises the inner store with root.
func (m *meteredKeyValueStore[K, V]) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	topic, err := initSerdes(ctx, m.Name(), &m.keySerde, &m.valueSerde)
	if err != nil {
		return err
	}
	if ctx != nil {
		m.topic = topic
	}
	m.cachingBelow, m.stringKeys, m.keyApp = nil, nil, nil // a store initialised again decides afresh
	m.noHeaders = serdeapi.IgnoresHeaders(m.keySerde) && serdeapi.IgnoresHeaders(m.valueSerde)
	if _, ok := any(m.valueSerde).(freshSerializer); ok {
		m.cachingBelow, _ = m.inner.(*cachingKeyValueStore)
	}
	if cb, ok := m.inner.(*cachingKeyValueStore); ok && serdeapi.IsString(m.keySerde) {
		m.stringKeys = cb
	}
	if _, ok := m.inner.(*cachingKeyValueStore); ok && serdeapi.AppendsInPlace(m.keySerde) {
		m.keyApp, _ = any(m.keySerde).(serde.AppendSerializer[K])
		m.keyBuf.b = make([]byte, 0, 64) // never nil: an empty key is not a null key
	}
	lv, ok := any(m.valueSerde).(interface{ longValues() bool })
	m.counts = ok && lv.longValues() && m.stringKeys != nil && m.cachingBelow != nil
	if ctx != nil {
		m.sensors = storeSensors(ctx, m.Name(), m.inner.Persistent())
	}
	return m.inner.Init(ctx, root)
}

// Flush flushes the inner store.
func (m *meteredKeyValueStore[K, V]) Flush() error {
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Flush, time.Now())
	}
	return m.inner.Flush()
}

// Close closes the inner store.
func (m *meteredKeyValueStore[K, V]) Close() error { return m.inner.Close() }

// Persistent reports whether the engine below is persistent.
func (m *meteredKeyValueStore[K, V]) Persistent() bool { return m.inner.Persistent() }

// IsOpen reports whether the store is open.
func (m *meteredKeyValueStore[K, V]) IsOpen() bool { return m.inner.IsOpen() }

func (m *meteredKeyValueStore[K, V]) keyBytes(op string, key K) ([]byte, error) {
	if m.keyNillable && isNil(key) {
		return nil, storeErr(m.Name(), op, ErrNullKey)
	}
	if m.keySerde == nil {
		return nil, storeErr(m.Name(), op, ErrStoreClosed)
	}
	h := m.headers(false)
	b, err := m.keySerde.Serialize(m.topic, h, key)
	m.release(h)
	if err != nil {
		return nil, storeErr(m.Name(), op+": serialize key", err)
	}
	return b, nil
}

// lendKey serializes key like keyBytes, but into the key scratch buffer when the layer has one
// (see keyApp) and it is free: lent reports that, and the caller gives the buffer back with
// m.keyBuf.done() once it no longer uses the bytes (which must not be kept).
func (m *meteredKeyValueStore[K, V]) lendKey(op string, key K) (b []byte, lent bool, err error) {
	if m.keyApp == nil || m.keySerde == nil || (m.keyNillable && isNil(key)) || !m.keyBuf.busy.CompareAndSwap(false, true) {
		b, err = m.keyBytes(op, key)
		return b, false, err
	}
	ks, isString := any(key).(string)
	if isString && m.keyBuf.hasKey && m.keyBuf.key == ks {
		return m.keyBuf.b, true, nil
	}
	h := m.headers(true)
	b, err = m.keyApp.AppendSerialize(m.keyBuf.b[:0], m.topic, h, key)
	m.release(h)
	if err != nil {
		m.keyBuf.hasKey = false
		m.keyBuf.done()
		return nil, false, storeErr(m.Name(), op+": serialize key", err)
	}
	m.keyBuf.b = b
	m.keyBuf.key, m.keyBuf.hasKey = ks, isString
	return b, true, nil
}

// boundBytes serializes a range bound; a nil bound stays nil (unbounded).
func (m *meteredKeyValueStore[K, V]) boundBytes(op string, key K) ([]byte, error) {
	if m.keyNillable && isNil(key) {
		return nil, nil
	}
	return m.keyBytes(op, key)
}

func (m *meteredKeyValueStore[K, V]) valueBytes(op string, value V) ([]byte, error) {
	return m.valueBytesLent(false, op, value)
}

// valueBytesLent is valueBytes by a caller that has the key buffer lent when lent is true.
func (m *meteredKeyValueStore[K, V]) valueBytesLent(lent bool, op string, value V) ([]byte, error) {
	if m.valueNillable && isNil(value) {
		return nil, nil
	}
	h := m.headers(lent)
	b, err := m.valueSerde.Serialize(m.topic, h, value)
	m.release(h)
	if err != nil {
		return nil, storeErr(m.Name(), op+": serialize value", err)
	}
	return b, nil
}

func (m *meteredKeyValueStore[K, V]) value(op string, b []byte) (V, bool, error) {
	return m.valueLent(false, op, b)
}

// valueLent is value by a caller that has the key buffer lent when lent is true.
func (m *meteredKeyValueStore[K, V]) valueLent(lent bool, op string, b []byte) (V, bool, error) {
	var zero V
	if b == nil {
		return zero, false, nil
	}
	h := m.headers(lent)
	v, err := m.valueSerde.Deserialize(m.topic, h, b)
	m.release(h)
	if err != nil {
		return zero, false, storeErr(m.Name(), op+": deserialize value", err)
	}
	return v, true, nil
}

// Get returns the value of key.
func (m *meteredKeyValueStore[K, V]) Get(key K) (V, bool, error) {
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Get, time.Now())
	}
	var zero V
	kb, lent, err := m.lendKey("get", key)
	if err != nil {
		return zero, false, err
	}
	vb, _, err := m.inner.Get(kb)
	if err != nil {
		if lent {
			m.keyBuf.done()
		}
		return zero, false, err
	}
	v, ok, err := m.valueLent(lent, "get", vb)
	if lent {
		m.keyBuf.done()
	}
	return v, ok, err
}

// Put stores value under key; a nil value deletes.
func (m *meteredKeyValueStore[K, V]) Put(key K, value V) error {
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Put, time.Now())
	}
	if m.cachingBelow != nil {
		kb, lent, err := m.lendKey("put", key)
		if err != nil {
			return err
		}
		vb, err := m.valueBytesLent(lent, "put", value)
		if err == nil {
			err = m.cachingBelow.putOwned(kb, vb, lent)
		}
		if lent {
			m.keyBuf.done()
		}
		return err
	}
	kb, err := m.keyBytes("put", key)
	if err != nil {
		return err
	}
	vb, err := m.valueBytes("put", value)
	if err != nil {
		return err
	}
	return m.inner.Put(kb, vb)
}

// GetKept is Get for a key that never changes and holds no memory beyond its own bytes
// (storeapi.KeptKeysStore): a String key reaches the cache unserialized (see stringKeys).
func (m *meteredKeyValueStore[K, V]) GetKept(key K) (V, bool, error) {
	ks, ok := any(key).(string)
	if m.stringKeys == nil || !ok {
		return m.Get(key)
	}
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Get, time.Now())
	}
	vb, _, err := m.stringKeys.getString(ks)
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.value("get", vb)
}

// PutKept is Put for a key that never changes and holds no memory beyond its own bytes
// (storeapi.KeptKeysStore): a String key reaches the cache unserialized, and an entry the cache
// adds keeps it as its map key (see stringKeys).
func (m *meteredKeyValueStore[K, V]) PutKept(key K, value V) error {
	ks, ok := any(key).(string)
	if m.stringKeys == nil || m.cachingBelow == nil || !ok {
		return m.Put(key, value)
	}
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Put, time.Now())
	}
	vb, err := m.valueBytes("put", value)
	if err != nil {
		return err
	}
	return m.cachingBelow.putOwnedString(ks, vb)
}

// errNotCounts is returned by GetCountKept and PutCountKept of a store whose Counts is false, or
// for a key that is not a string.
var errNotCounts = errors.New("not a count store of String keys above a record cache")

// Counts is storeapi.CountStore: whether GetCountKept and PutCountKept apply.
func (m *meteredKeyValueStore[K, V]) Counts() bool { return m.counts }

// GetCountKept is storeapi.CountStore's: GetKept of a timestamped Long value read straight from
// its bytes. Bytes of another length than 16 are deserialized as GetKept would, for its error.
func (m *meteredKeyValueStore[K, V]) GetCountKept(key K) (count, ts int64, found bool, err error) {
	ks, ok := any(key).(string)
	if !m.counts || !ok {
		return 0, 0, false, storeErr(m.Name(), "get", errNotCounts)
	}
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Get, time.Now())
	}
	vb, _, err := m.stringKeys.getString(ks)
	if err != nil || vb == nil {
		return 0, 0, false, err
	}
	if len(vb) != 16 {
		if _, _, err := m.value("get", vb); err != nil {
			return 0, 0, false, err
		}
		return 0, 0, false, storeErr(m.Name(), "get", fmt.Errorf("a timestamped Long value of %d bytes", len(vb)))
	}
	return int64(binary.BigEndian.Uint64(vb[8:])), int64(binary.BigEndian.Uint64(vb)), true, nil
}

// PutCountKept is storeapi.CountStore's: PutKept of count with timestamp ts, serialized straight
// into the 16 bytes the cache keeps (those of the key's entry while it is dirty and unflushed:
// cache.PutDirtyStringCopy).
func (m *meteredKeyValueStore[K, V]) PutCountKept(key K, count, ts int64) error {
	ks, ok := any(key).(string)
	if !m.counts || !ok {
		return storeErr(m.Name(), "put", errNotCounts)
	}
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Put, time.Now())
	}
	var vb [16]byte
	binary.BigEndian.PutUint64(vb[:], uint64(ts))
	binary.BigEndian.PutUint64(vb[8:], uint64(count))
	return m.cachingBelow.putCopiedString(ks, vb[:])
}

// PutIfAbsent stores value when key is absent and returns the existing value otherwise.
func (m *meteredKeyValueStore[K, V]) PutIfAbsent(key K, value V) (V, bool, error) {
	if s := m.sensors; s != nil {
		defer timed(s, metrics.PutIfAbsent, time.Now())
	}
	var zero V
	kb, err := m.keyBytes("putIfAbsent", key)
	if err != nil {
		return zero, false, err
	}
	vb, err := m.valueBytes("putIfAbsent", value)
	if err != nil {
		return zero, false, err
	}
	old, _, err := m.inner.PutIfAbsent(kb, vb)
	if err != nil {
		return zero, false, err
	}
	return m.value("putIfAbsent", old)
}

// PutAll serializes every entry first (nothing is written if one fails) and writes them in order.
func (m *meteredKeyValueStore[K, V]) PutAll(entries []KeyValue[K, V]) error {
	if s := m.sensors; s != nil {
		defer timed(s, metrics.PutAll, time.Now())
	}
	raw := make([]KeyValue[[]byte, []byte], 0, len(entries))
	for _, e := range entries {
		kb, err := m.keyBytes("putAll", e.Key)
		if err != nil {
			return err
		}
		vb, err := m.valueBytes("putAll", e.Value)
		if err != nil {
			return err
		}
		raw = append(raw, KeyValue[[]byte, []byte]{Key: kb, Value: vb})
	}
	return m.inner.PutAll(raw)
}

// Delete removes key and returns its old value.
func (m *meteredKeyValueStore[K, V]) Delete(key K) (V, bool, error) {
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Delete, time.Now())
	}
	var zero V
	kb, err := m.keyBytes("delete", key)
	if err != nil {
		return zero, false, err
	}
	old, _, err := m.inner.Delete(kb)
	if err != nil {
		return zero, false, err
	}
	return m.value("delete", old)
}

func (m *meteredKeyValueStore[K, V]) rangeOf(op string, from, to K, reverse bool) KeyValueIterator[K, V] {
	if s := m.sensors; s != nil {
		defer timed(s, metrics.Range, time.Now())
	}
	fb, err := m.boundBytes(op, from)
	if err != nil {
		return ErrorIterator[K, V](err)
	}
	tb, err := m.boundBytes(op, to)
	if err != nil {
		return ErrorIterator[K, V](err)
	}
	if reverse {
		return m.wrap(m.inner.ReverseRange(fb, tb))
	}
	return m.wrap(m.inner.Range(fb, tb))
}

// Range iterates from <= key <= to (serialized order) ascending.
func (m *meteredKeyValueStore[K, V]) Range(from, to K) KeyValueIterator[K, V] {
	return m.rangeOf("range", from, to, false)
}

// ReverseRange iterates from <= key <= to (serialized order) descending.
func (m *meteredKeyValueStore[K, V]) ReverseRange(from, to K) KeyValueIterator[K, V] {
	return m.rangeOf("reverseRange", from, to, true)
}

// All iterates all entries ascending.
func (m *meteredKeyValueStore[K, V]) All() KeyValueIterator[K, V] {
	if s := m.sensors; s != nil {
		defer timed(s, metrics.All, time.Now())
	}
	return m.wrap(m.inner.All())
}

// ReverseAll iterates all entries descending.
func (m *meteredKeyValueStore[K, V]) ReverseAll() KeyValueIterator[K, V] {
	return m.wrap(m.inner.ReverseAll())
}

// PrefixScan iterates the entries whose serialized key starts with prefix.
func (m *meteredKeyValueStore[K, V]) PrefixScan(prefix []byte) KeyValueIterator[K, V] {
	return m.wrap(m.inner.PrefixScan(prefix))
}

// ApproximateNumEntries returns the inner store's estimate.
func (m *meteredKeyValueStore[K, V]) ApproximateNumEntries() int64 {
	return m.inner.ApproximateNumEntries()
}

func (m *meteredKeyValueStore[K, V]) wrap(it KeyValueIterator[[]byte, []byte]) KeyValueIterator[K, V] {
	return &typedIterator[K, V]{m: m, it: it}
}

// typedIterator deserializes the entries of a bytes iterator.
type typedIterator[K, V any] struct {
	m   *meteredKeyValueStore[K, V]
	it  KeyValueIterator[[]byte, []byte]
	key K
	val V
	err error
}

func (t *typedIterator[K, V]) Next() bool {
	if t.err != nil || !t.it.Next() {
		var zk K
		var zv V
		t.key, t.val = zk, zv
		return false
	}
	return t.decode()
}

// decode reads the entry the bytes iterator is at into key and val.
func (t *typedIterator[K, V]) decode() bool {
	k, err := t.m.keySerde.Deserialize(t.m.topic, &serde.Headers{}, t.it.Key())
	if err != nil {
		t.err = storeErr(t.m.Name(), "iterate: deserialize key", err)
		return false
	}
	v, _, err := t.m.value("iterate", t.it.Value())
	if err != nil {
		t.err = err
		return false
	}
	t.key, t.val = storeapi.Detach(k), storeapi.Detach(v) // see Detach: the bytes iterator may hand out views
	return true
}

func (t *typedIterator[K, V]) Key() K   { return t.key }
func (t *typedIterator[K, V]) Value() V { return t.val }
func (t *typedIterator[K, V]) Err() error {
	if t.err != nil {
		return t.err
	}
	return t.it.Err()
}
func (t *typedIterator[K, V]) Close() error { return t.it.Close() }

// PrefixScan serializes prefix with prefixSerializer (topic null, as Java) and scans s for
// the keys that start with those bytes. Java counterpart: ReadOnlyKeyValueStore.prefixScan(prefix, serializer).
func PrefixScan[K, V, P any](s ReadOnlyKeyValueStore[K, V], prefix P, prefixSerializer serde.Serializer[P]) KeyValueIterator[K, V] {
	b, err := prefixSerializer.Serialize("", &serde.Headers{}, prefix)
	if err != nil {
		return ErrorIterator[K, V](fmt.Errorf("store: prefix scan: serialize prefix: %w", err))
	}
	if b == nil {
		b = []byte{}
	}
	return s.PrefixScan(b)
}

// nillable reports whether T's values can be nil (pointer, map, slice, func, chan, interface).
func nillable[T any]() bool {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return true
	}
	return false
}

// isNil reports whether v is null (serdeapi.IsNil), answering for the values of the DSL's
// (untyped) timestamped stores without reflection too.
func isNil(v any) bool {
	if x, ok := v.(*ValueAndTimestamp[any]); ok {
		return x == nil
	}
	return serdeapi.IsNil(v)
}

// initSerdes fills the key and value serdes a store layer was built without from ctx's
// defaults and returns the topic its serdes are called with (the store's changelog topic;
// "" without ctx). Errors: ErrNoSerde (wrapped with the store's name) when a serde is still
// missing.
func initSerdes[K, V any](ctx processor.StateStoreContext, name string, ks *serde.Serde[K], vs *serde.Serde[V]) (string, error) {
	var topic string
	if ctx != nil {
		topic = storeapi.ChangelogTopic(ctx.ApplicationID(), name)
		if *ks == nil {
			s, err := defaultSerde[K](ctx.KeySerde(), "key")
			if err != nil {
				return "", storeErr(name, "init: key serde", err)
			}
			*ks = s
		}
		if *vs == nil {
			s, err := defaultSerde[V](ctx.ValueSerde(), "value")
			if err != nil {
				return "", storeErr(name, "init: value serde", err)
			}
			*vs = s
		}
	}
	if *ks == nil || *vs == nil {
		return "", storeErr(name, "init", ErrNoSerde)
	}
	return topic, nil
}

// defaultSerde adapts a context default serde (of any) to Serde[T] (serde.Typed: a value of
// another type than T fails at deserialization with serde.ErrWrongType); which is "key" or
// "value", for the error when there is no default.
func defaultSerde[T any](s serde.Serde[any], which string) (serde.Serde[T], error) {
	if s == nil {
		return nil, fmt.Errorf("%w: the store has no %s serde of %s and no default.%s.serde is configured; "+
			"give the store its serdes (kstream.Materialized WithKeySerde/WithValueSerde, or the serdes of its "+
			"store builder) or set default.%s.serde (Config.Default%sSerde)",
			ErrNoSerde, which, typeName[T](), which, which, strings.ToUpper(which[:1])+which[1:])
	}
	return serde.Typed[T](s), nil
}
