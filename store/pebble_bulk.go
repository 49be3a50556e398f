package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kstreams-go/kstreams/processor"
)

var _ storeapi.BulkRestorer = (*pebbleKeyValueStore)(nil)

// BeginBulkRestore implements [storeapi.BulkRestorer]: until EndBulkRestore, restored records gather in
// chunks of the store's memtable size, and each full chunk is sorted and written as one table
// file that Pebble ingests (on another goroutine, while the next chunk fills), instead of
// going through the memtable, its flush and the compactions of the flushed files: a changelog
// whose keys arrive in order is written once, straight to the last level. At most two chunks
// are held, as a memtable and the one being flushed would be. While keys come in order, a chunk
// is handed over from an eighth of that size on (at least 1 MiB) and appended to a table file
// kept open, which is ingested once it holds a chunk's worth (and at the end): EndBulkRestore,
// which every restore waits for, then adds the last few records and ingests one file instead
// of building a whole chunk's file, and there are no more files than with whole chunks. The
// last records go into a table file too, in whatever order their keys came, when they lie
// above everything written before (such a file overlaps nothing and costs no compaction).
func (s *pebbleKeyValueStore) BeginBulkRestore() error {
	if s.db == nil {
		return storeErr(s.name, "restore", ErrStoreClosed)
	}
	return storeErr(s.name, "restore", s.db.beginBulk())
}

// EndBulkRestore implements [storeapi.BulkRestorer].
func (s *pebbleKeyValueStore) EndBulkRestore() error {
	if s.db == nil {
		return storeErr(s.name, "restore", ErrStoreClosed)
	}
	return storeErr(s.name, "restore", s.db.endBulk(true))
}

// AbortBulkRestore implements [storeapi.BulkRestorer].
func (s *pebbleKeyValueStore) AbortBulkRestore() {
	if s.db != nil {
		_ = s.db.endBulk(false)
	}
}

// bulkTempPrefix starts the names of the table files a bulk restore writes in the store's
// directory before Pebble ingests (and then removes) them; Pebble ignores such names, and
// opening the store (and beginBulk) deletes any left by a crash.
const bulkTempPrefix = "bulk-restore-"

// bulkLoad is the state of a running bulk restore of a pebbleDB.
type bulkLoad struct {
	p     *pebbleDB
	limit int // bytes per chunk (bulkChunk.size)
	wopts sstable.WriterOptions
	fs    vfs.FS
	cur   *bulkChunk
	spare *bulkChunk
	// done receives the result of the chunk being written; nil when none is.
	done chan error
	err  error
	seq  int
	// ordered: each chunk handed to the writer lay above all before it (last is the greatest
	// key of them, a copy), so their table files overlap none of each other's; early is the
	// size from which a chunk whose keys came in order is handed over.
	ordered bool
	last    []byte
	early   int
	// stream is the table file that chunks in order are appended to, nil when none is open.
	// The writing goroutine uses it, and endBulk once that is done (wait).
	stream *bulkStream
}

// bulkStream is a table file being written from chunks whose keys came in order.
type bulkStream struct {
	w    *sstable.Writer
	path string
	size int   // bytes of the chunks appended
	last int64 // changelog offset of the last record appended
}

// bulkChunk holds restored records in changelog order, packed one after the other in blocks
// (a record never spans two): its key length (uvarint), its value length plus one (uvarint; 0
// for a tombstone), its key (with the space prefix) and its value. Blocks are never grown, so
// filling a chunk copies each record once, and a chunk of keys that arrive in order needs no
// index at all.
type bulkChunk struct {
	blocks [][]byte
	size   int   // bytes held, record headers included
	n      int   // records held
	last   int64 // changelog offset of the last record
	// ascending: every key is greater than the one before it (prev, the last key added,
	// points into blocks).
	ascending bool
	prev      []byte
	// min and max are the smallest and the greatest key (pointing into blocks).
	min, max []byte
	// next is the capacity of the next block: blocks start small and double up to
	// bulkBlockSize, so that a short restore holds little.
	next int
	// idx is sorted's scratch space, kept from chunk to chunk.
	idx []sortEntry
}

