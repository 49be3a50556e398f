package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/processor"
)

// The group membership of a stream thread (Java: the StreamThread's main consumer as a group
// member, with its ConsumerCoordinator, StreamsPartitionAssignor and the rebalance decisions of
// StreamThread.pollPhase; on the streams protocol the StreamsMembershipManager). A membership
// owns the thread's group member (the classic *group.Member, or the KIP-1071 streamsMember of
// membership_streams.go), the "stream" partition assignor, the generation last joined, whether
// a (re)join is due, the classic join running beside the processing during a cooperative
// rebalance (rejoin.go), and whether the thread waits for its active tasks' restore before it
// reports RUNNING. It joins and rejoins, decides when a rejoin is needed (the member asks, the
// application's shutdown is to be announced) and whether it may run beside the processing, and
// turns a SyncGroup answer (classic) or a heartbeat's target assignment (streams) into the
// tasks to apply (received).
//
// The thread (rebalance.go) keeps the loop, the fetching, the producer and the commit barrier:
// it commits or closes its tasks before a rejoin, applies the received assignment through its
// task manager (handleAssignment: tasks kept, revoked, promoted, created) and tells the
// membership which partitions it owns (announced in the next subscription). During a
// cooperative rebalance of a member that stands in its generation, the classic JoinGroup and
// SyncGroup run beside the processing; otherwise (the first join, a lost generation, a shutdown
// request, and on the streams protocol) the thread commits every task before it rejoins. The
// membership is used from the thread's goroutine only, but for the background join's goroutine
// (which runs the member's Join and nothing else of it).

// membership is a stream thread's group membership (see above).
type membership struct {
	rt   *Runtime
	idx  int
	name string
	log  *slog.Logger
	ctx  context.Context
	// cluster is the thread's; the member and the leader's offset lookups use it.
	cluster *kafka.Cluster

	// member is the group member: classic (group.protocol=classic, the default; classic is
	// set) or streams (KIP-1071; streams is set).
	member  groupMember
	classic *group.Member
	streams *streamsMember
	// assignor is the classic member's "stream" partition assignor (Java:
	// StreamsPartitionAssignor); it announces owned partitions and task offset sums.
	assignor *assignor
	// offsetSums returns the task offset sums of the thread's state (the task manager's
	// taskOffsetSums): the subscription's, read from the thread's goroutine.
	offsetSums func() map[processor.TaskID]int64

	// joined is the last generation joined; needJoin is set until the thread joined once and
	// whenever the group asks for a rejoin.
	joined   group.Joined
	needJoin bool
	// join is the classic Join running beside the processing during a cooperative rebalance
	// (rejoin.go), nil when none runs.
	join *backgroundJoin
	// awaitRestore: the thread rebalanced and stays REBALANCING until the state updater
	// restored its active tasks (Java: PARTITIONS_ASSIGNED until the restore completed).
	awaitRestore bool
}

// newMembership makes thread idx's membership and its group member on cluster cl: the classic
// member with the "stream" assignor, or on group.protocol=streams the streams member. tm is the
// thread's task manager, whose offset sums and task offsets the subscription and heartbeats
// report. Errors: the member's configuration.
func newMembership(r *Runtime, idx int, name string, log *slog.Logger, cl *kafka.Cluster, tm *taskManager) (*membership, error) {
	m := &membership{rt: r, idx: idx, name: name, log: log, ctx: r.ctx, cluster: cl, needJoin: true,
		offsetSums: tm.taskOffsetSums}
	var topics []string
	for _, s := range r.layout.Subtopologies {
		topics = append(topics, s.Topics...)
	}
	m.assignor = &assignor{subs: r.layout.Subtopologies, log: log,
		self:     subscription{ProcessID: r.cfg.ProcessID, Thread: idx, Host: r.cfg.ApplicationServer},
		onAssign: r.setHosts, standbys: r.cfg.NumStandbyReplicas, errCode: &r.shutdown.code}
	gc := r.cfg.Group
	gc.Cluster, gc.GroupID, gc.ClientID, gc.Topics, gc.Assignor, gc.Logger = cl, r.cfg.ApplicationID, name+"-consumer", topics, m.assignor, log
	// Once the group answered an application shutdown request, the member stays in the group
	// when the thread stops (see appShutdown.received).
	gc.RemainInGroup = r.shutdown.received.Load
	if gc.InstanceID != "" {
		gc.InstanceID = fmt.Sprintf("%s-%d", gc.InstanceID, idx+1) // unique per thread, as Java
	}
	var err error
	if r.cfg.StreamsProtocol {
		if m.streams, err = m.newStreamsMember(gc, tm.streamsTaskOffsets); err != nil {
			return nil, fmt.Errorf("%s: streams group member: %w", name, err)
		}
		m.member = m.streams
	} else {
		if m.classic, err = group.New(gc); err != nil {
			return nil, fmt.Errorf("%s: group member: %w", name, err)
		}
		m.member = m.classic
	}
	return m, nil
}

