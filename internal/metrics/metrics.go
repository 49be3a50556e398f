// Package metrics records Kafka Streams' metric groups (client, thread, task, state store) for
// one application instance: the stream threads count and time their operations into plain
// atomic fields, publish their tasks' figures a few times a second, and the registry turns
// them into a typed snapshot (KafkaStreams.Metrics) and into Prometheus families when a
// registry scrapes it (it is a prometheus.Collector). metrics.recording.level decides what is
// recorded, as in Java: INFO the client, thread and cheap task figures; DEBUG adds the
// task-level families and the state-store latencies (a clock read per store call); TRACE adds
// nothing more yet.
package metrics

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/processor"
)

// Level is metrics.recording.level.
type Level int

// The recording levels, in Java's order.
const (
	Info Level = iota
	Debug
	Trace
)

// String returns Java's name of the level.
func (l Level) String() string {
	switch l {
	case Debug:
		return "DEBUG"
	case Trace:
		return "TRACE"
	}
	return "INFO"
}

// ParseLevel parses metrics.recording.level (case-insensitive; "" is INFO).
func ParseLevel(s string) (Level, error) {
	switch strings.ToUpper(s) {
	case "", "INFO":
		return Info, nil
	case "DEBUG":
		return Debug, nil
	case "TRACE":
		return Trace, nil
	}
	return Info, fmt.Errorf("unknown recording level %q (INFO, DEBUG or TRACE)", s)
}

// window is how far back rates and maxima look (Java: metrics.num.samples 2 of
// metrics.sample.window.ms 30 s; we keep 30 one-second samples).
const (
	window     = 30 * time.Second
	sampleStep = time.Second
	samples    = int(window/sampleStep) + 1
)

// Op counts and times one operation (Java: a sensor with <op>-total, <op>-rate,
// <op>-latency-avg and <op>-latency-max). Record may be called from several goroutines.
type Op struct {
	count   atomic.Int64 // events (records for process, calls otherwise)
	timed   atomic.Int64 // calls timed
	sumNs   atomic.Int64
	curMax  atomic.Int64 // the largest latency since the last sample
	ring    [samples]sample
	next, n int
}

type sample struct {
	at    time.Time
	count int64
	max   int64
}

// Record adds n events that took d together (one timed call).
func (o *Op) Record(n int64, d time.Duration) {
	if recordingOff {
		return
	}
	o.count.Add(n)
	o.timed.Add(1)
	ns := int64(d)
	o.sumNs.Add(ns)
	for {
		m := o.curMax.Load()
		if ns <= m || o.curMax.CompareAndSwap(m, ns) {
			return
		}
	}
}

// Count adds n events without timing them.
func (o *Op) Count(n int64) {
	if !recordingOff {
		o.count.Add(n)
	}
}

// Total returns the events recorded.
func (o *Op) Total() int64 { return o.count.Load() }

// tick takes a sample; the registry's lock held.
func (o *Op) tick(now time.Time) {
	o.ring[o.next] = sample{at: now, count: o.count.Load(), max: o.curMax.Swap(0)}
	o.next = (o.next + 1) % samples
	o.n = min(o.n+1, samples)
}

// OpStats is an Op's figures at one time.
type OpStats struct {
	Total      int64
	Rate       float64 // events per second over the window
	LatencyAvg time.Duration
	LatencyMax time.Duration // over the window
}

// stats reads o; the registry's lock held.
func (o *Op) stats(now time.Time) OpStats {
	s := OpStats{Total: o.count.Load()}
	if t := o.timed.Load(); t > 0 {
		s.LatencyAvg = time.Duration(o.sumNs.Load() / t)
	}
	mx := o.curMax.Load()
	oldest := -1
	for i := 0; i < o.n; i++ {
		j := (o.next - 1 - i + samples) % samples
		if now.Sub(o.ring[j].at) > window {
			break
		}
		mx = max(mx, o.ring[j].max)
		oldest = j
	}
	if oldest >= 0 {
		if el := now.Sub(o.ring[oldest].at).Seconds(); el > 0 {
			s.Rate = float64(s.Total-o.ring[oldest].count) / el
		}
	}
	s.LatencyMax = time.Duration(mx)
	return s
}

