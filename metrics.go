package kstreams

import (
	"time"

	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/runtime"
	"github.com/kstreams-go/kstreams/processor"
)

// Metrics is a snapshot of an instance's metrics, read in process (no Prometheus scrape):
// Kafka Streams' client, thread, task and state-store groups. Counts are totals since the
// instance (or, for a task, the task) started; rates are per second over the last 30 s.
// Figures of the stream threads' tasks are at most 100 ms old. The same figures are exported
// to Config.Registry under Prometheus names (see docs/metrics.md). Java: KafkaStreams.metrics().
type Metrics struct {
	// Time is when the snapshot was taken.
	Time time.Time
	// State is the instance's state (Java: state / client-state).
	State State
	// RecordingLevel is metrics.recording.level: "INFO", "DEBUG" or "TRACE".
	RecordingLevel string
	// AliveStreamThreads and FailedStreamThreads count the stream threads alive and those
	// that died of an error, replaced or not (Java: alive-stream-threads,
	// failed-stream-threads).
	AliveStreamThreads, FailedStreamThreads int
	// Threads are the stream threads, by name.
	Threads []ThreadMetrics
	// Stores are the state stores' call latencies: recorded at DEBUG and TRACE only, sorted
	// by task and store.
	Stores []StoreMetrics
	// Nodes are the processor nodes that record: source and terminal nodes (sinks, processors
	// without children) always, for the end-to-end latency, every node at DEBUG and TRACE;
	// sorted by task and node.
	Nodes []NodeMetrics
}

// NodeMetrics are one processor node's figures in one task. Java: stream-processor-node-metrics.
type NodeMetrics struct {
	// TaskID and Node name the node.
	TaskID processor.TaskID
	Node   string
	// ProcessedRecords counts the records the node processed and ProcessRate them per second
	// over the last 30 s; recorded at DEBUG and TRACE, 0 at INFO (Java: process-total,
	// process-rate).
	ProcessedRecords int64
	ProcessRate      float64
	// E2ERecords counts the records whose end-to-end latency was recorded: at source and
	// terminal nodes, every record reaching them (0 at other nodes). The latency of a record is
	// the wall-clock time when the task processes it minus its timestamp, in whole ms (can be
	// negative for a timestamp in the future). E2ELatencyAvg is the average since the task
	// started, E2ELatencyMin and E2ELatencyMax the least and largest over the last 30 s (0 when
	// no record came then). Java: record-e2e-latency-avg, -min, -max (KIP-613).
	E2ERecords                                  int64
	E2ELatencyAvg, E2ELatencyMin, E2ELatencyMax time.Duration
}

// ThreadMetrics are one stream thread's figures. Java: stream-thread-metrics.
type ThreadMetrics struct {
	// Name is "<client.id>-StreamThread-<n>"; State Java's name of its state ("RUNNING").
	Name, State string
	// StartTime is when the thread started (Java: thread-start-time).
	StartTime time.Time
	// Process counts records processed and times processing passes (latency per record);
	// Poll counts and times the polls of fetched records; Commit the commits; Punctuate the
	// punctuator calls. Java: process-, poll-, commit-, punctuate- total, rate, latency-avg,
	// latency-max.
	Process, Poll, Commit, Punctuate OperationMetrics
	// TasksCreated and TasksClosed count active tasks (Java: task-created-total,
	// task-closed-total).
	TasksCreated, TasksClosed int64
	// RestoredRecords counts changelog records restored into the thread's active tasks
	// (Java: stream-state-updater-metrics restore-total, KIP-869).
	RestoredRecords int64
	// DeadLetters counts dead-letter records of output the producer failed to send (the
	// tasks count the others).
	DeadLetters int64
	// Tasks are the thread's tasks: active, then restoring, then standby, each by id.
	Tasks []TaskMetrics
}

// OperationMetrics count and time one operation.
type OperationMetrics struct {
	// Total is the number of events (records for processing, calls otherwise) since start;
	// Rate events per second over the last 30 s.
	Total int64
	Rate  float64
	// LatencyAvg is the average time per event since start; LatencyMax the longest call in
	// the last 30 s.
	LatencyAvg, LatencyMax time.Duration
}

// TaskMetrics are one task's figures. Java: stream-task-metrics.
type TaskMetrics struct {
	// TaskID is the task; Kind is "active", "restoring" (an active task restoring its stores,
	// not processing yet) or "standby".
	TaskID processor.TaskID
	Kind   string
	// Partitions are the task's input partitions, sorted (none for a standby).
	Partitions []TopicPartition
	// ProcessedRecords counts records processed (Java: process-total); ProcessRate is records
	// per second over the last 30 s (Java: process-rate).
	ProcessedRecords int64
	ProcessRate      float64
	// DroppedRecords counts records dropped: negative timestamps and records a handler
	// continued past (Java: dropped-records-total). DeadLetters counts those sent to the
	// dead-letter topic. EnforcedProcessing counts records processed while an input
	// partition was empty after max.task.idle.ms (Java: enforced-processing-total).
	DroppedRecords, DeadLetters, EnforcedProcessing int64
	// BufferedRecords are the records waiting in the task's partition queues (Java:
	// active-buffer-count); Lag the records of its input partitions on the broker not fetched
	// yet, -1 when not known (Java: the consumer's records-lag, summed).
	BufferedRecords int
	Lag             int64
	// RestoredRecords and RestoreRemainingRecords count the changelog records restored into
	// the task's stores and those still to restore (Java: restore-total,
	// restore-remaining-records-total, KIP-869).
	RestoredRecords, RestoreRemainingRecords int64
}

