package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/props"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kstreams-go/kstreams/processor"
)

// Layout of a store's Pebble database. Every key starts with a namespace byte:
//
//	0x00 ‖ name                       metadata (the committed changelog offset, int64 big-endian)
//	0x01 ‖ key                        key-value stores
//	0x02 ‖ int64 segmentId ‖ key      segmented (window, session) stores; the segment id is
//	                                  big-endian with the sign bit flipped, so ids sort numerically
const (
	nsMeta    byte = 0x00
	nsKV      byte = 0x01
	nsSegment byte = 0x02
)

var metaOffsetKey = []byte{nsMeta, 'c', 'h', 'a', 'n', 'g', 'e', 'l', 'o', 'g', '-', 'o', 'f', 'f', 's', 'e', 't'}

// isExactlyOnce reports whether a processing.guarantee value means exactly-once
// ("exactly_once_v2", or the removed "exactly_once" / "exactly_once_beta").
func isExactlyOnce(guarantee string) bool {
	switch guarantee {
	case "exactly_once_v2", "exactly_once", "exactly_once_beta":
		return true
	}
	return false
}

// pebbleDB is the Pebble database of one store of one task, shared by the namespaces (spaces)
// the store writes. Writes go to a batch (pend) that reads see before it reaches the database.
// It is a plain batch with an index of its own (idx: the last write of each key), which Get
// reads first before the database. This costs less than an indexed batch, whose every write
// also inserts into a skiplist, and whose every read merges it with the database
// (BenchmarkPebblePut, BenchmarkPebbleGetPut, BenchmarkPebbleGetPutTxn). The batch is:
//   - under at-least-once, a write-behind batch, applied by flush (every commit that writes a
//     checkpoint) and whenever it outgrows pendLimit: one pass through Pebble's commit pipeline
//     per batch instead of one per write. An iterator applies the batch before it opens, and
//     then reads the database only;
//   - under exactly-once, the open transaction, which CommitTransaction applies together with
//     the changelog offset (AbortTransaction drops it). It cannot reach the database before
//     then, so an iterator that finds writes pending, or a range deletion, turns it into an
//     indexed batch for the rest of the transaction (indexed): iterators then read it merged
//     with the database, and Get reads it through Pebble. A store that only reads and writes
//     single keys (an aggregation) never pays for the indexed batch.
type pebbleDB struct {
	name  string
	env   *pebbleEnv
	fs    vfs.FS
	dir   string
	log   *slog.Logger
	wo    *pebble.WriteOptions
	eos   bool
	mu    sync.RWMutex
	db    *pebble.DB
	pend  *pendingBatch
	wiped bool
	// idx indexes the pending batch by prefixed key: the position in refs of the key's last
	// write. Empty exactly when the batch is, or when indexed.
	idx map[string]int32
	// indexed: under exactly-once, the open transaction's batch is an indexed batch, which
	// Pebble indexes (idx is then empty and unused) until the transaction ends.
	indexed bool
	// refs holds what idx points to (a key indexed already is updated without allocating).
	refs []pendRef
	// repr is the plain pending batch's representation as of its last write, which refs
	// point into: reads under the read lock use it, since Batch.Repr writes the batch's
	// header. Nil when the batch is empty or indexed.
	repr []byte
	// pendLimit is the estimated memtable size (see pendingBatch.memSize) past which an
	// at-least-once write applies the write-behind batch.
	pendLimit uint64
	// scratch holds the prefixed key of a write; only used with mu held for writing (Pebble
	// copies keys into its batches and memtables, so the buffer is reused at once).
	scratch []byte
	// restoreBatch is reused by restore (with mu held for writing); closed with the db.
	restoreBatch *pebble.Batch
	// bulk is the running bulk restore, if any (see storeapi.BulkRestorer); guarded by mu.
	bulk *bulkLoad
	// opts are the options the database was opened with.
	opts *pebble.Options
	// inMemory is true when the store has no state directory (the test driver): the database
	// lives in an in-memory file system, so nothing can be made durable and flush skips the
	// memtable flush (which would only cost sstable builds and compactions).
	inMemory bool
	// live is db != nil, readable without mu: IsOpen is asked on every Get and Put of the
	// caching layer above, which should not pay for a lock. Set with db, under mu.
	live atomic.Bool
}

