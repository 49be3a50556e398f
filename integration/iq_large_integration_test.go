package integration_test

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// fillProcessor writes, for a record of value n, n entries "<task partition>-<i>" (i over 7
// digits) with 40-byte values into its store, then the marker "~done-<partition>".
type fillProcessor struct {
	ctx processor.ProcessorContext[string, string]
	kv  store.KeyValueStore[string, string]
}

func (p *fillProcessor) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	kv, err := processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "Big")
	p.kv = kv
	return err
}

func (p *fillProcessor) Process(r processor.Record[string, string]) error {
	n, err := strconv.Atoi(r.Value)
	if err != nil {
		return err
	}
	part := p.ctx.TaskID().Partition
	for i := range n {
		if err := p.kv.Put(fmt.Sprintf("%d-%07d", part, i), fmt.Sprintf("value-%034d", i)); err != nil {
			return err
		}
	}
	return p.kv.Put(fmt.Sprintf("~done-%d", part), "done")
}

func (p *fillProcessor) Close() error { return nil }

// heapNow is the live heap after a collection, in bytes.
func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// An iteration of the key-value view over 1 000 000 entries (two tasks of 500 000, a Pebble
// store with a record cache) walks every entry in order while the live heap grows by far less
// than the entries' size: the view streams each task's store in chunks and holds one chunk,
// not a task's entries (before, each task's entries were collected at once).
// checkHeapGrowth logs an iteration of n items (what: entries, windows) and fails t when the
// live heap grew by more than 16 MiB during it: a bound well above one chunk and the record
// cache's bookkeeping (10 MiB cache by default), well below one task's share of the store.
func checkHeapGrowth(t *testing.T, what string, n int, elapsed time.Duration, peak uint64) {
	t.Helper()
	const bound = 16 << 20
	t.Logf("iterated %d %s in %v; live heap growth peak %d KiB (bound %d KiB)", n, what, elapsed, peak>>10, bound>>10)
	if peak > bound {
		t.Fatalf("live heap grew by %d KiB while iterating %s, want at most %d KiB", peak>>10, what, bound>>10)
	}
}

func checkLargeRangeBoundedMemory(t *testing.T, b kafkatest.Broker) {
	const perTask, parts = 500_000, 2
	input := kafkatest.Name(t, "fill")
	createTopics(t, b, parts, input)
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("Source", []string{input},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(topo.AddProcessor("Fill", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &fillProcessor{} }), "Source"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore("Big"), serde.String(), serde.String()).
		WithLoggingDisabled().WithCachingEnabled(), "Fill"))
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: kafkatest.Name(t, "iq-large"), BootstrapServers: b.Addrs,
		CommitInterval: 100 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for part := range int32(parts) {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: input, Partition: part,
			Key: sarama.StringEncoder("fill"), Value: sarama.StringEncoder(strconv.Itoa(perTask))}); err != nil {
			t.Fatal(err)
		}
	}
	_ = p.Close()

	var kv store.ReadOnlyKeyValueStore[string, string]
	deadline := time.Now().Add(3 * time.Minute)
	for done := 0; done < parts; {
		if time.Now().After(deadline) {
			t.Fatalf("the stores were not filled within 3 minutes (%d of %d tasks; last error %v)", done, parts, err)
		}
		if kv, err = kstreams.KeyValueStore[string, string](app, "Big"); err != nil {
			if !errors.Is(err, kstreams.ErrStoreNotAvailable) {
				t.Fatal(err)
			}
		} else {
			done = 0
			for part := range parts {
				if _, ok, _ := kv.Get(fmt.Sprintf("~done-%d", part)); ok {
					done++
				}
			}
		}
		if done < parts {
			time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
		}
	}

	base := heapNow()
	var peak uint64
	start := time.Now()
	it := kv.All()
	n, prev := 0, ""
	for it.Next() {
		k := it.Key()
		if k <= prev {
			t.Fatalf("key %q after %q: out of order", k, prev)
		}
		if part, i := n/(perTask+1), n%(perTask+1); i < perTask && (k != fmt.Sprintf("%d-%07d", part, i) || it.Value() != fmt.Sprintf("value-%034d", i)) {
			t.Fatalf("entry %d = %q/%q", n, k, it.Value())
		}
		prev = k
		n++
		if n%100_000 == 0 {
			if h := heapNow(); h > base && h-base > peak {
				peak = h - base
			}
		}
		if n == perTask+1 {
			prev = "" // the second task's store starts again from the smallest key
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	_ = it.Close()
	elapsed := time.Since(start)
	if n != parts*(perTask+1) {
		t.Fatalf("iterated %d entries, want %d", n, parts*(perTask+1))
	}
	// The entries as Go values take about 1 000 000 x (2 string headers + 9 + 40 bytes) ~ 80
	// MiB; a task's share collected at once ~ 40 MiB. One chunk is a few tens of KiB; the
	// growth seen (about 4 MiB, flat from the first sample on) is the record cache's key index,
	// which the cache builds on the first range scan of a store and keeps (bounded by the cache
	// size, 10 MiB by default, not by the store's).
	checkHeapGrowth(t, "entries", n, elapsed, peak)
	closeApp(t, app)
}

func TestIntegrationLargeRangeBoundedMemory(t *testing.T) {
	checkLargeRangeBoundedMemory(t, kafkatest.Real(t))
}
