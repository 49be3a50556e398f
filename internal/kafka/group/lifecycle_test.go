package group

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// Without Poll for the rebalance timeout a member leaves the group (the other one gets
// everything at once, not after a session timeout) and RejoinNeeded says ErrPollTimeout.
func TestPollTimeout(t *testing.T)            { testPollTimeout(t, kafkatest.Embedded(t)) }
func TestIntegrationPollTimeout(t *testing.T) { testPollTimeout(t, kafkatest.Real(t)) }

func testPollTimeout(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	e.rebalance = 2 * time.Second
	topic := e.topic("poll", 4)
	group := kafkatest.Name(t, "group")
	m1 := e.member("m1", group, []string{topic})
	m2 := e.member("m2", group, []string{topic})
	js := formGroup(t, m1, m2)
	checkAssignments(t, []*member{m1, m2}, js, topic, 4)
	gen := js[0].Generation

	joined := m2.Metadata()
	m2.stopPolling()
	err := waitRejoin(t, m2, ErrPollTimeout)
	timedOut := time.Now()
	if !errors.Is(err, ErrMemberLost) {
		t.Fatalf("%v is not ErrMemberLost", err)
	}
	if md := m2.Metadata(); md != joined || md.Generation < 1 || md.MemberID == "" {
		t.Fatalf("Metadata after the poll timeout = %+v, want the last join's %+v (a zombie commit is fenced with it)", md, joined)
	}
	if err := m2.Commit(context.Background(), map[kafka.TopicPartition]Offset{{Topic: topic}: {Offset: 1}}); !errors.Is(err, ErrPollTimeout) {
		t.Fatalf("Commit after the poll timeout = %v", err)
	}
	// m2's LeaveGroup starts the rebalance at once, not when its session expires (the
	// heartbeats continued until the poll timeout).
	waitRejoin(t, m1, ErrRebalanceInProgress)
	if d := time.Since(timedOut); d >= e.session {
		t.Errorf("m1 learnt of the rebalance %v after m2's poll timeout, not before m2's session timeout %v: m2 did not leave", d, e.session)
	}
	js = joinAll(t, m1)
	if js[0].Generation <= gen || !js[0].Leader {
		t.Fatalf("m1 after m2 left: %+v", js[0])
	}
	if js[0].Lost {
		t.Fatal("m1 rejoined in a rebalance, yet its Join says it lost its generation")
	}
	checkAssignments(t, []*member{m1}, js, topic, 4)
	if n := len(m1.a.lastCall().members); n != 1 {
		t.Fatalf("m1 assigned %d members", n)
	}
	// m2 (its Join counts as a poll) rejoins, told that it lost what it held: m1 owned its
	// partitions meanwhile.
	js = rejoinAfter(t, m2, m1)
	checkGeneration(t, js)
	checkAssignments(t, []*member{m2, m1}, js, topic, 4)
	if !js[0].Lost || js[1].Lost {
		t.Fatalf("Lost after the rejoin: m2 %v (want true), m1 %v (want false)", js[0].Lost, js[1].Lost)
	}
}

// A Join the coordinator holds (another member has not rejoined yet) returns within about a
// second of its context's end; the member leaves, so the group completes the rebalance
// without it instead of waiting for it.
func TestJoinCancel(t *testing.T)            { testJoinCancel(t, kafkatest.Embedded(t)) }
func TestIntegrationJoinCancel(t *testing.T) { testJoinCancel(t, kafkatest.Real(t)) }

func testJoinCancel(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	e.rebalance = 60 * time.Second
	topic := e.topic("cancel", 4)
	group := kafkatest.Name(t, "group")
	m1 := e.member("m1", group, []string{topic})
	m2 := e.member("m2", group, []string{topic})
	m3 := e.member("m3", group, []string{topic})
	g1 := formGroup(t, m1)[0].Generation

	for _, how := range []string{"cancel", "close"} {
		joiner := m2
		if how == "close" {
			joiner = m3
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := joiner.Join(ctx)
			done <- err
		}()
		// The rebalance has started: joiner's JoinGroup is at the coordinator, held until m1
		// rejoins (up to the 60 s rebalance timeout).
		waitRejoin(t, m1, ErrRebalanceInProgress)
		start := time.Now()
		if how == "cancel" {
			cancel()
		} else {
			if err := joiner.Close(); err != nil {
				t.Fatalf("Close during Join: %v", err)
			}
		}
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the held Join did not return", how)
		}
		cancel()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: the held Join returned %v after its end", how, d)
		}
		wantErr := context.Canceled
		if how == "close" {
			wantErr = kafka.ErrClosed
		}
		if !errors.Is(err, wantErr) {
			t.Fatalf("%s: Join = %v, want %v", how, err, wantErr)
		}
		if how == "cancel" {
			if err := joiner.RejoinNeeded(); !errors.Is(err, ErrNotJoined) {
				t.Fatalf("RejoinNeeded after the cancelled Join = %v", err)
			}
			if md := joiner.Metadata(); md.MemberID != "" || md.Generation != -1 {
				t.Fatalf("Metadata after the cancelled Join = %+v", md)
			}
		}
		// m1 rejoins and the rebalance completes at once, with m1 alone.
		start = time.Now()
		js := joinAll(t, m1)
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: m1's rejoin took %v: the coordinator waited for the member that left", how, d)
		}
		if js[0].Generation <= g1 {
			t.Fatalf("%s: generation %d after %d", how, js[0].Generation, g1)
		}
		g1 = js[0].Generation
		checkAssignments(t, []*member{m1}, js, topic, 4)
		if n := len(m1.a.lastCall().members); n != 1 {
			t.Fatalf("%s: m1 assigned %d members: %+v", how, n, m1.a.lastCall().members)
		}
	}
	// The member whose Join was cancelled can join again.
	js := rejoinAfter(t, m2, m1)
	checkGeneration(t, js)
	checkAssignments(t, []*member{m2, m1}, js, topic, 4)
}

