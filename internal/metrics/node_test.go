package metrics

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
)

// The node sensors against an independent count: latencies recorded by the goroutines of
// several tasks (each node by its task's goroutine, as executors do), while a reader takes
// snapshots, give each node its count, the average of its values and their least and largest
// once published, at DEBUG with the processed records; an inner node records nothing at INFO
// and a terminal one only its latency. Before Publish a reader misses at most pendMax-1 of them.
func TestNodeSensors(t *testing.T) {
	r := New("n", Debug)
	const per, workers = 500, 4
	vals := make([][]int64, workers)
	sinks, inners := make([]*Node, workers), make([]*Node, workers)
	for w := range workers {
		task := processor.TaskID{Subtopology: 1, Partition: w}
		sinks[w], inners[w] = r.Node(task, "Sink", true), r.Node(task, "P", false)
	}
	done := make(chan struct{})
	reader := make(chan struct{})
	go func() {
		defer close(reader)
		for {
			select {
			case <-done:
				return
			default:
				r.Snapshot()
			}
		}
	}()
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
				sinks[w].Processed(1_000_000, 1_000_000-v)
				inners[w].Processed(1_000_000, 0)
			}
		}()
	}
	wg.Wait()
	close(done)
	<-reader
	for _, n := range r.Snapshot().Nodes {
		if n.Node == "Sink" && (n.E2E.Count > per || n.E2E.Count < per-pendMax+1) {
			t.Errorf("task %s: %d latencies seen before Publish, want %d less at most %d", n.Task, n.E2E.Count, per, pendMax-1)
		}
	}
	for w := range workers {
		sinks[w].Publish()
	}
	s := r.Snapshot()
	if len(s.Nodes) != 2*workers {
		t.Fatalf("nodes %+v", s.Nodes)
	}
	for i, w := 0, 0; w < workers; i, w = i+2, w+1 {
		p, sink := s.Nodes[i], s.Nodes[i+1]
		if p.Node != "P" || sink.Node != "Sink" || sink.Task.Partition != w {
			t.Fatalf("nodes %+v", s.Nodes)
		}
		var sum, lo, hi int64 = 0, 1 << 62, -(1 << 62)
		for _, v := range vals[w] {
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		if sink.E2E.Count != per || sink.E2E.Avg != float64(sum)/float64(per) || sink.E2E.Min != lo || sink.E2E.Max != hi ||
			sink.Process.Total != per {
			t.Errorf("sink %d: %+v, want %d records, avg %v, min %d, max %d", w, sink, per, float64(sum)/float64(per), lo, hi)
		}
		if p.E2E != (LatencyStats{}) || p.Process.Total != per {
			t.Errorf("inner node %d: %+v, want %d processed and no latency", w, p, per)
		}
	}

	task := processor.TaskID{Subtopology: 1, Partition: 2}
	info := New("n", Info)
	if info.Node(task, "P", false) != nil {
		t.Error("an inner node's sensor at INFO")
	}
	src := info.Node(task, "Source", true)
	src.Processed(50, 20)
	src.Processed(50, 45)
	src.Publish()
	if got := info.Snapshot().Nodes; len(got) != 1 || got[0].Process.Total != 0 || got[0].E2E != (LatencyStats{Count: 2, Avg: 17.5, Min: 5, Max: 30}) {
		t.Errorf("INFO source node: %+v", got)
	}
	var none *Node
	none.Processed(1, 0) // a nil sensor records nothing
	none.Publish()
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
