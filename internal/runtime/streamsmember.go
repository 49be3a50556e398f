package runtime

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
)

// A stream thread's member of a streams group (group.protocol=streams, KIP-1071): the group
// coordinator computes the assignment, the member heartbeats (StreamsGroupHeartbeat) from a
// goroutine of its own, receives its tasks with the heartbeat answers and reports the tasks it
// owns once the thread reconciled them. Java: StreamsMembershipManager with
// StreamsGroupHeartbeatRequestManager.
//
// The thread sees a new assignment as a rejoin (RejoinNeeded returns errNewTarget): it
// commits its tasks as before a classic rebalance, then its rebalanceStreams (rebalance.go)
// applies the target and its membership acknowledges it (acknowledge), which the next
// heartbeat, sent at once, reports to the coordinator; a task revoked here goes to its next
// owner only then.

// errNewTarget is RejoinNeeded's answer while the coordinator's latest assignment is not
// applied yet.
var errNewTarget = errors.New("the group coordinator sent a new task assignment (streams protocol)")

// streamsMemberConfig configures a streamsMember.
type streamsMemberConfig struct {
	Cluster *kafka.Cluster
	// Conn configures the member's own connections to the coordinator (TLS, SASL).
	Conn     streamsgroup.Config
	GroupID  string
	ClientID string
	// ProcessID is the instance's process id (a UUID); Endpoint is application.server
	// (nil when not set); Tags are the client.tag.* properties; Rack is client.rack ("" none).
	ProcessID string
	Endpoint  *streamsgroup.Endpoint
	Tags      []streamsgroup.KeyValue
	Rack      string
	// InstanceID is group.instance.id ("" for a dynamic member).
	InstanceID string
	// RebalanceTimeout is max.poll.interval.ms: the member leaves the group when the thread
	// did not Poll for that long, and the coordinator waits that long for a revocation.
	RebalanceTimeout time.Duration
	// Topology is the topology description sent to join.
	Topology *streamsgroup.Topology
	// Offsets reads the committed offsets (a classic member that never joins: OffsetFetch v8
	// needs no member).
	Offsets *group.Member
	// ShutdownRequested reports whether this instance asks for the application's shutdown
	// (sent as ShutdownApplication); OnShutdown is called (from the heartbeat goroutine) when
	// the coordinator reports the status SHUTDOWN_APPLICATION; OnEndpoints with the group's
	// partitions by user endpoint when they change.
	ShutdownRequested func() bool
	OnShutdown        func()
	OnEndpoints       func([]streamsgroup.EndpointPartitions)
	// TaskOffsets returns the instance's task offset sums and changelog end offset sums for
	// the heartbeats (Java: TaskManager.taskOffsetSumSnapshot and the state updater's
	// taskEndOffsetSumSnapshot); called on the thread's goroutine (from awaitTarget and
	// RejoinNeeded) at most every taskOffsetRefresh. nil: none reported.
	TaskOffsets func() (offsets, ends []streamsgroup.TaskOffset)
	Logger      *slog.Logger
}

// taskOffsetRefresh bounds how often the thread recomputes its task offset sums for the
// heartbeats (Java recomputes them every loop iteration; the heartbeat sends them only on the
// coordinator's task offset interval, an assignment change or a caught-up warm-up task).
const taskOffsetRefresh = time.Second

