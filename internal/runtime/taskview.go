package runtime

import (
	"sync"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// taskView is what goroutines other than the stream thread see of its tasks, and the locks
// that order them with the thread: interactive queries read stores through it
// (QueryableStore), the thread's task executors take the task locks from it, and the state
// updater publishes the tasks it restores in it. The thread's task manager owns the tasks
// (taskManager.tasks, taskManager.standbys); the view only says which of them others may read
// now, and under which lock. Nothing here calls back into the thread. Java: the read side of TasksRegistry and the
// locks of the caching layer and the synchronized in-memory stores.
type taskView struct {
	// storeMu is held by the thread between passes while it commits or closes its active
	// tasks or applies changelog records to (or closes) a standby, and by interactive queries
	// while they read a store of one of them; during a pass each task's executor holds the
	// task's lock (taskLocks), which queries take after storeMu: the stores are not safe for
	// concurrent use.
	storeMu sync.Mutex

	// mu guards the maps below.
	mu sync.Mutex
	// running are the active tasks processing now; restoring the active tasks the state
	// updater restores (or catches up after a standby's promotion) that do not process yet;
	// standbys the standby tasks readable by queries that allow stale data (KIP-535).
	running   map[processor.TaskID]*task.Task
	restoring map[processor.TaskID]*task.Task
	standbys  map[processor.TaskID]*task.Task
	// locks holds the lock queries take to read a task of restoring or standbys that the state
	// updater holds (its job's lock); absent: storeMu.
	locks map[processor.TaskID]sync.Locker
	// taskLocks are the locks of the active tasks: an executor holds one while it processes
	// the task, a query (after storeMu) while it reads the task's stores (pace.go).
	taskLocks map[processor.TaskID]*turnLock
}

func newTaskView() *taskView {
	return &taskView{running: map[processor.TaskID]*task.Task{}, restoring: map[processor.TaskID]*task.Task{},
		standbys: map[processor.TaskID]*task.Task{}, locks: map[processor.TaskID]sync.Locker{},
		taskLocks: map[processor.TaskID]*turnLock{}}
}

// lockOfLocked returns the lock a query holds to read task id; call it holding v.mu.
func (v *taskView) lockOfLocked(id processor.TaskID) sync.Locker {
	if l, ok := v.locks[id]; ok {
		return l
	}
	return &v.storeMu
}

// taskLockLocked returns the lock of active task id (created on first use); call it holding
// v.mu.
func (v *taskView) taskLockLocked(id processor.TaskID) *turnLock {
	l := v.taskLocks[id]
	if l == nil {
		l = newTurnLock()
		v.taskLocks[id] = l
	}
	return l
}

// taskLock is taskLockLocked for a caller not holding v.mu.
func (v *taskView) taskLock(id processor.TaskID) *turnLock {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.taskLockLocked(id)
}

// showRestoring makes t, an active task the state updater restores under lock, readable as
// restoring; showStandby likewise for a standby it restores.
func (v *taskView) showRestoring(id processor.TaskID, t *task.Task, lock sync.Locker) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.restoring[id] = t
	v.locks[id] = lock
}

func (v *taskView) showStandby(id processor.TaskID, t *task.Task, lock sync.Locker) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.standbys[id] = t
	v.locks[id] = lock
}

// promote turns standby id into active task t restoring under lock; a query of the standby
// finishes first.
func (v *taskView) promote(id processor.TaskID, t *task.Task, lock sync.Locker) {
	v.storeMu.Lock()
	defer v.storeMu.Unlock()
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.standbys, id)
	v.restoring[id] = t
	v.locks[id] = lock
}

// hideRestored takes t, restored under lock, out of restoring and standbys. Call it holding
// lock, so that a query reading t finishes first.
func (v *taskView) hideRestored(id processor.TaskID, t *task.Task, lock sync.Locker) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.restoring[id] == t {
		delete(v.restoring, id)
	}
	if v.standbys[id] == t {
		delete(v.standbys, id)
	}
	if v.locks[id] == lock {
		delete(v.locks, id)
	}
}

// standbyRestored: standby id, restored under lock, is read under storeMu from now on. Call it
// holding lock.
func (v *taskView) standbyRestored(id processor.TaskID, lock sync.Locker) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.locks[id] == lock {
		delete(v.locks, id)
	}
}

// run makes t, restored under lock, a running task read under storeMu and its task lock. Call
// it holding lock.
func (v *taskView) run(id processor.TaskID, t *task.Task, lock sync.Locker) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.restoring[id] == t {
		delete(v.restoring, id)
	}
	if v.locks[id] == lock {
		delete(v.locks, id)
	}
	v.running[id] = t
}

// stopAll makes no active task readable as running.
func (v *taskView) stopAll() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.running = map[processor.TaskID]*task.Task{}
}

// hide takes active task t out of running and restoring.
func (v *taskView) hide(id processor.TaskID, t *task.Task) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.running[id] == t {
		delete(v.running, id)
	}
	if v.restoring[id] == t {
		delete(v.restoring, id)
	}
}

// hideStandby takes standby id out of standbys; a query reading it finishes first only if the
// caller then takes storeMu before it changes or closes the standby.
func (v *taskView) hideStandby(id processor.TaskID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.standbys, id)
}

// runningIDs returns the running tasks, sorted.
func (v *taskView) runningIDs() []processor.TaskID {
	v.mu.Lock()
	ids := make([]processor.TaskID, 0, len(v.running))
	for id := range v.running {
		ids = append(ids, id)
	}
	v.mu.Unlock()
	sortTasks(ids)
	return ids
}

// restoringTasks returns a copy of restoring.
func (v *taskView) restoringTasks() map[processor.TaskID]*task.Task {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[processor.TaskID]*task.Task, len(v.restoring))
	for id, t := range v.restoring {
		out[id] = t
	}
	return out
}

// waiters returns how many goroutines wait for a task lock now.
func (v *taskView) waiters() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for _, l := range v.taskLocks {
		n += l.waiters()
	}
	return n
}

// viewKind says which set of a taskView a query reads.
type viewKind int

const (
	viewRunning viewKind = iota
	viewRestoring
	viewStandby
)

// set returns the set of kind; call it holding v.mu.
func (v *taskView) set(kind viewKind) map[processor.TaskID]*task.Task {
	switch kind {
	case viewRestoring:
		return v.restoring
	case viewStandby:
		return v.standbys
	}
	return v.running
}

// read calls f holding lock, the lock task t of kind was found under, and reports true, or
// reports false without calling f when t is no longer there under that lock (closed, migrated,
// restored or promoted since). A running task's executor hands the task's lock over between
// two records, so f waits for one record, not for a pass.
func (v *taskView) read(kind viewKind, id processor.TaskID, t *task.Task, lock sync.Locker, f func()) bool {
	if lock == nil {
		lock = &v.storeMu
	}
	lock.Lock()
	defer lock.Unlock()
	if lock == sync.Locker(&v.storeMu) && kind != viewStandby {
		tl := v.taskLock(id)
		tl.lockShared()
		defer tl.unlock()
	}
	v.mu.Lock()
	ok := v.lockOfLocked(id) == lock && v.set(kind)[id] == t
	v.mu.Unlock()
	if ok {
		f()
	}
	return ok
}
