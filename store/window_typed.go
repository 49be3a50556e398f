package store

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// storeSerdes turns the typed keys and values of window and session stores into bytes, with
// the changelog topic as serde topic (as Java's StateSerdes).
type storeSerdes[K, V any] struct {
	name       string
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	topic      string
}

func (s *storeSerdes[K, V]) init(ctx processor.StateStoreContext) error {
	if ctx != nil {
		s.topic = storeapi.ChangelogTopic(ctx.ApplicationID(), s.name)
		if s.keySerde == nil {
			ks, err := defaultSerde[K](ctx.KeySerde(), "key")
			if err != nil {
				return storeErr(s.name, "init: key serde", err)
			}
			s.keySerde = ks
		}
		if s.valueSerde == nil {
			vs, err := defaultSerde[V](ctx.ValueSerde(), "value")
			if err != nil {
				return storeErr(s.name, "init: value serde", err)
			}
			s.valueSerde = vs
		}
	}
	if s.keySerde == nil || s.valueSerde == nil {
		return storeErr(s.name, "init", ErrNoSerde)
	}
	return nil
}

func (s *storeSerdes[K, V]) key(op string, k K) ([]byte, error) {
	if isNil(k) {
		return nil, storeErr(s.name, op, ErrNullKey)
	}
	if s.keySerde == nil {
		return nil, storeErr(s.name, op, ErrStoreClosed)
	}
	b, err := s.keySerde.Serialize(s.topic, &serde.Headers{}, k)
	if err != nil {
		return nil, storeErr(s.name, op+": serialize key", err)
	}
	return b, nil
}

func (s *storeSerdes[K, V]) value(op string, v V) ([]byte, error) {
	if isNil(v) {
		return nil, nil
	}
	b, err := s.valueSerde.Serialize(s.topic, &serde.Headers{}, v)
	if err != nil {
		return nil, storeErr(s.name, op+": serialize value", err)
	}
	return b, nil
}

func (s *storeSerdes[K, V]) decodeValue(op string, b []byte) (V, bool, error) {
	var zero V
	if b == nil {
		return zero, false, nil
	}
	v, err := s.valueSerde.Deserialize(s.topic, &serde.Headers{}, b)
	if err != nil {
		return zero, false, storeErr(s.name, op+": deserialize value", err)
	}
	return v, true, nil
}

func (s *storeSerdes[K, V]) decodeKey(op string, b []byte) (K, error) {
	k, err := s.keySerde.Deserialize(s.topic, &serde.Headers{}, b)
	if err != nil {
		return k, storeErr(s.name, op+": deserialize key", err)
	}
	return k, nil
}

// convIterator converts the keys and values of a bytes-level iterator.
type convIterator[KB, K, V any] struct {
	it      KeyValueIterator[KB, []byte]
	convKey func(KB) (K, error)
	convVal func([]byte) (V, error)
	key     K
	val     V
	err     error
}

func (c *convIterator[KB, K, V]) Next() bool {
	if c.err != nil || !c.it.Next() {
		return false
	}
	k, err := c.convKey(c.it.Key())
	if err != nil {
		c.err = err
		return false
	}
	v, err := c.convVal(c.it.Value())
	if err != nil {
		c.err = err
		return false
	}
	c.key, c.val = k, storeapi.Detach(v) // see Detach: the bytes iterator may hand out views
	return true
}
func (c *convIterator[KB, K, V]) Key() K   { return c.key }
func (c *convIterator[KB, K, V]) Value() V { return c.val }
func (c *convIterator[KB, K, V]) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.it.Err()
}
func (c *convIterator[KB, K, V]) Close() error { return c.it.Close() }

func (s *storeSerdes[K, V]) windowed(it KeyValueIterator[serde.Windowed[[]byte], []byte]) KeyValueIterator[serde.Windowed[K], V] {
	return &convIterator[serde.Windowed[[]byte], serde.Windowed[K], V]{it: it,
		convKey: func(w serde.Windowed[[]byte]) (serde.Windowed[K], error) {
			k, err := s.decodeKey("iterate", w.Key)
			return serde.Windowed[K]{Key: storeapi.Detach(k), Window: w.Window}, err
		},
		convVal: func(b []byte) (V, error) { v, _, err := s.decodeValue("iterate", b); return v, err },
	}
}

