package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// Group membership of a stream thread and the life of its tasks. Before it rejoins, the thread
// commits every task (the final commit: all caches flushed) under the generation it is in, and
// processes nothing until the new assignment arrives; then the tasks it keeps go on as they
// were (their queues, fetch positions and stores: neither closed nor restored), the revoked
// ones are closed clean, and the new ones are created and restored before processing resumes.
// Every member stops processing its tasks before it sends its JoinGroup, so a task handed to
// another member is never processed by two at once. Java: StreamThread's rebalance listener
// with the TaskManager's handleAssignment.

// prepareRejoin is called when the group asks for a rejoin (why says why): the tasks are
// committed under the current generation and a join is due. A member that lost its generation
// (expired, fenced, its poll timeout passed) may see its tasks processed elsewhere already:
// they are closed dirty (Java: TaskManager.handleLostAll).
func (th *thread) prepareRejoin(why error) error {
	th.needJoin = true
	if errors.Is(why, group.ErrMemberLost) {
		th.log.Warn("the group member lost its generation; closing the tasks dirty and rejoining", "reason", why)
		th.abortTransaction()
		th.closeTasks(false)
		return nil
	}
	th.log.Debug("rejoining the group", "reason", why)
	if err := th.commit(true); err != nil {
		if errors.Is(err, group.ErrRebalanceInProgress) {
			// At least once: the coordinator refused the commit because the group already
			// rebalances; tasks this member keeps commit later, the others reprocess from
			// the last commit (as Java).
			th.log.Info("commit refused while the group rebalances; rejoining", "error", err)
			return nil
		}
		return err
	}
	return nil
}

// rebalance joins the group and applies the assignment. Errors: a *joinError (retried by run
// unless it wraps group.ErrFatal), restore and offset lookup failures (KafkaError: the tasks
// are closed dirty and the thread rejoins), task errors (fatal for the thread).
func (th *thread) rebalance() error {
	th.setState(ThreadRebalancing)
	th.assignor.setOwned(th.activeIDs())
	th.assignor.setOwnedStandby(th.standbyIDs())
	joined, err := th.member.Join(th.ctx)
	if err != nil {
		if th.ctx.Err() != nil {
			return nil
		}
		return &joinError{err: err}
	}
	th.needJoin = false
	th.joined = joined
	if joined.Lost && len(th.tasks) > 0 {
		// The member was expelled (or its generation refused) on the way: another member may
		// have processed these tasks from the last commit meanwhile, so what this thread kept
		// of them (queues, positions, uncommitted state) is stale. Java: onPartitionsLost.
		th.log.Warn("the group member lost its generation while rejoining; closing the tasks dirty", "generation", joined.Generation)
		th.abortTransaction()
		th.closeTasks(false)
	}
	th.assignor.onAssignment(joined.Assignment)
	th.checkShutdownAssignment()
	assigned := map[processor.TaskID]bool{}
	partsOf := map[processor.TaskID][]kafka.TopicPartition{}
	for _, tp := range joined.Assignment.Partitions {
		sub, ok := th.rt.SubtopologyOf(tp.Topic)
		if !ok {
			th.log.Error("the assignment holds a partition of a topic this application does not read", "partition", tp.String())
			continue
		}
		id := processor.TaskID{Subtopology: sub, Partition: int(tp.Partition)}
		assigned[id] = true
		partsOf[id] = append(partsOf[id], tp)
	}
	for id := range th.tasks {
		if !assigned[id] {
			// Revoked: committed before the join; checkpoint and close.
			th.closeTask(id, true)
		}
	}
	// Standby tasks: promote the ones now active here, close the ones no longer assigned,
	// create the new ones.
	standby := map[processor.TaskID]bool{}
	for _, s := range th.assignor.lastAssignment().Standby {
		if id, ok := parseTaskID(s); ok {
			standby[id] = true
		}
	}
	for id := range th.standbys {
		if assigned[id] {
			if err := th.promote(th.ctx, id); err != nil {
				th.log.Warn("promoting standby failed; restoring the task instead", "task", id.String(), "error", err)
				th.closeStandby(id, false)
			}
		} else if !standby[id] {
			th.closeStandby(id, true)
		}
	}
	for id := range standby {
		if th.standbys[id] != nil || assigned[id] {
			continue
		}
		sb, err := th.createStandby(th.ctx, id)
		if err != nil {
			th.log.Warn("cannot create standby task", "task", id.String(), "error", err)
			continue
		}
		th.standbys[id] = sb
	}
	th.assignor.setOwnedStandby(th.standbyIDs())
	ids := make([]processor.TaskID, 0, len(assigned))
	var fresh []kafka.TopicPartition
	for id := range assigned {
		ids = append(ids, id)
		if th.tasks[id] != nil {
			if th.inputs[id] != nil {
				continue // kept: its partitions stay assigned at their positions
			}
		} else {
			t, err := th.createTask(th.ctx, id)
			if err != nil {
				if th.ctx.Err() != nil {
					return nil
				}
				return err
			}
			th.tasks[id] = t
		}
		for _, tp := range partsOf[id] {
			th.addInput(id, tp)
			fresh = append(fresh, tp)
		}
	}
	if err := th.assignInputs(fresh); err != nil {
		return err
	}
	sortTasks(ids)
	th.indexInputs()
	th.assignor.setOwned(ids)
	th.reportTasks()
	th.mu.Lock()
	th.running = map[processor.TaskID]*task.Task{}
	for id, t := range th.tasks {
		th.running[id] = t
	}
	th.mu.Unlock()
	th.log.Debug("assigned tasks", "tasks", fmt.Sprint(ids), "standbys", fmt.Sprint(th.standbyIDs()), "generation", joined.Generation)
	th.setState(ThreadRunning)
	return nil
}