// Static membership (KIP-345): a member restarted with the same group.instance.id within the
// session timeout gets its assignment back in the same generation; the other member sees no
// rebalance.
func TestStaticMembership(t *testing.T)            { testStaticMembership(t, kafkatest.Embedded(t)) }
func TestIntegrationStaticMembership(t *testing.T) { testStaticMembership(t, kafkatest.Real(t)) }

func testStaticMembership(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("static", 4)
	group := kafkatest.Name(t, "group")
	inst := func(id string) func(*Config) { return func(c *Config) { c.InstanceID = id } }
	s1 := e.member("s1", group, []string{topic}, inst("instance-1"))
	s2 := e.member("s2", group, []string{topic}, inst("instance-2"))
	js := formGroup(t, s1, s2)
	checkAssignments(t, []*member{s1, s2}, js, topic, 4)
	if md := s2.Metadata(); md.InstanceID != "instance-2" {
		t.Fatalf("Metadata = %+v", md)
	}
	leader, follower, followerJoined := s1, s2, js[1]
	if js[1].Leader {
		leader, follower, followerJoined = s2, s1, js[0]
	}
	assigns := leader.a.callCount()

	// The follower's instance stops (a static member does not leave) and restarts.
	closed := time.Now()
	if err := follower.Close(); err != nil {
		t.Fatal(err)
	}
	restarted := e.member(follower.name, group, []string{topic}, inst(follower.Metadata().InstanceID))
	j := joinAll(t, restarted)[0]
	if j.Generation != followerJoined.Generation || j.Leader || j.LeaderID != leader.Metadata().MemberID {
		t.Fatalf("the restarted member joined %+v, before %+v", j, followerJoined)
	}
	if !slices.Equal(j.Assignment.Partitions, followerJoined.Assignment.Partitions) ||
		string(j.Assignment.UserData) != string(followerJoined.Assignment.UserData) {
		t.Fatalf("the restarted member got %+v, before %+v", j.Assignment, followerJoined.Assignment)
	}
	// The leader keeps its generation past the old instance's session timeout.
	eventually(t, 60*time.Second, func() error {
		if err := leader.RejoinNeeded(); err != nil {
			t.Fatalf("the leader must rejoin: %v", err)
		}
		if err := restarted.RejoinNeeded(); err != nil {
			t.Fatalf("the restarted member must rejoin: %v", err)
		}
		if since := time.Since(closed); since < e.session+time.Second {
			return fmt.Errorf("only %v since the restart", since)
		}
		return nil
	})
	if n := leader.a.callCount(); n != assigns {
		t.Fatalf("the leader assigned %d more times", n-assigns)
	}
	if g := leader.Metadata().Generation; g != followerJoined.Generation {
		t.Fatalf("the leader's generation is %d, was %d", g, followerJoined.Generation)
	}

	// A second live instance with the same id fences the first: its heartbeat learns it, and
	// it cannot rejoin (that would fence the other in turn).
	twin := e.member(follower.name, group, []string{topic}, inst(follower.Metadata().InstanceID))
	if _, err := twin.Join(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := waitRejoin(t, restarted, ErrFencedInstanceID)
	if !errors.Is(err, ErrFatal) || errors.Is(err, ErrMemberLost) {
		t.Fatalf("RejoinNeeded of the fenced instance = %v", err)
	}
	if _, err := restarted.Join(context.Background()); !errors.Is(err, ErrFencedInstanceID) {
		t.Fatalf("Join of the fenced instance = %v", err)
	}
	if err := restarted.Commit(context.Background(), map[kafka.TopicPartition]Offset{{Topic: topic}: {Offset: 1}}); !errors.Is(err, ErrFencedInstanceID) {
		t.Fatalf("Commit of the fenced instance = %v", err)
	}
}

// The leader checks the partition counts every MetadataMaxAge: new partitions of a subscribed
// topic make it request a rejoin, and the new assignment covers them.
func TestPartitionsChanged(t *testing.T)            { testPartitionsChanged(t, kafkatest.Embedded(t)) }
func TestIntegrationPartitionsChanged(t *testing.T) { testPartitionsChanged(t, kafkatest.Real(t)) }

func testPartitionsChanged(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("grow", 2)
	group := kafkatest.Name(t, "group")
	age := func(c *Config) { c.MetadataMaxAge = 200 * time.Millisecond }
	m1 := e.member("m1", group, []string{topic}, age)
	m2 := e.member("m2", group, []string{topic}, age)
	js := formGroup(t, m1, m2)
	checkAssignments(t, []*member{m1, m2}, js, topic, 2)
	leader, follower := m1, m2
	if js[1].Leader {
		leader, follower = m2, m1
	}
	if err := e.admin.CreatePartitions(topic, 5, nil, false); err != nil {
		t.Fatal(err)
	}
	err := waitRejoin(t, leader, ErrPartitionsChanged)
	t.Logf("leader: %v", err)
	if err := follower.RejoinNeeded(); err != nil && !errors.Is(err, ErrRebalanceInProgress) {
		t.Fatalf("follower: RejoinNeeded = %v", err)
	}
	js = rejoinAfter(t, leader, follower)
	checkGeneration(t, js)
	checkAssignments(t, []*member{leader, follower}, js, topic, 5)
}

// Without a successful heartbeat for the session timeout the member counts itself lost (the
// coordinator has expired it: the other member rebalances without it), and it can rejoin.
func TestSessionExpired(t *testing.T)            { testSessionExpired(t, kafkatest.Embedded(t)) }
func TestIntegrationSessionExpired(t *testing.T) { testSessionExpired(t, kafkatest.Real(t)) }

func testSessionExpired(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("session", 4)
	group := kafkatest.Name(t, "group")
	m1 := e.member("m1", group, []string{topic})
	m2 := e.member("m2", group, []string{topic})
	formGroup(t, m1, m2)

	m2.hbFault.Store(true)
	joined := m2.Metadata()
	err := waitRejoin(t, m2, ErrSessionExpired)
	if !errors.Is(err, ErrMemberLost) {
		t.Fatalf("%v is not ErrMemberLost", err)
	}
	if md := m2.Metadata(); md != joined {
		t.Fatalf("Metadata after the session expired = %+v, want the last join's %+v", md, joined)
	}
	waitRejoin(t, m1, ErrRebalanceInProgress)
	js := joinAll(t, m1)
	checkAssignments(t, []*member{m1}, js, topic, 4)

	m2.hbFault.Store(false)
	js = rejoinAfter(t, m2, m1)
	checkGeneration(t, js)
	checkAssignments(t, []*member{m2, m1}, js, topic, 4)
}

// A dynamic member whose Config.RemainInGroup reports true sends no LeaveGroup when it closes
// or when its Join is abandoned: the coordinator keeps counting it (DescribeGroups lists it),
// so the generation of the others stands (a commit under it succeeds) until its session times
// out. Java: Consumer.close with REMAIN_IN_GROUP, as Kafka Streams closes its consumers.
func TestRemainInGroup(t *testing.T)            { testRemainInGroup(t, kafkatest.Embedded(t)) }
func TestIntegrationRemainInGroup(t *testing.T) { testRemainInGroup(t, kafkatest.Real(t)) }

func testRemainInGroup(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	e.rebalance = 60 * time.Second
	topic := e.topic("remain", 4)
	remain := func(c *Config) { c.RemainInGroup = func() bool { return true } }
	members := func(group string) []string {
		t.Helper()
		ds, err := e.admin.DescribeConsumerGroups([]string{group})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range ds[0].Members {
			ids = append(ids, m.MemberId)
		}
		slices.Sort(ids)
		return ids
	}

	// Close.
	group := kafkatest.Name(t, "closed")
	m1 := e.member("m1", group, []string{topic})
	m2 := e.member("m2", group, []string{topic}, remain)
	checkGeneration(t, formGroup(t, m1, m2))
	want := []string{m1.Metadata().MemberID, m2.Metadata().MemberID}
	slices.Sort(want)
	m2.stopPolling()
	if err := m2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := members(group); !slices.Equal(got, want) {
		t.Fatalf("members after m2's Close = %v, want both %v", got, want)
	}
	if err := m1.Commit(context.Background(), map[kafka.TopicPartition]Offset{{Topic: topic}: {Offset: 1, LeaderEpoch: -1}}); err != nil {
		t.Fatalf("m1's commit after m2's Close: %v (the group rebalances: m2 left)", err)
	}

	// An abandoned Join: the coordinator holds it until m3 rejoins.
	group = kafkatest.Name(t, "abandoned")
	m3 := e.member("m3", group, []string{topic})
	m4 := e.member("m4", group, []string{topic}, remain)
	formGroup(t, m3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := m4.Join(ctx)
		done <- err
	}()
	waitRejoin(t, m3, ErrRebalanceInProgress)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("m4's Join = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held Join did not return")
	}
	if got := members(group); len(got) != 2 || !slices.Contains(got, m3.Metadata().MemberID) {
		t.Fatalf("members after m4's abandoned Join = %v, want m3 (%s) and m4", got, m3.Metadata().MemberID)
	}
}
