package task

import "fmt"

// serializationError is a sink's failure to serialize a record for topic; the production
// handler decides about it (Java: RecordCollectorImpl hands serialization failures to
// ProductionExceptionHandler.handleSerializationError).
type serializationError struct {
	topic string
	err   error
}

func (e *serializationError) Error() string { return e.err.Error() }
func (e *serializationError) Unwrap() error { return e.err }

// deadLetter sends the dead-letter record of the input record being processed (a record with
// no bytes, partition and offset -1 in a punctuation), after a handler decided to continue
// past err at node; nothing without Config.DeadLetter. The record goes through the collector
// like any output: under exactly-once it is part of the task's transaction. Java: the
// dead-letter records of a handler's response, sent by ProcessorNode / RecordCollectorImpl.
func (t *Task) deadLetter(node string, err error) error {
	if t.cfg.DeadLetter == nil {
		return nil
	}
	var src RawRecord
	if t.rc.raw != nil {
		src = *t.rc.raw
	} else {
		src = RawRecord{Topic: t.rc.topic, Partition: t.rc.partition, Offset: t.rc.offset, Headers: t.rc.headers}
	}
	if t.rc.timestamp != UnknownTime {
		src.Timestamp = t.rc.timestamp
	}
	t.deadLetters++
	if serr := t.cfg.Collector.Send(t.cfg.DeadLetter(src, err)); serr != nil {
		return fmt.Errorf("task %s: node %s: sending the dead-letter record of topic=%s partition=%d offset=%d: %w",
			t.id, node, src.Topic, src.Partition, src.Offset, serr)
	}
	return nil
}

// Processed returns the number of records the task processed (Java: the task-level
// process-total).
func (t *Task) Processed() int64 { return t.processed }

// BufferedRecords returns the number of records in the task's partition queues (Java: the
// task-level active-buffer-count).
func (t *Task) BufferedRecords() int { return t.group.buffered() }

// DeadLetters returns the number of dead-letter records the task sent (deserialization,
// processing and serialization failures a handler continued past).
func (t *Task) DeadLetters() int64 { return t.deadLetters }
