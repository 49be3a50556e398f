package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// The task manager of a stream thread (Java: TaskManager with its Tasks registry): it owns the
// thread's active tasks, their changelog state and its bookkeeping (which task writes which
// changelog partition, the offsets of the last checkpoints), the standby tasks and the state
// updater that restores new, promoted and standby tasks. It creates tasks (restoring.go: built,
// then handed to the state updater; taken into processing once restored), closes them clean
// (flush, checkpoint) or dirty (abort the stores' exactly-once transaction), revokes and
// promotes them as an assignment says (handleAssignment), checkpoints them (checkpoint.go) and
// enumerates them for the subscription, the metrics and the loop.
//
// The thread keeps the group membership, the fetcher (input), the producer (output), the loop
// and the commit barrier; it calls the task manager between two passes of processing, never
// during one, and only from its own goroutine: the task manager's maps are the thread's, with
// no lock of their own (what other goroutines see of the tasks is the taskView). The task
// manager shares the thread's input (a task's partitions are added when it runs, removed when
// it closes), output (the tasks' collector; what a closing task forwards is dropped or sent)
// and view (the locks that order closing and restoring with interactive queries).

// taskManager owns a stream thread's tasks (see above).
type taskManager struct {
	rt   *Runtime
	idx  int
	name string
	log  *slog.Logger
	obs  *metrics.Thread
	ctx  context.Context
	// signal wakes the thread's loop (the tasks' async steps call it).
	signal func()
	// view, in and out are the thread's (see above).
	view *taskView
	in   *input
	out  *output
	// sendClosing sends the n records that task id forwarded while it closed clean (its store
	// flush) and commits them, so that the checkpoint written next covers them: the thread's
	// flush and, under exactly-once, its transaction (thread.sendClosing).
	sendClosing func(id processor.TaskID, n int64) error

	// tasks are the running active tasks with their changelog state (restore, checkpoints,
	// exactly-once store transactions).
	tasks  map[processor.TaskID]*task.Task
	states map[processor.TaskID]*changelog.TaskState
	// changelogOwner maps a changelog partition to the task writing it.
	changelogOwner map[changelog.TopicPartition]processor.TaskID
	// checkpointed holds, per active task, the changelog offsets of its last checkpoint
	// (see checkpointDue).
	checkpointed map[processor.TaskID]map[changelog.TopicPartition]int64
	// standbys are the standby tasks (num.standby.replicas); lastStandby when they were last
	// updated.
	standbys    map[processor.TaskID]*standbyTask
	lastStandby time.Time
	// updater restores new, promoted and standby tasks beside the processing (updater.go).
	updater *stateUpdater
	// held are the tasks assigned to this thread that another thread of the instance still
	// holds (restoring.go: holdBack, retryHeld).
	held map[processor.TaskID]heldTask
	// reader reads changelogs for the state updater; standbyReader (same client, fetch
	// connections of its own) for the thread's standby updates, without waiting on the broker
	// for new records.
	reader        changelog.Reader
	standbyReader changelog.Reader
	// cache is the thread's record cache, shared by its tasks (nil: caching off).
	cache *cache.ThreadCache
	// enforced counts records processed under enforced processing, per task (observe.go);
	// the executors write it under the thread's idle.mu (isProcessable).
	enforced map[processor.TaskID]int64
}

// newTaskManager returns the empty task manager of thread th (its reader, cache, input and
// output are set when the thread made them).
func newTaskManager(th *thread) *taskManager {
	return &taskManager{rt: th.rt, idx: th.idx, name: th.name, log: th.log, obs: th.obs, ctx: th.ctx, signal: th.signal,
		view: th.view, sendClosing: th.sendClosing,
		tasks: map[processor.TaskID]*task.Task{}, states: map[processor.TaskID]*changelog.TaskState{},
		changelogOwner: map[changelog.TopicPartition]processor.TaskID{}, standbys: map[processor.TaskID]*standbyTask{},
		updater: newStateUpdater(th.log, th.signal)}
}

