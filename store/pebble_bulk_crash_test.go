package store

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/kstreams-go/kstreams/processor"
)

// crashableFS is a crashable in-memory file system whose crash clones wait for hard links in
// flight. Pebble's MemFS.Link takes its clone lock for reading twice in one call; a CrashClone
// that asks for the lock between the two (a bulk restore's background ingest links its table
// file while the test crash-clones) blocks the second read lock behind it, and both wait for
// good.
type crashableFS struct {
	*vfs.MemFS
	links sync.RWMutex // held for reading by Link, for writing by crashClone
}

// Link implements vfs.FS.
func (fs *crashableFS) Link(oldname, newname string) error {
	fs.links.RLock()
	defer fs.links.RUnlock()
	return fs.MemFS.Link(oldname, newname)
}

// crashClone returns the file system as a power loss now would leave it (only what was synced).
func (fs *crashableFS) crashClone() *vfs.MemFS {
	fs.links.Lock()
	defer fs.links.Unlock()
	return fs.MemFS.CrashClone(vfs.CrashCloneCfg{})
}

// openCrashStore opens store "kv" under exactly-once with synced writes in fs at /state, with
// memtables (and bulk restore chunks) of memtable bytes; closeAll closes the store and its
// environment.
func openCrashStore(t *testing.T, fs vfs.FS, memtable int64) (ctx *bulkCtx, s *pebbleKeyValueStore, closeAll func()) {
	t.Helper()
	env, err := newPebbleEnv(PebbleOptions{MaxMemTableBytes: memtable, MemTableBudgetBytes: memtable, FS: fs, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx = &bulkCtx{dir: "/state", env: env, eos: true}
	s = newPebbleKeyValueStore("kv")
	if err := s.Init(ctx, s); err != nil {
		env.Close()
		t.Fatal(err)
	}
	return ctx, s, func() { s.Close(); env.Close() }
}

// bulkCrashState opens store "kv" (exactly-once) in fs, resumes the restore after the offset
// committed with its data (as a bulk restore when bulk: overwrites and tombstones of keys the
// store holds), and returns the final contents and the offset it resumed after.
func bulkCrashState(t *testing.T, fs vfs.FS, memtable int64, recs []processor.RestoreRecord, bulk bool) ([]string, int64) {
	t.Helper()
	ctx, s, closeAll := openCrashStore(t, fs, memtable)
	defer closeAll()
	from := int64(-1)
	if off, found, err := s.CommittedOffset(); err != nil {
		t.Fatal(err)
	} else if found {
		from = off
	}
	if bulk {
		if err := s.BeginBulkRestore(); err != nil {
			t.Fatal(err)
		}
	}
	restoreInBatches(t, ctx.restore, recs[from+1:])
	if bulk {
		if err := s.EndBulkRestore(); err != nil {
			t.Fatal(err)
		}
	}
	return contents(t, s), from
}

// A power loss at any point of an exactly-once bulk restore (SyncWrites, so that committed
// offsets are durable) leaves a store whose committed offset does not run ahead of its data:
// resuming the restore after that offset (record by record, or as a bulk restore over the data
// held) gives the changelog's final contents. With keys
// already in the memtable when the bulk restore begins (a restore batch before it), Pebble
// ingests the overlapping chunks as flushables recorded in the write-ahead log, not the
// manifest. Keys in order go to a table file kept open over several chunks (2 MiB ones here,
// handed over from 1 MiB on), ingested every 2 MiB.
func TestPebbleBulkRestoreCrashAtAnyPoint(t *testing.T) {
	for _, tc := range []struct {
		name     string
		warm     bool
		ordered  bool
		n        int
		memtable int64
	}{
		{"memtable=false", false, false, 60_000, MinMemTableBytes},
		{"memtable=true", true, false, 60_000, MinMemTableBytes},
		{"ordered", false, true, 120_000, 2 * MinMemTableBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := 20_000
			if tc.ordered {
				keys = tc.n
			}
			recs, want := changelogRecords(tc.n, keys, !tc.ordered)
			warm := tc.warm
			fs := &crashableFS{MemFS: vfs.NewCrashableMem()}
			// A state directory that exists from before (its entries synced): a power loss only
			// loses what the store did not sync.
			if err := fs.MkdirAll("/state/pebble/kv", 0o755); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{"/", "/state", "/state/pebble", "/state/pebble/kv"} {
				f, err := fs.OpenDir(d)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Sync(); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			ctx, s, closeAll := openCrashStore(t, fs, tc.memtable)
			defer closeAll()
			rest := recs
			if warm {
				restoreInBatches(t, ctx.restore, rest[:1000])
				rest = rest[1000:]
			}
			if err := s.BeginBulkRestore(); err != nil {
				t.Fatal(err)
			}
			var clones []*vfs.MemFS
			for i := 0; len(rest) > 0; i++ {
				n := min(len(rest), 1000)
				if err := ctx.restore(rest[:n]); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
				if i%5 == 0 {
					clones = append(clones, fs.crashClone())
				}
			}
			if err := s.EndBulkRestore(); err != nil {
				t.Fatal(err)
			}
			clones = append(clones, fs.crashClone())
			if m := s.db.db.Metrics(); m.Ingest.Count < 3 {
				t.Fatalf("%d ingestions: the restore did not run as a bulk restore", m.Ingest.Count)
			}
			resumed := 0 // crashes after which the restore resumed from the middle
			for i, c := range clones {
				got, from := bulkCrashState(t, c, tc.memtable, recs, i%2 == 1)
				if from > -1 && from < int64(len(recs)-1) {
					resumed++
				}
				if !slices.Equal(got, want) {
					t.Fatalf("crash %d: resumed after offset %d: %d entries, want %d (first difference at %d)",
						i, from, len(got), len(want), firstDiff(got, want))
				}
			}
			if resumed == 0 {
				t.Fatal("no crash left a committed offset in the middle of the changelog: nothing was tested")
			}
		})
	}
}

// A table file that a crash left before its ingestion is deleted when the store opens, not
// only when a later bulk restore begins: after a crash, the rest of the restore is often too
// short to run as a bulk restore, and the file (up to a memtable in size) would stay for good.
func TestPebbleBulkLeftoverRemovedAtOpen(t *testing.T) {
	ctx := newBulkCtx(t, true)
	s := newPebbleKeyValueStore("kv")
	if err := s.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	dir := s.db.dir
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(dir, bulkTempPrefix+"000003.sst")
	if err := os.WriteFile(left, []byte("partial table"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = newPebbleKeyValueStore("kv")
	if err := s.Init(ctx, s); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("table file a crash left is still there after Init (stat: %v)", err)
	}
}