// Registry holds the sensors of one application instance.
type Registry struct {
	AppID string
	Level Level
	// ClientState returns the instance's state name and its alive and failed stream threads.
	ClientState func() (state string, alive, failed int)

	famOnce sync.Once
	fams    *families

	// asyncCalls is the latency histogram of async steps' calls (AsyncCall).
	asyncCalls asyncHistogram

	mu       sync.Mutex
	threads  map[string]*Thread
	stores   map[storeKey]*StoreOps
	nodes    map[nodeKey]*Node
	lastTick time.Time
	errors   []ErrorEvent // the last maxErrors, oldest first
}

// maxErrors is how many recent errors the registry keeps.
const maxErrors = 32

// ErrorEvent is an error the instance met: a thread's failure or a record a handler decided
// about.
type ErrorEvent struct {
	Time time.Time
	// Kind is "thread", "deserialization", "processing" or "production"; Where names the
	// thread, node or topic; Response is the handler's answer ("CONTINUE", "FAIL") or the
	// thread's fate.
	Kind, Where, Response, Message string
}

// RecordError remembers e (the last maxErrors are kept).
func (r *Registry) RecordError(e ErrorEvent) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	r.mu.Lock()
	if len(r.errors) == maxErrors {
		r.errors = append(r.errors[:0], r.errors[1:]...)
	}
	r.errors = append(r.errors, e)
	r.mu.Unlock()
}

// New returns an empty registry.
func New(appID string, level Level) *Registry {
	return &Registry{AppID: appID, Level: level, threads: map[string]*Thread{}, stores: map[storeKey]*StoreOps{}}
}

// Thread returns the sensors of the stream thread name, creating them; a replaced thread of
// the same name keeps counting into them.
func (r *Registry) Thread(name string) *Thread {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.threads[name]; t != nil {
		return t
	}
	t := &Thread{Name: name, Start: time.Now(), reg: r, restores: map[restoreKey]*restoreProgress{}}
	r.threads[name] = t
	return t
}

// Thread holds one stream thread's sensors (Java: stream-thread-metrics).
type Thread struct {
	Name  string
	Start time.Time
	reg   *Registry
	// Process counts records processed and times processing passes; Poll counts polls of
	// the fetched records; Commit and Punctuate count and time commits and punctuator calls.
	Process, Poll, Commit, Punctuate Op
	TasksCreated, TasksClosed        atomic.Int64
	// DeadLetters counts the dead-letter records of failed sends (the tasks count theirs).
	DeadLetters atomic.Int64
	// Restored counts changelog records restored into active tasks' stores.
	Restored atomic.Int64

	state    atomic.Value // string
	tasks    []TaskStats  // published; reg.mu
	restores map[restoreKey]*restoreProgress
}

// SetState records the thread's state name.
func (t *Thread) SetState(s string) { t.state.Store(s) }

type restoreKey struct {
	task  string
	topic string
	part  int32
}

type restoreProgress struct {
	store           string
	start, end, pos int64
	restored        int64
	done            bool
}

// RestoreStart records that task starts restoring changelog partition topic/part of store
// from offset start to end (exclusive).
func (t *Thread) RestoreStart(task, store, topic string, part int32, start, end int64) {
	t.reg.mu.Lock()
	t.restores[restoreKey{task, topic, part}] = &restoreProgress{store: store, start: start, end: end, pos: start}
	t.reg.mu.Unlock()
}

// RestoreBatch records n records restored up to offset last.
func (t *Thread) RestoreBatch(task, topic string, part int32, last, n int64) {
	t.Restored.Add(n)
	t.reg.mu.Lock()
	if p := t.restores[restoreKey{task, topic, part}]; p != nil {
		p.pos, p.restored = last+1, p.restored+n
	}
	t.reg.mu.Unlock()
}

// RestoreEnd records the end of a partition's restore.
func (t *Thread) RestoreEnd(task, topic string, part int32) {
	t.reg.mu.Lock()
	if p := t.restores[restoreKey{task, topic, part}]; p != nil {
		p.done, p.pos = true, p.end
	}
	t.reg.mu.Unlock()
}

// TaskStats are one task's figures as its thread last published them.
type TaskStats struct {
	ID processor.TaskID
	// Kind is "active", "restoring" or "standby".
	Kind string
	// Partitions are the input partitions, sorted.
	Partitions []Partition
	// Processed, Dropped, DeadLetters, Enforced: records processed, dropped, sent to the
	// dead-letter topic, processed under enforced processing (max.task.idle.ms passed).
	Processed, Dropped, DeadLetters, Enforced int64
	// Buffered is the records in the task's partition queues; Lag the records on the broker
	// not fetched yet (-1 unknown).
	Buffered int
	Lag      int64
	// Restored and RestoreRemaining: changelog records restored into the task's stores and
	// still to restore (KIP-869).
	Restored, RestoreRemaining int64
	// ProcessRate is records per second over the window (filled by the snapshot).
	ProcessRate float64
	processOp   *Op
	// Async: the task runs async steps; AsyncInFlight their calls running, AsyncQueued the
	// records waiting for their key or a slot, AsyncPaused the total time the task took no
	// input because a step was full.
	Async                      bool
	AsyncInFlight, AsyncQueued int
	AsyncPaused                time.Duration
}

