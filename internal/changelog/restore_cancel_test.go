package changelog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// cancellingListener cancels the restore's context inside the callback of batch number at
// (1-based), as a revocation arriving while that batch is applied does, and counts the calls.
type cancellingListener struct {
	at      int
	cancel  context.CancelFunc
	batches int
	last    int64
	ended   bool
}

func (l *cancellingListener) OnRestoreStart(TopicPartition, string, int64, int64) {}
func (l *cancellingListener) OnBatchRestored(_ TopicPartition, _ string, last, _ int64) {
	l.batches++
	l.last = last
	if l.batches == l.at {
		l.cancel()
	}
}
func (l *cancellingListener) OnRestoreEnd(TopicPartition, string, int64) { l.ended = true }

// A restore whose context ends stops at the next batch, also in the middle of a fetch
// response (MemoryLog hands out 500 records per fetch, the batches hold 100): the batches
// already fetched and the prefetched responses are not applied, Restore returns the context's
// error, the restore does not end, and the offset it reports is that of the last batch applied.
func TestRestoreStopsAtTheNextBatchWhenCancelled(t *testing.T) {
	const n = 1500
	tp := TopicPartition{Topic: "app-kv-changelog"}
	log := NewMemoryLog()
	for i := range n {
		log.Append(tp, Record{Key: fmt.Appendf(nil, "k%05d", i), Value: fmt.Appendf(nil, "v%d", i), Timestamp: int64(i)})
	}
	for _, at := range []int{2, 5} { // inside the first fetch; at its end, with the next one prefetched
		t.Run(fmt.Sprint("at=", at), func(t *testing.T) {
			dir := t.TempDir()
			spec := task.Spec{Stores: []task.StoreSpec{{Builder: store.Stores.KeyValueStoreBuilder(
				store.Stores.PersistentKeyValueStore("kv"), serde.String(), serde.String())}}}
			tk, err := task.New(processor.TaskID{}, spec, task.Config{ApplicationID: "app", StateDir: dir,
				Collector: &logCollector{log: log}, AppConfigs: map[string]string{}})
			must(t, err)
			must(t, tk.Init())
			defer tk.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			lis := &cancellingListener{at: at, cancel: cancel}
			ts := NewTaskState(TaskStateConfig{TaskDir: dir, Reader: log, Listener: lis, Logger: slog.New(slog.DiscardHandler),
				MaxBatchRecords: 100, BulkRestoreMinRecords: -1}, tk)
			err = ts.Restore(ctx)
			if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrChangelogRestore) {
				t.Fatalf("Restore returned %v, want ErrChangelogRestore wrapping context.Canceled", err)
			}
			if lis.batches != at || lis.ended {
				t.Fatalf("%d batches restored (restore ended: %v), want %d and no end", lis.batches, lis.ended, at)
			}
			if want := int64(at*100 - 1); lis.last != want || ts.Offsets()[tp] != want {
				t.Fatalf("last batch offset %d, restored offset %d; want %d", lis.last, ts.Offsets()[tp], want)
			}
			kv := tk.Store("kv").(store.KeyValueStore[string, string])
			if _, ok, _ := kv.Get(fmt.Sprintf("k%05d", at*100)); ok {
				t.Fatalf("k%05d, after the last batch applied, is in the store", at*100)
			}
		})
	}
}