// handleAssignment applies the tasks received (from a classic assignment or the streams group
// coordinator): active tasks kept stay as they are (running, or restoring in the state
// updater), revoked ones (committed before) are closed clean, restoring ones taken back from
// the updater and closed with a checkpoint of what they restored; standbys are promoted,
// closed or created, new active tasks are created and handed to the state updater, which
// restores them beside the processing (takeRestored takes them into it); one that another
// thread of the instance still holds is created once let go (retryHeld). Nothing here waits
// for a restore or for another thread. It reports whether active tasks were revoked and returns the input partitions
// of kept tasks that had none (added to the input, to be assigned from their committed
// offsets). Errors: task creation errors; when the runtime stops meanwhile, an error with
// tm.ctx done (the caller stops applying). Java: TaskManager.handleAssignment.
func (tm *taskManager) handleAssignment(got received) (revoked bool, fresh []kafka.TopicPartition, err error) {
	for id := range tm.tasks {
		if _, ok := got.active[id]; !ok {
			// Revoked: committed before the join; checkpoint and close.
			tm.closeTask(id, true)
			revoked = true
		}
	}
	for _, j := range tm.updater.list() {
		_, active := got.active[j.id]
		_, standby := got.standby[j.id]
		switch {
		case j.kind.active() && !active:
			tm.stopRestore(j.id, true) // revoked while restoring
			revoked = true
		case !j.kind.active() && (active || !standby):
			// A standby being restored that became active restores as an active task from
			// what it restored (checkpointed); one no longer assigned is closed.
			tm.stopRestore(j.id, true)
		case active:
			j.tps = slices.Clone(got.active[j.id]) // kept: restores on
		}
	}
	for id, h := range tm.held {
		tps, active := got.active[id]
		_, standby := got.standby[id]
		switch {
		case active:
			tm.held[id] = heldTask{kind: restoreActive, tps: slices.Clone(tps)}
		case standby:
			tm.held[id] = heldTask{kind: restoreStandby}
		default:
			delete(tm.held, id)
		}
		if h.kind.active() && !active {
			revoked = true
		}
	}
	// Standby tasks: promote the ones now active here, close the ones no longer assigned,
	// create the new ones.
	for _, id := range sortedIDs(tm.standbys) {
		if _, ok := got.active[id]; ok {
			tm.startPromotion(id, got.active[id])
		} else if _, ok := got.standby[id]; !ok {
			tm.closeStandby(id, true)
		}
	}
	for _, id := range sortedIDs(got.standby) {
		if _, ok := got.active[id]; tm.standbys[id] != nil || ok || tm.updater.job(id) != nil || tm.isHeld(id) {
			continue
		}
		if err := tm.startStandby(id); err != nil {
			if tm.ctx.Err() != nil {
				return revoked, nil, tm.ctx.Err()
			}
			tm.log.Warn("cannot create standby task", "task", id.String(), "error", err)
		}
	}
	for _, id := range sortedIDs(got.active) {
		switch {
		case tm.tasks[id] != nil:
			if tm.in.byTask[id] != nil {
				continue // kept: its partitions stay assigned at their positions
			}
			for _, tp := range got.active[id] {
				tm.in.add(id, tp, tm.tasks[id])
				fresh = append(fresh, tp)
			}
		case tm.updater.job(id) != nil:
			// Restoring (or being promoted): its inputs are assigned once it runs.
		case tm.isHeld(id):
			// Still held by another thread: created once let go (retryHeld).
		default:
			if err := tm.startRestore(id, got.active[id]); err != nil {
				return revoked, nil, err
			}
		}
	}
	return revoked, fresh, nil
}

// closeActive closes every active task, those restoring included; a dirty close drops what
// they produce while closing.
func (tm *taskManager) closeActive(clean bool) {
	tm.view.stopAll()
	tm.out.discard = !clean
	for id := range tm.tasks {
		tm.closeTask(id, clean)
	}
	tm.out.discard = false
	tm.closeRestoring(true, true) // what they restored is committed state either way
}

// isHeld reports whether task id is assigned but still held by another thread.
func (tm *taskManager) isHeld(id processor.TaskID) bool {
	_, ok := tm.held[id]
	return ok
}

