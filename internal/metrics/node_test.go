package metrics

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
)

// The node sensors against an independent count: latencies recorded from several goroutines
// (as tasks on several executors) give the count, the average of the values and their least
// and largest, at DEBUG with the processed records; an inner node records nothing at INFO and
// a terminal one only its latency.
func TestNodeSensors(t *testing.T) {
	r := New("n", Debug)
	task := processor.TaskID{Subtopology: 1, Partition: 2}
	n := r.Node(task, "Sink", true)
	inner := r.Node(task, "P", false)
	const per, workers = 500, 4
	vals := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		rng := rand.New(rand.NewPCG(uint64(w), 9))
		for range per {
			vals[w] = append(vals[w], rng.Int64N(10_000)-100)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, v := range vals[w] {
				n.Processed(1_000_000, 1_000_000-v)
				inner.Processed(1_000_000, 0)
			}
		}()
	}
	wg.Wait()
	var sum, lo, hi int64 = 0, 1 << 62, -(1 << 62)
	for _, vs := range vals {
		for _, v := range vs {
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	s := r.Snapshot()
	if len(s.Nodes) != 2 || s.Nodes[0].Node != "P" || s.Nodes[1].Node != "Sink" {
		t.Fatalf("nodes %+v", s.Nodes)
	}
	sink, p := s.Nodes[1], s.Nodes[0]
	if sink.E2E.Count != per*workers || sink.E2E.Avg != float64(sum)/float64(per*workers) || sink.E2E.Min != lo || sink.E2E.Max != hi ||
		sink.Process.Total != per*workers {
		t.Errorf("sink: %+v, want %d records, avg %v, min %d, max %d", sink, per*workers, float64(sum)/float64(per*workers), lo, hi)
	}
	if p.E2E != (LatencyStats{}) || p.Process.Total != per*workers {
		t.Errorf("inner node: %+v, want %d processed and no latency", p, per*workers)
	}

	info := New("n", Info)
	if info.Node(task, "P", false) != nil {
		t.Error("an inner node's sensor at INFO")
	}
	src := info.Node(task, "Source", true)
	src.Processed(50, 20)
	src.Processed(50, 45)
	if got := info.Snapshot().Nodes; len(got) != 1 || got[0].Process.Total != 0 || got[0].E2E != (LatencyStats{Count: 2, Avg: 17.5, Min: 5, Max: 30}) {
		t.Errorf("INFO source node: %+v", got)
	}
	var none *Node
	none.Processed(1, 0) // a nil sensor records nothing
}

// BenchmarkNodeProcessed is the cost of one record's sensors at a terminal node at INFO (the
// end-to-end latency) and at DEBUG (with the processed count).
func BenchmarkNodeProcessed(b *testing.B) {
	for _, level := range []Level{Info, Debug} {
		b.Run(level.String(), func(b *testing.B) {
			n := New("b", level).Node(processor.TaskID{}, "Sink", true)
			for i := 0; b.Loop(); i++ {
				n.Processed(int64(i), int64(i&1023))
			}
		})
	}
}
