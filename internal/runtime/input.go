package runtime

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// The thread's input: its fetcher (internal/kafka/fetch) fetches every assigned partition in
// the background, one request per leader broker; each loop iteration moves the chunks fetched
// since the last one into the tasks' partition queues (no goroutine or channel per record or
// per partition). A partition whose queue holds more than buffered.records.per.partition
// records is paused (left out of the fetches) until its task worked the queue down. Java:
// StreamThread.pollRequests / addRecordsToTasks and the pause/resume of StreamTask.

// inputPartition is an assigned input partition of an active task.
type inputPartition struct {
	tp       kafka.TopicPartition
	id       processor.TaskID
	paused   bool
	lagGauge prometheus.Gauge
}

// addInput registers tp as an input partition of task id (its fetching starts with
// assignInputs).
func (th *thread) addInput(id processor.TaskID, tp kafka.TopicPartition) {
	th.in[tp] = &inputPartition{tp: tp, id: id}
	if t := th.tasks[id]; t != nil {
		if err := t.AddInputPartition(tp.Topic, tp.Partition); err != nil {
			th.log.Warn("declaring input partition", "task", id.String(), "partition", tp.String(), "error", err)
		}
	}
}

// assignInputs starts fetching tps from their committed offsets (read with require_stable, so
// under exactly-once a transaction of the previous owner that is still open is waited for;
// KIP-447), or where auto.offset.reset says when none is committed.
func (th *thread) assignInputs(tps []kafka.TopicPartition) error {
	if len(tps) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(th.ctx, th.rt.cfg.PrepareTimeout)
	defer cancel()
	committed, err := th.member.Committed(ctx, tps)
	if err != nil {
		if th.ctx.Err() != nil {
			return nil
		}
		return kafkaErr("fetch committed offsets", err)
	}
	start := make(map[kafka.TopicPartition]int64, len(tps))
	for _, tp := range tps {
		start[tp] = kafka.OffsetUnknown
		if o, ok := committed[tp]; ok && o.Offset >= 0 {
			start[tp] = o.Offset
		}
	}
	th.fetcher.Assign(start)
	return nil
}

// removeInputs stops fetching the input partitions of task id and forgets them.
func (th *thread) removeInputs(id processor.TaskID) {
	var tps []kafka.TopicPartition
	for tp, in := range th.in {
		if in.id == id {
			tps = append(tps, tp)
			delete(th.in, tp)
		}
	}
	if len(tps) > 0 {
		th.fetcher.Unassign(tps...)
	}
	delete(th.inputs, id)
	if m := th.rt.cfg.Metrics; m != nil {
		for _, tp := range tps {
			m.lag.DeletePartialMatch(prometheus.Labels{"thread": th.name, "topic": tp.Topic, "partition": itoa32(tp.Partition)})
		}
	}
}

// indexInputs lists each task's input partitions, sorted by topic and partition.
func (th *thread) indexInputs() {
	th.inputs = map[processor.TaskID][]*inputPartition{}
	for _, in := range th.in {
		th.inputs[in.id] = append(th.inputs[in.id], in)
	}
	for id := range th.inputs {
		ins := th.inputs[id]
		sort.Slice(ins, func(i, j int) bool {
			if ins[i].tp.Topic != ins[j].tp.Topic {
				return ins[i].tp.Topic < ins[j].tp.Topic
			}
			return ins[i].tp.Partition < ins[j].tp.Partition
		})
	}
}

// pollInput moves the chunks fetched since the last call into the tasks' queues and pauses the
// partitions whose queue is full. It returns the number of records moved, and the error of a
// partition that can no longer be fetched (auto.offset.reset=none, authorization), which is the
// thread's.
func (th *thread) pollInput() (int, error) {
	defer func(start time.Time) { th.obs.Poll.Record(1, time.Since(start)) }(time.Now())
	n := 0
	limit := th.rt.cfg.MaxBufferedPerPartition
	for _, c := range th.fetcher.Poll() {
		in := th.in[c.TP]
		if in == nil {
			continue // unassigned meanwhile
		}
		if c.Err != nil {
			return n, fmt.Errorf("input partition %s of task %s: %w", c.TP, in.id, c.Err)
		}
		t := th.tasks[in.id]
		if t == nil {
			continue
		}
		recs := c.Records
		err := t.AddRecords(c.TP.Topic, c.TP.Partition, len(recs), func(i int, rec *task.RawRecord) {
			r := &recs[i]
			*rec = task.RawRecord{Topic: c.TP.Topic, Partition: c.TP.Partition, Offset: r.Offset,
				Timestamp: r.Timestamp, Key: r.Key, Value: r.Value}
			for _, h := range r.Headers {
				rec.Headers.Add(h.Key, h.Value)
			}
		})
		th.fetcher.Recycle(recs) // copied into the queue
		if err != nil {
			// The record that became the head of an empty queue failed to deserialize (and
			// the handler said fail) or its timestamp could not be extracted: it is the next
			// record to process, so this is the processing error (Java: addRecordsToTasks).
			return n, err
		}
		n += len(c.Records)
		if !in.paused && t.QueueSize(c.TP.Topic, c.TP.Partition) > limit {
			th.fetcher.Pause(c.TP)
			in.paused = true
		}
	}
	return n, nil
}

