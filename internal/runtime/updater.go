package runtime

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// The state updater of a stream thread (Java: DefaultStateUpdater, one per StreamThread): new
// active tasks, standbys promoted to active and new standbys restore from their changelogs on
// the updater's goroutines, a few tasks at once (stateUpdater.parallel), while the thread goes
// on processing the tasks that run. The thread hands a task over with add and takes it back with drain once it is
// restored (or failed), or with remove when the assignment takes it away first: remove cancels
// the restore and returns when the updater left the task alone, so that the thread can
// checkpoint what was restored and close it. Nothing the thread does waits for a restore.
//
// A task being restored belongs to the updater: the thread touches neither it nor its
// TaskState until drain or remove returned it. Interactive queries read its stores between two
// restored batches under the job's own lock (restoreJob.lock, the TaskState's StoreLock), not
// under the thread's store lock, so that neither the restore waits for a processing pass nor a
// pass for a restore.

// restoreKind says what a restore job brings up.
type restoreKind int

const (
	// restoreActive restores a new active task from its checkpoint to the changelogs' end.
	restoreActive restoreKind = iota
	// restorePromoted brings a standby that became active from its position to the
	// changelogs' end.
	restorePromoted
	// restoreStandby restores a new standby task (then the thread keeps it current).
	restoreStandby
)

func (k restoreKind) active() bool { return k != restoreStandby }

// restoreJob is one task handed to the state updater.
type restoreJob struct {
	id   processor.TaskID
	kind restoreKind
	t    *task.Task
	ts   *changelog.TaskState
	// sb is the standby of a restoreStandby or restorePromoted job.
	sb *standbyTask
	// tps are the input partitions of an active task (assigned to the fetcher once it runs);
	// the thread changes them only while it holds the task (they are its, not the updater's).
	tps []kafka.TopicPartition
	// run restores; it stops soon after ctx ends.
	run func(ctx context.Context, j *restoreJob) error
	// lock is held while the restore changes a store (each batch); interactive queries of the
	// task hold it while they read.
	lock sync.Mutex

	ctx    context.Context
	cancel context.CancelFunc
	// finished is closed when the updater is done with the job (restored, failed, cancelled).
	finished chan struct{}
	err      error

	// offs are the changelog offsets the task's stores hold (of the last record), as far as
	// known: from the checkpoint when added, then from the restore's progress; the thread
	// reads them for its subscription's task offset sums while the restore runs.
	offMu sync.Mutex
	offs  map[changelog.TopicPartition]int64
	// ends are the changelogs' end offsets the restore started towards (the streams group
	// heartbeat's task end offsets); guarded by offMu.
	ends map[changelog.TopicPartition]int64
}

// endOffsetSum returns the sum of the end offsets of the job's changelogs whose restore
// started, and whether there is any.
func (j *restoreJob) endOffsetSum() (int64, bool) {
	j.offMu.Lock()
	defer j.offMu.Unlock()
	return offsetSum(j.ends), len(j.ends) > 0
}

// offsetSum returns the sum of the job's known changelog offsets.
func (j *restoreJob) offsetSum() int64 {
	j.offMu.Lock()
	defer j.offMu.Unlock()
	return offsetSum(j.offs)
}

func (j *restoreJob) setOffset(tp changelog.TopicPartition, off int64) {
	j.offMu.Lock()
	if j.offs == nil {
		j.offs = map[changelog.TopicPartition]int64{}
	}
	j.offs[tp] = off
	j.offMu.Unlock()
}

// stateUpdater runs a thread's restore jobs on goroutines of its own, up to parallel of them
// at once, taking them up in the order the thread added them (Java's DefaultStateUpdater
// restores the changelogs of all its tasks together, through one restore consumer). One
// restore alone leaves a core mostly idle: its fetches are one round trip after the other,
// each decoded before the next is sent, and its store's last table file is built at its end;
// two restores side by side fill those gaps (four tasks of 500 000 small records restored in
// about 0.5 s instead of 0.65 s on two cores, when this came in). More than two gained
// nothing there and hold more memory: each restore holds its fetched responses and its
// store's chunks. Its methods are
// called by the thread; wake is called (from an updater goroutine) whenever a job finished,
// so an idle thread drains it at once. Safe for concurrent use.
type stateUpdater struct {
	log      *slog.Logger
	wake     func()
	parallel int

	mu sync.Mutex
	// jobs are the jobs added and not yet drained or removed; queue those not started yet, in
	// order; done the finished ones, in order.
	jobs  map[processor.TaskID]*restoreJob
	queue []*restoreJob
	done  []*restoreJob
	// running counts the goroutines restoring (at most parallel); each takes up queued jobs
	// until the queue is empty. stopped: close was called; workers ends when they all ended.
	running int
	stopped bool
	workers sync.WaitGroup
}

// defaultParallelRestores is how many restore jobs a state updater runs at once (see
// stateUpdater).
const defaultParallelRestores = 2

func newStateUpdater(log *slog.Logger, wake func()) *stateUpdater {
	if wake == nil {
		wake = func() {}
	}
	return &stateUpdater{log: log, wake: wake, parallel: defaultParallelRestores, jobs: map[processor.TaskID]*restoreJob{}}
}

// add hands a job to the updater (the thread no longer touches its task). A job of the same
// task must not be there (remove it first).
func (u *stateUpdater) add(parent context.Context, j *restoreJob) {
	j.ctx, j.cancel = context.WithCancel(parent)
	j.finished = make(chan struct{})
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped {
		j.err = context.Canceled
		j.cancel()
		close(j.finished)
		u.jobs[j.id] = j
		u.done = append(u.done, j)
		return
	}
	u.jobs[j.id] = j
	u.queue = append(u.queue, j)
	if u.running < max(u.parallel, 1) {
		u.running++
		u.workers.Add(1)
		go u.work()
	}
}

