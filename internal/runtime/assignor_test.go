package runtime

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/processor"
)

const (
	pidA = "00000000-0000-4000-8000-00000000000a"
	pidB = "00000000-0000-4000-8000-00000000000b"
	pidC = "00000000-0000-4000-8000-00000000000c"
)

func tpOf(t string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: t, Partition: p}
}

// testAssignor returns an initialised assignor of an instance with process id pid.
func testAssignor(t *testing.T, subs []subtopologySources, pid, host string, sums map[processor.TaskID]int64) *assignor {
	t.Helper()
	u, err := assignment.ParseUUID(pid)
	if err != nil {
		t.Fatal(err)
	}
	a := &assignor{subs: subs, processID: u, endpoint: host, inited: true,
		cfg: assignment.Config{AcceptableRecoveryLag: assignment.DefaultAcceptableRecoveryLag, MaxWarmupReplicas: 2,
			ProbingRebalanceInterval: assignment.DefaultProbingRebalanceInterval},
		offsetSums: func() map[processor.TaskID]int64 { return sums },
		endOffsets: func(tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
			out := map[kafka.TopicPartition]int64{}
			for _, tp := range tps {
				out[tp] = 100
			}
			return out, nil
		}}
	return a
}

// joinAll has every assignor subscribe, the leader assign, and every member read its
// assignment; it returns what each received, by member id ("m<i>").
func joinAll(t *testing.T, leader *assignor, members []*assignor, partitions map[string]int32) map[string]received {
	t.Helper()
	var subs []group.Subscription
	for i, a := range members {
		ud, owned, err := a.Subscription(nil)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, group.Subscription{MemberID: "m" + string(rune('0'+i)), Version: 3, UserData: ud, Owned: owned})
	}
	plan, err := leader.Assign(subs, partitions)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]received{}
	for i, a := range members {
		id := "m" + string(rune('0'+i))
		got, err := a.onAssignment(plan[id])
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		out[id] = got
		var tps []kafka.TopicPartition
		for _, ps := range got.active {
			tps = append(tps, ps...)
		}
		a.setOwned(tps)
	}
	return out
}

