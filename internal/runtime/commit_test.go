package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/internal/wc"
	"github.com/kstreams-go/kstreams/processor"
)

// outLog is a task collector that keeps what every task sent, from any goroutine; it fails
// the sends of the task named by failFor.
type outLog struct {
	mu      sync.Mutex
	counts  map[string][]int64 // word -> counts sent to the output topic
	failFor map[int]error      // partition -> error of its sends
}

type taskOut struct {
	log       *outLog
	partition int
}

func (o taskOut) Send(rec task.OutRecord) error {
	o.log.mu.Lock()
	defer o.log.mu.Unlock()
	if err := o.log.failFor[o.partition]; err != nil {
		return err
	}
	if rec.Topic == "counts" {
		o.log.counts[string(rec.Key)] = append(o.log.counts[string(rec.Key)], int64(binary.BigEndian.Uint64(rec.Value)))
	}
	return nil
}
func (taskOut) PartitionsFor(string) (int32, error) { return 1, nil }

// countSpec is the word count's counting sub-topology (1, a cached count store) as a task spec.
func countSpec(t *testing.T) task.Spec {
	t.Helper()
	topo, err := wc.Topology("lines", "counts")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := task.SpecFromTopology(topology.Of(topo), "app", []int{1})
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// countingThread returns a thread with executors executors holding the word count's counting
// task (sub-topology 1, a cached count store) of each of partitions partitions, sharing one
// record cache as a thread's tasks do; partition p has processed words "w<p>-<j>" for j < 20,
// word j j+1 times, so the counts are only in the cache.
func countingThread(t *testing.T, executors, partitions int, out *outLog) *thread {
	t.Helper()
	spec := countSpec(t)
	cfg := Config{CommitInterval: time.Hour, Executors: executors}
	cfg.Group.RebalanceTimeout = time.Hour
	cfg.Task.MaxTaskIdleMs = -1
	th := paceThread(cfg)
	th.log = slog.New(slog.DiscardHandler)
	rc := cache.New(10 << 20)
	for p := range partitions {
		id := processor.TaskID{Subtopology: 1, Partition: p}
		tk, err := task.New(id, spec, task.Config{ApplicationID: "app", Collector: taskOut{out, p}, Cache: rc,
			AppConfigs: map[string]string{"processing.guarantee": "at_least_once"}, StateDir: t.TempDir(),
			Clock: func() int64 { return 0 }, Logger: th.log})
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Init(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tk.Close() })
		off := int64(0)
		for j := range 20 {
			w := []byte(fmt.Sprintf("w%d-%d", p, j))
			for range j + 1 {
				if err := tk.AddRecord(task.RawRecord{Topic: "app-counts-store-repartition", Partition: int32(p), Offset: off,
					Timestamp: off, Key: w, Value: w}); err != nil {
					t.Fatal(err)
				}
				off++
			}
		}
		for {
			ok, err := tk.Process(0)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
		}
		th.tm.tasks[id] = tk
	}
	return th
}

// A commit's cache flush on several executors: every task's cached counts reach the
// collector exactly once, with their final values, and the tasks need no commit after it;
// nothing is forwarded before the flush. Run under -race, it checks that the flushes of
// tasks sharing one record cache and one collector run safely side by side.
func TestCommitFlushesTheTasksCachesOnTheExecutors(t *testing.T) {
	for _, final := range []bool{false, true} {
		out := &outLog{counts: map[string][]int64{}}
		th := countingThread(t, 3, 6, out)
		if len(out.counts) != 0 {
			t.Fatalf("final=%v: %d words forwarded before the commit, want none (cached)", final, len(out.counts))
		}
		needed, _, err := th.flushTasks(final)
		if err != nil || !needed {
			t.Fatalf("final=%v: flushTasks = %v, %v; want true, nil", final, needed, err)
		}
		if len(out.counts) != 6*20 {
			t.Errorf("final=%v: %d words forwarded, want %d", final, len(out.counts), 6*20)
		}
		for p := range 6 {
			for j := range 20 {
				w := fmt.Sprintf("w%d-%d", p, j)
				if got := out.counts[w]; len(got) != 1 || got[0] != int64(j+1) {
					t.Errorf("final=%v: word %s forwarded %v, want [%d]", final, w, got, j+1)
				}
			}
		}
		for id, tk := range th.tm.tasks {
			if tk.CommitNeeded() {
				t.Errorf("final=%v: task %s still needs a commit", final, id)
			}
		}
	}
}

// A task whose flush fails fails the commit with its error, whichever executor flushed it.
func TestCommitFlushReturnsATasksError(t *testing.T) {
	errSend := errors.New("send refused")
	out := &outLog{counts: map[string][]int64{}, failFor: map[int]error{4: errSend}}
	th := countingThread(t, 3, 6, out)
	if _, _, err := th.flushTasks(false); !errors.Is(err, errSend) {
		t.Fatalf("flushTasks: %v, want the send error", err)
	}
}
