package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/processor"
)

// Work sized to the deadlines. A stream thread processes its tasks in passes between two polls
// of its group member (runOnce's loop). A pass processes up to pace.perTask records of each
// task and ends early, between two records, when
//
//   - half of max.poll.interval.ms has passed since the member's last poll, or the commit is
//     due (commit.interval.ms since the last one): the loop then polls and commits in time;
//   - the runtime stops (Close waits for one record, not for a pass).
//
// perTask adapts as Java's numIterations does: it starts at 1, grows by one after a pass that
// processed records without reaching a deadline, and halves after a pass that reached the poll
// deadline or that was followed by a commit or a punctuation. So a pass of slow records (a
// call to a slow service per record) stays short, while fast records are processed in long
// passes. The executor processing a task holds the task's lock (turnLock) for its share of the
// pass but hands it to a waiting interactive query between two records, so a query waits for at
// most one record.
// Java: StreamThread.runOnceWithoutProcessingThreads and TaskExecutor.process.

// pace is a stream thread's pass sizing and deadline state; used by the thread's goroutine only,
// except stop (set by a timer and by the runtime's context).
type pace struct {
	// perTask is the most records a pass processes per task (Java: numIterations).
	perTask int
	// stop is set when the pass should end after the current record: its deadline passed or
	// the runtime stops.
	stop atomic.Bool
	// deadline is the current pass's deadline (unix ns); timer sets stop at it.
	deadline atomic.Int64
	timer    *time.Timer
	// start is the first task of the next pass (the order rotates, so that passes cut short by
	// a deadline do not favour one task).
	start int
	ids   []processor.TaskID
	// lastPoll is when the thread last polled its member; pollDeadline tells that the last pass
	// ended at half of max.poll.interval.ms since then; punctuated that a punctuator ran since
	// the last adapt.
	lastPoll     time.Time
	pollDeadline bool
	punctuated   atomic.Bool
	// last describes the thread's last pass and commit, for the warning of an expulsion.
	lastRecords int
	lastPass    time.Duration
	lastCommit  time.Duration
}

// maxPollInterval is the thread's max.poll.interval.ms.
func (th *thread) maxPollInterval() time.Duration {
	if d := th.rt.cfg.Group.RebalanceTimeout; d > 0 {
		return d
	}
	return group.DefaultRebalanceTimeout
}

// beginPass arms the pass's deadline: half of max.poll.interval.ms after the last poll, or the
// commit's due time when that comes first.
func (th *thread) beginPass() {
	p := &th.pace
	if p.timer == nil {
		p.perTask = max(p.perTask, 1)
		p.timer = time.AfterFunc(time.Hour, func() {
			if time.Now().UnixNano() >= p.deadline.Load() {
				p.stop.Store(true)
			}
		})
		context.AfterFunc(th.ctx, func() { p.stop.Store(true) })
	}
	deadline := p.lastPoll.Add(th.maxPollInterval() / 2)
	if c := th.lastCommit.Add(th.rt.cfg.CommitInterval); c.Before(deadline) {
		deadline = c
	}
	p.deadline.Store(deadline.UnixNano())
	p.stop.Store(th.ctx.Err() != nil)
	if wait := time.Until(deadline); wait > 0 {
		p.timer.Reset(wait)
	} else {
		p.stop.Store(true)
	}
}

// endPass disarms the deadline and notes whether the pass reached the poll deadline.
func (th *thread) endPass(records int, took time.Duration) {
	p := &th.pace
	p.timer.Stop()
	p.lastRecords, p.lastPass = records, took
	if time.Since(p.lastPoll) >= th.maxPollInterval()/2 {
		p.pollDeadline = true
	}
}

// passOrder returns the thread's active task ids in the order of this pass: sorted, starting
// one further each pass.
func (th *thread) passOrder() []processor.TaskID {
	p := &th.pace
	p.ids = p.ids[:0]
	for id := range th.tm.tasks {
		p.ids = append(p.ids, id)
	}
	if len(p.ids) < 2 {
		return p.ids
	}
	sortTasks(p.ids)
	p.start = (p.start + 1) % len(p.ids)
	// Rotate by start in place.
	slices.Reverse(p.ids[:p.start])
	slices.Reverse(p.ids[p.start:])
	slices.Reverse(p.ids)
	return p.ids
}