// pendingBatch is the batch of a pebbleDB's writes not yet applied to its database, with the
// number of open iterators reading it (exactly-once: iterators read the indexed transaction
// batch): a batch that an iterator reads is not reused once applied or dropped (a new one takes
// its place), since the iterator reads its buffer until closed.
type pendingBatch struct {
	b     *pebble.Batch
	iters atomic.Int32
}

// pendRef locates a key's last pending write in the plain pending batch: its value is n bytes
// at off of the batch's representation (pebbleDB.repr); n < 0 is a delete.
type pendRef struct {
	off uint32
	n   int32
}

// memNodeOverhead bounds what a memtable entry costs beyond its key and value, as Pebble counts
// it when it sizes a batch for the memtable: the skiplist node with a full tower (184 bytes),
// the key's 8-byte trailer and padding.
const memNodeOverhead = 200

// maxPendBytes caps pendLimit: 4 MiB of estimated memtable bytes, some 18 000 small entries.
const maxPendBytes = 4 << 20

// memSize estimates the memtable bytes the batch needs when applied.
func (pb *pendingBatch) memSize() uint64 {
	return uint64(pb.b.Len()) + uint64(pb.b.Count())*memNodeOverhead
}

// keyBufs recycles the buffers of prefixed keys for reads, which run under the read lock,
// possibly concurrently (interactive queries).
var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}

func openPebbleDB(ctx processor.StateStoreContext, name string) (*pebbleDB, error) {
	env := defaultPebbleEnv()
	var stateDir string
	eos := false
	if ctx != nil {
		if p, ok := ctx.(pebbleEnvProvider); ok {
			if e, ok := p.PebbleEnv().(*pebbleEnv); ok && e != nil {
				env = e
			}
		}
		stateDir = ctx.StateDir()
		eos = isExactlyOnce(ctx.AppConfigs()[props.ProcessingGuaranteeConfig])
	}
	fs := env.opts.FS
	dir := filepath.Join(stateDir, storeapi.PebbleDirName, name)
	if stateDir == "" {
		fs = vfs.NewMem()
	}
	p := &pebbleDB{name: name, env: env, fs: fs, dir: dir, log: env.opts.Logger, eos: eos, wo: pebble.NoSync, inMemory: stateDir == ""}
	if env.opts.SyncWrites {
		p.wo = pebble.Sync
	}
	if _, err := fs.Stat(dir); err != nil {
		// No local state at all (first start, or the state directory was deleted): the store
		// must be restored from the beginning of its changelog whatever a checkpoint says.
		p.wiped = true
	}
	if err := p.open(); err != nil {
		if !pebble.IsCorruptionError(err) && !errors.Is(err, pebble.ErrCorruption) {
			return nil, err
		}
		p.log.Warn("state store is corrupt: wiping its local state; it will be restored from its changelog",
			"store", name, "dir", dir, "error", err)
		if err := p.fs.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("wipe corrupt store: %w", err)
		}
		if err := p.open(); err != nil {
			return nil, err
		}
		p.wiped = true
	}
	return p, nil
}

func (p *pebbleDB) open() error {
	if err := p.fs.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	opts := p.env.pebbleOptions(p.fs)
	// At-least-once: no write-ahead log, as Java disables RocksDB's; Flush (every commit,
	// before the checkpoint) flushes the memtables instead. Exactly-once: the WAL keeps
	// committed transactions across a process crash, so restore replays only what the last
	// CommitTransaction did not cover.
	opts.DisableWAL = !p.eos
	db, err := pebble.Open(p.dir, opts)
	if err != nil {
		p.env.release()
		return err
	}
	p.db, p.opts = db, opts
	p.live.Store(true)
	// Only once the database is open (Pebble's lock file held): no one else can be writing one.
	p.removeBulkLeftovers()
	p.pend, p.indexed = &pendingBatch{b: db.NewBatch()}, false
	if p.idx == nil {
		p.idx = map[string]int32{}
	}
	// A quarter of the memtable (at most maxPendBytes): half of what Pebble applies as a batch
	// of its own (a batch of half the memtable or more becomes a memtable of its own, flushed
	// as one).
	p.pendLimit = min(opts.MemTableSize/4, maxPendBytes)
	return nil
}

