package runtime

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/processor"
)

func member(t *testing.T, pid string, thread int, owned ...string) sarama.ConsumerGroupMemberMetadata {
	b, err := json.Marshal(subscription{Version: 1, ProcessID: pid, Thread: thread, Host: pid + ":80", Owned: owned})
	if err != nil {
		t.Fatal(err)
	}
	return sarama.ConsumerGroupMemberMetadata{UserData: b}
}

func tasksOf(t *testing.T, a *assignor, id string) []string {
	b, err := a.AssignmentData(id, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	var info assignmentInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	return info.Active
}

func TestAssignorCopartitionedAndBalanced(t *testing.T) {
	a := &assignor{subs: []subtopologySources{{ID: 0, Topics: []string{"left", "right"}}, {ID: 1, Topics: []string{"rep"}}}}
	topics := map[string][]int32{"left": {0, 1, 2}, "right": {0, 1, 2}, "rep": {0, 1, 2}}
	plan, err := a.Plan(map[string]sarama.ConsumerGroupMemberMetadata{"m1": member(t, "p1", 0), "m2": member(t, "p2", 0)}, topics)
	if err != nil {
		t.Fatal(err)
	}
	// Co-partitioned topics of one task go to the same member.
	for m, tp := range plan {
		if !slices.Equal(tp["left"], tp["right"]) {
			t.Errorf("%s: left %v right %v", m, tp["left"], tp["right"])
		}
	}
	t1, t2 := tasksOf(t, a, "m1"), tasksOf(t, a, "m2")
	if len(t1)+len(t2) != 6 || len(t1) != 3 || len(t2) != 3 {
		t.Fatalf("unbalanced: %v %v", t1, t2)
	}
	// Sticky: a third member joins; the first two keep what they can (2 each).
	plan, err = a.Plan(map[string]sarama.ConsumerGroupMemberMetadata{
		"m1": member(t, "p1", 0, t1...), "m2": member(t, "p2", 0, t2...), "m3": member(t, "p3", 0)}, topics)
	if err != nil {
		t.Fatal(err)
	}
	n1, n2, n3 := tasksOf(t, a, "m1"), tasksOf(t, a, "m2"), tasksOf(t, a, "m3")
	if len(n1) != 2 || len(n2) != 2 || len(n3) != 2 {
		t.Fatalf("unbalanced after join: %v %v %v", n1, n2, n3)
	}
	for _, id := range n1 {
		if !slices.Contains(t1, id) {
			t.Errorf("m1 moved to %s (had %v)", id, t1)
		}
	}
	for _, id := range n2 {
		if !slices.Contains(t2, id) {
			t.Errorf("m2 moved to %s (had %v)", id, t2)
		}
	}
	if len(plan["m3"]) == 0 {
		t.Fatal("m3 got no partitions")
	}
	// Hosts for interactive queries list every member's tasks.
	b, _ := a.AssignmentData("m1", nil, 1)
	var info assignmentInfo
	_ = json.Unmarshal(b, &info)
	if len(info.Hosts) != 3 || len(info.Hosts["p3:80"]) != 2 {
		t.Fatalf("hosts %v", info.Hosts)
	}
}

func TestParseTaskID(t *testing.T) {
	id, ok := parseTaskID("3_12")
	if !ok || id != (processor.TaskID{Subtopology: 3, Partition: 12}) {
		t.Fatalf("%v %v", id, ok)
	}
	if _, ok := parseTaskID("x"); ok {
		t.Fatal("parsed x")
	}
}

func TestAssignorStandbys(t *testing.T) {
	a := &assignor{subs: []subtopologySources{{ID: 0, Topics: []string{"in"}}}, standbys: 1}
	topics := map[string][]int32{"in": {0, 1, 2, 3}}
	members := map[string]sarama.ConsumerGroupMemberMetadata{
		"a1": member(t, "pA", 0), "a2": member(t, "pA", 1), "b1": member(t, "pB", 0)}
	if _, err := a.Plan(members, topics); err != nil {
		t.Fatal(err)
	}
	process := map[string]string{"a1": "pA", "a2": "pA", "b1": "pB"}
	activeProc, standbyProc := map[string]string{}, map[string]string{}
	for m := range members {
		b, _ := a.AssignmentData(m, nil, 1)
		var info assignmentInfo
		_ = json.Unmarshal(b, &info)
		for _, id := range info.Active {
			activeProc[id] = process[m]
		}
		for _, id := range info.Standby {
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
			t.Errorf("task %s: standby on the active's process %s", id, p)
		}
	}
	// A single process gets no standbys.
	a2 := &assignor{subs: a.subs, standbys: 1}
	if _, err := a2.Plan(map[string]sarama.ConsumerGroupMemberMetadata{"a1": member(t, "pA", 0)}, topics); err != nil {
		t.Fatal(err)
	}
	b, _ := a2.AssignmentData("a1", nil, 1)
	var info assignmentInfo
	_ = json.Unmarshal(b, &info)
	if len(info.Standby) != 0 || len(info.Active) != 4 {
		t.Fatalf("single process: %+v", info)
	}
}
