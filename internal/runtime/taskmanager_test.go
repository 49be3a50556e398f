package runtime

import (
	"os"
	"testing"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/processor"
)

// runningTestTask makes task 0_0 (the Pebble key-value store "kv", logged to
// updaterTestChangelog partition 0, its state in dir) a running active task of tm, as
// takeRestored does, with its state directory locked for thread 0.
func runningTestTask(t *testing.T, tm *taskManager, dir string) (processor.TaskID, changelog.TopicPartition) {
	t.Helper()
	j := restoreTestJob(t, dir, changelog.NewMemoryLog(), &gate{}, 0)
	id := j.id
	tp := changelog.TopicPartition{Topic: updaterTestChangelog, Partition: 0}
	if got := j.ts.Partitions()["kv"]; got != tp {
		t.Fatalf("changelog partition of kv: %v, want %v", got, tp)
	}
	tm.tasks[id], tm.states[id], tm.changelogOwner[tp] = j.t, j.ts, id
	tm.rt.taskLocks = map[processor.TaskID]int{id: tm.idx}
	return id, tp
}

// newCheckpointTestManager is a task manager without broker: no input partitions, an output
// that sends nothing, sendClosing counting its calls.
func newCheckpointTestManager(closing *[]int64) *taskManager {
	tm := testTaskManager()
	tm.states = map[processor.TaskID]*changelog.TaskState{}
	tm.changelogOwner = map[changelog.TopicPartition]processor.TaskID{}
	tm.obs = metrics.New("app", metrics.Info).Thread("t")
	tm.updater = newStateUpdater(tm.log, nil)
	tm.sendClosing = func(_ processor.TaskID, n int64) error {
		*closing = append(*closing, n)
		return nil
	}
	return tm
}

// The checkpoint bookkeeping of an active task under at-least-once: a checkpoint is due once
// the changelog offsets advanced by more than checkpointOffsetDelta since the last one (the
// first counted from an empty snapshot); writeCheckpoint writes the offsets to the task's
// checkpoint file and takes them as the new snapshot. A task that does not run (or is unknown)
// is never due.
func TestTaskManagerCheckpointDue(t *testing.T) {
	var closing []int64
	tm := newCheckpointTestManager(&closing)
	dir := t.TempDir()
	id, tp := runningTestTask(t, tm, dir)
	t.Cleanup(func() { tm.closeActive(false) })
	ts := tm.states[id]

	if tm.checkpointDue(id) {
		t.Fatal("checkpoint due before any changelog record was written")
	}
	ts.RecordWritten(tp, checkpointOffsetDelta)
	if tm.checkpointDue(id) {
		t.Fatalf("checkpoint due at offset %d: the delta must exceed %d", checkpointOffsetDelta, checkpointOffsetDelta)
	}
	ts.RecordWritten(tp, checkpointOffsetDelta+1)
	if !tm.checkpointDue(id) {
		t.Fatalf("checkpoint not due at offset %d", checkpointOffsetDelta+1)
	}
	if tm.checkpointDue(processor.TaskID{Subtopology: 7}) {
		t.Fatal("checkpoint due for a task the manager does not have")
	}

	if err := tm.flushStores(id); err != nil {
		t.Fatal(err)
	}
	tm.writeCheckpoint(id)
	if got := tm.checkpointed[id][tp]; got != checkpointOffsetDelta+1 {
		t.Fatalf("checkpointed offset %d, want %d", got, checkpointOffsetDelta+1)
	}
	cp, err := changelog.ReadCheckpoint(ts.CheckpointPath())
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := cp[tp]; !ok || got != checkpointOffsetDelta+1 {
		t.Fatalf("checkpoint file holds %d (present %v), want %d", got, ok, checkpointOffsetDelta+1)
	}
	if tm.checkpointDue(id) {
		t.Fatal("checkpoint due right after a checkpoint")
	}
	ts.RecordWritten(tp, 2*checkpointOffsetDelta+1)
	if tm.checkpointDue(id) {
		t.Fatalf("checkpoint due %d offsets after the last one", checkpointOffsetDelta)
	}
	ts.RecordWritten(tp, 2*checkpointOffsetDelta+2)
	if !tm.checkpointDue(id) {
		t.Fatalf("checkpoint not due %d offsets after the last one", checkpointOffsetDelta+1)
	}

	// A state whose task does not run (restoring) is not due.
	t0 := tm.tasks[id]
	delete(tm.tasks, id)
	if tm.checkpointDue(id) {
		t.Fatal("checkpoint due for a task that does not run")
	}
	tm.tasks[id] = t0
	if len(closing) != 0 {
		t.Fatalf("sendClosing called %d times without a close", len(closing))
	}
}