const (
	// bulkBlockSize is the largest block of a chunk (a longer record gets a block of its own).
	bulkBlockSize = 1 << 20
	// bulkFirstBlockSize is the first block of a bulk restore's first chunk.
	bulkFirstBlockSize = 64 << 10
)

// bulkBlocks holds blocks of bulkBlockSize bytes that chunks gave back (a chunk written, a
// bulk restore ended): the next chunk, of this store or of another one restored after it or
// beside it, takes them instead of allocating its own.
var bulkBlocks sync.Pool // of *[bulkBlockSize]byte

func newBulkChunk() *bulkChunk { return &bulkChunk{ascending: true, next: bulkFirstBlockSize} }

// room returns the block that takes a record of need bytes, adding one when the last is full.
func (c *bulkChunk) room(need int) *[]byte {
	if n := len(c.blocks); n > 0 && cap(c.blocks[n-1])-len(c.blocks[n-1]) >= need {
		return &c.blocks[n-1]
	}
	var b []byte
	switch size := max(c.next, need); {
	case size == bulkBlockSize:
		if p, ok := bulkBlocks.Get().(*[bulkBlockSize]byte); ok {
			b = p[:0]
		} else {
			b = make([]byte, 0, bulkBlockSize)
		}
	default:
		b = make([]byte, 0, size)
	}
	c.next = min(2*c.next, bulkBlockSize)
	c.blocks = append(c.blocks, b)
	return &c.blocks[len(c.blocks)-1]
}

// add appends a record (key = prefix ‖ key; a nil value is a tombstone).
func (c *bulkChunk) add(prefix, key, value []byte, offset int64) {
	kl, vl := len(prefix)+len(key), 0
	if value != nil {
		vl = len(value) + 1
	}
	need := uvarintLen(kl) + uvarintLen(vl) + kl + len(value)
	b := c.room(need)
	*b = binary.AppendUvarint(binary.AppendUvarint(*b, uint64(kl)), uint64(vl))
	k := len(*b)
	*b = append(append(append(*b, prefix...), key...), value...)
	held := (*b)[k : k+kl : k+kl]
	switch {
	case c.n == 0:
		c.min, c.max = held, held
	case c.ascending && bytes.Compare(c.prev, held) < 0:
		c.max = held
	default:
		c.ascending = false
		if bytes.Compare(held, c.min) < 0 {
			c.min = held
		}
		if bytes.Compare(held, c.max) > 0 {
			c.max = held
		}
	}
	c.prev = held
	c.n++
	c.size += need
	c.last = offset
}

func uvarintLen(v int) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// record decodes the record at off of block b: its key, its value (nil for a tombstone) and
// the offset of the next record.
func record(b []byte, off int) (key, value []byte, next int) {
	kl, n := uint64(b[off]), 1
	if kl >= 0x80 {
		kl, n = binary.Uvarint(b[off:])
	}
	off += n
	vl, n := uint64(b[off]), 1
	if vl >= 0x80 {
		vl, n = binary.Uvarint(b[off:])
	}
	off += n
	key = b[off : off+int(kl)]
	off += int(kl)
	if vl == 0 {
		return key, nil, off
	}
	return key, b[off : off+int(vl)-1], off + int(vl) - 1
}

// inOrder calls f with every record held, in changelog order.
func (c *bulkChunk) inOrder(f func(key, value []byte) error) error {
	for _, b := range c.blocks {
		for off := 0; off < len(b); {
			k, v, next := record(b, off)
			if err := f(k, v); err != nil {
				return err
			}
			off = next
		}
	}
	return nil
}

