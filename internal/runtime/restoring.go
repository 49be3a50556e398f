package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// The task manager's side of its state updater (updater.go): it builds the tasks an assignment
// gives it and hands them to the updater to restore (startRestore, startStandby,
// startPromotion), takes the restored ones back into processing when the thread's loop asks
// (takeRestored, from the thread's handleRestored, which then has their inputs fetched),
// and takes back and closes those the assignment takes away while they restore (stopRestore).
// Java: TaskManager's use of the StateUpdater (handleAssignment, checkStateUpdater).

// buildTask builds and initialises task id's engine and its changelog state, with lock as the
// state's store lock (held per restored batch) and the restore events going to listener. The
// task's state directory is locked for this thread.
func (tm *taskManager) buildTask(id processor.TaskID, lock sync.Locker, listener changelog.RestoreListener) (*task.Task, *changelog.TaskState, error) {
	r := tm.rt
	if err := r.tryLockTask(id, tm.idx); err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			r.unlockTask(id, tm.idx)
		}
	}()
	spec, err := task.SpecFromTopology(r.cfg.Topology, r.cfg.ApplicationID, []int{id.Subtopology})
	if err != nil {
		return nil, nil, err
	}
	cfg := r.cfg.Task
	cfg.Collector = collector{tm.out}
	cfg.StateDir = r.taskDir(id)
	cfg.Logger = tm.log
	cfg.Cache = tm.cache
	cfg.PebbleEnv = r.pebble
	cfg.AsyncNotify = tm.signal // async steps: a completed call is work for the thread (process.go)
	if cfg.StateDir != "" {
		if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("task %s: state directory: %w", id, err)
		}
	}
	t, err := task.New(id, spec, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := t.Init(); err != nil {
		t.Close()
		return nil, nil, err
	}
	ts := changelog.NewTaskState(changelog.TaskStateConfig{TaskDir: cfg.StateDir, ExactlyOnce: r.cfg.ExactlyOnce,
		Reader: tm.reader, Listener: listener, Logger: tm.log, StoreLock: lock}, t)
	ok = true
	return t, ts, nil
}

// newJob returns an empty job of task id (the caller sets its task, state and run).
func newJob(id processor.TaskID, kind restoreKind) *restoreJob {
	return &restoreJob{id: id, kind: kind}
}

// readable registers job j's task as readable by interactive queries that allow stale stores
// (KIP-535) under the job's lock: a restoring active task (RestoringStores) or a standby being
// restored (StandbyStores).
func (tm *taskManager) readable(j *restoreJob) {
	if j.kind.active() {
		tm.view.showRestoring(j.id, j.t, &j.lock)
	} else {
		tm.view.showStandby(j.id, j.t, &j.lock)
	}
}

// unreadable takes job j's task out of the sets interactive queries read; a query reading it
// finishes first. Call it holding j.lock.
func (tm *taskManager) unreadableLocked(j *restoreJob) {
	tm.view.hideRestored(j.id, j.t, &j.lock)
}

// startRestore builds new active task id (input partitions tps) and hands it to the state
// updater, which restores its stores from their changelogs (from the checkpoint, or the
// offset stored with the data, to the end offset; read_committed under exactly-once); the
// thread takes it into processing once restored (handleRestored).
func (tm *taskManager) startRestore(id processor.TaskID, tps []kafka.TopicPartition) error {
	j := newJob(id, restoreActive)
	t, ts, err := tm.buildTask(id, &j.lock, jobListener{j, restoreCounter{tm: tm, id: id}})
	if errors.Is(err, errTaskHeld) {
		tm.holdBack(id, restoreActive, tps, err)
		return nil
	}
	if err != nil {
		return err
	}
	j.t, j.ts, j.tps = t, ts, slices.Clone(tps)
	tm.seedOffsets(j)
	j.run = func(ctx context.Context, j *restoreJob) error { return j.ts.Restore(ctx) }
	tm.readable(j)
	tm.updater.add(tm.ctx, j)
	tm.obs.TasksCreated.Add(1)
	return nil
}

