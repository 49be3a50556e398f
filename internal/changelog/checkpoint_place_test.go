package changelog

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fillAndClose opens h, writes n updates, checkpoints and closes; it returns the dump.
func fillAndClose(h *harness, n int) map[string][]string {
	h.t.Helper()
	h.open()
	h.fill(0, n)
	must(h.t, h.task.Commit())
	must(h.t, h.ts.Checkpoint())
	want := h.dump()
	must(h.t, h.task.Close())
	return want
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Stat(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// Our checkpoint never lands where Java Kafka Streams reads one (<task>/.checkpoint), so a
// Java instance started on the same state directory never takes our offsets for its own
// stores; a restart trusts our own file.
func TestCheckpointIsNotAtJavasPlace(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), log: NewMemoryLog()}
	want := fillAndClose(h, 50)
	if exists(t, filepath.Join(h.dir, JavaCheckpointFileName)) {
		t.Fatalf("a %s file was written in the task directory", JavaCheckpointFileName)
	}
	if cp, err := ReadCheckpoint(filepath.Join(h.dir, CheckpointFileName)); err != nil || len(cp) != 4 {
		t.Fatalf("our checkpoint: %v %v, want the 4 persistent logged stores", cp, err)
	}
	h.open()
	defer h.task.Close()
	equalDumps(t, h.dump(), want)
	for _, s := range []string{"kv", "ts", "win", "sess"} {
		if h.lis.restored[s] != 0 {
			t.Errorf("%s: restored %d records after a clean close, want 0 (checkpoint trusted)", s, h.lis.restored[s])
		}
	}
}

// A task directory of an earlier version of this library has its checkpoint at Java's place:
// it is read once as ours (only the tail after it is restored), moved to our place, and the
// file at Java's place is gone.
func TestOldCheckpointPlaceIsMigrated(t *testing.T) {
	h := &harness{t: t, dir: t.TempDir(), log: NewMemoryLog()}
	fillAndClose(h, 50)
	ours := filepath.Join(h.dir, CheckpointFileName)
	old := filepath.Join(h.dir, JavaCheckpointFileName)
	must(t, os.Rename(ours, old))
	cpOld, err := ReadCheckpoint(old)
	must(t, err)

	h.open()
	h.fill(50, 5) // more changelog after the old checkpoint, not checkpointed
	want := h.dump()
	must(t, h.task.Close())
	for _, s := range []string{"kv", "ts", "win", "sess"} {
		if h.lis.restored[s] != 0 {
			t.Errorf("%s: restored %d records from an old-place checkpoint after a clean close, want 0", s, h.lis.restored[s])
		}
	}
	if exists(t, old) {
		t.Fatalf("%s is still in the task directory after the migration", JavaCheckpointFileName)
	}
	cp, err := ReadCheckpoint(ours)
	must(t, err)
	for tp, off := range cpOld {
		if cp[tp] != off {
			t.Errorf("%s: migrated offset %d, want %d", tp, cp[tp], off)
		}
	}
	if !strings.Contains(h.buf.String(), "moved the checkpoint") {
		t.Errorf("no migration log:\n%s", h.buf)
	}
	// The next start restores the tail written after the migrated offsets.
	h.open()
	defer h.task.Close()
	equalDumps(t, h.dump(), want)
	tp := TopicPartition{Topic: "app-kv-changelog", Partition: 0}
	if n := count(t, h.log, tp) - 1 - cpOld[tp]; h.lis.restored["kv"] != n {
		t.Errorf("kv: restored %d records, want the %d after the migrated offset", h.lis.restored["kv"], n)
	}
}

// A .checkpoint beside Java Kafka Streams' stores is Java's (the offsets of its RocksDB stores,
// which may be far ahead of our Pebble stores): it is not read, so our stale stores restore
// their whole changelogs, and it is left as it is.
func TestJavasCheckpointIsNotTrusted(t *testing.T) {
	for _, java := range []string{"rocksdb", "win", ".checkpoint_kv"} {
		t.Run(java, func(t *testing.T) {
			h := &harness{t: t, dir: t.TempDir(), log: NewMemoryLog()}
			fillAndClose(h, 50)
			// Our stores stay at 50 updates; "Java" moves the changelogs on and checkpoints
			// their ends for its own stores.
			must(t, os.Remove(filepath.Join(h.dir, CheckpointFileName)))
			h2 := &harness{t: t, dir: t.TempDir(), log: h.log}
			h2.open()
			h2.fill(0, 80)
			want := h2.dump()
			must(t, h2.task.Commit())
			must(t, h2.ts.Checkpoint())
			must(t, h2.task.Close())
			javaCP, err := os.ReadFile(filepath.Join(h2.dir, CheckpointFileName))
			must(t, err)
			old := filepath.Join(h.dir, JavaCheckpointFileName)
			must(t, os.WriteFile(old, javaCP, 0o644))
			if strings.HasPrefix(java, ".") {
				must(t, os.WriteFile(filepath.Join(h.dir, java), javaCP, 0o644))
			} else {
				must(t, os.MkdirAll(filepath.Join(h.dir, java, "data"), 0o755))
			}

			h.open()
			defer h.task.Close()
			equalDumps(t, h.dump(), want)
			for _, s := range []string{"kv", "ts", "win", "sess"} {
				if n := count(t, h.log, TopicPartition{Topic: "app-" + s + "-changelog", Partition: 0}); h.lis.restored[s] != n {
					t.Errorf("%s: restored %d records, want the whole changelog (%d): Java's checkpoint must not be trusted", s, h.lis.restored[s], n)
				}
			}
			if b, err := os.ReadFile(old); err != nil || string(b) != string(javaCP) {
				t.Errorf("Java's %s was changed: %q %v", JavaCheckpointFileName, b, err)
			}
		})
	}
}
