package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

func paceThread(cfg Config) *thread {
	th := &thread{rt: &Runtime{cfg: cfg}, ctx: context.Background(), out: &output{},
		view: newTaskView(), in: &input{parts: map[kafka.TopicPartition]*inputPartition{}}}
	th.tm = &taskManager{rt: th.rt, ctx: th.ctx, out: th.out, view: th.view, in: th.in, tasks: map[processor.TaskID]*task.Task{}}
	return th
}

// waitFor polls cond until it holds or fails the test at the deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
		time.Sleep(time.Millisecond) // polling interval, bounded by the deadline
	}
}

// TestStoreTurnsQueryBetweenRecords: an executor holds its task's lock through a pass of
// records; a query that waits for the lock while record 1 is processed reads before record 2
// starts.
func TestStoreTurnsQueryBetweenRecords(t *testing.T) {
	l := newTurnLock()
	var current atomic.Int64 // the record the thread is in (0: none)
	started := make(chan int64, 10)
	release := make(chan struct{})
	passDone := make(chan struct{})
	go func() { // the stream thread: one pass of three records
		defer close(passDone)
		l.lock()
		defer l.unlock()
		for i := int64(1); i <= 3; i++ {
			l.yield()
			current.Store(i)
			started <- i
			<-release
			current.Store(0)
		}
	}()
	if got := <-started; got != 1 {
		t.Fatalf("first record %d", got)
	}
	seen := make(chan int64, 1)
	go func() { // the interactive query
		l.lockShared()
		seen <- current.Load()
		l.unlock()
	}()
	waitFor(t, "the query waits for the store lock", func() bool { return l.waiters() > 0 })
	release <- struct{}{} // record 1 ends
	if got := <-seen; got != 0 {
		t.Fatalf("the query read while the thread was in record %d", got)
	}
	if got := <-started; got != 2 {
		t.Fatalf("record %d after the query, want 2", got)
	}
	release <- struct{}{}
	<-started
	release <- struct{}{}
	<-passDone
	if l.waiters() > 0 {
		t.Fatal("a query still counted as waiting")
	}
}

// TestStoreTurnsNoStarvation: queries that never stop do not keep the thread from processing:
// it waits, between records, only for the queries that waited when the record ended.
func TestStoreTurnsNoStarvation(t *testing.T) {
	l := newTurnLock()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				l.lockShared()
				reads.Add(1)
				l.unlock()
			}
		}()
	}
	waitFor(t, "queries running", func() bool { return reads.Load() > 0 })
	l.lock()
	for range 1000 {
		l.yield()
	}
	l.unlock()
	close(stop)
	wg.Wait()
}

// TestPassOrderRotates: every pass starts one task further, in task order.
func TestPassOrderRotates(t *testing.T) {
	th := paceThread(Config{})
	ids := []processor.TaskID{{Subtopology: 0, Partition: 0}, {Subtopology: 0, Partition: 1}, {Subtopology: 1, Partition: 0}}
	for _, id := range ids {
		th.tm.tasks[id] = nil
	}
	var firsts []processor.TaskID
	for range 4 {
		order := slices.Clone(th.passOrder())
		if len(order) != 3 {
			t.Fatalf("order %v", order)
		}
		firsts = append(firsts, order[0])
		// The order is the task order, rotated.
		i := slices.Index(ids, order[0])
		for k := range order {
			if order[k] != ids[(i+k)%3] {
				t.Fatalf("order %v is no rotation of %v", order, ids)
			}
		}
	}
	if want := []processor.TaskID{ids[1], ids[2], ids[0], ids[1]}; !slices.Equal(firsts, want) {
		t.Fatalf("first tasks %v, want %v", firsts, want)
	}
}

// TestAdaptPace follows Java's numIterations rule: starts at 1, +1 after a pass that processed
// without reaching a deadline, halved after a commit, a punctuation or the poll deadline,
// unchanged after a pass that processed nothing; never below 1.
func TestAdaptPace(t *testing.T) {
	th := paceThread(Config{})
	th.pace.perTask = 1
	steps := []struct {
		processed            int
		committed, punct, pd bool
		want                 int
	}{
		{1, false, false, false, 2},
		{2, false, false, false, 3},
		{3, false, false, false, 4},
		{0, false, false, false, 4},
		{0, true, false, false, 4}, // nothing processed: unchanged, even after a commit
		{4, true, false, false, 2},
		{2, false, false, false, 3},
		{3, false, true, false, 1},
		{1, false, false, true, 1},
		{1, false, false, false, 2},
		{2, false, false, true, 1},
	}
	for i, s := range steps {
		th.pace.pollDeadline = s.pd
		th.pace.punctuated.Store(s.punct)
		th.adaptPace(s.processed, s.committed)
		if th.pace.perTask != s.want {
			t.Fatalf("step %d %+v: perTask %d, want %d", i, s, th.pace.perTask, s.want)
		}
		if th.pace.punctuated.Load() || th.pace.pollDeadline {
			t.Fatalf("step %d: flags not reset", i)
		}
	}
}

