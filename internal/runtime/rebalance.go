package runtime

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
)

// A stream thread's side of a rebalance: the life of its tasks across the group's generations.
// The thread's membership (membership.go) joins, decides when to rejoin and reads the
// assignment; the thread commits or closes its tasks before a rejoin and applies the assignment
// through its task manager. During a cooperative rebalance of a member that stands in its
// generation, the classic JoinGroup/SyncGroup run beside the processing (rejoin.go): the tasks
// it owns go on processing, since under cooperative rebalancing no member is given a partition
// another member still owns; tasks the new assignment revokes are committed under the new
// generation, then closed. Otherwise (the first join, a lost generation, a shutdown request,
// and on the streams protocol) the thread commits every task (the final commit: all caches
// flushed) under the generation it is in before it rejoins. Either way the tasks it keeps go on
// as they were (their queues, fetch positions and stores: neither closed nor restored), the
// revoked ones are closed clean, and the new ones are created and handed to the state updater
// (updater.go), which restores them while the thread processes the others; each joins
// processing once restored. Java: StreamThread's rebalance listener with the TaskManager's
// handleAssignment and its StateUpdater.

// prepareRejoin is called when the group asks for a rejoin (why says why): the tasks are
// committed under the current generation and a join is due. A member that lost its generation
// (expired, fenced, its poll timeout passed) may see its tasks processed elsewhere already:
// they are closed dirty (Java: TaskManager.handleLostAll).
func (th *thread) prepareRejoin(why error) error {
	th.membership.needJoin = true
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

// rebalance joins the group (membership.joinGroup) and applies the assignment (on the streams
// protocol: rebalanceStreams). Errors: a *joinError (retried by run unless it wraps
// group.ErrFatal), restore failures (KafkaError: the tasks
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
	if th.membership.streams != nil {
		return th.rebalanceStreams()
	}
	th.setState(ThreadRebalancing)
	joined, ok, err := th.membership.joinGroup(th.ownedPartitions())
	if !ok {
		return err
	}
	return th.applyJoined(joined)
}

// applyJoined applies the generation a classic Join returned (on the thread, after rebalance's
// join or a background join): tasks lost with an expelled member are closed dirty, the
// membership reads and checks the assignment (assignmentOf), applyAssignment applies it, and
// the membership schedules the follow-up rebalance it asks for.
func (th *thread) applyJoined(joined group.Joined) error {
	if joined.Lost && len(th.tm.tasks) > 0 {
		// The member was expelled (or its generation refused) on the way: another member may
		// have processed these tasks from the last commit meanwhile, so what this thread kept
		// of them (queues, positions, uncommitted state) is stale. Java: onPartitionsLost.
		th.log.Warn("the group member lost its generation while rejoining; closing the tasks dirty", "generation", joined.Generation)
		th.out.abortTransaction()
		th.closeTasks(false)
	}
	got, err := th.membership.assignmentOf(joined)
	if err != nil {
		th.closeAll()
		return err
	}
	if err := th.commitBeforeRevoking(got); err != nil {
		return err
	}
	revoked, err := th.applyAssignment(got)
	if err != nil || th.ctx.Err() != nil {
		return err
	}
	th.log.Debug("assigned tasks", "tasks", fmt.Sprint(th.tm.activeIDs()), "standbys", fmt.Sprint(th.tm.standbyIDs()), "generation", joined.Generation)
	th.membership.scheduleFollowup(got, revoked)
	th.runningOnceRestored()
	return nil
}

