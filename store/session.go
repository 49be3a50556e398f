package store

import (
	"bytes"
	"encoding/binary"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Session store key layout (Java's SessionKeySchema.toBinary), big-endian:
//
//	key bytes ‖ int64 sessionEnd (ms) ‖ int64 sessionStart (ms)
//
// Segments are chosen by the session end. The changelog key of a session store is the same bytes.
const sessionSuffixLen = 16

// splitSessionStoreKey splits a session store key into key bytes (aliasing b), session start
// and end (ms). Errors: [errShortStoreKey]. Java: SessionKeySchema.extractKeyBytes,
// extractStartTimestamp, extractEndTimestamp.
func splitSessionStoreKey(b []byte) (key []byte, start, end int64, err error) {
	if len(b) < sessionSuffixLen {
		return nil, 0, 0, errShortStoreKey
	}
	n := len(b) - sessionSuffixLen
	return b[:n:n], int64(binary.BigEndian.Uint64(b[n+8:])), int64(binary.BigEndian.Uint64(b[n:])), nil
}

func sessionSegTime(b []byte) int64 {
	if len(b) < sessionSuffixLen {
		return 0
	}
	return int64(binary.BigEndian.Uint64(b[len(b)-sessionSuffixLen:]))
}

// ReadOnlySessionStore is the read side of a session store. Sessions are keyed by
// serde.Windowed[K] whose Window holds the session's start and end (both inclusive, ms).
// Iterators must be closed. Java counterpart: org.apache.kafka.streams.state.ReadOnlySessionStore.
type ReadOnlySessionStore[K, V any] interface {
	// FetchSession returns the value of the session of key with exactly this start and end.
	// Java: fetchSession(key, sessionStartTime, sessionEndTime).
	FetchSession(key K, sessionStart, sessionEnd int64) (V, bool, error)
	// FindSessions iterates the sessions of key with end >= earliestSessionEnd and
	// start <= latestSessionStart, ordered by segment (of the end time), then end, then start.
	// Java: findSessions(key, earliestSessionEndTime, latestSessionStartTime).
	FindSessions(key K, earliestSessionEnd, latestSessionStart int64) KeyValueIterator[serde.Windowed[K], V]
	// BackwardFindSessions is FindSessions in reverse order. Java: backwardFindSessions.
	BackwardFindSessions(key K, earliestSessionEnd, latestSessionStart int64) KeyValueIterator[serde.Windowed[K], V]
	// FindSessionsRange is FindSessions for the keys in [keyFrom, keyTo] (serialized order).
	// Java: findSessions(keyFrom, keyTo, earliestSessionEndTime, latestSessionStartTime).
	FindSessionsRange(keyFrom, keyTo K, earliestSessionEnd, latestSessionStart int64) KeyValueIterator[serde.Windowed[K], V]
	// BackwardFindSessionsRange is FindSessionsRange in reverse order.
	BackwardFindSessionsRange(keyFrom, keyTo K, earliestSessionEnd, latestSessionStart int64) KeyValueIterator[serde.Windowed[K], V]
	// Fetch iterates every session of key. Java: fetch(key).
	Fetch(key K) KeyValueIterator[serde.Windowed[K], V]
	// BackwardFetch iterates every session of key in reverse order. Java: backwardFetch(key).
	BackwardFetch(key K) KeyValueIterator[serde.Windowed[K], V]
	// FetchRange iterates every session of the keys in [keyFrom, keyTo]. Java: fetch(keyFrom, keyTo).
	FetchRange(keyFrom, keyTo K) KeyValueIterator[serde.Windowed[K], V]
	// BackwardFetchRange is FetchRange in reverse order. Java: backwardFetch(keyFrom, keyTo).
	BackwardFetchRange(keyFrom, keyTo K) KeyValueIterator[serde.Windowed[K], V]
}

// SessionStore is a read-write session store. Java counterpart: org.apache.kafka.streams.state.SessionStore.
type SessionStore[K, V any] interface {
	StateStore
	ReadOnlySessionStore[K, V]
	// Put stores the aggregate of a session; a nil value removes it. Sessions whose end is
	// older than the retention period behind the observed stream time are dropped.
	// Java: put(Windowed<K> sessionKey, AGG aggregate).
	Put(session serde.Windowed[K], value V) error
	// Remove deletes a session. Java: remove(Windowed<K> sessionKey).
	Remove(session serde.Windowed[K]) error
}

// SessionBytesStore is the bytes-level session store engines implement; nil key bounds of the
// range methods mean unbounded. Java counterpart: SessionStore<Bytes, byte[]>.
type SessionBytesStore = SessionStore[[]byte, []byte]

type sessionBytesStore struct {
	seg *segmentedBytesStore
}

func newSessionBytesStore(name string, retention, segmentInterval int64, eng segmentEngine) sessionBytesStore {
	return sessionBytesStore{seg: newSegmentedBytesStore(name, retention, segmentInterval, sessionSegTime, eng)}
}

// Name returns the store name.
func (s *sessionBytesStore) Name() string { return s.seg.name }

// Init opens the segments and registers root for restore.
func (s *sessionBytesStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	return s.seg.init(ctx, root)
}

// Flush flushes the engine.
func (s *sessionBytesStore) Flush() error { return storeErr(s.Name(), "flush", s.seg.eng.flush()) }

// Close closes the engine.
func (s *sessionBytesStore) Close() error { return storeErr(s.Name(), "close", s.seg.eng.close()) }

// Persistent reports whether the engine is Pebble.
func (s *sessionBytesStore) Persistent() bool { return s.seg.eng.persistent() }

// IsOpen reports whether the store is open.
func (s *sessionBytesStore) IsOpen() bool { return s.seg.eng.isOpen() }

// Segments returns the ids of the store's live segments (ascending).
func (s *sessionBytesStore) Segments() []int64 { return s.seg.eng.ids() }

// Put implements SessionStore.Put.
func (s *sessionBytesStore) Put(session serde.Windowed[[]byte], value []byte) error {
	return s.seg.put(storeapi.SessionStoreKey(session.Key, session.Window.Start, session.Window.End), value)
}

// Remove implements SessionStore.Remove.
func (s *sessionBytesStore) Remove(session serde.Windowed[[]byte]) error {
	return s.Put(session, nil)
}

// FetchSession implements SessionStore.FetchSession.
func (s *sessionBytesStore) FetchSession(key []byte, start, end int64) ([]byte, bool, error) {
	return s.seg.get(storeapi.SessionStoreKey(key, start, end))
}

// FindSessions implements SessionStore.FindSessions.
func (s *sessionBytesStore) FindSessions(key []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return s.find(key, key, earliestEnd, latestStart, true)
}

// BackwardFindSessions implements SessionStore.BackwardFindSessions.
func (s *sessionBytesStore) BackwardFindSessions(key []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return s.find(key, key, earliestEnd, latestStart, false)
}

// FindSessionsRange implements SessionStore.FindSessionsRange.
func (s *sessionBytesStore) FindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return s.find(keyFrom, keyTo, earliestEnd, latestStart, true)
}

// BackwardFindSessionsRange implements SessionStore.BackwardFindSessionsRange.
func (s *sessionBytesStore) BackwardFindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return s.find(keyFrom, keyTo, earliestEnd, latestStart, false)
}

