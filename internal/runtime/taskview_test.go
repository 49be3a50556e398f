package runtime

import (
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// A query reads a task through the view only while the task is still where, and under the lock,
// it was found: running, then restoring under a job's lock, then a standby, each move makes the
// earlier finding stale.
func TestTaskViewReadsOnlyWhereTheTaskWasFound(t *testing.T) {
	v := newTaskView()
	id := processor.TaskID{Subtopology: 1, Partition: 2}
	t1, t2 := &task.Task{}, &task.Task{}
	var job sync.Mutex

	read := func(kind viewKind, tk *task.Task, lock sync.Locker) bool {
		called := false
		ok := v.read(kind, id, tk, lock, func() { called = true })
		if ok != called {
			t.Fatalf("read reported %v but called f: %v", ok, called)
		}
		return ok
	}

	v.showRestoring(id, t1, &job)
	v.mu.Lock()
	lock := v.lockOfLocked(id)
	v.mu.Unlock()
	if lock != sync.Locker(&job) {
		t.Fatalf("a restoring task is read under %p, want its job's lock %p", lock, &job)
	}
	if !read(viewRestoring, t1, &job) {
		t.Fatal("the restoring task could not be read")
	}
	job.Lock()
	v.run(id, t1, &job)
	job.Unlock()
	if read(viewRestoring, t1, &job) {
		t.Fatal("a query found the task restoring and read it after it ran")
	}
	if !read(viewRunning, t1, nil) {
		t.Fatal("the running task could not be read under the store lock")
	}
	if got := v.runningIDs(); len(got) != 1 || got[0] != id {
		t.Fatalf("running tasks %v, want [%v]", got, id)
	}
	v.hide(id, t2) // another task object: nothing changes
	if !read(viewRunning, t1, nil) {
		t.Fatal("hiding another task object hid this one")
	}
	v.hide(id, t1)
	if read(viewRunning, t1, nil) {
		t.Fatal("a closed task was read")
	}

	v.showStandby(id, t2, &job)
	if !read(viewStandby, t2, &job) {
		t.Fatal("the standby could not be read under its job's lock")
	}
	job.Lock()
	v.standbyRestored(id, &job)
	job.Unlock()
	if read(viewStandby, t2, &job) {
		t.Fatal("a restored standby was read under its job's lock, not the store lock")
	}
	if !read(viewStandby, t2, nil) {
		t.Fatal("the restored standby could not be read under the store lock")
	}
	var promotion sync.Mutex
	v.promote(id, t1, &promotion)
	if read(viewStandby, t2, nil) {
		t.Fatal("a promoted standby was still read as a standby")
	}
	if !read(viewRestoring, t1, &promotion) {
		t.Fatal("the promoted task could not be read as restoring")
	}
}

// Queries read through the view while the thread moves the task between its sets and an
// executor holds and yields the task's lock (run with -race).
func TestTaskViewConcurrentReads(t *testing.T) {
	v := newTaskView()
	id := processor.TaskID{}
	tk := &task.Task{}
	var job sync.Mutex
	shared := 0 // written by the executor under the task lock, read by the queries
	v.showRestoring(id, tk, &job)
	job.Lock()
	v.run(id, tk, &job)
	job.Unlock()

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the executor
		defer wg.Done()
		l := v.taskLock(id)
		l.lock()
		defer l.unlock()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			l.yield()
			shared = i
		}
	}()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				v.mu.Lock()
				lock := v.lockOfLocked(id)
				v.mu.Unlock()
				v.read(viewRunning, id, tk, lock, func() { _ = shared })
				_ = v.waiters()
			}
		}()
	}
	for range 200 {
		v.storeMu.Lock()
		v.hide(id, tk)
		v.storeMu.Unlock()
		v.showRestoring(id, tk, &job)
		job.Lock()
		v.run(id, tk, &job)
		job.Unlock()
	}
	close(done)
	wg.Wait()
}
