package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// Two, then three members share the partitions; each join and leave reaches the others
// through their heartbeats (REBALANCE_IN_PROGRESS) and they rejoin to a new generation.
func TestMembership(t *testing.T)            { testMembership(t, kafkatest.Embedded(t)) }
func TestIntegrationMembership(t *testing.T) { testMembership(t, kafkatest.Real(t)) }

func testMembership(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("members", 6)
	group := kafkatest.Name(t, "group")
	m1 := e.member("m1", group, []string{topic})
	m2 := e.member("m2", group, []string{topic})
	m3 := e.member("m3", group, []string{topic})

	if err := m1.RejoinNeeded(); !errors.Is(err, ErrNotJoined) {
		t.Fatalf("RejoinNeeded before Join = %v, want ErrNotJoined", err)
	}
	js := joinAll(t, m1)
	g1 := checkGeneration(t, js)
	if !js[0].Leader {
		t.Fatal("the only member does not lead")
	}
	checkAssignments(t, []*member{m1}, js, topic, 6)
	if err := m1.RejoinNeeded(); err != nil {
		t.Fatalf("RejoinNeeded after Join = %v", err)
	}
	if md := m1.Metadata(); md.GroupID != group || md.Generation != g1 || md.MemberID != js[0].MemberID || md.InstanceID != "" {
		t.Fatalf("Metadata = %+v, joined %+v", md, js[0])
	}
	call := m1.a.lastCall()
	if len(call.members) != 1 || call.members[0].MemberID != js[0].MemberID || call.partitions[topic] != 6 || len(call.partitions) != 1 {
		t.Fatalf("Assign called with %+v", call)
	}

	// m2 joins: its JoinGroup waits for m1, whose heartbeat learns of the rebalance.
	type result struct {
		j   Joined
		err error
	}
	done := make(chan result, 1)
	go func() {
		j, err := m2.Join(context.Background())
		done <- result{j, err}
	}()
	waitRejoin(t, m1, ErrRebalanceInProgress)
	j1 := joinAll(t, m1)[0]
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	js = []Joined{j1, r.j}
	g2 := checkGeneration(t, js)
	if g2 <= g1 {
		t.Fatalf("generation %d after %d", g2, g1)
	}
	checkAssignments(t, []*member{m1, m2}, js, topic, 6)

	// m3 joins: both others rejoin.
	go func() {
		j, err := m3.Join(context.Background())
		done <- result{j, err}
	}()
	waitRejoin(t, m1, ErrRebalanceInProgress)
	waitRejoin(t, m2, ErrRebalanceInProgress)
	j12 := joinAll(t, m1, m2)
	r = <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	js = append(j12, r.j)
	g3 := checkGeneration(t, js)
	if g3 <= g2 {
		t.Fatalf("generation %d after %d", g3, g2)
	}
	checkAssignments(t, []*member{m1, m2, m3}, js, topic, 6)
	leader := m1
	for i, j := range js {
		if j.Leader {
			leader = []*member{m1, m2, m3}[i]
		}
	}
	if n := len(leader.a.lastCall().members); n != 3 {
		t.Fatalf("the leader assigned %d members", n)
	}

	// m2 leaves: the others rejoin without it.
	if err := m2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := m2.RejoinNeeded(); !errors.Is(err, kafka.ErrClosed) {
		t.Fatalf("RejoinNeeded after Close = %v", err)
	}
	if _, err := m2.Join(context.Background()); !errors.Is(err, kafka.ErrClosed) {
		t.Fatalf("Join after Close = %v", err)
	}
	waitRejoin(t, m1, ErrRebalanceInProgress)
	waitRejoin(t, m3, ErrRebalanceInProgress)
	js = joinAll(t, m1, m3)
	g4 := checkGeneration(t, js)
	if g4 <= g3 {
		t.Fatalf("generation %d after %d", g4, g3)
	}
	checkAssignments(t, []*member{m1, m3}, js, topic, 6)

	// The generation stands while the members heartbeat.
	n := heartbeatCount(m1)
	eventually(t, 30*time.Second, func() error {
		if heartbeatCount(m1) < n+5 {
			return fmt.Errorf("%d heartbeats", heartbeatCount(m1)-n)
		}
		return nil
	})
	if err := m1.RejoinNeeded(); err != nil {
		t.Fatalf("RejoinNeeded in a stable group = %v", err)
	}
	// RequestRejoin asks for a rejoin with a reason.
	m1.RequestRejoin("cooperative follow-up")
	if err := m1.RejoinNeeded(); !errors.Is(err, ErrRejoinRequested) || !strings.Contains(err.Error(), "cooperative follow-up") {
		t.Fatalf("RejoinNeeded after RequestRejoin = %v", err)
	}
	// Leave makes the member unjoined (Metadata keeps its last join: a transactional commit
	// with it is fenced); the other one rejoins alone and gets everything.
	joined := m1.Metadata()
	if err := m1.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m1.RejoinNeeded(); !errors.Is(err, ErrNotJoined) {
		t.Fatalf("RejoinNeeded after Leave = %v", err)
	}
	if md := m1.Metadata(); md != joined || md.Generation < 1 || md.MemberID == "" {
		t.Fatalf("Metadata after Leave = %+v, want the last join's %+v", md, joined)
	}
	waitRejoin(t, m3, ErrRebalanceInProgress)
	js = joinAll(t, m3)
	checkGeneration(t, js)
	checkAssignments(t, []*member{m3}, js, topic, 6)
}