// Fetch implements SessionStore.Fetch.
func (s *sessionBytesStore) Fetch(key []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return s.find(key, key, 0, math.MaxInt64, true)
}

// BackwardFetch implements SessionStore.BackwardFetch.
func (s *sessionBytesStore) BackwardFetch(key []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return s.find(key, key, 0, math.MaxInt64, false)
}

// FetchRange implements SessionStore.FetchRange.
func (s *sessionBytesStore) FetchRange(keyFrom, keyTo []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return s.find(keyFrom, keyTo, 0, math.MaxInt64, true)
}

// BackwardFetchRange implements SessionStore.BackwardFetchRange.
func (s *sessionBytesStore) BackwardFetchRange(keyFrom, keyTo []byte) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	return s.find(keyFrom, keyTo, 0, math.MaxInt64, false)
}

func (s *sessionBytesStore) find(keyFrom, keyTo []byte, earliestEnd, latestStart int64, forward bool) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if keyFrom != nil && keyTo != nil && bytes.Compare(keyFrom, keyTo) > 0 {
		return emptyIterator[serde.Windowed[[]byte], []byte]()
	}
	earliestEnd = s.seg.actualFrom(earliestEnd)
	var upper []byte
	if keyTo != nil {
		upper = prefixEnd(keyTo)
	}
	// Sessions ending at or after earliestEnd may sit in any later segment (Java:
	// SessionKeySchema.segmentsToSearch searches up to Long.MAX_VALUE).
	it := s.seg.fetch(earliestEnd, math.MaxInt64, keyFrom, upper, forward, func(sk []byte) bool {
		k, start, end, err := splitSessionStoreKey(sk)
		return err == nil && end >= earliestEnd && start <= latestStart &&
			(keyFrom == nil || bytes.Compare(k, keyFrom) >= 0) && (keyTo == nil || bytes.Compare(k, keyTo) <= 0)
	})
	return &mapKeyIterator[serde.Windowed[[]byte]]{it: it, conv: func(sk []byte) (serde.Windowed[[]byte], error) {
		k, start, end, err := splitSessionStoreKey(sk)
		return serde.Windowed[[]byte]{Key: k, Window: serde.Window{Start: start, End: end}}, err
	}}
}

// inMemorySessionStore is the in-memory session engine, segmented as the Pebble engine so both
// return the same order (Java's RocksDB order; Java's own in-memory session store orders by end
// time first). Java counterpart: org.apache.kafka.streams.state.internals.inMemorySessionStore.
type inMemorySessionStore struct{ sessionBytesStore }

// pebbleSessionStore is the persistent session engine: one Pebble database per store per task,
// segmented by session end time, expired segments dropped with one range deletion. It
// implements [storeapi.TransactionalStore] and [storeapi.WipeableStore]. Java counterpart: RocksDBSessionStore.
type pebbleSessionStore struct {
	sessionBytesStore
	segmentedEngineOps
}

var (
	_ SessionBytesStore           = (*inMemorySessionStore)(nil)
	_ SessionBytesStore           = (*pebbleSessionStore)(nil)
	_ storeapi.TransactionalStore = (*pebbleSessionStore)(nil)
)

// newInMemorySessionStore returns a closed in-memory session engine with retention in ms.
func newInMemorySessionStore(name string, retention int64) *inMemorySessionStore {
	return &inMemorySessionStore{newSessionBytesStore(name, retention, storeapi.DefaultSegmentInterval(retention), newMemSegments())}
}

// newPebbleSessionStore returns a closed Pebble session engine; segmentInterval <= 0 means
// [storeapi.DefaultSegmentInterval](retention).
func newPebbleSessionStore(name string, retention, segmentInterval int64) *pebbleSessionStore {
	if segmentInterval <= 0 {
		segmentInterval = storeapi.DefaultSegmentInterval(retention)
	}
	eng := newPebbleSegments()
	return &pebbleSessionStore{
		sessionBytesStore:  newSessionBytesStore(name, retention, segmentInterval, eng),
		segmentedEngineOps: segmentedEngineOps{eng: eng, name: name},
	}
}
