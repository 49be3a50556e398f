package runtime

import (
	"github.com/kstreams-go/kstreams/internal/kafka"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// Task executors. A pass hands the thread's active tasks to up to Config.Executors goroutines
// (the thread's own goroutine is one of them): each takes the next task of the pass's order,
// processes up to pace.perTask of its records with stream-time punctuation after each, runs
// its due wall-clock punctuators, and takes the next task, until every task had its turn. A task
// is held by one executor at a time, under its lock (taskLock), which the executor hands to
// waiting interactive queries between two records. The thread waits for every executor before
// it polls, commits or rebalances: everything it does between passes (commit, flushing caches
// and the producer, closing and creating tasks) is a barrier no task is processed across.
// What executors share is safe for concurrent use: the record cache (each named cache is one
// task's, used under that task's lock, so executors of different tasks do not wait for each
// other there; only its total size is shared, as an atomic), the producer, the collector's
// counters, the metrics' registry (a node's sensors are its task's). Java: the TaskExecutors of the
// processing threads (TaskManager hands tasks out, each locked by one executor) with the
// StreamThread committing after it paused them.

// passTask is one task's share of a pass.
type passTask struct {
	id     processor.TaskID
	t      *task.Task
	lock   *turnLock
	inputs []*inputPartition
}

// pass is the state the executors of one pass share.
type pass struct {
	tasks []passTask
	next  atomic.Int64
	total atomic.Int64
	// failed stops the other executors after their current record once one failed.
	failed atomic.Bool
	errMu  sync.Mutex
	err    error
}

// processOnce runs one pass: up to th.pace.perTask records per task, with stream-time
// punctuation after each record and the due wall-clock punctuators, on up to Config.Executors
// goroutines; it ends early between two records at the pass's deadline or when the runtime
// stops (pace.go). It returns the number of records processed and the first error. Java:
// TaskExecutor.process and TaskExecutor.punctuate.
func (th *thread) processOnce() (int, error) {
	th.beginPass()
	start := time.Now()
	ps := &th.passState
	ps.tasks = ps.tasks[:0]
	ps.next.Store(0)
	ps.total.Store(0)
	ps.failed.Store(false)
	ps.err = nil
	v := th.view
	v.mu.Lock()
	for _, id := range th.passOrder() {
		if t := th.tm.tasks[id]; t != nil {
			ps.tasks = append(ps.tasks, passTask{id: id, t: t, lock: v.taskLockLocked(id), inputs: th.in.byTask[id]})
		}
	}
	v.mu.Unlock()
	if n := min(th.executors(), len(ps.tasks)); n > 1 {
		var wg sync.WaitGroup
		for range n - 1 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kafka.LabelGoroutine("executor")
				th.execute(ps)
			}()
		}
		th.execute(ps)
		wg.Wait()
	} else {
		th.execute(ps)
	}
	total := int(ps.total.Load())
	took := time.Since(start)
	th.endPass(total, took)
	if total > 0 {
		th.obs.Process.Record(int64(total), took)
		if m := th.rt.cfg.Metrics; m != nil {
			m.processed.WithLabelValues(th.name).Add(float64(total))
			m.processTime.WithLabelValues(th.name).Observe(took.Seconds())
		}
	}
	return total, ps.err
}

// executors returns how many goroutines process the thread's tasks in a pass.
func (th *thread) executors() int { return max(th.rt.cfg.Executors, 1) }

// eachTask runs f for every task of ts on up to executors() goroutines (forEachOn); the
// calling goroutine holds the thread's barrier: no pass runs meanwhile.
func (th *thread) eachTask(ts []*task.Task, f func(*task.Task) error) error {
	return forEachOn(th.executors(), ts, f)
}

// forEachOn runs f for every item of items on up to n goroutines, the calling one among them,
// each item once. It returns the first error; items not started when it happened are
// skipped. With n <= 1, or one item, everything runs on the calling goroutine, in order.
func forEachOn[T any](n int, items []T, f func(T) error) error {
	n = min(n, len(items))
	if n <= 1 {
		for _, it := range items {
			if err := f(it); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		first  error
		wg     sync.WaitGroup
	)
	work := func() {
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= len(items) {
				return
			}
			if err := f(items[i]); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				failed.Store(true)
				return
			}
		}
	}
	for range n - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kafka.LabelGoroutine("executor")
			work()
		}()
	}
	work()
	wg.Wait()
	return first
}

// execute is one executor's share of pass ps: it takes the pass's tasks one after another
// until none is left or an executor failed.
func (th *thread) execute(ps *pass) {
	for !ps.failed.Load() {
		i := int(ps.next.Add(1) - 1)
		if i >= len(ps.tasks) {
			return
		}
		if err := th.processTask(ps, &ps.tasks[i]); err != nil {
			ps.errMu.Lock()
			if ps.err == nil {
				ps.err = err
			}
			ps.errMu.Unlock()
			ps.failed.Store(true)
			return
		}
	}
}

// processTask processes the records of one task for pass ps, then runs its due wall-clock
// punctuators, holding the task's lock (handed to interactive queries between records).
func (th *thread) processTask(ps *pass, w *passTask) error {
	w.lock.lock()
	defer w.lock.unlock()
	p := &th.pace
	t := w.t
	defer t.PublishSensors() // the latencies of the records processed below, under the lock
	// Async steps: completed calls are applied by the executor holding the task, even when it
	// has no input buffered (they are work: Task.HasAsyncCompletions, and their goroutines
	// wake the thread); applied records count as processed. Process applies them too, and
	// takes no input while an async step of the task is full (its partitions then fill and
	// pause).
	if t.HasAsyncCompletions() {
		applied, err := t.ApplyAsync()
		ps.total.Add(int64(applied))
		if err != nil {
			return err
		}
	}
	now := time.Now().UnixMilli()
	waiting := th.rt.cfg.Task.MaxTaskIdleMs >= 0 && len(w.inputs) > 1
	if waiting && !t.HasRecordsQueued() {
		// As Java's readyToProcess, asked on every pass: a caught-up empty partition's idle
		// deadline starts when it is first seen so, records elsewhere or not.
		th.in.updateLags(t, w.inputs)
		t.IsProcessable(now)
	} else {
		// Processed records are counted here and added to the pass's total once: a shared
		// counter updated per record costs the executors a contended cache line each.
		n := int64(0)
		defer func() { ps.total.Add(n) }()
		for i := 0; i < p.perTask && t.HasRecordsQueued(); i++ {
			if (p.stop.Load() && (n > 0 || ps.total.Load() > 0)) || ps.failed.Load() {
				break // the next pass goes on (at least one record per pass)
			}
			w.lock.yield()
			if waiting {
				th.in.updateLags(t, w.inputs)
				if !th.isProcessable(w.id, t, now) {
					break
				}
			}
			ok, err := t.Process(now)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			n++
			punctuated, err := t.MaybePunctuateStreamTime()
			if err != nil {
				return err
			}
			if punctuated {
				th.obs.Punctuate.Count(1)
				p.punctuated.Store(true)
			}
		}
	}
	if ps.failed.Load() {
		return nil
	}
	start := time.Now()
	punctuated, err := t.MaybePunctuateSystemTime(start.UnixMilli())
	if err != nil {
		return err
	}
	if punctuated {
		th.obs.Punctuate.Record(1, time.Since(start))
		p.punctuated.Store(true)
	}
	return nil
}

// commitRequested reports whether a task asked for a commit (ProcessorContext.Commit).
func (th *thread) commitRequested() bool {
	for _, t := range th.tm.tasks {
		if t.CommitRequested() {
			return true
		}
	}
	return false
}
