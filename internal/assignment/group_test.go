package assignment

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// The group-level steps of Java's StreamsPartitionAssignor.assign (grouping members into
// instances, error assignments, cooperative withholding, partitions by host, follow-ups,
// version probing), checked against values derived by hand from Java's code.

var (
	procA = mustUUID("00000000-0000-4000-8000-00000000000a")
	procB = mustUUID("00000000-0000-4000-8000-00000000000b")
)

// wordCount is the word count's tasks: sub-topology 0 (input "in", stateless) and 1
// (repartition topic "rep", stateful), two partitions each.
func wordCount() (map[TaskID][]kafka.TopicPartition, []TaskID) {
	tasks := map[TaskID][]kafka.TopicPartition{}
	for p := int32(0); p < 2; p++ {
		tasks[TaskID{0, p, ""}] = []kafka.TopicPartition{tp("in", p)}
		tasks[TaskID{1, p, ""}] = []kafka.TopicPartition{tp("rep", p)}
	}
	return tasks, []TaskID{{1, 0, ""}, {1, 1, ""}}
}

func sub(t *testing.T, pid UUID, endpoint string, sums map[TaskID]int64) []byte {
	t.Helper()
	s := Subscription{Version: 11, LatestSupportedVersion: 11, ProcessID: pid, UserEndpoint: endpoint, TaskOffsetSums: sums}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func endSums(v int64) func() (map[TaskID]int64, error) {
	return func() (map[TaskID]int64, error) {
		return map[TaskID]int64{{1, 0, ""}: v, {1, 1, ""}: v}, nil
	}
}

func defaultConfig(standbys int) Config {
	return Config{AcceptableRecoveryLag: DefaultAcceptableRecoveryLag, MaxWarmupReplicas: DefaultMaxWarmupReplicas,
		NumStandbyReplicas: standbys, ProbingRebalanceInterval: DefaultProbingRebalanceInterval}
}

func TestAssignFirstRebalance(t *testing.T) {
	tasks, stateful := wordCount()
	res, err := Assign(Group{
		Members: []Member{
			{ID: "a-1", UserData: sub(t, procA, "ha:1", nil)},
			{ID: "b-1", UserData: sub(t, procB, "hb:2", nil)},
		},
		Tasks: tasks, Stateful: stateful, EndOffsetSums: endSums(0), Leader: procA, NowMs: 1000, Config: defaultConfig(1),
	})
	if err != nil {
		t.Fatal(err)
	}
	// Stateful round robin over (a, b): 1_0 -> a, 1_1 -> b; stateless by active load: 0_0 -> a,
	// 0_1 -> b. Standbys on the other instance.
	a, b := res.Assignments["a-1"], res.Assignments["b-1"]
	if want := []kafka.TopicPartition{tp("in", 0), tp("rep", 0)}; !reflect.DeepEqual(a.Partitions, want) {
		t.Errorf("a-1 partitions %v, want %v", a.Partitions, want)
	}
	if want := []TaskID{{0, 0, ""}, {1, 0, ""}}; !reflect.DeepEqual(a.Info.ActiveTasks, want) {
		t.Errorf("a-1 active tasks %v, want %v (paired with the sorted partitions)", a.Info.ActiveTasks, want)
	}
	if want := map[TaskID][]kafka.TopicPartition{{1, 1, ""}: {tp("rep", 1)}}; !reflect.DeepEqual(a.Info.StandbyTasks, want) {
		t.Errorf("a-1 standbys %v, want %v", a.Info.StandbyTasks, want)
	}
	if want := []TaskID{{0, 1, ""}, {1, 1, ""}}; !reflect.DeepEqual(b.Info.ActiveTasks, want) {
		t.Errorf("b-1 active tasks %v, want %v", b.Info.ActiveTasks, want)
	}
	wantHosts := map[HostInfo][]kafka.TopicPartition{{"ha", 1}: {tp("in", 0), tp("rep", 0)}, {"hb", 2}: {tp("in", 1), tp("rep", 1)}}
	if !reflect.DeepEqual(a.Info.PartitionsByHost, wantHosts) || !reflect.DeepEqual(b.Info.PartitionsByHost, wantHosts) {
		t.Errorf("partitions by host %v / %v, want %v", a.Info.PartitionsByHost, b.Info.PartitionsByHost, wantHosts)
	}
	wantSb := map[HostInfo][]kafka.TopicPartition{{"ha", 1}: {tp("rep", 1)}, {"hb", 2}: {tp("rep", 0)}}
	if !reflect.DeepEqual(a.Info.StandbyPartitionsByHost, wantSb) {
		t.Errorf("standby partitions by host %v, want %v", a.Info.StandbyPartitionsByHost, wantSb)
	}
	if a.Info.Version != 11 || a.Info.CommonlySupportedVersion != 11 || a.Info.NextRebalanceMs != NoRebalance || res.ProbingRebalance {
		t.Errorf("a-1 info %+v, probing %v: want version 11/11 and no follow-up", a.Info, res.ProbingRebalance)
	}
	if _, err := a.Info.Encode(); err != nil {
		t.Fatal(err)
	}
}

// A new instance with caught-up state takes over its share, but the partitions the old owner
// still owns are withheld until it revoked them; it keeps its standby meanwhile.
func TestAssignCooperativeWithholds(t *testing.T) {
	tasks, stateful := wordCount()
	running := map[TaskID]int64{{1, 0, ""}: OffsetSumRunning, {1, 1, ""}: OffsetSumRunning}
	res, err := Assign(Group{
		Members: []Member{
			{ID: "a-1", Owned: []kafka.TopicPartition{tp("in", 0), tp("in", 1), tp("rep", 0), tp("rep", 1)}, UserData: sub(t, procA, "", running)},
			{ID: "b-1", UserData: sub(t, procB, "", map[TaskID]int64{{1, 0, ""}: 995, {1, 1, ""}: 999})},
		},
		Tasks: tasks, Stateful: stateful, EndOffsetSums: endSums(1000), Leader: procA, NowMs: 1000, Config: defaultConfig(1),
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Assignments["a-1"], res.Assignments["b-1"]
	// Balanced: 1_0 + 0_0 on a, 1_1 + 0_1 on b (b is caught up on 1_1: lag 1).
	if want := []TaskID{{0, 0, ""}, {1, 0, ""}}; !reflect.DeepEqual(a.Info.ActiveTasks, want) {
		t.Errorf("a-1 keeps %v, want %v", a.Info.ActiveTasks, want)
	}
	if len(b.Partitions) != 0 || len(b.Info.ActiveTasks) != 0 {
		t.Errorf("b-1 got %v at once; a-1 still owns them", b.Partitions)
	}
	if want := []TaskID{{0, 1, ""}, {1, 1, ""}}; !reflect.DeepEqual(b.Withheld, want) {
		t.Errorf("b-1 withheld %v, want %v", b.Withheld, want)
	}
	if b.Info.NextRebalanceMs != 0 {
		t.Errorf("b-1 next rebalance %d, want 0 (at once)", b.Info.NextRebalanceMs)
	}
	if _, ok := b.Info.StandbyTasks[TaskID{1, 1, ""}]; !ok {
		t.Errorf("b-1 standbys %v: its state of 1_1 should stay a standby until the task is free", b.Info.StandbyTasks)
	}
	if a.Info.NextRebalanceMs != NoRebalance {
		t.Errorf("a-1 next rebalance %d, want none", a.Info.NextRebalanceMs)
	}
}

// A new instance without state gets warm-ups; the leader's instance schedules the probing
// rebalance, on its first member only.
func TestAssignWarmupsAndProbing(t *testing.T) {
	tasks, stateful := wordCount()
	running := map[TaskID]int64{{1, 0, ""}: OffsetSumRunning, {1, 1, ""}: OffsetSumRunning}
	res, err := Assign(Group{
		Members: []Member{
			{ID: "a-2", UserData: sub(t, procA, "", nil)},
			{ID: "a-1", Owned: []kafka.TopicPartition{tp("in", 0), tp("in", 1), tp("rep", 0), tp("rep", 1)}, UserData: sub(t, procA, "", running)},
			{ID: "b-1", UserData: sub(t, procB, "", nil)},
		},
		Tasks: tasks, Stateful: stateful, EndOffsetSums: endSums(50_000), Leader: procA, NowMs: 1000,
		Config: Config{AcceptableRecoveryLag: 100, MaxWarmupReplicas: 1, ProbingRebalanceInterval: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ProbingRebalance {
		t.Fatal("no probing rebalance; b-1 is not caught up on its share")
	}
	// Instances: a (two threads) keeps both stateful tasks (caught up; 1_1 would balance to b,
	// which is not), b warms 1_1 up (max.warmup.replicas 1); the stateless tasks balance the
	// active load: 0_0 to b, 0_1 to a.
	var ca, cb *Client
	for _, c := range res.Clients {
		if c.ProcessID == procA {
			ca = c
		} else {
			cb = c
		}
	}
	if want := []TaskID{{0, 1, ""}, {1, 0, ""}, {1, 1, ""}}; !reflect.DeepEqual(ca.Active(), want) {
		t.Errorf("a's active tasks %v, want %v", ca.Active(), want)
	}
	if want := []TaskID{{0, 0, ""}}; !reflect.DeepEqual(cb.Active(), want) || !reflect.DeepEqual(cb.Standby(), []TaskID{{1, 1, ""}}) {
		t.Errorf("b's tasks %v / standby %v, want %v / [1_1]", cb.Active(), cb.Standby(), want)
	}
	// Threads: a-1 keeps 1_0 (and 0_1); a-2 gets 1_1, which a-1 owns: withheld, follow-up at
	// once; so is b-1's 0_0. The probing time goes to a-1, the leader's instance's first member.
	a1, a2, b := res.Assignments["a-1"], res.Assignments["a-2"], res.Assignments["b-1"]
	if want := []TaskID{{0, 1, ""}, {1, 0, ""}}; !reflect.DeepEqual(a1.Info.ActiveTasks, want) {
		t.Errorf("a-1 active %v, want %v", a1.Info.ActiveTasks, want)
	}
	if got := a1.Info.NextRebalanceMs; got != 1000+60_000 {
		t.Errorf("a-1 next rebalance %d, want %d", got, 1000+60_000)
	}
	if !reflect.DeepEqual(a2.Withheld, []TaskID{{1, 1, ""}}) || a2.Info.NextRebalanceMs != 0 {
		t.Errorf("a-2 withheld %v, next %d; want [1_1], 0", a2.Withheld, a2.Info.NextRebalanceMs)
	}
	if !reflect.DeepEqual(b.Withheld, []TaskID{{0, 0, ""}}) || b.Info.NextRebalanceMs != 0 {
		t.Errorf("b-1 withheld %v, next %d; want [0_0], 0", b.Withheld, b.Info.NextRebalanceMs)
	}
	if _, ok := b.Info.StandbyTasks[TaskID{1, 1, ""}]; !ok {
		t.Errorf("b-1 standbys %v, want the warm-up 1_1", b.Info.StandbyTasks)
	}
}

func TestAssignVersions(t *testing.T) {
	tasks, stateful := wordCount()
	old := Subscription{Version: 7, LatestSupportedVersion: 9, ProcessID: procB}
	ob, err := old.Encode()
	if err != nil {
		t.Fatal(err)
	}
	future := []byte{0, 0, 0, 12, 0, 0, 0, 12, 0xde, 0xad}
	res, err := Assign(Group{
		Members: []Member{
			{ID: "a-1", UserData: sub(t, procA, "", nil)},
			{ID: "b-1", UserData: ob},
			{ID: "f-1", UserData: future},
		},
		Tasks: tasks, Stateful: stateful, EndOffsetSums: endSums(0), Leader: procA, Config: defaultConfig(0),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.VersionProbing || res.UsedVersion != 7 || res.SupportedVersion != 9 {
		t.Errorf("probing %v, versions %d/%d, want true, 7/9", res.VersionProbing, res.UsedVersion, res.SupportedVersion)
	}
	for id, a := range res.Assignments {
		if a.Info.Version != 7 || a.Info.CommonlySupportedVersion != 9 {
			t.Errorf("%s: version %d/%d, want 7/9", id, a.Info.Version, a.Info.CommonlySupportedVersion)
		}
	}
	if len(res.Clients) != 3 {
		t.Errorf("%d clients, want 3 (the future member in a client of its own)", len(res.Clients))
	}
	// A future member with a member that cannot probe fails the assignment.
	v2 := Subscription{Version: 2, LatestSupportedVersion: UnknownVersion, ProcessID: procB}
	b2, _ := v2.Encode()
	res, err = Assign(Group{Members: []Member{{ID: "b", UserData: b2}, {ID: "f", UserData: future}}, Tasks: tasks, Stateful: stateful,
		EndOffsetSums: endSums(0), Config: defaultConfig(0)})
	if err != nil || res.ErrorCode != ErrorAssignmentError || res.Assignments["b"].Info.ErrorCode != ErrorAssignmentError {
		t.Errorf("future with version 2: %+v, %v; want ASSIGNMENT_ERROR for everyone", res, err)
	}
}

func TestAssignErrors(t *testing.T) {
	tasks, stateful := wordCount()
	shut := Subscription{Version: 11, LatestSupportedVersion: 11, ProcessID: procB, ErrorCode: ErrorShutdownRequested}
	sb, _ := shut.Encode()
	res, err := Assign(Group{Members: []Member{{ID: "a", UserData: sub(t, procA, "", nil)}, {ID: "b", UserData: sb}},
		Tasks: tasks, Stateful: stateful, EndOffsetSums: endSums(0), Config: defaultConfig(0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		a := res.Assignments[id]
		if a.Info.ErrorCode != ErrorShutdownRequested || len(a.Partitions) != 0 || a.Info.Version != LatestSupportedVersion {
			t.Errorf("%s: %+v, want SHUTDOWN_REQUESTED, no partitions, version 11", id, a)
		}
	}
	res, _ = Assign(Group{Members: []Member{{ID: "a", UserData: sub(t, procA, "", nil)}}, Tasks: tasks, Stateful: stateful,
		MissingSourceTopics: []string{"in"}, Config: defaultConfig(0)})
	if res.Assignments["a"].Info.ErrorCode != ErrorIncompleteSourceTopicMetadata {
		t.Errorf("missing source topic: %+v", res.Assignments["a"])
	}
	// A member whose user data cannot be read gets ASSIGNMENT_ERROR; the partitions it owns
	// go to nobody else this time.
	res, _ = Assign(Group{
		Members: []Member{
			{ID: "a", UserData: sub(t, procA, "", nil)},
			{ID: "junk", Owned: []kafka.TopicPartition{tp("in", 0), tp("in", 1)}, UserData: []byte(`{"v":1,"pid":"x"}`)},
			{ID: "broken", Err: errors.New("bad consumer protocol")},
		},
		Tasks: tasks, Stateful: stateful, EndOffsetSums: endSums(0), Config: defaultConfig(0)})
	if len(res.Unreadable) != 2 || res.Assignments["junk"].Info.ErrorCode != ErrorAssignmentError ||
		res.Assignments["broken"].Info.ErrorCode != ErrorAssignmentError {
		t.Errorf("unreadable members: %+v / %+v", res.Unreadable, res.Assignments)
	}
	a := res.Assignments["a"]
	if slices.Contains(a.Partitions, tp("in", 0)) || !slices.Contains(a.Withheld, TaskID{0, 0, ""}) {
		t.Errorf("a got %v (withheld %v): in-0 is still owned by the unreadable member", a.Partitions, a.Withheld)
	}
}

// Without end offsets the previous assignment is kept and a probing rebalance asked for.
func TestAssignFallback(t *testing.T) {
	tasks, stateful := wordCount()
	running := map[TaskID]int64{{1, 0, ""}: OffsetSumRunning, {1, 1, ""}: OffsetSumRunning}
	res, err := Assign(Group{
		Members: []Member{
			{ID: "a-1", Owned: []kafka.TopicPartition{tp("in", 0), tp("in", 1), tp("rep", 0), tp("rep", 1)}, UserData: sub(t, procA, "", running)},
			{ID: "b-1", UserData: sub(t, procB, "", nil)},
		},
		Tasks: tasks, Stateful: stateful, EndOffsetSums: func() (map[TaskID]int64, error) { return nil, errors.New("broker down") },
		Leader: procB, NowMs: 5, Config: defaultConfig(0),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Fallback == nil || !res.ProbingRebalance {
		t.Fatalf("fallback %v, probing %v", res.Fallback, res.ProbingRebalance)
	}
	if want := []TaskID{{0, 0, ""}, {0, 1, ""}, {1, 0, ""}, {1, 1, ""}}; !reflect.DeepEqual(res.Assignments["a-1"].Info.ActiveTasks, want) {
		t.Errorf("a-1 %v, want its previous tasks %v", res.Assignments["a-1"].Info.ActiveTasks, want)
	}
	if got := res.Assignments["b-1"].Info.NextRebalanceMs; got != 5+DefaultProbingRebalanceInterval.Milliseconds() {
		t.Errorf("b-1 (the leader) next rebalance %d", got)
	}
}
