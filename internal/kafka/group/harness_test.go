package group

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// env is one test's broker, with the timeouts that suit it: the real broker refuses session
// timeouts below group.min.session.timeout.ms (6 s); kafkatest.Embedded allows 100 ms.
type env struct {
	t         *testing.T
	br        kafkatest.Broker
	admin     sarama.ClusterAdmin
	session   time.Duration
	heartbeat time.Duration
	rebalance time.Duration
	// shared, when set, is the Cluster of every member made next (else each has its own).
	shared *kafka.Cluster
}

func newEnv(t *testing.T, br kafkatest.Broker) *env {
	e := &env{t: t, br: br, session: 6 * time.Second, heartbeat: 100 * time.Millisecond, rebalance: 20 * time.Second}
	if br.Kind == kafkatest.Kfake {
		e.session = 3 * time.Second
	}
	admin, err := sarama.NewClusterAdmin(br.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	e.admin = admin
	return e
}

// topic creates a topic of n partitions and waits until its metadata shows them.
func (e *env) topic(prefix string, n int32) string {
	e.t.Helper()
	name := kafkatest.Name(e.t, prefix)
	kafkatest.CreateTopics(e.t, e.br, n, nil, name)
	e.waitPartitions(name, n)
	return name
}

func (e *env) waitPartitions(topic string, n int32) {
	e.t.Helper()
	c := e.cluster()
	eventually(e.t, 30*time.Second, func() error {
		if err := c.RefreshMetadata(topic); err != nil {
			return err
		}
		got, err := c.Partitions(topic)
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("%s has %d partitions, want %d", topic, got, n)
		}
		return nil
	})
}

func (e *env) cluster() *kafka.Cluster {
	e.t.Helper()
	c, err := kafka.NewCluster(kafka.Config{Brokers: e.br.Addrs, Sarama: kafkatest.SaramaConfig()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	return c
}

// member is a Member under test with its assignor; a goroutine calls Poll until the test ends
// unless stopPolling is called.
type member struct {
	*Member
	name string
	a    *testAssignor
	stop chan struct{}
	once sync.Once
}

func (m *member) stopPolling() { m.once.Do(func() { close(m.stop) }) }

func (e *env) member(name, group string, topics []string, opts ...func(*Config)) *member {
	e.t.Helper()
	a := &testAssignor{name: name}
	cfg := Config{
		Cluster:           e.shared,
		GroupID:           group,
		ClientID:          "group-test-" + name,
		SessionTimeout:    e.session,
		HeartbeatInterval: e.heartbeat,
		RebalanceTimeout:  e.rebalance,
		RetryBackoff:      50 * time.Millisecond,
		Topics:            topics,
		Assignor:          a,
		Logger:            slog.New(slog.NewTextHandler(e.t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})).With("member", name),
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Cluster == nil {
		cfg.Cluster = e.cluster()
	}
	m, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	tm := &member{Member: m, name: name, a: a, stop: make(chan struct{})}
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tm.stop:
				return
			case <-tick.C:
				m.Poll()
			}
		}
	}()
	e.t.Cleanup(func() {
		tm.stopPolling()
		_ = m.Close()
	})
	return tm
}

// testAssignor announces its member's name as user data and assigns round robin: the
// partitions of all topics, sorted, dealt to the members sorted by name (a member whose
// subscription cannot be decoded gets an empty assignment). Each assignment's user data is
// "for <name> in <n> members".
type testAssignor struct {
	name string

	mu       sync.Mutex
	owned    []kafka.TopicPartition
	userData []byte
	calls    []assignCall
}

type assignCall struct {
	members    []Subscription
	partitions map[string]int32
}

func (a *testAssignor) Name() string { return "test" }

func (a *testAssignor) setOwned(owned []kafka.TopicPartition, userData []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.owned, a.userData = owned, userData
}

func (a *testAssignor) Subscription([]string) ([]byte, []kafka.TopicPartition, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.userData != nil {
		return a.userData, a.owned, nil
	}
	return []byte(a.name), a.owned, nil
}

func (a *testAssignor) Assign(members []Subscription, partitions map[string]int32) (map[string]Assignment, error) {
	a.mu.Lock()
	a.calls = append(a.calls, assignCall{members: members, partitions: partitions})
	a.mu.Unlock()
	var valid []Subscription
	out := map[string]Assignment{}
	for _, s := range members {
		if s.Err != nil {
			out[s.MemberID] = Assignment{}
			continue
		}
		valid = append(valid, s)
	}
	slices.SortFunc(valid, func(x, y Subscription) int { return bytes.Compare(memberName(x), memberName(y)) })
	names := make([]string, len(valid))
	for i, s := range valid {
		names[i] = string(memberName(s))
	}
	plan := roundRobin(names, partitions)
	for _, s := range valid {
		name := string(memberName(s))
		out[s.MemberID] = Assignment{Partitions: plan[name], UserData: []byte(fmt.Sprintf("for %s in %d members", name, len(valid)))}
	}
	return out, nil
}

// memberName is the name in a subscription's user data: the part before the first '|'.
func memberName(s Subscription) []byte {
	n, _, _ := bytes.Cut(s.UserData, []byte("|"))
	return n
}

func (a *testAssignor) callCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.calls)
}

