package task

import (
	"bytes"
	"fmt"
	"runtime/debug"

	"github.com/kstreams-go/kstreams/processor"
)

// DeserializationError is a record whose key or value could not be deserialized, with where
// it was read. Java: the StreamsException "Deserialization exception handler is set to fail
// upon a deserialization error".
type DeserializationError struct {
	// Task is the task id.
	Task processor.TaskID
	// Topic, Partition and Offset locate the record.
	Topic     string
	Partition int32
	Offset    int64
	// Err is the deserializer's error (or a *PanicError).
	Err error
}

// Error implements error.
func (e *DeserializationError) Error() string {
	return fmt.Sprintf("task %s: deserialization error on record topic=%s partition=%d offset=%d: %v",
		e.Task, e.Topic, e.Partition, e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *DeserializationError) Unwrap() error { return e.Err }

// stampedRecord is a deserialized record with its extracted timestamp.
type stampedRecord struct {
	raw        RawRecord
	key, value any
	timestamp  int64
}

// recordQueue buffers the records of one input partition (Java: RecordQueue).
type recordQueue struct {
	tp            topicPartition
	src           *node
	fifo          ring
	head          *stampedRecord
	partitionTime int64
	order         int
	// slots hold the stamped records: the head is stamped into the slot the record being
	// processed (the previous head, returned by next) does not use, so stamping allocates
	// nothing. A slot is overwritten only two heads later, after that record was processed.
	slots [2]stampedRecord
	slot  int
}

// size is the number of buffered records (Java: RecordQueue.size).
func (q *recordQueue) size() int {
	n := q.fifo.n
	if q.head != nil {
		n++
	}
	return n
}

// ring is a FIFO of raw records in a circular buffer that doubles when full: records are
// appended by the fetched chunk (thousands at a time) while the task takes them one by one
// from the front, so a slice appended at the back and resliced at the front would reallocate
// and copy the whole queue over and over.
type ring struct {
	buf      []RawRecord
	start, n int
}

// grow makes room for at least extra more records.
func (r *ring) grow(extra int) {
	need := r.n + extra
	if need <= len(r.buf) {
		return
	}
	size := max(len(r.buf), 16)
	for size < need {
		size *= 2
	}
	buf := make([]RawRecord, size)
	if r.n > 0 {
		k := copy(buf, r.buf[r.start:min(r.start+r.n, len(r.buf))])
		copy(buf[k:], r.buf[:r.n-k])
	}
	r.buf, r.start = buf, 0
}

// slot returns the place of the next record pushed; call grow first.
func (r *ring) slot() *RawRecord {
	i := r.start + r.n
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.n++
	return &r.buf[i]
}

// push appends rec.
func (r *ring) push(rec RawRecord) {
	r.grow(1)
	*r.slot() = rec
}

// pop removes and returns the first record; the ring must not be empty.
func (r *ring) pop() RawRecord {
	rec := r.buf[r.start]
	r.buf[r.start] = RawRecord{} // the buffer must not keep the record alive
	if r.start++; r.start == len(r.buf) {
		r.start = 0
	}
	if r.n--; r.n == 0 {
		r.start = 0
	}
	return rec
}

// reset empties the ring and lets its buffer go.
func (r *ring) reset() { *r = ring{} }

// partitionGroup holds the queues of a task and its stream time (Java: PartitionGroup). The
// non-empty queues sit in a priority queue by head timestamp with Java's tie behaviour.
type partitionGroup struct {
	t          *Task
	queues     map[topicPartition]*recordQueue
	list       []*recordQueue
	nonEmpty   javaHeap[*recordQueue]
	streamTime int64
	dropped    int64
	// lags are the fetched lags of the input partitions (-1 or absent: unknown); deadlines the
	// idling deadlines of empty partitions (Java: fetchedLags, idlePartitionDeadlines).
	lags      map[topicPartition]int64
	deadlines map[topicPartition]int64
}

func (g *partitionGroup) init(t *Task) {
	g.t = t
	g.lags = map[topicPartition]int64{}
	g.deadlines = map[topicPartition]int64{}
	g.queues = map[topicPartition]*recordQueue{}
	g.streamTime = UnknownTime
	g.nonEmpty.cmp = func(a, b *recordQueue) int { return cmpInt64(a.head.timestamp, b.head.timestamp) }
}

// add appends rec to its partition's queue, stamps the head if needed, and makes the queue a
// candidate when it was empty (Java: PartitionGroup.addRawRecords).
func (g *partitionGroup) add(src *node, rec RawRecord) error {
	q := g.queue(src, topicPartition{rec.queueTopic(), rec.Partition})
	oldSize := q.size()
	q.fifo.push(rec)
	err := g.updateHead(q)
	if oldSize == 0 && q.head != nil {
		g.nonEmpty.offer(q)
	}
	return err
}

// addBatch appends n records of partition tp, each written in place by fill, and stamps the
// head if needed: one queue lookup and at most one growth of the queue for a whole fetched
// chunk.
func (g *partitionGroup) addBatch(src *node, tp topicPartition, n int, fill func(i int, rec *RawRecord)) error {
	q := g.queue(src, tp)
	oldSize := q.size()
	q.fifo.grow(n)
	for i := 0; i < n; i++ {
		fill(i, q.fifo.slot())
	}
	err := g.updateHead(q)
	if oldSize == 0 && q.head != nil {
		g.nonEmpty.offer(q)
	}
	return err
}

// queue returns the queue of tp, creating it for source node src.
func (g *partitionGroup) queue(src *node, tp topicPartition) *recordQueue {
	q, ok := g.queues[tp]
	if !ok {
		q = &recordQueue{tp: tp, src: src, partitionTime: UnknownTime, order: len(g.list)}
		g.queues[tp] = q
		g.list = append(g.list, q)
	}
	return q
}

func (g *partitionGroup) buffered() int {
	n := 0
	for _, q := range g.list {
		n += q.fifo.n
		if q.head != nil {
			n++
		}
	}
	return n
}

// updateHead deserializes and stamps records until the queue has a head or is empty. Records
// with a negative extracted timestamp are dropped (and counted). A record that fails to
// deserialize or to extract is removed from the queue and its error returned.
func (g *partitionGroup) updateHead(q *recordQueue) error {
	t := g.t
	for q.head == nil && q.fifo.n > 0 {
		sr := &q.slots[q.slot]
		*sr = stampedRecord{raw: q.fifo.pop()}
		raw := &sr.raw
		n := q.src
		if err := n.deserialize(sr); err != nil {
			if t.cfg.DeserializationHandler != nil && t.cfg.DeserializationHandler(*raw, err) == Continue {
				g.dropped++
				t.log.Warn("skipping record due to deserialization error", "task", t.id.String(), "topic", raw.Topic,
					"partition", raw.Partition, "offset", raw.Offset, "error", err)
				if t.cfg.DeadLetter != nil {
					t.deadLetters++
					if serr := t.cfg.Collector.Send(t.cfg.DeadLetter(*raw, err)); serr != nil {
						return fmt.Errorf("task %s: sending the dead-letter record of topic=%s partition=%d offset=%d: %w",
							t.id, raw.Topic, raw.Partition, raw.Offset, serr)
					}
				}
				continue
			}
			return &DeserializationError{Task: t.id, Topic: raw.Topic, Partition: raw.Partition, Offset: raw.Offset, Err: err}
		}
		ts, err := n.extract(sr, q.partitionTime)
		if err != nil {
			return fmt.Errorf("task %s: timestamp extractor failed for record topic=%s partition=%d offset=%d: %w",
				t.id, raw.Topic, raw.Partition, raw.Offset, err)
		}
		if ts < 0 {
			g.dropped++
			t.log.Warn("skipping record due to negative extracted timestamp",
				"task", t.id.String(), "topic", raw.Topic, "partition", raw.Partition, "offset", raw.Offset, "extractedTimestamp", ts)
			continue
		}
		sr.timestamp = ts
		q.head = sr
		q.slot ^= 1
	}
	return nil
}

// deserialize fills sr's key and value from its raw record with the source node's
// deserializers (nil bytes stay nil); a panic becomes a *PanicError.
func (n *node) deserialize(sr *stampedRecord) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	raw := &sr.raw
	if raw.Key != nil {
		if n.internKey {
			sr.key, err = n.decodeString(n.keyDeser, raw.Topic, &raw.Headers, raw.Key)
		} else {
			sr.key, err = n.keyDeser.Deserialize(raw.Topic, &raw.Headers, raw.Key)
		}
		if err != nil {
			return fmt.Errorf("key: %w", err)
		}
	}
	if raw.Value != nil {
		if n.stringKV && sr.key != nil && bytes.Equal(raw.Key, raw.Value) {
			// Equal bytes through the same String serde: the same string, already boxed.
			sr.value = sr.key
		} else {
			if n.internValue {
				sr.value, err = n.decodeString(n.valueDeser, raw.Topic, &raw.Headers, raw.Value)
			} else {
				sr.value, err = n.valueDeser.Deserialize(raw.Topic, &raw.Headers, raw.Value)
			}
			if err != nil {
				return fmt.Errorf("value: %w", err)
			}
		}
	}
	return nil
}