// The subscription is Java's SubscriptionInfo v11: process id, endpoint, offset sums, error
// code; the owned partitions go beside it.
func TestAssignorSubscription(t *testing.T) {
	code := new(atomic.Int32)
	sums := map[processor.TaskID]int64{{Subtopology: 1, Partition: 0}: assignment.OffsetSumRunning, {Subtopology: 1, Partition: 3}: 77}
	a := testAssignor(t, nil, pidA, "host-a:8080", sums)
	a.errCode = code
	a.tags = map[string]string{"zone": "z1"}
	a.setOwned([]kafka.TopicPartition{tpOf("in", 0)})
	ud, owned, err := a.Subscription(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := assignment.DecodeSubscription(ud)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 11 || s.LatestSupportedVersion != 11 || s.ProcessID.String() != pidA || s.UserEndpoint != "host-a:8080" ||
		s.TaskOffsetSums[assignment.TaskID{Subtopology: 1, Partition: 0}] != assignment.OffsetSumRunning ||
		s.TaskOffsetSums[assignment.TaskID{Subtopology: 1, Partition: 3}] != 77 || s.ErrorCode != 0 || s.ClientTags["zone"] != "z1" {
		t.Errorf("subscription %+v", s)
	}
	if !slices.Equal(owned, []kafka.TopicPartition{tpOf("in", 0)}) {
		t.Errorf("owned %v", owned)
	}
	code.Store(assignorErrorShutdownRequested)
	ud2, _, _ := a.Subscription(nil)
	s2, _ := assignment.DecodeSubscription(ud2)
	if s2.ErrorCode != assignorErrorShutdownRequested || s2.UniqueField == s.UniqueField {
		t.Errorf("second subscription: error %d, unique %d (first %d): want 4 and a new unique field", s2.ErrorCode, s2.UniqueField, s.UniqueField)
	}
}

func TestAssignorCopartitionedAndBalanced(t *testing.T) {
	subs := []subtopologySources{{ID: 0, Topics: []string{"left", "right"}}, {ID: 1, Topics: []string{"rep"}, Changelogs: []string{"app-store-changelog"}}}
	a := testAssignor(t, subs, pidA, "a:80", nil)
	b := testAssignor(t, subs, pidB, "b:80", nil)
	parts := map[string]int32{"left": 3, "right": 3, "rep": 3}
	got := joinAll(t, a, []*assignor{a, b}, parts)
	total := 0
	for m, r := range got {
		total += len(r.active)
		for id, tps := range r.active {
			if id.Subtopology == 0 && (len(tps) != 2 || tps[0].Topic != "left" || tps[1].Topic != "right" || tps[0].Partition != tps[1].Partition) {
				t.Errorf("%s: task %s has partitions %v: co-partitioned topics belong together", m, id, tps)
			}
		}
	}
	if total != 6 || len(got["m0"].active) != 3 || len(got["m1"].active) != 3 {
		t.Fatalf("unbalanced: %v / %v", got["m0"].active, got["m1"].active)
	}
	// Hosts for interactive queries list every instance's tasks.
	if h := got["m0"].hosts; len(h) != 2 || len(h["a:80"]) != 3 || len(h["b:80"]) != 3 {
		t.Fatalf("hosts %v", h)
	}
}

// Stateful tasks stay with the instance that runs them when a new instance without state
// joins: it gets warm-ups (standbys) and the leader's instance a probing rebalance.
func TestAssignorStickyStatefulWithWarmups(t *testing.T) {
	subs := []subtopologySources{{ID: 0, Topics: []string{"rep"}, Changelogs: []string{"app-counts-changelog"}}}
	running := map[processor.TaskID]int64{}
	for p := 0; p < 4; p++ {
		running[processor.TaskID{Subtopology: 0, Partition: p}] = assignment.OffsetSumRunning
	}
	a := testAssignor(t, subs, pidA, "", running)
	a.setOwned([]kafka.TopicPartition{tpOf("rep", 0), tpOf("rep", 1), tpOf("rep", 2), tpOf("rep", 3)})
	b := testAssignor(t, subs, pidB, "", nil)
	a.cfg.AcceptableRecoveryLag = 10 // the end offsets are 100: b is not caught up
	got := joinAll(t, a, []*assignor{a, b}, map[string]int32{"rep": 4})
	if len(got["m0"].active) != 4 || len(got["m1"].active) != 0 {
		t.Fatalf("a %v, b %v: a keeps all four (b has no state)", got["m0"].active, got["m1"].active)
	}
	if len(got["m1"].standby) != 2 {
		t.Errorf("b's warm-ups %v, want 2 (max.warmup.replicas)", got["m1"].standby)
	}
	if n := got["m0"].nextRebalanceMs; n == assignment.NoRebalance || n == 0 {
		t.Errorf("a's next rebalance %d, want a probing time", n)
	}
	// b caught up (its warm-ups at the end): the probing rebalance moves them.
	caught := map[processor.TaskID]int64{}
	for id := range got["m1"].standby {
		caught[id] = 100
	}
	b.offsetSums = func() map[processor.TaskID]int64 { return caught }
	got = joinAll(t, a, []*assignor{a, b}, map[string]int32{"rep": 4})
	// Cooperative: a owns them, so b gets them withheld (standby meanwhile) and a follow-up.
	if len(got["m0"].active) != 2 || got["m1"].nextRebalanceMs != 0 || len(got["m1"].active) != 0 {
		t.Fatalf("after catching up: a %v, b %v (next %d): a gives up two, b waits for the follow-up", got["m0"].active, got["m1"].active, got["m1"].nextRebalanceMs)
	}
	got = joinAll(t, a, []*assignor{a, b}, map[string]int32{"rep": 4})
	if len(got["m0"].active) != 2 || len(got["m1"].active) != 2 {
		t.Fatalf("follow-up: a %v, b %v, want 2 each", got["m0"].active, got["m1"].active)
	}
}

func TestAssignorStandbys(t *testing.T) {
	subs := []subtopologySources{{ID: 0, Topics: []string{"in"}, Changelogs: []string{"app-s-changelog"}}}
	a1, a2, b := testAssignor(t, subs, pidA, "", nil), testAssignor(t, subs, pidA, "", nil), testAssignor(t, subs, pidB, "", nil)
	a1.cfg.NumStandbyReplicas = 1
	got := joinAll(t, a1, []*assignor{a1, a2, b}, map[string]int32{"in": 4})
	process := map[string]string{"m0": pidA, "m1": pidA, "m2": pidB}
	activeProc, standbyProc := map[processor.TaskID]string{}, map[processor.TaskID]string{}
	for m, r := range got {
		for id := range r.active {
			activeProc[id] = process[m]
		}
		for id := range r.standby {
			if standbyProc[id] != "" {
				t.Fatalf("task %s has two standbys", id)
			}
			standbyProc[id] = process[m]
		}
	}
	if len(activeProc) != 4 || len(standbyProc) != 4 {
		t.Fatalf("actives %v standbys %v", activeProc, standbyProc)
	}
	for id, p := range activeProc {
		if standbyProc[id] == p {
			t.Errorf("task %s: standby on the active's instance %s", id, p)
		}
	}
	// A single instance gets no standbys.
	solo := testAssignor(t, subs, pidC, "", nil)
	solo.cfg.NumStandbyReplicas = 1
	got = joinAll(t, solo, []*assignor{solo}, map[string]int32{"in": 4})
	if len(got["m0"].standby) != 0 || len(got["m0"].active) != 4 {
		t.Fatalf("single instance: %+v", got["m0"])
	}
}

// A member whose subscription cannot be read (here: the old JSON user data) is an error in
// the leader's log naming it; it gets ASSIGNMENT_ERROR, which fails its thread.
func TestAssignorUnreadableMember(t *testing.T) {
	subs := []subtopologySources{{ID: 0, Topics: []string{"in"}}}
	var logs bytes.Buffer
	a := testAssignor(t, subs, pidA, "", nil)
	a.log = slog.New(slog.NewTextHandler(&logs, nil))
	ud, _, _ := a.Subscription(nil)
	plan, err := a.Assign([]group.Subscription{
		{MemberID: "good", UserData: ud},
		{MemberID: "json-member", UserData: []byte(`{"v":1,"pid":"p"}`), Owned: []kafka.TopicPartition{tpOf("in", 1)}},
	}, map[string]int32{"in": 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "json-member") || !strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("log does not name the member as an error:\n%s", logs.String())
	}
	bad := testAssignor(t, subs, pidB, "", nil)
	r, err := bad.onAssignment(plan["json-member"])
	if err != nil || r.errorCode != assignment.ErrorAssignmentError || len(r.active) != 0 {
		t.Errorf("unreadable member's assignment: %+v, %v", r, err)
	}
	good, _ := a.onAssignment(plan["good"])
	if _, ok := good.active[processor.TaskID{Partition: 1}]; ok || len(plan["good"].Partitions) != 1 {
		t.Errorf("the good member got %v: in-1 is still owned by the unreadable member", plan["good"].Partitions)
	}
}

// A follower reads Java's assignment: pairs the sorted partitions with the task list,
// refuses what does not pair up or a version above its subscription's, and follows version
// probing.
func TestAssignorOnAssignment(t *testing.T) {
	subs := []subtopologySources{{ID: 0, Topics: []string{"a", "b"}}, {ID: 1, Topics: []string{"c"}}}
	f := testAssignor(t, subs, pidB, "hb:9", nil)
	info := assignment.Assignment{Version: 11, CommonlySupportedVersion: 11,
		ActiveTasks:      []assignment.TaskID{{Subtopology: 0, Partition: 2}, {Subtopology: 0, Partition: 2}, {Subtopology: 1, Partition: 0}},
		StandbyTasks:     map[assignment.TaskID][]kafka.TopicPartition{{Subtopology: 1, Partition: 1}: {tpOf("c", 1)}},
		PartitionsByHost: map[assignment.HostInfo][]kafka.TopicPartition{{Host: "hb", Port: 9}: {tpOf("a", 2), tpOf("b", 2), tpOf("c", 0)}},
		NextRebalanceMs:  assignment.NoRebalance}
	ud, err := info.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// The partitions arrive in any order; they are paired after sorting.
	r, err := f.onAssignment(group.Assignment{Partitions: []kafka.TopicPartition{tpOf("c", 0), tpOf("b", 2), tpOf("a", 2)}, UserData: ud})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.active[processor.TaskID{Subtopology: 0, Partition: 2}]; !slices.Equal(got, []kafka.TopicPartition{tpOf("a", 2), tpOf("b", 2)}) {
		t.Errorf("task 0_2: %v", got)
	}
	if _, ok := r.standby[processor.TaskID{Subtopology: 1, Partition: 1}]; !ok || r.nextRebalanceMs != assignment.NoRebalance || r.why != "" {
		t.Errorf("received %+v", r)
	}
	if h := r.hosts["hb:9"]; len(h) != 2 {
		t.Errorf("hosts %v", r.hosts)
	}
	if _, err := f.onAssignment(group.Assignment{Partitions: []kafka.TopicPartition{tpOf("c", 0)}, UserData: ud}); !errors.Is(err, ErrAssignment) {
		t.Errorf("3 tasks for 1 partition: %v, want ErrAssignment", err)
	}
	if _, err := f.onAssignment(group.Assignment{UserData: []byte("{}")}); !errors.Is(err, ErrAssignment) {
		t.Errorf("JSON user data: %v, want ErrAssignment", err)
	}
	// A v12 assignment is above what this member sent.
	if _, err := f.onAssignment(group.Assignment{UserData: []byte{0, 0, 0, 12, 0, 0, 0, 12}}); !errors.Is(err, ErrAssignment) {
		t.Errorf("version 12: %v, want ErrAssignment", err)
	}
	// Version probing: the leader answers with v9 (commonly supported 10): downgrade to 10
	// and rejoin at once; then a v10 assignment saying 11 is common: upgrade and rejoin.
	old := assignment.Assignment{Version: 9, CommonlySupportedVersion: 10, NextRebalanceMs: assignment.NoRebalance}
	ob, _ := old.Encode()
	r, err = f.onAssignment(group.Assignment{UserData: ob})
	if err != nil || r.nextRebalanceMs != 0 || f.used != 10 || !strings.Contains(r.why, "version probing") {
		t.Fatalf("probing answer: %+v, %v, used %d", r, err, f.used)
	}
	s := f.subscriptionInfo()
	if s.Version != 10 || s.LatestSupportedVersion != 11 {
		t.Errorf("subscription after probing: version %d/%d, want 10/11", s.Version, s.LatestSupportedVersion)
	}
	up := assignment.Assignment{Version: 10, CommonlySupportedVersion: 11, NextRebalanceMs: assignment.NoRebalance}
	ub, _ := up.Encode()
	if r, err = f.onAssignment(group.Assignment{UserData: ub}); err != nil || r.nextRebalanceMs != 0 || f.used != 11 {
		t.Fatalf("upgrade: %+v, %v, used %d", r, err, f.used)
	}
	// Error codes come through without tasks.
	e := assignment.Assignment{Version: 11, CommonlySupportedVersion: 11, ErrorCode: assignment.ErrorIncompleteSourceTopicMetadata, NextRebalanceMs: assignment.NoRebalance}
	eb, _ := e.Encode()
	if r, err = f.onAssignment(group.Assignment{UserData: eb}); err != nil || r.errorCode != assignment.ErrorIncompleteSourceTopicMetadata {
		t.Errorf("error assignment: %+v, %v", r, err)
	}
}

func TestParseTaskID(t *testing.T) {
	id, ok := parseTaskID("3_12")
	if !ok || id != (processor.TaskID{Subtopology: 3, Partition: 12}) {
		t.Fatalf("%v %v", id, ok)
	}
	for _, s := range []string{"x", "1_", "_2", "-1_2", "1_2_3"} {
		if _, ok := parseTaskID(s); ok {
			t.Errorf("parsed %q", s)
		}
	}
}

func TestEndOffsetSums(t *testing.T) {
	subs := []subtopologySources{{ID: 0, Topics: []string{"t"}, Changelogs: []string{"c1", "t"}, SourceChangelogs: []string{"t"}}}
	a := testAssignor(t, subs, pidA, "", nil)
	a.endOffsets = func(tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
		out := map[kafka.TopicPartition]int64{}
		for _, tp := range tps {
			if tp.Topic != "c1" {
				t.Errorf("end offset asked for %s", tp)
			}
			out[tp] = 40
		}
		return out, nil
	}
	a.committed = func(tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
		return map[kafka.TopicPartition]int64{tpOf("t", 0): 2, tpOf("t", 1): -1}, nil
	}
	ids := []processor.TaskID{{Partition: 0}, {Partition: 1}}
	got, err := a.endOffsetSums(ids, map[int]subtopologySources{0: subs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if got[assignment.TaskID{Partition: 0}] != 42 || got[assignment.TaskID{Partition: 1}] != 40 {
		t.Errorf("sums %v, want 0_0: 40+2, 0_1: 40+0 (no commit)", got)
	}
}
