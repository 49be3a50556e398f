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
	fifo          []RawRecord
	head          *stampedRecord
	partitionTime int64
	order         int
	// slots hold the stamped records: the head is stamped into the slot the record being
	// processed (the previous head, returned by next) does not use, so stamping allocates
	// nothing. A slot is overwritten only two heads later, after that record was processed.
	slots [2]stampedRecord
	slot  int
	// base is fifo's backing array from its start: an emptied queue starts again there instead
	// of appending past the records already taken (which reallocates time and again).
	base []RawRecord
}

// size is the number of buffered records (Java: RecordQueue.size).
func (q *recordQueue) size() int {
	n := len(q.fifo)
	if q.head != nil {
		n++
	}
	return n
}

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
	if len(q.fifo) == 0 {
		q.fifo = q.base[:0]
	}
	q.fifo = append(q.fifo, rec)
	if cap(q.fifo) > cap(q.base) {
		q.base = q.fifo[:0]
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
		n += len(q.fifo)
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
	for q.head == nil && len(q.fifo) > 0 {
		sr := &q.slots[q.slot]
		*sr = stampedRecord{raw: q.fifo[0]}
		q.fifo[0] = RawRecord{} // the queue's backing array must not keep the record alive
		q.fifo = q.fifo[1:]
		raw := &sr.raw
		n := q.src
		if err := n.deserialize(sr); err != nil {
			if t.cfg.DeserializationHandler != nil && t.cfg.DeserializationHandler(*raw, err) == Continue {
				g.dropped++
				t.log.Warn("skipping record due to deserialization error", "task", t.id.String(), "topic", raw.Topic,
					"partition", raw.Partition, "offset", raw.Offset, "error", err)
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
			if q.head == nil && len(q.fifo) > 0 {
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
		q.fifo, q.base = nil, nil
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
