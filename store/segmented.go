package store

import (
	"bytes"
	"encoding/binary"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"log/slog"
	"math"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kstreams-go/kstreams/processor"
)

// segmentName returns Java's name of a segment: "<store>.<segmentId * segmentInterval>".
// Java: AbstractSegments.segmentName.
func segmentName(store string, segmentID, segmentInterval int64) string {
	return store + "." + itoa(segmentID*segmentInterval)
}

func itoa(v int64) string {
	var b [24]byte
	i := len(b)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// segmentKV is one segment of a segmented engine: an ordered bytes map.
type segmentKV interface {
	get(key []byte) ([]byte, bool, error)
	put(key, value []byte) error
	iter(from, to []byte, forward bool) KeyValueIterator[[]byte, []byte]
}

// segmentEngine holds the segments of a segmented store.
type segmentEngine interface {
	open(ctx processor.StateStoreContext, name string) error
	// segment returns segment id, creating it when create is set; nil when absent.
	segment(id int64, create bool) segmentKV
	// ids returns the ids of the existing segments, ascending.
	ids() []int64
	// dropBelow drops every segment whose id is < id.
	dropBelow(id int64) error
	// restore applies fn's writes (and the offset of the batch's last record) atomically.
	restore(last int64, fn func(put func(seg int64, key, value []byte) error) error) error
	flush() error
	close() error
	persistent() bool
	isOpen() bool
}

// segmentedBytesStore is the core of window and session stores: records are placed in the
// segment of their segment timestamp (window start; session end); segments older than the
// retention period behind the observed stream time are dropped as a whole. Java counterpart:
// AbstractRocksDBSegmentedBytesStore with KeyValueSegments.
type segmentedBytesStore struct {
	name            string
	retention       int64
	segmentInterval int64
	segTime         func(storeKey []byte) int64
	eng             segmentEngine
	log             *slog.Logger

	mu       sync.Mutex
	observed int64
	expired  int64
}

func newSegmentedBytesStore(name string, retention, segmentInterval int64, segTime func([]byte) int64, eng segmentEngine) *segmentedBytesStore {
	return &segmentedBytesStore{name: name, retention: retention, segmentInterval: segmentInterval,
		segTime: segTime, eng: eng, observed: -1, log: slog.Default()}
}

func (s *segmentedBytesStore) init(ctx processor.StateStoreContext, root processor.StateStore) error {
	if err := s.eng.open(ctx, s.name); err != nil {
		return storeErr(s.name, "init", err)
	}
	if ctx != nil {
		if err := ctx.Register(root, s.restoreBatch); err != nil {
			_ = s.eng.close()
			return storeErr(s.name, "init", err)
		}
	}
	return nil
}

// minLiveSegment returns the smallest segment id still live at the observed stream time.
func (s *segmentedBytesStore) minLiveSegment() int64 {
	return storeapi.SegmentID(s.observed-s.retention, s.segmentInterval)
}

// liveSegment returns the segment for ts when it is live, creating it, after dropping the
// expired ones. Call with s.mu held.
func (s *segmentedBytesStore) liveSegment(ts int64) (segmentKV, error) {
	id := storeapi.SegmentID(ts, s.segmentInterval)
	minLive := s.minLiveSegment()
	if ids := s.eng.ids(); len(ids) > 0 && ids[0] < minLive {
		if err := s.eng.dropBelow(minLive); err != nil {
			return nil, err
		}
	}
	if id < minLive {
		return nil, nil
	}
	return s.eng.segment(id, true), nil
}

// put writes storeKey (nil value deletes) into its segment; records of expired segments are
// skipped (counted, Java's expired-window-record-drop metric) with a debug log.
func (s *segmentedBytesStore) put(storeKey, value []byte) error {
	if !s.eng.isOpen() {
		return storeErr(s.name, "put", ErrStoreClosed)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.segTime(storeKey)
	s.observed = max(s.observed, ts)
	seg, err := s.liveSegment(ts)
	if err != nil {
		return storeErr(s.name, "put", err)
	}
	if seg == nil {
		s.expired++
		s.log.Debug("skipping record for expired segment", "store", s.name, "timestamp", ts)
		return nil
	}
	return storeErr(s.name, "put", seg.put(storeKey, value))
}

// get reads storeKey; keys of expired windows read as absent.
func (s *segmentedBytesStore) get(storeKey []byte) ([]byte, bool, error) {
	if !s.eng.isOpen() {
		return nil, false, storeErr(s.name, "get", ErrStoreClosed)
	}
	s.mu.Lock()
	ts := s.segTime(storeKey)
	expired := ts < s.observed-s.retention+1
	s.mu.Unlock()
	if expired {
		return nil, false, nil
	}
	seg := s.eng.segment(storeapi.SegmentID(ts, s.segmentInterval), false)
	if seg == nil {
		return nil, false, nil
	}
	v, ok, err := seg.get(storeKey)
	return v, ok, storeErr(s.name, "get", err)
}

// fetch iterates, over the segments with ids in [storeapi.SegmentID(segFrom), storeapi.SegmentID(segTo)]
// (ascending, or descending when !forward), the store keys in [lower, upper] (nil =
// unbounded) that keep returns true for. Java orders results the same way: by segment, then
// by store key bytes.
func (s *segmentedBytesStore) fetch(segFrom, segTo int64, lower, upper []byte, forward bool, keep func(storeKey []byte) bool) KeyValueIterator[[]byte, []byte] {
	if !s.eng.isOpen() {
		return ErrorIterator[[]byte, []byte](storeErr(s.name, "fetch", ErrStoreClosed))
	}
	var ids []int64
	for _, id := range s.eng.ids() {
		if (segFrom == math.MinInt64 || id >= storeapi.SegmentID(segFrom, s.segmentInterval)) &&
			(segTo == math.MaxInt64 || id <= storeapi.SegmentID(segTo, s.segmentInterval)) {
			ids = append(ids, id)
		}
	}
	if !forward {
		slices.Reverse(ids)
	}
	return &segmentsIterator{s: s, ids: ids, lower: lower, upper: upper, forward: forward, keep: keep}
}

// actualFrom raises a lower time bound to the oldest time still retained (Java:
// AbstractRocksDBSegmentedBytesStore.getActualFrom / InMemoryWindowStore's minTime).
func (s *segmentedBytesStore) actualFrom(from int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(from, s.observed-s.retention+1)
}

func (s *segmentedBytesStore) restoreBatch(batch []processor.RestoreRecord) error {
	if len(batch) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.eng.restore(batch[len(batch)-1].Offset, func(put func(seg int64, key, value []byte) error) error {
		for _, r := range batch {
			ts := s.segTime(r.Key)
			s.observed = max(s.observed, ts)
			id := storeapi.SegmentID(ts, s.segmentInterval)
			if id < s.minLiveSegment() {
				continue
			}
			if err := put(id, r.Key, r.Value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return storeErr(s.name, "restore", err)
	}
	if ids := s.eng.ids(); len(ids) > 0 && ids[0] < s.minLiveSegment() {
		return storeErr(s.name, "restore", s.eng.dropBelow(s.minLiveSegment()))
	}
	return nil
}

type segmentsIterator struct {
	s            *segmentedBytesStore
	ids          []int64
	lower, upper []byte
	forward      bool
	keep         func([]byte) bool
	// paged reads the segments with paged iterators where they have them (scan); after, when
	// not nil, is the store key a scan resumes after, in segment afterSeg; curID is the id of
	// the segment cur reads.
	paged           bool
	after           []byte
	afterSeg, curID int64
	cur             KeyValueIterator[[]byte, []byte]
	key, value      []byte
	err             error
	closed          bool
}

func (it *segmentsIterator) Next() bool {
	if it.closed {
		if it.err == nil {
			it.err = ErrIteratorClosed
		}
		return false
	}
	for it.err == nil {
		if it.cur == nil {
			if len(it.ids) == 0 {
				it.key, it.value = nil, nil
				return false
			}
			id := it.ids[0]
			seg := it.s.eng.segment(id, false)
			it.ids = it.ids[1:]
			if seg == nil {
				continue // dropped meanwhile
			}
			lower, upper := it.segmentBounds(id)
			if p, ok := seg.(pagedSegment); ok && it.paged {
				it.cur = p.pagedIter(lower, upper, it.forward)
			} else {
				it.cur = seg.iter(lower, upper, it.forward)
			}
			it.curID = id
		}
		if it.cur.Next() {
			if it.keep != nil && !it.keep(it.cur.Key()) {
				continue
			}
			if it.after != nil && it.curID == it.afterSeg && bytes.Equal(it.cur.Key(), it.after) {
				continue
			}
			it.key, it.value = it.cur.Key(), it.cur.Value()
			return true
		}
		it.err = it.cur.Err()
		_ = it.cur.Close()
		it.cur = nil
	}
	return false
}

func (it *segmentsIterator) Key() []byte   { return it.key }
func (it *segmentsIterator) Value() []byte { return it.value }
func (it *segmentsIterator) Err() error    { return it.err }
func (it *segmentsIterator) Close() error {
	it.closed = true
	if it.cur != nil {
		err := it.cur.Close()
		it.cur = nil
		return err
	}
	return nil
}

// --- in-memory segments ---

type memSegments struct {
	mu     sync.Mutex
	segs   map[int64]*inMemoryKeyValueStore
	name   string
	opened bool
}

func newMemSegments() *memSegments { return &memSegments{segs: map[int64]*inMemoryKeyValueStore{}} }

func (m *memSegments) open(_ processor.StateStoreContext, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.name, m.opened = name, true
	return nil
}

type memSegment struct{ s *inMemoryKeyValueStore }

func (g memSegment) get(k []byte) ([]byte, bool, error) { return g.s.Get(k) }
func (g memSegment) put(k, v []byte) error              { return g.s.Put(k, v) }
func (g memSegment) iter(from, to []byte, forward bool) KeyValueIterator[[]byte, []byte] {
	if forward {
		return g.s.Range(from, to)
	}
	return g.s.ReverseRange(from, to)
}

func (m *memSegments) segment(id int64, create bool) segmentKV {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.segs[id]
	if !ok {
		if !create {
			return nil
		}
		s = newInMemoryKeyValueStore(segmentName(m.name, id, 1))
		s.Open()
		m.segs[id] = s
	}
	return memSegment{s}
}

func (m *memSegments) ids() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]int64, 0, len(m.segs))
	for id := range m.segs {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (m *memSegments) dropBelow(id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, s := range m.segs {
		if k < id {
			_ = s.Close()
			delete(m.segs, k)
		}
	}
	return nil
}

func (m *memSegments) restore(_ int64, fn func(put func(seg int64, key, value []byte) error) error) error {
	return fn(func(seg int64, key, value []byte) error { return m.segment(seg, true).put(key, value) })
}

func (m *memSegments) flush() error { return nil }
func (m *memSegments) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.segs = map[int64]*inMemoryKeyValueStore{}
	m.opened = false
	return nil
}
func (m *memSegments) persistent() bool { return false }
func (m *memSegments) isOpen() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.opened
}

// --- Pebble segments: one database per store, segments are key prefixes ---

type pebbleSegments struct {
	mu  sync.Mutex
	db  *pebbleDB
	set map[int64]bool
}

func newPebbleSegments() *pebbleSegments { return &pebbleSegments{set: map[int64]bool{}} }

func segPrefix(id int64) []byte {
	b := make([]byte, 9)
	b[0] = nsSegment
	binary.BigEndian.PutUint64(b[1:], uint64(id)^(1<<63))
	return b
}

func (p *pebbleSegments) open(ctx processor.StateStoreContext, name string) error {
	db, err := openPebbleDB(ctx, name)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.db, p.set = db, map[int64]bool{}
	// Find the existing segments: one seek per segment.
	it, err := db.db.NewIter(&pebble.IterOptions{LowerBound: []byte{nsSegment}, UpperBound: []byte{nsSegment + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; {
		k := it.Key()
		if len(k) < 9 {
			ok = it.Next()
			continue
		}
		id := int64(binary.BigEndian.Uint64(k[1:9]) ^ (1 << 63))
		p.set[id] = true
		if id == math.MaxInt64 {
			break
		}
		ok = it.SeekGE(segPrefix(id + 1))
	}
	return it.Error()
}

type pebbleSegment struct{ sp space }

func (g pebbleSegment) get(k []byte) ([]byte, bool, error) { return g.sp.get(k) }
func (g pebbleSegment) put(k, v []byte) error              { return g.sp.put(k, v) }
func (g pebbleSegment) iter(from, to []byte, forward bool) KeyValueIterator[[]byte, []byte] {
	return g.sp.iter(from, to, forward)
}

func (p *pebbleSegments) segment(id int64, create bool) segmentKV {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.set[id] {
		if !create {
			return nil
		}
		p.set[id] = true
	}
	return pebbleSegment{space{p: p.db, prefix: segPrefix(id)}}
}

func (p *pebbleSegments) ids() []int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]int64, 0, len(p.set))
	for id := range p.set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// dropBelow deletes the segments below id with one range tombstone (cheap: Pebble drops whole
// files under it during compactions).
func (p *pebbleSegments) dropBelow(id int64) error {
	p.mu.Lock()
	for k := range p.set {
		if k < id {
			delete(p.set, k)
		}
	}
	p.mu.Unlock()
	p.db.mu.Lock()
	defer p.db.mu.Unlock()
	if p.db.db == nil {
		return ErrStoreClosed
	}
	if p.db.eos {
		// Exactly-once: the transaction's batch, indexed, honours range deletions in its reads.
		if err := p.db.indexPendingLocked(); err != nil {
			return err
		}
		return p.db.pend.b.DeleteRange([]byte{nsSegment}, segPrefix(id), p.db.wo)
	}
	// At-least-once: the write-behind batch's index knows single keys only, so the pending
	// writes are applied first and the range deletion goes to the database.
	if err := p.db.applyPendingLocked(); err != nil {
		return err
	}
	return p.db.db.DeleteRange([]byte{nsSegment}, segPrefix(id), p.db.wo)
}

func (p *pebbleSegments) restore(last int64, fn func(put func(seg int64, key, value []byte) error) error) error {
	db := p.db
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.db == nil {
		return ErrStoreClosed
	}
	if err := db.settleLocked(); err != nil {
		return err
	}
	b := db.restoreBatch // reused from batch to batch, as in restoreInto
	if b == nil {
		b = db.db.NewBatch()
		db.restoreBatch = b
	}
	defer b.Reset()
	err := fn(func(seg int64, key, value []byte) error {
		p.mu.Lock()
		p.set[seg] = true
		p.mu.Unlock()
		return space{p: db, prefix: segPrefix(seg)}.putLocked(b, key, value)
	})
	if err != nil {
		return err
	}
	if err := b.Set(metaOffsetKey, offsetBytes(last), nil); err != nil {
		return err
	}
	return db.db.Apply(b, db.wo)
}

func (p *pebbleSegments) flush() error { return p.db.flush() }
func (p *pebbleSegments) close() error {
	if p.db == nil {
		return nil
	}
	return p.db.close()
}
func (p *pebbleSegments) persistent() bool { return true }
func (p *pebbleSegments) isOpen() bool {
	if p.db == nil {
		return false
	}
	p.db.mu.RLock()
	defer p.db.mu.RUnlock()
	return p.db.db != nil
}

// segmentedEngineOps gives the window and session stores the TransactionalStore and
// WipeableStore methods of a Pebble-backed segment engine.
type segmentedEngineOps struct {
	eng  segmentEngine
	name string
}

func (o segmentedEngineOps) pebble() (*pebbleSegments, error) {
	p, ok := o.eng.(*pebbleSegments)
	if !ok || p.db == nil {
		return nil, storeErr(o.name, "transaction", ErrStoreClosed)
	}
	return p, nil
}

// CommitTransaction implements [storeapi.TransactionalStore] (Pebble engines only).
func (o segmentedEngineOps) CommitTransaction(off int64) error {
	p, err := o.pebble()
	if err != nil {
		return err
	}
	return storeErr(o.name, "commit", p.db.commitTransaction(off))
}

// AbortTransaction implements [storeapi.TransactionalStore].
func (o segmentedEngineOps) AbortTransaction() error {
	p, err := o.pebble()
	if err != nil {
		return err
	}
	return storeErr(o.name, "abort", p.db.abortTransaction())
}

// CommittedOffset implements [storeapi.TransactionalStore].
func (o segmentedEngineOps) CommittedOffset() (int64, bool, error) {
	p, err := o.pebble()
	if err != nil {
		return 0, false, err
	}
	return p.db.committedOffset()
}

// Transactional implements [storeapi.TransactionalStore].
func (o segmentedEngineOps) Transactional() bool {
	p, err := o.pebble()
	return err == nil && p.db.eos
}

// Wipe implements [storeapi.WipeableStore].
func (o segmentedEngineOps) Wipe() error {
	p, err := o.pebble()
	if err != nil {
		return err
	}
	if err := p.db.wipe(); err != nil {
		return storeErr(o.name, "wipe", err)
	}
	p.mu.Lock()
	p.set = map[int64]bool{}
	p.mu.Unlock()
	return nil
}

// WipedOnOpen implements [storeapi.WipeableStore].
func (o segmentedEngineOps) WipedOnOpen() bool {
	p, err := o.pebble()
	return err == nil && p.db.wiped
}

// IsEmpty implements [storeapi.WipeableStore].
func (o segmentedEngineOps) IsEmpty() (bool, error) {
	return len(o.eng.ids()) == 0, nil
}
