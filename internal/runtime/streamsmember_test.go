package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
)

// The topology description of layoutTopology as Java sends it for the same topology (the
// shape the interop test reads back from the coordinator for Java's members: user sources
// apart from repartition sources, repartition sinks, changelogs without a partition count,
// configs sorted by key, replication.factor as configured, -1 by default). The coordinator
// refuses a member whose description differs from the group's ("Topology updates are not
// supported yet"), which TestIntegrationJavaRollingMigrationStreamsProtocol shows holds.
func TestStreamsTopology(t *testing.T) {
	b := layoutTopology(t)
	l, err := ComputeLayout(b, "app", map[string]int32{"in": 4})
	if err != nil {
		t.Fatal(err)
	}
	got := streamsTopology(b, "app", l, -1)
	rep := []streamsgroup.KeyValue{{Key: "cleanup.policy", Value: "delete"}, {Key: "message.timestamp.type", Value: "CreateTime"},
		{Key: "retention.ms", Value: "-1"}, {Key: "segment.bytes", Value: "52428800"}}
	want := &streamsgroup.Topology{Subtopologies: []streamsgroup.Subtopology{
		{ID: "0", SourceTopics: []string{"in"}, SourceTopicRegex: []string{}, StateChangelogTopics: []streamsgroup.TopicInfo{},
			RepartitionSinkTopics: []string{"app-rep"}, RepartitionSourceTopics: []streamsgroup.TopicInfo{}, CopartitionGroups: []streamsgroup.CopartitionGroup{}},
		{ID: "1", SourceTopics: []string{}, SourceTopicRegex: []string{},
			StateChangelogTopics: []streamsgroup.TopicInfo{{Name: "app-S-changelog", ReplicationFactor: -1,
				Configs: []streamsgroup.KeyValue{{Key: "cleanup.policy", Value: "compact"}, {Key: "message.timestamp.type", Value: "CreateTime"}}}},
			RepartitionSinkTopics:   []string{},
			RepartitionSourceTopics: []streamsgroup.TopicInfo{{Name: "app-rep", ReplicationFactor: -1, Configs: rep}},
			CopartitionGroups:       []streamsgroup.CopartitionGroup{}},
	}}
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Fatalf("topology\n%s\nwant\n%s", g, w)
	}
	if got := streamsTopology(b, "app", l, 3); got.Subtopologies[1].StateChangelogTopics[0].ReplicationFactor != 3 {
		t.Fatalf("replication.factor 3: %+v", got.Subtopologies[1])
	}
}