// What a member sends in its subscription (owned partitions, user data) reaches the leader's
// Assign exactly (owned sorted, as Java sends them), with each member's generation; the
// assignments' user data reaches the members. A subscribed topic that does not exist has no
// partition count.
func TestOwnershipFlows(t *testing.T)            { testOwnershipFlows(t, kafkatest.Embedded(t)) }
func TestIntegrationOwnershipFlows(t *testing.T) { testOwnershipFlows(t, kafkatest.Real(t)) }

func testOwnershipFlows(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("own", 4)
	other := e.topic("own-other", 2)
	group := kafkatest.Name(t, "group")
	missing := kafkatest.Name(t, "missing")
	m1 := e.member("m1", group, []string{topic, other, missing})
	m2 := e.member("m2", group, []string{topic})
	js := formGroup(t, m1, m2)
	gen := checkGeneration(t, js)

	// Each member announces what it got, out of order, with binary user data.
	sent := map[string][]byte{}
	for i, m := range []*member{m1, m2} {
		owned := slices.Clone(js[i].Assignment.Partitions)
		slices.Reverse(owned)
		ud := append([]byte(m.name+"|"), 0, 1, 2, 0xff, byte(i))
		sent[js[i].MemberID] = ud
		m.a.setOwned(owned, ud)
	}
	m1.RequestRejoin("test")
	m2.RequestRejoin("test")
	js2 := joinAll(t, m1, m2)
	gen2 := checkGeneration(t, js2)
	var leader *member
	for i, j := range js2 {
		if j.Leader {
			leader = []*member{m1, m2}[i]
		}
	}
	call := leader.a.lastCall()
	if len(call.members) != 2 {
		t.Fatalf("Assign saw %d members", len(call.members))
	}
	if call.partitions[topic] != 4 || call.partitions[other] != 2 || len(call.partitions) != 2 {
		t.Fatalf("Assign saw partition counts %v", call.partitions)
	}
	for _, s := range call.members {
		i := slices.IndexFunc(js, func(j Joined) bool { return j.MemberID == s.MemberID })
		if i < 0 {
			t.Fatalf("Assign saw member %s, not one of %+v", s.MemberID, js)
		}
		m := []*member{m1, m2}[i]
		want := slices.Clone(js[i].Assignment.Partitions)
		slices.SortFunc(want, compareTP)
		if s.Err != nil || s.Version != SubscriptionVersion || string(s.UserData) != string(sent[s.MemberID]) ||
			!slices.Equal(s.Owned, want) || s.Generation != gen || s.InstanceID != "" || s.Rack != "" {
			t.Errorf("%s's subscription at the leader: %+v; want owned %v, user data %x, generation %d", m.name, s, want, sent[s.MemberID], gen)
		}
		wantTopics := []string{topic}
		if m == m1 {
			wantTopics = []string{topic, other, missing}
			slices.Sort(wantTopics)
		}
		if !slices.Equal(s.Topics, wantTopics) {
			t.Errorf("%s's topics at the leader: %v, want %v", m.name, s.Topics, wantTopics)
		}
	}
	// The round-robin plan covers both topics; each member got its user data.
	plan := roundRobin([]string{"m1", "m2"}, map[string]int32{topic: 4, other: 2})
	for i, m := range []*member{m1, m2} {
		a := js2[i].Assignment
		if !slices.Equal(a.Partitions, plan[m.name]) || string(a.UserData) != "for "+m.name+" in 2 members" {
			t.Errorf("%s in generation %d: %+v, want %v", m.name, gen2, a, plan[m.name])
		}
	}
}