func (a *testAssignor) lastCall() assignCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.calls) == 0 {
		return assignCall{}
	}
	return a.calls[len(a.calls)-1]
}

// roundRobin deals the sorted partitions of topics to names in order.
func roundRobin(names []string, partitions map[string]int32) map[string][]kafka.TopicPartition {
	var all []kafka.TopicPartition
	for t, n := range partitions {
		for p := int32(0); p < n; p++ {
			all = append(all, kafka.TopicPartition{Topic: t, Partition: p})
		}
	}
	slices.SortFunc(all, func(x, y kafka.TopicPartition) int {
		if c := cmp.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		return cmp.Compare(x.Partition, y.Partition)
	})
	out := map[string][]kafka.TopicPartition{}
	if len(names) == 0 {
		return out
	}
	for i, tp := range all {
		n := names[i%len(names)]
		out[n] = append(out[n], tp)
	}
	return out
}

// joinAll runs the members' Joins concurrently and returns their results in order.
func joinAll(t *testing.T, ms ...*member) []Joined {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := make([]Joined, len(ms))
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() { out[i], errs[i] = m.Join(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Join of %s: %v", ms[i].name, err)
		}
	}
	return out
}

// checkGeneration checks that the results are of one generation with one leader that every
// member names, and returns the generation.
func checkGeneration(t *testing.T, js []Joined) int32 {
	t.Helper()
	leaders := 0
	for i, j := range js {
		if j.Generation != js[0].Generation {
			t.Fatalf("member %d joined generation %d, member 0 generation %d", i, j.Generation, js[0].Generation)
		}
		if j.LeaderID != js[0].LeaderID {
			t.Fatalf("member %d names leader %s, member 0 %s", i, j.LeaderID, js[0].LeaderID)
		}
		if j.Leader {
			leaders++
			if j.MemberID != j.LeaderID {
				t.Fatalf("member %d leads but is %s, leader %s", i, j.MemberID, j.LeaderID)
			}
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders in %+v", leaders, js)
	}
	return js[0].Generation
}

// checkAssignments checks that each member got its round-robin share of topic's n partitions
// among names (the members' names, sorted) and the user data that says so.
func checkAssignments(t *testing.T, ms []*member, js []Joined, topic string, n int32) {
	t.Helper()
	var names []string
	for _, m := range ms {
		names = append(names, m.name)
	}
	slices.Sort(names)
	want := roundRobin(names, map[string]int32{topic: n})
	for i, m := range ms {
		got := js[i].Assignment
		if !slices.Equal(got.Partitions, want[m.name]) {
			t.Errorf("%s was assigned %v, want %v", m.name, got.Partitions, want[m.name])
		}
		if ud := fmt.Sprintf("for %s in %d members", m.name, len(ms)); string(got.UserData) != ud {
			t.Errorf("%s's assignment user data %q, want %q", m.name, got.UserData, ud)
		}
		if got.Version != AssignmentVersion {
			t.Errorf("%s's assignment version %d, want %d", m.name, got.Version, AssignmentVersion)
		}
	}
}

// eventually calls f until it returns nil, failing the test with f's last error after d.
func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	kafkatest.EventuallyNoError(t, d, "condition", f)
}

// waitRejoin waits until m.RejoinNeeded reports target and returns what it reported.
func waitRejoin(t *testing.T, m *member, target error) error {
	t.Helper()
	var got error
	eventually(t, 30*time.Second, func() error {
		got = m.RejoinNeeded()
		if errors.Is(got, target) {
			return nil
		}
		return fmt.Errorf("%s: RejoinNeeded = %v, want %v", m.name, got, target)
	})
	return got
}

// heartbeatCount returns the member's successful heartbeats.
func heartbeatCount(m *member) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.heartbeats
}

// formGroup makes ms one generation: the first joins alone, then each next one joins while
// the members before it, told by their heartbeats, rejoin. (Members that join an empty group
// at once may land in different generations, as Java consumers may: the first JoinGroup can
// complete before the second arrives.) It returns the last generation's results, in order.
func formGroup(t *testing.T, ms ...*member) []Joined {
	t.Helper()
	js := joinAll(t, ms[0])
	for i := 1; i < len(ms); i++ {
		js = rejoinAfter(t, ms[i], ms[:i]...)
		js = append(js[1:], js[0])
	}
	checkGeneration(t, js)
	return js
}

// rejoinAfter starts first's Join, waits until the others' heartbeats learn of the rebalance
// it starts, and joins them too. It returns the results of first, then of others. (A follower
// rejoining a stable group with unchanged metadata gets the current generation back without
// a rebalance, so the others must not rejoin before first's JoinGroup has started one.)
func rejoinAfter(t *testing.T, first *member, others ...*member) []Joined {
	t.Helper()
	type result struct {
		j   Joined
		err error
	}
	done := make(chan result, 1)
	go func() {
		j, err := first.Join(context.Background())
		done <- result{j, err}
	}()
	for _, m := range others {
		waitRejoin(t, m, ErrRebalanceInProgress)
	}
	js := joinAll(t, others...)
	r := <-done
	if r.err != nil {
		t.Fatalf("Join of %s: %v", first.name, r.err)
	}
	return append([]Joined{r.j}, js...)
}
