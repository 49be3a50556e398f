package testdriver

// DroppedRecords returns the task's dropped-records count: input records with a negative
// timestamp or skipped by the deserialization handler, records dropped by the processing
// handler, and records processors dropped themselves (windowed aggregations: null keys and
// records for closed windows). Java: the "dropped-records-total" metric of the task in
// TopologyTestDriver.metrics().
func (d *TopologyTestDriver) DroppedRecords() int64 {
	if d.task == nil {
		return 0
	}
	return d.task.DroppedRecords()
}