// resumeInput resumes the paused partitions whose queue is back within
// buffered.records.per.partition.
func (th *thread) resumeInput() {
	limit := th.rt.cfg.MaxBufferedPerPartition
	for _, in := range th.in {
		if !in.paused {
			continue
		}
		if t := th.tasks[in.id]; t == nil || t.QueueSize(in.tp.Topic, in.tp.Partition) <= limit {
			th.fetcher.Resume(in.tp)
			in.paused = false
		}
	}
}

// commitPosition is the offset to commit for an input partition of t whose last processed
// record is at consumed: the offset after it; or, when the task holds no more records of the
// partition, the fetch position, which moves past transaction markers and aborted records,
// so that a caught-up partition of a transactionally written topic shows lag 0. Java:
// StreamTask.committableOffsetsAndMetadata (the consumer's position for an empty queue).
func (th *thread) commitPosition(t *task.Task, tp kafka.TopicPartition, consumed int64) int64 {
	next := consumed + 1
	if t.QueueSize(tp.Topic, tp.Partition) == 0 {
		if pos := th.fetcher.Position(tp); pos > next {
			next = pos
		}
	}
	return next
}

// Fetched lag of an input partition, for max.task.idle.ms (Java: Consumer.currentLag feeding
// PartitionGroup.updateLags / readyToProcess) and the records-lag metric: the fetcher's end
// offset of the partition (the last stable offset under read_committed, else the high
// watermark) minus its position, which moves past transaction markers and aborted records.

// updateLags hands the fetched lags of a task's empty input partitions to the task (Java:
// StreamTask.updateLags); partitions with buffered records need none.
func (th *thread) updateLags(t *task.Task, ins []*inputPartition) {
	for _, in := range ins {
		if t.QueueSize(in.tp.Topic, in.tp.Partition) > 0 {
			continue
		}
		t.UpdateLag(in.tp.Topic, in.tp.Partition, th.fetcher.Lag(in.tp))
	}
}

// idleState remembers which tasks process under enforcement, to log when that starts and ends.
type idleState struct {
	// mu guards enforcing and the thread's enforced counts: the executors of a pass update them.
	mu        sync.Mutex
	enforcing map[processor.TaskID]bool
}

// isProcessable asks the task whether it may process its next record (Java:
// StreamTask.isProcessable), counts enforced processing (a record processed while an input
// partition is empty because its idle deadline passed; Java: the task metric
// enforced-processing-total) and logs when a task starts or stops being processed that way.
func (th *thread) isProcessable(id processor.TaskID, t *task.Task, now int64) bool {
	if !t.IsProcessable(now) {
		return false
	}
	var empty []string
	for _, in := range th.inputs[id] {
		if t.QueueSize(in.tp.Topic, in.tp.Partition) == 0 {
			empty = append(empty, in.tp.String())
		}
	}
	th.idle.mu.Lock()
	defer th.idle.mu.Unlock()
	if th.idle.enforcing == nil {
		th.idle.enforcing = map[processor.TaskID]bool{}
	}
	was := th.idle.enforcing[id]
	switch {
	case len(empty) > 0:
		if m := th.rt.cfg.Metrics; m != nil {
			m.enforced.WithLabelValues(th.name, id.String()).Inc()
		}
		th.countEnforced(id)
		if !was {
			th.idle.enforcing[id] = true
			th.log.Debug("processing although some input partitions are empty on the broker; records may be processed out of timestamp order",
				"task", id.String(), "empty", empty, "max.task.idle.ms", th.rt.cfg.Task.MaxTaskIdleMs)
		}
	case was:
		delete(th.idle.enforcing, id)
		th.log.Debug("all input partitions have records again", "task", id.String())
	}
	return true
}

func itoa32(n int32) string { return strconv.FormatInt(int64(n), 10) }

// reportLags sets the records-lag gauges of the input partitions whose lag is known.
func (th *thread) reportLags() {
	th.publishMetrics(false)
	m := th.rt.cfg.Metrics
	if m == nil {
		return
	}
	for _, in := range th.in {
		lag := th.fetcher.Lag(in.tp)
		if lag < 0 {
			continue
		}
		if in.lagGauge == nil {
			in.lagGauge = m.lag.WithLabelValues(th.name, in.id.String(), in.tp.Topic, itoa32(in.tp.Partition))
		}
		in.lagGauge.Set(float64(lag))
	}
}

// lagReportEvery is how often the processing loop refreshes the records-lag gauges.
const lagReportEvery = 100 * time.Millisecond
