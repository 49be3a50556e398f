package streamsgroup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

func uuid(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func ptr[T any](v T) *T { return &v }

// coordinatorConn connects to the coordinator of group.
func coordinatorConn(t *testing.T, br kafkatest.Broker, sc *sarama.Config, group string) (*Conn, *kafka.Cluster) {
	t.Helper()
	cl, err := kafka.NewCluster(kafka.Config{Brokers: br.Addrs, Sarama: sc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	coord, err := cl.FindCoordinator(ctx, group, sarama.CoordinatorGroup)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFromSarama(sc, "streamsgroup-test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(ctx, coord.Addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, cl
}

// member is a streams member driven by the test.
type member struct {
	t       *testing.T
	c       *Conn
	group   string
	id      string
	pid     string
	epoch   int32
	active  []Tasks // the last assignment received
	status  []Status
	lastErr error
}

func (m *member) joinRequest(topo *Topology) *HeartbeatRequest {
	return &HeartbeatRequest{GroupID: m.group, MemberID: m.id, MemberEpoch: JoinEpoch, RebalanceTimeoutMs: 30_000,
		Topology: topo, ActiveTasks: []Tasks{}, StandbyTasks: []Tasks{}, WarmupTasks: []Tasks{},
		ProcessID: ptr(m.pid), UserEndpoint: &Endpoint{Host: "localhost", Port: 8080},
		ClientTags: []KeyValue{{Key: "zone", Value: "z1"}}, TaskOffsets: []TaskOffset{}, TaskEndOffsets: []TaskOffset{}}
}

// join sends the join heartbeat of topo until it is not answered UNKNOWN_SERVER_ERROR, which
// Apache Kafka 4.4 answers while its coordinator does not see a just created source topic
// (see the package doc), nor COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE or
// NOT_COORDINATOR, which a just started broker (the secured node of make test) answers while it
// creates and loads __consumer_offsets (single-node brokers: the coordinator stays the same
// node), and fails the test on another error.
func (m *member) join(topo *Topology) *HeartbeatResponse {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp := m.heartbeat(m.joinRequest(topo))
		retry := errors.Is(m.lastErr, sarama.ErrUnknown) || errors.Is(m.lastErr, sarama.ErrOffsetsLoadInProgress) ||
			errors.Is(m.lastErr, sarama.ErrConsumerCoordinatorNotAvailable) || errors.Is(m.lastErr, sarama.ErrNotCoordinatorForConsumer)
		if !retry || time.Now().After(deadline) {
			if m.lastErr != nil {
				m.t.Fatalf("join: %v", m.lastErr)
			}
			return resp
		}
		time.Sleep(100 * time.Millisecond) // retry pace, bounded by the deadline
	}
}

// heartbeat sends req and records the answer.
func (m *member) heartbeat(req *HeartbeatRequest) *HeartbeatResponse {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := m.c.Heartbeat(ctx, req)
	if err != nil {
		m.t.Fatal(err)
	}
	m.lastErr = resp.Err(m.group)
	if m.lastErr == nil {
		m.epoch = resp.MemberEpoch
		if resp.ActiveTasks != nil {
			m.active = resp.ActiveTasks
		}
		m.status = resp.Status
	}
	return resp
}

// untilAssigned heartbeats (reporting the tasks received as owned, as a member that
// reconciled them at once) until the assignment's active tasks equal want.
func (m *member) untilAssigned(want []Tasks) *HeartbeatResponse {
	m.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		req := &HeartbeatRequest{GroupID: m.group, MemberID: m.id, MemberEpoch: m.epoch, RebalanceTimeoutMs: -1,
			ActiveTasks: m.active, StandbyTasks: []Tasks{}, WarmupTasks: []Tasks{}}
		if m.active == nil {
			req.ActiveTasks = []Tasks{}
		}
		resp := m.heartbeat(req)
		if m.lastErr != nil {
			m.t.Fatalf("heartbeat: %v", m.lastErr)
		}
		if tasksEqual(m.active, want) && resp.ActiveTasks == nil {
			return resp
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("no assignment %v within 60 s: active %v, status %v", want, m.active, m.status)
		}
		time.Sleep(100 * time.Millisecond) // heartbeat pace, bounded by the deadline
	}
}

func tasksEqual(a, b []Tasks) bool {
	norm := func(ts []Tasks) []string {
		var out []string
		for _, t := range ts {
			for _, p := range t.Partitions {
				out = append(out, fmt.Sprintf("%s_%d", t.Subtopology, p))
			}
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(norm(a), norm(b))
}

// A member joins a streams group with a topology of one sub-topology reading a topic of two
// partitions, gets both tasks, describes the group and leaves: the encoding checked against
// Apache Kafka 4.4's answers (kfake serves no streams groups).
func TestIntegrationJoinAssignDescribeLeave(t *testing.T) {
	br := kafkatest.Real(t)
	group := kafkatest.Name(t, "sg")
	topic := group + "-input"
	kafkatest.CreateTopics(t, br, 2, nil, topic)
	c, _ := coordinatorConn(t, br, kafkatest.SaramaConfig(), group)
	if lo, hi, ok := c.Versions(APIKeyHeartbeat); !ok || lo > 0 || hi < 1 {
		t.Fatalf("broker's StreamsGroupHeartbeat versions %d-%d (%v), want 0-1 at least", lo, hi, ok)
	}
	m := &member{t: t, c: c, group: group, id: uuid(t), pid: uuid(t)}
	topo := &Topology{Epoch: 0, Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{topic}}}}
	resp := m.join(topo)
	t.Logf("join: %+v", resp)
	if resp.MemberID != m.id || resp.MemberEpoch < 1 || resp.HeartbeatIntervalMs <= 0 {
		t.Fatalf("join response %+v", resp)
	}
	want := []Tasks{{Subtopology: "0", Partitions: []int32{0, 1}}}
	resp = m.untilAssigned(want)
	t.Logf("assigned: %+v", resp)
	// The group's interactive-query routing: our endpoint holds both input partitions.
	if len(resp.PartitionsByUserEndpoint) != 1 || resp.PartitionsByUserEndpoint[0].Endpoint != (Endpoint{Host: "localhost", Port: 8080}) ||
		len(resp.PartitionsByUserEndpoint[0].Active) != 1 || resp.PartitionsByUserEndpoint[0].Active[0].Topic != topic ||
		!slices.Equal(resp.PartitionsByUserEndpoint[0].Active[0].Partitions, []int32{0, 1}) || resp.EndpointInformationEpoch < 1 {
		t.Fatalf("partitions by endpoint: %+v (epoch %d)", resp.PartitionsByUserEndpoint, resp.EndpointInformationEpoch)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.Describe(ctx, &DescribeRequest{GroupIDs: []string{group}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Groups) != 1 {
		t.Fatalf("describe: %+v", d)
	}
	g := d.Groups[0]
	t.Logf("describe: %+v", g)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if g.GroupID != group || g.GroupState != "Stable" || !g.HasTopology || len(g.Subtopologies) != 1 ||
		g.Subtopologies[0].ID != "0" || !slices.Equal(g.Subtopologies[0].SourceTopics, []string{topic}) || len(g.Members) != 1 {
		t.Fatalf("described group %+v", g)
	}
	gm := g.Members[0]
	if gm.MemberID != m.id || gm.MemberEpoch != m.epoch || gm.ProcessID != m.pid || gm.UserEndpoint == nil ||
		*gm.UserEndpoint != (Endpoint{Host: "localhost", Port: 8080}) || !slices.Equal(gm.ClientTags, []KeyValue{{"zone", "z1"}}) ||
		gm.ClientID != "streamsgroup-test" || !tasksEqual(gm.Assignment.Active, want) || !tasksEqual(gm.TargetAssignment.Active, want) || gm.IsClassic {
		t.Fatalf("described member %+v", gm)
	}

	resp = m.heartbeat(&HeartbeatRequest{GroupID: group, MemberID: m.id, MemberEpoch: LeaveEpoch, RebalanceTimeoutMs: -1})
	if m.lastErr != nil || resp.MemberEpoch != LeaveEpoch {
		t.Fatalf("leave: %v %+v", m.lastErr, resp)
	}
	d, err = c.Describe(ctx, &DescribeRequest{GroupIDs: []string{group}})
	if err != nil {
		t.Fatal(err)
	}
	if g := d.Groups[0]; g.Err() != nil || g.GroupState != "Empty" || len(g.Members) != 0 {
		t.Fatalf("after leaving: %+v", g)
	}
}

// The error codes of a group of the other protocol, both ways: a streams member's heartbeat
// and describe of a classic group are answered GROUP_ID_NOT_FOUND ("... is not a streams
// group"); a classic member's JoinGroup to a streams group INCONSISTENT_GROUP_PROTOCOL, which
// our classic member reports at once as a *group.ProtocolMismatchError naming a streams group.
func TestIntegrationWrongProtocol(t *testing.T) {
	br := kafkatest.Real(t)
	classic := kafkatest.Name(t, "classic")
	c, _ := coordinatorConn(t, br, kafkatest.SaramaConfig(), classic)
	// A classic member holds the group.
	raw := sarama.NewBroker(c.Addr())
	conf := kafkatest.SaramaConfig()
	conf.Net.ReadTimeout = time.Minute
	if err := raw.Open(conf); err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	jreq := &sarama.JoinGroupRequest{Version: 8, GroupId: classic, SessionTimeout: 30_000, RebalanceTimeout: 30_000,
		ProtocolType: "consumer", OrderedGroupProtocols: []*sarama.GroupProtocol{{Name: "stream", Metadata: []byte{0}}}}
	jresp, err := raw.JoinGroup(jreq)
	if err == nil && jresp.Err == sarama.ErrMemberIdRequired {
		jreq.MemberId = jresp.MemberId
		jresp, err = raw.JoinGroup(jreq)
	}
	if err != nil || jresp.Err != sarama.ErrNoError {
		t.Fatalf("classic JoinGroup: %v %v", err, jresp.Err)
	}
	m := &member{t: t, c: c, group: classic, id: uuid(t), pid: uuid(t)}
	m.heartbeat(m.joinRequest(&Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{classic}}}}))
	var re *ResponseError
	if !errors.As(m.lastErr, &re) || !errors.Is(m.lastErr, sarama.ErrGroupIDNotFound) || re.GroupID != classic ||
		!strings.Contains(re.Message, "not a streams group") {
		t.Fatalf("streams heartbeat to a classic group: %v, want GROUP_ID_NOT_FOUND: ... not a streams group", m.lastErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.Describe(ctx, &DescribeRequest{GroupIDs: []string{classic}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Groups[0].Err(); !errors.Is(err, sarama.ErrGroupIDNotFound) || !strings.Contains(err.Error(), "not a streams group") {
		t.Fatalf("describe a classic group: %v, want GROUP_ID_NOT_FOUND", err)
	}

	// The other way: our streams member holds a group; a classic member fails at once.
	streams := kafkatest.Name(t, "streams")
	topic := streams + "-input"
	kafkatest.CreateTopics(t, br, 1, nil, topic)
	sc, cl := coordinatorConn(t, br, kafkatest.SaramaConfig(), streams)
	sm := &member{t: t, c: sc, group: streams, id: uuid(t), pid: uuid(t)}
	sm.join(&Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{topic}}}})
	cm, err := group.New(group.Config{Cluster: cl, GroupID: streams, ClientID: "classic", Topics: []string{topic},
		SessionTimeout: 10 * time.Second, HeartbeatInterval: time.Second, RebalanceTimeout: 10 * time.Second, Assignor: noAssignor{}})
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	_, err = cm.Join(ctx)
	var pm *group.ProtocolMismatchError
	if ctx.Err() != nil || !errors.As(err, &pm) || pm.GroupType != group.GroupTypeStreams || !errors.Is(err, sarama.ErrInconsistentGroupProtocol) {
		t.Fatalf("classic Join of a streams group: %v, want a *group.ProtocolMismatchError of a streams group", err)
	}
	sm.heartbeat(&HeartbeatRequest{GroupID: streams, MemberID: sm.id, MemberEpoch: LeaveEpoch, RebalanceTimeoutMs: -1})
	if sm.lastErr != nil {
		t.Fatalf("leave: %v", sm.lastErr)
	}
}

// noAssignor is a classic assignor that assigns nothing (the test's Join fails before).
type noAssignor struct{}

func (noAssignor) Name() string { return "stream" }
func (noAssignor) Subscription([]string) ([]byte, []kafka.TopicPartition, error) {
	return nil, nil, nil
}
func (noAssignor) Assign([]group.Subscription, map[string]int32) (map[string]group.Assignment, error) {
	return nil, nil
}

// Apache Kafka 4.4 accepts the task offsets and end offsets in every heartbeat that carries
// them: a join with the offsets of tasks the member holds state for (and of a task of another
// sub-topology), heartbeats with changed lists, with only one of them, and with empty lists;
// each is answered without error and the member keeps its tasks.
func TestIntegrationTaskOffsets(t *testing.T) {
	br := kafkatest.Real(t)
	group := kafkatest.Name(t, "sg")
	topic := group + "-input"
	kafkatest.CreateTopics(t, br, 2, nil, topic)
	c, _ := coordinatorConn(t, br, kafkatest.SaramaConfig(), group)
	m := &member{t: t, c: c, group: group, id: uuid(t), pid: uuid(t)}
	changelog := group + "-store-changelog"
	topo := &Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{topic},
		StateChangelogTopics: []TopicInfo{{Name: changelog, Configs: []KeyValue{{"cleanup.policy", "compact"}}}}}}}
	join := m.joinRequest(topo)
	join.TaskOffsets = []TaskOffset{{Subtopology: "0", Partition: 0, Offset: 41}, {Subtopology: "0", Partition: 1, Offset: 0}, {Subtopology: "7", Partition: 3, Offset: 5}}
	join.TaskEndOffsets = []TaskOffset{{Subtopology: "0", Partition: 0, Offset: 42}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		m.heartbeat(join)
		if !errors.Is(m.lastErr, sarama.ErrUnknown) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond) // see join
	}
	if m.lastErr != nil {
		t.Fatalf("join with task offsets: %v", m.lastErr)
	}
	want := []Tasks{{Subtopology: "0", Partitions: []int32{0, 1}}}
	m.untilAssigned(want)
	for i, offs := range []struct{ offsets, ends []TaskOffset }{
		{[]TaskOffset{{Subtopology: "0", Partition: 0, Offset: 1000}}, []TaskOffset{{Subtopology: "0", Partition: 0, Offset: 1500}}},
		{[]TaskOffset{{Subtopology: "0", Partition: 1, Offset: 7}}, nil},
		{nil, []TaskOffset{{Subtopology: "0", Partition: 1, Offset: 9}}},
		{[]TaskOffset{}, []TaskOffset{}},
	} {
		m.heartbeat(&HeartbeatRequest{GroupID: group, MemberID: m.id, MemberEpoch: m.epoch, RebalanceTimeoutMs: -1,
			TaskOffsets: offs.offsets, TaskEndOffsets: offs.ends})
		if m.lastErr != nil {
			t.Fatalf("heartbeat %d with task offsets %v / %v: %v", i, offs.offsets, offs.ends, m.lastErr)
		}
	}
	if !tasksEqual(m.active, want) {
		t.Fatalf("tasks after the offsets: %v", m.active)
	}
}

