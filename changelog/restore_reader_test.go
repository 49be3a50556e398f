package changelog

import (
	"context"
	"sync"
	"testing"
)

// aliasLog is a MemoryLog whose Fetch hands out slices of records it keeps (as a reader with
// a record cache may): Reader's contract gives the caller the records to read, not to write.
type aliasLog struct {
	*MemoryLog
	mu    sync.Mutex
	cache map[TopicPartition][]Record
}

func (a *aliasLog) Fetch(ctx context.Context, tp TopicPartition, from int64) ([]Record, int64, error) {
	begin, err := a.BeginningOffset(ctx, tp)
	if err != nil {
		return nil, from, err
	}
	if _, _, err := a.MemoryLog.Fetch(ctx, tp, from); err != nil {
		return nil, from, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.cache[tp]
	if recs := a.Records(tp); len(recs) > len(c) {
		c = append(c, recs[len(c):]...)
		a.cache[tp] = c
	}
	i := int(from - begin)
	j := min(len(c), i+500)
	return c[i:j:j], begin + int64(j), nil
}

// Restore does not write into the record slices a plain Reader returns: restoring the same
// changelogs again (the in-memory store restores everything at every start) reads the same
// records.
func TestRestoreLeavesReaderRecordsAlone(t *testing.T) {
	restoreScenario(t, &aliasLog{MemoryLog: NewMemoryLog(), cache: map[TopicPartition][]Record{}}, "app")
}