// applyAssignment applies the tasks received (from a classic assignment or the streams group
// coordinator) through the task manager (taskManager.handleAssignment: kept, revoked,
// promoted, created), then has the input partitions of kept tasks that had none fetched from
// their committed offsets (assignInputs) and updates the member's owned partitions. Nothing
// here waits for a restore, for another thread or for the offsets. It reports
// whether active tasks were revoked. Errors: task creation errors.
func (th *thread) applyAssignment(got received) (revoked bool, err error) {
	revoked, fresh, err := th.tm.handleAssignment(got)
	if err != nil {
		if th.ctx.Err() != nil {
			return revoked, nil
		}
		return revoked, err
	}
	th.assignInputs(fresh)
	th.in.index()
	th.membership.setOwned(th.ownedPartitions())
	th.tm.reportTasks()
	return revoked, nil
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

// closeTasks closes every active task, those restoring included (taskManager.closeActive); a
// dirty close drops what they produce while closing. The member owns no partition then.
func (th *thread) closeTasks(clean bool) {
	th.tm.closeActive(clean)
	th.awaiting = awaitingOffsets{}
	th.membership.setOwned(nil)
	th.tm.reportTasks()
}

// rebalanceStreams applies the streams member's latest target assignment (the first call makes
// it join and waits until the coordinator answered; membership.awaitTarget): as rebalance does for a classic assignment,
// through applyAssignment, then acknowledges the tasks owned so that the member reports them.
// Tasks of a sub-topology this topology lacks are fatal (ErrAssignment), as the member's fatal
// errors are (a group of the other protocol: *group.ProtocolMismatchError).
func (th *thread) rebalanceStreams() error {
	th.setState(ThreadRebalancing)
	m := th.membership
	t, ok, err := m.awaitTarget()
	if !ok {
		if err != nil {
			th.closeAll()
		}
		return err
	}
	if t.lost && len(th.tm.tasks) > 0 {
		th.log.Warn("the streams group member lost its tasks; closing them dirty", "epoch", t.epoch)
		th.out.abortTransaction()
		th.closeTasks(false)
	}
	got, err := m.streamsAssignment(t)
	if err != nil {
		th.closeAll()
		return err
	}
	if _, err := th.applyAssignment(got); err != nil || th.ctx.Err() != nil {
		return err
	}
	m.acknowledge(t, th.tm.activeIDs())
	th.log.Debug("applied the streams group assignment", "tasks", fmt.Sprint(th.tm.activeIDs()), "standbys", fmt.Sprint(th.tm.standbyIDs()), "epoch", t.epoch)
	th.runningOnceRestored()
	return nil
}

// startJoin starts a background join (rejoin.go) for the rejoin why asks for: the thread is
// REBALANCING while its tasks process on. The subscription's owned partitions and task offset
// sums are taken now (the join goroutine must not read the thread's task maps).
func (th *thread) startJoin(why error) {
	th.setState(ThreadRebalancing)
	th.membership.startJoin(why, th.ownedPartitions(), th.tm.taskOffsetSums())
}

// pollJoin looks at the background join once per loop: while it runs, it checks that the member
// still stands in its generation (else the tasks are closed dirty: another member may own them
// now); once it ended, the assignment is applied (applyJoined). A failed join closes the tasks
// dirty (what they processed since the last commit is reprocessed) and returns a *joinError
// (run retries the join).
func (th *thread) pollJoin() error {
	joined, done, err := th.membership.joinResult()
	if !done {
		if len(th.tm.tasks) > 0 && th.membership.generationLost() {
			th.log.Warn("the group member lost its generation while rejoining; closing the tasks dirty")
			th.out.abortTransaction()
			th.closeTasks(false)
		}
		return nil
	}
	if err != nil {
		th.out.abortTransaction()
		th.closeTasks(false)
		if th.ctx.Err() != nil {
			return nil
		}
		return &joinError{err: err}
	}
	return th.applyJoined(joined)
}

// commitBeforeRevoking commits the tasks when the assignment got revokes some of them that
// processed since the last commit (a background join), under the generation just joined, so
// that closing them clean loses nothing. A commit the coordinator refuses because the group
// rebalances again is left to the tasks' next owners (at-least-once: they reprocess from the
// last commit), as prepareRejoin does.
func (th *thread) commitBeforeRevoking(got received) error {
	revoking := false
	for id := range th.tm.tasks {
		if _, ok := got.active[id]; !ok {
			revoking = true
			break
		}
	}
	if !revoking {
		return nil
	}
	if err := th.commit(true); err != nil {
		if errors.Is(err, group.ErrRebalanceInProgress) {
			th.log.Info("commit refused while the group rebalances; closing the revoked tasks", "error", err)
			return nil
		}
		return err
	}
	return nil
}
