package runtime

import (
	"errors"

	"github.com/kstreams-go/kstreams/internal/kafka"
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
// read through the member). The membership runs the join (startJoin) and reports when it ended
// (joinResult); the thread (rebalance.go: pollJoin) then applies the assignment (applyJoined);
// tasks the assignment revokes are committed first, under the new generation
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
func (m *membership) joinsInBackground(why error) bool {
	if m.classic == nil || m.joined.Generation <= 0 {
		return false
	}
	return errors.Is(why, group.ErrRebalanceInProgress) || errors.Is(why, group.ErrRejoinRequested) ||
		errors.Is(why, group.ErrPartitionsChanged)
}

// startJoin starts the background join, announcing owned as the partitions the member owns and
// sums as its task offset sums: taken by the thread now, since the join goroutine must not
// read the thread's task maps.
func (m *membership) startJoin(why error, owned []kafka.TopicPartition, sums map[processor.TaskID]int64) {
	m.log.Debug("rejoining the group while processing (cooperative rebalance)", "reason", why)
	m.assignor.stopFollowup()
	m.assignor.setOwned(owned)
	m.assignor.offsetSums = func() map[processor.TaskID]int64 { return sums }
	j := &backgroundJoin{done: make(chan struct{})}
	m.join = j
	go func() {
		defer close(j.done)
		j.joined, j.err = m.classic.Join(m.ctx)
	}()
}

// joinResult looks at the background join: done is false while it runs; once it ended it is
// forgotten and its generation (or failure) returned. A failed join leaves a rejoin due.
func (m *membership) joinResult() (joined group.Joined, done bool, err error) {
	j := m.join
	select {
	case <-j.done:
	default:
		return joined, false, nil
	}
	m.join = nil
	m.assignor.offsetSums = m.offsetSums
	if j.err != nil {
		m.needJoin = true
	}
	return j.joined, true, j.err
}

// generationLost reports whether the classic member lost its generation while it rejoins in
// the background (expired, fenced): its partitions may belong to another member now.
func (m *membership) generationLost() bool { return m.classic.GenerationLost() }

// awaitJoin waits for a background join to end (the runtime stops: the join returns promptly)
// and forgets it.
func (m *membership) awaitJoin() {
	if m.join == nil {
		return
	}
	<-m.join.done
	m.join = nil
	m.assignor.offsetSums = m.offsetSums
}