// streamsMember is a member of a streams group. Its methods are safe for concurrent use.
type streamsMember struct {
	cfg      streamsMemberConfig
	log      *slog.Logger
	memberID string

	start    time.Time
	lastPoll atomic.Int64 // ns since start

	ctx     context.Context
	cancel  context.CancelFunc
	started bool
	done    chan struct{}
	wake    chan struct{}

	hb, oc coordConn // heartbeat and offset-commit connections

	mu sync.Mutex
	// notify is closed (and replaced) whenever epoch, target, lost or fatal change.
	notify chan struct{}
	epoch  int32
	// joined: a heartbeat since the last (re)join was answered with an epoch.
	joined   bool
	interval time.Duration
	// target is the coordinator's latest assignment, targetSeq counts its changes, appliedSeq
	// is the last one the thread acknowledged.
	target                streamsgroup.Assignment
	targetSeq, appliedSeq int64
	// owned is what the member reports owning; ownedDue: not reported since it changed.
	owned    streamsgroup.Assignment
	ownedDue bool
	// full: the next heartbeat sends every field (a join, or after a failed heartbeat).
	full bool
	// sendTopology: the coordinator asked for the topology (KIP-1331).
	sendTopology bool
	lost         error
	fatal        error
	// pollLeft: the member left after a poll timeout and rejoins on the next Poll.
	pollLeft       bool
	endpointEpoch  int32
	missingSince   time.Time
	statusLogged   string
	closed         bool
	heartbeatCount int64

	// Task offsets (KIP-1071): offsets and ends are the thread's latest sums (sorted),
	// sentOffsets and sentEnds the last ones the coordinator received (nil: none since the
	// last join or failure), offsetsSentAt when, offsetInterval the coordinator's task offset
	// interval, recoveryLag its acceptable.recovery.lag (-1 unknown), offsetsAt when the thread
	// last computed them.
	offsets, ends         []streamsgroup.TaskOffset
	sentOffsets, sentEnds []streamsgroup.TaskOffset
	offsetsSentAt         time.Time
	offsetInterval        time.Duration
	recoveryLag           int64
	offsetsAt             time.Time
}

// coordConn is a connection of the member's to the group coordinator, dialled when needed and
// dropped after a transport failure or NOT_COORDINATOR.
type coordConn struct {
	mu sync.Mutex
	c  *streamsgroup.Conn
}

func (cc *coordConn) get(ctx context.Context, m *streamsMember) (*streamsgroup.Conn, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.c != nil {
		return cc.c, nil
	}
	coord, err := m.cfg.Cluster.FindCoordinator(ctx, m.cfg.GroupID, sarama.CoordinatorGroup)
	if err != nil {
		return nil, err
	}
	c, err := streamsgroup.Dial(ctx, coord.Addr, m.cfg.Conn)
	if err != nil {
		return nil, err
	}
	cc.c = c
	return c, nil
}

func (cc *coordConn) reset() {
	cc.mu.Lock()
	if cc.c != nil {
		_ = cc.c.Close()
		cc.c = nil
	}
	cc.mu.Unlock()
}

// newMemberID returns a random member id as Java makes it (Uuid.randomUuid().toString(): 16
// random bytes in URL-safe base64 without padding).
func newMemberID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// newStreamsMember returns a member that has not joined yet; start joins.
func newStreamsMember(cfg streamsMemberConfig) (*streamsMember, error) {
	id, err := newMemberID()
	if err != nil {
		return nil, fmt.Errorf("streams member id: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &streamsMember{cfg: cfg, log: cfg.Logger, memberID: id, start: time.Now(), done: make(chan struct{}),
		wake: make(chan struct{}, 1), notify: make(chan struct{}), interval: 5 * time.Second, full: true,
		owned: emptyAssignment(), offsetInterval: time.Minute, recoveryLag: -1}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m, nil
}

func emptyAssignment() streamsgroup.Assignment {
	return streamsgroup.Assignment{Active: []streamsgroup.Tasks{}, Standby: []streamsgroup.Tasks{}, Warmup: []streamsgroup.Tasks{}}
}

// startLocked starts the heartbeat goroutine once.
func (m *streamsMember) startLocked() {
	if m.started || m.closed {
		return
	}
	m.started = true
	go m.loop()
}

func (m *streamsMember) changedLocked() {
	close(m.notify)
	m.notify = make(chan struct{})
}

func (m *streamsMember) nudge() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Poll records that the thread is alive (see RebalanceTimeout). Cheap: one atomic store.
func (m *streamsMember) Poll() { m.lastPoll.Store(int64(time.Since(m.start))) }

func (m *streamsMember) sincePoll() time.Duration {
	return time.Since(m.start) - time.Duration(m.lastPoll.Load())
}

// RejoinNeeded returns nil while the thread's tasks are the coordinator's latest assignment,
// else: the member's fatal error (a *group.ProtocolMismatchError, authorization, topology
// errors, ...), kafka.ErrClosed, an error wrapping group.ErrMemberLost (fenced, or left after
// a poll timeout: the tasks are lost), or errNewTarget (reconcile).
func (m *streamsMember) RejoinNeeded() error {
	m.refreshTaskOffsets(false)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.fatal != nil:
		return m.fatal
	case m.closed:
		return kafka.ErrClosed
	case m.lost != nil:
		return m.lost
	case m.targetSeq != m.appliedSeq:
		return errNewTarget
	}
	return nil
}

