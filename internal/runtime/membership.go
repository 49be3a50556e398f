package runtime

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/processor"
)

// Group membership of a stream thread and the life of its tasks. During a cooperative
// rebalance of a member that stands in its generation, the classic JoinGroup/SyncGroup run
// beside the processing (rejoin.go): the tasks it owns go on processing, since under
// cooperative rebalancing no member is given a partition another member still owns; tasks the
// new assignment revokes are committed under the new generation, then closed. Otherwise (the
// first join, a lost generation, a shutdown request, and on the streams protocol) the thread
// commits every task (the final commit: all caches flushed) under the generation it is in
// before it rejoins. Either way the tasks it keeps go on as they were (their queues, fetch
// positions and stores: neither closed nor restored), the revoked ones are closed clean, and
// the new ones are created and handed to the state updater (updater.go), which restores them
// while the thread processes the others; each joins processing once restored. Java:
// StreamThread's rebalance listener with the TaskManager's handleAssignment and its
// StateUpdater.

// prepareRejoin is called when the group asks for a rejoin (why says why): the tasks are
// committed under the current generation and a join is due. A member that lost its generation
// (expired, fenced, its poll timeout passed) may see its tasks processed elsewhere already:
// they are closed dirty (Java: TaskManager.handleLostAll).
func (th *thread) prepareRejoin(why error) error {
	th.needJoin = true
	if errors.Is(why, group.ErrMemberLost) {
		th.log.Warn("the group member lost its generation; closing the tasks dirty and rejoining", "reason", why)
		th.out.abortTransaction()
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

// rebalance joins the group and applies the assignment (on the streams protocol:
// rebalanceStreams). Errors: a *joinError (retried by run
// unless it wraps group.ErrFatal), restore and offset lookup failures (KafkaError: the tasks
// are closed dirty and the thread rejoins), task errors (fatal for the thread), and errors
// wrapping ErrAssignment or ErrMissingSourceTopics when the assignment cannot be followed
// (fatal for the thread, as Java's TaskAssignmentException and MissingSourceTopicException;
// the tasks, committed before the join, are closed clean first).
//
// The assignment is applied as Java's cooperative StreamThread does: the active tasks the
// assignment keeps stay as they are, revoked ones are closed clean (committed before the join)
// and the member rejoins at once so that their new owners get them; standbys (warm-ups
// included) are created, kept or closed, and promoted when they become active; the follow-up
// rebalance the assignment asks for (at once, or a probing rebalance at a time) is scheduled.
func (th *thread) rebalance() error {
	if th.streams != nil {
		return th.rebalanceStreams()
	}
	th.setState(ThreadRebalancing)
	if err := th.assignor.init(th); err != nil {
		return fmt.Errorf("%s: %w", th.name, err)
	}
	th.assignor.stopFollowup()
	th.assignor.setOwned(th.ownedPartitions())
	joined, err := th.classic.Join(th.ctx)
	if err != nil {
		if th.ctx.Err() != nil {
			return nil
		}
		return &joinError{err: err}
	}
	return th.applyJoined(joined)
}

// applyJoined applies the generation a classic Join returned (on the thread, after rebalance's
// Join or a background join): tasks lost with an expelled member are closed dirty, the
// assignment is read and checked, and applyAssignment applies it.
func (th *thread) applyJoined(joined group.Joined) error {
	th.needJoin = false
	th.joined = joined
	if joined.Lost && len(th.tm.tasks) > 0 {
		// The member was expelled (or its generation refused) on the way: another member may
		// have processed these tasks from the last commit meanwhile, so what this thread kept
		// of them (queues, positions, uncommitted state) is stale. Java: onPartitionsLost.
		th.log.Warn("the group member lost its generation while rejoining; closing the tasks dirty", "generation", joined.Generation)
		th.out.abortTransaction()
		th.closeTasks(false)
	}
	got, err := th.assignor.onAssignment(joined.Assignment)
	if err == nil {
		err = th.checkAssignment(got)
	}
	if err != nil {
		th.closeAll()
		return fmt.Errorf("%s: assignment of generation %d from leader %s: %w", th.name, joined.Generation, joined.LeaderID, err)
	}
	th.checkShutdownAssignment()
	switch got.errorCode {
	case assignment.ErrorNone, assignment.ErrorShutdownRequested:
	case assignment.ErrorVersionProbing:
		th.log.Info("the leader answered with error code VERSION_PROBING; taking no tasks this time")
	case assignment.ErrorIncompleteSourceTopicMetadata:
		th.closeAll()
		return fmt.Errorf("%s: %w: the group leader (member %s) found source topics missing (error code INCOMPLETE_SOURCE_TOPIC_METADATA)",
			th.name, ErrMissingSourceTopics, joined.LeaderID)
	default:
		th.closeAll()
		return fmt.Errorf("%s: %w: the group leader (member %s) answered with error code %d (%s); see the leader's log",
			th.name, ErrAssignment, joined.LeaderID, got.errorCode, assignorErrorName(got.errorCode))
	}
	if err := th.commitBeforeRevoking(got); err != nil {
		return err
	}
	revoked, err := th.applyAssignment(got)
	if err != nil || th.ctx.Err() != nil {
		return err
	}
	th.log.Debug("assigned tasks", "tasks", fmt.Sprint(th.tm.activeIDs()), "standbys", fmt.Sprint(th.tm.standbyIDs()), "generation", joined.Generation)
	if got.errorCode == assignment.ErrorNone || got.errorCode == assignment.ErrorVersionProbing {
		next, why := got.nextRebalanceMs, got.why
		if revoked && next != 0 {
			// Java's consumer rejoins after revoking partitions (cooperative protocol).
			next, why = 0, "tasks were revoked; rejoining so that their new owners can take them (cooperative rebalancing)"
		}
		th.assignor.scheduleFollowup(th.classic, next, why)
	}
	th.runningOnceRestored()
	return nil
}

// applyAssignment applies the tasks received (from a classic assignment or the streams group
// coordinator) through the task manager (taskManager.handleAssignment: kept, revoked,
// promoted, created), then starts fetching the input partitions of kept tasks that had none
// and updates the member's owned partitions. Nothing here waits for a restore. It reports
// whether active tasks were revoked. Errors: task creation errors, the inputs' offset lookups.
func (th *thread) applyAssignment(got received) (revoked bool, err error) {
	revoked, fresh, err := th.tm.handleAssignment(got)
	if err != nil {
		if th.ctx.Err() != nil {
			return revoked, nil
		}
		return revoked, err
	}
	if err := th.assignInputs(fresh); err != nil {
		return revoked, err
	}
	th.in.index()
	th.assignor.setOwned(th.ownedPartitions())
	th.tm.reportTasks()
	return revoked, nil
}

// checkAssignment refuses an assignment whose partitions do not belong to the tasks it pairs
// them with in this instance's topology (the members run different topologies).
func (th *thread) checkAssignment(got received) error {
	for id, tps := range got.active {
		for _, tp := range tps {
			sub, ok := th.rt.SubtopologyOf(tp.Topic)
			if !ok {
				return fmt.Errorf("%w: partition %s of task %s: this application's topology reads no topic %q", ErrAssignment, tp, id, tp.Topic)
			}
			if sub != id.Subtopology || int(tp.Partition) != id.Partition {
				return fmt.Errorf("%w: partition %s belongs to task %d_%d in this application's topology, not %s (do the instances run the same topology?)",
					ErrAssignment, tp, sub, tp.Partition, id)
			}
		}
	}
	for id := range got.standby {
		if l := th.rt.layout; l == nil {
			continue
		} else if _, ok := l.Tasks[id.Subtopology]; !ok {
			return fmt.Errorf("%w: standby task %s: this application's topology has no sub-topology %d", ErrAssignment, id, id.Subtopology)
		}
	}
	return nil
}

// closeAll closes the active tasks (committed before the join) and the standbys clean.
func (th *thread) closeAll() {
	th.closeTasks(true)
	th.tm.closeRestoring(true, false)
	th.tm.closeStandbys(true)
	th.tm.reportTasks()
}

// ownedPartitions returns the partitions this thread's active tasks read, sorted: what the
// member owns (its consumer-protocol owned partitions), those of the tasks restoring included.
func (th *thread) ownedPartitions() []kafka.TopicPartition {
	out := make([]kafka.TopicPartition, 0, len(th.in.parts))
	for tp := range th.in.parts {
		out = append(out, tp)
	}
	out = append(out, th.tm.restoringPartitions()...)
	slices.SortFunc(out, func(a, b kafka.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}

// offsetSum sums known changelog offsets, saturating at math.MaxInt64.
func offsetSum(offs map[changelog.TopicPartition]int64) int64 {
	var sum int64
	for _, off := range offs {
		if off < 0 {
			continue
		}
		if sum > math.MaxInt64-off {
			return math.MaxInt64
		}
		sum += off
	}
	return sum
}

// unownedOffsetSums reads the checkpoints of the task directories under
// <state.dir>/<application.id> that no thread of this instance holds: the state a previous run
// (or another instance sharing the directory) left, which makes this instance a good owner of
// those tasks. A directory without checkpoint is left out.
func (r *Runtime) unownedOffsetSums() map[processor.TaskID]int64 {
	if r.cfg.StateDir == "" {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(r.cfg.StateDir, r.cfg.ApplicationID))
	if err != nil {
		return nil
	}
	out := map[processor.TaskID]int64{}
	for _, e := range entries {
		id, ok := parseTaskID(e.Name())
		if !e.IsDir() || !ok {
			continue
		}
		r.mu.Lock()
		_, held := r.taskLocks[id]
		r.mu.Unlock()
		if held {
			continue
		}
		path := filepath.Join(r.taskDir(id), changelog.CheckpointFileName)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		offs, err := changelog.ReadCheckpoint(path)
		if err != nil {
			r.log.Warn("reading a task's checkpoint for the subscription", "task", id.String(), "error", err)
			continue
		}
		out[id] = offsetSum(offs)
	}
	return out
}

func sortedIDs[V any](m map[processor.TaskID]V) []processor.TaskID {
	ids := make([]processor.TaskID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sortTasks(ids)
	return ids
}

// assignorErrorName names a Java AssignorError code.
func assignorErrorName(code int32) string {
	switch code {
	case assignment.ErrorNone:
		return "NONE"
	case assignment.ErrorIncompleteSourceTopicMetadata:
		return "INCOMPLETE_SOURCE_TOPIC_METADATA"
	case assignment.ErrorVersionProbing:
		return "VERSION_PROBING"
	case assignment.ErrorAssignmentError:
		return "ASSIGNMENT_ERROR"
	case assignment.ErrorShutdownRequested:
		return "SHUTDOWN_REQUESTED"
	}
	return "unknown"
}

// closeTasks closes every active task, those restoring included (taskManager.closeActive); a
// dirty close drops what they produce while closing. The member owns no partition then.
func (th *thread) closeTasks(clean bool) {
	th.tm.closeActive(clean)
	th.assignor.setOwned(nil)
	th.tm.reportTasks()
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
	if !th.rt.cfg.ExactlyOnce || !th.out.txnOpen {
		return nil
	}
	return th.commitTxn()
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
