package runtime

import (
	"context"
	"encoding/binary"
	"sort"
	"strconv"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// Fetched lag of an input partition, for max.task.idle.ms (Java: Consumer.currentLag feeding
// PartitionGroup.updateLags / readyToProcess) and the records-lag metric.
//
// The lag is the partition's end offset (high watermark; under read_committed the last stable
// offset) minus the consumer position (the offset after the last record handed to the task).
// sarama tells the high watermark of its last fetch (ConsumerGroupClaim.HighWaterMarkOffset)
// but not its position, which moves past transaction markers and aborted records that it never
// delivers; nor the last stable offset. So when the high watermark is beyond the last delivered
// record and nothing is buffered, a probe (one fetch of the partition from the position) tells
// whether data records lie before the end: if only markers or aborted records do, the lag is 0.

// lagProbeEvery is the least time between two probes of one partition.
const lagProbeEvery = 100 * time.Millisecond

// lagProbe is the outcome of a probe, valid while the position and high watermark it was made
// for are current.
type lagProbe struct {
	pos, hwm, lag int64
}

// taskInput is an input partition of an active task.
type taskInput struct {
	topic     string
	partition int32
	pb        *partBuf
}

// fetchedLag returns the fetched lag of an input partition, -1 while unknown (no fetch position
// or high watermark yet). Called by the processing loop only.
// With probe false it starts no probe (for the metric).
func (th *thread) fetchedLag(in taskInput, probe bool) int64 {
	pb := in.pb
	c, _ := pb.claim.Load().(sarama.ConsumerGroupClaim)
	if c == nil {
		return -1
	}
	pos := pb.pos
	if pos < 0 {
		if pos = pb.start.Load(); pos < 0 {
			return -1
		}
	}
	hwm := c.HighWaterMarkOffset()
	if hwm <= pos {
		return 0
	}
	if len(pb.ch) > 0 || len(c.Messages()) > 0 {
		return hwm - pos // fetched records wait in the hand-over buffers
	}
	if p := pb.probe.Load(); p != nil && p.pos == pos && p.hwm == hwm {
		return p.lag
	}
	if probe {
		th.startProbe(in, pos, hwm)
	}
	return hwm - pos
}

// startProbe starts a probe of the partition unless one runs or ran less than lagProbeEvery ago.
func (th *thread) startProbe(in taskInput, pos, hwm int64) {
	pb := in.pb
	now := time.Now().UnixMilli()
	if now-pb.lastProbe.Load() < lagProbeEvery.Milliseconds() || !pb.probing.CompareAndSwap(false, true) {
		return
	}
	pb.lastProbe.Store(now)
	client, committed := th.client, th.rt.cfg.ExactlyOnce
	go func() {
		defer pb.probing.Store(false)
		lag, err := probeLag(client, in.topic, in.partition, pos, committed)
		if err != nil {
			th.log.Debug("probing the fetched lag failed", "topic", in.topic, "partition", in.partition, "error", err)
			return
		}
		pb.probe.Store(&lagProbe{pos: pos, hwm: hwm, lag: lag})
		select {
		case th.wake <- struct{}{}:
		default:
		}
	}()
}

// probeLag fetches the partition from pos and returns the lag a consumer at pos has once it
// has skipped the transaction markers (and, read_committed, the aborted records) that precede
// the next data record: the end offset minus pos when a data record follows, else the end
// offset minus the offset after the last skipped batch.
func probeLag(client sarama.Client, topic string, partition int32, pos int64, readCommitted bool) (int64, error) {
	b, err := client.Leader(topic, partition)
	if err != nil {
		return 0, err
	}
	req := &sarama.FetchRequest{Version: 4, MaxWaitTime: 0, MinBytes: 0, MaxBytes: 1 << 20}
	if readCommitted {
		req.Isolation = sarama.ReadCommitted
	}
	req.AddBlock(topic, partition, pos, 1<<20, -1)
	resp, err := b.Fetch(req)
	if err != nil {
		return 0, err
	}
	blk := resp.GetBlock(topic, partition)
	if blk == nil {
		return 0, sarama.ErrIncompleteResponse
	}
	if blk.Err != sarama.ErrNoError {
		return 0, blk.Err
	}
	end := blk.HighWaterMarkOffset
	if readCommitted {
		end = blk.LastStableOffset
	}
	aborts := append([]*sarama.AbortedTransaction(nil), blk.AbortedTransactions...)
	sort.Slice(aborts, func(i, j int) bool { return aborts[i].FirstOffset < aborts[j].FirstOffset })
	aborted := map[int64]bool{}
	next := pos
	for _, rs := range blk.RecordsSet {
		rb := rs.RecordBatch
		if rb == nil {
			return max(end-pos, 0), nil // legacy message set: data
		}
		if rb.PartialTrailingRecord {
			break
		}
		last := rb.FirstOffset + int64(rb.LastOffsetDelta)
		if last < pos {
			continue
		}
		for len(aborts) > 0 && aborts[0].FirstOffset <= last {
			aborted[aborts[0].ProducerID] = true
			aborts = aborts[1:]
		}
		switch {
		case rb.Control:
			// A control record's key is version (int16) then type (int16: 0 abort, 1 commit).
			if len(rb.Records) > 0 && len(rb.Records[0].Key) >= 4 && binary.BigEndian.Uint16(rb.Records[0].Key[2:4]) == 0 {
				delete(aborted, rb.ProducerID)
			}
		case readCommitted && rb.IsTransactional && aborted[rb.ProducerID]:
		case len(rb.Records) == 0:
		default:
			return max(end-pos, 0), nil
		}
		next = last + 1
	}
	return max(end-next, 0), nil
}

// updateLags hands the fetched lags of a task's empty input partitions to the task (Java:
// StreamTask.updateLags); partitions with buffered records need none.
func (th *thread) updateLags(t *task.Task, ins []taskInput) {
	for _, in := range ins {
		if t.QueueSize(in.topic, in.partition) > 0 {
			continue
		}
		t.UpdateLag(in.topic, in.partition, th.fetchedLag(in, true))
	}
}

// declareInputs declares the session's input partitions to their tasks, so that a task waits
// for an empty one (max.task.idle.ms), and indexes them by task.
func (th *thread) declareInputs() {
	if m := th.rt.cfg.Metrics; m != nil {
		m.lag.DeletePartialMatch(prometheus.Labels{"thread": th.name})
	}
	th.inputs = map[processor.TaskID][]taskInput{}
	for topic, ps := range th.parts {
		for p, pb := range ps {
			t := th.tasks[pb.id]
			if t == nil {
				continue
			}
			if err := t.AddInputPartition(topic, p); err != nil {
				th.log.Warn("declaring input partition", "task", pb.id.String(), "topic", topic, "partition", p, "error", err)
				continue
			}
			th.inputs[pb.id] = append(th.inputs[pb.id], taskInput{topic: topic, partition: p, pb: pb})
		}
	}
	for id := range th.inputs {
		ins := th.inputs[id]
		sort.Slice(ins, func(i, j int) bool {
			if ins[i].topic != ins[j].topic {
				return ins[i].topic < ins[j].topic
			}
			return ins[i].partition < ins[j].partition
		})
	}
}

// idleState remembers which tasks process under enforcement, to log when that starts and ends.
type idleState struct {
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
		if t.QueueSize(in.topic, in.partition) == 0 {
			empty = append(empty, in.topic+"-"+itoa32(in.partition))
		}
	}
	if th.idle.enforcing == nil {
		th.idle.enforcing = map[processor.TaskID]bool{}
	}
	was := th.idle.enforcing[id]
	switch {
	case len(empty) > 0:
		if m := th.rt.cfg.Metrics; m != nil {
			m.enforced.WithLabelValues(th.name, id.String()).Inc()
		}
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

// resolveStart records the offset the claim's fetching starts at: its initial offset, or for
// a partition without committed offset the log start (auto.offset.reset=earliest), asked of the
// broker in the background and again every resolveRetry until it answers or the session ends
// (until then the partition's lag is unknown, and a task waiting for it keeps waiting).
func (th *thread) resolveStart(ctx context.Context, claim sarama.ConsumerGroupClaim, pb *partBuf) {
	if off := claim.InitialOffset(); off >= 0 {
		pb.start.Store(off)
		return
	}
	client, initial := th.client, th.sconf.Consumer.Offsets.Initial
	go func() {
		for {
			off, err := client.GetOffset(claim.Topic(), claim.Partition(), initial)
			if err == nil {
				pb.start.Store(off)
				select {
				case th.wake <- struct{}{}:
				default:
				}
				return
			}
			th.log.Debug("asking the start offset failed; retrying", "topic", claim.Topic(), "partition", claim.Partition(), "error", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(resolveRetry):
			}
		}
	}()
}

// resolveRetry is the pause between two attempts to learn a partition's start offset.
const resolveRetry = 500 * time.Millisecond

// reportLags sets the records-lag gauges of the session's input partitions whose lag is known.
func (th *thread) reportLags() {
	m := th.rt.cfg.Metrics
	if m == nil {
		return
	}
	for id, ins := range th.inputs {
		for _, in := range ins {
			lag := th.fetchedLag(in, false)
			if lag < 0 {
				continue
			}
			if in.pb.lagGauge == nil {
				in.pb.lagGauge = m.lag.WithLabelValues(th.name, id.String(), in.topic, itoa32(in.partition))
			}
			in.pb.lagGauge.Set(float64(lag))
		}
	}
}

// lagReportEvery is how often the processing loop refreshes the records-lag gauges.
const lagReportEvery = 100 * time.Millisecond