// A member whose JoinGroup metadata is garbage reaches the leader's Assign with
// Subscription.Err; the other members still get their assignments, and so does it.
func TestGarbageSubscription(t *testing.T)            { testGarbageSubscription(t, kafkatest.Embedded(t)) }
func TestIntegrationGarbageSubscription(t *testing.T) { testGarbageSubscription(t, kafkatest.Real(t)) }

func testGarbageSubscription(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("garbage", 4)
	group := kafkatest.Name(t, "group")
	m1 := e.member("m1", group, []string{topic})
	m2 := e.member("m2", group, []string{topic})
	formGroup(t, m1, m2)

	// A raw member with garbage metadata.
	cl := e.cluster()
	coord, err := cl.FindCoordinator(context.Background(), group, sarama.CoordinatorGroup)
	if err != nil {
		t.Fatal(err)
	}
	conf := kafkatest.SaramaConfig()
	conf.Net.ReadTimeout = time.Minute
	raw := sarama.NewBroker(coord.Addr)
	if err := raw.Open(conf); err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	garbage := []byte("this is not a subscription")
	jreq := &sarama.JoinGroupRequest{Version: 8, GroupId: group, SessionTimeout: int32(e.session.Milliseconds()),
		RebalanceTimeout: int32(e.rebalance.Milliseconds()), ProtocolType: ProtocolType,
		OrderedGroupProtocols: []*sarama.GroupProtocol{{Name: "test", Metadata: garbage}}}
	resp, err := raw.JoinGroup(jreq)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Err != sarama.ErrMemberIdRequired {
		t.Fatalf("first JoinGroup: %v", resp.Err)
	}
	jreq.MemberId = resp.MemberId
	rawDone := make(chan *sarama.JoinGroupResponse, 1)
	go func() {
		resp, err := raw.JoinGroup(jreq)
		if err != nil {
			t.Error(err)
		}
		rawDone <- resp
	}()
	waitRejoin(t, m1, ErrRebalanceInProgress)
	waitRejoin(t, m2, ErrRebalanceInProgress)
	js := joinAll(t, m1, m2)
	gen := checkGeneration(t, js)
	rresp := <-rawDone
	if rresp == nil || rresp.Err != sarama.ErrNoError || rresp.GenerationId != gen {
		t.Fatalf("raw member's JoinGroup: %+v", rresp)
	}
	checkAssignments(t, []*member{m1, m2}, js, topic, 4)
	leader := m1
	if js[1].Leader {
		leader = m2
	}
	call := leader.a.lastCall()
	if len(call.members) != 3 {
		t.Fatalf("Assign saw %d members", len(call.members))
	}
	bad := 0
	for _, s := range call.members {
		if s.MemberID == jreq.MemberId {
			bad++
			if !errors.Is(s.Err, ErrMalformed) || s.Topics != nil || s.UserData != nil {
				t.Errorf("the garbage member's subscription: %+v", s)
			}
		} else if s.Err != nil {
			t.Errorf("member %s: %v", s.MemberID, s.Err)
		}
	}
	if bad != 1 {
		t.Fatalf("the garbage member is missing from Assign: %+v", call.members)
	}
	// The garbage member gets the empty assignment its leader gave it.
	ptype, pname := ProtocolType, "test"
	sreq := &sarama.SyncGroupRequest{Version: 5, GroupId: group, GenerationId: gen, MemberId: jreq.MemberId, ProtocolType: &ptype, ProtocolName: &pname}
	sresp, err := raw.SyncGroup(sreq)
	if err != nil {
		t.Fatal(err)
	}
	if sresp.Err != sarama.ErrNoError {
		t.Fatalf("raw SyncGroup: %v", sresp.Err)
	}
	a, err := DecodeAssignment(sresp.MemberAssignment)
	if err != nil || a.Version != AssignmentVersion || len(a.Partitions) != 0 || a.UserData != nil {
		t.Fatalf("the garbage member's assignment: %+v, %v", a, err)
	}
}

