package store

import (
	"bytes"
	"encoding/binary"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"

	"github.com/kstreams-go/kstreams/internal/cache"
)

// The caching layers' scans (storeapi.WindowScan): the cached entries of the scan's range, read a page
// at a time from one cache range over all its segments (cache keys are segment id ‖ store key,
// so that range is in the scan's order) and filtered as the plain fetches filter them, merged
// with the store below's own scan. A resumed scan starts both sides strictly after the
// resume key.

// resumedRange returns the named cache's entries with from <= cache key <= to (nil bounds
// unbounded), descending when reverse, strictly after the cache key after (nil: all of them),
// read a page at a time.
func (s *cacheSlot) resumedRange(from, to, after []byte, reverse bool) cacheCursor {
	if after != nil {
		if reverse {
			if to == nil || bytes.Compare(after, to) < 0 {
				to = after
			}
		} else if from == nil || bytes.Compare(after, from) > 0 {
			from = after
		}
	}
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return &cache.Iterator{}
	}
	cur := s.cache.RangePaged(s.namespace, from, to, true, reverse)
	if after == nil {
		return cur
	}
	return &skipCursor{in: cur, skip: after}
}

// skipCursor skips its first entry when that has the key skip (the key a scan resumes after).
type skipCursor struct {
	in   cacheCursor
	skip []byte
}

func (s *skipCursor) check() {
	if s.skip != nil {
		if s.in.HasNext() && bytes.Equal(s.in.PeekNextKey(), s.skip) {
			s.in.Next()
		}
		s.skip = nil
	}
}

func (s *skipCursor) HasNext() bool          { s.check(); return s.in.HasNext() }
func (s *skipCursor) PeekNextKey() []byte    { s.check(); return s.in.PeekNextKey() }
func (s *skipCursor) PeekNext() *cache.Entry { s.check(); return s.in.PeekNext() }
func (s *skipCursor) Next() ([]byte, *cache.Entry) {
	s.check()
	return s.in.Next()
}

// rawMerge merges a cache cursor with a store iterator over raw store keys in the order
// (segment id, store key), segment ids by segID of the store key.
func rawMerge(cur cacheCursor, storeIt KeyValueIterator[[]byte, []byte], forward bool, segID func(storeKey []byte) int64) KeyValueIterator[[]byte, []byte] {
	return &mergedWindowIterator[[]byte, []byte]{
		cache: cur, store: &peekIter[[]byte]{it: storeIt}, forward: forward,
		compare: func(ck, sk []byte) int {
			if s := cmpInt64(int64(binary.BigEndian.Uint64(ck)), segID(sk)); s != 0 {
				return s
			}
			return bytes.Compare(ck[8:], sk)
		},
		fromKey: func(ck []byte) ([]byte, error) { return ck[8:], nil },
	}
}

// scanWindows implements windowBytesScanner: the store below's scan merged with the cached
// windows of the scan (the cache ranges of fetchKey and fetchRange, filtered alike).
func (c *cachingWindowStore) scanWindows(q segScan) (KeyValueIterator[[]byte, []byte], int64, bool) {
	storeIt, _, ok := scanWindowsOf(c.inner, q)
	if !ok || c.cache == nil {
		return storeIt, c.windowSize, ok
	}
	if !c.IsOpen() {
		_ = storeIt.Close()
		return ErrorIterator[[]byte, []byte](storeErr(c.Name(), "fetch", ErrStoreClosed)), c.windowSize, true
	}
	var from, to []byte
	switch {
	case q.single:
		from = c.cacheKey(storeapi.WindowStoreKey(q.keyFrom, max(0, q.timeFrom), 0))
		to = c.cacheKey(storeapi.WindowStoreKey(q.keyFrom, q.timeTo, math.MaxInt32))
	default:
		if q.keyFrom != nil {
			from = c.cacheKey(windowLowerRange(q.keyFrom))
		}
		if q.keyTo != nil {
			to = c.cacheKey(windowUpperRange(q.keyTo, q.timeTo))
		}
	}
	var after []byte
	if q.after != nil {
		after = c.cacheKey(q.after)
	}
	cur := &filteredCursor{in: c.resumedRange(from, to, after, q.reverse), keyFrom: q.keyFrom, keyTo: q.keyTo, from: q.timeFrom, to: q.timeTo}
	return rawMerge(cur, storeIt, !q.reverse, func(sk []byte) int64 { return c.segmentID(windowSegTime(sk)) }), c.windowSize, true
}

// scanSessions implements sessionBytesScanner: the store below's scan merged with the cached
// sessions of the scan (the cache ranges of findKey and findRange, filtered alike).
func (c *cachingSessionStore) scanSessions(q segScan) (KeyValueIterator[[]byte, []byte], bool) {
	storeIt, ok := scanSessionsOf(c.inner, q)
	if !ok || c.cache == nil {
		return storeIt, ok
	}
	if !c.IsOpen() {
		_ = storeIt.Close()
		return ErrorIterator[[]byte, []byte](storeErr(c.Name(), "findSessions", ErrStoreClosed)), true
	}
	keyFrom, keyTo := q.keyFrom, q.keyTo
	var from, to []byte
	switch {
	case q.single:
		keyTo = keyFrom
		from = c.cacheKey(storeapi.SessionStoreKey(keyFrom, 0, max(0, q.timeFrom)))
		to = c.cacheKey(storeapi.SessionStoreKey(keyFrom, q.timeTo, math.MaxInt64))
	default:
		if keyFrom != nil {
			from = c.cacheKey(sessionLowerRange(keyFrom))
		}
		if keyTo != nil {
			to = c.cacheKey(sessionUpperRange(keyTo, q.timeTo))
		}
	}
	var after []byte
	if q.after != nil {
		after = c.cacheKey(q.after)
	}
	cur := &sessionFilter{in: c.resumedRange(from, to, after, q.reverse), keyFrom: keyFrom, keyTo: keyTo, earliestEnd: q.timeFrom, latestStrt: q.timeTo}
	return rawMerge(cur, storeIt, !q.reverse, func(sk []byte) int64 { return c.segmentID(sessionSegTime(sk)) }), true
}
