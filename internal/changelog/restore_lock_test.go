package changelog

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
)

// heldLock is a sync.Locker that counts its holds and says whether it is held.
type heldLock struct {
	mu    sync.Mutex
	held  bool
	holds int
}

func (l *heldLock) Lock()   { l.mu.Lock(); l.held = true; l.holds++ }
func (l *heldLock) Unlock() { l.held = false; l.mu.Unlock() }

// lockCheckingTask fails the test when a restore batch reaches a store without the lock.
type lockCheckingTask struct {
	Task
	t       *testing.T
	lock    *heldLock
	batches int
}

func (c *lockCheckingTask) Restore(name string, batch []processor.RestoreRecord) error {
	if !c.lock.held {
		c.t.Errorf("store %q: a batch of %d records restored without StoreLock", name, len(batch))
	}
	c.batches++
	return c.Task.Restore(name, batch)
}

// lockCheckingListener fails the test when the restore calls it holding the lock: it is called
// between batches, where readers must be able to get in.
type lockCheckingListener struct {
	*countingListener
	t    *testing.T
	lock *heldLock
}

func (l lockCheckingListener) check(what string) {
	if l.lock.held {
		l.t.Errorf("%s called with StoreLock held", what)
	}
}
func (l lockCheckingListener) OnRestoreStart(tp TopicPartition, s string, from, to int64) {
	l.check("OnRestoreStart")
	l.countingListener.OnRestoreStart(tp, s, from, to)
}
func (l lockCheckingListener) OnBatchRestored(tp TopicPartition, s string, last, n int64) {
	l.check("OnBatchRestored")
	l.countingListener.OnBatchRestored(tp, s, last, n)
}
func (l lockCheckingListener) OnRestoreEnd(tp TopicPartition, s string, total int64) {
	l.check("OnRestoreEnd")
	l.countingListener.OnRestoreEnd(tp, s, total)
}

// StoreLock is held around every batch a restore writes (plain and bulk restores, every store
// kind) and released between them, so that interactive queries of a restoring task read the
// stores between two batches; the restore is the same as without it.
func TestRestoreHoldsStoreLockPerBatch(t *testing.T) {
	for _, bulkMin := range []int{-1, 1} {
		h := &harness{t: t, dir: t.TempDir(), log: NewMemoryLog(), bulkMin: bulkMin}
		h.open()
		h.fill(0, 100)
		must(t, h.task.Commit())
		want := h.dump()
		must(t, h.task.Close())
		must(t, os.RemoveAll(filepath.Join(h.dir, storeapi.PebbleDirName)))

		h.lock = &heldLock{}
		h.open()
		equalDumps(t, h.dump(), want)
		if h.locked.batches < 10 || h.lock.holds < h.locked.batches {
			t.Errorf("bulk min %d: %d batches, %d holds of the lock: want several batches, each under its own hold",
				bulkMin, h.locked.batches, h.lock.holds)
		}
		must(t, h.task.Close())
	}
}
