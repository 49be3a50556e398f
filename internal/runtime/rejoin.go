package runtime

import (
	"errors"

	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/processor"
)

// Processing through a cooperative rebalance (classic protocol). When the group rebalances
// while this member stands in its generation (the coordinator answered a heartbeat with
// REBALANCE_IN_PROGRESS, a follow-up or probing rebalance is due, or the partitions of a topic
// changed), the JoinGroup and SyncGroup run on a goroutine of their own (backgroundJoin) and
// the thread goes on processing the tasks it owns: under cooperative rebalancing no partition
// leaves a member before that member gave it up in a later generation, so nobody else
// processes them meanwhile. The thread commits nothing while the join runs (the member is
// between generations) and takes no restored task into processing (its committed offsets are
// read through the member). When the join ended, applyJoined applies the assignment on the
// thread; tasks the assignment revokes are committed first, under the new generation
// (commitBeforeRevoking), then closed. Should the member lose its generation meanwhile (its
// partitions may belong to another member then), the thread stops processing at once: the
// tasks are closed dirty. Java: the consumer's cooperative rebalance inside poll(), during
// which the StreamThread keeps processing (ConsumerCoordinator with COOPERATIVE protocol).
//
// The streams protocol (KIP-1071) needs none of this: its heartbeats run beside the thread and
// a new assignment is applied between two loops (rebalanceStreams), restores included in the
// state updater.

// backgroundJoin is a classic Join running beside the thread's processing.
type backgroundJoin struct {
	done   chan struct{}
	joined group.Joined
	err    error
}

// joinsInBackground reports whether the rejoin why asks for keeps this member in its
// generation until it rejoined, so that the thread may go on processing meanwhile.
func (th *thread) joinsInBackground(why error) bool {
	if th.classic == nil || th.joined.Generation <= 0 {
		return false
	}
	return errors.Is(why, group.ErrRebalanceInProgress) || errors.Is(why, group.ErrRejoinRequested) ||
		errors.Is(why, group.ErrPartitionsChanged)
}

// startJoin starts the background join. The subscription's task offset sums are taken now
// (the join goroutine must not read the thread's task maps).
func (th *thread) startJoin(why error) {
	th.log.Debug("rejoining the group while processing (cooperative rebalance)", "reason", why)
	th.setState(ThreadRebalancing)
	th.assignor.stopFollowup()
	th.assignor.setOwned(th.ownedPartitions())
	sums := th.tm.taskOffsetSums()
	th.assignor.offsetSums = func() map[processor.TaskID]int64 { return sums }
	j := &backgroundJoin{done: make(chan struct{})}
	th.join = j
	go func() {
		defer close(j.done)
		j.joined, j.err = th.classic.Join(th.ctx)
	}()
}

// pollJoin looks at the background join once per loop: while it runs, it checks that the member
// still stands in its generation (else the tasks are closed dirty: another member may own them
// now); once it ended, the assignment is applied (applyJoined). A failed join closes the tasks
// dirty (what they processed since the last commit is reprocessed) and returns a *joinError
// (run retries the join).
func (th *thread) pollJoin() error {
	j := th.join
	select {
	case <-j.done:
	default:
		if len(th.tm.tasks) > 0 && th.classic.GenerationLost() {
			th.log.Warn("the group member lost its generation while rejoining; closing the tasks dirty")
			th.out.abortTransaction()
			th.closeTasks(false)
		}
		return nil
	}
	th.join = nil
	th.assignor.offsetSums = th.tm.taskOffsetSums
	if j.err != nil {
		th.out.abortTransaction()
		th.closeTasks(false)
		th.needJoin = true
		if th.ctx.Err() != nil {
			return nil
		}
		return &joinError{err: j.err}
	}
	return th.applyJoined(j.joined)
}

// awaitJoin waits for a background join to end (the runtime stops: the join returns promptly)
// and forgets it.
func (th *thread) awaitJoin() {
	if th.join == nil {
		return
	}
	<-th.join.done
	th.join = nil
	th.assignor.offsetSums = th.tm.taskOffsetSums
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