func (p *pebbleDB) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return nil
	}
	if p.bulk != nil {
		// A bulk restore that was neither ended nor aborted: its held records are dropped.
		_ = p.bulk.wait()
		p.bulk.abortStream()
		p.bulk = nil
	}
	if p.pend != nil {
		// Writes not applied are dropped: an open transaction as Kafka aborts it; at-least-once
		// writes since the last flush as a dirty close drops them (restore replays them from the
		// changelog; a clean close flushes first).
		p.dropPendingLocked(false)
	}
	if p.restoreBatch != nil {
		_ = p.restoreBatch.Close()
		p.restoreBatch = nil
	}
	err := p.db.Close()
	p.db = nil
	p.live.Store(false)
	p.env.release()
	return err
}

// wipe closes the database, deletes its directory and opens it empty.
func (p *pebbleDB) wipe() error {
	if err := p.close(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fs.RemoveAll(p.dir); err != nil {
		return err
	}
	p.wiped = true
	return p.open()
}

func (p *pebbleDB) flush() error {
	if p.eos {
		// Under exactly-once, data reaches the database only with CommitTransaction.
		p.mu.RLock()
		defer p.mu.RUnlock()
		if p.db == nil {
			return ErrStoreClosed
		}
		return nil
	}
	p.mu.Lock()
	if p.db == nil {
		p.mu.Unlock()
		return ErrStoreClosed
	}
	err := p.applyPendingLocked()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	// The memtable flush runs under the read lock: reads need not wait for it.
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.db == nil {
		return ErrStoreClosed
	}
	if p.inMemory {
		// Nothing survives the process anyway: a memtable flush would build an sstable in
		// memory (and compactions later) for no durability gain. The test driver flushes the
		// stores after every record, as Java's does.
		return nil
	}
	// The write-ahead log is disabled (as Java disables RocksDB's): flushing the memtables
	// makes everything written so far durable before the checkpoint is written.
	return p.db.Flush()
}

// applyPendingLocked applies the pending batch to the database and empties it (also when Pebble
// fails to apply it: the error fails the task, whose stores restore from the changelog). Call
// with p.mu held for writing.
func (p *pebbleDB) applyPendingLocked() error {
	if p.pend.b.Empty() {
		if p.indexed {
			p.dropPendingLocked(true) // the next transaction starts plain
		}
		return nil
	}
	err := p.db.Apply(p.pend.b, p.wo)
	p.dropPendingLocked(true)
	return err
}

// dropPendingLocked empties the pending batch, after it was applied or to drop its writes, and
// with reopen starts a new plain one. A plain batch is reset and kept (with its buffer); an
// indexed one is closed unless iterators still read it, which are then its last users (it is
// not closed; the garbage collector takes it). Call with p.mu held for writing.
func (p *pebbleDB) dropPendingLocked(reopen bool) {
	clear(p.idx)
	p.refs, p.repr = p.refs[:0], nil
	if !p.indexed {
		if reopen {
			p.pend.b.Reset()
			return
		}
		_ = p.pend.b.Close()
		p.pend = nil
		return
	}
	if p.pend.iters.Load() == 0 {
		_ = p.pend.b.Close()
	}
	p.pend, p.indexed = nil, false
	if reopen {
		p.pend = &pendingBatch{b: p.db.NewBatch()}
	}
}

// indexPendingLocked turns the open exactly-once transaction's plain batch into an indexed one
// holding the same writes, for an iterator or a range deletion (see pebbleDB); it does nothing
// when it is indexed already. Call with p.mu held for writing.
func (p *pebbleDB) indexPendingLocked() error {
	if p.indexed {
		return nil
	}
	b := p.db.NewIndexedBatch()
	if err := b.Apply(p.pend.b, nil); err != nil {
		_ = b.Close()
		return err
	}
	_ = p.pend.b.Close()
	clear(p.idx)
	p.refs, p.repr = p.refs[:0], nil
	p.pend, p.indexed = &pendingBatch{b: b}, true
	return nil
}

// settleLocked applies the at-least-once write-behind batch before a write that goes to the
// database directly (restore), so that the restored records land after the writes that preceded
// them. Under exactly-once it does nothing. Call with p.mu held for writing.
func (p *pebbleDB) settleLocked() error {
	if p.eos {
		return nil
	}
	return p.applyPendingLocked()
}

// maybeApplyLocked applies the at-least-once write-behind batch once it outgrew pendLimit.
// Call with p.mu held for writing, after a write.
func (p *pebbleDB) maybeApplyLocked() error {
	if p.eos || p.pend.memSize() < p.pendLimit {
		return nil
	}
	return p.applyPendingLocked()
}

// committedOffset returns the changelog offset stored with the data, if any.
func (p *pebbleDB) committedOffset() (int64, bool, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.db == nil {
		return 0, false, ErrStoreClosed
	}
	v, c, err := p.db.Get(metaOffsetKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer c.Close()
	if len(v) != 8 {
		return 0, false, fmt.Errorf("%w: changelog offset of %d bytes", pebble.ErrCorruption, len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), true, nil
}

func offsetBytes(off int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(off))
	return b[:]
}

// commitTransaction applies the open transaction and, when offset >= 0, the changelog offset,
// in one atomic write; then opens a new transaction. Under at-least-once it applies the
// write-behind batch with the offset.
func (p *pebbleDB) commitTransaction(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return ErrStoreClosed
	}
	if offset >= 0 {
		if err := p.pend.b.Set(metaOffsetKey, offsetBytes(offset), nil); err != nil {
			return err
		}
	}
	return p.applyPendingLocked()
}

// abortTransaction drops the writes of the open transaction; under at-least-once it does
// nothing (the write-behind batch is applied at the next flush).
func (p *pebbleDB) abortTransaction() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return ErrStoreClosed
	}
	if p.eos {
		p.dropPendingLocked(true)
	}
	return nil
}

