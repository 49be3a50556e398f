package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/fetch"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// The thread's input: its fetcher (internal/kafka/fetch) fetches every assigned partition in
// the background, one request per leader broker; each loop iteration moves the chunks fetched
// since the last one into the tasks' partition queues (no goroutine or channel per record or
// per partition). A chunk goes into its queue as Java's consumer hands records to the tasks:
// at most maxPollRecords at a time, and none while the queue holds more than
// buffered.records.per.partition; the rest of the chunk waits in the input (decoded, as
// fetched) and tops the queue up as the task works it down. So a queue holds at most
// buffered.records.per.partition + maxPollRecords records, as Java's do: a whole chunk in the
// queue cost a queue slot per record, and a 1 MiB fetch of short records is tens of
// thousands. A partition whose queue is full, or that has records of a chunk still waiting,
// is paused (left out of the fetches) until its task worked the queue down. Java:
// StreamThread.pollRequests / addRecordsToTasks and the pause/resume of StreamTask.

// maxPollRecords is the most records one poll moves from a fetched chunk into a task's queue:
// Kafka Streams' default of the consumer's max.poll.records (1000), which Java applies to a
// whole poll and this input to each partition.
const maxPollRecords = 1000

// input is the thread's input side: the fetcher and the assigned partitions, by partition and
// by task. Only the thread's goroutine uses it, except byTask, which the executors of a pass
// read (it is rebuilt between passes only).
type input struct {
	fetcher *fetch.Fetcher
	// parts are the assigned input partitions; byTask lists each task's, sorted (index).
	parts  map[kafka.TopicPartition]*inputPartition
	byTask map[processor.TaskID][]*inputPartition
	// maxBuffered is buffered.records.per.partition.
	maxBuffered int
	// name labels the records-lag gauges (the thread's); metrics is nil when none are kept.
	name    string
	metrics *Metrics
	log     *slog.Logger
	// poll counts and times the polls.
	poll *metrics.Op
}

// inputPartition is an assigned input partition of an active task.
type inputPartition struct {
	tp       kafka.TopicPartition
	id       processor.TaskID
	paused   bool
	lagGauge prometheus.Gauge
	// rest are the records of the partition's last chunk not yet in its task's queue (the
	// chunk's tail); chunk is the chunk's whole record slice, handed back to the fetcher once
	// rest is empty. Only the thread's goroutine changes them, between passes.
	rest  []fetch.Record
	chunk []fetch.Record
}

// add registers tp as an input partition of task id, t when the task exists already (its
// fetching starts once the thread read its committed offset: thread.assignInputs).
func (in *input) add(id processor.TaskID, tp kafka.TopicPartition, t *task.Task) {
	in.parts[tp] = &inputPartition{tp: tp, id: id}
	if t != nil {
		if err := t.AddInputPartition(tp.Topic, tp.Partition); err != nil {
			in.log.Warn("declaring input partition", "task", id.String(), "partition", tp.String(), "error", err)
		}
	}
}

// assignInputs has tps fetched from their committed offsets, or from where auto.offset.reset
// says when none is committed: the thread reads the offsets (lookUpOffsets) at its next loop
// iteration, before it polls its input.
func (th *thread) assignInputs(tps []kafka.TopicPartition) {
	a := &th.awaiting
	a.tps = append(a.tps, tps...)
	for _, tp := range tps {
		delete(a.since, tp) // a new assignment waits afresh
	}
	if len(tps) > 0 {
		a.next, a.backoff = time.Time{}, 0 // looked up at the next iteration, not after another's backoff
	}
}

// awaitingOffsets are input partitions whose committed offsets could not be read yet.
type awaitingOffsets struct {
	tps []kafka.TopicPartition
	// since is, per partition, when its committed offset was first found unreadable, and
	// whether the coordinator answered it was unstable (rather than not answering).
	since map[kafka.TopicPartition]unreadable
	// next is when to look again after a failed lookup (backoff: 50 ms doubling to 1 s);
	// warned is when the last warning was logged.
	next, warned time.Time
	backoff      time.Duration
}

// unreadable is a partition's wait for its committed offset.
type unreadable struct {
	since    time.Time
	unstable bool
}

