package task

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/processor"
)

// Async steps (processor.NewAsyncFixedKeySupplier, kstream's MapValuesAsync) call outside
// services without holding up the task. The task's goroutine admits each record reaching the
// step (asyncStep.admit), starts its call when its turn comes (AsyncPerKey: every earlier
// record of its key is applied; AsyncPerPartition: at once) and a free slot is there, and
// applies completed calls (ApplyAsync): the step's Complete runs with the record's own context
// and forwards downstream, on the task's goroutine, in per-key (or arrival) order. Calls run on
// goroutines of their own and hand their results back through the task's completion list.
//
// The runtime sees HasAsyncCompletions (work to do), ApplyAsync (also run by Process),
// AsyncPending (the commit barrier under exactly-once and a clean close apply completions until
// nothing is pending, so committed offsets, outputs and store writes agree; DrainAsync does
// that for one task), AsyncCommitBound (at-least-once commits no offset past a record still
// held), and Close, which cancels what is in flight. While a step holds too much
// (AsyncIntakePaused) Process takes no input.

// asyncState is a task's async machinery.
type asyncState struct {
	steps []*asyncStep
	// local are entries completed on the task's goroutine (no call, or Start failed), waiting
	// for ApplyAsync.
	local []*asyncEntry
	// running holds the entries whose call runs (task goroutine only), for cancellation.
	running map[*asyncEntry]struct{}

	mu     sync.Mutex
	done   []*asyncEntry // completed calls, appended by the call goroutines
	closed bool          // under mu: completions of a closed task are dropped
	ndone  atomic.Int32
	wake   chan struct{} // one token: a completion arrived (DrainAsync waits on it)

	// pausedSince is when intake was last seen paused (zero: open); paused the total.
	pausedSince time.Time
	paused      time.Duration
}

// asyncStep is one async node of the task.
type asyncStep struct {
	t    *Task
	n    *node
	opts processor.AsyncOptions
	// keys: AsyncPerKey, the admitted, unapplied entries of each key, oldest first (the head's
	// call runs, or waits for a slot, or is done).
	keys map[any]*asyncKey
	// order: AsyncPerPartition, every admitted, unapplied entry in arrival order.
	order []*asyncEntry
	// ready are entries whose turn came, waiting for a slot, oldest first.
	ready   []*asyncEntry
	running int
	// pending counts admitted, unapplied entries; overKeys the keys whose waiting entries
	// reached MaxQueuedPerKey.
	pending, overKeys int
	// calls, failures count finished calls; latency sums their durations.
	calls, failures int64
}

type asyncKey struct{ q []*asyncEntry }

// asyncEntry is one record admitted to a step.
type asyncEntry struct {
	step     *asyncStep
	key      any
	rc       recordContext
	rec      processor.Record[any, any]
	start    func() (func(context.Context) (any, error), error)
	complete func(any) error

	started bool
	cancel  context.CancelFunc
	begin   time.Time
	took    time.Duration
	// res and err are written by the call goroutine before it hands the entry over (under
	// asyncState.mu), or on the task's goroutine.
	res  any
	err  error
	done bool
}

// AsyncStep implements the engine side of async steps (the processor package's asyncEngine,
// also used by kstream's MapValuesAsync): it registers an async step at this node and returns
// its submit function. Errors: an unknown ordering.
func (c *nodeContext) AsyncStep(opts processor.AsyncOptions) (func(key any, rec processor.Record[any, any],
	start func() (func(context.Context) (any, error), error), complete func(any) error) error, error) {
	opts, err := normalizeAsync(opts)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", c.n.spec.Name, err)
	}
	t := c.n.task
	if t.async.wake == nil {
		t.async.wake = make(chan struct{}, 1)
		t.async.running = map[*asyncEntry]struct{}{}
	}
	s := &asyncStep{t: t, n: c.n, opts: opts, keys: map[any]*asyncKey{}}
	t.async.steps = append(t.async.steps, s)
	return s.admit, nil
}