// space is a key namespace of a pebbleDB: every key is stored as prefix ‖ key.
type space struct {
	p      *pebbleDB
	prefix []byte
}

func (s space) key(k []byte) []byte {
	out := make([]byte, len(s.prefix)+len(k))
	copy(out, s.prefix)
	copy(out[len(s.prefix):], k)
	return out
}

func (s space) get(key []byte) ([]byte, bool, error) {
	s.p.mu.RLock()
	defer s.p.mu.RUnlock()
	if s.p.db == nil {
		return nil, false, ErrStoreClosed
	}
	bp := keyBufs.Get().(*[]byte)
	kb := append(append((*bp)[:0], s.prefix...), key...)
	if !s.p.indexed {
		if i, ok := s.p.idx[string(kb)]; ok {
			r := s.p.refs[i]
			*bp = kb[:0]
			keyBufs.Put(bp)
			if r.n < 0 {
				return nil, false, nil
			}
			return bytes.Clone(s.p.repr[r.off : r.off+uint32(r.n)]), true, nil
		}
	}
	var v []byte
	var c io.Closer
	var err error
	if s.p.indexed {
		v, c, err = s.p.pend.b.Get(kb)
	} else {
		v, c, err = s.p.db.Get(kb)
	}
	var out []byte
	if err == nil {
		out = bytes.Clone(v)
		if out == nil {
			out = []byte{}
		}
		c.Close()
	}
	*bp = kb[:0] // Pebble no longer refers to the key once the closer ran
	keyBufs.Put(bp)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

func (s space) put(key, value []byte) error {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if s.p.db == nil {
		return ErrStoreClosed
	}
	return s.putPendingLocked(key, value)
}

// putPendingLocked writes to the pending batch and indexes the write (unless Pebble does:
// indexed); under at-least-once it applies the batch once it outgrew pendLimit. Call with
// s.p.mu held for writing.
func (s space) putPendingLocked(key, value []byte) error {
	p := s.p
	kb := append(append(p.scratch[:0], s.prefix...), key...)
	p.scratch = kb[:0]
	var err error
	if value == nil {
		err = p.pend.b.Delete(kb, nil)
	} else {
		err = p.pend.b.Set(kb, value, nil)
	}
	if err != nil || p.indexed {
		return err
	}
	p.repr = p.pend.b.Repr()
	// The value is the batch's last bytes: Pebble appends kind, key and value.
	r := pendRef{n: -1}
	if value != nil {
		r = pendRef{off: uint32(p.pend.b.Len() - len(value)), n: int32(len(value))}
	}
	if i, ok := p.idx[string(kb)]; ok {
		p.refs[i] = r
	} else {
		p.idx[string(kb)] = int32(len(p.refs))
		p.refs = append(p.refs, r)
	}
	return p.maybeApplyLocked()
}

// putLocked writes to w; call with s.p.mu held for writing.
func (s space) putLocked(w pebble.Writer, key, value []byte) error {
	kb := append(append(s.p.scratch[:0], s.prefix...), key...)
	s.p.scratch = kb[:0]
	if value == nil {
		return w.Delete(kb, s.p.wo)
	}
	return w.Set(kb, value, s.p.wo)
}

// end returns the smallest key greater than every key starting with prefix, or nil when there
// is none (prefix is all 0xff).
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// iter iterates from <= key <= to (nil = unbounded) of the space, forward or backward. It
// returns the concrete iterator type, also for an empty range or a closed store, so that a
// caller holding the concrete store type gets direct (devirtualized, inlinable) Next, Key and
// Value calls.
func (s space) iter(from, to []byte, forward bool) *pebbleIterator {
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return &pebbleIterator{state: iterDone}
	}
	// Pebble copies the bounds into its iterator at NewIter, so they are built in a recycled
	// buffer: prefix ‖ from, then prefix ‖ to ‖ 0x00 (the inclusive upper bound's immediate
	// successor) or the end of the space.
	bp := keyBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	if need := 2*len(s.prefix) + len(from) + len(to) + 1; cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	lower := s.prefix
	if from != nil {
		buf = append(append(buf, s.prefix...), from...)
		lower = buf
	}
	n := len(buf)
	if to != nil {
		buf = append(append(append(buf, s.prefix...), to...), 0x00)
	} else {
		buf = appendPrefixEnd(buf, s.prefix)
	}
	upper := buf[n:]
	if len(upper) == 0 {
		upper = nil // the space's prefix is all 0xff: no upper bound
	}
	it := s.newIter(lower, upper, forward)
	*bp = buf[:0]
	keyBufs.Put(bp)
	return it
}