// TestPassDeadline: a pass's stop flag is set by the commit's due time, by half of
// max.poll.interval.ms since the last poll, and by the runtime's stop; a fresh pass with time
// left starts without it.
func TestPassDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	th := paceThread(Config{CommitInterval: time.Hour})
	th.rt.cfg.Group.RebalanceTimeout = time.Hour
	th.ctx = ctx
	th.lastCommit, th.pace.lastPoll = time.Now(), time.Now()

	th.beginPass()
	if th.pace.stop.Load() {
		t.Fatal("stop set with an hour left")
	}
	th.endPass(0, 0)
	if th.pace.pollDeadline {
		t.Fatal("poll deadline reached with half an hour left")
	}

	th.lastCommit = time.Now().Add(-2 * time.Hour) // the commit is due
	th.beginPass()
	if !th.pace.stop.Load() {
		t.Fatal("stop not set when the commit is due")
	}
	th.endPass(0, 0)

	th.lastCommit = time.Now()
	th.pace.lastPoll = time.Now().Add(-31 * time.Minute) // past half of max.poll.interval.ms
	th.beginPass()
	if !th.pace.stop.Load() {
		t.Fatal("stop not set past half of max.poll.interval.ms")
	}
	th.endPass(3, time.Second)
	if !th.pace.pollDeadline || th.pace.lastRecords != 3 {
		t.Fatalf("pass end: pollDeadline %v, records %d", th.pace.pollDeadline, th.pace.lastRecords)
	}
	th.adaptPace(3, false)

	// The deadline comes during the pass (the timer sets stop).
	th.rt.cfg.CommitInterval = 20 * time.Millisecond
	th.lastCommit, th.pace.lastPoll = time.Now(), time.Now()
	th.beginPass()
	waitFor(t, "the timer sets stop at the commit's due time", func() bool { return th.pace.stop.Load() })
	th.endPass(0, 0)

	// The runtime stops during a pass.
	th.rt.cfg.CommitInterval = time.Hour
	th.lastCommit = time.Now()
	th.beginPass()
	if th.pace.stop.Load() {
		t.Fatal("stop set with an hour left")
	}
	cancel()
	waitFor(t, "the runtime's stop sets stop", func() bool { return th.pace.stop.Load() })
	th.endPass(0, 0)
	th.beginPass()
	if !th.pace.stop.Load() {
		t.Fatal("a pass begun after the stop runs without the stop flag")
	}
	th.endPass(0, 0)
}

// TestNoteExpelled: a poll timeout is warned with what took the time and counted; other
// reasons to rejoin are not.
func TestNoteExpelled(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "app")
	if err != nil {
		t.Fatal(err)
	}
	expulsions := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, mf := range mfs {
			if mf.GetName() == "kstreams_poll_timeouts_total" {
				for _, m := range mf.GetMetric() {
					sum += m.GetCounter().GetValue()
				}
			}
		}
		return sum
	}
	var logged strings.Builder
	th := paceThread(Config{Metrics: m})
	th.rt.cfg.Group.RebalanceTimeout = 10 * time.Second
	th.name = "t1"
	th.log = slog.New(slog.NewTextHandler(&logged, nil))
	th.pace.lastRecords, th.pace.lastPass = 60, 12*time.Second
	th.noteExpelled(fmt.Errorf("group %q: generation 1: %w", "g", group.ErrRebalanceInProgress), time.Second)
	if logged.Len() != 0 || expulsions() != 0 {
		t.Fatalf("a rebalance counted as expulsion: %s", logged.String())
	}
	th.noteExpelled(fmt.Errorf("group %q: generation 1: %w", "g", group.ErrPollTimeout), 12500*time.Millisecond)
	out := logged.String()
	for _, want := range []string{"level=WARN", "stream thread expelled from the group", "since_last_poll=12.5s",
		"max.poll.interval.ms=10000", "last_pass=12s", "last_pass_records=60"} {
		if !strings.Contains(out, want) {
			t.Errorf("warning %q lacks %q", out, want)
		}
	}
	if got := expulsions(); got != 1 {
		t.Fatalf("kstreams_poll_timeouts_total %v, want 1", got)
	}
}