// poll records that the thread is alive (max.poll.interval.ms; Java: Consumer.poll).
func (m *membership) poll() { m.member.Poll() }

// rejoinNeeded returns why the thread must (re)join or reconcile, nil while it need not.
func (m *membership) rejoinNeeded() error { return m.member.RejoinNeeded() }

// joining reports whether a background join runs (rejoin.go): the thread commits nothing and
// takes no restored task into processing meanwhile.
func (m *membership) joining() bool { return m.join != nil }

// setOwned records the partitions the thread's active tasks read (those restoring included),
// announced as the classic member's owned partitions in its next subscription.
func (m *membership) setOwned(tps []kafka.TopicPartition) { m.assignor.setOwned(tps) }

// leave leaves the group and closes the member's connections (Java: the consumer's close).
func (m *membership) leave() {
	if m.member == nil {
		return
	}
	if err := m.member.Close(); err != nil {
		m.log.Debug("leaving the group", "error", err)
	}
}

// joinGroup joins the group on the classic protocol (JoinGroup, SyncGroup), announcing owned as
// the partitions the member owns. ok is false when the runtime stopped meanwhile. Errors: the
// assignor's configuration (a process id that is not a UUID), or a *joinError.
func (m *membership) joinGroup(owned []kafka.TopicPartition) (joined group.Joined, ok bool, err error) {
	if err := m.assignor.init(m); err != nil {
		return joined, false, fmt.Errorf("%s: %w", m.name, err)
	}
	m.assignor.stopFollowup()
	m.assignor.setOwned(owned)
	joined, err = m.classic.Join(m.ctx)
	if err != nil {
		if m.ctx.Err() != nil {
			return joined, false, nil
		}
		return joined, false, &joinError{err: err}
	}
	return joined, true, nil
}

// assignmentOf records the generation a classic Join returned (after joinGroup or a
// background join) and reads its assignment: the tasks it gives this member, checked against
// this instance's topology, and the assignor's error code acted on (SHUTDOWN_REQUESTED shuts
// the instance down, VERSION_PROBING takes no tasks). Errors (the thread closes its tasks
// clean): wrapping ErrAssignment (an assignment this topology cannot follow, or an error code
// of the leader) or ErrMissingSourceTopics (INCOMPLETE_SOURCE_TOPIC_METADATA).
func (m *membership) assignmentOf(joined group.Joined) (received, error) {
	m.needJoin = false
	m.joined = joined
	got, err := m.assignor.onAssignment(joined.Assignment)
	if err == nil {
		err = m.checkAssignment(got)
	}
	if err != nil {
		return got, fmt.Errorf("%s: assignment of generation %d from leader %s: %w", m.name, joined.Generation, joined.LeaderID, err)
	}
	m.checkShutdownAssignment()
	switch got.errorCode {
	case assignment.ErrorNone, assignment.ErrorShutdownRequested:
	case assignment.ErrorVersionProbing:
		m.log.Info("the leader answered with error code VERSION_PROBING; taking no tasks this time")
	case assignment.ErrorIncompleteSourceTopicMetadata:
		return got, fmt.Errorf("%s: %w: the group leader (member %s) found source topics missing (error code INCOMPLETE_SOURCE_TOPIC_METADATA)",
			m.name, ErrMissingSourceTopics, joined.LeaderID)
	default:
		return got, fmt.Errorf("%s: %w: the group leader (member %s) answered with error code %d (%s); see the leader's log",
			m.name, ErrAssignment, joined.LeaderID, got.errorCode, assignorErrorName(got.errorCode))
	}
	return got, nil
}

// scheduleFollowup arranges the follow-up rebalance the classic assignment got asks for (at
// once, or a probing rebalance at a time), once the thread applied it; revoked says that it
// revoked active tasks: the member then rejoins at once so that their new owners get them, as
// Java's consumer does under the cooperative protocol.
func (m *membership) scheduleFollowup(got received, revoked bool) {
	if got.errorCode != assignment.ErrorNone && got.errorCode != assignment.ErrorVersionProbing {
		return
	}
	next, why := got.nextRebalanceMs, got.why
	if revoked && next != 0 {
		next, why = 0, "tasks were revoked; rejoining so that their new owners can take them (cooperative rebalancing)"
	}
	m.assignor.scheduleFollowup(m.classic, next, why)
}

// checkAssignment refuses an assignment whose partitions do not belong to the tasks it pairs
// them with in this instance's topology (the members run different topologies).
func (m *membership) checkAssignment(got received) error {
	for id, tps := range got.active {
		for _, tp := range tps {
			sub, ok := m.rt.SubtopologyOf(tp.Topic)
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
		if l := m.rt.layout; l == nil {
			continue
		} else if _, ok := l.Tasks[id.Subtopology]; !ok {
			return fmt.Errorf("%w: standby task %s: this application's topology has no sub-topology %d", ErrAssignment, id, id.Subtopology)
		}
	}
	return nil
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
