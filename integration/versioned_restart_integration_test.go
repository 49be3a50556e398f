package integration_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// versionedOps applies input records to the versioned store "prices" (history retention 20 s):
// a value >= 0 is put at the record's timestamp, -1 deletes at it, and -2 (tagged by the key
// "key#tag") asks for the version valid at the record's timestamp T: the processor forwards
// "key@T#tag" -> the value, or -1 for none.
type versionedOps struct {
	ctx   processor.ProcessorContext[string, int64]
	store store.VersionedKeyValueStore[string, int64]
}

func (p *versionedOps) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	s, err := processor.GetStateStore[store.VersionedKeyValueStore[string, int64]](ctx, "prices")
	p.store = s
	return err
}

func (p *versionedOps) Process(r processor.Record[string, int64]) error {
	switch {
	case r.Value >= 0:
		_, err := p.store.Put(r.Key, r.Value, r.Timestamp)
		return err
	case r.Value == -1:
		_, err := p.store.Delete(r.Key, r.Timestamp)
		return err
	}
	var key, tag string
	for i := len(r.Key) - 1; i >= 0; i-- {
		if r.Key[i] == '#' {
			key, tag = r.Key[:i], r.Key[i+1:]
			break
		}
	}
	v, err := p.store.GetAsOf(key, r.Timestamp)
	if err != nil {
		return err
	}
	out := int64(-1)
	if v != nil {
		out = v.Value
	}
	return p.ctx.Forward(processor.NewRecord(fmt.Sprintf("%s@%d#%s", key, r.Timestamp, tag), out, r.Timestamp))
}

func (p *versionedOps) Close() error { return nil }

func versionedTopology(t testing.TB, input, output string, persistent bool) *processor.Topology {
	t.Helper()
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("src", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())))
	must(topo.AddProcessor("ops", processor.ProcessorSupplierFunc[string, int64, string, int64](
		func() processor.Processor[string, int64, string, int64] { return &versionedOps{} }), "src"))
	var sup store.VersionedBytesStoreSupplier
	var err error
	if persistent {
		sup, err = store.Stores.PersistentVersionedKeyValueStore("prices", 20*time.Second)
	} else {
		sup, err = store.Stores.InMemoryVersionedKeyValueStore("prices", 20*time.Second)
	}
	must(err)
	must(topo.AddStateStore(store.Stores.VersionedKeyValueStoreBuilder(sup, serde.String(), serde.Long()), "ops"))
	must(topo.AddSink("sink", output, []string{"ops"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())))
	return topo
}

// checkVersionedRestart writes versions (out of order, some beyond the history retention,
// deletes among them) into a versioned store through an application, queries them, closes it;
// a second instance on a new state directory restores the store from its changelog and answers
// the same queries as a reference store fed the same operations.
func checkVersionedRestart(t *testing.T, b kafkatest.Broker, persistent bool, guarantee kstreams.ProcessingGuarantee) {
	input, output, appID := kafkatest.Name(t, "prices"), kafkatest.Name(t, "asof"), kafkatest.Name(t, "verrestart")
	createTopics(t, b, 1, input, output)
	iso := sarama.ReadUncommitted
	if guarantee == kstreams.ExactlyOnceV2 {
		iso = sarama.ReadCommitted
	}
	out := readOutput(t, b, output, iso)
	refSup, err := store.Stores.InMemoryVersionedKeyValueStore("ref", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ref := refSup.Get()
	if err := ref.Init(nil, ref); err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour).UnixMilli()
	r := rand.New(rand.NewPCG(3, 9))
	var msgs []*sarama.ProducerMessage
	keys := []string{"apple", "pear", "plum", "fig"}
	now := base
	for i := range 400 {
		k := keys[r.IntN(len(keys))]
		now += int64(r.IntN(400))
		ts := now - int64(r.IntN(30_000))
		v := int64(i)
		if r.IntN(8) == 0 {
			v = -1
			if _, err := ref.Delete([]byte(k), ts); err != nil {
				t.Fatal(err)
			}
		} else if _, err := ref.Put([]byte(k), longBytes(v), ts); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Key: sarama.StringEncoder(k), Value: sarama.ByteEncoder(longBytes(v)), Timestamp: time.UnixMilli(ts)})
	}
	queries := func(tag string) map[string]int64 {
		want := map[string]int64{}
		for _, k := range keys {
			for q := now - 25_000; q <= now+1000; q += 500 {
				rec, err := ref.GetAsOf([]byte(k), q)
				if err != nil {
					t.Fatal(err)
				}
				w := int64(-1)
				if rec != nil {
					w = int64(binary.BigEndian.Uint64(rec.Value))
				}
				want[fmt.Sprintf("%s@%d#%s", k, q, tag)] = w
				msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Key: sarama.StringEncoder(k + "#" + tag),
					Value: sarama.ByteEncoder(longBytes(-2)), Timestamp: time.UnixMilli(q)})
			}
		}
		return want
	}
	produce := func() {
		p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.SendMessages(msgs); err != nil {
			t.Fatal(err)
		}
		msgs = nil
	}
	run := func(want map[string]int64) map[string]int64 {
		t.Helper()
		app, err := kstreams.New(versionedTopology(t, input, output, persistent), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: guarantee,
			CommitInterval: 100 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
		})
		if err != nil {
			t.Fatal(err)
		}
		rc := &restoredCounter{n: map[string]int64{}}
		app.SetGlobalStateRestoreListener(rc)
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		out.waitFinal(t, want, 2*time.Minute, app.Err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := app.Close(ctx); err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return rc.n
	}
	want1 := queries("first")
	var nulls int
	for _, v := range want1 {
		if v < 0 {
			nulls++
		}
	}
	if nulls == 0 || nulls == len(want1) {
		t.Fatalf("fixture: %d of %d queries answer null", nulls, len(want1))
	}
	produce()
	if n := run(want1); n["prices"] != 0 {
		t.Fatalf("first run restored %v from an empty changelog", n)
	}
	want2 := queries("second")
	produce()
	// A new state directory: the store is restored from its changelog (400 versions).
	if n := run(want2); n["prices"] < 400 {
		t.Fatalf("second run restored %v records into prices, want the 400 versions", n)
	}
}

func TestVersionedStoreRestart(t *testing.T) {
	b := kafkatest.Embedded(t)
	t.Run("memory", func(t *testing.T) { checkVersionedRestart(t, b, false, kstreams.AtLeastOnce) })
	t.Run("pebble", func(t *testing.T) { checkVersionedRestart(t, b, true, kstreams.AtLeastOnce) })
	t.Run("pebble-eos", func(t *testing.T) { checkVersionedRestart(t, b, true, kstreams.ExactlyOnceV2) })
}

func TestIntegrationVersionedStoreRestart(t *testing.T) {
	b := kafkatest.Real(t)
	t.Run("memory", func(t *testing.T) { checkVersionedRestart(t, b, false, kstreams.AtLeastOnce) })
	t.Run("pebble", func(t *testing.T) { checkVersionedRestart(t, b, true, kstreams.AtLeastOnce) })
	t.Run("pebble-eos", func(t *testing.T) { checkVersionedRestart(t, b, true, kstreams.ExactlyOnceV2) })
}

func longBytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
