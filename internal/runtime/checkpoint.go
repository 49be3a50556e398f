package runtime

import (
	"fmt"

	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/processor"
)

// checkpointOffsetDelta is how far (summed over a task's changelog partitions) the changelog
// offsets must have advanced since the last checkpoint before a regular at-least-once commit
// flushes the task's stores and writes a new checkpoint. Java: StateManagerUtil's
// OFFSET_DELTA_THRESHOLD_FOR_CHECKPOINT (10 000).
const checkpointOffsetDelta = 10_000

// checkpointDue reports whether active task id's changelog offsets advanced by more than
// checkpointOffsetDelta since its last checkpoint (the first snapshot is empty, so the first
// commit past 10 000 offsets after the task started checkpoints). Java:
// StateManagerUtil.checkpointNeeded without enforcement.
func (tm *taskManager) checkpointDue(id processor.TaskID) bool {
	ts := tm.states[id]
	if ts == nil || tm.tasks[id] == nil {
		return false
	}
	last := tm.checkpointed[id]
	var delta int64
	for tp, off := range ts.Offsets() {
		delta += off - last[tp]
	}
	return delta > checkpointOffsetDelta
}

// flushStores flushes the stores of active task id (caching layers, then the engines: a Pebble
// store under at-least-once runs without a write-ahead log, and only this memtable flush makes
// its writes durable). Records a caching layer forwards go to the producer buffer, so call it
// before the records of the commit are sent. Java: ProcessorStateManager.flush.
func (tm *taskManager) flushStores(id processor.TaskID) error {
	if t := tm.tasks[id]; t != nil {
		if err := t.FlushStores(); err != nil {
			return fmt.Errorf("task %s: flush stores before checkpoint: %w", id, err)
		}
	}
	return nil
}

// writeCheckpoint writes task id's checkpoint file with the changelog offsets the producer
// acknowledged; call it only after flushStores, and after the records of the commit were sent,
// so the checkpoint claims no offset whose data the stores could lose. A failure is only logged:
// the previous checkpoint stays valid (it claims older offsets; restore replays more).
// Java: ProcessorStateManager.checkpoint.
func (tm *taskManager) writeCheckpoint(id processor.TaskID) {
	ts := tm.states[id]
	if ts == nil {
		return
	}
	now := ts.Offsets()
	if err := ts.Checkpoint(); err != nil {
		tm.log.Warn("checkpoint", "task", id.String(), "error", err)
		return
	}
	if tm.checkpointed == nil {
		tm.checkpointed = map[processor.TaskID]map[changelog.TopicPartition]int64{}
	}
	tm.checkpointed[id] = now
}
