package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// hookProc calls hook with its task and the record's value for every record.
type hookProc struct {
	ctx  processor.ProcessorContext[string, string]
	hook func(id processor.TaskID, v string) error
}

func (p *hookProc) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	return nil
}
func (p *hookProc) Process(r processor.Record[string, string]) error {
	return p.hook(p.ctx.TaskID(), r.Value)
}
func (p *hookProc) Close() error { return nil }

// executorThread returns a thread with executors task executors and one task per partition
// of topic "in" (partitions tasks), each with records queued records "<partition>-<i>"; the
// tasks' processor calls hook.
func executorThread(t *testing.T, executors, partitions, records int, hook func(processor.TaskID, string) error) *thread {
	t.Helper()
	topo := processor.NewTopology()
	if err := topo.AddSource("src", []string{"in"}, processor.WithKeyDeserializer(serde.String()),
		processor.WithValueDeserializer(serde.String())); err != nil {
		t.Fatal(err)
	}
	sup := processor.ProcessorSupplierFunc[string, string, string, string](func() processor.Processor[string, string, string, string] {
		return &hookProc{hook: hook}
	})
	if err := topo.AddProcessor("p", sup, "src"); err != nil {
		t.Fatal(err)
	}
	spec, err := task.SpecFromTopology(topology.Of(topo), "app", []int{0})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{CommitInterval: time.Hour, Executors: executors, Observe: metrics.New("app", metrics.Info)}
	cfg.Group.RebalanceTimeout = time.Hour
	cfg.Task.MaxTaskIdleMs = -1
	th := paceThread(cfg)
	th.log = slog.New(slog.DiscardHandler)
	th.obs = cfg.Observe.Thread("t")
	th.lastCommit, th.pace.lastPoll = time.Now(), time.Now()
	for p := range partitions {
		id := processor.TaskID{Partition: p}
		tk, err := task.New(id, spec, task.Config{ApplicationID: "app", Collector: nopOut{}, AppConfigs: map[string]string{},
			Logger: th.log})
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Init(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tk.Close() })
		for i := range records {
			if err := tk.AddRecord(task.RawRecord{Topic: "in", Partition: int32(p), Offset: int64(i), Timestamp: int64(i),
				Key: []byte("k"), Value: fmt.Appendf(nil, "%d-%d", p, i)}); err != nil {
				t.Fatal(err)
			}
		}
		th.tm.tasks[id] = tk
	}
	return th
}

// processAll runs passes until no task has records queued; it fails the test after 1 000.
func processAll(t *testing.T, th *thread) int {
	t.Helper()
	total := 0
	for range 1000 {
		n, err := th.processOnce()
		if err != nil {
			t.Fatal(err)
		}
		total += n
		th.adaptPace(n, false)
		left := false
		for _, tk := range th.tm.tasks {
			left = left || tk.HasRecordsQueued()
		}
		if !left {
			return total
		}
	}
	t.Fatal("records left after 1 000 passes")
	return 0
}

// With two executors, two tasks are processed at the same time: each task's first record
// waits until the other task's first record started (it would wait for ever, and the test
// time out, were the tasks processed one after another).
func TestExecutorsProcessTasksInParallel(t *testing.T) {
	var entered [2]chan struct{}
	for i := range entered {
		entered[i] = make(chan struct{})
	}
	var once [2]sync.Once
	th := executorThread(t, 2, 2, 1, func(id processor.TaskID, _ string) error {
		once[id.Partition].Do(func() { close(entered[id.Partition]) })
		select {
		case <-entered[1-id.Partition]:
			return nil
		case <-time.After(30 * time.Second):
			return errors.New("the other task was not processed meanwhile")
		}
	})
	if n := processAll(t, th); n != 2 {
		t.Fatalf("processed %d records, want 2", n)
	}
}

// Many tasks on four executors: every record is processed once, each task's records in offset
// order, and no task is ever processed by two goroutines at once.
func TestExecutorsHoldEachTaskAlone(t *testing.T) {
	const partitions, records = 8, 200
	var mu sync.Mutex
	seen := map[int][]string{}
	var inTask [partitions]atomic.Int32
	var overlap atomic.Bool
	th := executorThread(t, 4, partitions, records, func(id processor.TaskID, v string) error {
		if inTask[id.Partition].Add(1) != 1 {
			overlap.Store(true)
		}
		mu.Lock()
		seen[id.Partition] = append(seen[id.Partition], v)
		mu.Unlock()
		inTask[id.Partition].Add(-1)
		return nil
	})
	if n := processAll(t, th); n != partitions*records {
		t.Fatalf("processed %d records, want %d", n, partitions*records)
	}
	if overlap.Load() {
		t.Fatal("a task was processed by two executors at once")
	}
	for p := range partitions {
		if len(seen[p]) != records {
			t.Fatalf("task 0_%d processed %d records, want %d", p, len(seen[p]), records)
		}
		for i, v := range seen[p] {
			if want := fmt.Sprintf("%d-%d", p, i); v != want {
				t.Fatalf("task 0_%d: record %d is %q, want %q", p, i, v, want)
			}
		}
	}
}

