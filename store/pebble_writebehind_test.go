package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/kstreams-go/kstreams/processor"
)

// Under at-least-once a Pebble store's writes wait in its write-behind batch (pebbleDB.pend)
// until Flush, a restore, an iterator or the batch's bound applies them; reads see them at
// once.

// openWriteBehind opens an at-least-once Pebble key-value store in dir with env.
func openWriteBehind(t *testing.T, dir string, env *pebbleEnv) (*pebbleKeyValueStore, *bulkCtx) {
	t.Helper()
	ctx := &bulkCtx{dir: dir, env: env}
	s := newPebbleKeyValueStore("wb")
	if err := s.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s, ctx
}

func newWriteBehindEnv(t *testing.T) *pebbleEnv {
	t.Helper()
	env, err := newPebbleEnv(PebbleOptions{MaxMemTableBytes: MinMemTableBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Close() })
	return env
}

// inDB returns key's value in the store's database itself, not counting pending writes.
func inDB(t *testing.T, s *pebbleKeyValueStore, key string) (string, bool) {
	t.Helper()
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	v, c, err := s.db.db.Get(append([]byte{nsKV}, key...))
	if errors.Is(err, pebble.ErrNotFound) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return string(v), true
}

func getStr(t *testing.T, s *pebbleKeyValueStore, key string) (string, bool) {
	t.Helper()
	v, ok, err := s.Get([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(v), ok
}

func TestPebbleWriteBehindReadsBeforeFlush(t *testing.T) {
	s, _ := openWriteBehind(t, t.TempDir(), newWriteBehindEnv(t))
	defer s.Close()
	mustPut(t, s, "a", "1")
	mustPut(t, s, "b", "2")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "a", "3")    // overwrites a flushed key
	mustPut(t, s, "b", "null") // deletes one
	mustPut(t, s, "c", "4")
	mustPut(t, s, "c", "5") // overwrites a pending write
	if err := s.PutAll([]KeyValue[[]byte, []byte]{{Key: []byte("d"), Value: []byte("6")}, {Key: []byte("e"), Value: []byte{}}}); err != nil {
		t.Fatal(err)
	}
	// The database still holds what the flush applied: the writes since are pending.
	if v, ok := inDB(t, s, "a"); !ok || v != "1" {
		t.Fatalf("database a = %q %v, want the flushed 1", v, ok)
	}
	if _, ok := inDB(t, s, "c"); ok {
		t.Fatal("c reached the database before the flush")
	}
	want := map[string]string{"a": "3", "c": "5", "d": "6", "e": ""}
	check := func(when string) {
		t.Helper()
		for _, k := range []string{"a", "b", "c", "d", "e"} {
			v, ok := getStr(t, s, k)
			w, wok := want[k]
			if ok != wok || v != w {
				t.Fatalf("%s: Get(%s) = %q %v, want %q %v", when, k, v, ok, w, wok)
			}
		}
		// A stored empty value is not null.
		if v, ok, _ := s.Get([]byte("e")); !ok || v == nil {
			t.Fatalf("%s: Get(e) = %v %v, want a non-nil empty value", when, v, ok)
		}
	}
	check("pending")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if v, ok := inDB(t, s, "c"); !ok || v != "5" {
		t.Fatalf("after flush: database c = %q %v, want 5", v, ok)
	}
	if _, ok := inDB(t, s, "b"); ok {
		t.Fatal("after flush: the delete of b did not reach the database")
	}
	check("flushed")
}

// Range scans see the pending writes merged with the database in key order, deletes honoured,
// forward, backward and by prefix.
func TestPebbleWriteBehindRangeMergesPending(t *testing.T) {
	s, _ := openWriteBehind(t, t.TempDir(), newWriteBehindEnv(t))
	defer s.Close()
	for _, k := range []string{"k1", "k3", "k5", "k7"} {
		mustPut(t, s, k, "old"+k[1:])
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "k3", "null") // delete a flushed key
	mustPut(t, s, "k5", "new5") // overwrite one
	mustPut(t, s, "k2", "new2") // new keys between
	mustPut(t, s, "k6", "new6")
	mustPut(t, s, "k6", "null") // a pending write deleted again
	mustPut(t, s, "k8", "new8")
	want := []string{"k1=old1", "k2=new2", "k5=new5", "k7=old7", "k8=new8"}
	if got := keysOf(t, s.All()); !slices.Equal(got, want) {
		t.Fatalf("All = %q, want %q", got, want)
	}
	// The iterator applied the batch; more pending writes after it.
	mustPut(t, s, "k4", "new4")
	mustPut(t, s, "k7", "null")
	if got, want := keysOf(t, s.Range([]byte("k2"), []byte("k7"))), []string{"k2=new2", "k4=new4", "k5=new5"}; !slices.Equal(got, want) {
		t.Fatalf("Range(k2, k7) = %q, want %q", got, want)
	}
	mustPut(t, s, "k0", "new0")
	if got, want := keysOf(t, s.ReverseAll()), []string{"k8=new8", "k5=new5", "k4=new4", "k2=new2", "k1=old1", "k0=new0"}; !slices.Equal(got, want) {
		t.Fatalf("ReverseAll = %q, want %q", got, want)
	}
	mustPut(t, s, "k9", "new9")
	mustPut(t, s, "k8", "null")
	if got, want := keysOf(t, s.PrefixScan([]byte("k"))), []string{"k0=new0", "k1=old1", "k2=new2", "k4=new4", "k5=new5", "k9=new9"}; !slices.Equal(got, want) {
		t.Fatalf("PrefixScan(k) = %q, want %q", got, want)
	}
	if n := s.ApproximateNumEntries(); n != 6 {
		t.Fatalf("ApproximateNumEntries = %d, want 6", n)
	}
}

// An iterator reads a snapshot: writes after it opened, a batch applied by its bound among
// them, are not seen by it.
func TestPebbleWriteBehindIteratorSnapshot(t *testing.T) {
	s, _ := openWriteBehind(t, t.TempDir(), newWriteBehindEnv(t))
	defer s.Close()
	mustPut(t, s, "a", "1")
	mustPut(t, s, "b", "2")
	it := s.All()
	defer it.Close()
	if !it.Next() || string(it.Key()) != "a" || string(it.Value()) != "1" {
		t.Fatalf("first entry %q=%q", it.Key(), it.Value())
	}
	mustPut(t, s, "b", "changed")
	mustPut(t, s, "c", "3")
	fillPastBound(t, s, "z")
	var got []string
	for it.Next() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"b=2"}) {
		t.Fatalf("rest of the iteration = %q, want [b=2]", got)
	}
}

