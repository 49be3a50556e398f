package task

import "fmt"

// AddInputPartition declares an input partition of the task, so that IsProcessable waits for it
// while it is empty (records create their partition's queue anyway). topic is a topic a source
// node reads, or the pattern text of a pattern source when the caller buffers all topics of the
// pattern in one queue (RawRecord.Queue; Java's TopologyTestDriver does that). Errors:
// ErrUnknownTopic. Java: the task's input partitions (PartitionGroup.partitionQueues).
func (t *Task) AddInputPartition(topic string, partition int32) error {
	src := t.sourceForQueue(topic)
	if src == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTopic, topic)
	}
	t.group.queue(src, topicPartition{topic, partition})
	return nil
}

// sourceForQueue returns the source node of a queue name: a pattern source whose pattern text
// it is, or the source reading that topic.
func (t *Task) sourceForQueue(topic string) *node {
	for _, n := range t.nodes {
		if n.spec.Kind == SourceNode && n.spec.Pattern != nil && n.spec.Pattern.String() == topic {
			return n
		}
	}
	return t.sourceFor(topic)
}

// UpdateLag records the fetched lag of an input partition (records on the broker not yet
// fetched; -1 = unknown). Java: PartitionGroup.updateLags / StreamTask.updateLags.
func (t *Task) UpdateLag(topic string, partition int32, lag int64) {
	t.group.lags[topicPartition{topic, partition}] = lag
}

// IsProcessable reports whether the task may process a buffered record now, following Java's
// PartitionGroup.readyToProcess: with MaxTaskIdleMs -1 always; otherwise every input partition
// must have buffered records, except that an empty partition whose lag is known to be 0 stops
// blocking once MaxTaskIdleMs of wall-clock time passed since it was first seen empty (then the
// other partitions are processed: "enforced processing"); an empty partition with unknown or
// positive lag blocks. Process itself does not check it: the caller does (the test driver does,
// as Java's TopologyTestDriver).
func (t *Task) IsProcessable(wallClockMs int64) bool {
	if t.closed {
		return false
	}
	g := &t.group
	if t.cfg.MaxTaskIdleMs < 0 {
		return true
	}
	queued, enforced := false, false
	for _, q := range g.list {
		if q.size() > 0 {
			delete(g.deadlines, q.tp)
			queued = true
			continue
		}
		lag, ok := g.lags[q.tp]
		if !ok || lag < 0 || lag > 0 {
			delete(g.deadlines, q.tp)
			return false
		}
		deadline, ok := g.deadlines[q.tp]
		if !ok {
			deadline = wallClockMs + t.cfg.MaxTaskIdleMs
			g.deadlines[q.tp] = deadline
		}
		if wallClockMs < deadline {
			return false
		}
		enforced = true
	}
	if !enforced {
		return true
	}
	return queued
}
