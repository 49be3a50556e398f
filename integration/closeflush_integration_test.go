package integration_test

import (
	"context"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// chainUpdater writes every input record into the cached store "Second"; the flush listener of
// "Second" forwards each flushed entry to its child (chainMirror). It is also connected to
// "First" (listed first), so "First" is initialised, and flushed, before "Second".
type chainUpdater struct {
	second store.KeyValueStore[string, string]
	seen   *atomic.Int64
	total  int64
	done   chan struct{}
}

func (p *chainUpdater) Init(ctx processor.ProcessorContext[string, string]) error {
	var err error
	if p.second, err = processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "Second"); err != nil {
		return err
	}
	cs, ok := p.second.(storeapi.CachedStateStore[string, string])
	if !ok {
		return fmt.Errorf("store Second (%T) has no cache layer", p.second)
	}
	if !cs.SetFlushListener(func(r storeapi.CacheFlushRecord[string, string]) error {
		return ctx.Forward(processor.NewRecord(r.Key, r.NewValue, r.Timestamp))
	}, false) {
		return fmt.Errorf("store Second: cache not active")
	}
	return nil
}

func (p *chainUpdater) Process(r processor.Record[string, string]) error {
	if err := p.second.Put(r.Key, r.Value); err != nil {
		return err
	}
	if p.seen.Add(1) == p.total {
		close(p.done)
	}
	return nil
}

func (p *chainUpdater) Close() error { return nil }

// chainMirror writes what "Second" flushes into the cached store "First", whose flush listener
// forwards to the sink: "First" is dirty again only after its own flush of the commit's pass.
type chainMirror struct {
	first store.KeyValueStore[string, string]
}

func (p *chainMirror) Init(ctx processor.ProcessorContext[string, string]) error {
	var err error
	if p.first, err = processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "First"); err != nil {
		return err
	}
	cs, ok := p.first.(storeapi.CachedStateStore[string, string])
	if !ok {
		return fmt.Errorf("store First (%T) has no cache layer", p.first)
	}
	if !cs.SetFlushListener(func(r storeapi.CacheFlushRecord[string, string]) error {
		return ctx.Forward(processor.NewRecord(r.Key, r.NewValue, r.Timestamp))
	}, false) {
		return fmt.Errorf("store First: cache not active")
	}
	return nil
}

func (p *chainMirror) Process(r processor.Record[string, string]) error {
	return p.first.Put(r.Key, r.Value)
}
func (p *chainMirror) Close() error { return nil }

// cacheChainTopology is Source -> Update (stores First, Second) -> Mirror (store First) -> Sink,
// with both stores cached and logged.
func cacheChainTopology(t testing.TB, input, output string, total int64, done chan struct{}) *processor.Topology {
	t.Helper()
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := &atomic.Int64{}
	must(topo.AddSource("Source", []string{input},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(topo.AddProcessor("Update", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] {
			return &chainUpdater{seen: seen, total: total, done: done}
		}), "Source"))
	must(topo.AddProcessor("Mirror", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &chainMirror{} }), "Update"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("First"),
		serde.String(), serde.String()).WithCachingEnabled(), "Update", "Mirror"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Second"),
		serde.String(), serde.String()).WithCachingEnabled(), "Update"))
	must(topo.AddSink("Sink", output, []string{"Mirror"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.String())))
	return topo
}

// checkCloseFlushesCacheChain processes records and closes the application before any regular
// commit: the final commit flushes "Second", whose listener fills "First" (flushed earlier in
// that pass), so the close must flush "First" again and send what that forwards. The output
// topic and both changelogs must hold every key's last value (Java: a clean close commits, its
// store flush flushing the caches again, and the records are sent).
func checkCloseFlushesCacheChain(t *testing.T, b kafkatest.Broker, guarantee kstreams.ProcessingGuarantee) {
	input, output, appID := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "chain")
	createTopics(t, b, 1, input, output)
	const keys, updates = 5, 4
	p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	var msgs []*sarama.ProducerMessage
	for u := range updates {
		for k := range keys {
			key, value := fmt.Sprintf("k%d", k), fmt.Sprintf("v%d-%d", k, u)
			want[key] = value
			msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Key: sarama.StringEncoder(key),
				Value: sarama.StringEncoder(value), Timestamp: time.UnixMilli(int64(1_000_000 + len(msgs)))})
		}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	p.Close()

	done := make(chan struct{})
	app, err := kstreams.New(cacheChainTopology(t, input, output, int64(len(msgs)), done), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: guarantee,
		CommitInterval: time.Hour, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the application did not process the %d input records (err %v)", len(msgs), app.Err())
	}
	closeApp(t, app)

	// No regular commit ran: the caches were flushed once, at the close, so each topic holds
	// one record per key (cached updates of a key are deduplicated), with its last value.
	for _, topic := range []string{output, appID + "-Second-changelog", appID + "-First-changelog"} {
		got := map[string]string{}
		for _, m := range readRaw(t, b, topic, keys, 20*time.Second) {
			got[string(m.Key)] = string(m.Value)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", topic, got, want)
		}
	}
}

func TestEmbeddedCloseFlushesCacheChainAtLeastOnce(t *testing.T) {
	t.Parallel()
	checkCloseFlushesCacheChain(t, kafkatest.Embedded(t), kstreams.AtLeastOnce)
}

func TestEmbeddedCloseFlushesCacheChainExactlyOnce(t *testing.T) {
	t.Parallel()
	checkCloseFlushesCacheChain(t, kafkatest.Embedded(t), kstreams.ExactlyOnceV2)
}

func TestIntegrationCloseFlushesCacheChainAtLeastOnce(t *testing.T) {
	checkCloseFlushesCacheChain(t, kafkatest.Real(t), kstreams.AtLeastOnce)
}

func TestIntegrationCloseFlushesCacheChainExactlyOnce(t *testing.T) {
	checkCloseFlushesCacheChain(t, kafkatest.Real(t), kstreams.ExactlyOnceV2)
}