// normalizeAsync fills in the defaults of o: MaxInFlight 32, MaxQueuedPerKey 16, Timeout 30 s
// (negative: none, kept as 0).
func normalizeAsync(o processor.AsyncOptions) (processor.AsyncOptions, error) {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 32
	}
	if o.MaxQueuedPerKey <= 0 {
		o.MaxQueuedPerKey = 16
	}
	switch {
	case o.Timeout == 0:
		o.Timeout = 30 * time.Second
	case o.Timeout < 0:
		o.Timeout = 0
	}
	if o.Ordering != processor.AsyncPerKey && o.Ordering != processor.AsyncPerPartition {
		return o, fmt.Errorf("async step: unknown ordering %d", o.Ordering)
	}
	return o, nil
}

// orderingKey maps a record key to a map key: itself when comparable, a []byte's bytes as a
// string, else its printed form.
func orderingKey(k any) any {
	switch v := k.(type) {
	case nil:
		return nil
	case []byte:
		return string(v)
	case string, int64, int32, int, uint64:
		return v
	}
	if reflect.ValueOf(k).Comparable() {
		return k
	}
	return fmt.Sprintf("%T\x00%v", k, k)
}

// admit takes a record reaching the step (on the task's goroutine, in the step's Process).
func (s *asyncStep) admit(key any, rec processor.Record[any, any], start func() (func(context.Context) (any, error), error),
	complete func(any) error) error {
	t := s.t
	e := &asyncEntry{step: s, key: orderingKey(key), rc: t.rc, rec: rec, start: start, complete: complete}
	s.pending++
	if s.opts.Ordering == processor.AsyncPerPartition {
		s.order = append(s.order, e)
		s.ready = append(s.ready, e)
	} else {
		kq := s.keys[e.key]
		if kq == nil {
			kq = &asyncKey{}
			s.keys[e.key] = kq
		}
		kq.q = append(kq.q, e)
		if len(kq.q) == 1 {
			s.ready = append(s.ready, e)
		} else if len(kq.q)-1 == s.opts.MaxQueuedPerKey {
			s.overKeys++
		}
	}
	s.pump()
	return nil
}

// pump starts ready entries while slots are free.
func (s *asyncStep) pump() {
	for s.running < s.opts.MaxInFlight && len(s.ready) > 0 {
		e := s.ready[0]
		s.ready[0] = nil
		s.ready = s.ready[1:]
		s.begin(e)
	}
}

// begin runs e's Start on the task's goroutine (with e's record context) and launches its
// call; an entry without a call (or whose Start failed) is done at once.
func (s *asyncStep) begin(e *asyncEntry) {
	t := s.t
	prevRC, prevCur := t.rc, t.current
	t.rc, t.current = e.rc, s.n
	call, err := startGuarded(e.start)
	t.rc, t.current = prevRC, prevCur
	if err != nil || call == nil {
		e.err, e.done = err, true
		t.async.local = append(t.async.local, e)
		return
	}
	ctx := context.Background()
	var cancel context.CancelFunc
	if s.opts.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	e.started, e.cancel, e.begin = true, cancel, time.Now()
	s.running++
	t.async.running[e] = struct{}{}
	a := &t.async
	notify := t.cfg.AsyncNotify
	go func() {
		res, err := callAsync(ctx, call)
		e.took = time.Since(e.begin)
		e.res, e.err = res, err
		a.mu.Lock()
		if !a.closed {
			a.done = append(a.done, e)
			a.ndone.Add(1)
		}
		a.mu.Unlock()
		select {
		case a.wake <- struct{}{}:
		default:
		}
		if notify != nil {
			notify()
		}
	}()
}

func startGuarded(start func() (func(context.Context) (any, error), error)) (call func(context.Context) (any, error), err error) {
	err = callGuarded(func() error {
		var e error
		call, e = start()
		return e
	})
	return call, err
}

// callAsync runs call, turning a panic into a *PanicError and an error after the context's
// deadline into one wrapping context.DeadlineExceeded.
func callAsync(ctx context.Context, call func(context.Context) (any, error)) (res any, err error) {
	err = callGuarded(func() error {
		var e error
		res, e = call(ctx)
		return e
	})
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return res, err
}