// extract runs the source node's timestamp extractor on sr; a panic becomes a *PanicError.
func (n *node) extract(sr *stampedRecord, partitionTime int64) (ts int64, err error) {
	if n.recordTime && sr.raw.Timestamp >= 0 {
		return sr.raw.Timestamp, nil // what FailOnInvalidTimestamp returns
	}
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	raw := &sr.raw
	return n.extractor.Extract(processor.ConsumerRecord{
		Topic: raw.Topic, Partition: raw.Partition, Offset: raw.Offset, Timestamp: raw.Timestamp,
		Key: sr.key, Value: sr.value, Headers: raw.Headers,
	}, partitionTime)
}

// next removes and returns the head record of the queue with the smallest head timestamp,
// advancing partition time and stream time, then stamps that queue's next head and puts the
// queue back if it still has records (Java: PartitionGroup.nextRecord and RecordQueue.poll).
// It returns nil when nothing is buffered. An error stamping the next head is returned with
// the record (which is still to be processed).
func (g *partitionGroup) next() (*stampedRecord, *node, error) {
	if g.nonEmpty.len() == 0 {
		// Queues left unstamped after an error get another chance.
		for _, q := range g.list {
			if q.head == nil && q.fifo.n > 0 {
				err := g.updateHead(q)
				if q.head != nil {
					g.nonEmpty.offer(q)
				}
				if err != nil {
					return nil, nil, err
				}
			}
		}
	}
	q, ok := g.nonEmpty.poll()
	if !ok {
		return nil, nil, nil
	}
	rec := q.head
	q.head = nil
	if rec.timestamp > q.partitionTime {
		q.partitionTime = rec.timestamp
	}
	err := g.updateHead(q)
	if q.head != nil {
		g.nonEmpty.offer(q)
	}
	if rec.timestamp > g.streamTime {
		g.streamTime = rec.timestamp
	}
	return rec, q.src, err
}

// clear drops every buffered record; partition times and stream time are kept.
func (g *partitionGroup) clear() {
	for _, q := range g.list {
		q.fifo.reset()
		q.head = nil
	}
	g.nonEmpty.q = nil
}

// queueSize returns the number of records buffered for one partition.
func (g *partitionGroup) queueSize(tp topicPartition) int {
	if q, ok := g.queues[tp]; ok {
		return q.size()
	}
	return 0
}