// maxOffsetLookup bounds one lookup of committed offsets on the thread (with a quarter of
// max.poll.interval.ms and PrepareTimeout): below the default 10 s transaction.timeout.ms of
// the thread's producer, so that the transaction the thread has open does not expire meanwhile.
const maxOffsetLookup = 5 * time.Second

// lookUpOffsets reads the committed offsets of the input partitions awaiting them and starts
// fetching them. The offsets are read with require_stable (KIP-447): under exactly-once, a
// partition's offset is unstable while a transaction that commits offsets for it is open
// (UNSTABLE_OFFSET_COMMIT). Such a partition is not waited for: the others start at once, it
// keeps waiting, and the thread looks again at a later loop iteration (after a backoff of 50 ms
// doubling to 1 s), polling and processing its other tasks meanwhile. A lookup the coordinator
// does not answer within maxOffsetLookup (or a quarter of max.poll.interval.ms) leaves every
// partition waiting the same way. A partition that stays unreadable for task.timeout.ms (a
// transaction that never ends: a hanging transaction; or no coordinator) fails the thread with a
// *TaskTimeoutError naming it and its task (Java: StreamTask.initializeMetadata's
// TimeoutException under task.timeout.ms, KIP-572). Partitions whose task was closed meanwhile
// are dropped. Errors: other lookup failures (a KafkaError: the tasks are closed dirty and the
// thread rejoins), the *TaskTimeoutError.
func (th *thread) lookUpOffsets() error {
	a := &th.awaiting
	tps := a.tps[:0]
	for _, tp := range a.tps {
		if th.in.parts[tp] != nil && !slices.Contains(tps, tp) {
			tps = append(tps, tp)
		}
	}
	a.tps = tps
	if len(tps) == 0 {
		*a = awaitingOffsets{}
		return nil
	}
	for tp := range a.since {
		if !slices.Contains(tps, tp) {
			delete(a.since, tp) // its task was closed: should it come back, it starts afresh
		}
	}
	now := time.Now()
	if now.Before(a.next) {
		return nil
	}
	ctx, cancel := context.WithTimeout(th.ctx, min(th.rt.cfg.PrepareTimeout, th.maxPollInterval()/4, maxOffsetLookup))
	defer cancel()
	stable, unstable, err := th.membership.member.CommittedStable(ctx, tps)
	answered := err == nil
	switch {
	case answered:
	case th.ctx.Err() != nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		stable, unstable = nil, tps
	default:
		return kafkaErr("fetch committed offsets", err)
	}
	if len(stable) > 0 {
		start := make(map[kafka.TopicPartition]int64, len(stable))
		var waited []kafka.TopicPartition
		for tp, o := range stable {
			start[tp] = kafka.OffsetUnknown
			if o.Offset >= 0 {
				start[tp] = o.Offset
			}
			if _, ok := a.since[tp]; ok {
				waited = append(waited, tp)
				delete(a.since, tp)
			}
		}
		if len(waited) > 0 {
			th.log.Info("read the committed offsets of input partitions that waited for them", "partitions", fmt.Sprint(waited))
		}
		th.in.fetcher.Assign(start)
	}
	a.tps = slices.Clone(unstable)
	if len(unstable) == 0 {
		*a = awaitingOffsets{}
		return nil
	}
	if a.since == nil {
		a.since = map[kafka.TopicPartition]unreadable{}
	}
	oldest := unstable[0]
	for _, tp := range unstable {
		u, ok := a.since[tp]
		if !ok {
			u.since = now
		}
		u.unstable = u.unstable || answered
		a.since[tp] = u
		if u.since.Before(a.since[oldest].since) {
			oldest = tp
		}
	}
	cause := err
	if a.since[oldest].unstable {
		cause = fmt.Errorf("committed offset of %s: %w", oldest, sarama.ErrUnstableOffsetCommit)
		if !answered {
			cause = fmt.Errorf("%w; the last lookup: %w", cause, err)
		}
	}
	elapsed, timeout := now.Sub(a.since[oldest].since), th.taskTimeout()
	if elapsed >= timeout {
		te := &TaskTimeoutError{Topic: oldest.Topic, Partition: oldest.Partition, Timeout: timeout, Elapsed: elapsed,
			Op: "reading the committed offset of " + oldest.String(), Err: cause}
		if p := th.in.parts[oldest]; p != nil {
			te.Task, te.TaskKnown = p.id, true
		}
		*a = awaitingOffsets{}
		return te
	}
	a.backoff = min(max(a.backoff*2, 50*time.Millisecond), time.Second)
	a.next = now.Add(a.backoff)
	if now.Sub(a.warned) >= 10*time.Second {
		a.warned = now
		th.log.Warn("the committed offsets of input partitions cannot be read yet (a transaction that commits offsets for "+
			"them is still open, or the group coordinator does not answer); their tasks wait, the others go on, until "+
			"task.timeout.ms", "partitions", fmt.Sprint(unstable), "waiting_for", elapsed.Round(time.Millisecond),
			"task.timeout.ms", timeout.Milliseconds(), "error", cause)
	}
	return nil
}

