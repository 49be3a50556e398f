package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// nopOut is a task collector that drops everything (a restoring task produces nothing).
type nopOut struct{}

func (nopOut) Send(task.OutRecord) error           { return nil }
func (nopOut) PartitionsFor(string) (int32, error) { return 1, nil }

// gate is a restore listener that holds the restore after batch number at (1-based) until
// open is closed, and records the last offset of every batch.
type gate struct {
	at      int
	reached chan struct{}
	open    chan struct{}
	mu      sync.Mutex
	batches int
	last    int64
	ended   bool
}

func newGate(at int) *gate {
	return &gate{at: at, reached: make(chan struct{}), open: make(chan struct{}), last: -1}
}

func (g *gate) OnRestoreStart(changelog.TopicPartition, string, int64, int64) {}
func (g *gate) OnBatchRestored(_ changelog.TopicPartition, _ string, last, _ int64) {
	g.mu.Lock()
	g.batches++
	g.last = last
	n := g.batches
	g.mu.Unlock()
	if n == g.at {
		close(g.reached)
		<-g.open
	}
}
func (g *gate) OnRestoreEnd(changelog.TopicPartition, string, int64) {
	g.mu.Lock()
	g.ended = true
	g.mu.Unlock()
}

const updaterTestChangelog = "app-kv-changelog"

// fillLog appends n records k%05d -> v<i> to the changelog partition 0.
func fillLog(log *changelog.MemoryLog, n int) {
	for i := range n {
		log.Append(changelog.TopicPartition{Topic: updaterTestChangelog, Partition: 0},
			changelog.Record{Key: fmt.Appendf(nil, "k%05d", i), Value: fmt.Appendf(nil, "v%d", i), Timestamp: int64(i)})
	}
}

// restoreTestJob builds task 0_0 with the Pebble key-value store "kv" in dir and a restore job
// of it reading log (bulkMin: TaskStateConfig.BulkRestoreMinRecords).
func restoreTestJob(t *testing.T, dir string, log changelog.Reader, lis changelog.RestoreListener, bulkMin int) *restoreJob {
	t.Helper()
	spec := task.Spec{Stores: []task.StoreSpec{{Builder: store.Stores.KeyValueStoreBuilder(
		store.Stores.PersistentKeyValueStore("kv"), serde.String(), serde.String())}}}
	tk, err := task.New(processor.TaskID{}, spec, task.Config{ApplicationID: "app", StateDir: dir, Collector: nopOut{}, AppConfigs: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.Init(); err != nil {
		t.Fatal(err)
	}
	j := newJob(processor.TaskID{}, restoreActive)
	j.t = tk
	j.ts = changelog.NewTaskState(changelog.TaskStateConfig{TaskDir: dir, Reader: log, Listener: jobListener{j, lis},
		Logger: slog.New(slog.DiscardHandler), MaxBatchRecords: 100, BulkRestoreMinRecords: bulkMin, StoreLock: &j.lock}, tk)
	j.run = func(ctx context.Context, j *restoreJob) error { return j.ts.Restore(ctx) }
	return j
}

func kvOf(j *restoreJob) store.KeyValueStore[string, string] {
	return j.t.Store("kv").(store.KeyValueStore[string, string])
}

// testTaskManager is the part of a task manager that closeJob uses.
func testTaskManager() *taskManager {
	return &taskManager{rt: &Runtime{}, log: slog.New(slog.DiscardHandler), out: &output{}, tasks: map[processor.TaskID]*task.Task{},
		standbys: map[processor.TaskID]*standbyTask{}, view: newTaskView(), in: &input{parts: map[kafka.TopicPartition]*inputPartition{}}}
}

// The state updater restores on its own goroutine: while a restore is held in its middle, the
// caller (the stream thread) goes on, nothing is drained, and a reader holding the job's lock
// (an interactive query) reads the store between batches; once released, drain returns the
// job restored, its store holding the whole changelog, and the wake callback was called.
func TestStateUpdaterRestoresBeside(t *testing.T) {
	log := changelog.NewMemoryLog()
	const n = 2000
	fillLog(log, n)
	g := newGate(3)
	j := restoreTestJob(t, t.TempDir(), log, g, -1)
	defer j.t.Close()
	woken := make(chan struct{}, 1)
	u := newStateUpdater(slog.New(slog.DiscardHandler), func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	defer u.close()
	u.add(context.Background(), j)

	// Queries read the store under the job's lock while it restores.
	stop := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			j.lock.Lock()
			if _, ok, err := kvOf(j).Get("k00000"); err == nil && ok {
				reads.Add(1)
			}
			j.lock.Unlock()
		}
	})
	select {
	case <-g.reached:
	case <-time.After(time.Minute):
		t.Fatal("restore did not reach its third batch")
	}
	if got := u.drain(); len(got) != 0 {
		t.Fatalf("drained %d jobs while the restore is held", len(got))
	}
	if u.job(j.id) != j || !u.restoring() {
		t.Fatal("the updater does not hold the job it restores")
	}
	// While the restore is held, the query gets the job's lock and reads (it may not have been
	// scheduled before: wait for its first read, not for a while).
	for deadline := time.Now().Add(time.Minute); reads.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no query read the store while the restore was held")
		}
		time.Sleep(time.Millisecond) // polling interval, bounded by the deadline
	}
	// Between batches the store holds exactly the first three batches.
	j.lock.Lock()
	_, ok299, _ := kvOf(j).Get("k00299")
	_, ok300, _ := kvOf(j).Get("k00300")
	j.lock.Unlock()
	if !ok299 || ok300 {
		t.Fatalf("after three batches of 100: k00299 present %v, k00300 present %v; want true, false", ok299, ok300)
	}
	close(g.open)
	var done []*restoreJob
	deadline := time.After(time.Minute)
	for len(done) == 0 {
		select {
		case <-woken:
			done = u.drain()
		case <-deadline:
			t.Fatal("restored job not drained")
		}
	}
	close(stop)
	wg.Wait()
	if len(done) != 1 || done[0] != j || j.err != nil {
		t.Fatalf("drained %v (error %v), want the job restored", done, j.err)
	}
	if u.job(j.id) != nil {
		t.Fatal("a drained job is still held")
	}
	for _, i := range []int{0, n / 2, n - 1} {
		k := fmt.Sprintf("k%05d", i)
		if v, ok, err := kvOf(j).Get(k); err != nil || !ok || v != fmt.Sprint("v", i) {
			t.Fatalf("Get(%s) = %q, %v, %v; want v%d", k, v, ok, err, i)
		}
	}
	if off := j.ts.Offsets()[changelog.TopicPartition{Topic: updaterTestChangelog}]; off != n-1 {
		t.Fatalf("restored offset %d, want %d", off, n-1)
	}
	if j.offsetSum() != n-1 {
		t.Fatalf("job offset sum %d, want %d", j.offsetSum(), n-1)
	}
}

