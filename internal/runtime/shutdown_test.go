package runtime

import (
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
)

// A member announcing SHUTDOWN_REQUESTED (Java's AssignorError code 4) in its subscription makes
// the leader give every member no partitions and the error code 4, as Java's
// StreamsPartitionAssignor does.
func TestAssignorShutdownRequested(t *testing.T) {
	code0, code4 := new(atomic.Int32), new(atomic.Int32)
	code4.Store(4)
	subs := []subtopologySources{{ID: 0, Topics: []string{"in"}}}
	requester := testAssignor(t, subs, pidB, "p2:80", nil)
	requester.errCode = code4
	other := testAssignor(t, subs, pidA, "p1:80", nil)
	other.errCode = code0
	ud := func(a *assignor) []byte {
		b, _, err := a.Subscription([]string{"in"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if s, _ := assignment.DecodeSubscription(ud(other)); s.ErrorCode != 0 {
		t.Errorf("subscription without a request carries error code %d", s.ErrorCode)
	}
	reqUD := ud(requester)
	if s, err := assignment.DecodeSubscription(reqUD); err != nil || s.ErrorCode != 4 {
		t.Fatalf("requester's subscription: error code %d (%v), want 4", s.ErrorCode, err)
	}
	parts := map[string]int32{"in": 4}
	// Without the request the plan assigns all four tasks.
	plan, err := other.Assign([]group.Subscription{{MemberID: "m1", UserData: ud(other)}, {MemberID: "m2", UserData: ud(other)}}, parts)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(plan["m1"].Partitions) + len(plan["m2"].Partitions); n != 4 {
		t.Fatalf("normal plan assigns %d partitions, want 4: %v", n, plan)
	}
	// With it, everybody (the requester included, and a member of the requesting process
	// whose own subscription lacks the code) gets nothing and the code.
	third := testAssignor(t, subs, pidB, "p2:80", nil)
	plan, err = other.Assign([]group.Subscription{{MemberID: "m1", UserData: ud(other)}, {MemberID: "m2", UserData: reqUD},
		{MemberID: "m3", UserData: ud(third), Owned: []kafka.TopicPartition{tpOf("in", 1)}}}, parts)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 3 {
		t.Fatalf("plan has %d members, want 3 (every member needs its error assignment): %v", len(plan), plan)
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if len(plan[id].Partitions) != 0 {
			t.Errorf("%s: partitions %v, want none", id, plan[id].Partitions)
		}
		info, err := assignment.DecodeAssignment(plan[id].UserData)
		if err != nil || info.ErrorCode != 4 || len(info.ActiveTasks) != 0 || len(info.StandbyTasks) != 0 || len(info.PartitionsByHost) != 0 {
			t.Errorf("%s: assignment %+v (%v), want error code 4 and no tasks", id, info, err)
		}
	}
	// Members told so: their next subscription carries the code too (the instance's shared
	// code), so the request survives the next rebalance.
	r := &Runtime{log: slog.New(slog.DiscardHandler)}
	var calls []error
	r.cfg.OnApplicationShutdown = func(err error) { calls = append(calls, err) }
	ta := testAssignor(t, subs, pidA, "", nil)
	ta.errCode = &r.shutdown.code
	m := &membership{rt: r, name: "t-1", log: r.log, assignor: ta}
	if _, err := m.assignor.onAssignment(plan["m1"]); err != nil {
		t.Fatal(err)
	}
	m.checkShutdownAssignment()
	m.checkShutdownAssignment() // a second thread's (or rebalance's) answer: no second call
	if len(calls) != 1 || !errors.Is(calls[0], ErrApplicationShutdown) || !errors.Is(r.Fatal(), ErrApplicationShutdown) {
		t.Fatalf("shutdown callback calls %v, fatal %v; want one call with ErrApplicationShutdown", calls, r.Fatal())
	}
	if s, err := assignment.DecodeSubscription(ud(m.assignor)); err != nil || s.ErrorCode != 4 {
		t.Errorf("subscription after the error assignment: code %d (%v), want 4", s.ErrorCode, err)
	}
}

// A normal assignment (code 0) neither calls the shutdown callback nor sets a code.
func TestAssignorNoShutdownOnNormalAssignment(t *testing.T) {
	r := &Runtime{log: slog.New(slog.DiscardHandler)}
	called := false
	r.cfg.OnApplicationShutdown = func(error) { called = true }
	a := testAssignor(t, []subtopologySources{{ID: 0, Topics: []string{"in"}}}, pidA, "", nil)
	a.errCode = &r.shutdown.code
	m := &membership{rt: r, name: "t-1", log: r.log, assignor: a}
	info := assignment.Assignment{Version: 11, CommonlySupportedVersion: 11, ActiveTasks: []assignment.TaskID{{}}, NextRebalanceMs: assignment.NoRebalance}
	b, _ := info.Encode()
	if _, err := m.assignor.onAssignment(group.Assignment{Partitions: []kafka.TopicPartition{tpOf("in", 0)}, UserData: b}); err != nil {
		t.Fatal(err)
	}
	m.checkShutdownAssignment()
	if called || r.shutdown.code.Load() != 0 {
		t.Fatalf("normal assignment: callback %v, code %d", called, r.shutdown.code.Load())
	}
}

// The requesting instance's threads end their sessions to rejoin with the request, once per
// resend interval each, and stop doing so when the group's answer arrived.
func TestMaybeSendShutdown(t *testing.T) {
	r := &Runtime{log: slog.New(slog.DiscardHandler)}
	ends := map[int]int{}
	mk := func(idx int) func() bool {
		m := &membership{rt: r, idx: idx, log: r.log}
		return func() bool {
			if m.maybeSendShutdown() {
				ends[idx]++
				return true
			}
			return false
		}
	}
	t0, t1 := mk(0), mk(1)
	if t0() || len(ends) != 0 {
		t.Fatal("session ended without a request")
	}
	cause := errors.New("boom")
	r.requestApplicationShutdown(0, cause)
	if !errors.Is(r.Fatal(), cause) {
		t.Errorf("fatal %v, want the handled error", r.Fatal())
	}
	if !t0() || !t1() || ends[0] != 1 || ends[1] != 1 {
		t.Fatalf("each thread must rejoin once: %v", ends)
	}
	if t0() || ends[0] != 1 {
		t.Fatalf("rejoined again within %v: %v", shutdownResendInterval, ends)
	}
	r.shutdown.mu.Lock()
	r.shutdown.sent[1] = r.shutdown.sent[1].Add(-shutdownResendInterval)
	r.shutdown.mu.Unlock()
	if !t1() || ends[1] != 2 {
		t.Fatalf("no resend after %v: %v", shutdownResendInterval, ends)
	}
	r.shutdown.received.Store(true)
	r.shutdown.mu.Lock()
	r.shutdown.sent[0] = r.shutdown.sent[0].Add(-shutdownResendInterval)
	r.shutdown.mu.Unlock()
	if t0() || ends[0] != 1 {
		t.Fatalf("rejoined after the answer arrived: %v", ends)
	}
}