// startStandby builds standby task id and hands it to the state updater, which restores its
// stores and records the changelog positions the thread goes on from (updateStandbys).
func (tm *taskManager) startStandby(id processor.TaskID) error {
	j := newJob(id, restoreStandby)
	t, ts, err := tm.buildTask(id, &j.lock, jobListener{j, restoreCounter{tm: tm, id: id}})
	if errors.Is(err, errTaskHeld) {
		tm.holdBack(id, restoreStandby, nil, err)
		return nil
	}
	if err != nil {
		return err
	}
	j.t, j.ts = t, ts
	tm.seedOffsets(j)
	j.run = func(ctx context.Context, j *restoreJob) error {
		if err := j.ts.Restore(ctx); err != nil {
			return err
		}
		sb := &standbyTask{t: j.t, ts: j.ts, pos: map[string]int64{}, tps: j.ts.Partitions()}
		offs := j.ts.Offsets()
		for name, tp := range sb.tps {
			if off, ok := offs[tp]; ok && off >= 0 {
				sb.pos[name] = off + 1
				continue
			}
			begin, err := tm.reader.BeginningOffset(ctx, tp)
			if err != nil {
				return kafkaErr("standby "+j.id.String()+": beginning offset", err)
			}
			sb.pos[name] = begin
		}
		j.sb = sb
		return nil
	}
	tm.readable(j)
	tm.updater.add(tm.ctx, j)
	return nil
}

// heldTask is a task assigned to this thread that another stream thread of the instance
// still holds: it is created once that thread let it go (retryHeld).
type heldTask struct {
	kind restoreKind
	// tps are the input partitions of an active task.
	tps []kafka.TopicPartition
}

// holdBack records task id (kind, input partitions tps) as assigned but still held by another
// thread (err says which).
func (tm *taskManager) holdBack(id processor.TaskID, kind restoreKind, tps []kafka.TopicPartition, err error) {
	if tm.held == nil {
		tm.held = map[processor.TaskID]heldTask{}
	}
	if _, ok := tm.held[id]; !ok {
		tm.log.Info("the task is created once the other stream thread let it go", "task", id.String(), "reason", err)
	}
	tm.held[id] = heldTask{kind: kind, tps: slices.Clone(tps)}
}