// remove stops fetching the input partitions of task id and forgets them.
func (in *input) remove(id processor.TaskID) {
	var tps []kafka.TopicPartition
	for tp, p := range in.parts {
		if p.id == id {
			tps = append(tps, tp)
			delete(in.parts, tp)
			in.dropRest(p)
		}
	}
	if len(tps) > 0 {
		in.fetcher.Unassign(tps...)
	}
	delete(in.byTask, id)
	if m := in.metrics; m != nil {
		for _, tp := range tps {
			m.lag.DeletePartialMatch(prometheus.Labels{"thread": in.name, "topic": tp.Topic, "partition": itoa32(tp.Partition)})
		}
	}
}

// index lists each task's input partitions, sorted by topic and partition.
func (in *input) index() {
	in.byTask = map[processor.TaskID][]*inputPartition{}
	for _, p := range in.parts {
		in.byTask[p.id] = append(in.byTask[p.id], p)
	}
	for id := range in.byTask {
		ps := in.byTask[id]
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].tp.Topic != ps[j].tp.Topic {
				return ps[i].tp.Topic < ps[j].tp.Topic
			}
			return ps[i].tp.Partition < ps[j].tp.Partition
		})
	}
}

// pollInput moves records into the queues of tasks: first what waits of earlier chunks, then
// the chunks fetched since the last call, each as far as its queue has room (fill); it pauses
// the partitions whose queue is full or whose chunk is not all in. It returns the number of
// records moved, and the error of a partition that can no longer be fetched
// (auto.offset.reset=none, authorization), which is the thread's.
func (in *input) pollInput(tasks map[processor.TaskID]*task.Task) (int, error) {
	defer func(start time.Time) { in.poll.Record(1, time.Since(start)) }(time.Now())
	n := 0
	for _, p := range in.parts {
		if len(p.rest) == 0 {
			continue
		}
		t := tasks[p.id]
		if t == nil {
			continue
		}
		k, err := in.fill(t, p)
		n += k
		if err != nil {
			return n, err
		}
	}
	for _, c := range in.fetcher.Poll() {
		p := in.parts[c.TP]
		if p == nil {
			continue // unassigned meanwhile
		}
		if c.Err != nil {
			return n, fmt.Errorf("input partition %s of task %s: %w", c.TP, p.id, c.Err)
		}
		t := tasks[p.id]
		if t == nil {
			continue
		}
		in.dropRest(p) // none: a partition with records waiting is paused
		p.rest, p.chunk = c.Records, c.Records
		k, err := in.fill(t, p)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// fill moves up to maxPollRecords of p's waiting records into t's queue unless the queue holds
// more than buffered.records.per.partition records, hands the chunk's records back to the
// fetcher once all are in, and pauses p when its queue is full or records still wait. The
// error is the task's (see Task.AddRecords).
func (in *input) fill(t *task.Task, p *inputPartition) (int, error) {
	tp := p.tp
	if t.QueueSize(tp.Topic, tp.Partition) > in.maxBuffered {
		in.pause(p)
		return 0, nil
	}
	k := min(len(p.rest), maxPollRecords)
	recs := p.rest[:k]
	err := t.AddRecords(tp.Topic, tp.Partition, k, func(i int, rec *task.RawRecord) {
		r := &recs[i]
		*rec = task.RawRecord{Topic: tp.Topic, Partition: tp.Partition, Offset: r.Offset,
			Timestamp: r.Timestamp, Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			rec.Headers.Add(h.Key, h.Value)
		}
	})
	if p.rest = p.rest[k:]; len(p.rest) == 0 {
		in.dropRest(p) // all copied into the queue
	}
	if err != nil {
		// The record that became the head of an empty queue failed to deserialize (and
		// the handler said fail) or its timestamp could not be extracted: it is the next
		// record to process, so this is the processing error (Java: addRecordsToTasks).
		return k, err
	}
	if len(p.rest) > 0 || t.QueueSize(tp.Topic, tp.Partition) > in.maxBuffered {
		in.pause(p)
	}
	return k, nil
}

// pause leaves p out of the fetches.
func (in *input) pause(p *inputPartition) {
	if !p.paused {
		in.fetcher.Pause(p.tp)
		p.paused = true
	}
}

// dropRest forgets p's waiting records and hands its chunk's records back to the fetcher.
func (in *input) dropRest(p *inputPartition) {
	if p.chunk != nil {
		in.fetcher.Recycle(p.chunk)
	}
	p.rest, p.chunk = nil, nil
}

// position is tp's consumer position (Java: KafkaConsumer.position): the offset of the first
// record fetched but not yet in its task's queue, else the fetcher's position.
func (in *input) position(tp kafka.TopicPartition) int64 {
	if p := in.parts[tp]; p != nil && len(p.rest) > 0 {
		return p.rest[0].Offset
	}
	return in.fetcher.Position(tp)
}

// lag is p's lag from its consumer position (see position) to its end, -1 while unknown
// (see fetch.Fetcher.Lag): records still waiting to go into the queue count, as records
// buffered in Java's consumer do.
func (in *input) lag(p *inputPartition) int64 {
	lag := in.fetcher.Lag(p.tp)
	if lag >= 0 && len(p.rest) > 0 {
		lag += max(in.fetcher.Position(p.tp)-p.rest[0].Offset, 0)
	}
	return lag
}

// resume resumes the paused partitions whose queue is back within
// buffered.records.per.partition and that have no records of a chunk waiting.
func (in *input) resume(tasks map[processor.TaskID]*task.Task) {
	for _, p := range in.parts {
		if !p.paused || len(p.rest) > 0 {
			continue
		}
		if t := tasks[p.id]; t == nil || t.QueueSize(p.tp.Topic, p.tp.Partition) <= in.maxBuffered {
			in.fetcher.Resume(p.tp)
			p.paused = false
		}
	}
}

// commitPosition is the offset to commit for an input partition of t whose last processed
// record is at consumed: the offset after it; or, when the task holds no more records of the
// partition, the fetch position, which moves past transaction markers and aborted records,
// so that a caught-up partition of a transactionally written topic shows lag 0. Java:
// StreamTask.committableOffsetsAndMetadata (the consumer's position for an empty queue).
func (in *input) commitPosition(t *task.Task, tp kafka.TopicPartition, consumed int64) int64 {
	next := consumed + 1
	if t.QueueSize(tp.Topic, tp.Partition) == 0 {
		if pos := in.position(tp); pos > next {
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
func (in *input) updateLags(t *task.Task, ps []*inputPartition) {
	for _, p := range ps {
		if t.QueueSize(p.tp.Topic, p.tp.Partition) > 0 {
			continue
		}
		t.UpdateLag(p.tp.Topic, p.tp.Partition, in.lag(p))
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
	for _, p := range th.in.byTask[id] {
		if t.QueueSize(p.tp.Topic, p.tp.Partition) == 0 {
			empty = append(empty, p.tp.String())
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
		th.tm.countEnforced(id)
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
func (in *input) reportLags() {
	m := in.metrics
	if m == nil {
		return
	}
	for _, p := range in.parts {
		lag := in.lag(p)
		if lag < 0 {
			continue
		}
		if p.lagGauge == nil {
			p.lagGauge = m.lag.WithLabelValues(in.name, p.id.String(), p.tp.Topic, itoa32(p.tp.Partition))
		}
		p.lagGauge.Set(float64(lag))
	}
}

// lagReportEvery is how often the processing loop refreshes the records-lag gauges.
const lagReportEvery = 100 * time.Millisecond
