package task

// RecordDropped adds n to the task's dropped-records count (Java's dropped-records sensor of
// the task): windowed aggregations call it for records of closed windows and null keys
// (ktable.DroppedRecordsSensor).
func (c *nodeContext) RecordDropped(n int64) { c.n.task.group.dropped += n }
