package runtime

import (
	"context"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"slices"
	"sync"
	"time"

	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// standbyUpdateInterval is how often a thread applies new changelog records to its standby
// tasks.
const standbyUpdateInterval = 200 * time.Millisecond

// standbyTask keeps a copy of an active task's stores current by reading their changelogs
// (num.standby.replicas); when the task is assigned to this thread as active, only the tail
// since the last update is restored. Java: StandbyTask.
type standbyTask struct {
	t  *task.Task
	ts *changelog.TaskState
	// pos is the next changelog offset to read, per store.
	pos map[string]int64
	tps map[string]changelog.TopicPartition
}

// updateStandby applies the changelog records available now (toEnd: until the end offset, for
// a promotion, on the state updater's goroutine), read with reader, holding lock while it
// writes a batch (interactive queries read standbys, KIP-535). It returns the number of records
// applied.
func (tm *taskManager) updateStandby(ctx context.Context, id processor.TaskID, sb *standbyTask, toEnd bool, reader changelog.Reader, lock sync.Locker) (int64, error) {
	var n int64
	for _, name := range slicesSorted(sb.tps) {
		tp := sb.tps[name]
		st := sb.t.Store(name)
		if st == nil {
			continue
		}
		timestamped := storeapi.IsTimestamped(st)
		end := int64(-1)
		if toEnd {
			var err error
			if end, err = reader.EndOffset(ctx, tp); err != nil {
				return n, kafkaErr("standby "+id.String()+": end offset", err)
			}
		}
		for {
			if toEnd && sb.pos[name] >= end {
				break
			}
			recs, next, err := reader.Fetch(ctx, tp, sb.pos[name])
			if err != nil {
				return n, kafkaErr(fmt.Sprintf("standby %s: fetch %s", id, tp), err)
			}
			if len(recs) > 0 {
				batch := make([]processor.RestoreRecord, 0, len(recs))
				for _, r := range recs {
					v := r.Value
					if timestamped && v != nil {
						v = storeapi.ToTimestampedValue(v, r.Timestamp)
					}
					batch = append(batch, processor.RestoreRecord{Key: r.Key, Value: v, Timestamp: r.Timestamp,
						Partition: tp.Partition, Offset: r.Offset, Headers: r.Headers})
				}
				lock.Lock()
				err := sb.t.Restore(name, batch)
				lock.Unlock()
				if err != nil {
					return n, fmt.Errorf("standby %s: apply %s: %w", id, tp, err)
				}
				sb.ts.RecordWritten(tp, recs[len(recs)-1].Offset)
				n += int64(len(recs))
			}
			if next <= sb.pos[name] && len(recs) == 0 {
				sb.pos[name] = max(sb.pos[name], next)
				if !toEnd {
					break
				}
				if ctx.Err() != nil {
					return n, ctx.Err()
				}
				continue
			}
			sb.pos[name] = next
			if !toEnd {
				break
			}
		}
	}
	if m := tm.rt.cfg.Metrics; m != nil && n > 0 {
		m.standbyUpdated.WithLabelValues(tm.name).Add(float64(n))
	}
	return n, nil
}

// updateStandbys applies what is new in the changelogs to every standby task, read without
// waiting on the broker (the thread's loop must not stall on an idle changelog).
func (tm *taskManager) updateStandbys(ctx context.Context) {
	for id, sb := range tm.standbys {
		if _, err := tm.updateStandby(ctx, id, sb, false, tm.standbyReader, &tm.view.storeMu); err != nil {
			tm.log.Warn("standby update failed; closing the standby", "task", id.String(), "error", err)
			tm.closeStandby(id, false)
		}
	}
}

// maybeUpdateStandbys updates the standby tasks when standbyUpdateInterval passed since the
// last update (on the thread's loop, between two passes).
func (tm *taskManager) maybeUpdateStandbys() {
	if len(tm.standbys) > 0 && time.Since(tm.lastStandby) >= standbyUpdateInterval {
		tm.updateStandbys(tm.ctx)
		tm.lastStandby = time.Now()
	}
}

// closeStandby closes a standby task (clean: with a checkpoint of what it applied).
func (tm *taskManager) closeStandby(id processor.TaskID, clean bool) {
	sb := tm.standbys[id]
	if sb == nil {
		return
	}
	tm.view.hideStandby(id) // a query reading it finishes before storeMu is ours
	tm.view.storeMu.Lock()
	defer tm.view.storeMu.Unlock()
	if clean {
		// The stores first: a checkpoint must not claim offsets the stores could still lose.
		err := sb.t.FlushStores()
		if err == nil {
			err = sb.ts.Checkpoint()
		}
		if err != nil {
			tm.log.Warn("standby checkpoint", "task", id.String(), "error", err)
		}
	}
	if err := sb.t.Close(); err != nil {
		tm.log.Warn("closing standby task", "task", id.String(), "error", err)
	}
	delete(tm.standbys, id)
	if tm.tasks[id] == nil {
		tm.rt.unlockTask(id, tm.idx)
	}
}

// standbyIDs returns the ids of the standby tasks, sorted.
func (tm *taskManager) standbyIDs() []processor.TaskID {
	ids := make([]processor.TaskID, 0, len(tm.standbys))
	for id := range tm.standbys {
		ids = append(ids, id)
	}
	sortTasks(ids)
	return ids
}

func slicesSorted(m map[string]changelog.TopicPartition) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