// appendPrefixEnd appends the smallest key greater than every key starting with prefix to
// dst; it appends nothing when there is none (prefix is all 0xff).
func appendPrefixEnd(dst, prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			dst = append(dst, prefix[:i+1]...)
			dst[len(dst)-1]++
			return dst
		}
	}
	return dst
}

// prefixIter iterates the keys of the space starting with prefix, ascending.
func (s space) prefixIter(prefix []byte) *pebbleIterator {
	lower := s.key(prefix)
	upper := prefixEnd(lower)
	if upper == nil {
		upper = prefixEnd(s.prefix)
	}
	return s.newIter(lower, upper, true)
}

// newIter opens a Pebble iterator over [lower, upper): of the database, once the at-least-once
// write-behind batch is applied; of the open transaction merged with the database under
// exactly-once (of the database alone while the transaction wrote nothing). Pebble copies both
// bounds: the caller may reuse them once it returns.
func (s space) newIter(lower, upper []byte, forward bool) *pebbleIterator {
	p := s.p
	p.mu.RLock()
	if len(p.idx) > 0 {
		// Writes are pending in the plain batch: at-least-once applies them, so that the
		// iterator reads the database only; exactly-once indexes them. Both under the write
		// lock held until the iterator is open.
		p.mu.RUnlock()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.db != nil && len(p.idx) > 0 { // a commit may have applied them meanwhile
			var err error
			if p.eos {
				err = p.indexPendingLocked()
			} else {
				err = p.applyPendingLocked()
			}
			if err != nil {
				return failedIterator(storeErr(p.name, "range", err))
			}
		}
	} else {
		defer p.mu.RUnlock()
	}
	if p.db == nil {
		return failedIterator(storeErr(p.name, "range", ErrStoreClosed))
	}
	// The options stay on the stack: Pebble copies them (and the bounds) into its iterator.
	opts := pebble.IterOptions{LowerBound: lower, UpperBound: upper}
	if !p.indexed {
		it, err := p.db.NewIter(&opts)
		if err != nil {
			return failedIterator(storeErr(p.name, "range", err))
		}
		return &pebbleIterator{it: it, forward: forward, strip: len(s.prefix), name: p.name}
	}
	pb := p.pend
	it, err := pb.b.NewIter(&opts)
	if err != nil {
		return failedIterator(storeErr(p.name, "range", err))
	}
	pb.iters.Add(1)
	return &pebbleIterator{it: it, pend: pb, forward: forward, strip: len(s.prefix), name: p.name}
}