// StoreMetrics are one state store's call figures (DEBUG). Java: stream-state-metrics.
type StoreMetrics struct {
	// TaskID and Store name the store; Type is "pebble" or "in-memory".
	TaskID      processor.TaskID
	Store, Type string
	// Operations by Java's operation name ("put", "put-if-absent", "put-all", "get",
	// "delete", "range", "all", "flush"); operations never called are left out. Java:
	// <op>-rate, <op>-latency-avg, <op>-latency-max.
	Operations map[string]OperationMetrics
	// CacheHitRatioAvg, CacheHitRatioMin and CacheHitRatioMax are the store's record-cache
	// hit ratio (0 to 1: hits over reads so far, taken at each hit; key-value stores with a
	// cache): the average since the task started, the least and largest over the last 30 s;
	// all 0 when the cache answered no read. Java: stream-record-cache-metrics hit-ratio-avg,
	// -min, -max.
	CacheHitRatioAvg, CacheHitRatioMin, CacheHitRatioMax float64
}

// Metrics returns a snapshot of the instance's metrics; before Start it has the state and no
// threads. Safe for concurrent use. Java: KafkaStreams.metrics().
func (k *KafkaStreams) Metrics() Metrics {
	s := k.obs.Snapshot()
	m := Metrics{Time: s.Time, State: k.State(), RecordingLevel: s.Level.String(), AliveStreamThreads: s.AliveThreads,
		FailedStreamThreads: s.Failed}
	for _, t := range s.Threads {
		tm := ThreadMetrics{Name: t.Name, State: t.State, StartTime: t.Start, Process: opMetrics(t.Process), Poll: opMetrics(t.Poll),
			Commit: opMetrics(t.Commit), Punctuate: opMetrics(t.Punctuate), TasksCreated: t.TasksCreated, TasksClosed: t.TasksClosed,
			RestoredRecords: t.Restored, DeadLetters: t.DeadLetters}
		for _, ts := range t.Tasks {
			task := TaskMetrics{TaskID: ts.ID, Kind: ts.Kind, ProcessedRecords: ts.Processed, ProcessRate: ts.ProcessRate,
				DroppedRecords: ts.Dropped, DeadLetters: ts.DeadLetters, EnforcedProcessing: ts.Enforced, BufferedRecords: ts.Buffered,
				Lag: ts.Lag, RestoredRecords: ts.Restored, RestoreRemainingRecords: ts.RestoreRemaining}
			for _, p := range ts.Partitions {
				task.Partitions = append(task.Partitions, TopicPartition{Topic: p.Topic, Partition: p.Partition})
			}
			tm.Tasks = append(tm.Tasks, task)
		}
		m.Threads = append(m.Threads, tm)
	}
	for _, n := range s.Nodes {
		m.Nodes = append(m.Nodes, NodeMetrics{TaskID: n.Task, Node: n.Node, ProcessedRecords: n.Process.Total, ProcessRate: n.Process.Rate,
			E2ERecords: n.E2E.Count, E2ELatencyAvg: time.Duration(n.E2E.Avg * float64(time.Millisecond)),
			E2ELatencyMin: time.Duration(n.E2E.Min) * time.Millisecond, E2ELatencyMax: time.Duration(n.E2E.Max) * time.Millisecond})
	}
	for _, st := range s.Stores {
		sm := StoreMetrics{TaskID: st.Task, Store: st.Store, Type: st.Type, Operations: map[string]OperationMetrics{},
			CacheHitRatioAvg: st.CacheHitRatio.Avg, CacheHitRatioMin: st.CacheHitRatio.Min, CacheHitRatioMax: st.CacheHitRatio.Max}
		for op, o := range st.Ops {
			sm.Operations[op] = opMetrics(o)
		}
		m.Stores = append(m.Stores, sm)
	}
	return m
}

func opMetrics(o metrics.OpStats) OperationMetrics {
	return OperationMetrics{Total: o.Total, Rate: o.Rate, LatencyAvg: o.LatencyAvg, LatencyMax: o.LatencyMax}
}

// initMetrics creates the instance's metrics registry at the configured recording level.
func (k *KafkaStreams) initMetrics() {
	level, _ := metrics.ParseLevel(k.cfg.MetricsRecordingLevel) // checked by Validate
	k.obs = metrics.New(k.cfg.ApplicationID, level)
	k.obs.ClientState = func() (string, int, int) {
		k.mu.Lock()
		defer k.mu.Unlock()
		alive := 0
		for _, st := range k.threads {
			if st != runtime.ThreadDead {
				alive++
			}
		}
		return k.state.String(), alive, k.failedThreads
	}
}

// recordHandled remembers an error a handler decided about, for the live page.
func (k *KafkaStreams) recordHandled(kind, where string, resp HandlerResponse, err error) {
	r := "FAIL"
	if resp == Continue {
		r = "CONTINUE"
	}
	k.obs.RecordError(metrics.ErrorEvent{Kind: kind, Where: where, Response: r, Message: err.Error()})
}

// validRecordingLevel reports whether s is a metrics.recording.level.
func validRecordingLevel(s string) bool {
	_, err := metrics.ParseLevel(s)
	return err == nil
}