// reset empties the chunk for reuse; the blocks of bulkBlockSize go to bulkBlocks, and the
// chunk's next blocks are of that size (a chunk that was filled is filled again).
func (c *bulkChunk) reset() {
	full := c.next == bulkBlockSize
	c.release()
	if full {
		c.next = bulkBlockSize
	}
}

// release gives the chunk's blocks back and empties it.
func (c *bulkChunk) release() {
	for i, b := range c.blocks {
		if cap(b) == bulkBlockSize {
			bulkBlocks.Put((*[bulkBlockSize]byte)(b[:bulkBlockSize]))
		}
		c.blocks[i] = nil
	}
	c.blocks, c.size, c.n, c.prev, c.min, c.max, c.ascending, c.next = c.blocks[:0], 0, 0, nil, nil, nil, true, bulkFirstBlockSize
}

// beginBulk starts a bulk restore (see PebbleKeyValueStore.BeginBulkRestore).
func (p *pebbleDB) beginBulk() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return ErrStoreClosed
	}
	if p.bulk != nil {
		return errors.New("bulk restore already running")
	}
	if err := p.settleLocked(); err != nil {
		return err
	}
	p.removeBulkLeftovers()
	limit := int(min(p.opts.MemTableSize, 1<<30))
	p.bulk = &bulkLoad{p: p, limit: limit, wopts: p.opts.MakeWriterOptions(0, p.db.TableFormat()), fs: p.opts.FS,
		cur: newBulkChunk(), ordered: true, early: min(max(limit/8, 1<<20), limit)}
	return nil
}

// removeBulkLeftovers deletes the table files of a bulk restore that a crash interrupted
// before their ingestion (or after it, before Pebble removed the name it was given). open
// calls it, as the rest of such a restore is often too short to run as a bulk restore.
func (p *pebbleDB) removeBulkLeftovers() {
	if names, err := p.fs.List(p.dir); err == nil {
		for _, n := range names {
			if strings.HasPrefix(n, bulkTempPrefix) {
				_ = p.fs.Remove(filepath.Join(p.dir, n))
			}
		}
	}
}

// endBulk ends the bulk restore: with write, the records still held are written; without,
// they are dropped. Either way it waits for the chunk being written and gives the chunks'
// blocks back.
func (p *pebbleDB) endBulk(write bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.bulk
	if b == nil {
		return nil
	}
	p.bulk = nil
	err := b.wait()
	c := b.cur
	defer func() {
		c.release()
		if b.spare != nil {
			b.spare.release()
		}
	}()
	if !write || err != nil {
		b.abortStream()
		return err
	}
	switch {
	case c.n == 0:
		return b.finishStream()
	case b.last != nil && b.above(c):
		// The last records lie above all written before: into the open table file (or one of
		// their own), whatever their size.
		if err := b.appendStream(c); err != nil {
			return err
		}
		return b.finishStream()
	}
	if err := b.finishStream(); err != nil {
		return err
	}
	if c.size < b.limit/4 {
		// A short tail goes through the memtable: a small table file would only add a level-0
		// file or a compaction.
		return b.applyBatch(c)
	}
	return b.write(c)
}

// above reports whether chunk c lies above everything the restore wrote: every chunk written
// so far lay above those before it, and c's smallest key is above their greatest. Its table
// file then overlaps none of theirs.
func (b *bulkLoad) above(c *bulkChunk) bool {
	return b.ordered && c.n > 0 && (b.last == nil || bytes.Compare(c.min, b.last) > 0)
}

// add appends a record; call with p.mu held for writing.
func (b *bulkLoad) add(prefix, key, value []byte, offset int64) error {
	if b.err != nil {
		return b.err
	}
	c := b.cur
	c.add(prefix, key, value, offset)
	if c.size >= b.limit || (c.size >= b.early && c.ascending && b.above(c)) {
		return b.rotate()
	}
	return nil
}