// pebbleIterator adapts a Pebble iterator and strips the space prefix from keys. Key and
// Value are views into the Pebble iterator's current entry, valid until the next call to Next
// or Close (see [KeyValueBytesStore]): nothing is copied or allocated per entry. An iterator
// without a Pebble iterator (it == nil) is an empty range or carries an error.
type pebbleIterator struct {
	it      *pebble.Iterator
	pend    *pendingBatch // the batch it reads, released at Close
	key     []byte
	value   []byte
	state   uint8
	forward bool // the direction, for the first Next
	closed  bool
	strip   int
	name    string
	err     error
}

// States of a pebbleIterator. The common case (moving forward) is tested first.
const (
	iterFresh    uint8 = iota // Next was not called yet
	iterForward               // positioned, moving forward
	iterBackward              // positioned, moving backward
	iterDone                  // exhausted, failed, empty or closed: Next returns false
)

// failedIterator returns an iterator without entries whose Err returns err.
func failedIterator(err error) *pebbleIterator {
	return &pebbleIterator{state: iterDone, err: err}
}

// emptyValue is the non-nil empty value handed out for stored empty values.
var emptyValue = []byte{}

func (i *pebbleIterator) Next() bool {
	var ok bool
	switch i.state {
	case iterForward:
		ok = i.it.Next()
	case iterBackward:
		ok = i.it.Prev()
	case iterFresh:
		if i.forward {
			ok, i.state = i.it.First(), iterForward
		} else {
			ok, i.state = i.it.Last(), iterBackward
		}
	default:
		if i.closed && i.err == nil {
			i.err = ErrIteratorClosed
		}
		return false
	}
	if !ok {
		return i.stop(i.it.Error())
	}
	v, err := i.it.ValueAndErr()
	if err != nil {
		return i.stop(err)
	}
	if v == nil {
		v = emptyValue // a stored empty value is not null
	}
	i.key, i.value = i.it.Key()[i.strip:], v
	return true
}

// stop ends the iteration (exhausted, or failed with err) and returns false.
func (i *pebbleIterator) stop(err error) bool {
	i.state = iterDone
	if err != nil {
		i.err = storeErr(i.name, "iterate", err)
	}
	i.key, i.value = nil, nil
	return false
}

func (i *pebbleIterator) Key() []byte   { return i.key }
func (i *pebbleIterator) Value() []byte { return i.value }
func (i *pebbleIterator) Err() error    { return i.err }
func (i *pebbleIterator) Close() error {
	if i.closed {
		return nil
	}
	i.closed, i.state = true, iterDone
	i.key, i.value = nil, nil
	if i.it == nil {
		return nil
	}
	err := i.it.Close()
	i.it = nil // Pebble recycles its iterator
	if i.pend != nil {
		i.pend.iters.Add(-1)
		i.pend = nil
	}
	return err
}
