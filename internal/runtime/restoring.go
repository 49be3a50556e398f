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

// The thread's side of its state updater (updater.go): it builds the tasks an assignment gives
// it and hands them to the updater to restore (startRestore, startStandby, startPromotion),
// takes the restored ones back into processing on every loop (handleRestored), and takes back
// and closes those the assignment takes away while they restore (stopRestore). Java:
// TaskManager's use of the StateUpdater (handleAssignment, checkStateUpdater).

// buildTask builds and initialises task id's engine and its changelog state, with lock as the
// state's store lock (held per restored batch) and the restore events going to listener. The
// task's state directory is locked for this thread.
func (th *thread) buildTask(ctx context.Context, id processor.TaskID, lock sync.Locker, listener changelog.RestoreListener) (*task.Task, *changelog.TaskState, error) {
	r := th.rt
	spec, err := task.SpecFromTopology(r.cfg.Topology, r.cfg.ApplicationID, []int{id.Subtopology})
	if err != nil {
		return nil, nil, err
	}
	if err := r.lockTask(ctx, id, th.idx); err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			r.unlockTask(id, th.idx)
		}
	}()
	cfg := r.cfg.Task
	cfg.Collector = collector{th.out}
	cfg.StateDir = r.taskDir(id)
	cfg.Logger = th.log
	cfg.Cache = th.cache
	cfg.PebbleEnv = r.pebble
	cfg.AsyncNotify = th.signal // async steps: a completed call is work for the thread (process.go)
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
		Reader: th.reader, Listener: listener, Logger: th.log, StoreLock: lock}, t)
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
func (th *thread) readable(j *restoreJob) {
	if j.kind.active() {
		th.view.showRestoring(j.id, j.t, &j.lock)
	} else {
		th.view.showStandby(j.id, j.t, &j.lock)
	}
}

// unreadable takes job j's task out of the sets interactive queries read; a query reading it
// finishes first. Call it holding j.lock.
func (th *thread) unreadableLocked(j *restoreJob) {
	th.view.hideRestored(j.id, j.t, &j.lock)
}

// startRestore builds new active task id (input partitions tps) and hands it to the state
// updater, which restores its stores from their changelogs (from the checkpoint, or the
// offset stored with the data, to the end offset; read_committed under exactly-once); the
// thread takes it into processing once restored (handleRestored).
func (th *thread) startRestore(id processor.TaskID, tps []kafka.TopicPartition) error {
	j := newJob(id, restoreActive)
	t, ts, err := th.buildTask(th.ctx, id, &j.lock, jobListener{j, restoreCounter{th: th, id: id}})
	if err != nil {
		return err
	}
	j.t, j.ts, j.tps = t, ts, slices.Clone(tps)
	th.seedOffsets(j)
	j.run = func(ctx context.Context, j *restoreJob) error { return j.ts.Restore(ctx) }
	th.readable(j)
	th.updater.add(th.ctx, j)
	th.obs.TasksCreated.Add(1)
	return nil
}

// startStandby builds standby task id and hands it to the state updater, which restores its
// stores and records the changelog positions the thread goes on from (updateStandbys).
func (th *thread) startStandby(id processor.TaskID) error {
	j := newJob(id, restoreStandby)
	t, ts, err := th.buildTask(th.ctx, id, &j.lock, jobListener{j, restoreCounter{th: th, id: id}})
	if err != nil {
		return err
	}
	j.t, j.ts = t, ts
	th.seedOffsets(j)
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
			begin, err := th.reader.BeginningOffset(ctx, tp)
			if err != nil {
				return kafkaErr("standby "+j.id.String()+": beginning offset", err)
			}
			sb.pos[name] = begin
		}
		j.sb = sb
		return nil
	}
	th.readable(j)
	th.updater.add(th.ctx, j)
	return nil
}

// startPromotion hands standby id, now active with input partitions tps, to the state updater,
// which brings it to the changelogs' end (restoring only the tail since its last update).
func (th *thread) startPromotion(id processor.TaskID, tps []kafka.TopicPartition) {
	sb := th.standbys[id]
	j := newJob(id, restorePromoted)
	j.t, j.ts, j.sb, j.tps = sb.t, sb.ts, sb, slices.Clone(tps)
	for tp, off := range sb.ts.Offsets() {
		j.setOffset(tp, off)
	}
	j.run = func(ctx context.Context, j *restoreJob) error {
		n, err := th.updateStandby(ctx, j.id, j.sb, true, th.reader, &j.lock)
		if err != nil {
			return err
		}
		if m := th.rt.cfg.Metrics; m != nil {
			m.restored.WithLabelValues(th.name).Add(float64(n))
		}
		th.log.Info("promoted standby task to active", "task", j.id.String(), "tail records", n)
		return nil
	}
	// A query of the standby finishes first; from now on queries find the task restoring.
	th.view.promote(id, j.t, &j.lock)
	delete(th.standbys, id)
	th.updater.add(th.ctx, j)
}

