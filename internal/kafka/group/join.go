package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// Joining: JoinGroup and SyncGroup, the leader's assignment, as Java's AbstractCoordinator
// and ConsumerCoordinator.

// Join performs one full (re)join of the group and returns the generation joined and this
// member's assignment: FindCoordinator when the coordinator is not known, JoinGroup
// (MEMBER_ID_REQUIRED answered with the given member id, KIP-394; UNKNOWN_MEMBER_ID resets the
// member id; REBALANCE_IN_PROGRESS, a moved or unavailable coordinator and other retriable
// errors retried with backoff), then as leader [Assignor.Assign] and a SyncGroup with every
// member's assignment, as follower a SyncGroup; a SyncGroup answered REBALANCE_IN_PROGRESS or
// ILLEGAL_GENERATION rejoins. The heartbeat goroutine starts with the first join and runs
// until Leave or Close.
//
// Join returns promptly when ctx ends, also while the coordinator holds the JoinGroup (up to
// the rebalance timeout): it cuts that connection and, for a dynamic member, sends a
// LeaveGroup on a connection of its own so the others need not wait for it; the member is
// then unjoined (RejoinNeeded: ErrNotJoined).
//
// Errors: ctx's (context.Canceled or DeadlineExceeded, wrapped with the last failure);
// kafka.ErrClosed after Close; errors wrapping ErrFatal, with the Kafka error code where
// there is one (errors.Is(err, sarama.ErrGroupAuthorizationFailed)): GROUP_AUTHORIZATION_FAILED,
// INCONSISTENT_GROUP_PROTOCOL (a *ProtocolMismatchError naming the group's type, e.g. a
// streams group of KIP-1071), GROUP_MAX_SIZE_REACHED, INVALID_SESSION_TIMEOUT,
// INVALID_GROUP_ID, UNSUPPORTED_VERSION, ErrFencedInstanceID, an Assignor error, an
// assignment that cannot be decoded.
func (m *Member) Join(ctx context.Context) (Joined, error) {
	m.opMu.Lock()
	defer m.opMu.Unlock()
	ctx, done := m.opContext(ctx)
	defer done()
	if err := m.usable(); err != nil {
		return Joined{}, err
	}
	m.Poll()
	defer m.Poll()
	var last error
	immediate := 0
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			pause := kafka.Backoff(attempt, m.cfg.RetryBackoff, maxRetryBackoff)
			if immediate > 0 && immediate < 5 {
				// Java rejoins at once after these errors; a few in a row, then back off.
				pause = 0
			}
			if err := kafka.Sleep(ctx, pause); err != nil {
				m.abandonJoin()
				return Joined{}, m.ctxError(ctx, "join", last)
			}
		}
		j, next, err := m.joinOnce(ctx)
		switch next {
		case done_:
			return j, nil
		case retryNow:
			immediate++
		case retryLater:
			immediate = 0
		case failed:
			if ctx.Err() != nil {
				m.abandonJoin()
				return Joined{}, m.ctxError(ctx, "join", err)
			}
			m.failJoin(err)
			return Joined{}, err
		}
		last = err
		m.log.Debug("group join: retrying", "error", err)
	}
}

type outcome int

const (
	done_ outcome = iota
	retryNow
	retryLater
	failed
)