// fillPastBound writes distinct keys prefix‖n until a write applied the write-behind batch
// (it is empty again), and returns how many it wrote.
func fillPastBound(t *testing.T, s *pebbleKeyValueStore, prefix string) int {
	t.Helper()
	val := make([]byte, 100)
	for n := 1; ; n++ {
		if err := s.Put([]byte(prefix+strconv.Itoa(n)), val); err != nil {
			t.Fatal(err)
		}
		s.db.mu.RLock()
		empty := len(s.db.idx) == 0 && s.db.pend.b.Empty()
		s.db.mu.RUnlock()
		if empty {
			return n
		}
		if n > 1_000_000 {
			t.Fatal("the write-behind batch was never applied")
		}
	}
}

// The batch is applied once its estimated memtable size passes the bound (a quarter of the
// 1 MiB memtable here), without a flush: memory stays bounded however long the commit interval.
func TestPebbleWriteBehindAppliedAtBound(t *testing.T) {
	s, _ := openWriteBehind(t, t.TempDir(), newWriteBehindEnv(t))
	defer s.Close()
	if got := s.db.pendLimit; got != uint64(MinMemTableBytes/4) {
		t.Fatalf("pendLimit = %d, want %d", got, MinMemTableBytes/4)
	}
	n := fillPastBound(t, s, "k")
	// A write of key k<n> (3-5 bytes with the namespace byte) and a 100-byte value takes 106-108
	// bytes of batch (kind, lengths, key, value) and counts 200 of memtable overhead: with the
	// batch header (12 bytes), the bound of 262 144 bytes is reached at the 852nd write.
	if n != 852 {
		t.Fatalf("applied after %d writes, want 852", n)
	}
	for _, k := range []string{"k1", "k852"} {
		if _, ok := inDB(t, s, k); !ok {
			t.Fatalf("%s is not in the database", k)
		}
	}
	mustPut(t, s, "k853", "x")
	if _, ok := inDB(t, s, "k853"); ok {
		t.Fatal("the write after the bound's apply went to the database directly")
	}
	if v, ok := getStr(t, s, "k853"); !ok || v != "x" {
		t.Fatalf("Get(k853) = %q %v", v, ok)
	}
}

// A flushed store keeps its data across a close and reopen. A close without a flush (a dirty
// close) drops the writes since the last flush: the changelog restores them.
func TestPebbleWriteBehindFlushReopen(t *testing.T) {
	dir, env := t.TempDir(), newWriteBehindEnv(t)
	s, _ := openWriteBehind(t, dir, env)
	mustPut(t, s, "a", "1")
	mustPut(t, s, "b", "2")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "a", "3")
	mustPut(t, s, "b", "null")
	mustPut(t, s, "c", "4")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "d", "dropped")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _ = openWriteBehind(t, dir, env)
	defer s.Close()
	if got, want := keysOf(t, s.All()), []string{"a=3", "c=4"}; !slices.Equal(got, want) {
		t.Fatalf("after reopen: %q, want %q", got, want)
	}
}

