package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
)

// testMembership returns a membership without member whose runtime's topology reads topic "in"
// in sub-topology 0.
func testMembership(t *testing.T) *membership {
	t.Helper()
	r := &Runtime{log: slog.New(slog.DiscardHandler), subOf: map[string]int{"in": 0}}
	a := testAssignor(t, []subtopologySources{{ID: 0, Topics: []string{"in"}}}, pidA, "", nil)
	a.errCode = &r.shutdown.code
	return &membership{rt: r, name: "t-1", log: r.log, assignor: a, needJoin: true}
}

// joinedWith is generation gen whose assignment gives task 0_0 with partitions tps and the
// leader's error code.
func joinedWith(t *testing.T, gen int32, code int32, tps ...kafka.TopicPartition) group.Joined {
	t.Helper()
	info := assignment.Assignment{Version: 11, CommonlySupportedVersion: 11, ErrorCode: code, NextRebalanceMs: assignment.NoRebalance}
	if code == assignment.ErrorNone {
		info.ActiveTasks = []assignment.TaskID{{}}
	}
	b, err := info.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return group.Joined{Generation: gen, LeaderID: "leader", Assignment: group.Assignment{Partitions: tps, UserData: b}}
}

// assignmentOf records the generation, clears the rejoin due and pairs the partitions with
// their tasks; an assignment pairing a partition with another task, or the leader's error
// code for missing source topics, is refused with the error the thread fails with.
func TestMembershipAssignmentOf(t *testing.T) {
	m := testMembership(t)
	got, err := m.assignmentOf(joinedWith(t, 3, assignment.ErrorNone, tpOf("in", 0)))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.active) != "map[0_0:[in-0]]" || len(got.standby) != 0 || m.needJoin || m.joined.Generation != 3 {
		t.Fatalf("active %v standby %v needJoin %v generation %d; want 0_0 on in-0, no rejoin due, generation 3",
			got.active, got.standby, m.needJoin, m.joined.Generation)
	}

	m = testMembership(t)
	_, err = m.assignmentOf(joinedWith(t, 4, assignment.ErrorNone, tpOf("in", 1)))
	if !errors.Is(err, ErrAssignment) || !strings.Contains(err.Error(), "generation 4 from leader leader") {
		t.Fatalf("partition in-1 for task 0_0: %v, want ErrAssignment naming generation and leader", err)
	}

	m = testMembership(t)
	_, err = m.assignmentOf(joinedWith(t, 5, assignment.ErrorIncompleteSourceTopicMetadata))
	if !errors.Is(err, ErrMissingSourceTopics) || m.joined.Generation != 5 {
		t.Fatalf("INCOMPLETE_SOURCE_TOPIC_METADATA: %v (generation %d), want ErrMissingSourceTopics", err, m.joined.Generation)
	}

	m = testMembership(t)
	_, err = m.assignmentOf(joinedWith(t, 6, assignment.ErrorAssignmentError))
	if !errors.Is(err, ErrAssignment) || !strings.Contains(err.Error(), "ASSIGNMENT_ERROR") {
		t.Fatalf("ASSIGNMENT_ERROR: %v, want ErrAssignment naming the code", err)
	}
}

// Only a classic member standing in a generation rejoins beside the processing, and only when
// the group rebalances, a follow-up is due or partitions changed; a lost generation, the first
// join and the streams protocol rejoin with the processing stopped.
func TestMembershipJoinsInBackground(t *testing.T) {
	classic := &membership{classic: new(group.Member), joined: group.Joined{Generation: 2}}
	for _, c := range []struct {
		why  error
		want bool
	}{
		{fmt.Errorf("heartbeat: %w", group.ErrRebalanceInProgress), true},
		{group.ErrRejoinRequested, true},
		{group.ErrPartitionsChanged, true},
		{group.ErrPollTimeout, false},
		{group.ErrMemberLost, false},
		{errShutdownRequest, false},
	} {
		if got := classic.joinsInBackground(c.why); got != c.want {
			t.Errorf("generation 2, %v: %v, want %v", c.why, got, c.want)
		}
	}
	first := &membership{classic: new(group.Member)}
	if first.joinsInBackground(group.ErrRebalanceInProgress) {
		t.Error("before the first join: in the background")
	}
	streams := &membership{streams: &streamsMember{}, joined: group.Joined{Generation: 2}}
	if streams.joinsInBackground(group.ErrRebalanceInProgress) {
		t.Error("streams protocol: in the background")
	}
}