// meteredWindowStore is the typed outer layer of a window store: it serializes keys and values
// with the store's serdes (topic = the changelog topic) and calls the bytes-level store below.
// Nil serdes resolve to the context's default serdes at Init. Metrics are not recorded yet.
// Java counterpart: org.apache.kafka.streams.state.internals.meteredWindowStore.
type meteredWindowStore[K, V any] struct {
	inner WindowBytesStore
	s     storeSerdes[K, V]
}

var _ WindowStore[string, int64] = (*meteredWindowStore[string, int64])(nil)

// newMeteredWindowStore wraps inner with serdes.
func newMeteredWindowStore[K, V any](inner WindowBytesStore, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *meteredWindowStore[K, V] {
	return &meteredWindowStore[K, V]{inner: inner, s: storeSerdes[K, V]{name: inner.Name(), keySerde: keySerde, valueSerde: valueSerde}}
}

// Inner returns the bytes-level store below.
func (m *meteredWindowStore[K, V]) Inner() WindowBytesStore { return m.inner }

// Name returns the store name.
func (m *meteredWindowStore[K, V]) Name() string { return m.inner.Name() }

// Init resolves serdes and initialises the layers below with root.
func (m *meteredWindowStore[K, V]) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if err := m.s.init(ctx); err != nil {
		return err
	}
	return m.inner.Init(ctx, root)
}

// Flush flushes the layers below.
func (m *meteredWindowStore[K, V]) Flush() error { return m.inner.Flush() }

// Close closes the layers below.
func (m *meteredWindowStore[K, V]) Close() error { return m.inner.Close() }

// Persistent reports whether the engine is persistent.
func (m *meteredWindowStore[K, V]) Persistent() bool { return m.inner.Persistent() }

// IsOpen reports whether the store is open.
func (m *meteredWindowStore[K, V]) IsOpen() bool { return m.inner.IsOpen() }

// Put stores value for key in the window starting at windowStart (ms).
func (m *meteredWindowStore[K, V]) Put(key K, value V, windowStart int64) error {
	kb, err := m.s.key("put", key)
	if err != nil {
		return err
	}
	vb, err := m.s.value("put", value)
	if err != nil {
		return err
	}
	return m.inner.Put(kb, vb, windowStart)
}

// Fetch returns the value of key in the window starting at windowStart.
func (m *meteredWindowStore[K, V]) Fetch(key K, windowStart int64) (V, bool, error) {
	var zero V
	kb, err := m.s.key("fetch", key)
	if err != nil {
		return zero, false, err
	}
	vb, _, err := m.inner.Fetch(kb, windowStart)
	if err != nil {
		return zero, false, err
	}
	return m.s.decodeValue("fetch", vb)
}

func (m *meteredWindowStore[K, V]) times(it KeyValueIterator[int64, []byte]) KeyValueIterator[int64, V] {
	return &convIterator[int64, int64, V]{it: it, convKey: func(t int64) (int64, error) { return t, nil },
		convVal: func(b []byte) (V, error) { v, _, err := m.s.decodeValue("iterate", b); return v, err }}
}

// FetchTimeRange iterates the windows of key with timeFrom <= start <= timeTo.
func (m *meteredWindowStore[K, V]) FetchTimeRange(key K, timeFrom, timeTo int64) KeyValueIterator[int64, V] {
	kb, err := m.s.key("fetch", key)
	if err != nil {
		return ErrorIterator[int64, V](err)
	}
	return m.times(m.inner.FetchTimeRange(kb, timeFrom, timeTo))
}

// BackwardFetchTimeRange is FetchTimeRange by descending start.
func (m *meteredWindowStore[K, V]) BackwardFetchTimeRange(key K, timeFrom, timeTo int64) KeyValueIterator[int64, V] {
	kb, err := m.s.key("backwardFetch", key)
	if err != nil {
		return ErrorIterator[int64, V](err)
	}
	return m.times(m.inner.BackwardFetchTimeRange(kb, timeFrom, timeTo))
}

func (m *meteredWindowStore[K, V]) keyRange(op string, keyFrom, keyTo K, timeFrom, timeTo int64, forward bool) KeyValueIterator[serde.Windowed[K], V] {
	var fb, tb []byte
	var err error
	if !isNil(keyFrom) {
		if fb, err = m.s.key(op, keyFrom); err != nil {
			return ErrorIterator[serde.Windowed[K], V](err)
		}
	}
	if !isNil(keyTo) {
		if tb, err = m.s.key(op, keyTo); err != nil {
			return ErrorIterator[serde.Windowed[K], V](err)
		}
	}
	if forward {
		return m.s.windowed(m.inner.FetchKeyRange(fb, tb, timeFrom, timeTo))
	}
	return m.s.windowed(m.inner.BackwardFetchKeyRange(fb, tb, timeFrom, timeTo))
}

