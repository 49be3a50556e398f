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
// are held, as a memtable and the one being flushed would be.
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
	limit int // bytes of keys and values per chunk
	wopts sstable.WriterOptions
	fs    vfs.FS
	cur   *bulkChunk
	spare *bulkChunk
	// done receives the result of the chunk being written; nil when none is.
	done chan error
	err  error
	seq  int
}

// bulkChunk holds restored records: keys (with the space prefix) and values in data, in
// changelog order.
type bulkChunk struct {
	data []byte
	ents []bulkEntry
	last int64 // changelog offset of the last record
	// idx and out are sorted's scratch space, kept from chunk to chunk.
	idx []sortEntry
	out []bulkEntry
}

type bulkEntry struct {
	key    uint32 // offset of the key in data
	keyLen uint32
	valLen int32 // -1: tombstone; the value follows the key
}

func (c *bulkChunk) key(e bulkEntry) []byte { return c.data[e.key : e.key+e.keyLen] }

func (c *bulkChunk) value(e bulkEntry) []byte {
	v := e.key + e.keyLen
	return c.data[v : v+uint32(e.valLen)]
}

func (c *bulkChunk) reset() {
	c.data, c.ents = c.data[:0], c.ents[:0]
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
	p.bulk = &bulkLoad{p: p, limit: int(min(p.opts.MemTableSize, 1<<30)),
		wopts: p.opts.MakeWriterOptions(0, p.db.TableFormat()), fs: p.opts.FS, cur: &bulkChunk{}}
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
// they are dropped. Either way it waits for the chunk being written.
func (p *pebbleDB) endBulk(write bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.bulk
	if b == nil {
		return nil
	}
	p.bulk = nil
	err := b.wait()
	if !write || err != nil {
		return err
	}
	c := b.cur
	if len(c.ents) == 0 {
		return nil
	}
	if len(c.data) < b.limit/4 {
		// A short tail goes through the memtable: a small table file would only add a level-0
		// file or a compaction.
		return b.applyBatch(c)
	}
	return b.write(c)
}

// add appends a record; call with p.mu held for writing.
func (b *bulkLoad) add(prefix, key, value []byte, offset int64) error {
	if b.err != nil {
		return b.err
	}
	c := b.cur
	if need := len(c.data) + len(prefix) + len(key) + len(value); need > cap(c.data) {
		// Grow by doubling up to the chunk size (plus room for the record that fills it), not
		// by append's 1.25 steps past it: less garbage and no capacity beyond the chunk.
		n := min(max(2*cap(c.data), 64<<10), b.limit+b.limit/16)
		c.data = append(make([]byte, 0, max(n, need)), c.data...)
	}
	e := bulkEntry{key: uint32(len(c.data)), keyLen: uint32(len(prefix) + len(key)), valLen: -1}
	c.data = append(append(c.data, prefix...), key...)
	if value != nil {
		e.valLen = int32(len(value))
		c.data = append(c.data, value...)
	}
	c.ents = append(c.ents, e)
	c.last = offset
	if len(c.data) >= b.limit {
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
	b.cur = b.spare
	if b.cur == nil {
		b.cur = &bulkChunk{data: make([]byte, 0, cap(full.data)), ents: make([]bulkEntry, 0, cap(full.ents))}
	}
	b.spare = nil
	b.done = make(chan error, 1)
	go func(done chan<- error) {
		err := b.write(full)
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

// sorted returns the chunk's entries in key order, the last record of each key only. A chunk
// whose keys arrived in strictly ascending order is returned as it is.
func (c *bulkChunk) sorted() []bulkEntry {
	ascending := true
	for i := 1; i < len(c.ents); i++ {
		if bytes.Compare(c.key(c.ents[i-1]), c.key(c.ents[i])) >= 0 {
			ascending = false
			break
		}
	}
	if ascending {
		return c.ents
	}
	// Sorting compares an 8-byte abbreviation of each key first (the bytes after the prefix
	// every key of the chunk shares, as a big-endian number) held in the sorted array itself:
	// comparing the keys in the chunk instead cost two cache misses per comparison, most of a
	// restore's CPU when keys arrive in random order.
	common := len(c.key(c.ents[0]))
	first := c.key(c.ents[0])
	for _, e := range c.ents[1:] {
		k := c.key(e)
		n := min(common, len(k))
		i := 0
		for i < n && k[i] == first[i] {
			i++
		}
		common = i
	}
	idx := slices.Grow(c.idx[:0], len(c.ents))[:len(c.ents)]
	for i, e := range c.ents {
		var ab [8]byte
		copy(ab[:], c.key(e)[common:])
		idx[i] = sortEntry{abbr: binary.BigEndian.Uint64(ab[:]), i: int32(i)}
	}
	// Ties keep changelog order, so the last record of a key is the last of its run.
	slices.SortFunc(idx, func(a, b sortEntry) int {
		if a.abbr != b.abbr {
			return cmp.Compare(a.abbr, b.abbr)
		}
		if r := bytes.Compare(c.key(c.ents[a.i]), c.key(c.ents[b.i])); r != 0 {
			return r
		}
		return cmp.Compare(a.i, b.i)
	})
	out := slices.Grow(c.out[:0], len(idx))
	for i, j := range idx {
		if i+1 < len(idx) && j.abbr == idx[i+1].abbr && bytes.Equal(c.key(c.ents[j.i]), c.key(c.ents[idx[i+1].i])) {
			continue
		}
		out = append(out, c.ents[j.i])
	}
	c.idx, c.out = idx, out
	return out
}

// sortEntry is a chunk entry's position with the abbreviation of its key.
type sortEntry struct {
	abbr uint64
	i    int32
}

// write writes the chunk as a table file, has Pebble ingest it, then records the changelog
// offset of its last record. The file is synced before its ingestion, which Pebble records in
// its manifest (synced) or, when the chunk overlaps the memtable, as a write-ahead log entry
// ahead of the offset's (at-least-once, without a write-ahead log, such an ingestion and the
// offset both become durable with the next flush only): after a crash the recorded offset is
// never ahead of the data (TestPebbleBulkRestoreCrashAtAnyPoint).
func (b *bulkLoad) write(c *bulkChunk) error {
	p := b.p
	b.seq++
	path := filepath.Join(p.dir, fmt.Sprintf("%s%06d.sst", bulkTempPrefix, b.seq))
	f, err := b.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), b.wopts)
	for _, e := range c.sorted() {
		if e.valLen < 0 {
			err = w.Delete(c.key(e))
		} else {
			err = w.Set(c.key(e), c.value(e))
		}
		if err != nil {
			break
		}
	}
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
	return p.db.Set(metaOffsetKey, offsetBytes(c.last), p.wo)
}

// applyBatch writes the chunk through one Pebble batch with its last offset.
func (b *bulkLoad) applyBatch(c *bulkChunk) error {
	p := b.p
	wb := p.db.NewBatch()
	defer wb.Close()
	for _, e := range c.ents {
		var err error
		if e.valLen < 0 {
			err = wb.Delete(c.key(e), nil)
		} else {
			err = wb.Set(c.key(e), c.value(e), nil)
		}
		if err != nil {
			return err
		}
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
