package store

import (
	"bytes"
	"math"
	"slices"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/serde"
)

// segScan is a storeapi.WindowScan at the bytes level: keyFrom and keyTo are serialized (nil:
// unbounded), single says keyFrom is the one key of a storeapi.WindowScanKey scan, and after is the raw
// store key to resume after.
type segScan struct {
	keyFrom, keyTo   []byte
	single           bool
	timeFrom, timeTo int64
	reverse          bool
	after            []byte
}

// windowBytesScanner is a window bytes store (or layer) that runs segScans; the iterator's
// keys are window store keys, and windowSize (ms) gives the windows' ends.
type windowBytesScanner interface {
	scanWindows(q segScan) (it KeyValueIterator[[]byte, []byte], windowSize int64, ok bool)
}

// sessionBytesScanner is a session bytes store (or layer) that runs segScans; the iterator's
// keys are session store keys.
type sessionBytesScanner interface {
	scanSessions(q segScan) (KeyValueIterator[[]byte, []byte], bool)
}

func scanWindowsOf(s WindowBytesStore, q segScan) (KeyValueIterator[[]byte, []byte], int64, bool) {
	if sc, ok := s.(windowBytesScanner); ok {
		return sc.scanWindows(q)
	}
	return nil, 0, false
}

func scanSessionsOf(s SessionBytesStore, q segScan) (KeyValueIterator[[]byte, []byte], bool) {
	if sc, ok := s.(sessionBytesScanner); ok {
		return sc.scanSessions(q)
	}
	return nil, false
}

// --- engines ---

// scanWindows implements windowBytesScanner over the segments: the bounds of fetchKey
// (single) or fetchRange, resumed after q.after.
func (w *windowBytesStore) scanWindows(q segScan) (KeyValueIterator[[]byte, []byte], int64, bool) {
	from := w.seg.actualFrom(q.timeFrom)
	if q.timeTo < from || !q.single && q.keyFrom != nil && q.keyTo != nil && bytes.Compare(q.keyFrom, q.keyTo) > 0 {
		return emptyIterator[[]byte, []byte](), w.windowSize, true
	}
	timeTo := q.timeTo
	if q.single {
		key := q.keyFrom
		lower, upper := storeapi.WindowStoreKey(key, from, 0), storeapi.WindowStoreKey(key, timeTo, math.MaxInt32)
		return w.seg.scan(from, timeTo, lower, upper, !q.reverse, q.after, func(sk []byte) bool {
			k, ts, _, err := splitWindowStoreKey(sk)
			return err == nil && bytes.Equal(k, key) && ts >= from && ts <= timeTo
		}), w.windowSize, true
	}
	var upper []byte
	if q.keyTo != nil {
		upper = prefixEnd(q.keyTo)
	}
	return w.seg.scan(from, timeTo, q.keyFrom, upper, !q.reverse, q.after, func(sk []byte) bool {
		k, ts, _, err := splitWindowStoreKey(sk)
		return err == nil && ts >= from && ts <= timeTo &&
			(q.keyFrom == nil || bytes.Compare(k, q.keyFrom) >= 0) && (q.keyTo == nil || bytes.Compare(k, q.keyTo) <= 0)
	}), w.windowSize, true
}

// scanSessions implements sessionBytesScanner with find's bounds, resumed after q.after.
func (s *sessionBytesStore) scanSessions(q segScan) (KeyValueIterator[[]byte, []byte], bool) {
	keyFrom, keyTo := q.keyFrom, q.keyTo
	if q.single {
		keyTo = keyFrom
	}
	if keyFrom != nil && keyTo != nil && bytes.Compare(keyFrom, keyTo) > 0 {
		return emptyIterator[[]byte, []byte](), true
	}
	earliestEnd, latestStart := s.seg.actualFrom(q.timeFrom), q.timeTo
	var upper []byte
	if keyTo != nil {
		upper = prefixEnd(keyTo)
	}
	return s.seg.scan(earliestEnd, math.MaxInt64, keyFrom, upper, !q.reverse, q.after, func(sk []byte) bool {
		k, start, end, err := splitSessionStoreKey(sk)
		return err == nil && end >= earliestEnd && start <= latestStart &&
			(keyFrom == nil || bytes.Compare(k, keyFrom) >= 0) && (keyTo == nil || bytes.Compare(k, keyTo) <= 0)
	}), true
}

// scan is fetch resumed strictly after the store key after (nil: from the start), its
// segments read with paged iterators: the segments before after's (in the direction) are left
// out, after's own is read from after on (after itself skipped), the later ones whole.
func (s *segmentedBytesStore) scan(segFrom, segTo int64, lower, upper []byte, forward bool, after []byte, keep func(storeKey []byte) bool) KeyValueIterator[[]byte, []byte] {
	it := s.fetch(segFrom, segTo, lower, upper, forward, keep)
	si, ok := it.(*segmentsIterator)
	if !ok {
		return it // an error iterator
	}
	si.paged = true
	if after != nil {
		si.after, si.afterSeg = bytes.Clone(after), storeapi.SegmentID(s.segTime(after), s.segmentInterval)
		si.ids = slices.DeleteFunc(si.ids, func(id int64) bool {
			return forward && id < si.afterSeg || !forward && id > si.afterSeg
		})
	}
	return si
}

// segmentBounds are the bounds of segment id in a (resumed) segments iteration.
func (it *segmentsIterator) segmentBounds(id int64) (lower, upper []byte) {
	lower, upper = it.lower, it.upper
	if it.after == nil || id != it.afterSeg {
		return lower, upper
	}
	if it.forward {
		if lower == nil || bytes.Compare(it.after, lower) > 0 {
			lower = it.after
		}
	} else if upper == nil || bytes.Compare(it.after, upper) < 0 {
		upper = it.after
	}
	return lower, upper
}