// closeTask closes a task and stops fetching its partitions. A clean close checkpoints its
// stores (the task was committed); a dirty close aborts the stores' open exactly-once
// transaction and writes no checkpoint, so the next owner restores from the last committed
// state.
func (tm *taskManager) closeTask(id processor.TaskID, clean bool) {
	tm.view.storeMu.Lock()
	defer tm.view.storeMu.Unlock()
	t, ts := tm.tasks[id], tm.states[id]
	if t != nil {
		tm.obs.TasksClosed.Add(1)
	}
	tm.view.hide(id, t)
	tm.in.remove(id)
	if ts != nil {
		var err error
		if clean {
			// The final commit left no cache dirty; should the store flush still forward
			// records, they are sent (and committed) before the checkpoint claims them.
			before := tm.out.sent.Load()
			if err = tm.flushStores(id); err == nil {
				if err = tm.sendClosing(id, tm.out.sent.Load()-before); err == nil {
					tm.writeCheckpoint(id)
				}
			}
		} else if tm.rt.cfg.ExactlyOnce {
			err = ts.AbortTransaction()
		}
		if err != nil {
			tm.log.Warn("closing task: changelog state", "task", id.String(), "error", err)
		}
		for tp, owner := range tm.changelogOwner {
			if owner == id {
				delete(tm.changelogOwner, tp)
			}
		}
	}
	if t != nil {
		// Records forwarded by the close itself (a processor's Close, a store's close) come
		// after the checkpoint: the task is gone, so they cannot be sent for it any more.
		discard, dropped := tm.out.discard, tm.out.discarded.Load()
		tm.out.discard = true
		if err := t.Close(); err != nil {
			tm.log.Warn("closing task", "task", id.String(), "error", err)
		}
		if n := tm.out.discarded.Load() - dropped; clean && n > 0 {
			tm.log.Error("dropping records forwarded while closing the task", "task", id.String(), "records", n)
		}
		tm.out.discard = discard
	}
	delete(tm.tasks, id)
	delete(tm.states, id)
	delete(tm.checkpointed, id)
	if t != nil && tm.standbys[id] == nil {
		tm.rt.unlockTask(id, tm.idx)
	}
}

// closeStandbys closes every standby task (clean: with a checkpoint of what it applied).
func (tm *taskManager) closeStandbys(clean bool) {
	tm.dropHeld(false)
	for id := range tm.standbys {
		tm.closeStandby(id, clean)
	}
}

// close closes every task at the thread's shutdown, clean: those the state updater holds (with
// a checkpoint of what they restored), the active tasks (committed by the thread's last
// round) and the standbys.
func (tm *taskManager) close() {
	tm.held = nil
	for _, j := range tm.updater.close() {
		tm.closeJob(j, true)
	}
	tm.closeActive(true)
	tm.closeStandbys(true)
}

// recordChangelogOffsets tells every task the offset of the last record of each of its
// changelog partitions that the producer acknowledged.
func (tm *taskManager) recordChangelogOffsets() {
	for tp, id := range tm.changelogOwner {
		if off := tm.out.producer.Acked(kafka.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}); off >= 0 {
			if ts := tm.states[id]; ts != nil {
				ts.RecordWritten(changelog.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, off)
			}
		}
	}
}

// commitStoreTransactions applies the tasks' exactly-once store batches once the Kafka
// transaction that wrote their changelog records is committed (under the view's store lock: no
// interactive query reads a store meanwhile).
func (tm *taskManager) commitStoreTransactions() error {
	tm.view.storeMu.Lock()
	defer tm.view.storeMu.Unlock()
	for id, ts := range tm.states {
		if err := ts.CommitTransaction(); err != nil {
			return fmt.Errorf("task %s: commit store transaction: %w", id, err)
		}
	}
	return nil
}

// activeIDs returns the ids of the active tasks, those the state updater restores included,
// sorted.
func (tm *taskManager) activeIDs() []processor.TaskID {
	ids := make([]processor.TaskID, 0, len(tm.tasks))
	for id := range tm.tasks {
		ids = append(ids, id)
	}
	for _, j := range tm.updater.list() {
		if j.kind.active() {
			ids = append(ids, j.id)
		}
	}
	for id, h := range tm.held {
		if h.kind.active() {
			ids = append(ids, id)
		}
	}
	sortTasks(ids)
	return ids
}