// Apache Kafka 4.4's coordinator refuses a topology with SourceTopicRegex: the join is
// answered INVALID_REQUEST ("Regular expressions for source topics are not supported
// yet."), which is why the instance refuses pattern sources on the streams protocol before it
// joins, as Java 4.4's KafkaStreams does.
func TestIntegrationSourceTopicRegexRefused(t *testing.T) {
	br := kafkatest.Real(t)
	group := kafkatest.Name(t, "sg")
	kafkatest.CreateTopics(t, br, 1, nil, group+"-in-a")
	c, _ := coordinatorConn(t, br, kafkatest.SaramaConfig(), group)
	m := &member{t: t, c: c, group: group, id: uuid(t), pid: uuid(t)}
	topo := &Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{}, SourceTopicRegex: []string{group + "-in-.*"}}}}
	resp := m.heartbeat(m.joinRequest(topo))
	msg := ""
	if resp.ErrorMessage != nil {
		msg = *resp.ErrorMessage
	}
	t.Logf("join with SourceTopicRegex: error %d %q", resp.ErrorCode, msg)
	if sarama.KError(resp.ErrorCode) != sarama.ErrInvalidRequest || !strings.Contains(msg, "Regular expressions for source topics are not supported") {
		t.Fatalf("join with SourceTopicRegex answered %d %q (%v), want INVALID_REQUEST", resp.ErrorCode, msg, m.lastErr)
	}
}