// HasAsyncCompletions reports whether completed calls wait to be applied (ApplyAsync): work for
// the task's goroutine even when no input is buffered.
func (t *Task) HasAsyncCompletions() bool { return t.async.ndone.Load() > 0 || len(t.async.local) > 0 }

// AsyncPending returns the number of records admitted to the task's async steps and not yet
// applied (running, waiting, or done and not applied).
func (t *Task) AsyncPending() int {
	n := 0
	for _, s := range t.async.steps {
		n += s.pending
	}
	return n
}

// AsyncIntakePaused reports whether an async step holds so much that the task takes no new
// input: more than 2 x MaxInFlight records, or a key with MaxQueuedPerKey records waiting.
func (t *Task) AsyncIntakePaused() bool {
	paused := false
	for _, s := range t.async.steps {
		if s.pending >= 2*s.opts.MaxInFlight || s.overKeys > 0 {
			paused = true
			break
		}
	}
	a := &t.async
	switch {
	case paused && a.pausedSince.IsZero():
		a.pausedSince = time.Now()
	case !paused && !a.pausedSince.IsZero():
		a.paused += time.Since(a.pausedSince)
		a.pausedSince = time.Time{}
	}
	return paused
}

// ApplyAsync applies the completed calls of the task's async steps on the calling goroutine
// (the one holding the task): each step's Complete runs with its record's context and
// forwards downstream, per key (AsyncPerKey) or in arrival order (AsyncPerPartition); the
// records next in turn start their calls. It returns the number of records applied and the
// first failure the processing handler did not continue past (a *ProcessingError).
func (t *Task) ApplyAsync() (int, error) {
	defer t.PublishSensors()
	if t.closed || len(t.async.steps) == 0 {
		return 0, nil
	}
	a := &t.async
	applied := 0
	for {
		batch := a.local
		a.local = nil
		if a.ndone.Load() > 0 {
			a.mu.Lock()
			batch = append(batch, a.done...)
			clear(a.done)
			a.done = a.done[:0]
			a.ndone.Store(0)
			a.mu.Unlock()
		}
		if len(batch) == 0 {
			return applied, nil
		}
		for i, e := range batch {
			n, err := e.step.finish(e)
			applied += n
			if err != nil {
				a.local = append(a.local, batch[i+1:]...)
				return applied, err
			}
		}
	}
}

// finish takes a done entry back (its call ended), applies what is now in turn and starts the
// calls that may start.
func (s *asyncStep) finish(e *asyncEntry) (int, error) {
	t := s.t
	if e.started {
		e.started = false
		e.cancel()
		s.running--
		delete(t.async.running, e)
		s.calls++
		if e.err != nil {
			s.failures++
		}
		if sensors := t.cfg.Metrics; sensors != nil {
			sensors.AsyncCall(e.took)
		}
	}
	e.done = true
	applied := 0
	var err error
	if s.opts.Ordering == processor.AsyncPerPartition {
		for len(s.order) > 0 && s.order[0].done {
			h := s.order[0]
			s.order[0] = nil
			s.order = s.order[1:]
			applied++
			if err = s.apply(h); err != nil {
				break
			}
		}
	} else {
		kq := s.keys[e.key]
		// e is the head of its key: only the head's call runs.
		kq.q[0] = nil
		kq.q = kq.q[1:]
		if len(kq.q) == s.opts.MaxQueuedPerKey {
			s.overKeys--
		}
		if len(kq.q) == 0 {
			delete(s.keys, e.key)
		} else {
			s.ready = append(s.ready, kq.q[0])
		}
		applied++
		err = s.apply(e)
	}
	s.pump()
	return applied, err
}

// apply runs e's Complete (or hands its failure to the processing handler) with e's record
// context and the step as the current node.
func (s *asyncStep) apply(e *asyncEntry) error {
	t := s.t
	s.pending--
	prevRC, prevCur := t.rc, t.current
	t.rc, t.current = e.rc, s.n
	defer func() { t.rc, t.current = prevRC, prevCur }()
	var err error
	if e.err != nil {
		err = &processor.AsyncError{Key: e.rec.Key, Topic: e.rc.topic, Partition: e.rc.partition,
			Offset: e.rc.offset, Err: e.err}
	} else {
		err = callGuarded(func() error { return e.complete(e.res) })
	}
	if err != nil {
		return s.n.fail(e.rec, err)
	}
	return nil
}