// adaptPace sizes the next pass from what this loop iteration did (Java: the numIterations
// rule of runOnce): unchanged when nothing was processed; halved when the pass reached the poll
// deadline, or a commit or punctuation followed; else one more.
func (th *thread) adaptPace(processed int, committed bool) {
	p := &th.pace
	switch {
	case processed == 0:
	case p.pollDeadline || committed || p.punctuated.Load():
		p.perTask = max(p.perTask/2, 1)
	default:
		p.perTask++
	}
	p.pollDeadline = false
	p.punctuated.Store(false)
}

// polled records a poll of the group member; it returns the time since the previous one.
func (th *thread) polled() time.Duration {
	now := time.Now()
	gap := now.Sub(th.pace.lastPoll)
	th.pace.lastPoll = now
	th.membership.poll()
	return gap
}

// noteExpelled warns when the member left (or lost) the group because the thread did not poll
// within max.poll.interval.ms, with what took the time, and counts it in
// kstreams_poll_timeouts_total. gap is the time between the last two polls.
func (th *thread) noteExpelled(why error, gap time.Duration) {
	if !errors.Is(why, group.ErrPollTimeout) {
		return
	}
	p := &th.pace
	th.log.Warn("stream thread expelled from the group: it did not poll within max.poll.interval.ms; "+
		"its tasks are closed without commit and it rejoins (a single record, punctuation or commit took too long, "+
		"or max.poll.interval.ms is too small for this application)",
		"since_last_poll", gap.Round(time.Millisecond), "max.poll.interval.ms", th.maxPollInterval().Milliseconds(),
		"last_pass", p.lastPass.Round(time.Millisecond), "last_pass_records", p.lastRecords,
		"last_commit", p.lastCommit.Round(time.Millisecond), "cause", why)
	if m := th.rt.cfg.Metrics; m != nil {
		m.pollTimeouts.WithLabelValues(th.name).Inc()
	}
}

// noteExpelledOnError is noteExpelled for a failure of the thread's loop (a commit refused
// because the member left the group for a poll timeout): the member tells why it left.
func (th *thread) noteExpelledOnError(err error) {
	why := err
	if !errors.Is(why, group.ErrPollTimeout) && th.membership != nil {
		why = th.membership.rejoinNeeded()
	}
	if why != nil {
		th.noteExpelled(why, time.Since(th.pace.lastPoll))
	}
}

// turnLock is a mutex whose owner (a task executor processing the task) hands it, between two
// records, to the goroutines (interactive queries) that announced themselves before they waited
// for it: each announces itself (lockShared) before it waits, and the owner, between records
// (yield), releases the lock until every goroutine announced at that moment has had it. Later
// arrivals wait for the next record boundary, so a stream of queries cannot starve the owner.
type turnLock struct {
	mu       sync.Mutex
	arrived  atomic.Uint64
	acquired atomic.Uint64
	// wake is signalled each time a waiting goroutine acquired the lock.
	wake chan struct{}
}

func newTurnLock() *turnLock { return &turnLock{wake: make(chan struct{}, 1)} }

// lockShared takes the lock for a goroutine other than its owner: the owner gives it up before
// its next record. Release with unlock.
func (l *turnLock) lockShared() {
	l.arrived.Add(1)
	l.mu.Lock()
	l.acquired.Add(1)
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// lock takes the lock for its owner (the executor processing the task).
func (l *turnLock) lock() { l.mu.Lock() }

func (l *turnLock) unlock() { l.mu.Unlock() }

// yield is called by the owner, holding the lock, between two records: when goroutines wait
// for the lock (lockShared), it releases the lock until each of them has had it, then takes
// it again.
func (l *turnLock) yield() {
	target := l.arrived.Load()
	if l.acquired.Load() >= target {
		return
	}
	l.mu.Unlock()
	for l.acquired.Load() < target {
		<-l.wake
	}
	l.mu.Lock()
}

// waiters returns how many goroutines wait for the lock now.
func (l *turnLock) waiters() int { return int(l.arrived.Load() - l.acquired.Load()) }

// StoreLockWaiters returns how many goroutines (interactive queries) wait for a stream thread's
// store lock or a task's lock now, over all threads: for tests that order a query between two
// records.
func (r *Runtime) StoreLockWaiters() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, th := range r.threads {
		n += th.view.waiters()
	}
	return n
}