// joinOnce runs one JoinGroup and SyncGroup.
func (m *Member) joinOnce(ctx context.Context) (Joined, outcome, error) {
	coord, err := m.coordinator(ctx)
	if err != nil {
		return Joined{}, m.classifyTransport(ctx, err), err
	}
	userData, owned, err := m.cfg.Assignor.Subscription(slices.Clone(m.topics))
	if err != nil {
		return Joined{}, failed, m.fatalf(err, "subscription of assignor %s", m.cfg.Assignor.Name())
	}

	m.mu.Lock()
	meta, err := EncodeSubscription(Subscription{Version: SubscriptionVersion, Topics: m.topics, UserData: userData,
		Owned: owned, Generation: m.generation, Rack: m.cfg.Rack})
	if err != nil {
		m.mu.Unlock()
		return Joined{}, failed, m.fatalf(err, "subscription")
	}
	memberID := m.memberID
	reason := ""
	if m.rejoin != nil && !errors.Is(m.rejoin, ErrNotJoined) {
		reason = m.rejoin.Error()
	}
	m.st = joining
	m.mu.Unlock()

	req := &sarama.JoinGroupRequest{
		Version:          8,
		GroupId:          m.cfg.GroupID,
		SessionTimeout:   int32(m.cfg.SessionTimeout.Milliseconds()),
		RebalanceTimeout: int32(m.cfg.RebalanceTimeout.Milliseconds()),
		MemberId:         memberID,
		GroupInstanceId:  m.instance,
		ProtocolType:     ProtocolType,
		OrderedGroupProtocols: []*sarama.GroupProtocol{
			{Name: m.cfg.Assignor.Name(), Metadata: meta},
		},
	}
	if reason != "" {
		r := truncate(reason)
		req.Reason = &r
	}
	m.log.Debug("group join: JoinGroup", "member", memberID, "coordinator", coord.ID, "reason", reason)
	var resp *sarama.JoinGroupResponse
	err = m.call(ctx, coord, m.groupP, func(b *sarama.Broker) (err error) {
		resp, err = b.JoinGroup(req)
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			m.forgetCoordinator(coord)
		}
		return Joined{}, m.classifyTransport(ctx, err), fmt.Errorf("group %q: JoinGroup: %w", m.cfg.GroupID, err)
	}
	switch resp.Err {
	case sarama.ErrNoError:
	case sarama.ErrMemberIdRequired:
		m.mu.Lock()
		m.memberID = resp.MemberId
		m.mu.Unlock()
		return Joined{}, retryNow, m.kerr("JoinGroup", resp.Err)
	case sarama.ErrUnknownMemberId:
		m.mu.Lock()
		m.memberID, m.generation = "", -1
		m.lost = true
		m.mu.Unlock()
		return Joined{}, retryNow, m.kerr("JoinGroup", resp.Err)
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable:
		m.forgetCoordinator(coord)
		return Joined{}, retryLater, m.kerr("JoinGroup", resp.Err)
	case sarama.ErrFencedInstancedId:
		return Joined{}, failed, m.fenced("JoinGroup")
	case sarama.ErrInconsistentGroupProtocol:
		return Joined{}, failed, m.mismatch(ctx, coord)
	case sarama.ErrInvalidSessionTimeout, sarama.ErrInvalidGroupId,
		sarama.ErrGroupAuthorizationFailed, sarama.ErrGroupMaxSizeReached, sarama.ErrUnsupportedVersion:
		return Joined{}, failed, m.fatalf(resp.Err, "JoinGroup")
	default:
		// REBALANCE_IN_PROGRESS, COORDINATOR_LOAD_IN_PROGRESS and the other retriable codes.
		if resp.Err == sarama.ErrRebalanceInProgress || kafka.RetriableCode(resp.Err) {
			return Joined{}, retryLater, m.kerr("JoinGroup", resp.Err)
		}
		return Joined{}, failed, m.fatalf(resp.Err, "JoinGroup: unexpected error")
	}
	if resp.ProtocolType != nil && *resp.ProtocolType != ProtocolType {
		return Joined{}, failed, m.fatalf(sarama.ErrInconsistentGroupProtocol, "JoinGroup: protocol type %q, want %q", *resp.ProtocolType, ProtocolType)
	}
	if resp.GroupProtocol != m.cfg.Assignor.Name() {
		return Joined{}, failed, m.fatalf(sarama.ErrInconsistentGroupProtocol, "JoinGroup: the coordinator chose protocol %q, want %q", resp.GroupProtocol, m.cfg.Assignor.Name())
	}

	gen, memberID := resp.GenerationId, resp.MemberId
	leader := resp.LeaderId == memberID
	m.mu.Lock()
	m.generation, m.memberID, m.leaderID = gen, memberID, resp.LeaderId
	m.st = syncing
	now := time.Now()
	m.lastHB, m.nextHB, m.hbFailures = now, now.Add(m.cfg.HeartbeatInterval), 0
	m.startHeartbeatLocked()
	m.nudgeLocked()
	m.mu.Unlock()
	m.log.Debug("group join: joined", "generation", gen, "member", memberID, "leader", resp.LeaderId, "members", len(resp.Members))

	var assignments []sarama.SyncGroupRequestAssignment
	var counts map[string]int32
	if leader {
		assignments, counts, err = m.lead(resp)
		if err != nil {
			if errors.Is(err, ErrFatal) {
				return Joined{}, failed, err
			}
			return Joined{}, retryLater, err
		}
	}
	name := m.cfg.Assignor.Name()
	ptype := ProtocolType
	sreq := &sarama.SyncGroupRequest{
		Version:          5,
		GroupId:          m.cfg.GroupID,
		GenerationId:     gen,
		MemberId:         memberID,
		GroupInstanceId:  m.instance,
		ProtocolType:     &ptype,
		ProtocolName:     &name,
		GroupAssignments: assignments,
	}
	var sresp *sarama.SyncGroupResponse
	err = m.call(ctx, coord, m.groupP, func(b *sarama.Broker) (err error) {
		sresp, err = b.SyncGroup(sreq)
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			m.forgetCoordinator(coord)
		}
		return Joined{}, m.classifyTransport(ctx, err), fmt.Errorf("group %q: SyncGroup: %w", m.cfg.GroupID, err)
	}
	switch sresp.Err {
	case sarama.ErrNoError:
	case sarama.ErrRebalanceInProgress:
		return Joined{}, retryNow, m.kerr("SyncGroup", sresp.Err)
	case sarama.ErrUnknownMemberId:
		m.mu.Lock()
		if m.generation == gen {
			m.memberID, m.generation = "", -1
		}
		m.lost = true
		m.mu.Unlock()
		return Joined{}, retryNow, m.kerr("SyncGroup", sresp.Err)
	case sarama.ErrIllegalGeneration:
		m.mu.Lock()
		if m.generation == gen {
			m.generation = -1
		}
		m.lost = true
		m.mu.Unlock()
		return Joined{}, retryNow, m.kerr("SyncGroup", sresp.Err)
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable:
		m.forgetCoordinator(coord)
		return Joined{}, retryLater, m.kerr("SyncGroup", sresp.Err)
	case sarama.ErrFencedInstancedId:
		return Joined{}, failed, m.fenced("SyncGroup")
	case sarama.ErrGroupAuthorizationFailed:
		return Joined{}, failed, m.fatalf(sresp.Err, "SyncGroup")
	default:
		if kafka.RetriableCode(sresp.Err) {
			return Joined{}, retryLater, m.kerr("SyncGroup", sresp.Err)
		}
		return Joined{}, failed, m.fatalf(sresp.Err, "SyncGroup: unexpected error")
	}
	if sresp.ProtocolType != nil && *sresp.ProtocolType != ProtocolType {
		return Joined{}, failed, m.fatalf(sarama.ErrInconsistentGroupProtocol, "SyncGroup: protocol type %q, want %q", *sresp.ProtocolType, ProtocolType)
	}
	if sresp.ProtocolName != nil && *sresp.ProtocolName != name {
		return Joined{}, failed, m.fatalf(sarama.ErrInconsistentGroupProtocol, "SyncGroup: protocol %q, want %q", *sresp.ProtocolName, name)
	}
	var a Assignment
	if len(sresp.MemberAssignment) == 0 {
		// The leader sent nothing for this member (Java's consumer would fail to parse it).
		m.log.Warn("group join: the leader sent no assignment for this member; taking it as empty", "generation", gen, "leader", resp.LeaderId)
	} else if a, err = DecodeAssignment(sresp.MemberAssignment); err != nil {
		return Joined{}, failed, m.fatalf(err, "assignment of generation %d from leader %s", gen, resp.LeaderId)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.st != syncing || m.generation != gen || m.memberID != memberID {
		// The heartbeat goroutine learnt meanwhile that this generation is gone.
		return Joined{}, retryNow, fmt.Errorf("group %q: generation %d ended during SyncGroup: %w", m.cfg.GroupID, gen, m.rejoin)
	}
	m.Poll()
	m.st = stable
	m.rejoin = nil
	lost := m.lost
	m.lost = false
	m.joinedGen, m.joinedMember = gen, memberID
	m.assigned = counts
	m.metaDue = time.Now().Add(m.cfg.MetadataMaxAge)
	m.nudgeLocked()
	m.log.Info("group joined", "generation", gen, "member", memberID, "leader", resp.LeaderId,
		"partitions", len(a.Partitions))
	return Joined{Generation: gen, MemberID: memberID, LeaderID: resp.LeaderId, Leader: leader, Assignment: a, Lost: lost}, done_, nil
}

// lead decodes the members' subscriptions, runs the assignor and encodes its assignments, one
// per member of the JoinGroup response. It also returns the partition counts it assigned.
func (m *Member) lead(resp *sarama.JoinGroupResponse) ([]sarama.SyncGroupRequestAssignment, map[string]int32, error) {
	subs := make([]Subscription, 0, len(resp.Members))
	topicSet := map[string]bool{}
	for _, t := range m.topics {
		topicSet[t] = true
	}
	for _, gm := range resp.Members {
		instance := ""
		if gm.GroupInstanceId != nil {
			instance = *gm.GroupInstanceId
		}
		s, err := DecodeSubscription(gm.Metadata)
		if err != nil {
			m.log.Debug("group join: a member's subscription cannot be decoded", "member", gm.MemberId, "error", err)
			s = Subscription{Err: fmt.Errorf("member %s: %w", gm.MemberId, err)}
		}
		s.MemberID, s.InstanceID = gm.MemberId, instance
		for _, t := range s.Topics {
			topicSet[t] = true
		}
		subs = append(subs, s)
	}
	topics := make([]string, 0, len(topicSet))
	for t := range topicSet {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	counts, err := m.partitionCounts(topics)
	if err != nil {
		return nil, nil, fmt.Errorf("group %q: partition counts for the assignment: %w", m.cfg.GroupID, err)
	}
	plan, err := m.cfg.Assignor.Assign(subs, counts)
	if err != nil {
		return nil, nil, m.fatalf(err, "assignor %s", m.cfg.Assignor.Name())
	}
	out := make([]sarama.SyncGroupRequestAssignment, 0, len(subs))
	inGroup := make(map[string]bool, len(subs))
	for _, s := range subs {
		inGroup[s.MemberID] = true
		a := plan[s.MemberID]
		if a.Version == 0 {
			a.Version = AssignmentVersion
		}
		b, err := EncodeAssignment(a)
		if err != nil {
			return nil, nil, m.fatalf(err, "assignment of member %s", s.MemberID)
		}
		out = append(out, sarama.SyncGroupRequestAssignment{MemberId: s.MemberID, Assignment: b})
	}
	for id := range plan {
		if !inGroup[id] {
			m.log.Warn("group join: the assignor assigned to a member not in the group; ignored", "member", id)
		}
	}
	return out, counts, nil
}

// partitionCounts refreshes the metadata of topics and returns the partition count of each
// that exists.
func (m *Member) partitionCounts(topics []string) (map[string]int32, error) {
	_ = m.cl.RefreshMetadata(topics...) // a missing topic makes it fail; Partitions says which
	counts := make(map[string]int32, len(topics))
	for _, t := range topics {
		n, err := m.cl.Partitions(t)
		switch {
		case errors.Is(err, sarama.ErrUnknownTopicOrPartition):
		case err != nil:
			return nil, err
		case n > 0:
			counts[t] = n
		}
	}
	return counts, nil
}
