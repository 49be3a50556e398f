package store

import "github.com/kstreams-go/kstreams/serde"

// sessionsEndingIn iterates every session with earliestEnd <= end <= latestEnd still held by a
// live segment, without the read-side retention filter (Java's time-ordered session store's
// fetchSessions, used by emit-on-close session aggregations).
func (s *sessionBytesStore) sessionsEndingIn(earliestEnd, latestEnd int64) KeyValueIterator[serde.Windowed[[]byte], []byte] {
	if latestEnd < earliestEnd {
		return emptyIterator[serde.Windowed[[]byte], []byte]()
	}
	it := s.seg.fetch(earliestEnd, latestEnd, nil, nil, true, func(sk []byte) bool {
		_, _, end, err := splitSessionStoreKey(sk)
		return err == nil && end >= earliestEnd && end <= latestEnd
	})
	return &mapKeyIterator[serde.Windowed[[]byte]]{it: it, conv: func(sk []byte) (serde.Windowed[[]byte], error) {
		k, start, end, err := splitSessionStoreKey(sk)
		return serde.Windowed[[]byte]{Key: k, Window: serde.Window{Start: start, End: end}}, err
	}}
}

// FindSessionsEndingIn iterates every session (of any key) with earliestEnd <= end <=
// latestEnd (ms, inclusive) still held by the store, without the read-side retention filter
// of FindSessionsRange; it falls back to FindSessionsRange over all keys for engines without
// it. Java: the time-ordered session store's findSessions(earliestSessionEndTime,
// latestSessionEndTime) that emit-on-close session aggregations use.
func (m *meteredSessionStore[K, V]) FindSessionsEndingIn(earliestEnd, latestEnd int64) KeyValueIterator[serde.Windowed[K], V] {
	var inner SessionBytesStore = m.inner
	for {
		switch s := inner.(type) {
		case interface {
			sessionsEndingIn(int64, int64) KeyValueIterator[serde.Windowed[[]byte], []byte]
		}:
			return m.s.windowed(s.sessionsEndingIn(earliestEnd, latestEnd))
		case interface{ Inner() SessionBytesStore }:
			inner = s.Inner()
		default:
			var zero K
			return m.FindSessionsRange(zero, zero, earliestEnd, latestEnd)
		}
	}
}
