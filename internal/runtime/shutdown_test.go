package runtime

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/IBM/sarama"
)

// assignmentOf decodes the leader's assignment user data for member id.
func assignmentOf(t *testing.T, a *assignor, id string) (assignmentInfo, string) {
	t.Helper()
	b, err := a.AssignmentData(id, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	var info assignmentInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	return info, string(b)
}

// A member announcing SHUTDOWN_REQUESTED (Java's AssignorError code 4) in its subscription makes
// the leader give every member no partitions and the error code 4, as Java's
// StreamsPartitionAssignor does.
func TestAssignorShutdownRequested(t *testing.T) {
	code0, code4 := new(atomic.Int32), new(atomic.Int32)
	code4.Store(4)
	subs := []subtopologySources{{ID: 0, Topics: []string{"in"}}}
	requester := &assignor{subs: subs, self: subscription{ProcessID: "p2", Thread: 0, Host: "p2:80"}, errCode: code4}
	other := &assignor{subs: subs, self: subscription{ProcessID: "p1", Thread: 0, Host: "p1:80"}, errCode: code0}
	ud := func(a *assignor) []byte {
		b, err := a.SubscriptionUserData([]string{"in"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if s := string(ud(other)); strings.Contains(s, `"err"`) {
		t.Errorf("subscription without a request carries an error code: %s", s)
	}
	reqUD := ud(requester)
	var sub subscription
	if err := json.Unmarshal(reqUD, &sub); err != nil || sub.ErrorCode != 4 || !strings.Contains(string(reqUD), `"err":4`) {
		t.Fatalf("requester's subscription %s (%v): error code %d, want 4", reqUD, err, sub.ErrorCode)
	}
	topics := map[string][]int32{"in": {0, 1, 2, 3}}
	// Without the request the plan assigns all four tasks.
	leader := &assignor{subs: subs}
	plan, err := leader.Plan(map[string]sarama.ConsumerGroupMemberMetadata{
		"m1": {UserData: ud(other)}, "m2": member(t, "p2", 0)}, topics)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(plan["m1"]["in"]) + len(plan["m2"]["in"]); n != 4 {
		t.Fatalf("normal plan assigns %d partitions, want 4: %v", n, plan)
	}
	// With it, everybody (the requester included, and a member of the requesting process
	// whose own subscription lacks the code) gets nothing and the code.
	plan, err = leader.Plan(map[string]sarama.ConsumerGroupMemberMetadata{
		"m1": {UserData: ud(other)}, "m2": {UserData: reqUD}, "m3": member(t, "p2", 1, "0_1")}, topics)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 3 {
		t.Fatalf("plan has %d members, want 3 (every member needs its error assignment): %v", len(plan), plan)
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if tps, ok := plan[id]; !ok || len(tps) != 0 {
			t.Errorf("%s: partitions %v, want none", id, tps)
		}
		info, raw := assignmentOf(t, leader, id)
		if info.ErrorCode != 4 || len(info.Active) != 0 || len(info.Standby) != 0 || len(info.Hosts) != 0 {
			t.Errorf("%s: assignment %s, want error code 4 and no tasks", id, raw)
		}
	}
	// Members told so: their next subscription carries the code too (the instance's shared
	// code), so the request survives the next rebalance.
	r := &Runtime{log: slog.New(slog.DiscardHandler)}
	var calls []error
	r.cfg.OnApplicationShutdown = func(err error) { calls = append(calls, err) }
	th := &thread{rt: r, name: "t-1", log: r.log, assignor: &assignor{subs: subs, self: subscription{ProcessID: "p1"}, errCode: &r.shutdown.code}}
	b, _ := leader.AssignmentData("m1", nil, 1)
	th.assignor.OnAssignment(&sarama.ConsumerGroupMemberAssignment{UserData: b}, 1)
	th.checkShutdownAssignment()
	th.checkShutdownAssignment() // a second thread's (or rebalance's) answer: no second call
	if len(calls) != 1 || !errors.Is(calls[0], ErrApplicationShutdown) || !errors.Is(r.Fatal(), ErrApplicationShutdown) {
		t.Fatalf("shutdown callback calls %v, fatal %v; want one call with ErrApplicationShutdown", calls, r.Fatal())
	}
	if err := json.Unmarshal(ud(th.assignor), &sub); err != nil || sub.ErrorCode != 4 {
		t.Errorf("subscription after the error assignment: code %d (%v), want 4", sub.ErrorCode, err)
	}
}

// A normal assignment (code 0) neither calls the shutdown callback nor sets a code.
func TestAssignorNoShutdownOnNormalAssignment(t *testing.T) {
	r := &Runtime{log: slog.New(slog.DiscardHandler)}
	called := false
	r.cfg.OnApplicationShutdown = func(error) { called = true }
	th := &thread{rt: r, name: "t-1", log: r.log, assignor: &assignor{errCode: &r.shutdown.code}}
	b, _ := json.Marshal(assignmentInfo{Version: 1, Active: []string{"0_0"}})
	th.assignor.OnAssignment(&sarama.ConsumerGroupMemberAssignment{UserData: b}, 1)
	th.checkShutdownAssignment()
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
		th := &thread{rt: r, idx: idx, log: r.log}
		return func() bool {
			if th.maybeSendShutdown() {
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
