package task_test

import (
	"flag"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/internal/topology"
	"math/rand"
	"strings"
	"syscall"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/internal/wc"
	"github.com/kstreams-go/kstreams/processor"
)

// benchLines returns n lines of 10 words drawn from a Zipf distribution over a vocabulary of
// 100 000 synthetic words (fixed seed), as bench/cmd/wcbench generates them.
func benchLines(n int) []string {
	r := rand.New(rand.NewSource(1))
	seen := map[string]bool{}
	var vocab []string
	b := make([]byte, 10)
	for len(vocab) < 100_000 {
		l := 3 + r.Intn(8)
		for i := 0; i < l; i++ {
			b[i] = byte('a' + r.Intn(26))
		}
		if w := string(b[:l]); !seen[w] {
			seen[w] = true
			vocab = append(vocab, w)
		}
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	out := make([]string, n)
	var sb strings.Builder
	for i := range out {
		sb.Reset()
		for j := 0; j < 10; j++ {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(vocab[zipf.Uint64()])
		}
		out[i] = sb.String()
	}
	return out
}

// benchGuarantee is the processing.guarantee of the word count benchmarks, for instance
// -wordcount.guarantee=exactly_once_v2.
var benchGuarantee = flag.String("wordcount.guarantee", "at_least_once",
	"processing.guarantee of BenchmarkWordCountTasks: at_least_once or exactly_once_v2")

// sliceCollector keeps the records a task sends and counts its changelog records.
type sliceCollector struct {
	out       []task.OutRecord
	changelog int64
}

func (c *sliceCollector) Send(rec task.OutRecord) error {
	c.out = append(c.out, rec)
	if rec.Changelog {
		c.changelog++
	}
	return nil
}
func (c *sliceCollector) PartitionsFor(string) (int32, error) { return 1, nil }

// BenchmarkWordCountTasks runs the word count (bench/wc) as the runtime does for one
// partition: a task of the split sub-topology whose repartition records are fed to a task of
// the counting sub-topology (Pebble store in a temporary directory, 10 MiB record cache, a
// commit every 10 000 lines as the runtime's: the record caches flush, then under at-least-once
// the stores flush when 10 000 changelog records were written since their last flush (the
// checkpoint rule), under exactly-once the stores commit their transaction batches). The
// guarantee is -wordcount.guarantee (default at_least_once). One op is one 10-word line. Besides ns/op it reports
// cpu-ns/op, the CPU time (user and system, of every thread of the process: Pebble's and the
// garbage collector's too) per line, which a busy machine disturbs less than the elapsed time.
func BenchmarkWordCountTasks(b *testing.B) { benchWordCountTasks(b, nil) }

// BenchmarkWordCountTasksInfo is BenchmarkWordCountTasks with a metrics registry at INFO (the
// default recording level): what the sensors recorded per record (the end-to-end latency at
// source and terminal nodes) cost, beside it.
func BenchmarkWordCountTasksInfo(b *testing.B) {
	benchWordCountTasks(b, metrics.New("bench", metrics.Info))
}

// BenchmarkWordCountTasksDebug is BenchmarkWordCountTasks with a metrics registry at DEBUG:
// the per-task, per-node and per-store sensors Java records at DEBUG as well. Built with
// -tags kstreams_nometrics, BenchmarkWordCountTasksInfo and this one record nothing: the
// baseline of the recording cost (bench/run.sh recording).
func BenchmarkWordCountTasksDebug(b *testing.B) {
	benchWordCountTasks(b, metrics.New("bench", metrics.Debug))
}

func benchWordCountTasks(b *testing.B, reg *metrics.Registry) {
	lines := benchLines(100_000)
	topo, err := wc.Topology("lines", "counts")
	if err != nil {
		b.Fatal(err)
	}
	rc := cache.New(10 << 20)
	mk := func(group int, coll task.Collector) *task.Task {
		spec, err := task.SpecFromTopology(topology.Of(topo), "bench", []int{group})
		if err != nil {
			b.Fatal(err)
		}
		tk, err := task.New(processor.TaskID{Subtopology: group, Partition: 0}, spec, task.Config{
			ApplicationID: "bench", AppConfigs: map[string]string{"processing.guarantee": *benchGuarantee},
			StateDir: b.TempDir(), Collector: coll, Cache: rc, Clock: func() int64 { return 0 }, Metrics: reg,
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := tk.Init(); err != nil {
			b.Fatal(err)
		}
		return tk
	}
	split, counted := &sliceCollector{}, &sliceCollector{}
	t0, t1 := mk(0, split), mk(1, counted)
	defer t0.Close()
	defer t1.Close()
	eos := *benchGuarantee != "at_least_once"
	// commit is the runtime's regular commit of tk (internal/runtime: flushTasks, commitTxn).
	var checkpointed int64
	commit := func(tk *task.Task) {
		if err := tk.CommitCaches(); err != nil {
			b.Fatal(err)
		}
		if eos {
			for _, name := range tk.StoreNames() {
				if ts, ok := storeapi.FindTransactional(tk.Store(name)); ok {
					if err := ts.CommitTransaction(-1); err != nil {
						b.Fatal(err)
					}
				}
			}
			return
		}
		if tk == t1 && counted.changelog-checkpointed > 10_000 {
			checkpointed = counted.changelog
			if err := tk.FlushStores(); err != nil {
				b.Fatal(err)
			}
		}
	}
	var off0, off1 int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := t0.AddRecord(task.RawRecord{Topic: "lines", Offset: off0, Timestamp: off0, Value: []byte(lines[i%len(lines)])}); err != nil {
			b.Fatal(err)
		}
		off0++
		if _, err := t0.Process(0); err != nil {
			b.Fatal(err)
		}
		for _, r := range split.out {
			if err := t1.AddRecord(task.RawRecord{Topic: r.Topic, Offset: off1, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value, Headers: r.Headers}); err != nil {
				b.Fatal(err)
			}
			off1++
		}
		split.out = split.out[:0]
		for {
			ok, err := t1.Process(0)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
		}
		if i%10_000 == 9_999 {
			commit(t0)
			commit(t1)
		}
		counted.out = counted.out[:0]
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the user and system CPU time the process has used, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