// A failing task ends the pass with its error; the other executors stop after their current
// record, so a task's records after the failure stay queued.
func TestExecutorsFirstErrorEndsThePass(t *testing.T) {
	boom := errors.New("boom")
	th := executorThread(t, 2, 4, 50, func(id processor.TaskID, v string) error {
		if v == "2-3" {
			return boom
		}
		return nil
	})
	th.pace.perTask = 100
	var err error
	for range 10 {
		if _, err = th.processOnce(); err != nil {
			break
		}
	}
	if !errors.Is(err, boom) {
		t.Fatalf("pass error %v, want boom", err)
	}
	if !th.tm.tasks[processor.TaskID{Partition: 2}].HasRecordsQueued() {
		t.Fatal("the failed task's later records were processed")
	}
}

// An interactive query waiting for a task's lock reads between two records of that task while
// the executors process: the processor of task 0_0 waits in record 1 until the query waits
// for the task's lock, and the query reads before record 2 starts.
func TestExecutorsQueryBetweenRecords(t *testing.T) {
	var mu sync.Mutex
	var events []string
	note := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	var th *thread
	queried := make(chan struct{})
	th = executorThread(t, 2, 2, 3, func(id processor.TaskID, v string) error {
		if id.Partition != 0 {
			return nil
		}
		note("record " + v)
		if v == "0-1" {
			l := th.view.taskLock(id)
			go func() {
				defer close(queried)
				l.lockShared()
				note("query")
				l.unlock()
			}()
			for deadline := time.Now().Add(30 * time.Second); l.waiters() == 0; {
				if time.Now().After(deadline) {
					return errors.New("the query never waited")
				}
				time.Sleep(time.Millisecond) // polling interval, bounded by the deadline
			}
		}
		return nil
	})
	th.pace.perTask = 10
	processAll(t, th)
	<-queried
	want := []string{"record 0-0", "record 0-1", "query", "record 0-2"}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", events, want)
	}
}

// TestForEachOnRunsEveryItemOnceOnBoundedGoroutines: the commit's cache and store flushes run
// through forEachOn; every task must be flushed exactly once, by at most n goroutines at a
// time.
func TestForEachOnRunsEveryItemOnceOnBoundedGoroutines(t *testing.T) {
	for _, n := range []int{0, 1, 2, 4, 100} {
		items := make([]int, 50)
		for i := range items {
			items[i] = i
		}
		var (
			seen          [50]atomic.Int32
			running, peak atomic.Int32
		)
		release := make(chan struct{})
		entered := make(chan struct{}, len(items))
		done := make(chan error, 1)
		go func() {
			done <- forEachOn(n, items, func(i int) error {
				r := running.Add(1)
				for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
				}
				entered <- struct{}{}
				<-release
				running.Add(-1)
				seen[i].Add(1)
				return nil
			})
		}()
		// Wait until as many items as goroutines are in f at once, then let them all go.
		want := max(min(n, len(items)), 1)
		for k := range want {
			select {
			case <-entered:
			case <-time.After(30 * time.Second):
				t.Fatalf("n=%d: only %d items in f at once, want %d (were they run one after another?)", n, k, want)
			}
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if p := peak.Load(); p != int32(want) {
			t.Errorf("n=%d: %d items ran at once, want %d", n, p, want)
		}
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Errorf("n=%d: item %d ran %d times, want once", n, i, c)
			}
		}
	}
}

// TestForEachOnStopsAtTheFirstError: the error is returned; on one goroutine the items after
// the failed one are skipped.
func TestForEachOnStopsAtTheFirstError(t *testing.T) {
	errBoom := errors.New("boom")
	for _, n := range []int{1, 3} {
		var ran atomic.Int32
		err := forEachOn(n, []int{0, 1, 2, 3, 4, 5, 6, 7}, func(i int) error {
			ran.Add(1)
			if i == 0 {
				return errBoom
			}
			return nil
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("n=%d: err %v, want boom", n, err)
		}
		if n == 1 && ran.Load() != 1 {
			t.Errorf("n=1: %d items ran, want 1 (in order, stopped at the first)", ran.Load())
		}
	}
}