// activeIDs returns the ids of the active tasks, sorted.
func (th *thread) activeIDs() []processor.TaskID {
	ids := make([]processor.TaskID, 0, len(th.tasks))
	for id := range th.tasks {
		ids = append(ids, id)
	}
	sortTasks(ids)
	return ids
}

// closeTasks closes every task; a dirty close drops what they produce while closing.
func (th *thread) closeTasks(clean bool) {
	th.mu.Lock()
	th.running = map[processor.TaskID]*task.Task{}
	th.mu.Unlock()
	th.discard = !clean
	for id := range th.tasks {
		th.closeTask(id, clean)
	}
	th.discard = false
	th.assignor.setOwned(nil)
	th.reportTasks()
}

// createTask builds a task of the sub-topology, initialises it, restores its stores from
// their changelogs and registers it as active.
func (th *thread) createTask(ctx context.Context, id processor.TaskID) (*task.Task, error) {
	t, ts, err := th.newTask(ctx, id)
	if err != nil {
		return nil, err
	}
	th.states[id] = ts
	for _, tp := range ts.Partitions() {
		th.changelogOwner[tp] = id
	}
	return t, nil
}

// newTask builds and initialises a task and restores its stores (from the checkpoint or the
// offset stored with the data, to the end offset; read_committed under exactly-once).
func (th *thread) newTask(ctx context.Context, id processor.TaskID) (*task.Task, *changelog.TaskState, error) {
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
	cfg.Collector = collector{th}
	cfg.StateDir = r.taskDir(id)
	cfg.Logger = th.log
	cfg.Cache = th.cache
	cfg.PebbleEnv = r.pebble
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
		Reader: th.reader, Listener: restoreCounter{th}, Logger: th.log}, t)
	if err := ts.Restore(ctx); err != nil {
		t.Close()
		return nil, nil, kafkaErr(fmt.Sprintf("task %s: restore", id), err)
	}
	ok = true
	return t, ts, nil
}

