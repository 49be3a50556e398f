package integration_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/store"
)

// restoreRecorder is a changelog.RestoreListener that keeps every call, per changelog partition.
type restoreRecorder struct {
	mu      sync.Mutex
	starts  map[changelog.TopicPartition][2]int64 // start offset, end offset
	batches map[changelog.TopicPartition][]int64  // batch end offsets, in call order
	batched map[changelog.TopicPartition]int64    // sum of numRestored over the batches
	ends    map[changelog.TopicPartition]int64    // totalRestored
	stores  map[string]bool
}

func newRestoreRecorder() *restoreRecorder {
	return &restoreRecorder{starts: map[changelog.TopicPartition][2]int64{},
		batches: map[changelog.TopicPartition][]int64{}, batched: map[changelog.TopicPartition]int64{},
		ends: map[changelog.TopicPartition]int64{}, stores: map[string]bool{}}
}

func (r *restoreRecorder) OnRestoreStart(tp changelog.TopicPartition, storeName string, start, end int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts[tp] = [2]int64{start, end}
	r.stores[storeName] = true
}

func (r *restoreRecorder) OnBatchRestored(tp changelog.TopicPartition, storeName string, batchEnd, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches[tp] = append(r.batches[tp], batchEnd)
	r.batched[tp] += n
	r.stores[storeName] = true
}

func (r *restoreRecorder) OnRestoreEnd(tp changelog.TopicPartition, storeName string, total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends[tp] = total
	r.stores[storeName] = true
}

// checkGlobalRestoreListener runs the word count (at-least-once, Pebble store) to its final
// counts and closes it; then starts it again on an empty state directory with a listener set
// through SetGlobalStateRestoreListener: every changelog partition is restored from offset 0 to
// its end offset, as the listener reports, with batch end offsets rising to end-1 and the batch
// counts adding up to the total (at-least-once changelogs hold no transaction markers, so every
// offset is a record). A third start on the state directory the second left behind restores
// nothing: the listener is told of no record. One stream thread, so that no second member's
// join moves a task in the middle of its restore.
func checkGlobalRestoreListener(t *testing.T, b kafkatest.Broker) {
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "restorel")
	createTopics(t, b, 2, input, output)
	want := produceLines(t, b, input, 2000, 31)
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	run := func(stateDir string, l changelog.RestoreListener) *kstreams.KafkaStreams {
		app, err := kstreams.New(wordCountTopologyWith(t, input, output, store.Stores.PersistentKeyValueStore("Counts")), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 100 * time.Millisecond,
			StateDir: stateDir, Sarama: fastSarama, Consumer: fastConsumer, NumStreamThreads: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		running := make(chan struct{})
		var once sync.Once
		app.SetStateListener(func(n, _ kstreams.State) {
			if n == kstreams.StateRunning {
				once.Do(func() { close(running) })
			}
		})
		if l != nil {
			app.SetGlobalStateRestoreListener(l)
		}
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		select {
		case <-running:
		case <-time.After(2 * time.Minute):
			t.Fatalf("not RUNNING after 2 minutes (error: %v)", app.Err())
		}
		return app
	}

	app := run(t.TempDir(), nil)
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	closeApp(t, app)

	changelogTopic := appID + "-Counts-changelog"
	client, err := sarama.NewClient(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ends := map[changelog.TopicPartition]int64{}
	for p := int32(0); p < 2; p++ {
		end, err := client.GetOffset(changelogTopic, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		if end == 0 {
			t.Fatalf("%s-%d is empty: nothing to restore", changelogTopic, p)
		}
		ends[changelog.TopicPartition{Topic: changelogTopic, Partition: p}] = end
	}

	// Fresh state directory: a full restore of both partitions.
	rec := newRestoreRecorder()
	kept := t.TempDir()
	app = run(kept, rec)
	closeApp(t, app)
	rec.mu.Lock()
	if len(rec.stores) != 1 || !rec.stores["Counts"] {
		t.Errorf("stores told about: %v, want Counts only", rec.stores)
	}
	for tp, end := range ends {
		if got := rec.starts[tp]; got != [2]int64{0, end} {
			t.Errorf("%v: OnRestoreStart offsets %v, want [0 %d]", tp, got, end)
		}
		bs := rec.batches[tp]
		for i := 1; i < len(bs); i++ {
			if bs[i] <= bs[i-1] {
				t.Errorf("%v: batch end offsets not rising: %v", tp, bs)
				break
			}
		}
		if len(bs) == 0 || bs[len(bs)-1] != end-1 {
			t.Errorf("%v: batch end offsets %v, want the last at %d", tp, bs, end-1)
		}
		if rec.batched[tp] != end || rec.ends[tp] != end {
			t.Errorf("%v: batches restored %d records, OnRestoreEnd %d, want %d", tp, rec.batched[tp], rec.ends[tp], end)
		}
	}
	if len(rec.starts) != len(ends) {
		t.Errorf("restores started for %v, want %v", rec.starts, ends)
	}
	rec.mu.Unlock()

	// The state directory the restore left behind is current: nothing to restore.
	rec2 := newRestoreRecorder()
	app = run(kept, rec2)
	closeApp(t, app)
	rec2.mu.Lock()
	defer rec2.mu.Unlock()
	for tp, n := range rec2.batched {
		if n != 0 {
			t.Errorf("restart on a current state directory: %v restored %d records, want 0", tp, n)
		}
	}
	for tp, n := range rec2.ends {
		if n != 0 {
			t.Errorf("restart on a current state directory: %v OnRestoreEnd %d records, want 0", tp, n)
		}
	}
}

func TestEmbeddedGlobalRestoreListener(t *testing.T) {
	t.Parallel()
	checkGlobalRestoreListener(t, kafkatest.Embedded(t))
}

func TestIntegrationGlobalRestoreListener(t *testing.T) {
	checkGlobalRestoreListener(t, kafkatest.Real(t))
}
