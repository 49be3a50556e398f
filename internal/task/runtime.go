package task

// Methods the runtime's stream thread uses besides processing: offsets to commit, buffer sizes
// for pausing and resuming partitions, and whether punctuation is due.

// CommittableOffsets returns, per topic and partition, the offset to commit: the offset of the
// last processed record plus one (Java: StreamTask.committableOffsetsAndMetadata).
func (t *Task) CommittableOffsets() map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	for tp, off := range t.consumedOffsets {
		if out[tp.topic] == nil {
			out[tp.topic] = map[int32]int64{}
		}
		out[tp.topic][tp.partition] = *off + 1
	}
	return out
}

// Buffered returns the number of records buffered for topic and partition (not yet processed),
// 0 for a partition never seen. The runtime pauses a partition whose buffer exceeds
// buffered.records.per.partition and resumes it below (Java: RecordQueue.size).
func (t *Task) Buffered(topic string, partition int32) int {
	if q, ok := t.group.queues[topicPartition{topic, partition}]; ok {
		return q.size()
	}
	return 0
}

// CanPunctuateStreamTime reports whether a stream-time punctuation is due at the current
// stream time (Java: StreamTask.canPunctuateStreamTime); cancelled schedules are dropped.
func (t *Task) CanPunctuateStreamTime() bool {
	st := t.group.streamTime
	return st != UnknownTime && t.streamPunct.canPunctuate(st)
}

// CanPunctuateSystemTime reports whether a wall-clock punctuation is due at wallClockMs
// (Java: StreamTask.canPunctuateSystemTime).
func (t *Task) CanPunctuateSystemTime(wallClockMs int64) bool {
	return t.wallPunct.canPunctuate(wallClockMs)
}