// A restore batch writes to the database directly: the pending writes are applied first, so
// the restored records land after them.
func TestPebbleWriteBehindRestoreAfterPending(t *testing.T) {
	s, ctx := openWriteBehind(t, t.TempDir(), newWriteBehindEnv(t))
	defer s.Close()
	mustPut(t, s, "a", "pending")
	mustPut(t, s, "b", "pending")
	err := ctx.restore([]processor.RestoreRecord{
		{Key: []byte("a"), Value: []byte("restored"), Offset: 41},
		{Key: []byte("c"), Value: []byte("restored"), Offset: 42},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keysOf(t, s.All()), []string{"a=restored", "b=pending", "c=restored"}; !slices.Equal(got, want) {
		t.Fatalf("after restore: %q, want %q", got, want)
	}
	if off, ok, err := s.CommittedOffset(); err != nil || !ok || off != 42 {
		t.Fatalf("CommittedOffset = %d %v %v, want 42", off, ok, err)
	}
}

// Interactive queries read (Get, and iterators that apply the batch) while the stream thread
// writes; run with -race. Each reader sees, per key, counts that never go backwards.
func TestPebbleWriteBehindConcurrentReads(t *testing.T) {
	s, _ := openWriteBehind(t, t.TempDir(), newWriteBehindEnv(t))
	defer s.Close()
	const keys, rounds = 50, 400
	key := func(i int) []byte { return []byte(fmt.Sprintf("key%02d", i)) }
	count := func(v []byte) uint64 {
		if len(v) != 8 {
			t.Errorf("value of %d bytes", len(v))
			return 0
		}
		return binary.BigEndian.Uint64(v)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(iterate bool) {
			defer wg.Done()
			seen := make([]uint64, keys)
			for {
				select {
				case <-done:
					return
				default:
				}
				if iterate {
					it := s.All()
					for it.Next() {
						i, err := strconv.Atoi(string(it.Key()[3:]))
						if err != nil {
							errs <- err
							return
						}
						c := count(it.Value())
						if c < seen[i] {
							errs <- fmt.Errorf("iterator: key %d went back from %d to %d", i, seen[i], c)
							return
						}
						seen[i] = c
					}
					if err := it.Close(); err != nil {
						errs <- err
						return
					}
					continue
				}
				for i := 0; i < keys; i++ {
					v, ok, err := s.Get(key(i))
					if err != nil {
						errs <- err
						return
					}
					if !ok {
						continue
					}
					if c := count(v); c < seen[i] {
						errs <- fmt.Errorf("Get: key %d went back from %d to %d", i, seen[i], c)
						return
					} else {
						seen[i] = c
					}
				}
			}
		}(r == 1)
	}
	val := make([]byte, 8)
	for round := 1; round <= rounds; round++ {
		for i := 0; i < keys; i++ {
			binary.BigEndian.PutUint64(val, uint64(round))
			if err := s.Put(key(i), val); err != nil {
				t.Fatal(err)
			}
		}
		if round%100 == 0 {
			if err := s.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := 0; i < keys; i++ {
		v, ok, err := s.Get(key(i))
		if err != nil || !ok || count(v) != rounds {
			t.Fatalf("final Get(%s) = %v %v %v, want %d", key(i), v, ok, err, rounds)
		}
	}
}

// A window store's writes wait in the batch too; dropping expired segments (a range deletion
// on the database) applies them first, and the fetches that follow see the live windows only.
func TestPebbleWriteBehindWindowSegments(t *testing.T) {
	const retention, interval = 100, 50
	w := newPebbleWindowStore("w", retention, interval, 10, false)
	if err := w.Init(&bulkCtx{dir: t.TempDir(), env: newWriteBehindEnv(t)}, w); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	put := func(k string, start int64, v string) {
		t.Helper()
		if err := w.Put([]byte(k), []byte(v), start); err != nil {
			t.Fatal(err)
		}
	}
	put("a", 0, "a0")
	put("a", 60, "a60")
	put("b", 60, "b60")
	if v, ok, err := w.Fetch([]byte("a"), 0); err != nil || !ok || string(v) != "a0" {
		t.Fatalf("Fetch(a, 0) = %q %v %v before the flush", v, ok, err)
	}
	put("a", 200, "a200") // expires the segment of 0 and 60's (ids 0 and 1)
	if got := w.Segments(); !slices.Equal(got, []int64{4}) {
		t.Fatalf("segments %v, want [4]", got)
	}
	var got []string
	it := w.FetchAll(0, 1000)
	for it.Next() {
		got = append(got, fmt.Sprintf("%s@%d=%s", it.Key().Key, it.Key().Window.Start, it.Value()))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"a@200=a200"}) {
		t.Fatalf("FetchAll = %q, want [a@200=a200]", got)
	}
	if _, ok, _ := w.Fetch([]byte("b"), 60); ok {
		t.Fatal("a window of a dropped segment is still read")
	}
}
