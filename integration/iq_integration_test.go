package integration_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// checkQueriesWhileProcessing runs a DSL word count (cached store, persistent or in memory)
// while goroutines query its store all the time; run with -race it shows that interactive
// queries and the stream thread do not touch the stores (and the thread's record cache) at the
// same time. Every value read is a count the word had at some point (never above its final
// count), and at the end the store holds exactly the final counts.
func checkQueriesWhileProcessing(t *testing.T, b kafkatest.Broker, inMemory bool) {
	input, output := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts")
	createTopics(t, b, 2, input, output)
	sb := kstream.NewStreamsBuilder()
	mat := kstream.MaterializedAs[string, int64]("iq-counts")
	if inMemory {
		mat = kstream.MaterializedAsSupplier[string, int64](store.Stores.InMemoryKeyValueStore("iq-counts"))
	}
	kstream.Stream(sb, input, kstream.ConsumedWith(serde.String(), serde.String())).
		FlatMapValues(func(line string) []string { return strings.Fields(line) }).
		GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(serde.String(), serde.String())).
		Count(mat.WithCachingEnabled()).
		ToStream().To(output, kstream.ProducedWith(serde.String(), serde.Long()))
	topo, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: kafkatest.Name(t, "iq"), BootstrapServers: b.Addrs, NumStreamThreads: 2,
		CommitInterval: 20 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
		StateStoreCacheMaxBytes: kstreams.Int64(4096), // small: evictions happen while queries read
	})
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	out := readOutput(t, b, output, sarama.ReadUncommitted)

	var kv store.ReadOnlyKeyValueStore[string, int64]
	deadline := time.Now().Add(time.Minute)
	for kv == nil {
		if kv, err = kstreams.KeyValueStore[string, int64](app, "iq-counts"); err != nil {
			if !errors.Is(err, kstreams.ErrStoreNotAvailable) || time.Now().After(deadline) {
				t.Fatalf("store: %v", err)
			}
			time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
		}
	}

	want := map[string]int64{}
	for i := range 3 {
		merge(want, produceLines(t, b, input, 1000, uint64(10+i)))
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	report := func(s string) {
		mu.Lock()
		if len(problems) < 10 {
			problems = append(problems, s)
		}
		mu.Unlock()
	}
	var reads sync.Map
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil; n++ {
				switch (g + n) % 3 {
				case 0:
					for w, final := range want {
						v, ok, err := kv.Get(w)
						if err != nil && !errors.Is(err, kstreams.ErrStoreNotAvailable) {
							report("get " + w + ": " + err.Error())
						}
						if ok && (v < 1 || v > final) {
							report("get " + w + ": impossible count")
						}
					}
				case 1:
					it := kv.All()
					for it.Next() {
						if final, ok := want[it.Key()]; !ok || it.Value() < 1 || it.Value() > final {
							report("all: impossible entry " + it.Key())
						}
					}
					if err := it.Err(); err != nil && !errors.Is(err, kstreams.ErrStoreNotAvailable) {
						report("all: " + err.Error())
					}
					it.Close()
				default:
					it := kv.Range("w10", "w19")
					for it.Next() {
						if k := it.Key(); k < "w10" || k > "w19" {
							report("range: key out of range " + k)
						}
					}
					it.Close()
					kv.ApproximateNumEntries()
				}
				reads.Store(g, n)
			}
		}()
	}
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	// The final counts reach the output after the store holds them.
	stop()
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	for w, n := range want {
		if v, ok, err := kv.Get(w); err != nil || !ok || v != n {
			t.Errorf("word %s: store has %d (%v, %v), want %d", w, v, ok, err, n)
		}
	}
	got := map[string]int64{}
	it := kv.All()
	for it.Next() {
		got[it.Key()] = it.Value()
	}
	it.Close()
	if len(got) != len(want) {
		t.Errorf("All: %d entries, want %d", len(got), len(want))
	}
	reads.Range(func(g, n any) bool { t.Logf("reader %d: %d rounds", g, n); return true })
}

func TestEmbeddedQueriesWhileProcessing(t *testing.T) {
	t.Parallel()
	checkQueriesWhileProcessing(t, kafkatest.Embedded(t), false)
}
func TestEmbeddedQueriesWhileProcessingInMemory(t *testing.T) {
	t.Parallel()
	checkQueriesWhileProcessing(t, kafkatest.Embedded(t), true)
}
func TestIntegrationQueriesWhileProcessing(t *testing.T) {
	checkQueriesWhileProcessing(t, kafkatest.Real(t), false)
}