// restoringActive reports whether the state updater still restores an active task, or one is
// held back (it has to be created and restored yet).
func (tm *taskManager) restoringActive() bool {
	for _, j := range tm.updater.list() {
		if j.kind.active() {
			return true
		}
	}
	for _, h := range tm.held {
		if h.kind.active() {
			return true
		}
	}
	return false
}

// restoringPartitions returns the input partitions of the active tasks the state updater
// holds, and of those held back (they are the member's owned partitions too).
func (tm *taskManager) restoringPartitions() []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for _, j := range tm.updater.list() {
		if j.kind.active() {
			out = append(out, j.tps...)
		}
	}
	for _, h := range tm.held {
		if h.kind.active() {
			out = append(out, h.tps...)
		}
	}
	return out
}

// taskOffsetSums returns the task offset sums of this thread's subscription (Java:
// TaskManager.taskOffsetSums): OffsetSumRunning for each running active task with logged
// stores, the sum of the changelog offsets a standby applied (of the last record each store
// holds), the sum of those a task the state updater restores holds so far, and, from the first
// thread only, the checkpointed sums of the task directories in the state directory that no
// thread of this instance holds (Java's threads report the directories they lock). Stateless
// tasks are left out.
func (tm *taskManager) taskOffsetSums() map[processor.TaskID]int64 {
	out := map[processor.TaskID]int64{}
	for id, ts := range tm.states {
		if tm.tasks[id] != nil && len(ts.Partitions()) > 0 {
			out[id] = assignment.OffsetSumRunning
		}
	}
	for id, sb := range tm.standbys {
		if len(sb.tps) == 0 {
			continue
		}
		out[id] = offsetSum(sb.ts.Offsets())
	}
	for _, j := range tm.updater.list() {
		if len(j.ts.Partitions()) > 0 {
			out[j.id] = j.offsetSum()
		}
	}
	if tm.idx == 0 {
		for id, sum := range tm.rt.unownedOffsetSums() {
			if _, ok := out[id]; !ok {
				out[id] = sum
			}
		}
	}
	return out
}

// streamsTaskOffsets returns the task offsets a streams member reports (Java 4.4:
// TaskManager.taskOffsetSumSnapshot and the state updater's taskEndOffsetSumSnapshot): the
// changelog offset sums of the tasks whose state this instance holds but does not run (standbys,
// restoring tasks, and from the first thread the unlocked task directories' checkpoints; a
// running active task is left out, unlike in the classic subscription), and the changelog end
// offset sums of the tasks being restored, as their restores started. Thread goroutine only.
func (tm *taskManager) streamsTaskOffsets() (offsets, ends []streamsgroup.TaskOffset) {
	offsets, ends = []streamsgroup.TaskOffset{}, []streamsgroup.TaskOffset{}
	for id, sum := range tm.taskOffsetSums() {
		if sum == assignment.OffsetSumRunning {
			continue
		}
		offsets = append(offsets, streamsgroup.TaskOffset{Subtopology: strconv.Itoa(id.Subtopology), Partition: int32(id.Partition), Offset: sum})
	}
	for _, j := range tm.updater.list() {
		if sum, ok := j.endOffsetSum(); ok {
			ends = append(ends, streamsgroup.TaskOffset{Subtopology: strconv.Itoa(j.id.Subtopology), Partition: int32(j.id.Partition), Offset: sum})
		}
	}
	return offsets, ends
}

// countEnforced counts a record of task id processed under enforced processing (the caller
// holds the thread's idle.mu).
func (tm *taskManager) countEnforced(id processor.TaskID) {
	if tm.enforced == nil {
		tm.enforced = map[processor.TaskID]int64{}
	}
	tm.enforced[id]++
}

// reportTasks sets the thread's task gauges of the Prometheus metrics.
func (tm *taskManager) reportTasks() {
	if m := tm.rt.cfg.Metrics; m != nil {
		m.tasks.WithLabelValues(tm.name).Set(float64(len(tm.tasks)))
		m.standbyTasks.WithLabelValues(tm.name).Set(float64(len(tm.standbys)))
	}
}
