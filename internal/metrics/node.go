package metrics

import (
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/processor"
)

// Node holds one processor node's sensors (Java: stream-processor-node-metrics): the records
// the node processed, at DEBUG, and at source and terminal nodes (sinks, and processors with
// no children) the end-to-end latency of the records reaching it, at INFO (KIP-613): the
// task's cached wall-clock time when it processes the record minus the record's timestamp,
// in milliseconds. Its methods run on the goroutine processing the task.
type Node struct {
	Task processor.TaskID
	Name string
	// countProcess: record process-total (DEBUG); e2e: record the latency (source or
	// terminal node).
	countProcess, e2e bool
	processed         Op
	lat               latency
	// pend holds the latencies recorded since they were last published to lat, in plain
	// fields of the goroutine processing the task: Processed publishes them every pendMax
	// records, and the task at the end of each of its operations (Publish), so that a reader
	// misses at most the records of an operation still running. The atomics of lat then cost a
	// batch of records, not each one.
	pend pending
}

// pending is a batch of latencies not yet published: how many, their sum, least and largest.
type pending struct{ n, sum, min, max int64 }

// pendMax is the most latencies a node holds unpublished.
const pendMax = 64

// latency keeps a distribution's count, sum, and minimum and maximum over the window.
type latency struct {
	count, sum     atomic.Int64
	curMin, curMax atomic.Int64 // since the last sample
	ring           [samples]minMax
	next, n        int
}

type minMax struct {
	at       time.Time
	min, max int64
}

func (l *latency) reset() {
	l.curMin.Store(math.MaxInt64)
	l.curMax.Store(math.MinInt64)
}

func (l *latency) record(v int64) { l.add(pending{n: 1, sum: v, min: v, max: v}) }

// add records a batch of values.
func (l *latency) add(p pending) {
	l.count.Add(p.n)
	l.sum.Add(p.sum)
	for {
		m := l.curMin.Load()
		if p.min >= m || l.curMin.CompareAndSwap(m, p.min) {
			break
		}
	}
	for {
		m := l.curMax.Load()
		if p.max <= m || l.curMax.CompareAndSwap(m, p.max) {
			return
		}
	}
}

// tick takes a sample; the registry's lock held.
func (l *latency) tick(now time.Time) {
	l.ring[l.next] = minMax{at: now, min: l.curMin.Swap(math.MaxInt64), max: l.curMax.Swap(math.MinInt64)}
	l.next = (l.next + 1) % samples
	l.n = min(l.n+1, samples)
}

// LatencyStats are a latency's figures: Count values recorded since start, their average,
// and the least and largest of the last 30 s (Min and Max are 0 when none was recorded then).
type LatencyStats struct {
	Count    int64
	Avg      float64
	Min, Max int64
}

// stats reads l; the registry's lock held.
func (l *latency) stats(now time.Time) LatencyStats {
	s := LatencyStats{Count: l.count.Load()}
	if s.Count > 0 {
		s.Avg = float64(l.sum.Load()) / float64(s.Count)
	}
	lo, hi := l.curMin.Load(), l.curMax.Load()
	for i := 0; i < l.n; i++ {
		j := (l.next - 1 - i + samples) % samples
		if now.Sub(l.ring[j].at) > window {
			break
		}
		lo, hi = min(lo, l.ring[j].min), max(hi, l.ring[j].max)
	}
	if lo <= hi {
		s.Min, s.Max = lo, hi
	}
	return s
}

// Processed records that the node processes a record of timestamp tsMs at the task's cached
// wall-clock time wallMs; the latency reaches the readers at the next Publish (at the latest
// after pendMax records). n may be nil (nothing recorded).
func (n *Node) Processed(wallMs, tsMs int64) {
	if n == nil {
		return
	}
	if n.countProcess {
		n.processed.Count(1)
	}
	if n.e2e {
		v, p := wallMs-tsMs, &n.pend
		if p.n == 0 {
			p.min, p.max = v, v
		} else {
			p.min, p.max = min(p.min, v), max(p.max, v)
		}
		p.n++
		p.sum += v
		if p.n == pendMax {
			n.Publish()
		}
	}
}

// Publish makes the latencies Processed recorded since the last Publish visible to the
// registry's readers. The task calls it at the end of each operation that processes records,
// on the goroutine processing it. n may be nil.
func (n *Node) Publish() {
	if n == nil || n.pend.n == 0 {
		return
	}
	p := n.pend
	n.pend = pending{}
	n.lat.add(p)
}

type nodeKey struct {
	task processor.TaskID
	node string
}

// Node returns the sensors of the node of task (source or terminal: whether it records the
// end-to-end latency), creating them; nil when the level records nothing for it (below
// DEBUG, a node that is neither source nor terminal).
func (r *Registry) Node(task processor.TaskID, name string, sourceOrTerminal bool) *Node {
	if recordingOff || r == nil || r.Level < Debug && !sourceOrTerminal {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := nodeKey{task, name}
	if n := r.nodes[k]; n != nil {
		return n
	}
	n := &Node{Task: task, Name: name, countProcess: r.Level >= Debug, e2e: sourceOrTerminal}
	n.lat.reset()
	if r.nodes == nil {
		r.nodes = map[nodeKey]*Node{}
	}
	r.nodes[k] = n
	return n
}

// NodeSnapshot is one node's figures.
type NodeSnapshot struct {
	Task processor.TaskID
	Node string
	// Process counts the records processed (DEBUG; Total 0 below).
	Process OpStats
	// E2E is the end-to-end latency in ms (source and terminal nodes; Count 0 for others).
	E2E LatencyStats
}

// nodeSnapshots reads the nodes, by task and node; r.mu held.
func (r *Registry) nodeSnapshots(now time.Time) []NodeSnapshot {
	var out []NodeSnapshot
	for _, n := range r.nodes {
		out = append(out, NodeSnapshot{Task: n.Task, Node: n.Name, Process: n.processed.stats(now), E2E: n.lat.stats(now)})
	}
	slices.SortFunc(out, func(a, b NodeSnapshot) int {
		if c := a.Task.Compare(b.Task); c != 0 {
			return c
		}
		return strings.Compare(a.Node, b.Node)
	})
	return out
}

// tickNodes samples the nodes' sensors; r.mu held.
func (r *Registry) tickNodes(now time.Time) {
	for _, n := range r.nodes {
		n.processed.tick(now)
		n.lat.tick(now)
	}
}