// rotate hands the full current chunk to a writing goroutine (after the previous one is
// written) and continues with the spare chunk.
func (b *bulkLoad) rotate() error {
	if err := b.wait(); err != nil {
		return err
	}
	full := b.cur
	if b.ordered = b.above(full); b.ordered {
		b.last = append(b.last[:0], full.max...)
	}
	ordered := b.ordered
	b.cur = b.spare
	if b.cur == nil {
		b.cur = newBulkChunk()
		b.cur.next = bulkBlockSize
	}
	b.spare = nil
	b.done = make(chan error, 1)
	go func(done chan<- error) {
		var err error
		if ordered {
			err = b.appendStream(full)
		} else if err = b.finishStream(); err == nil {
			err = b.write(full)
		}
		full.reset()
		b.spare = full // read by rotate or endBulk only after done is received
		done <- err
	}(b.done)
	return nil
}

// wait waits for the chunk being written, if any, and returns the first error of the load.
func (b *bulkLoad) wait() error {
	if b.done != nil {
		if err := <-b.done; err != nil && b.err == nil {
			b.err = err
		}
		b.done = nil
	}
	return b.err
}

// sorted calls f with the chunk's records in key order, the last record of each key only. A
// chunk whose keys arrived in strictly ascending order is read as it is.
func (c *bulkChunk) sorted(f func(key, value []byte) error) error {
	if c.ascending {
		return c.inOrder(f)
	}
	// Sorting compares an 8-byte abbreviation of each key first (the bytes after the prefix
	// every key of the chunk shares, as a big-endian number) held in the sorted array itself:
	// comparing the keys in the chunk instead cost two cache misses per comparison, most of a
	// restore's CPU when keys arrive in random order.
	first, _, _ := record(c.blocks[0], 0)
	common := len(first)
	_ = c.inOrder(func(k, _ []byte) error {
		n := min(common, len(k))
		i := 0
		for i < n && k[i] == first[i] {
			i++
		}
		common = i
		return nil
	})
	idx := slices.Grow(c.idx[:0], c.n)
	for bi, b := range c.blocks {
		for off := 0; off < len(b); {
			k, _, next := record(b, off)
			var ab [8]byte
			copy(ab[:], k[common:])
			idx = append(idx, sortEntry{abbr: binary.BigEndian.Uint64(ab[:]), blk: uint32(bi), off: uint32(off)})
			off = next
		}
	}
	c.idx = idx
	key := func(e sortEntry) []byte {
		k, _, _ := record(c.blocks[e.blk], int(e.off))
		return k
	}
	// Ties keep changelog order (block, then position in it), so the last record of a key is
	// the last of its run.
	slices.SortFunc(idx, func(a, b sortEntry) int {
		if a.abbr != b.abbr {
			return cmp.Compare(a.abbr, b.abbr)
		}
		if r := bytes.Compare(key(a), key(b)); r != 0 {
			return r
		}
		if a.blk != b.blk {
			return cmp.Compare(a.blk, b.blk)
		}
		return cmp.Compare(a.off, b.off)
	})
	for i, e := range idx {
		k, v, _ := record(c.blocks[e.blk], int(e.off))
		if i+1 < len(idx) && e.abbr == idx[i+1].abbr && bytes.Equal(k, key(idx[i+1])) {
			continue
		}
		if err := f(k, v); err != nil {
			return err
		}
	}
	return nil
}

// sortEntry is the position of a chunk's record (block, offset in it) with the abbreviation
// of its key.
type sortEntry struct {
	abbr     uint64
	blk, off uint32
}

// write writes the chunk as a table file, has Pebble ingest it, then records the changelog
// offset of its last record. The file is synced before its ingestion, which Pebble records in
// its manifest (synced) or, when the chunk overlaps the memtable, as a write-ahead log entry
// ahead of the offset's (at-least-once, without a write-ahead log, such an ingestion and the
// offset both become durable with the next flush only): after a crash the recorded offset is
// never ahead of the data (TestPebbleBulkRestoreCrashAtAnyPoint).
func (b *bulkLoad) write(c *bulkChunk) error {
	path, f, err := b.create()
	if err != nil {
		return err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), b.wopts)
	err = c.sorted(func(k, v []byte) error {
		if v == nil {
			return w.Delete(k)
		}
		return w.Set(k, v)
	})
	return b.ingest(path, w, c.last, err)
}