// Partition is a topic partition.
type Partition struct {
	Topic     string
	Partition int32
}

// PublishTasks replaces the thread's published task figures (called by the thread a few
// times a second); ops holds a counter per task id the registry keeps for the process rate.
func (t *Thread) PublishTasks(tasks []TaskStats) {
	now := time.Now()
	r := t.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := map[processor.TaskID]*Op{}
	for _, ts := range t.tasks {
		prev[ts.ID] = ts.processOp
	}
	for i := range tasks {
		ts := &tasks[i]
		op := prev[ts.ID]
		if op == nil {
			op = &Op{}
		}
		op.count.Store(ts.Processed)
		ts.processOp = op
		for k, p := range t.restores {
			if k.task == ts.ID.String() {
				ts.Restored += p.restored
				if !p.done {
					ts.RestoreRemaining += max(p.end-p.pos, 0)
				}
			}
		}
	}
	t.tasks = tasks
	r.tickLocked(now)
}

// tickLocked samples every Op once per sampleStep; r.mu held.
func (r *Registry) tickLocked(now time.Time) {
	if now.Sub(r.lastTick) < sampleStep {
		return
	}
	r.lastTick = now
	for _, t := range r.threads {
		for _, o := range []*Op{&t.Process, &t.Poll, &t.Commit, &t.Punctuate} {
			o.tick(now)
		}
		for _, ts := range t.tasks {
			ts.processOp.tick(now)
		}
	}
	for _, s := range r.stores {
		for i := range s.ops {
			s.ops[i].tick(now)
		}
		s.hitRatio.tick(now)
	}
	r.tickNodes(now)
}

// StoreOp names a state-store operation (Java: the store-level sensors).
type StoreOp int

// The store operations timed at DEBUG.
const (
	Put StoreOp = iota
	PutIfAbsent
	PutAll
	Get
	Delete
	Range
	PrefixScan
	All
	Flush
	numStoreOps
)

var storeOpNames = [numStoreOps]string{"put", "put-if-absent", "put-all", "get", "delete", "range", "prefix-scan", "all", "flush"}

// String returns Java's name of the operation.
func (o StoreOp) String() string { return storeOpNames[o] }

type storeKey struct {
	task  processor.TaskID
	store string
}

// StoreOps are one store's operation sensors.
type StoreOps struct {
	Task        processor.TaskID
	Store, Type string
	ops         [numStoreOps]Op
	// hits and misses count the reads of the store's record cache (written by the task's
	// goroutine only); hitRatio is the hit ratio recorded at each hit, scaled by ratioScale.
	hits, misses int64
	hitRatio     latency
}

// ratioScale turns a ratio into the integer the latency sensor keeps (six decimals).
const ratioScale = 1e6

// CacheGet records a read of the store's record cache (DEBUG): on a hit, the ratio of hits to
// reads so far, as Java's NamedCache records its hit-ratio sensor (on hits only). Called by
// the goroutine processing the task.
func (s *StoreOps) CacheGet(hit bool) {
	if !hit {
		s.misses++
		return
	}
	s.hits++
	s.hitRatio.record(int64(math.Round(float64(s.hits) / float64(s.hits+s.misses) * ratioScale)))
}

// Op returns the sensor of operation o.
func (s *StoreOps) Op(o StoreOp) *Op { return &s.ops[o] }