// streamsTarget is an assignment the thread is to apply.
type streamsTarget struct {
	streamsgroup.Assignment
	seq   int64
	epoch int32
	// lost: the member lost its tasks (fenced, poll timeout) since the last one.
	lost bool
}

// awaitTarget starts the member (at the first call) and waits until it is in the group (its
// join answered), then returns the latest assignment. Errors: the member's fatal error,
// kafka.ErrClosed, ctx's.
func (m *streamsMember) awaitTarget(ctx context.Context) (streamsTarget, error) {
	m.Poll()
	m.refreshTaskOffsets(true)
	m.mu.Lock()
	m.startLocked()
	lost := m.lost != nil
	m.lost = nil
	for {
		switch {
		case m.fatal != nil:
			err := m.fatal
			m.mu.Unlock()
			return streamsTarget{}, err
		case m.closed:
			m.mu.Unlock()
			return streamsTarget{}, kafka.ErrClosed
		case m.lost != nil:
			lost = true
			m.lost = nil
		case m.joined:
			t := streamsTarget{Assignment: m.target, seq: m.targetSeq, epoch: m.epoch, lost: lost}
			m.mu.Unlock()
			return t, nil
		}
		ch := m.notify
		m.mu.Unlock()
		m.nudge()
		select {
		case <-ctx.Done():
			return streamsTarget{}, ctx.Err()
		case <-ch:
		case <-time.After(m.cfg.RebalanceTimeout / 2):
			m.Poll() // waiting for the coordinator is no stuck thread
		}
		m.mu.Lock()
	}
}

// refreshTaskOffsets takes the thread's task offset sums (cfg.TaskOffsets) when taskOffsetRefresh
// passed since the last time, or now. Called on the thread's goroutine.
func (m *streamsMember) refreshTaskOffsets(now bool) {
	if m.cfg.TaskOffsets == nil {
		return
	}
	m.mu.Lock()
	due := now || time.Since(m.offsetsAt) >= taskOffsetRefresh
	m.mu.Unlock()
	if !due {
		return
	}
	offs, ends := m.cfg.TaskOffsets()
	sortTaskOffsets(offs)
	sortTaskOffsets(ends)
	m.mu.Lock()
	m.offsets, m.ends, m.offsetsAt = offs, ends, time.Now()
	m.mu.Unlock()
}

// sortTaskOffsets orders task offsets by sub-topology and partition.
func sortTaskOffsets(ts []streamsgroup.TaskOffset) {
	slices.SortFunc(ts, func(a, b streamsgroup.TaskOffset) int {
		if a.Subtopology != b.Subtopology {
			return strings.Compare(a.Subtopology, b.Subtopology)
		}
		return int(a.Partition - b.Partition)
	})
}

// acknowledge records that the thread applied target seq and owns owned now; the next
// heartbeat, sent at once, reports it.
func (m *streamsMember) acknowledge(seq int64, owned streamsgroup.Assignment) {
	m.mu.Lock()
	if seq > m.appliedSeq {
		m.appliedSeq = seq
	}
	if !assignmentEqual(owned, m.owned) {
		m.owned, m.ownedDue = owned, true
	}
	m.mu.Unlock()
	m.nudge()
}

// Metadata returns the group metadata of a transactional producer's TxnOffsetCommit: the
// member epoch in the generation's place (the coordinator fences a stale one with
// ILLEGAL_GENERATION).
func (m *streamsMember) Metadata() group.GroupMetadata {
	m.mu.Lock()
	defer m.mu.Unlock()
	return group.GroupMetadata{GroupID: m.cfg.GroupID, Generation: m.epoch, MemberID: m.memberID, InstanceID: m.cfg.InstanceID}
}

