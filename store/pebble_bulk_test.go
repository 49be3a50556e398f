package store

import (
	"bytes"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/props"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
)

// bulkCtx is the context of a Pebble store with a state directory and an environment with
// 1 MiB memtables (so bulk restore chunks are 1 MiB); it keeps the restore callback.
type bulkCtx struct {
	fakeContext
	dir     string
	env     *pebbleEnv
	eos     bool
	restore processor.StateRestoreCallback
}

func (c *bulkCtx) StateDir() string              { return c.dir }
func (c *bulkCtx) PebbleEnv() storeapi.PebbleEnv { return c.env }
func (c *bulkCtx) AppConfigs() map[string]string {
	if c.eos {
		return map[string]string{props.ProcessingGuaranteeConfig: "exactly_once_v2"}
	}
	return nil
}
func (c *bulkCtx) Register(_ processor.StateStore, cb processor.StateRestoreCallback) error {
	c.restore = cb
	return nil
}

func newBulkCtx(t *testing.T, eos bool) *bulkCtx {
	t.Helper()
	env, err := newPebbleEnv(PebbleOptions{MaxMemTableBytes: MinMemTableBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	return &bulkCtx{dir: t.TempDir(), env: env, eos: eos}
}

// changelogRecords returns n changelog records over keys keys (in random order when shuffle,
// else ascending and distinct), with about 5% tombstones and 2% empty values, and the final
// contents they leave ("key=value", sorted).
func changelogRecords(n, keys int, shuffle bool) ([]processor.RestoreRecord, []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[string][]byte{}
	recs := make([]processor.RestoreRecord, n)
	for i := range recs {
		k := i
		if shuffle {
			k = rng.IntN(keys)
		}
		key := []byte(fmt.Sprintf("k%07d", k))
		var v []byte
		switch r := rng.IntN(100); {
		case r < 5:
			v = nil
		case r < 7:
			v = []byte{}
		default:
			v = make([]byte, 20+rng.IntN(40))
			for j := range v {
				v[j] = 'a' + byte(rng.IntN(26))
			}
		}
		recs[i] = processor.RestoreRecord{Key: key, Value: v, Offset: int64(i)}
		if v == nil {
			delete(model, string(key))
		} else {
			model[string(key)] = v
		}
	}
	var want []string
	for k, v := range model {
		want = append(want, k+"="+string(v))
	}
	slices.Sort(want)
	return recs, want
}

func restoreInBatches(t *testing.T, cb processor.StateRestoreCallback, recs []processor.RestoreRecord) {
	t.Helper()
	for len(recs) > 0 {
		n := min(len(recs), 1000)
		if err := cb(recs[:n]); err != nil {
			t.Fatal(err)
		}
		recs = recs[n:]
	}
}

func contents(t *testing.T, s *pebbleKeyValueStore) []string {
	t.Helper()
	var out []string
	it := s.All()
	defer it.Close()
	for it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func leftoverBulkFiles(t *testing.T, s *pebbleKeyValueStore) []string {
	t.Helper()
	names, err := os.ReadDir(s.db.dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n.Name(), bulkTempPrefix) {
			out = append(out, n.Name())
		}
	}
	return out
}

// A bulk restore leaves the same contents as record-by-record writes (overwrites, tombstones,
// empty values, keys in any order), ingests table files rather than writing the memtable,
// and records the offset of the last record with the data.
func TestPebbleBulkRestoreMatchesRecordWrites(t *testing.T) {
	for _, shuffle := range []bool{true, false} {
		t.Run(fmt.Sprintf("shuffled=%v", shuffle), func(t *testing.T) {
			recs, want := changelogRecords(120_000, 30_000, shuffle)
			ctx := newBulkCtx(t, true)
			s := newPebbleKeyValueStore("kv")
			if err := s.Init(ctx, s); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b, ok := storeapi.FindBulkRestorer(s)
			if !ok {
				t.Fatal("Pebble store is not a storeapi.BulkRestorer")
			}
			if err := b.BeginBulkRestore(); err != nil {
				t.Fatal(err)
			}
			if err := b.BeginBulkRestore(); err == nil {
				t.Fatal("second BeginBulkRestore accepted")
			}
			restoreInBatches(t, ctx.restore, recs)
			if err := b.EndBulkRestore(); err != nil {
				t.Fatal(err)
			}
			if got := contents(t, s); !slices.Equal(got, want) {
				t.Fatalf("bulk restore: %d entries, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
			m := s.db.db.Metrics()
			// About 7 MiB of records in 1 MiB chunks: several ingested tables.
			if m.Ingest.Count < 4 {
				t.Fatalf("%d ingestions, want one per full chunk", m.Ingest.Count)
			}
			if !shuffle && m.Levels[6].TablesCount < int64(m.Ingest.Count) {
				// Keys in order never overlap: every ingested table goes straight to the last level.
				t.Fatalf("ascending keys: %d tables in the last level after %d ingestions\n%s", m.Levels[6].TablesCount, m.Ingest.Count, m)
			}
			if off, found, err := s.CommittedOffset(); err != nil || !found || off != int64(len(recs)-1) {
				t.Fatalf("CommittedOffset = %d %v %v, want %d", off, found, err, len(recs)-1)
			}
			if left := leftoverBulkFiles(t, s); len(left) != 0 {
				t.Fatalf("table files left: %v", left)
			}
			// The record-by-record path gives the same contents.
			ctx2 := newBulkCtx(t, false)
			s2 := newPebbleKeyValueStore("kv")
			if err := s2.Init(ctx2, s2); err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			restoreInBatches(t, ctx2.restore, recs)
			if got := contents(t, s2); !slices.Equal(got, want) {
				t.Fatalf("record writes: %d entries, want %d", len(got), len(want))
			}
		})
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A short bulk restore (less than a quarter chunk) goes through one batch; an aborted or
// unfinished one keeps what was written, leaves no table file behind and the store usable.
func TestPebbleBulkRestoreShortAbortAndClose(t *testing.T) {
	ctx := newBulkCtx(t, false)
	s := newPebbleKeyValueStore("kv")
	if err := s.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	recs, want := changelogRecords(500, 100, true)
	if err := s.BeginBulkRestore(); err != nil {
		t.Fatal(err)
	}
	restoreInBatches(t, ctx.restore, recs)
	if got := contents(t, s); len(got) != 0 {
		t.Fatalf("%d entries visible before EndBulkRestore of a short restore", len(got))
	}
	if err := s.EndBulkRestore(); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, s); !slices.Equal(got, want) {
		t.Fatalf("short bulk restore: %d entries, want %d", len(got), len(want))
	}
	if n := s.db.db.Metrics().Ingest.Count; n != 0 {
		t.Fatalf("%d ingestions for a short restore", n)
	}

	// Aborted after several chunks: a prefix stays, nothing is left over, writes work.
	long, _ := changelogRecords(100_000, 1_000_000, false)
	if err := s.BeginBulkRestore(); err != nil {
		t.Fatal(err)
	}
	restoreInBatches(t, ctx.restore, long)
	s.AbortBulkRestore()
	s.AbortBulkRestore() // no bulk restore running: nothing happens
	if left := leftoverBulkFiles(t, s); len(left) != 0 {
		t.Fatalf("table files left after abort: %v", left)
	}
	if err := s.Put([]byte("after"), []byte("abort")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Get([]byte("after")); err != nil || !ok || !bytes.Equal(v, []byte("abort")) {
		t.Fatalf("Get after abort = %q %v %v", v, ok, err)
	}
	if got := contents(t, s); len(got) <= len(want) || len(got) >= len(want)+len(long) {
		t.Fatalf("after abort: %d entries, want the short restore's %d plus a proper prefix of %d", len(got), len(want), len(long))
	}

	// Closed in the middle of a bulk restore: no table file is left and it reopens.
	if err := s.BeginBulkRestore(); err != nil {
		t.Fatal(err)
	}
	restoreInBatches(t, ctx.restore, long)
	dir := s.db.dir
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); slices.ContainsFunc(left, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), bulkTempPrefix) }) {
		t.Fatalf("table files left after close: %v", left)
	}
	// A table file a crash left before its ingestion: Pebble opens past it, the next bulk
	// restore deletes it.
	if err := os.WriteFile(dir+"/"+bulkTempPrefix+"000009.sst", []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = newPebbleKeyValueStore("kv")
	if err := s.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.BeginBulkRestore(); err != nil {
		t.Fatal(err)
	}
	if left := leftoverBulkFiles(t, s); len(left) != 0 {
		t.Fatalf("table files left after a new bulk restore began: %v", left)
	}
	if err := s.EndBulkRestore(); err != nil {
		t.Fatal(err)
	}
}

// sorted orders keys as bytes.Compare does whatever their lengths and shared prefixes (the
// abbreviations it sorts by first pad short keys with zeros) and keeps the last record of each.
func TestBulkChunkSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0, 1, 'a', 0xff}
	for round := range 50 {
		c := newBulkChunk()
		b := &bulkLoad{limit: 1 << 30, cur: c}
		prefix := []byte{nsKV, 'p', 'q'}[:1+round%3]
		type rec struct {
			key []byte
			val string
		}
		var recs []rec
		for i := range 300 + rng.IntN(300) {
			k := make([]byte, rng.IntN(12))
			for j := range k {
				k[j] = alphabet[rng.IntN(len(alphabet))]
			}
			if round%2 == 0 && len(k) > 3 {
				k = append([]byte("common-prefix-"), k...)
			}
			v := fmt.Sprint(i)
			recs = append(recs, rec{append(slices.Clone(prefix), k...), v})
			if err := b.add(prefix, k, []byte(v), int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		last := map[string]string{}
		for _, r := range recs {
			last[string(r.key)] = r.val
		}
		var want []string
		for k, v := range last {
			want = append(want, k+"="+v)
		}
		slices.SortFunc(want, func(x, y string) int {
			return bytes.Compare([]byte(x[:strings.LastIndexByte(x, '=')]), []byte(y[:strings.LastIndexByte(y, '=')]))
		})
		var got []string
		if err := c.sorted(func(k, v []byte) error {
			got = append(got, string(k)+"="+string(v))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: sorted\n got %q\nwant %q", round, got, want)
		}
	}
}

// A chunk keeps records across several blocks, a record longer than a block in a block of its
// own, and gives them back in changelog order as they were added (a nil value as a tombstone,
// an empty value as empty); it knows whether the keys arrived in strictly ascending order,
// and is the same after a reset.
func TestBulkChunkBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := newBulkChunk()
	for round := range 2 {
		type rec struct{ key, val []byte }
		var recs []rec
		prefix := []byte{nsKV}
		for i := range 40_000 {
			k := fmt.Appendf(nil, "k%08d", i)
			var v []byte
			switch r := rng.IntN(100); {
			case i == 20_000:
				v = bytes.Repeat([]byte{'x'}, 3*bulkBlockSize+7) // longer than a block
			case r < 5:
				v = nil
			case r < 8:
				v = []byte{}
			default:
				v = bytes.Repeat([]byte{byte('a' + i%26)}, rng.IntN(300))
			}
			c.add(prefix, k, v, int64(i))
			recs = append(recs, rec{append(slices.Clone(prefix), k...), v})
		}
		if len(c.blocks) < 5 || !c.ascending || c.n != len(recs) || c.last != int64(len(recs)-1) {
			t.Fatalf("round %d: %d blocks, ascending %v, %d records, last offset %d", round, len(c.blocks), c.ascending, c.n, c.last)
		}
		i := 0
		if err := c.inOrder(func(k, v []byte) error {
			r := recs[i]
			if !bytes.Equal(k, r.key) || !bytes.Equal(v, r.val) || (v == nil) != (r.val == nil) {
				t.Fatalf("round %d: record %d = %q (%d bytes, nil %v), want %q (%d bytes, nil %v)", round, i, k, len(v), v == nil, r.key, len(r.val), r.val == nil)
			}
			i++
			return nil
		}); err != nil || i != len(recs) {
			t.Fatalf("round %d: inOrder gave %d records (%v), want %d", round, i, err, len(recs))
		}
		c.add(prefix, recs[len(recs)-1].key[len(prefix):], []byte("again"), int64(len(recs)))
		if c.ascending {
			t.Fatalf("round %d: a repeated key leaves the chunk ascending", round)
		}
		c.reset()
		if c.n != 0 || c.size != 0 || len(c.blocks) != 0 || !c.ascending {
			t.Fatalf("round %d: after reset: %d records, %d bytes, %d blocks, ascending %v", round, c.n, c.size, len(c.blocks), c.ascending)
		}
	}
}

// While keys come in order, a bulk restore appends them to an open table file from an eighth
// of its chunk size on (at least 1 MiB) and ingests that file once it holds a chunk's worth,
// and at the end, the last records too when they lie above all written before (in any order
// among themselves): as many files as with whole chunks, every one in the last level (they
// overlap nothing). Keys out of order fill whole chunks.
func TestPebbleBulkRestoreStreamsOrderedKeys(t *testing.T) {
	for _, tc := range []struct {
		name    string
		shuffle bool
		tail    bool // records of keys above the others, out of order, at the end
	}{{"ordered", false, false}, {"ordered then a tail above", false, true}, {"shuffled", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := newPebbleEnv(PebbleOptions{MaxMemTableBytes: 4 << 20, MemTableBudgetBytes: 4 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			ctx := &bulkCtx{dir: t.TempDir(), env: env}
			s := newPebbleKeyValueStore("kv")
			if err := s.Init(ctx, s); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			recs, want := changelogRecords(150_000, 150_000, tc.shuffle) // ~7 MiB: two 4 MiB chunks
			if tc.tail {
				last := map[string]string{}
				for i := range 3000 {
					k := fmt.Sprintf("z%04d", (i*7919)%500)
					v := fmt.Sprint(i)
					recs = append(recs, processor.RestoreRecord{Key: []byte(k), Value: []byte(v), Offset: int64(len(recs))})
					last[k] = v
				}
				for k, v := range last {
					want = append(want, k+"="+v)
				}
				slices.Sort(want)
			}
			if err := s.BeginBulkRestore(); err != nil {
				t.Fatal(err)
			}
			restoreInBatches(t, ctx.restore, recs)
			b := s.db.bulk
			if err := b.wait(); err != nil {
				t.Fatal(err)
			}
			if streamed := b.stream != nil && b.stream.size > 0; streamed == tc.shuffle {
				t.Fatalf("before the end: records appended to an open table file: %v", streamed)
			}
			if err := s.EndBulkRestore(); err != nil {
				t.Fatal(err)
			}
			if got := contents(t, s); !slices.Equal(got, want) {
				t.Fatalf("%d entries, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
			}
			if off, found, err := s.CommittedOffset(); err != nil || !found || off != int64(len(recs)-1) {
				t.Fatalf("CommittedOffset = %d %v %v, want %d", off, found, err, len(recs)-1)
			}
			if left := leftoverBulkFiles(t, s); len(left) != 0 {
				t.Fatalf("table files left: %v", left)
			}
			m := s.db.db.Metrics()
			if m.Ingest.Count != 2 {
				t.Fatalf("%d ingestions, want 2 (a 4 MiB chunk's worth, then the rest)", m.Ingest.Count)
			}
			if tc.shuffle {
				return
			}
			if m.Levels[6].TablesCount != 2 {
				t.Fatalf("keys in order: %d tables in the last level, want both\n%s", m.Levels[6].TablesCount, m)
			}
			// The last records are in the last table file, not in the memtable.
			tables, err := s.db.db.SSTables()
			if err != nil {
				t.Fatal(err)
			}
			var largest []byte
			for _, tb := range tables[6] {
				if k := tb.Largest.UserKey; bytes.Compare(k, largest) > 0 {
					largest = k
				}
			}
			wantLast := append([]byte{nsKV}, recs[len(recs)-1].Key...)
			if tc.tail {
				wantLast = append([]byte{nsKV}, "z0499"...)
			}
			if !bytes.Equal(largest, wantLast) {
				t.Fatalf("largest key of the last level %q, want %q", largest, wantLast)
			}
		})
	}
}