// Store returns the sensors of store in task (type: Java's store type tag, e.g. "pebble",
// "in-memory"); nil below DEBUG (nothing is recorded).
func (r *Registry) Store(task processor.TaskID, store, typ string) *StoreOps {
	if recordingOff || r == nil || r.Level < Debug {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := storeKey{task, store}
	if s := r.stores[k]; s != nil {
		return s
	}
	s := &StoreOps{Task: task, Store: store, Type: typ}
	s.hitRatio.reset()
	r.stores[k] = s
	return s
}

// Snapshot is the registry's figures at one time.
type Snapshot struct {
	Time                 time.Time
	State                string
	Level                Level
	AliveThreads, Failed int
	Threads              []ThreadSnapshot
	Stores               []StoreSnapshot
	Nodes                []NodeSnapshot
	Errors               []ErrorEvent // newest last
}

// ThreadSnapshot is one thread's figures.
type ThreadSnapshot struct {
	Name, State                      string
	Start                            time.Time
	Process, Poll, Commit, Punctuate OpStats
	TasksCreated, TasksClosed        int64
	DeadLetters, Restored            int64
	Tasks                            []TaskStats
	th                               *Thread
}

// StoreSnapshot is one store's figures (DEBUG).
type StoreSnapshot struct {
	Task        processor.TaskID
	Store, Type string
	Ops         map[string]OpStats // by Java's operation name; operations never called left out
	// CacheHitRatio is the record cache's hit ratio (recorded at each hit; Count 0 when the
	// store has no cache or no hit): its average since the task started, its least and
	// largest over the window.
	CacheHitRatio RatioStats
}

// RatioStats are a ratio sensor's figures.
type RatioStats struct {
	Count         int64
	Avg, Min, Max float64
}

// Snapshot reads the registry.
func (r *Registry) Snapshot() Snapshot {
	now := time.Now()
	s := Snapshot{Time: now, Level: r.Level, State: "CREATED"}
	if r.ClientState != nil {
		s.State, s.AliveThreads, s.Failed = r.ClientState()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Errors = slices.Clone(r.errors)
	for _, t := range r.threads {
		st, _ := t.state.Load().(string)
		ts := ThreadSnapshot{Name: t.Name, State: st, Start: t.Start, Process: t.Process.stats(now), Poll: t.Poll.stats(now),
			Commit: t.Commit.stats(now), Punctuate: t.Punctuate.stats(now), TasksCreated: t.TasksCreated.Load(),
			TasksClosed: t.TasksClosed.Load(), DeadLetters: t.DeadLetters.Load(), Restored: t.Restored.Load(), th: t}
		for _, task := range t.tasks {
			task.ProcessRate = task.processOp.stats(now).Rate
			task.processOp = nil
			task.Partitions = slices.Clone(task.Partitions)
			ts.Tasks = append(ts.Tasks, task)
		}
		s.Threads = append(s.Threads, ts)
	}
	slices.SortFunc(s.Threads, func(a, b ThreadSnapshot) int { return strings.Compare(a.Name, b.Name) })
	for _, st := range r.stores {
		ss := StoreSnapshot{Task: st.Task, Store: st.Store, Type: st.Type, Ops: map[string]OpStats{}}
		if hr := st.hitRatio.stats(now); hr.Count > 0 {
			ss.CacheHitRatio = RatioStats{Count: hr.Count, Avg: hr.Avg / ratioScale, Min: float64(hr.Min) / ratioScale, Max: float64(hr.Max) / ratioScale}
		}
		for i := range st.ops {
			if st.ops[i].count.Load() > 0 {
				ss.Ops[StoreOp(i).String()] = st.ops[i].stats(now)
			}
		}
		s.Stores = append(s.Stores, ss)
	}
	s.Nodes = r.nodeSnapshots(now)
	slices.SortFunc(s.Stores, func(a, b StoreSnapshot) int {
		if c := a.Task.Compare(b.Task); c != 0 {
			return c
		}
		return strings.Compare(a.Store, b.Store)
	})
	return s
}

// asyncBuckets are the upper bounds (seconds) of the async call latency histogram.
var asyncBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// asyncHistogram counts call latencies into asyncBuckets (atomics: calls end on the tasks'
// goroutines of every thread).
type asyncHistogram struct {
	counts [15]atomic.Uint64 // per bucket, the last one for +Inf
	count  atomic.Uint64
	sumNs  atomic.Int64
}

// AsyncCall records one finished call of an async step that took d.
func (r *Registry) AsyncCall(d time.Duration) {
	if recordingOff || r == nil {
		return
	}
	h := &r.asyncCalls
	sec := d.Seconds()
	i := 0
	for i < len(asyncBuckets) && sec > asyncBuckets[i] {
		i++
	}
	h.counts[i].Add(1)
	h.count.Add(1)
	h.sumNs.Add(int64(d))
}

// AsyncCalls returns the number of finished async calls and their total duration.
func (r *Registry) AsyncCalls() (uint64, time.Duration) {
	return r.asyncCalls.count.Load(), time.Duration(r.asyncCalls.sumNs.Load())
}
