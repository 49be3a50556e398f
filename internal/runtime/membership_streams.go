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
// assignor; the thread's task lifecycle is the classic path's (applyAssignment).

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
	// Metadata is the group metadata of a transactional producer's TxnOffsetCommit.
	Metadata() group.GroupMetadata
	// Close leaves the group and closes the member's connections.
	Close() error
}

// newStreamsMember makes the thread's streams member from the runtime's configuration (gc:
// the thread's group config, its InstanceID made unique per thread).
func (th *thread) newStreamsMember(gc group.Config) (*streamsMember, error) {
	r := th.rt
	offsets, err := group.New(gc) // OffsetFetch only; never joins
	if err != nil {
		return nil, err
	}
	cc, err := streamsgroup.ConfigFromSarama(th.cluster.Config(), th.name+"-consumer")
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
	return newStreamsMember(streamsMemberConfig{Cluster: th.cluster, Conn: cc, GroupID: r.cfg.ApplicationID, ClientID: th.name + "-consumer",
		ProcessID: r.cfg.ProcessID, Endpoint: ep, Tags: tags, Rack: gc.Rack, InstanceID: gc.InstanceID, RebalanceTimeout: timeout,
		Topology: r.streamsTopo, Offsets: offsets, Logger: th.log,
		ShutdownRequested: func() bool { return r.shutdown.code.Load() == assignorErrorShutdownRequested },
		OnShutdown: func() {
			r.applicationShutdownReceived("status SHUTDOWN_APPLICATION in a streams group heartbeat of " + th.name)
		},
		OnEndpoints: r.setStreamsHosts, TaskOffsets: th.tm.streamsTaskOffsets})
}

// rebalanceStreams applies the streams member's latest assignment (the first call makes it
// join and waits until the coordinator answered): as rebalance does for a classic assignment,
// through applyAssignment, then acknowledges the tasks owned so that the member reports them.
// Tasks of a sub-topology this topology lacks are fatal (ErrAssignment), as the member's fatal
// errors are (a group of the other protocol: *group.ProtocolMismatchError).
func (th *thread) rebalanceStreams() error {
	th.setState(ThreadRebalancing)
	sm := th.streams
	t, err := sm.awaitTarget(th.ctx)
	if err != nil {
		if th.ctx.Err() != nil {
			return nil
		}
		th.closeAll()
		return fmt.Errorf("%s: %w", th.name, err)
	}
	if t.lost && len(th.tm.tasks) > 0 {
		th.log.Warn("the streams group member lost its tasks; closing them dirty", "epoch", t.epoch)
		th.out.abortTransaction()
		th.closeTasks(false)
	}
	if th.rt.shutdown.code.Load() == assignorErrorShutdownRequested {
		// This instance asked for the application's shutdown: it takes no tasks while the
		// request goes out with the heartbeats (a classic member rejoins without tasks to
		// carry it), so a failed thread's task is not processed again meanwhile.
		th.log.Info("the application's shutdown is requested; taking no tasks")
		t.Assignment = emptyAssignment()
	}
	got, err := th.streamsReceived(t.Assignment)
	if err != nil {
		th.closeAll()
		return fmt.Errorf("%s: assignment of epoch %d from the streams group coordinator: %w", th.name, t.epoch, err)
	}
	th.needJoin = false
	if _, err := th.applyAssignment(got); err != nil || th.ctx.Err() != nil {
		return err
	}
	owned := streamsgroup.Assignment{Active: wireTasks(th.tm.activeIDs()), Standby: t.Standby, Warmup: t.Warmup}
	if owned.Standby == nil {
		owned.Standby = []streamsgroup.Tasks{}
	}
	if owned.Warmup == nil {
		owned.Warmup = []streamsgroup.Tasks{}
	}
	sm.acknowledge(t.seq, owned)
	th.log.Debug("applied the streams group assignment", "tasks", fmt.Sprint(th.tm.activeIDs()), "standbys", fmt.Sprint(th.tm.standbyIDs()), "epoch", t.epoch)
	th.runningOnceRestored()
	return nil
}

// streamsReceived turns the coordinator's assignment into the thread's received tasks: an
// active task's partitions are its sub-topology's source topics at the task's partition (of
// the topics that have that partition); standby and warm-up tasks are standbys.
func (th *thread) streamsReceived(a streamsgroup.Assignment) (received, error) {
	got := received{active: map[processor.TaskID][]kafka.TopicPartition{}, standby: map[processor.TaskID][]kafka.TopicPartition{},
		errorCode: assignment.ErrorNone, nextRebalanceMs: assignment.NoRebalance}
	l := th.rt.layout
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
