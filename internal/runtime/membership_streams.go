package runtime

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/processor"
)

// The stream thread on the streams group protocol (group.protocol=streams, KIP-1071): the
// streamsMember (streamsmember.go) replaces the classic group.Member and the leader-side
// assignor. The membership turns the member's target assignment into the tasks to apply
// (streamsAssignment) and acknowledges them once applied; the thread (rebalance.go:
// rebalanceStreams) applies them through the classic path's task lifecycle (applyAssignment).

// groupMember is what the thread's loop, commits and restores use of its group member: the
// classic *group.Member or the *streamsMember.
type groupMember interface {
	// Poll records that the thread is alive (max.poll.interval.ms).
	Poll()
	// RejoinNeeded returns why the thread must (re)join or reconcile, nil while it need not.
	RejoinNeeded() error
	// Commit commits offsets under the member's generation (classic) or epoch (streams).
	Commit(ctx context.Context, offsets map[kafka.TopicPartition]group.Offset) error
	// Committed reads the group's committed offsets.
	Committed(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]group.Offset, error)
	// CommittedStable reads them without waiting for open transactions (group.Member.CommittedStable).
	CommittedStable(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]group.Offset, []kafka.TopicPartition, error)
	// Metadata is the group metadata of a transactional producer's TxnOffsetCommit.
	Metadata() group.GroupMetadata
	// Close leaves the group and closes the member's connections.
	Close() error
}

// newStreamsMember makes the thread's streams member from the runtime's configuration (gc:
// the thread's group config, its InstanceID made unique per thread; taskOffsets: the task
// manager's streamsTaskOffsets, reported in the heartbeats).
func (m *membership) newStreamsMember(gc group.Config, taskOffsets func() (offsets, ends []streamsgroup.TaskOffset)) (*streamsMember, error) {
	r := m.rt
	offsets, err := group.New(gc) // OffsetFetch only; never joins
	if err != nil {
		return nil, err
	}
	cc, err := streamsgroup.ConfigFromSarama(m.cluster.Config(), m.name+"-consumer")
	if err != nil {
		_ = offsets.Close()
		return nil, err
	}
	var ep *streamsgroup.Endpoint
	if r.cfg.ApplicationServer != "" {
		hi, ok := parseHostPort(r.cfg.ApplicationServer)
		if !ok || hi.Port < 0 || hi.Port > 65535 {
			_ = offsets.Close()
			return nil, fmt.Errorf("application.server %q is not host:port", r.cfg.ApplicationServer)
		}
		ep = &streamsgroup.Endpoint{Host: hi.Host, Port: uint16(hi.Port)}
	}
	var tags []streamsgroup.KeyValue
	if len(r.cfg.ClientTags) > 0 {
		tags = sortedConfigs(r.cfg.ClientTags)
	}
	timeout := gc.RebalanceTimeout
	if timeout <= 0 {
		timeout = 300 * time.Second // max.poll.interval.ms's default
	}
	return newStreamsMember(streamsMemberConfig{Cluster: m.cluster, Conn: cc, GroupID: r.cfg.ApplicationID, ClientID: m.name + "-consumer",
		ProcessID: r.cfg.ProcessID, Endpoint: ep, Tags: tags, Rack: gc.Rack, InstanceID: gc.InstanceID, RebalanceTimeout: timeout,
		Topology: r.streamsTopo, Offsets: offsets, Logger: m.log,
		ShutdownRequested: func() bool { return r.shutdown.code.Load() == assignorErrorShutdownRequested },
		OnShutdown: func() {
			r.applicationShutdownReceived("status SHUTDOWN_APPLICATION in a streams group heartbeat of " + m.name)
		},
		OnEndpoints: r.setStreamsHosts, TaskOffsets: taskOffsets})
}

// awaitTarget waits for the streams member's latest target assignment (the first call makes it
// join and waits until the coordinator answered). ok is false when the runtime stopped
// meanwhile. Errors: the member's fatal ones (a group of the other protocol:
// *group.ProtocolMismatchError).
func (m *membership) awaitTarget() (t streamsTarget, ok bool, err error) {
	t, err = m.streams.awaitTarget(m.ctx)
	if err != nil {
		if m.ctx.Err() != nil {
			return t, false, nil
		}
		return t, false, fmt.Errorf("%s: %w", m.name, err)
	}
	return t, true, nil
}

// streamsAssignment turns the target t into the tasks to apply: none while this instance asks
// for the application's shutdown (a classic member rejoins without tasks to carry it, so a
// failed thread's task is not processed again meanwhile), else those of streamsReceived.
// Errors: tasks of a sub-topology this topology lacks (ErrAssignment).
func (m *membership) streamsAssignment(t streamsTarget) (received, error) {
	if m.rt.shutdown.code.Load() == assignorErrorShutdownRequested {
		m.log.Info("the application's shutdown is requested; taking no tasks")
		t.Assignment = emptyAssignment()
	}
	got, err := m.streamsReceived(t.Assignment)
	if err != nil {
		return got, fmt.Errorf("%s: assignment of epoch %d from the streams group coordinator: %w", m.name, t.epoch, err)
	}
	m.needJoin = false
	return got, nil
}