// job returns the job of task id that the updater holds (queued, running or finished, not yet
// drained), or nil.
func (u *stateUpdater) job(id processor.TaskID) *restoreJob {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.jobs[id]
}

// list returns the jobs the updater holds, sorted by task.
func (u *stateUpdater) list() []*restoreJob {
	u.mu.Lock()
	out := make([]*restoreJob, 0, len(u.jobs))
	for _, j := range u.jobs {
		out = append(out, j)
	}
	u.mu.Unlock()
	slices.SortFunc(out, func(a, b *restoreJob) int { return compareTasks(a.id, b.id) })
	return out
}

// remove takes task id's job back before it is drained: a queued job never starts, a running
// one is cancelled and remove waits until the updater left it (the batch being written ends
// first). It returns the job (with its error: context.Canceled when it was cut short), or nil
// when the updater holds no job of task id.
func (u *stateUpdater) remove(id processor.TaskID) *restoreJob {
	u.mu.Lock()
	j := u.jobs[id]
	if j == nil {
		u.mu.Unlock()
		return nil
	}
	delete(u.jobs, id)
	if i := slices.Index(u.queue, j); i >= 0 {
		u.queue = slices.Delete(u.queue, i, i+1)
		j.err = context.Canceled
		j.cancel()
		close(j.finished)
		u.mu.Unlock()
		return j
	}
	if i := slices.Index(u.done, j); i >= 0 {
		u.done = slices.Delete(u.done, i, i+1)
	}
	u.mu.Unlock()
	j.cancel()
	<-j.finished
	u.mu.Lock()
	if i := slices.Index(u.done, j); i >= 0 {
		u.done = slices.Delete(u.done, i, i+1)
	}
	u.mu.Unlock()
	return j
}

// drain returns the jobs finished since the last drain (restored ones with a nil err, failed
// ones with their error), in the order they finished; they are the thread's again. Java:
// StateUpdater.drainRestoredActiveTasks and drainExceptionsAndFailedTasks.
func (u *stateUpdater) drain() []*restoreJob {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.done) == 0 {
		return nil
	}
	out := u.done
	u.done = nil
	for _, j := range out {
		if u.jobs[j.id] == j {
			delete(u.jobs, j.id)
		}
	}
	return out
}

// restoring reports whether the updater holds jobs.
func (u *stateUpdater) restoring() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.jobs) > 0
}

// close cancels every job, waits for the goroutine to end and returns the jobs not drained
// (the caller closes their tasks).
func (u *stateUpdater) close() []*restoreJob {
	u.mu.Lock()
	u.stopped = true
	for _, j := range u.jobs {
		if j.cancel != nil {
			j.cancel()
		}
	}
	u.mu.Unlock()
	u.workers.Wait()
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]*restoreJob, 0, len(u.jobs))
	for _, j := range u.jobs {
		select {
		case <-j.finished:
		default:
			if j.err == nil {
				j.err = context.Canceled
			}
			close(j.finished)
		}
		out = append(out, j)
	}
	clear(u.jobs)
	u.queue, u.done = nil, nil
	slices.SortFunc(out, func(a, b *restoreJob) int { return compareTasks(a.id, b.id) })
	return out
}

// work runs queued jobs, one after the other, until the queue is empty or close was called.
func (u *stateUpdater) work() {
	kafka.LabelGoroutine("state-updater")
	defer u.workers.Done()
	for {
		u.mu.Lock()
		if u.stopped || len(u.queue) == 0 {
			u.running--
			u.mu.Unlock()
			return
		}
		j := u.queue[0]
		u.queue = u.queue[1:]
		u.mu.Unlock()
		u.runJob(j)
	}
}

// runJob restores job j and hands it over to drain (unless remove took it back).
func (u *stateUpdater) runJob(j *restoreJob) {
	err := j.ctx.Err()
	if err == nil {
		err = j.run(j.ctx, j)
		if err == nil && j.ctx.Err() != nil {
			err = j.ctx.Err()
		}
	}
	if err != nil && j.ctx.Err() != nil && !errors.Is(err, context.Canceled) {
		// Cut short by remove or close: the restore's error is the cancellation's.
		u.log.Debug("restore cancelled", "task", j.id.String(), "error", err)
		err = context.Canceled
	}
	u.mu.Lock()
	j.err = err
	if u.jobs[j.id] == j {
		u.done = append(u.done, j)
	}
	close(j.finished)
	u.mu.Unlock()
	u.wake()
}

func compareTasks(a, b processor.TaskID) int {
	if a.Subtopology != b.Subtopology {
		return a.Subtopology - b.Subtopology
	}
	return a.Partition - b.Partition
}

// jobListener records a job's restore progress (its offsets, for the task offset sums) and
// passes every event on.
type jobListener struct {
	j    *restoreJob
	next changelog.RestoreListener
}

func (l jobListener) OnRestoreStart(tp changelog.TopicPartition, store string, start, end int64) {
	if start > 0 {
		l.j.setOffset(tp, start-1)
	}
	l.j.offMu.Lock()
	if l.j.ends == nil {
		l.j.ends = map[changelog.TopicPartition]int64{}
	}
	l.j.ends[tp] = end
	l.j.offMu.Unlock()
	l.next.OnRestoreStart(tp, store, start, end)
}

func (l jobListener) OnBatchRestored(tp changelog.TopicPartition, store string, last, n int64) {
	l.j.setOffset(tp, last)
	l.next.OnBatchRestored(tp, store, last, n)
}

func (l jobListener) OnRestoreEnd(tp changelog.TopicPartition, store string, total int64) {
	l.next.OnRestoreEnd(tp, store, total)
}