// Committed returns the committed offsets of tps (OffsetFetch v8, as the classic path).
func (m *streamsMember) Committed(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]group.Offset, error) {
	return m.cfg.Offsets.Committed(ctx, tps)
}

// CommittedStable reads the group's committed offsets without waiting for open transactions
// (group.Member.CommittedStable).
func (m *streamsMember) CommittedStable(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]group.Offset,
	[]kafka.TopicPartition, error) {
	return m.cfg.Offsets.CommittedStable(ctx, tps)
}

// Commit commits offsets with OffsetCommit v9 under the member's epoch. STALE_MEMBER_EPOCH
// (the coordinator moved to a new epoch the member has not heard of yet) is retried after the
// next heartbeat; coordinator and transport errors are retried with backoff until ctx ends.
// Errors: an error wrapping group.ErrMemberLost for UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH and
// ILLEGAL_GENERATION (the tasks migrated); group.ErrFatal-wrapped authorization errors; other
// partition errors (*streamsgroup.ResponseError); ctx's (wrapping the last failure).
func (m *streamsMember) Commit(ctx context.Context, offsets map[kafka.TopicPartition]group.Offset) error {
	byTopic := map[string][]streamsgroup.CommitPartition{}
	for tp, o := range offsets {
		var meta *string
		if o.Metadata != "" {
			md := o.Metadata
			meta = &md
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], streamsgroup.CommitPartition{Partition: tp.Partition, Offset: o.Offset,
			LeaderEpoch: o.LeaderEpoch, Metadata: meta})
	}
	req := &streamsgroup.OffsetCommitRequest{GroupID: m.cfg.GroupID, MemberID: m.memberID}
	if m.cfg.InstanceID != "" {
		id := m.cfg.InstanceID
		req.InstanceID = &id
	}
	for _, t := range slices.Sorted(maps.Keys(byTopic)) {
		ps := byTopic[t]
		slices.SortFunc(ps, func(a, b streamsgroup.CommitPartition) int { return int(a.Partition - b.Partition) })
		req.Topics = append(req.Topics, streamsgroup.CommitTopic{Name: t, Partitions: ps})
	}
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := kafka.Sleep(ctx, kafka.Backoff(attempt, 50*time.Millisecond, time.Second)); err != nil {
				return fmt.Errorf("group %q: commit offsets: %w (last error: %w)", m.cfg.GroupID, err, last)
			}
		}
		m.mu.Lock()
		req.MemberEpoch = m.epoch
		ch, interval := m.notify, m.interval
		m.mu.Unlock()
		c, err := m.oc.get(ctx, m)
		if err != nil {
			last = err
			continue
		}
		resp, err := c.OffsetCommit(ctx, req)
		if err != nil {
			if errors.Is(err, streamsgroup.ErrUnsupported) {
				return err
			}
			m.oc.reset()
			last = err
			continue
		}
		err = resp.Err(m.cfg.GroupID)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, streamsgroup.ErrStaleMemberEpoch):
			// Wait for the heartbeat that brings the new epoch.
			m.nudge()
			select {
			case <-ch:
			case <-time.After(interval): // bounded, should the heartbeat bring no new epoch
			case <-ctx.Done():
				return fmt.Errorf("group %q: commit offsets: %w (last error: %w)", m.cfg.GroupID, ctx.Err(), err)
			}
			last = err
		case errors.Is(err, sarama.ErrUnknownMemberId), errors.Is(err, streamsgroup.ErrFencedMemberEpoch),
			errors.Is(err, sarama.ErrIllegalGeneration):
			return fmt.Errorf("%w: %w", group.ErrMemberLost, err)
		case errors.Is(err, sarama.ErrGroupAuthorizationFailed), errors.Is(err, sarama.ErrTopicAuthorizationFailed):
			return fmt.Errorf("%w: %w", group.ErrFatal, err)
		case errors.Is(err, sarama.ErrNotCoordinatorForConsumer), errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable):
			m.oc.reset()
			last = err
		case errors.Is(err, sarama.ErrOffsetsLoadInProgress), errors.Is(err, sarama.ErrRequestTimedOut),
			errors.Is(err, sarama.ErrUnknownTopicOrPartition), errors.Is(err, sarama.ErrRebalanceInProgress):
			last = err
		default:
			return err
		}
	}
}