// A task removed while it restores (revoked) stops cleanly: remove cancels the restore and
// returns once the updater left the task; closeJob checkpoints what was restored. A plain
// restore checkpoints the offset of the last batch, which is exactly what the store holds; a
// bulk restore (records held back until its end) checkpoints nothing for the store, so no
// partial state passes for restored. A new restore from that checkpoint gives the whole
// changelog.
func TestStateUpdaterRemoveCheckpointsWhatWasRestored(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) {
			log := changelog.NewMemoryLog()
			const n = 2000
			fillLog(log, n)
			bulkMin := -1
			if bulk {
				bulkMin = 1
			}
			dir := t.TempDir()
			g := newGate(5)
			j := restoreTestJob(t, dir, log, g, bulkMin)
			u := newStateUpdater(slog.New(slog.DiscardHandler), nil)
			u.parallel = 1 // other waits in the queue behind j
			defer u.close()
			other := restoreTestJob(t, t.TempDir(), log, newGate(0), -1)
			other.id = processor.TaskID{Partition: 1}
			u.add(context.Background(), j)
			u.add(context.Background(), other) // queued behind j
			<-g.reached
			// Removed while the updater is held inside j's restore, so before it starts (once
			// j is removed the updater would take it up at once).
			if o := u.remove(other.id); o != other || !errors.Is(other.err, context.Canceled) {
				t.Fatalf("queued job: remove returned %p (error %v)", o, other.err)
			}
			other.t.Close()
			removed := make(chan *restoreJob)
			go func() { removed <- u.remove(j.id) }()
			<-j.ctx.Done() // remove cancelled the restore, which is held inside a batch's callback
			select {
			case <-removed:
				t.Fatal("remove returned while the updater is inside the task's restore")
			default:
			}
			close(g.open)
			got := <-removed
			if got != j || !errors.Is(j.err, context.Canceled) {
				t.Fatalf("remove returned %p (error %v), want the job cancelled", got, j.err)
			}
			if g.ended {
				t.Fatal("the removed restore ended")
			}
			tm := testTaskManager()
			tm.view.showRestoring(j.id, j.t, &j.lock)
			tm.closeJob(j, true)
			if len(tm.view.restoring) != 0 || len(tm.view.locks) != 0 {
				t.Fatal("the closed task is still readable")
			}
			cp, err := changelog.ReadCheckpoint(j.ts.CheckpointPath())
			if err != nil {
				t.Fatal(err)
			}
			off, ok := cp[changelog.TopicPartition{Topic: updaterTestChangelog}]
			if bulk {
				if ok && off != changelog.OffsetUnknown {
					t.Fatalf("bulk restore cut short checkpointed offset %d, want none", off)
				}
			} else if !ok || off != g.last || off < 499 || off >= n-1 {
				t.Fatalf("checkpointed offset %d (present %v), want the last restored batch's (%d), short of the end", off, ok, g.last)
			}

			// Reopened: the store holds what the checkpoint claims; a restore completes it.
			g2 := newGate(0)
			j2 := restoreTestJob(t, dir, log, g2, bulkMin)
			defer j2.t.Close()
			if !bulk {
				k := fmt.Sprintf("k%05d", off)
				if _, ok, _ := kvOf(j2).Get(k); !ok {
					t.Fatalf("%s, restored and checkpointed, is missing after reopening", k)
				}
			}
			if err := j2.run(context.Background(), j2); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				k := fmt.Sprintf("k%05d", i)
				if v, ok, err := kvOf(j2).Get(k); err != nil || !ok || v != fmt.Sprint("v", i) {
					t.Fatalf("after the second restore Get(%s) = %q, %v, %v", k, v, ok, err)
				}
			}
			if want := (n - 1 - int(off)) / 100; !bulk && g2.batches != want {
				t.Fatalf("second restore wrote %d batches, want %d (from the checkpoint on)", g2.batches, want)
			}
		})
	}
}