// Closing a running task clean checkpoints the offsets its changelog reached and forgets it
// everywhere (tasks, states, changelog owner, checkpoint snapshot, the state directory's lock);
// it is counted as closed and no longer in the subscription's offset sums.
func TestTaskManagerCloseClean(t *testing.T) {
	var closing []int64
	tm := newCheckpointTestManager(&closing)
	dir := t.TempDir()
	id, tp := runningTestTask(t, tm, dir)
	ts := tm.states[id]
	ts.RecordWritten(tp, 41)

	sums := tm.taskOffsetSums()
	if len(sums) != 1 || sums[id] != assignment.OffsetSumRunning {
		t.Fatalf("offset sums %v, want {%s: OffsetSumRunning}", sums, id)
	}
	if ids := tm.activeIDs(); len(ids) != 1 || ids[0] != id {
		t.Fatalf("active ids %v, want [%s]", ids, id)
	}

	tm.closeTask(id, true)
	if len(closing) != 1 || closing[0] != 0 {
		t.Fatalf("sendClosing calls %v, want one with 0 records", closing)
	}
	cp, err := changelog.ReadCheckpoint(ts.CheckpointPath())
	if err != nil {
		t.Fatal(err)
	}
	if got := cp[tp]; got != 41 {
		t.Fatalf("checkpoint holds %d, want 41", got)
	}
	if len(tm.tasks) != 0 || len(tm.states) != 0 || len(tm.changelogOwner) != 0 || len(tm.checkpointed) != 0 {
		t.Fatalf("closed task kept: tasks %d, states %d, owners %d, checkpointed %d",
			len(tm.tasks), len(tm.states), len(tm.changelogOwner), len(tm.checkpointed))
	}
	if _, held := tm.rt.taskLocks[id]; held {
		t.Fatal("the task's state directory is still locked")
	}
	if n := tm.obs.TasksClosed.Load(); n != 1 {
		t.Fatalf("tasks closed %d, want 1", n)
	}
	if sums := tm.taskOffsetSums(); len(sums) != 0 {
		t.Fatalf("offset sums after the close %v, want none", sums)
	}
}

// Closing a running task dirty writes no checkpoint (the next owner restores from the last
// committed state) and sends nothing, but forgets the task as a clean close does.
func TestTaskManagerCloseDirty(t *testing.T) {
	var closing []int64
	tm := newCheckpointTestManager(&closing)
	dir := t.TempDir()
	id, tp := runningTestTask(t, tm, dir)
	tm.states[id].RecordWritten(tp, 41)
	path := tm.states[id].CheckpointPath()

	tm.closeActive(false)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a dirty close left a checkpoint file (stat error %v)", err)
	}
	if len(closing) != 0 {
		t.Fatalf("sendClosing calls %v on a dirty close, want none", closing)
	}
	if len(tm.tasks) != 0 || len(tm.states) != 0 || len(tm.changelogOwner) != 0 {
		t.Fatalf("closed task kept: tasks %d, states %d, owners %d", len(tm.tasks), len(tm.states), len(tm.changelogOwner))
	}
	if tm.out.discard {
		t.Fatal("the output still discards after the dirty close")
	}
	if _, held := tm.rt.taskLocks[id]; held {
		t.Fatal("the task's state directory is still locked")
	}
}