// acknowledge tells the streams member that the thread applied target t and owns the active
// tasks active (its standbys and warm-ups are t's), so that its heartbeats report them.
func (m *membership) acknowledge(t streamsTarget, active []processor.TaskID) {
	owned := streamsgroup.Assignment{Active: wireTasks(active), Standby: t.Standby, Warmup: t.Warmup}
	if owned.Standby == nil {
		owned.Standby = []streamsgroup.Tasks{}
	}
	if owned.Warmup == nil {
		owned.Warmup = []streamsgroup.Tasks{}
	}
	m.streams.acknowledge(t.seq, owned)
}

// streamsReceived turns the coordinator's assignment into the thread's received tasks: an
// active task's partitions are its sub-topology's source topics at the task's partition (of
// the topics that have that partition); standby and warm-up tasks are standbys.
func (m *membership) streamsReceived(a streamsgroup.Assignment) (received, error) {
	got := received{active: map[processor.TaskID][]kafka.TopicPartition{}, standby: map[processor.TaskID][]kafka.TopicPartition{},
		errorCode: assignment.ErrorNone, nextRebalanceMs: assignment.NoRebalance}
	l := m.rt.layout
	subs := map[int]subtopologySources{}
	for _, s := range l.Subtopologies {
		subs[s.ID] = s
	}
	add := func(ts []streamsgroup.Tasks, into map[processor.TaskID][]kafka.TopicPartition, kind string) error {
		for _, t := range ts {
			sub, err := strconv.Atoi(t.Subtopology)
			s, ok := subs[sub]
			if err != nil || !ok {
				return fmt.Errorf("%w: %s tasks of sub-topology %q: this application's topology has no such sub-topology (do the instances run the same topology?)",
					ErrAssignment, kind, t.Subtopology)
			}
			for _, p := range t.Partitions {
				if p < 0 || p >= l.Tasks[sub] {
					return fmt.Errorf("%w: %s task %s_%d: sub-topology %d has %d tasks", ErrAssignment, kind, t.Subtopology, p, sub, l.Tasks[sub])
				}
				id := processor.TaskID{Subtopology: sub, Partition: int(p)}
				var tps []kafka.TopicPartition
				for _, topic := range s.Topics {
					if p < l.Partitions[topic] {
						tps = append(tps, kafka.TopicPartition{Topic: topic, Partition: p})
					}
				}
				into[id] = tps
			}
		}
		return nil
	}
	if err := add(a.Active, got.active, "active"); err != nil {
		return got, err
	}
	if err := add(a.Standby, got.standby, "standby"); err != nil {
		return got, err
	}
	if err := add(a.Warmup, got.standby, "warm-up"); err != nil {
		return got, err
	}
	for id := range got.active {
		delete(got.standby, id)
	}
	return got, nil
}

// wireTasks groups task ids by sub-topology, as the heartbeat lists them.
func wireTasks(ids []processor.TaskID) []streamsgroup.Tasks {
	out := []streamsgroup.Tasks{}
	idx := map[int]int{}
	for _, id := range ids {
		i, ok := idx[id.Subtopology]
		if !ok {
			i = len(out)
			idx[id.Subtopology] = i
			out = append(out, streamsgroup.Tasks{Subtopology: strconv.Itoa(id.Subtopology)})
		}
		out[i].Partitions = append(out[i].Partitions, int32(id.Partition))
	}
	return out
}

// setStreamsHosts takes the streams group's partitions by user endpoint as the instance's
// interactive-query metadata (Hosts, StandbyHosts), as setHosts does for a classic assignment.
func (r *Runtime) setStreamsHosts(eps []streamsgroup.EndpointPartitions) {
	hosts, standby := map[string][]processor.TaskID{}, map[string][]processor.TaskID{}
	tasks := func(tps []streamsgroup.TopicPartitions) []processor.TaskID {
		seen := map[processor.TaskID]bool{}
		ids := []processor.TaskID{}
		for _, tp := range tps {
			sub, ok := r.subOf[tp.Topic]
			if !ok {
				continue
			}
			for _, p := range tp.Partitions {
				id := processor.TaskID{Subtopology: sub, Partition: int(p)}
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		sortTasks(ids)
		return ids
	}
	for _, ep := range eps {
		key := net.JoinHostPort(ep.Endpoint.Host, strconv.Itoa(int(ep.Endpoint.Port)))
		hosts[key] = append(hosts[key], tasks(ep.Active)...)
		standby[key] = append(standby[key], tasks(ep.Standby)...)
	}
	for k := range hosts {
		sortTasks(hosts[k])
		sortTasks(standby[k])
	}
	r.mu.Lock()
	r.hosts, r.standbyHosts = hosts, standby
	r.mu.Unlock()
}
