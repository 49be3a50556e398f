package group

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// startHeartbeatLocked starts the heartbeat goroutine unless it runs.
func (m *Member) startHeartbeatLocked() {
	if m.hbDone != nil || m.closed {
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.hbCancel, m.hbDone = cancel, make(chan struct{})
	go m.heartbeatLoop(ctx, m.hbDone)
}

// stopHeartbeat stops the heartbeat goroutine (cutting a heartbeat in flight) and waits for it.
func (m *Member) stopHeartbeat() {
	m.mu.Lock()
	cancel, done := m.hbCancel, m.hbDone
	m.hbCancel, m.hbDone = nil, nil
	m.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// nudgeLocked wakes the heartbeat goroutine to look at the state again.
func (m *Member) nudgeLocked() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// hbAction is what the heartbeat goroutine does next.
type hbAction struct {
	kind     hbKind
	wait     time.Duration // hbWait: how long at most (0: until nudged)
	gen      int32
	memberID string
}

type hbKind int

const (
	hbWait hbKind = iota
	hbSend
	hbPollTimeout
)

// heartbeatLoop heartbeats while the member is in a generation (syncing or stable), and
// watches the session and poll timeouts and, on the leader, the partition counts.
func (m *Member) heartbeatLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		m.mu.Lock()
		a := m.nextHeartbeatLocked(time.Now())
		m.mu.Unlock()
		switch a.kind {
		case hbSend:
			m.heartbeat(ctx, a)
			continue
		case hbPollTimeout:
			m.pollTimeoutLeave(ctx, a)
			continue
		}
		var tc <-chan time.Time
		if a.wait > 0 {
			timer.Reset(a.wait)
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-m.wake:
		case <-tc:
		}
		timer.Stop()
	}
}

// nextHeartbeatLocked decides the heartbeat goroutine's next step at now.
func (m *Member) nextHeartbeatLocked(now time.Time) hbAction {
	if m.fatal != nil || m.closed || (m.st != syncing && m.st != stable) {
		return hbAction{kind: hbWait}
	}
	sessionEnd := m.lastHB.Add(m.cfg.SessionTimeout)
	if !now.Before(sessionEnd) {
		m.log.Warn("group: no successful heartbeat within the session timeout; the coordinator has expired this member",
			"session_timeout", m.cfg.SessionTimeout, "generation", m.generation)
		m.coordKnown = false
		m.loseLocked(fmt.Errorf("group %q: generation %d: %w", m.cfg.GroupID, m.generation, ErrSessionExpired), false)
		return hbAction{kind: hbWait}
	}
	wait := sessionEnd.Sub(now)
	if m.st == stable {
		pollEnd := m.start.Add(time.Duration(m.lastPoll.Load()) + m.cfg.RebalanceTimeout)
		if !now.Before(pollEnd) {
			a := hbAction{kind: hbPollTimeout, gen: m.generation, memberID: m.memberID}
			m.log.Warn("group: consumer poll timeout has expired: Poll was not called for the rebalance timeout (max.poll.interval.ms); leaving the group",
				"rebalance_timeout", m.cfg.RebalanceTimeout, "generation", m.generation)
			m.loseLocked(fmt.Errorf("group %q: generation %d: %w", m.cfg.GroupID, m.generation, ErrPollTimeout), true)
			return a
		}
		wait = min(wait, pollEnd.Sub(now))
		if m.assigned != nil && m.leaderID == m.memberID && !m.metaBusy {
			if !now.Before(m.metaDue) {
				m.metaBusy = true
				go m.checkPartitions(m.generation, maps.Clone(m.assigned))
			} else {
				wait = min(wait, m.metaDue.Sub(now))
			}
		}
	}
	if !now.Before(m.nextHB) {
		return hbAction{kind: hbSend, gen: m.generation, memberID: m.memberID}
	}
	return hbAction{kind: hbWait, wait: max(min(wait, m.nextHB.Sub(now)), time.Millisecond)}
}