// Close leaves the group (epoch -1, or -2 for a static member) when it joined, stops the
// heartbeats and closes the connections. Later calls return nil.
func (m *streamsMember) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	started := m.started
	m.changedLocked()
	m.mu.Unlock()
	m.cancel()
	if started {
		<-m.done
	}
	var err error
	m.mu.Lock()
	inGroup := m.epoch > 0
	m.mu.Unlock()
	if inGroup {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = m.leave(ctx)
		cancel()
	}
	m.hb.reset()
	m.oc.reset()
	if m.cfg.Offsets != nil {
		_ = m.cfg.Offsets.Close()
	}
	return err
}

// leave sends the leave heartbeat.
func (m *streamsMember) leave(ctx context.Context) error {
	epoch := streamsgroup.LeaveEpoch
	if m.cfg.InstanceID != "" {
		epoch = streamsgroup.LeaveStaticEpoch
	}
	c, err := m.hb.get(ctx, m)
	if err != nil {
		return err
	}
	req := &streamsgroup.HeartbeatRequest{GroupID: m.cfg.GroupID, MemberID: m.memberID, MemberEpoch: epoch, RebalanceTimeoutMs: -1}
	if m.cfg.InstanceID != "" {
		id := m.cfg.InstanceID
		req.InstanceID = &id
	}
	resp, err := c.Heartbeat(ctx, req)
	if err != nil {
		m.hb.reset()
		return err
	}
	m.mu.Lock()
	m.epoch, m.joined = 0, false
	m.mu.Unlock()
	if err := resp.Err(m.cfg.GroupID); err != nil && !errors.Is(err, sarama.ErrUnknownMemberId) &&
		!errors.Is(err, streamsgroup.ErrFencedMemberEpoch) {
		return err
	}
	return nil
}