func testMember(t *testing.T) *streamsMember {
	t.Helper()
	m, err := newStreamsMember(streamsMemberConfig{GroupID: "app", ProcessID: "pid", RebalanceTimeout: time.Minute,
		Topology: &streamsgroup.Topology{Subtopologies: []streamsgroup.Subtopology{{ID: "0", SourceTopics: []string{"in"}}}},
		Endpoint: &streamsgroup.Endpoint{Host: "h", Port: 1}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	m.Poll()
	return m
}

func tasks(sub string, ps ...int32) []streamsgroup.Tasks {
	return []streamsgroup.Tasks{{Subtopology: sub, Partitions: ps}}
}

// The member's heartbeats and its answers, without a broker: the join carries everything,
// later heartbeats only what changed; a new assignment is a reconciliation due until the
// thread acknowledges it, and the acknowledged tasks go with the next heartbeat.
func TestStreamsMemberHeartbeats(t *testing.T) {
	m := testMember(t)
	if len(m.memberID) != 22 {
		t.Errorf("member id %q: want 22 characters of URL-safe base64 (Java's Uuid)", m.memberID)
	}
	m.mu.Lock()
	join := m.requestLocked()
	m.mu.Unlock()
	if join.MemberEpoch != 0 || join.Topology == nil || join.ProcessID == nil || *join.ProcessID != "pid" || join.UserEndpoint == nil ||
		join.RebalanceTimeoutMs != 60_000 || join.ActiveTasks == nil || join.StandbyTasks == nil || join.WarmupTasks == nil ||
		join.ClientTags == nil || join.TaskOffsets == nil {
		t.Fatalf("join %+v", join)
	}
	// Joined: epoch 1, no tasks yet.
	if err := m.handle(join, &streamsgroup.HeartbeatResponse{MemberID: m.memberID, MemberEpoch: 1, HeartbeatIntervalMs: 5000,
		Status: []streamsgroup.Status{{Code: streamsgroup.StatusAssignmentDelayed}}}); err != nil {
		t.Fatal(err)
	}
	if err := m.RejoinNeeded(); err != nil {
		t.Fatalf("after the join: %v", err)
	}
	m.mu.Lock()
	hb := m.requestLocked()
	m.mu.Unlock()
	if hb.MemberEpoch != 1 || hb.Topology != nil || hb.ProcessID != nil || hb.ActiveTasks != nil || hb.RebalanceTimeoutMs != -1 {
		t.Fatalf("second heartbeat sends what did not change: %+v", hb)
	}
	// Tasks arrive: a reconciliation is due until acknowledged.
	if err := m.handle(hb, &streamsgroup.HeartbeatResponse{MemberEpoch: 2, ActiveTasks: tasks("0", 0, 1),
		StandbyTasks: []streamsgroup.Tasks{}, WarmupTasks: []streamsgroup.Tasks{}}); err != nil {
		t.Fatal(err)
	}
	if err := m.RejoinNeeded(); !errors.Is(err, errNewTarget) {
		t.Fatalf("new assignment: RejoinNeeded = %v", err)
	}
	m.mu.Lock()
	m.started = true // no heartbeat goroutine in this test
	m.mu.Unlock()
	tg, err := m.awaitTarget(t.Context())
	if err != nil || tg.epoch != 2 || tasksKey(tg.Active) != "[0_0 0_1]" || tg.lost {
		t.Fatalf("awaitTarget = %+v, %v", tg, err)
	}
	m.acknowledge(tg.seq, streamsgroup.Assignment{Active: tasks("0", 0, 1), Standby: []streamsgroup.Tasks{}, Warmup: []streamsgroup.Tasks{}})
	if err := m.RejoinNeeded(); err != nil {
		t.Fatalf("acknowledged: %v", err)
	}
	m.mu.Lock()
	hb = m.requestLocked()
	m.mu.Unlock()
	if tasksKey(hb.ActiveTasks) != "[0_0 0_1]" || hb.StandbyTasks == nil {
		t.Fatalf("the heartbeat after the acknowledgement reports the tasks owned: %+v", hb)
	}
	if err := m.handle(hb, &streamsgroup.HeartbeatResponse{MemberEpoch: 2}); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	hb = m.requestLocked()
	m.mu.Unlock()
	if hb.ActiveTasks != nil {
		t.Fatalf("owned tasks sent again though unchanged: %+v", hb)
	}
	if md := m.Metadata(); md.Generation != 2 || md.MemberID != m.memberID || md.GroupID != "app" {
		t.Fatalf("metadata %+v", md)
	}

	// Fenced: the tasks are lost (ErrMemberLost), the member rejoins with epoch 0 and
	// everything, owning nothing.
	msg := "fenced"
	if err := m.handle(hb, &streamsgroup.HeartbeatResponse{ErrorCode: int16(streamsgroup.ErrFencedMemberEpoch), ErrorMessage: &msg}); err != nil {
		t.Fatal(err)
	}
	if err := m.RejoinNeeded(); !errors.Is(err, group.ErrMemberLost) || !errors.Is(err, streamsgroup.ErrFencedMemberEpoch) {
		t.Fatalf("fenced: RejoinNeeded = %v", err)
	}
	m.mu.Lock()
	join = m.requestLocked()
	m.mu.Unlock()
	if join.MemberEpoch != 0 || join.Topology == nil || join.ActiveTasks == nil || len(join.ActiveTasks) != 0 {
		t.Fatalf("rejoin after fencing %+v", join)
	}
}

// Answers no retry cures are the member's fatal error, returned by RejoinNeeded and
// awaitTarget: a classic group (GROUP_ID_NOT_FOUND) is a *group.ProtocolMismatchError naming
// the streams member; missing source topics fail after twice the heartbeat interval.
func TestStreamsMemberFatal(t *testing.T) {
	m := testMember(t)
	msg := "Group app is not a streams group."
	req := &streamsgroup.HeartbeatRequest{}
	if err := m.handle(req, &streamsgroup.HeartbeatResponse{ErrorCode: int16(sarama.ErrGroupIDNotFound), ErrorMessage: &msg}); err != nil {
		t.Fatal(err)
	}
	err := m.RejoinNeeded()
	var pm *group.ProtocolMismatchError
	if !errors.As(err, &pm) || pm.MemberProtocol != group.GroupTypeStreams || !errors.Is(err, group.ErrFatal) ||
		!errors.Is(err, sarama.ErrGroupIDNotFound) || !strings.Contains(err.Error(), "not a streams group") ||
		!strings.Contains(err.Error(), "group.protocol=streams") {
		t.Fatalf("RejoinNeeded = %v", err)
	}
	m.mu.Lock()
	m.started = true
	m.mu.Unlock()
	if _, err := m.awaitTarget(t.Context()); !errors.As(err, &pm) {
		t.Fatalf("awaitTarget = %v", err)
	}

	m = testMember(t)
	missing := &streamsgroup.HeartbeatResponse{MemberEpoch: 1, HeartbeatIntervalMs: 1,
		Status: []streamsgroup.Status{{Code: streamsgroup.StatusMissingSourceTopics, Detail: "in"}}}
	if err := m.handle(req, missing); err != nil || m.RejoinNeeded() != nil {
		t.Fatalf("first MISSING_SOURCE_TOPICS: %v %v", err, m.RejoinNeeded())
	}
	m.mu.Lock()
	m.missingSince = time.Now().Add(-time.Second) // as if reported for a second already
	m.mu.Unlock()
	if err := m.handle(req, missing); err != nil {
		t.Fatal(err)
	}
	if err := m.RejoinNeeded(); !errors.Is(err, ErrMissingSourceTopics) || !strings.Contains(err.Error(), "in") {
		t.Fatalf("MISSING_SOURCE_TOPICS for twice the interval: %v", err)
	}

	m = testMember(t)
	if err := m.handle(req, &streamsgroup.HeartbeatResponse{ErrorCode: int16(streamsgroup.ErrStreamsTopologyFenced)}); err != nil {
		t.Fatal(err)
	}
	if err := m.RejoinNeeded(); !errors.Is(err, group.ErrFatal) || !strings.Contains(err.Error(), "STREAMS_TOPOLOGY_FENCED") {
		t.Fatalf("STREAMS_TOPOLOGY_FENCED: %v", err)
	}
	// Coordinator moves are retried, not fatal.
	m = testMember(t)
	if err := m.handle(req, &streamsgroup.HeartbeatResponse{ErrorCode: int16(sarama.ErrNotCoordinatorForConsumer)}); err == nil || m.RejoinNeeded() != nil {
		t.Fatalf("NOT_COORDINATOR: %v, RejoinNeeded %v", err, m.RejoinNeeded())
	}
}

// The coordinator's tasks become the thread's: an active task reads its sub-topology's source
// topics at its partition; warm-ups are standbys; an unknown sub-topology is ErrAssignment.
func TestStreamsReceived(t *testing.T) {
	b := layoutTopology(t)
	l, err := ComputeLayout(b, "app", map[string]int32{"in": 4})
	if err != nil {
		t.Fatal(err)
	}
	m := &membership{rt: &Runtime{layout: l}}
	got, err := m.streamsReceived(streamsgroup.Assignment{Active: tasks("1", 2), Standby: tasks("1", 3), Warmup: tasks("1", 0)})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.active) != "map[1_2:[app-rep-2]]" || fmt.Sprint(got.standby) != "map[1_0:[app-rep-0] 1_3:[app-rep-3]]" {
		t.Fatalf("received active %v standby %v", got.active, got.standby)
	}
	if _, err := m.streamsReceived(streamsgroup.Assignment{Active: tasks("7", 0)}); !errors.Is(err, ErrAssignment) {
		t.Fatalf("unknown sub-topology: %v", err)
	}
	if _, err := m.streamsReceived(streamsgroup.Assignment{Active: tasks("0", 4)}); !errors.Is(err, ErrAssignment) {
		t.Fatalf("partition beyond the tasks: %v", err)
	}
	if w := wireTasks(sortedIDs(got.active)); tasksKey(w) != "[1_2]" {
		t.Fatalf("wireTasks %v", w)
	}
}

// The task offsets go with the heartbeats as Java 4.4's StreamsGroupHeartbeatRequestManager
// sends them (read from its 4.4.0 bytecode): the join carries the thread's sums and end sums;
// later heartbeats carry a list only when it changed since it was last sent and either the
// owned tasks are reported, the coordinator's task offset interval passed, or a warm-up task
// caught up (end sum minus sum within acceptable.recovery.lag); after a failed heartbeat both
// go again.
func TestStreamsMemberTaskOffsets(t *testing.T) {
	offs := []streamsgroup.TaskOffset{{Subtopology: "0", Partition: 1, Offset: 100}}
	ends := []streamsgroup.TaskOffset{{Subtopology: "0", Partition: 1, Offset: 150}}
	m := testMember(t)
	m.cfg.TaskOffsets = func() ([]streamsgroup.TaskOffset, []streamsgroup.TaskOffset) {
		return slices.Clone(offs), slices.Clone(ends)
	}
	next := func() *streamsgroup.HeartbeatRequest {
		t.Helper()
		m.refreshTaskOffsets(true)
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.requestLocked()
	}
	answer := func(req *streamsgroup.HeartbeatRequest, resp *streamsgroup.HeartbeatResponse) {
		t.Helper()
		// The coordinator's settings come with every answer.
		resp.TaskOffsetIntervalMs, resp.AcceptableRecoveryLag = 60_000, 10
		if err := m.handle(req, resp); err != nil {
			t.Fatal(err)
		}
	}
	offsetsOf := func(ts []streamsgroup.TaskOffset) string {
		if ts == nil {
			return "null"
		}
		return fmt.Sprint(ts)
	}
	check := func(what string, req *streamsgroup.HeartbeatRequest, wantOffs, wantEnds string) {
		t.Helper()
		if g1, g2 := offsetsOf(req.TaskOffsets), offsetsOf(req.TaskEndOffsets); g1 != wantOffs || g2 != wantEnds {
			t.Fatalf("%s: TaskOffsets %s, TaskEndOffsets %s; want %s, %s", what, g1, g2, wantOffs, wantEnds)
		}
	}

	join := next()
	check("join", join, "[{0 1 100}]", "[{0 1 150}]")
	answer(join, &streamsgroup.HeartbeatResponse{MemberEpoch: 1, HeartbeatIntervalMs: 5000, ActiveTasks: []streamsgroup.Tasks{}, StandbyTasks: []streamsgroup.Tasks{}, WarmupTasks: []streamsgroup.Tasks{}})

	offs[0].Offset = 120
	check("changed, within the interval", next(), "null", "null")

	// The interval passed: the changed list goes, the unchanged one does not.
	m.mu.Lock()
	m.offsetsSentAt = m.offsetsSentAt.Add(-61 * time.Second)
	m.mu.Unlock()
	hb := next()
	check("interval passed", hb, "[{0 1 120}]", "null")
	answer(hb, &streamsgroup.HeartbeatResponse{MemberEpoch: 1})
	check("sent, unchanged", next(), "null", "null")

	// A warm-up task: reporting the owned tasks sends what changed.
	m.acknowledge(0, streamsgroup.Assignment{Active: []streamsgroup.Tasks{}, Standby: []streamsgroup.Tasks{}, Warmup: tasks("0", 1)})
	offs[0].Offset = 130
	hb = next()
	if tasksKey(hb.WarmupTasks) != "[0_1]" {
		t.Fatalf("owned warm-up tasks not reported: %+v", hb)
	}
	check("owned tasks reported", hb, "[{0 1 130}]", "null")
	answer(hb, &streamsgroup.HeartbeatResponse{MemberEpoch: 1})
	// 150 - 135 = 15 > 10: not caught up.
	offs[0].Offset = 135
	check("warm-up lagging", next(), "null", "null")
	// 150 - 140 = 10: caught up, sent at once.
	offs[0].Offset = 140
	hb = next()
	check("warm-up caught up", hb, "[{0 1 140}]", "null")
	answer(hb, &streamsgroup.HeartbeatResponse{MemberEpoch: 1})

	// A failed heartbeat: both go again.
	ends[0].Offset = 160
	hb = next()
	check("end offsets changed, warm-up no longer caught up", hb, "null", "null")
	if err := m.handle(hb, &streamsgroup.HeartbeatResponse{ErrorCode: int16(sarama.ErrNotCoordinatorForConsumer)}); err == nil {
		t.Fatal("NOT_COORDINATOR: no error to retry")
	}
	check("after a failure", next(), "[{0 1 140}]", "[{0 1 160}]")
}
