package task

import (
	"fmt"

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
}

// partitionGroup holds the queues of a task and its stream time (Java: PartitionGroup).
type partitionGroup struct {
	t          *Task
	queues     map[topicPartition]*recordQueue
	list       []*recordQueue
	streamTime int64
	dropped    int64
}

func (g *partitionGroup) init(t *Task) {
	g.t = t
	g.queues = map[topicPartition]*recordQueue{}
	g.streamTime = UnknownTime
}

func (g *partitionGroup) add(src *node, rec RawRecord) error {
	tp := topicPartition{rec.Topic, rec.Partition}
	q, ok := g.queues[tp]
	if !ok {
		q = &recordQueue{tp: tp, src: src, partitionTime: UnknownTime, order: len(g.list)}
		g.queues[tp] = q
		g.list = append(g.list, q)
	}
	q.fifo = append(q.fifo, rec)
	return g.updateHead(q)
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
		raw := q.fifo[0]
		q.fifo = q.fifo[1:]
		n := q.src
		var key, value any
		err := callGuarded(func() error {
			var err error
			if raw.Key != nil {
				if key, err = n.keyDeser.Deserialize(raw.Topic, &raw.Headers, raw.Key); err != nil {
					return fmt.Errorf("key: %w", err)
				}
			}
			if raw.Value != nil {
				if value, err = n.valueDeser.Deserialize(raw.Topic, &raw.Headers, raw.Value); err != nil {
					return fmt.Errorf("value: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			if t.cfg.DeserializationHandler != nil && t.cfg.DeserializationHandler(raw, err) == Continue {
				g.dropped++
				t.log.Warn("skipping record due to deserialization error", "task", t.id.String(), "topic", raw.Topic,
					"partition", raw.Partition, "offset", raw.Offset, "error", err)
				continue
			}
			return &DeserializationError{Task: t.id, Topic: raw.Topic, Partition: raw.Partition, Offset: raw.Offset, Err: err}
		}
		var ts int64
		err = callGuarded(func() error {
			var err error
			ts, err = n.extractor.Extract(processor.ConsumerRecord{
				Topic: raw.Topic, Partition: raw.Partition, Offset: raw.Offset, Timestamp: raw.Timestamp,
				Key: key, Value: value, Headers: raw.Headers,
			}, q.partitionTime)
			return err
		})
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
		q.head = &stampedRecord{raw: raw, key: key, value: value, timestamp: ts}
	}
	return nil
}

// next removes and returns the head record with the smallest timestamp (ties: the queue
// created first), advancing partition time and stream time; nil when nothing is buffered.
func (g *partitionGroup) next() (*stampedRecord, *node, error) {
	var best *recordQueue
	for _, q := range g.list {
		if q.head == nil {
			if err := g.updateHead(q); err != nil {
				return nil, nil, err
			}
		}
		if q.head != nil && (best == nil || q.head.timestamp < best.head.timestamp) {
			best = q
		}
	}
	if best == nil {
		return nil, nil, nil
	}
	rec := best.head
	best.head = nil
	if rec.timestamp > best.partitionTime {
		best.partitionTime = rec.timestamp
	}
	if rec.timestamp > g.streamTime {
		g.streamTime = rec.timestamp
	}
	return rec, best.src, nil
}