func TestNewValidates(t *testing.T) {
	c := &kafka.Cluster{}
	ok := Config{Cluster: c, GroupID: "g", Topics: []string{"t"}, Assignor: &testAssignor{}}
	for _, c := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no cluster", func(c *Config) { c.Cluster = nil }, "Cluster"},
		{"no group", func(c *Config) { c.GroupID = "" }, "GroupID"},
		{"no topics", func(c *Config) { c.Topics = nil }, "Topics"},
		{"empty topic", func(c *Config) { c.Topics = []string{"t", ""} }, "empty topic"},
		{"no assignor", func(c *Config) { c.Assignor = nil }, "Assignor"},
		{"negative session", func(c *Config) { c.SessionTimeout = -time.Second }, "negative"},
		{"heartbeat not below session", func(c *Config) { c.SessionTimeout, c.HeartbeatInterval = 6*time.Second, 6*time.Second }, "lower than SessionTimeout"},
		{"default heartbeat above session", func(c *Config) { c.SessionTimeout = 2 * time.Second }, "lower than SessionTimeout"},
		{"sub-millisecond", func(c *Config) { c.RetryBackoff = time.Microsecond }, "below 1 ms"},
		{"too long", func(c *Config) { c.RebalanceTimeout = 1000 * time.Hour }, "beyond"},
		{"bad instance id", func(c *Config) { c.InstanceID = "a b" }, "InstanceID"},
		{"dot instance id", func(c *Config) { c.InstanceID = ".." }, "InstanceID"},
	} {
		cfg := ok
		c.mod(&cfg)
		if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %q", c.name, err, c.want)
		}
	}
	cfg := ok
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.SessionTimeout != 45*time.Second || cfg.HeartbeatInterval != 3*time.Second || cfg.RebalanceTimeout != 300*time.Second ||
		cfg.RetryBackoff != 100*time.Millisecond || cfg.MetadataMaxAge != 5*time.Minute {
		t.Fatalf("defaults: %+v", cfg)
	}
}

// Members sharing one Cluster use connections of their own: a JoinGroup the coordinator
// holds for one does not block the others' requests.
func TestSharedCluster(t *testing.T)            { testSharedCluster(t, kafkatest.Embedded(t)) }
func TestIntegrationSharedCluster(t *testing.T) { testSharedCluster(t, kafkatest.Real(t)) }

func testSharedCluster(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("shared", 3)
	group := kafkatest.Name(t, "group")
	e.shared = e.cluster()
	m1 := e.member("m1", group, []string{topic})
	m2 := e.member("m2", group, []string{topic})
	m3 := e.member("m3", group, []string{topic})
	js := formGroup(t, m1, m2, m3)
	checkAssignments(t, []*member{m1, m2, m3}, js, topic, 3)
}