// loop heartbeats until Close: every heartbeat interval of the last answer, at once when
// nudged (an acknowledged assignment, a commit waiting for a new epoch), with backoff after a
// failure.
func (m *streamsMember) loop() {
	defer close(m.done)
	backoff := 100 * time.Millisecond
	for m.ctx.Err() == nil {
		err := m.heartbeatOnce()
		m.mu.Lock()
		wait, fatal := m.interval, m.fatal
		m.mu.Unlock()
		if fatal != nil {
			return
		}
		if err != nil {
			if m.ctx.Err() != nil {
				return
			}
			m.log.Debug("streams group heartbeat failed; retrying", "error", err, "backoff", backoff)
			wait = backoff
			backoff = min(backoff*2, 5*time.Second)
		} else {
			backoff = 100 * time.Millisecond
		}
		timer := time.NewTimer(wait)
		select {
		case <-m.ctx.Done():
		case <-m.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// heartbeatOnce sends one heartbeat (or the leave of a poll timeout) and applies the answer.
// It returns an error to retry after a backoff.
func (m *streamsMember) heartbeatOnce() error {
	ctx, cancel := context.WithTimeout(m.ctx, max(m.cfg.Conn.ReadTimeout, 30*time.Second))
	defer cancel()
	m.mu.Lock()
	if m.pollLeft {
		if m.sincePoll() >= m.cfg.RebalanceTimeout {
			m.mu.Unlock()
			return nil // still no Poll: stay out of the group
		}
		m.pollLeft = false
	}
	if m.epoch > 0 && m.sincePoll() >= m.cfg.RebalanceTimeout {
		m.mu.Unlock()
		m.log.Warn("the stream thread did not poll within max.poll.interval.ms; leaving the streams group (its tasks go to other members)",
			"max.poll.interval", m.cfg.RebalanceTimeout)
		err := m.leave(ctx)
		m.mu.Lock()
		m.lostLocked(fmt.Errorf("group %q: %w", m.cfg.GroupID, group.ErrPollTimeout))
		m.pollLeft = true
		m.mu.Unlock()
		return err
	}
	req := m.requestLocked()
	m.mu.Unlock()
	c, err := m.hb.get(ctx, m)
	if err != nil {
		return err
	}
	resp, err := c.Heartbeat(ctx, req)
	if err != nil {
		m.hb.reset()
		m.mu.Lock()
		if errors.Is(err, streamsgroup.ErrUnsupported) {
			m.fatal = fmt.Errorf("%w: the cluster does not support the streams group protocol (group.protocol=streams, KIP-1071): %w", group.ErrFatal, err)
			m.changedLocked()
		}
		m.full = true
		m.mu.Unlock()
		return err
	}
	return m.handle(req, resp)
}

// requestLocked builds the next heartbeat: everything to join (epoch 0) or after a failure,
// else the fields changed since the last one sent.
func (m *streamsMember) requestLocked() *streamsgroup.HeartbeatRequest {
	req := &streamsgroup.HeartbeatRequest{GroupID: m.cfg.GroupID, MemberID: m.memberID, MemberEpoch: m.epoch,
		EndpointInformationEpoch: m.endpointEpoch, RebalanceTimeoutMs: -1}
	if m.cfg.ShutdownRequested != nil && m.cfg.ShutdownRequested() {
		req.ShutdownApplication = true
	}
	if m.epoch == 0 || m.sendTopology {
		req.Topology = m.cfg.Topology
	}
	if m.epoch == 0 || m.full {
		req.RebalanceTimeoutMs = int32(m.cfg.RebalanceTimeout.Milliseconds())
		pid := m.cfg.ProcessID
		req.ProcessID = &pid
		req.UserEndpoint = m.cfg.Endpoint
		req.ClientTags = m.cfg.Tags
		if req.ClientTags == nil {
			req.ClientTags = []streamsgroup.KeyValue{}
		}
		if m.cfg.InstanceID != "" {
			id := m.cfg.InstanceID
			req.InstanceID = &id
		}
		if m.cfg.Rack != "" {
			rack := m.cfg.Rack
			req.RackID = &rack
		}
	}
	if m.epoch == 0 || m.full || m.ownedDue {
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = m.owned.Active, m.owned.Standby, m.owned.Warmup
	}
	m.taskOffsetsLocked(req)
	return req
}

// taskOffsetsLocked adds the task offsets to req as Java 4.4's StreamsGroupHeartbeatRequestManager
// does: all of them to join (or after a failure); else, when the owned tasks are reported, the
// coordinator's task offset interval passed since they were last sent, or a warm-up task has
// caught up (its end offset sum minus its offset sum within acceptable.recovery.lag), each of
// the two lists that changed since it was last sent.
func (m *streamsMember) taskOffsetsLocked(req *streamsgroup.HeartbeatRequest) {
	now := time.Now()
	offs, ends := m.offsets, m.ends
	if offs == nil {
		offs = []streamsgroup.TaskOffset{}
	}
	if ends == nil {
		ends = []streamsgroup.TaskOffset{}
	}
	if m.epoch == 0 || m.full || m.sentOffsets == nil {
		req.TaskOffsets, req.TaskEndOffsets = offs, ends
		m.sentOffsets, m.sentEnds, m.offsetsSentAt = offs, ends, now
		return
	}
	if req.ActiveTasks == nil && now.Sub(m.offsetsSentAt) < m.offsetInterval && !m.hotWarmupLocked() {
		return
	}
	if !slices.Equal(offs, m.sentOffsets) {
		req.TaskOffsets, m.sentOffsets, m.offsetsSentAt = offs, offs, now
	}
	if !slices.Equal(ends, m.sentEnds) {
		req.TaskEndOffsets, m.sentEnds, m.offsetsSentAt = ends, ends, now
	}
}

// hotWarmupLocked reports whether a warm-up task the member owns has caught up: both sums
// known (and not saturated) and their difference within the coordinator's
// acceptable.recovery.lag.
func (m *streamsMember) hotWarmupLocked() bool {
	if m.recoveryLag < 0 {
		return false
	}
	find := func(ts []streamsgroup.TaskOffset, sub string, p int32) (int64, bool) {
		for _, t := range ts {
			if t.Subtopology == sub && t.Partition == p {
				return t.Offset, t.Offset != math.MaxInt64
			}
		}
		return 0, false
	}
	for _, w := range m.owned.Warmup {
		for _, p := range w.Partitions {
			off, ok1 := find(m.offsets, w.Subtopology, p)
			end, ok2 := find(m.ends, w.Subtopology, p)
			if ok1 && ok2 && end-off <= m.recoveryLag {
				return true
			}
		}
	}
	return false
}

// lostLocked records that the member lost its tasks and rejoins with epoch 0.
func (m *streamsMember) lostLocked(err error) {
	m.lost = err
	m.epoch, m.joined, m.full = 0, false, true
	m.owned, m.ownedDue = emptyAssignment(), false
	if !assignmentEqual(m.target, emptyAssignment()) {
		m.target = emptyAssignment()
		m.targetSeq++
	}
	m.changedLocked()
}

// handle applies a heartbeat's answer. It returns an error to retry after a backoff.
func (m *streamsMember) handle(req *streamsgroup.HeartbeatRequest, resp *streamsgroup.HeartbeatResponse) error {
	err := resp.Err(m.cfg.GroupID)
	var callbacks []func()
	defer func() {
		// Outside the lock: a callback may close the instance, and with it this member.
		for _, f := range callbacks {
			f()
		}
	}()
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err == nil:
	case errors.Is(err, sarama.ErrUnknownMemberId), errors.Is(err, streamsgroup.ErrFencedMemberEpoch):
		m.log.Warn("the streams group fenced this member; its tasks are lost, rejoining", "error", err)
		m.lostLocked(fmt.Errorf("%w: %w", group.ErrMemberLost, err))
		m.nudge()
		return nil
	case errors.Is(err, sarama.ErrGroupIDNotFound):
		m.fatal = &group.ProtocolMismatchError{GroupID: m.cfg.GroupID, MemberProtocol: group.GroupTypeStreams, Cause: err}
		m.changedLocked()
		return nil
	case errors.Is(err, sarama.ErrNotCoordinatorForConsumer), errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable):
		m.hb.reset()
		m.full = true
		return err
	case errors.Is(err, sarama.ErrOffsetsLoadInProgress), errors.Is(err, sarama.ErrUnknown), errors.Is(err, sarama.ErrRequestTimedOut):
		m.full = true
		return err
	case errors.Is(err, sarama.ErrUnsupportedVersion):
		m.fatal = fmt.Errorf("%w: the cluster does not support the streams group protocol (group.protocol=streams, KIP-1071): %w", group.ErrFatal, err)
		m.changedLocked()
		return nil
	default:
		// GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, FENCED_INSTANCE_ID,
		// UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, STREAMS_INVALID_TOPOLOGY,
		// STREAMS_INVALID_TOPOLOGY_EPOCH, STREAMS_TOPOLOGY_FENCED, ...: no retry cures them.
		m.fatal = fmt.Errorf("%w: %w", group.ErrFatal, err)
		m.changedLocked()
		return nil
	}
	m.heartbeatCount++
	changed := false
	if resp.MemberEpoch != m.epoch {
		m.epoch = resp.MemberEpoch
		changed = true
	}
	if !m.joined && m.epoch > 0 {
		m.joined = true
		changed = true
	}
	if resp.HeartbeatIntervalMs > 0 {
		m.interval = time.Duration(resp.HeartbeatIntervalMs) * time.Millisecond
	}
	if resp.TaskOffsetIntervalMs > 0 {
		m.offsetInterval = time.Duration(resp.TaskOffsetIntervalMs) * time.Millisecond
	}
	if resp.AcceptableRecoveryLag >= 0 {
		m.recoveryLag = resp.AcceptableRecoveryLag
	}
	m.full, m.sendTopology = false, resp.TopologyDescriptionRequired
	if req.ActiveTasks != nil {
		m.ownedDue = false
	}
	next := m.target
	if resp.ActiveTasks != nil {
		next.Active = resp.ActiveTasks
	}
	if resp.StandbyTasks != nil {
		next.Standby = resp.StandbyTasks
	}
	if resp.WarmupTasks != nil {
		next.Warmup = resp.WarmupTasks
	}
	if !assignmentEqual(next, m.target) {
		m.target = next
		m.targetSeq++
		changed = true
		m.log.Debug("streams group assignment", "epoch", m.epoch, "active", fmt.Sprint(next.Active),
			"standby", fmt.Sprint(next.Standby), "warmup", fmt.Sprint(next.Warmup))
	}
	if resp.PartitionsByUserEndpoint != nil {
		m.endpointEpoch = resp.EndpointInformationEpoch
		if f := m.cfg.OnEndpoints; f != nil {
			eps := resp.PartitionsByUserEndpoint
			callbacks = append(callbacks, func() { f(eps) })
		}
	}
	if m.statusLocked(resp.Status) && m.cfg.OnShutdown != nil {
		callbacks = append(callbacks, m.cfg.OnShutdown)
	}
	if changed {
		m.changedLocked()
	}
	return nil
}

// statusLocked acts on the group's statuses: SHUTDOWN_APPLICATION is reported (true: the
// caller shuts the instance down);
// MISSING_SOURCE_TOPICS fails the member after twice the heartbeat interval;
// INCORRECTLY_PARTITIONED_TOPICS at once; the others are logged (once per change) and waited
// out.
func (m *streamsMember) statusLocked(st []streamsgroup.Status) (shutdown bool) {
	missing := false
	text := fmt.Sprint(st)
	for _, s := range st {
		switch s.Code {
		case streamsgroup.StatusShutdownApplication:
			shutdown = true
		case streamsgroup.StatusMissingSourceTopics:
			missing = true
			if m.missingSince.IsZero() {
				m.missingSince = time.Now()
			} else if time.Since(m.missingSince) >= 2*m.interval {
				m.fatal = fmt.Errorf("%w: the streams group coordinator reports: %s", ErrMissingSourceTopics, s.Detail)
				m.changedLocked()
			}
		case streamsgroup.StatusIncorrectlyPartitionedTopics:
			m.fatal = fmt.Errorf("%w: the streams group coordinator reports incorrectly partitioned topics: %s", ErrCopartition, s.Detail)
			m.changedLocked()
		}
	}
	if !missing {
		m.missingSince = time.Time{}
	}
	if text != m.statusLogged {
		m.statusLogged = text
		if len(st) > 0 {
			m.log.Info("streams group status", "status", statusText(st))
		}
	}
	return shutdown
}

// statusText names the statuses for the log.
func statusText(st []streamsgroup.Status) string {
	names := map[int8]string{streamsgroup.StatusStaleTopology: "STALE_TOPOLOGY", streamsgroup.StatusMissingSourceTopics: "MISSING_SOURCE_TOPICS",
		streamsgroup.StatusIncorrectlyPartitionedTopics: "INCORRECTLY_PARTITIONED_TOPICS", streamsgroup.StatusMissingInternalTopics: "MISSING_INTERNAL_TOPICS",
		streamsgroup.StatusShutdownApplication: "SHUTDOWN_APPLICATION", streamsgroup.StatusAssignmentDelayed: "ASSIGNMENT_DELAYED",
		streamsgroup.StatusMissingClientTags: "MISSING_CLIENT_TAGS"}
	var out string
	for i, s := range st {
		if i > 0 {
			out += "; "
		}
		n := names[s.Code]
		if n == "" {
			n = fmt.Sprintf("status %d", s.Code)
		}
		out += n + ": " + s.Detail
	}
	return out
}

// assignmentEqual compares two assignments task by task (order aside).
func assignmentEqual(a, b streamsgroup.Assignment) bool {
	return tasksKey(a.Active) == tasksKey(b.Active) && tasksKey(a.Standby) == tasksKey(b.Standby) && tasksKey(a.Warmup) == tasksKey(b.Warmup)
}

func tasksKey(ts []streamsgroup.Tasks) string {
	var ids []string
	for _, t := range ts {
		for _, p := range t.Partitions {
			ids = append(ids, fmt.Sprintf("%s_%d", t.Subtopology, p))
		}
	}
	slices.Sort(ids)
	return fmt.Sprint(ids)
}