// pagedSegment is a segment whose plain iterator copies its range's keys when it opens (the
// in-memory one); pagedIter takes them a page at a time instead.
type pagedSegment interface {
	pagedIter(from, to []byte, forward bool) KeyValueIterator[[]byte, []byte]
}

func (g memSegment) pagedIter(from, to []byte, forward bool) KeyValueIterator[[]byte, []byte] {
	return g.s.pagedRange(from, to, !forward)
}

// --- change-logging layers: reads pass through ---

func (c *changeLoggingWindowBytesStore) scanWindows(q segScan) (KeyValueIterator[[]byte, []byte], int64, bool) {
	return scanWindowsOf(c.WindowBytesStore, q)
}

func (c *changeLoggingTimestampedWindowBytesStore) scanWindows(q segScan) (KeyValueIterator[[]byte, []byte], int64, bool) {
	return scanWindowsOf(c.WindowBytesStore, q)
}

func (c *changeLoggingSessionBytesStore) scanSessions(q segScan) (KeyValueIterator[[]byte, []byte], bool) {
	return scanSessionsOf(c.SessionBytesStore, q)
}

// --- typed layers ---

// segScanOf serializes s's keys for the bytes level; op names the operation in errors.
func segScanOf[K, V any](ss *storeSerdes[K, V], op string, s storeapi.WindowScan[K]) (segScan, error) {
	q := segScan{timeFrom: s.TimeFrom, timeTo: s.TimeTo, reverse: s.Reverse, after: s.After}
	var err error
	switch s.Kind {
	case storeapi.WindowScanKey:
		q.single = true
		q.keyFrom, err = ss.key(op, s.Key)
		q.keyTo = q.keyFrom
	case storeapi.WindowScanRange:
		if !isNil(s.From) {
			if q.keyFrom, err = ss.key(op, s.From); err != nil {
				return q, err
			}
		}
		if !isNil(s.To) {
			q.keyTo, err = ss.key(op, s.To)
		}
	}
	return q, err
}

// ScanWindows implements [storeapi.WindowScanner] over the bytes store below, when every layer below
// can (the built-in layers and engines can).
func (m *meteredWindowStore[K, V]) ScanWindows(s storeapi.WindowScan[K]) (storeapi.RawKeyIterator[serde.Windowed[K], V], bool) {
	q, err := segScanOf(&m.s, "fetch", s)
	if err != nil {
		return &rawWindowedIterator[K, V]{s: &m.s, err: err}, true
	}
	it, size, ok := scanWindowsOf(m.inner, q)
	if !ok {
		return nil, false
	}
	return &rawWindowedIterator[K, V]{s: &m.s, it: it, window: func(sk []byte) ([]byte, serde.Window, error) {
		k, ts, _, err := splitWindowStoreKey(sk)
		return k, serde.Window{Start: ts, End: windowEnd(ts, size)}, err
	}}, true
}

// ScanSessions implements [storeapi.SessionScanner] over the bytes store below, when every layer below
// can.
func (m *meteredSessionStore[K, V]) ScanSessions(s storeapi.WindowScan[K]) (storeapi.RawKeyIterator[serde.Windowed[K], V], bool) {
	q, err := segScanOf(&m.s, "findSessions", s)
	if err != nil {
		return &rawWindowedIterator[K, V]{s: &m.s, err: err}, true
	}
	it, ok := scanSessionsOf(m.inner, q)
	if !ok {
		return nil, false
	}
	return &rawWindowedIterator[K, V]{s: &m.s, it: it, window: func(sk []byte) ([]byte, serde.Window, error) {
		k, start, end, err := splitSessionStoreKey(sk)
		return k, serde.Window{Start: start, End: end}, err
	}}, true
}

// rawWindowedIterator decodes a bytes iterator over raw window or session store keys into
// windowed keys and values, keeping the raw key for RawKey.
type rawWindowedIterator[K, V any] struct {
	s      *storeSerdes[K, V]
	it     KeyValueIterator[[]byte, []byte]
	window func(storeKey []byte) ([]byte, serde.Window, error)
	key    serde.Windowed[K]
	val    V
	raw    []byte
	err    error
}

func (r *rawWindowedIterator[K, V]) Next() bool {
	var zk serde.Windowed[K]
	var zv V
	r.key, r.val, r.raw = zk, zv, nil
	if r.err != nil || r.it == nil || !r.it.Next() {
		return false
	}
	sk := r.it.Key()
	kb, w, err := r.window(sk)
	if err != nil {
		r.err = storeErr(r.s.name, "iterate", err)
		return false
	}
	k, err := r.s.decodeKey("iterate", kb)
	if err != nil {
		r.err = err
		return false
	}
	v, _, err := r.s.decodeValue("iterate", r.it.Value())
	if err != nil {
		r.err = err
		return false
	}
	r.key, r.val, r.raw = serde.Windowed[K]{Key: storeapi.Detach(k), Window: w}, storeapi.Detach(v), sk
	return true
}

func (r *rawWindowedIterator[K, V]) Key() serde.Windowed[K] { return r.key }
func (r *rawWindowedIterator[K, V]) Value() V               { return r.val }

// RawKey implements RawKeyIterator: the store key of the current entry (a view valid until the
// next Next or Close).
func (r *rawWindowedIterator[K, V]) RawKey() []byte { return r.raw }

func (r *rawWindowedIterator[K, V]) Err() error {
	if r.err != nil || r.it == nil {
		return r.err
	}
	return r.it.Err()
}

func (r *rawWindowedIterator[K, V]) Close() error {
	if r.it == nil {
		return nil
	}
	return r.it.Close()
}