// retryHeld creates the held-back tasks that their other thread let go (called at every loop
// iteration of the thread). Errors: task creation errors, as from handleAssignment.
func (tm *taskManager) retryHeld() error {
	if len(tm.held) == 0 {
		return nil
	}
	for _, id := range sortedIDs(tm.held) {
		if tm.rt.heldElsewhere(id, tm.idx) {
			continue
		}
		h := tm.held[id]
		delete(tm.held, id)
		var err error
		if h.kind.active() {
			err = tm.startRestore(id, h.tps)
		} else if err = tm.startStandby(id); err != nil {
			tm.log.Warn("cannot create standby task", "task", id.String(), "error", err)
			err = nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dropHeld forgets the held-back active tasks (active) or standbys (!active).
func (tm *taskManager) dropHeld(active bool) {
	for id, h := range tm.held {
		if h.kind.active() == active {
			delete(tm.held, id)
		}
	}
}

// startPromotion hands standby id, now active with input partitions tps, to the state updater,
// which brings it to the changelogs' end (restoring only the tail since its last update).
func (tm *taskManager) startPromotion(id processor.TaskID, tps []kafka.TopicPartition) {
	sb := tm.standbys[id]
	j := newJob(id, restorePromoted)
	j.t, j.ts, j.sb, j.tps = sb.t, sb.ts, sb, slices.Clone(tps)
	for tp, off := range sb.ts.Offsets() {
		j.setOffset(tp, off)
	}
	j.run = func(ctx context.Context, j *restoreJob) error {
		n, err := tm.updateStandby(ctx, j.id, j.sb, true, tm.reader, &j.lock)
		if err != nil {
			return err
		}
		if m := tm.rt.cfg.Metrics; m != nil {
			m.restored.WithLabelValues(tm.name).Add(float64(n))
		}
		tm.log.Info("promoted standby task to active", "task", j.id.String(), "tail records", n)
		return nil
	}
	// A query of the standby finishes first; from now on queries find the task restoring.
	tm.view.promote(id, j.t, &j.lock)
	delete(tm.standbys, id)
	tm.updater.add(tm.ctx, j)
}

// seedOffsets takes the offsets of job j's checkpoint as the first it knows (for the
// subscription's task offset sums while the job waits or restores).
func (tm *taskManager) seedOffsets(j *restoreJob) {
	p := j.ts.CheckpointPath()
	if p == "" {
		return
	}
	if _, err := os.Stat(p); err != nil {
		return
	}
	cp, err := changelog.ReadCheckpoint(p)
	if err != nil {
		return
	}
	for tp, off := range cp {
		if off >= 0 {
			j.setOffset(tp, off)
		}
	}
}

// takeRestored takes the jobs the state updater finished: a restored active task joins the
// running tasks (its input partitions are added to the input and returned in fresh, to be
// fetched from their committed offsets), a restored standby joins the standbys. A standby
// whose restore failed is dropped (with a warning), a promotion that failed restores the task
// anew; an active task whose restore failed is closed and the error returned in failed (a
// KafkaError). drained is false when the updater had finished nothing. Java:
// TaskManager.checkStateUpdater.
func (tm *taskManager) takeRestored() (drained bool, fresh []kafka.TopicPartition, failed error) {
	jobs := tm.updater.drain()
	if len(jobs) == 0 {
		return false, nil, nil
	}
	for _, j := range jobs {
		if j.err != nil {
			tm.closeJob(j, false)
			switch {
			case errors.Is(j.err, context.Canceled) && tm.ctx.Err() != nil:
			case j.kind == restoreStandby:
				tm.log.Warn("cannot create standby task", "task", j.id.String(), "error", j.err)
			case j.kind == restorePromoted:
				tm.log.Warn("promoting standby failed; restoring the task instead", "task", j.id.String(), "error", j.err)
				if err := tm.startRestore(j.id, j.tps); err != nil && failed == nil {
					failed = err
				}
			case failed == nil:
				failed = kafkaErr(fmt.Sprintf("task %s: restore", j.id), j.err)
			}
			continue
		}
		if !j.kind.active() {
			j.lock.Lock()
			tm.view.standbyRestored(j.id, &j.lock) // readable under the thread's store lock from now on
			tm.standbys[j.id] = j.sb
			j.lock.Unlock()
			continue
		}
		tm.tasks[j.id] = j.t
		tm.states[j.id] = j.ts
		for _, tp := range j.ts.Partitions() {
			tm.changelogOwner[tp] = j.id
		}
		for _, tp := range j.tps {
			tm.in.add(j.id, tp, tm.tasks[j.id])
			fresh = append(fresh, tp)
		}
		j.lock.Lock()
		tm.view.run(j.id, j.t, &j.lock)
		j.lock.Unlock()
		tm.log.Debug("restored task joins processing", "task", j.id.String())
	}
	return true, fresh, failed
}

// stopRestore takes task id back from the state updater while it restores (revoked, or
// changing from standby to active or back) and closes it: clean, it first checkpoints what was
// restored. It reports whether the updater held the task.
func (tm *taskManager) stopRestore(id processor.TaskID, clean bool) bool {
	j := tm.updater.remove(id)
	if j == nil {
		return false
	}
	tm.closeJob(j, clean)
	return true
}

// closeJob closes the task of a job the updater gave back (drained or removed). Clean, and
// unless its restore failed, the stores are flushed and the checkpoint file updated with the
// offsets restored (stores the restore did not reach keep their entries): a new restore goes
// on from there. The checkpoint claims nothing the stores do not hold, so no partial state
// passes for more than it is.
func (tm *taskManager) closeJob(j *restoreJob, clean bool) {
	j.lock.Lock()
	tm.unreadableLocked(j)
	if clean && (j.err == nil || errors.Is(j.err, context.Canceled)) {
		if err := tm.checkpointRestored(j); err != nil {
			tm.log.Warn("checkpoint of a task closed while restoring", "task", j.id.String(), "error", err)
		}
	}
	discard := tm.out.discard
	tm.out.discard = true // a restoring task has processed nothing: what its close forwards goes nowhere
	if err := j.t.Close(); err != nil {
		tm.log.Warn("closing task", "task", j.id.String(), "error", err)
	}
	tm.out.discard = discard
	j.lock.Unlock()
	if tm.tasks[j.id] == nil && tm.standbys[j.id] == nil {
		tm.rt.unlockTask(j.id, tm.idx)
	}
}

// checkpointRestored flushes job j's stores and writes its checkpoint: the entries the file
// holds, with the offsets the job's state knows (the restore's progress) over them.
func (tm *taskManager) checkpointRestored(j *restoreJob) error {
	p := j.ts.CheckpointPath()
	if p == "" {
		return nil
	}
	if err := j.t.FlushStores(); err != nil {
		return err
	}
	cp := map[changelog.TopicPartition]int64{}
	if _, err := os.Stat(p); err == nil {
		if cp, err = changelog.ReadCheckpoint(p); err != nil {
			cp = map[changelog.TopicPartition]int64{}
		}
	}
	for tp, off := range j.ts.Offsets() {
		cp[tp] = off
	}
	return changelog.WriteCheckpoint(p, cp)
}

// closeRestoring takes back and closes every task the state updater holds (active ones only
// with activeOnly), and forgets those held back.
func (tm *taskManager) closeRestoring(clean, activeOnly bool) {
	tm.dropHeld(true)
	if !activeOnly {
		tm.dropHeld(false)
	}
	for _, j := range tm.updater.list() {
		if activeOnly && !j.kind.active() {
			continue
		}
		tm.stopRestore(j.id, clean)
	}
}

// handleRestored takes the tasks the state updater finished into processing
// (taskManager.takeRestored) and has their input partitions fetched from their committed
// offsets (assignInputs). An active task whose restore failed is returned as its error (a KafkaError: the
// thread closes its tasks dirty and rejoins, as before the state updater).
func (th *thread) handleRestored() error {
	drained, fresh, failed := th.tm.takeRestored()
	if !drained {
		return nil
	}
	if len(fresh) > 0 {
		th.in.index()
		th.assignInputs(fresh)
	}
	th.tm.reportTasks()
	if th.membership.awaitRestore && failed == nil {
		th.runningOnceRestored()
	}
	return failed
}

// runningOnceRestored moves the thread to RUNNING after a rebalance, or, while the state
// updater still restores active tasks, once it restored them (handleRestored): until then the
// thread stays REBALANCING, processing the tasks that run (Java: a StreamThread stays
// PARTITIONS_ASSIGNED until its state updater restored every active task).
func (th *thread) runningOnceRestored() {
	if th.tm.restoringActive() {
		th.membership.awaitRestore = true
		return
	}
	th.membership.awaitRestore = false
	th.setState(ThreadRunning)
}

// restoreCounter counts restored records in the metrics.
type restoreCounter struct {
	tm *taskManager
	id processor.TaskID
}

// It forwards every event to the application's restore listener, if any.
func (r restoreCounter) OnRestoreStart(tp changelog.TopicPartition, store string, start, end int64) {
	r.tm.log.Debug("restoring", "store", store, "changelog", tp.String(), "from", start, "to", end)
	r.tm.obs.RestoreStart(r.id.String(), store, tp.Topic, tp.Partition, start, end)
	if l := r.tm.rt.cfg.RestoreListener; l != nil {
		l.OnRestoreStart(tp, store, start, end)
	}
}
func (r restoreCounter) OnBatchRestored(tp changelog.TopicPartition, store string, last, n int64) {
	r.tm.obs.RestoreBatch(r.id.String(), tp.Topic, tp.Partition, last, n)
	if m := r.tm.rt.cfg.Metrics; m != nil {
		m.restored.WithLabelValues(r.tm.name).Add(float64(n))
	}
	if l := r.tm.rt.cfg.RestoreListener; l != nil {
		l.OnBatchRestored(tp, store, last, n)
	}
}
func (r restoreCounter) OnRestoreEnd(tp changelog.TopicPartition, store string, total int64) {
	r.tm.log.Debug("restored", "store", store, "changelog", tp.String(), "records", total)
	r.tm.obs.RestoreEnd(r.id.String(), tp.Topic, tp.Partition)
	if l := r.tm.rt.cfg.RestoreListener; l != nil {
		l.OnRestoreEnd(tp, store, total)
	}
}
