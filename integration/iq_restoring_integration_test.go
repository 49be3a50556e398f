package integration_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/store"
)

// pausingRestore is a changelog.RestoreListener that holds every restore after its first
// batch (the restore calls it between two batches, holding no store) until resume is closed,
// so that a test can query a task while it restores and no task of the store runs yet (the
// state updater restores two tasks at once). It reports the first batch held.
type pausingRestore struct {
	once   sync.Once
	paused chan restoredBatch
	resume chan struct{}
}

type restoredBatch struct {
	tp  changelog.TopicPartition
	end int64 // offset of the batch's last record
}

func (p *pausingRestore) OnRestoreStart(changelog.TopicPartition, string, int64, int64) {}
func (p *pausingRestore) OnRestoreEnd(changelog.TopicPartition, string, int64)          {}
func (p *pausingRestore) OnBatchRestored(tp changelog.TopicPartition, _ string, end, _ int64) {
	p.once.Do(func() { p.paused <- restoredBatch{tp: tp, end: end} })
	<-p.resume
}

// changelogPrefix reads a word count changelog partition (string keys, 8-byte big-endian
// counts) from its start to offset last, inclusive: the state its first last+1 records
// restore, the latest value per key.
func changelogPrefix(t *testing.T, b kafkatest.Broker, topic string, partition int32, last int64) map[string]int64 {
	t.Helper()
	c, err := sarama.NewConsumer(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, partition, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	out := map[string]int64{}
	timeout := time.After(time.Minute)
	for {
		select {
		case m := <-pc.Messages():
			if m.Value == nil {
				delete(out, string(m.Key))
			} else {
				out[string(m.Key)] = int64(binary.BigEndian.Uint64(m.Value))
			}
			if m.Offset >= last {
				return out
			}
		case err := <-pc.Errors():
			t.Fatal(err)
		case <-timeout:
			t.Fatalf("%s-%d: offset %d not read within a minute", topic, partition, last)
		}
	}
}

// checkRestoringQueries runs the word count (in-memory store, no record cache, one stream
// thread) to its final counts and closes it. A second start restores the store from its
// changelog (an in-memory store always restores in full, in batches of 1 000 records), and
// is held after its first batch: then (KIP-535) a view without stale stores finds no store
// (no task runs yet), one with EnableStaleStores reads the restoring task, whose store holds
// exactly what the changelog's records up to that batch give (read from the topic
// independently), and IQv2 answers that partition from it, or NOT_ACTIVE with
// RequireActive. Once the restore goes on and the task runs, the views give the final counts.
func checkRestoringQueries(t *testing.T, b kafkatest.Broker) {
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "iqrestore")
	createTopics(t, b, 2, input, output)
	want := produceLines(t, b, input, 600, 47) // 6 000 words: more than one restore batch per partition
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	noCache := int64(0)
	newApp := func() *kstreams.KafkaStreams {
		app, err := kstreams.New(wordCountTopologyWith(t, input, output, store.Stores.InMemoryKeyValueStore("Counts")), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 100 * time.Millisecond,
			StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer, NumStreamThreads: 1,
			StateStoreCacheMaxBytes: &noCache,
		})
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	app := newApp()
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	closeApp(t, app)

	pause := &pausingRestore{paused: make(chan restoredBatch, 1), resume: make(chan struct{})}
	app = newApp()
	app.SetGlobalStateRestoreListener(pause)
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer closeApp(t, app)
	var held restoredBatch
	select {
	case held = <-pause.paused:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no restore batch within 2 minutes (error: %v)", app.Err())
	}
	resumed := false
	defer func() {
		if !resumed {
			close(pause.resume)
		}
	}()
	if held.tp.Topic != appID+"-Counts-changelog" {
		t.Fatalf("restoring %v, want a partition of %s-Counts-changelog", held.tp, appID)
	}
	prefix := changelogPrefix(t, b, held.tp.Topic, held.tp.Partition, held.end)
	total := 0
	for _, n := range want {
		total += int(n)
	}
	if len(prefix) == 0 || held.end+1 >= int64(total) {
		t.Fatalf("the first batch ends at offset %d and restores %d keys: not a partial restore of %d words", held.end, len(prefix), total)
	}

	if _, err := kstreams.KeyValueStore[string, int64](app, "Counts"); !errors.Is(err, kstreams.ErrStoreNotAvailable) {
		t.Fatalf("view without stale stores while the tasks of the store restore: error %v, want ErrStoreNotAvailable", err)
	}
	stale, err := kstreams.KeyValueStore[string, int64](app, "Counts", kstreams.EnableStaleStores(), kstreams.WithPartition(int(held.tp.Partition)))
	if err != nil {
		t.Fatalf("view with stale stores of the restoring task: %v", err)
	}
	got := map[string]int64{}
	it := stale.All()
	for it.Next() {
		got[it.Key()] = it.Value()
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if fmt.Sprint(got) != fmt.Sprint(prefix) {
		t.Fatalf("restoring store holds %d keys, want the %d of changelog offsets 0..%d\ngot  %v\nwant %v", len(got), len(prefix), held.end, got, prefix)
	}
	var key string
	for k := range prefix {
		key = k
		break
	}
	if v, ok, err := stale.Get(key); err != nil || !ok || v != prefix[key] {
		t.Fatalf("Get(%q) on the restoring store = %d, %v, %v; want %d", key, v, ok, err, prefix[key])
	}
	parts := []int32{held.tp.Partition}
	res, err := kstreams.StateQuery(app, kstreams.StateQueryRequest[*int64]{Store: "Counts",
		Query: kstreams.KeyQuery[string, int64]{Key: key}, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.PartitionResults[held.tp.Partition]; !r.IsSuccess() || r.Result == nil || *r.Result != prefix[key] {
		t.Fatalf("IQv2 KeyQuery(%q) of the restoring partition: %+v, want %d", key, r, prefix[key])
	}
	res, err = kstreams.StateQuery(app, kstreams.StateQueryRequest[*int64]{Store: "Counts",
		Query: kstreams.KeyQuery[string, int64]{Key: key}, Partitions: parts, RequireActive: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.PartitionResults[held.tp.Partition]; r.Failure != kstreams.FailureNotActive {
		t.Fatalf("IQv2 KeyQuery with RequireActive of the restoring partition: %+v, want NOT_ACTIVE", r)
	}

	close(pause.resume)
	resumed = true
	deadline := time.Now().Add(2 * time.Minute)
	for {
		kv, err := kstreams.KeyValueStore[string, int64](app, "Counts")
		if err == nil {
			got = map[string]int64{}
			it := kv.All()
			for it.Next() {
				got[it.Key()] = it.Value()
			}
			err = it.Err()
			it.Close()
			if err == nil && fmt.Sprint(got) == fmt.Sprint(want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restore: %d keys (error %v), want the %d final counts", len(got), err, len(want))
		}
		if err := app.Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestEmbeddedRestoringQueries(t *testing.T) {
	t.Parallel()
	checkRestoringQueries(t, kafkatest.Embedded(t))
}

func TestIntegrationRestoringQueries(t *testing.T) {
	checkRestoringQueries(t, kafkatest.Real(t))
}