// appendStream appends chunk c (above everything written before) to the open table file,
// opening one when none is, and ingests the file once it holds limit bytes.
func (b *bulkLoad) appendStream(c *bulkChunk) error {
	st := b.stream
	if st == nil {
		path, f, err := b.create()
		if err != nil {
			return err
		}
		st = &bulkStream{w: sstable.NewWriter(objstorageprovider.NewFileWritable(f), b.wopts), path: path}
		b.stream = st
	}
	if err := c.sorted(func(k, v []byte) error {
		if v == nil {
			return st.w.Delete(k)
		}
		return st.w.Set(k, v)
	}); err != nil {
		b.abortStream()
		return err
	}
	st.size += c.size
	st.last = c.last
	if st.size >= b.limit {
		return b.finishStream()
	}
	return nil
}

// finishStream closes the open table file, if any, has Pebble ingest it and records the
// offset of its last record, as write does for a chunk's file.
func (b *bulkLoad) finishStream() error {
	st := b.stream
	if st == nil {
		return nil
	}
	b.stream = nil
	return b.ingest(st.path, st.w, st.last, nil)
}

// abortStream closes the open table file, if any, and deletes it.
func (b *bulkLoad) abortStream() {
	if st := b.stream; st != nil {
		b.stream = nil
		_ = st.w.Close()
		_ = b.fs.Remove(st.path)
	}
}

// create creates the next table file of the restore.
func (b *bulkLoad) create() (string, vfs.File, error) {
	b.seq++
	path := filepath.Join(b.p.dir, fmt.Sprintf("%s%06d.sst", bulkTempPrefix, b.seq))
	f, err := b.fs.Create(path, vfs.WriteCategoryUnspecified)
	return path, f, err
}

// ingest closes table file path's writer w (err: an error writing it, which drops the file),
// has Pebble ingest the file and records last as the offset of the last record restored.
func (b *bulkLoad) ingest(path string, w *sstable.Writer, last int64, err error) error {
	p := b.p
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = p.db.Ingest(context.Background(), []string{path})
	}
	if err != nil {
		_ = b.fs.Remove(path)
		return err
	}
	return p.db.Set(metaOffsetKey, offsetBytes(last), p.wo)
}

// applyBatch writes the chunk through one Pebble batch with its last offset.
func (b *bulkLoad) applyBatch(c *bulkChunk) error {
	p := b.p
	wb := p.db.NewBatch()
	defer wb.Close()
	if err := c.inOrder(func(k, v []byte) error {
		if v == nil {
			return wb.Delete(k, nil)
		}
		return wb.Set(k, v, nil)
	}); err != nil {
		return err
	}
	if err := wb.Set(metaOffsetKey, offsetBytes(c.last), nil); err != nil {
		return err
	}
	return p.db.Apply(wb, p.wo)
}

// errBulkRecordTooLarge is returned for a record of 1 GiB or more (chunk positions are 32-bit).
var errBulkRecordTooLarge = errors.New("record too large for a bulk restore chunk")

// restoreBatch adds a batch of key-value changelog records to the running bulk restore; call
// with p.mu held for writing.
func (b *bulkLoad) restoreBatch(prefix []byte, batch []processor.RestoreRecord) error {
	for _, r := range batch {
		if len(r.Key)+len(r.Value)+len(prefix) >= 1<<30 {
			return errBulkRecordTooLarge
		}
		if err := b.add(prefix, r.Key, r.Value, r.Offset); err != nil {
			return err
		}
	}
	return nil
}