// FetchKeyRange iterates the windows of keys in [keyFrom, keyTo] with timeFrom <= start <= timeTo;
// nil keys (for nillable K) are unbounded.
func (m *meteredWindowStore[K, V]) FetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], V] {
	return m.keyRange("fetch", keyFrom, keyTo, timeFrom, timeTo, true)
}

// BackwardFetchKeyRange is FetchKeyRange in reverse order.
func (m *meteredWindowStore[K, V]) BackwardFetchKeyRange(keyFrom, keyTo K, timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], V] {
	return m.keyRange("backwardFetch", keyFrom, keyTo, timeFrom, timeTo, false)
}

// FetchAll iterates all windows with timeFrom <= start <= timeTo.
func (m *meteredWindowStore[K, V]) FetchAll(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], V] {
	return m.s.windowed(m.inner.FetchAll(timeFrom, timeTo))
}

// BackwardFetchAll is FetchAll in reverse order.
func (m *meteredWindowStore[K, V]) BackwardFetchAll(timeFrom, timeTo int64) KeyValueIterator[serde.Windowed[K], V] {
	return m.s.windowed(m.inner.BackwardFetchAll(timeFrom, timeTo))
}

// All iterates every retained window.
func (m *meteredWindowStore[K, V]) All() KeyValueIterator[serde.Windowed[K], V] {
	return m.s.windowed(m.inner.All())
}

// BackwardAll iterates every retained window in reverse order.
func (m *meteredWindowStore[K, V]) BackwardAll() KeyValueIterator[serde.Windowed[K], V] {
	return m.s.windowed(m.inner.BackwardAll())
}

// meteredSessionStore is the typed outer layer of a session store (serdes over the bytes-level
// store). Java counterpart: org.apache.kafka.streams.state.internals.meteredSessionStore.
type meteredSessionStore[K, V any] struct {
	inner SessionBytesStore
	s     storeSerdes[K, V]
}

var _ SessionStore[string, int64] = (*meteredSessionStore[string, int64])(nil)

// newMeteredSessionStore wraps inner with serdes.
func newMeteredSessionStore[K, V any](inner SessionBytesStore, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *meteredSessionStore[K, V] {
	return &meteredSessionStore[K, V]{inner: inner, s: storeSerdes[K, V]{name: inner.Name(), keySerde: keySerde, valueSerde: valueSerde}}
}

// Inner returns the bytes-level store below.
func (m *meteredSessionStore[K, V]) Inner() SessionBytesStore { return m.inner }

// Name returns the store name.
func (m *meteredSessionStore[K, V]) Name() string { return m.inner.Name() }

// Init resolves serdes and initialises the layers below with root.
func (m *meteredSessionStore[K, V]) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if err := m.s.init(ctx); err != nil {
		return err
	}
	return m.inner.Init(ctx, root)
}

// Flush flushes the layers below.
func (m *meteredSessionStore[K, V]) Flush() error { return m.inner.Flush() }

// Close closes the layers below.
func (m *meteredSessionStore[K, V]) Close() error { return m.inner.Close() }

// Persistent reports whether the engine is persistent.
func (m *meteredSessionStore[K, V]) Persistent() bool { return m.inner.Persistent() }

// IsOpen reports whether the store is open.
func (m *meteredSessionStore[K, V]) IsOpen() bool { return m.inner.IsOpen() }

func (m *meteredSessionStore[K, V]) sessionKey(op string, w serde.Windowed[K]) (serde.Windowed[[]byte], error) {
	kb, err := m.s.key(op, w.Key)
	return serde.Windowed[[]byte]{Key: kb, Window: w.Window}, err
}

// Put stores the aggregate of a session; nil removes it.
func (m *meteredSessionStore[K, V]) Put(session serde.Windowed[K], value V) error {
	sk, err := m.sessionKey("put", session)
	if err != nil {
		return err
	}
	vb, err := m.s.value("put", value)
	if err != nil {
		return err
	}
	return m.inner.Put(sk, vb)
}

