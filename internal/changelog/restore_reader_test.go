package changelog

import (
	"context"
	"errors"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// aliasLog is a MemoryLog whose Fetch hands out slices of records it keeps (as a reader with
// a record cache may): Reader's contract gives the caller the records to read, not to write.
type aliasLog struct {
	*MemoryLog
	mu    sync.Mutex
	cache map[TopicPartition][]Record
}

func (a *aliasLog) Fetch(ctx context.Context, tp TopicPartition, from int64) ([]Record, int64, error) {
	begin, err := a.BeginningOffset(ctx, tp)
	if err != nil {
		return nil, from, err
	}
	if _, _, err := a.MemoryLog.Fetch(ctx, tp, from); err != nil {
		return nil, from, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cache[tp]
	if recs := a.Records(tp); len(recs) > len(c) {
		c = append(c, recs[len(c):]...)
		a.cache[tp] = c
	}
	i := int(from - begin)
	j := min(len(c), i+500)
	return c[i:j:j], begin + int64(j), nil
}

// Restore does not write into the record slices a plain Reader returns: restoring the same
// changelogs again (the in-memory store restores everything at every start) reads the same
// records.
func TestRestoreLeavesReaderRecordsAlone(t *testing.T) {
	restoreScenario(t, &aliasLog{MemoryLog: NewMemoryLog(), cache: map[TopicPartition][]Record{}}, "app")
}

// failingLog is a MemoryLog whose fetches of partition fail fail once left fetches of it
// succeeded (left < 0: never).
type failingLog struct {
	*MemoryLog
	fail TopicPartition
	left int
}

func (f *failingLog) Fetch(ctx context.Context, tp TopicPartition, from int64) ([]Record, int64, error) {
	if tp == f.fail && f.left >= 0 {
		if f.left == 0 {
			return nil, from, errors.New("broker connection lost")
		}
		f.left--
	}
	return f.MemoryLog.Fetch(ctx, tp, from)
}

// A store without local state (deleted, or found corrupt and wiped) is restored from the
// beginning of its changelog whatever the checkpoint file says. When that restore stops in
// the middle (a broker error, a crash), the next start must not take the partly restored store
// for one holding everything up to the checkpointed offset: it restores from the beginning
// again, and ends with the full contents.
func TestRestoreFromScratchInterruptedThenResumed(t *testing.T) {
	ml := NewMemoryLog()
	ml.MaxFetch = 10
	kvTP := TopicPartition{Topic: "app-kv-changelog", Partition: 0}
	fl := &failingLog{MemoryLog: ml, fail: kvTP, left: -1}
	h := &harness{t: t, dir: t.TempDir(), log: fl}
	h.open()
	h.fill(0, 100)
	must(t, h.task.Commit())
	must(t, h.ts.Checkpoint())
	want := h.dump()["kv"]
	must(t, h.task.Close())
	if cp, err := ReadCheckpoint(filepath.Join(h.dir, CheckpointFileName)); err != nil || cp[kvTP] != count(t, ml, kvTP)-1 {
		t.Fatalf("checkpoint %v %v, want kv at its last offset", cp, err)
	}

	// The kv store's local state is gone; its restore from the beginning fails after 3 fetches.
	must(t, os.RemoveAll(filepath.Join(h.dir, storeapi.PebbleDirName, "kv")))
	fl.left = 3
	cfg := task.Config{ApplicationID: "app", StateDir: h.dir, Collector: &logCollector{log: fl}, AppConfigs: map[string]string{}}
	var specs []task.StoreSpec
	for _, b := range builders(t) {
		specs = append(specs, task.StoreSpec{Builder: b})
	}
	tk, err := task.New(processor.TaskID{Subtopology: 0, Partition: 0}, task.Spec{Stores: specs}, cfg)
	must(t, err)
	must(t, tk.Init())
	ts := NewTaskState(TaskStateConfig{TaskDir: h.dir, Reader: fl, MaxBatchRecords: 7,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, tk)
	if err := ts.Restore(context.Background()); err == nil {
		t.Fatal("restore with a failing reader succeeded")
	}
	must(t, tk.Close())

	// The next start, with a working reader.
	fl.left = -1
	h.open()
	if got := h.dump()["kv"]; !slices.Equal(got, want) {
		t.Fatalf("kv after the interrupted restore was resumed:\n got %q\nwant %q", got, want)
	}
	must(t, h.task.Close())
}