// heartbeat sends one Heartbeat for a's generation and handles its answer.
func (m *Member) heartbeat(ctx context.Context, a hbAction) {
	sent := time.Now()
	fctx, cancel := context.WithTimeout(ctx, m.cfg.HeartbeatInterval)
	coord, err := m.coordinator(fctx)
	cancel()
	var resp *sarama.HeartbeatResponse
	if err == nil && m.hbFault.Load() {
		err = errors.New("test fault: heartbeat not sent")
	}
	if err == nil {
		req := &sarama.HeartbeatRequest{Version: 4, GroupId: m.cfg.GroupID, GenerationId: a.gen, MemberId: a.memberID, GroupInstanceId: m.instance}
		err = m.call(ctx, coord, m.hbP, func(b *sarama.Broker) (err error) {
			resp, err = b.Heartbeat(req)
			return err
		})
	}
	if ctx.Err() != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.generation != a.gen || m.memberID != a.memberID || (m.st != syncing && m.st != stable) {
		// The generation changed meanwhile: the answer is about an old one.
		m.nextHB = sent.Add(m.cfg.HeartbeatInterval)
		return
	}
	if err != nil {
		if errors.Is(err, ErrFatal) {
			m.st, m.generation = unjoined, -1
			m.setRejoinLocked(err, true)
			return
		}
		m.log.Debug("group: heartbeat failed", "error", err)
		m.coordKnown = false
		m.heartbeatFailedLocked()
		return
	}
	switch resp.Err {
	case sarama.ErrNoError:
		m.heartbeatOKLocked(sent)
	case sarama.ErrRebalanceInProgress:
		// Keep heartbeating until the rejoin: the coordinator keeps the member for the
		// rebalance timeout then.
		m.heartbeatOKLocked(sent)
		if m.st == stable {
			m.setRejoinLocked(fmt.Errorf("group %q: generation %d: %w", m.cfg.GroupID, a.gen, ErrRebalanceInProgress), false)
		}
	case sarama.ErrUnknownMemberId:
		m.loseLocked(fmt.Errorf("group %q: heartbeat of generation %d: %w: %w", m.cfg.GroupID, a.gen, ErrMemberLost, resp.Err), true)
	case sarama.ErrIllegalGeneration:
		m.loseLocked(fmt.Errorf("group %q: heartbeat of generation %d: %w: %w", m.cfg.GroupID, a.gen, ErrMemberLost, resp.Err), false)
	case sarama.ErrFencedInstancedId:
		m.fencedLocked("Heartbeat")
	case sarama.ErrGroupAuthorizationFailed:
		m.st, m.generation = unjoined, -1
		m.setRejoinLocked(m.fatalf(resp.Err, "Heartbeat"), true)
	case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable:
		m.coordKnown = false
		m.heartbeatFailedLocked()
	default:
		m.log.Debug("group: heartbeat failed", "error", resp.Err)
		m.heartbeatFailedLocked()
	}
}

func (m *Member) heartbeatOKLocked(sent time.Time) {
	m.lastHB = time.Now()
	m.nextHB = sent.Add(m.cfg.HeartbeatInterval)
	m.hbFailures = 0
	m.heartbeats++
}

// heartbeatFailedLocked schedules the retry of a failed heartbeat (Java: exponential backoff
// from retry.backoff.ms).
func (m *Member) heartbeatFailedLocked() {
	m.hbFailures++
	m.nextHB = time.Now().Add(kafka.Backoff(m.hbFailures, m.cfg.RetryBackoff, maxRetryBackoff))
}

// pollTimeoutLeave sends the LeaveGroup of a dynamic member whose poll timeout expired (a
// static member does not leave; its session expires).
func (m *Member) pollTimeoutLeave(ctx context.Context, a hbAction) {
	if m.instance != nil || a.memberID == "" {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, max(m.cfg.HeartbeatInterval, time.Second))
	defer cancel()
	coord, err := m.coordinator(lctx)
	if err == nil {
		err = m.sendLeave(lctx, coord, m.hbP, a.memberID, "consumer poll timeout has expired.")
	}
	if err != nil {
		m.log.Debug("group: LeaveGroup after the poll timeout", "error", err)
	}
}

// checkPartitions refreshes the partition counts of the topics the leader assigned in
// generation gen and requests a rejoin when one changed (Java's consumer rebalances when the
// metadata of the group's topics changes).
func (m *Member) checkPartitions(gen int32, assigned map[string]int32) {
	topics := slices.Sorted(maps.Keys(assigned))
	counts, err := m.partitionCounts(topics)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.metaBusy = false
	m.metaDue = time.Now().Add(m.cfg.MetadataMaxAge)
	if err != nil {
		m.log.Debug("group: checking partition counts", "error", err)
		return
	}
	if m.generation != gen || m.st != stable {
		return
	}
	for _, t := range topics {
		if counts[t] != assigned[t] {
			m.setRejoinLocked(fmt.Errorf("group %q: topic %s has %d partitions, %d when assigned in generation %d: %w",
				m.cfg.GroupID, t, counts[t], assigned[t], gen, ErrPartitionsChanged), false)
			return
		}
	}
}