// seedOffsets takes the offsets of job j's checkpoint as the first it knows (for the
// subscription's task offset sums while the job waits or restores).
func (th *thread) seedOffsets(j *restoreJob) {
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

// handleRestored takes the jobs the state updater finished: a restored active task joins the
// running tasks (its input partitions are fetched from their committed offsets), a restored
// standby joins the standbys. A standby whose restore failed is dropped (with a warning), a
// promotion that failed restores the task anew; an active task whose restore failed is closed
// and the error returned (a KafkaError: the thread closes its tasks dirty and rejoins, as
// before the state updater). Java: TaskManager.checkStateUpdater.
func (th *thread) handleRestored() error {
	jobs := th.updater.drain()
	if len(jobs) == 0 {
		return nil
	}
	var fresh []kafka.TopicPartition
	var failed error
	for _, j := range jobs {
		if j.err != nil {
			th.closeJob(j, false)
			switch {
			case errors.Is(j.err, context.Canceled) && th.ctx.Err() != nil:
			case j.kind == restoreStandby:
				th.log.Warn("cannot create standby task", "task", j.id.String(), "error", j.err)
			case j.kind == restorePromoted:
				th.log.Warn("promoting standby failed; restoring the task instead", "task", j.id.String(), "error", j.err)
				if err := th.startRestore(j.id, j.tps); err != nil && failed == nil {
					failed = err
				}
			case failed == nil:
				failed = kafkaErr(fmt.Sprintf("task %s: restore", j.id), j.err)
			}
			continue
		}
		if !j.kind.active() {
			j.lock.Lock()
			th.view.standbyRestored(j.id, &j.lock) // readable under the thread's store lock from now on
			th.standbys[j.id] = j.sb
			j.lock.Unlock()
			continue
		}
		th.tasks[j.id] = j.t
		th.states[j.id] = j.ts
		for _, tp := range j.ts.Partitions() {
			th.changelogOwner[tp] = j.id
		}
		for _, tp := range j.tps {
			th.in.add(j.id, tp, th.tasks[j.id])
			fresh = append(fresh, tp)
		}
		j.lock.Lock()
		th.view.run(j.id, j.t, &j.lock)
		j.lock.Unlock()
		th.log.Debug("restored task joins processing", "task", j.id.String())
	}
	if len(fresh) > 0 {
		th.in.index()
		if err := th.assignInputs(fresh); err != nil && failed == nil {
			failed = err
		}
	}
	th.reportTasks()
	if th.awaitRestore && failed == nil {
		th.runningOnceRestored()
	}
	return failed
}

// stopRestore takes task id back from the state updater while it restores (revoked, or
// changing from standby to active or back) and closes it: clean, it first checkpoints what was
// restored. It reports whether the updater held the task.
func (th *thread) stopRestore(id processor.TaskID, clean bool) bool {
	j := th.updater.remove(id)
	if j == nil {
		return false
	}
	th.closeJob(j, clean)
	return true
}

// closeJob closes the task of a job the updater gave back (drained or removed). Clean, and
// unless its restore failed, the stores are flushed and the checkpoint file updated with the
// offsets restored (stores the restore did not reach keep their entries): a new restore goes
// on from there. The checkpoint claims nothing the stores do not hold, so no partial state
// passes for more than it is.
func (th *thread) closeJob(j *restoreJob, clean bool) {
	j.lock.Lock()
	th.unreadableLocked(j)
	if clean && (j.err == nil || errors.Is(j.err, context.Canceled)) {
		if err := th.checkpointRestored(j); err != nil {
			th.log.Warn("checkpoint of a task closed while restoring", "task", j.id.String(), "error", err)
		}
	}
	discard := th.out.discard
	th.out.discard = true // a restoring task has processed nothing: what its close forwards goes nowhere
	if err := j.t.Close(); err != nil {
		th.log.Warn("closing task", "task", j.id.String(), "error", err)
	}
	th.out.discard = discard
	j.lock.Unlock()
	if th.tasks[j.id] == nil && th.standbys[j.id] == nil {
		th.rt.unlockTask(j.id, th.idx)
	}
}

// checkpointRestored flushes job j's stores and writes its checkpoint: the entries the file
// holds, with the offsets the job's state knows (the restore's progress) over them.
func (th *thread) checkpointRestored(j *restoreJob) error {
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
// with activeOnly).
func (th *thread) closeRestoring(clean, activeOnly bool) {
	for _, j := range th.updater.list() {
		if activeOnly && !j.kind.active() {
			continue
		}
		th.stopRestore(j.id, clean)
	}
}

// runningOnceRestored moves the thread to RUNNING after a rebalance, or, while the state
// updater still restores active tasks, once it restored them (handleRestored): until then the
// thread stays REBALANCING, processing the tasks that run (Java: a StreamThread stays
// PARTITIONS_ASSIGNED until its state updater restored every active task).
func (th *thread) runningOnceRestored() {
	for _, j := range th.updater.list() {
		if j.kind.active() {
			th.awaitRestore = true
			return
		}
	}
	th.awaitRestore = false
	th.setState(ThreadRunning)
}