// Remove deletes a session.
func (m *meteredSessionStore[K, V]) Remove(session serde.Windowed[K]) error {
	sk, err := m.sessionKey("remove", session)
	if err != nil {
		return err
	}
	return m.inner.Remove(sk)
}

// FetchSession returns the aggregate of the session of key with exactly this start and end.
func (m *meteredSessionStore[K, V]) FetchSession(key K, start, end int64) (V, bool, error) {
	var zero V
	kb, err := m.s.key("fetchSession", key)
	if err != nil {
		return zero, false, err
	}
	vb, _, err := m.inner.FetchSession(kb, start, end)
	if err != nil {
		return zero, false, err
	}
	return m.s.decodeValue("fetchSession", vb)
}

func (m *meteredSessionStore[K, V]) keyIter(op string, key K, f func([]byte) KeyValueIterator[serde.Windowed[[]byte], []byte]) KeyValueIterator[serde.Windowed[K], V] {
	kb, err := m.s.key(op, key)
	if err != nil {
		return ErrorIterator[serde.Windowed[K], V](err)
	}
	return m.s.windowed(f(kb))
}

func (m *meteredSessionStore[K, V]) rangeIter(op string, from, to K, f func(a, b []byte) KeyValueIterator[serde.Windowed[[]byte], []byte]) KeyValueIterator[serde.Windowed[K], V] {
	var fb, tb []byte
	var err error
	if !isNil(from) {
		if fb, err = m.s.key(op, from); err != nil {
			return ErrorIterator[serde.Windowed[K], V](err)
		}
	}
	if !isNil(to) {
		if tb, err = m.s.key(op, to); err != nil {
			return ErrorIterator[serde.Windowed[K], V](err)
		}
	}
	return m.s.windowed(f(fb, tb))
}

// FindSessions iterates the sessions of key with end >= earliestEnd and start <= latestStart.
func (m *meteredSessionStore[K, V]) FindSessions(key K, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[K], V] {
	return m.keyIter("findSessions", key, func(k []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
		return m.inner.FindSessions(k, earliestEnd, latestStart)
	})
}

// BackwardFindSessions is FindSessions in reverse order.
func (m *meteredSessionStore[K, V]) BackwardFindSessions(key K, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[K], V] {
	return m.keyIter("backwardFindSessions", key, func(k []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
		return m.inner.BackwardFindSessions(k, earliestEnd, latestStart)
	})
}

// FindSessionsRange is FindSessions for keys in [keyFrom, keyTo].
func (m *meteredSessionStore[K, V]) FindSessionsRange(keyFrom, keyTo K, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[K], V] {
	return m.rangeIter("findSessions", keyFrom, keyTo, func(a, b []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
		return m.inner.FindSessionsRange(a, b, earliestEnd, latestStart)
	})
}

// BackwardFindSessionsRange is FindSessionsRange in reverse order.
func (m *meteredSessionStore[K, V]) BackwardFindSessionsRange(keyFrom, keyTo K, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[K], V] {
	return m.rangeIter("backwardFindSessions", keyFrom, keyTo, func(a, b []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
		return m.inner.BackwardFindSessionsRange(a, b, earliestEnd, latestStart)
	})
}

// Fetch iterates every session of key.
func (m *meteredSessionStore[K, V]) Fetch(key K) KeyValueIterator[serde.Windowed[K], V] {
	return m.keyIter("fetch", key, m.inner.Fetch)
}

// BackwardFetch iterates every session of key in reverse order.
func (m *meteredSessionStore[K, V]) BackwardFetch(key K) KeyValueIterator[serde.Windowed[K], V] {
	return m.keyIter("backwardFetch", key, m.inner.BackwardFetch)
}

// FetchRange iterates every session of the keys in [keyFrom, keyTo].
func (m *meteredSessionStore[K, V]) FetchRange(keyFrom, keyTo K) KeyValueIterator[serde.Windowed[K], V] {
	return m.rangeIter("fetch", keyFrom, keyTo, m.inner.FetchRange)
}

// BackwardFetchRange is FetchRange in reverse order.
func (m *meteredSessionStore[K, V]) BackwardFetchRange(keyFrom, keyTo K) KeyValueIterator[serde.Windowed[K], V] {
	return m.rangeIter("backwardFetch", keyFrom, keyTo, m.inner.BackwardFetchRange)
}