// closeTask closes a task and stops fetching its partitions. A clean close checkpoints its
// stores (the task was committed); a dirty close aborts the stores' open exactly-once
// transaction and writes no checkpoint, so the next owner restores from the last committed
// state.
func (th *thread) closeTask(id processor.TaskID, clean bool) {
	th.storeMu.Lock()
	defer th.storeMu.Unlock()
	t, ts := th.tasks[id], th.states[id]
	th.mu.Lock()
	if th.running[id] == t {
		delete(th.running, id)
	}
	th.mu.Unlock()
	th.removeInputs(id)
	if ts != nil {
		var err error
		if clean {
			// The final commit left no cache dirty; should the store flush still forward
			// records, they are sent (and committed) before the checkpoint claims them.
			before := th.sent
			if err = th.flushStores(id); err == nil {
				if err = th.sendClosing(id, th.sent-before); err == nil {
					th.writeCheckpoint(id)
				}
			}
		} else if th.rt.cfg.ExactlyOnce {
			err = ts.AbortTransaction()
		}
		if err != nil {
			th.log.Warn("closing task: changelog state", "task", id.String(), "error", err)
		}
		for tp, owner := range th.changelogOwner {
			if owner == id {
				delete(th.changelogOwner, tp)
			}
		}
	}
	if t != nil {
		// Records forwarded by the close itself (a processor's Close, a store's close) come
		// after the checkpoint: the task is gone, so they cannot be sent for it any more.
		discard, dropped := th.discard, th.discarded
		th.discard = true
		if err := t.Close(); err != nil {
			th.log.Warn("closing task", "task", id.String(), "error", err)
		}
		if n := th.discarded - dropped; clean && n > 0 {
			th.log.Error("dropping records forwarded while closing the task", "task", id.String(), "records", n)
		}
		th.discard = discard
	}
	delete(th.tasks, id)
	delete(th.states, id)
	delete(th.checkpointed, id)
	if t != nil && th.standbys[id] == nil {
		th.rt.unlockTask(id, th.idx)
	}
}

// sendClosing waits for the acknowledgements of the n records that closing task id cleanly
// forwarded (its store flush); under exactly-once it commits them in a transaction of their own
// and applies the task's store transaction, so the checkpoint written next covers them.
// Records produced before (none after a final commit) go along.
func (th *thread) sendClosing(id processor.TaskID, n int64) error {
	if n == 0 {
		return nil
	}
	th.log.Debug("sending records forwarded while closing the task", "task", id.String(), "records", n)
	if err := th.flushOutput(); err != nil {
		return err
	}
	if !th.rt.cfg.ExactlyOnce || !th.txnOpen {
		return nil
	}
	return th.commitTxn()
}

// restoreCounter counts restored records in the metrics.
type restoreCounter struct{ th *thread }

// It forwards every event to the application's restore listener, if any.
func (r restoreCounter) OnRestoreStart(tp changelog.TopicPartition, store string, start, end int64) {
	r.th.log.Debug("restoring", "store", store, "changelog", tp.String(), "from", start, "to", end)
	if l := r.th.rt.cfg.RestoreListener; l != nil {
		l.OnRestoreStart(tp, store, start, end)
	}
}
func (r restoreCounter) OnBatchRestored(tp changelog.TopicPartition, store string, last, n int64) {
	r.th.member.Poll() // a long restore is progress, not a stuck thread (max.poll.interval.ms)
	if m := r.th.rt.cfg.Metrics; m != nil {
		m.restored.WithLabelValues(r.th.name).Add(float64(n))
	}
	if l := r.th.rt.cfg.RestoreListener; l != nil {
		l.OnBatchRestored(tp, store, last, n)
	}
}
func (r restoreCounter) OnRestoreEnd(tp changelog.TopicPartition, store string, total int64) {
	r.th.log.Debug("restored", "store", store, "changelog", tp.String(), "records", total)
	if l := r.th.rt.cfg.RestoreListener; l != nil {
		l.OnRestoreEnd(tp, store, total)
	}
}