// The updater restores up to parallel jobs at once, in the order they were added: with two
// slots, the first two jobs are both held in their restores while the third waits in the
// queue; when one of them ends, the third starts. Each ends with its whole changelog.
func TestStateUpdaterRestoresInParallel(t *testing.T) {
	log := changelog.NewMemoryLog()
	const n = 1000
	fillLog(log, n)
	woken := make(chan struct{}, 1)
	u := newStateUpdater(slog.New(slog.DiscardHandler), func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	u.parallel = 2
	defer u.close()
	var gates []*gate
	var jobs []*restoreJob
	for i := range 3 {
		g := newGate(2)
		j := restoreTestJob(t, t.TempDir(), log, g, -1)
		defer j.t.Close()
		j.id = processor.TaskID{Partition: i}
		gates, jobs = append(gates, g), append(jobs, j)
		u.add(context.Background(), j)
	}
	wait := func(g *gate, what string) {
		t.Helper()
		select {
		case <-g.reached:
		case <-time.After(time.Minute):
			t.Fatalf("%s did not reach its second batch", what)
		}
	}
	wait(gates[0], "the first job")
	wait(gates[1], "the second job (not restored beside the first?)")
	u.mu.Lock()
	queued := len(u.queue) == 1 && u.queue[0] == jobs[2]
	u.mu.Unlock()
	if !queued {
		t.Fatal("the third job does not wait in the queue while two restore")
	}
	close(gates[1].open)
	wait(gates[2], "the third job, once the second ended")
	close(gates[0].open)
	close(gates[2].open)
	var done []*restoreJob
	deadline := time.After(time.Minute)
	for len(done) < 3 {
		select {
		case <-woken:
			done = append(done, u.drain()...)
		case <-deadline:
			t.Fatalf("drained %d of 3 jobs", len(done))
		}
	}
	for i, j := range jobs {
		if j.err != nil {
			t.Fatalf("job %d: %v", i, j.err)
		}
		if off := j.ts.Offsets()[changelog.TopicPartition{Topic: updaterTestChangelog}]; off != n-1 {
			t.Fatalf("job %d restored up to offset %d, want %d", i, off, n-1)
		}
		if v, ok, err := kvOf(j).Get("k00999"); err != nil || !ok || v != "v999" {
			t.Fatalf("job %d: Get(k00999) = %q, %v, %v", i, v, ok, err)
		}
	}
	if u.restoring() {
		t.Fatal("the updater holds jobs after all were drained")
	}
}

// close cancels a running restore and hands back every job not drained.
func TestStateUpdaterClose(t *testing.T) {
	log := changelog.NewMemoryLog()
	fillLog(log, 1000)
	g := newGate(2)
	j := restoreTestJob(t, t.TempDir(), log, g, -1)
	defer j.t.Close()
	u := newStateUpdater(slog.New(slog.DiscardHandler), nil)
	u.add(context.Background(), j)
	<-g.reached
	go func() {
		<-j.ctx.Done() // close cancelled the restore held inside a batch's callback
		close(g.open)
	}()
	left := u.close()
	if len(left) != 1 || left[0] != j || !errors.Is(j.err, context.Canceled) {
		t.Fatalf("close returned %v (error %v), want the cancelled job", left, j.err)
	}
	// Added after close: handed back at once, cancelled.
	j2 := newJob(processor.TaskID{Partition: 3}, restoreStandby)
	j2.run = func(context.Context, *restoreJob) error { t.Error("ran after close"); return nil }
	u.add(context.Background(), j2)
	if d := u.drain(); len(d) != 1 || !errors.Is(d[0].err, context.Canceled) {
		t.Fatalf("job added after close: drained %v", d)
	}
}