// DrainAsync waits for every record admitted to the task's async steps and applies it, on the
// calling goroutine (the one holding the task). The runtime calls it at the commit barrier
// before flushing caches, so that the committed offsets (and, under exactly-once, the
// transaction) cover every output and store write of those records, and before a clean close.
// Errors: the first failure the processing handler did not continue past, or ctx's error
// (records then stay pending: the task must be closed dirty).
func (t *Task) DrainAsync(ctx context.Context) error {
	defer t.PublishSensors()
	if len(t.async.steps) == 0 {
		return nil
	}
	for {
		if _, err := t.ApplyAsync(); err != nil {
			return err
		}
		if t.AsyncPending() == 0 {
			return nil
		}
		select {
		case <-t.async.wake:
		case <-ctx.Done():
			return fmt.Errorf("task %s: waiting for %d async records: %w", t.id, t.AsyncPending(), ctx.Err())
		}
	}
}

// AsyncCommitBound returns the offset of the oldest record of topic and partition that an
// async step holds (admitted, not applied), false when it holds none: under at-least-once the
// runtime commits no offset past it, so a crash makes that record (and the ones after it) be
// processed again instead of lost, without waiting for the calls at every commit.
func (t *Task) AsyncCommitBound(topic string, partition int32) (int64, bool) {
	bound, found := int64(0), false
	see := func(e *asyncEntry) {
		if e.rc.hasMetadata && e.rc.topic == topic && e.rc.partition == partition && (!found || e.rc.offset < bound) {
			bound, found = e.rc.offset, true
		}
	}
	for _, s := range t.async.steps {
		for _, e := range s.order {
			see(e)
		}
		for _, kq := range s.keys {
			for _, e := range kq.q {
				see(e)
			}
		}
	}
	return bound, found
}

// AsyncStats are the figures of a task's async steps.
type AsyncStats struct {
	// InFlight is the number of calls running; Queued the records admitted and not yet
	// running (waiting for their key or a slot) nor applied.
	InFlight, Queued int
	// Calls and Failures count the calls that ended (Failures: with an error or timeout).
	Calls, Failures int64
	// Paused is the total time intake was paused because a step was full.
	Paused time.Duration
}

// AsyncStats returns the figures of the task's async steps; false when it has none.
func (t *Task) AsyncStats() (AsyncStats, bool) {
	var st AsyncStats
	if len(t.async.steps) == 0 {
		return st, false
	}
	for _, s := range t.async.steps {
		st.InFlight += s.running
		st.Calls += s.calls
		st.Failures += s.failures
		waiting := s.pending - s.running
		if s.opts.Ordering == processor.AsyncPerPartition {
			for _, e := range s.order {
				if e.done && !e.started {
					waiting-- // done, waiting for an earlier record
				}
			}
		}
		st.Queued += max(waiting, 0)
	}
	st.Paused = t.async.paused
	if !t.async.pausedSince.IsZero() {
		st.Paused += time.Since(t.async.pausedSince)
	}
	return st, true
}

// stopAsync cancels the calls in flight and drops every admitted record (a close): their
// results are never applied. It returns the number of records dropped.
func (t *Task) stopAsync() int {
	a := &t.async
	if len(a.steps) == 0 {
		return 0
	}
	a.mu.Lock()
	a.closed = true
	a.done = nil
	a.ndone.Store(0)
	a.mu.Unlock()
	for e := range a.running {
		e.cancel()
	}
	dropped := t.AsyncPending()
	a.running = map[*asyncEntry]struct{}{}
	a.local = nil
	for _, s := range a.steps {
		s.keys, s.order, s.ready, s.pending, s.running, s.overKeys = map[any]*asyncKey{}, nil, nil, 0, 0, 0
	}
	return dropped
}
