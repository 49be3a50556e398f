package avro_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"math/big"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	kstreams "github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/avro"
	"github.com/kstreams-go/kstreams/serde/avro/avrotest"
	"github.com/kstreams-go/kstreams/serde/avro/registry"
	"github.com/kstreams-go/kstreams/store"
)

// TestEmbeddedRuntimeAvro runs an Avro-keyed, Avro-valued topology with an Avro state store
// in the real runtime on kfake, against the in-process registry double.
func TestEmbeddedRuntimeAvro(t *testing.T) {
	runRuntimeAvro(t, kafkatest.Embedded(t), avrotest.NewRegistry(t).Client())
}

// TestIntegrationRuntimeAvro is TestEmbeddedRuntimeAvro on the real broker, with the real
// registry named by SCHEMA_REGISTRY_URL when set, else the registry double.
func TestIntegrationRuntimeAvro(t *testing.T) {
	b := kafkatest.Real(t)
	var c *registry.Client
	if url := os.Getenv("SCHEMA_REGISTRY_URL"); url != "" {
		var err error
		if c, err = registry.New(registry.Config{URLs: []string{url}, Timeout: 30 * time.Second}); err != nil {
			t.Fatal(err)
		}
	} else {
		c = avrotest.NewRegistry(t).Client()
	}
	runRuntimeAvro(t, b, c)
}

// genericTotals keeps a running Total per customer in the "totals" store (Avro key and
// value serdes, so its changelog carries Confluent-framed Avro). Its input values come from
// the generic serde (goavro's native map form), its output is the typed *Total.
type genericTotals struct {
	ctx processor.ProcessorContext[OrderKey, *Total]
	kv  store.KeyValueStore[OrderKey, *Total]
}

func (p *genericTotals) Init(ctx processor.ProcessorContext[OrderKey, *Total]) error {
	p.ctx = ctx
	kv, err := processor.GetStateStore[store.KeyValueStore[OrderKey, *Total]](ctx, "totals")
	p.kv = kv
	return err
}

func (p *genericTotals) Process(r processor.Record[OrderKey, any]) error {
	m, ok := r.Value.(map[string]any)
	if !ok {
		return fmt.Errorf("generic order value is %T, want map[string]any", r.Value)
	}
	amount, ok := m["amount"].(*big.Rat)
	if !ok {
		return fmt.Errorf("generic order amount is %T, want *big.Rat", m["amount"])
	}
	at, ok := m["at"].(time.Time)
	if !ok {
		return fmt.Errorf("generic order at is %T, want time.Time", m["at"])
	}
	t, found, err := p.kv.Get(r.Key)
	if err != nil {
		return err
	}
	if !found {
		t = &Total{Customer: r.Key.Customer, Sum: new(big.Rat)}
	}
	t = &Total{Customer: t.Customer, Count: t.Count + 1, Sum: new(big.Rat).Add(t.Sum, amount), LastAt: at}
	if err := p.kv.Put(r.Key, t); err != nil {
		return err
	}
	return p.ctx.Forward(processor.NewRecord(r.Key, t, r.Timestamp))
}

func (p *genericTotals) Close() error { return nil }

// rawCollector reads every partition of a topic from the beginning with read_committed.
type rawCollector struct {
	mu   sync.Mutex
	msgs []*sarama.ConsumerMessage
}

func collectTopic(t *testing.T, b kafkatest.Broker, topic string) *rawCollector {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	c, err := sarama.NewConsumer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Partitions(topic)
	if err != nil {
		c.Close()
		t.Fatalf("partitions of %s: %v", topic, err)
	}
	rc := &rawCollector{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, p := range ps {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			cancel()
			c.Close()
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pc.Close()
			for {
				select {
				case m := <-pc.Messages():
					rc.mu.Lock()
					rc.msgs = append(rc.msgs, m)
					rc.mu.Unlock()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait(); c.Close() })
	return rc
}

func (rc *rawCollector) snapshot() []*sarama.ConsumerMessage {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*sarama.ConsumerMessage(nil), rc.msgs...)
}

// waitFor polls until at least n messages arrived, failing at the deadline or when the
// application reports an error.
func (rc *rawCollector) waitFor(t *testing.T, what string, n int, timeout time.Duration, alive func() error) []*sarama.ConsumerMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := rc.snapshot()
		if len(got) >= n {
			return got
		}
		if err := alive(); err != nil {
			t.Fatalf("application failed: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d records within %v; want %d", what, len(got), timeout, n)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// schemaID returns the schema id of Confluent-framed bytes, or -1 when b is not framed.
func schemaID(b []byte) int {
	if len(b) < 5 || b[0] != 0 {
		return -1
	}
	return int(binary.BigEndian.Uint32(b[1:5]))
}

type expectedTotal struct {
	count int32
	sum   *big.Rat
	last  int64 // LastAt, epoch ms
	ts    int64 // record timestamp, ms
}

func runRuntimeAvro(t *testing.T, b kafkatest.Broker, c *registry.Client) {
	ctx := context.Background()
	input, output, dlq := kafkatest.Name(t, "orders"), kafkatest.Name(t, "totals"), kafkatest.Name(t, "dlq")
	appID := kafkatest.Name(t, "avro")
	changelog := appID + "-totals-changelog"

	keySerde := must[*avro.Serde[OrderKey]](t)(avro.New[OrderKey](c, orderKeySchema, avro.AsKey()))
	orderSerde := must[*avro.Serde[*Order]](t)(avro.New[*Order](c, orderSchema))
	genericOrder := must[*avro.Serde[any]](t)(avro.NewGeneric(c, orderSchema))
	totalSerde := must[*avro.Serde[*Total]](t)(avro.New[*Total](c, totalSchema))

	top := processor.NewTopology()
	if err := top.AddSource("Orders", []string{input},
		processor.WithKeyDeserializer[OrderKey](keySerde), processor.WithValueDeserializer[any](genericOrder)); err != nil {
		t.Fatal(err)
	}
	if err := top.AddProcessor("Totals", processor.ProcessorSupplierFunc[OrderKey, any, OrderKey, *Total](
		func() processor.Processor[OrderKey, any, OrderKey, *Total] { return &genericTotals{} }), "Orders"); err != nil {
		t.Fatal(err)
	}
	if err := top.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("totals"),
		serde.Serde[OrderKey](keySerde), serde.Serde[*Total](totalSerde)), "Totals"); err != nil {
		t.Fatal(err)
	}
	if err := top.AddSink("Out", output, []string{"Totals"},
		processor.WithKeySerializer[OrderKey](keySerde), processor.WithValueSerializer[*Total](totalSerde)); err != nil {
		t.Fatal(err)
	}

	kafkatest.CreateTopics(t, b, 2, nil, input, output, dlq)

	// Input: orders of four customers, encoded by the typed serde (the app reads them with
	// the generic one), plus one record whose value names a schema id no registry has.
	customers := []string{"ann", "bob", "cy", "dee"}
	const n, poisonAt = 40, 17
	const poisonID = 0x7ffffff0
	poisonValue := []byte{0, 0x7f, 0xff, 0xff, 0xf0, 2, 4}
	want := map[string][]expectedTotal{}
	sums := map[string]*big.Rat{}
	var msgs []*sarama.ProducerMessage
	var poisonKey []byte
	for i := 0; i <= n; i++ {
		cust := customers[i%len(customers)]
		ts := int64(1_000_000 + 10*i)
		k := must[[]byte](t)(keySerde.Serialize(input, nil, OrderKey{cust}))
		if i == poisonAt {
			poisonKey = k
			msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Key: sarama.ByteEncoder(k),
				Value: sarama.ByteEncoder(poisonValue), Timestamp: time.UnixMilli(ts)})
			continue
		}
		amount := big.NewRat(int64(100*i-750), 100) // cents, some negative
		o := &Order{ID: int64(i), Amount: amount, At: time.UnixMilli(ts - 5).UTC()}
		v := must[[]byte](t)(orderSerde.Serialize(input, nil, o))
		msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Key: sarama.ByteEncoder(k),
			Value: sarama.ByteEncoder(v), Timestamp: time.UnixMilli(ts)})
		if sums[cust] == nil {
			sums[cust] = new(big.Rat)
		}
		sums[cust] = new(big.Rat).Add(sums[cust], amount)
		want[cust] = append(want[cust], expectedTotal{count: int32(len(want[cust]) + 1), sum: sums[cust], last: ts - 5, ts: ts})
	}
	p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SendMessages(msgs); err != nil {
		p.Close()
		t.Fatal(err)
	}
	p.Close()

	var hmu sync.Mutex
	var handled []error
	app, err := kstreams.New(top, kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		CommitInterval: 100 * time.Millisecond, StateDir: t.TempDir(), DeadLetterQueueTopic: dlq,
		Sarama: func(sc *sarama.Config) { sc.Metadata.Retry.Backoff = 100 * time.Millisecond },
		Consumer: kstreams.ConsumerConfig{SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond,
			MaxPollInterval: 10 * time.Second, FetchMaxWait: 20 * time.Millisecond},
		DeserializationHandler: func(topic string, partition int32, offset int64, err error) kstreams.HandlerResponse {
			hmu.Lock()
			handled = append(handled, err)
			hmu.Unlock()
			return kstreams.Continue
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	closed := false
	closeApp := func() {
		if closed {
			return
		}
		closed = true
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := app.Close(cctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	defer closeApp()

	out := collectTopic(t, b, output)
	out.waitFor(t, "output", n, time.Minute, app.Err)
	dead := collectTopic(t, b, dlq).waitFor(t, "dead-letter topic", 1, time.Minute, app.Err)
	// The changelog is compacted (the real broker's cleaner runs every second), so it may hold
	// anything from the latest put per customer to every put: wait until the latest entry of
	// every customer is its final total.
	finalOf := func(cl []*sarama.ConsumerMessage) map[string]*Total {
		final := map[string]*Total{}
		for _, m := range cl {
			k, err := keySerde.Deserialize(changelog, nil, m.Key)
			if err != nil {
				continue // reported below with the schema-id checks
			}
			if v, err := totalSerde.Deserialize(changelog, nil, m.Value); err == nil {
				final[k.Customer] = v
			}
		}
		return final
	}
	finalReached := func(final map[string]*Total) bool {
		for cust, w := range want {
			last := w[len(w)-1]
			if f := final[cust]; f == nil || f.Count != last.count || f.Sum.Cmp(last.sum) != 0 {
				return false
			}
		}
		return true
	}
	clc := collectTopic(t, b, changelog)
	cl := clc.waitFor(t, "changelog", len(want), time.Minute, app.Err)
	for deadline := time.Now().Add(time.Minute); !finalReached(finalOf(cl)) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // poll interval; the deadline bounds the wait
		cl = clc.snapshot()
	}
	closeApp()
	if app.State() != kstreams.StateNotRunning {
		t.Fatalf("state after Close: %s", app.State())
	}
	raws := out.snapshot() // anything late would be a duplicate

	// Output: exactly the running totals computed above, per customer, in order.
	keyID := must[srapi.Schema](t)(srapi.Of(c).Latest(ctx, output+"-key")).ID
	valID := must[srapi.Schema](t)(srapi.Of(c).Latest(ctx, output+"-value")).ID
	if len(raws) != n {
		t.Fatalf("%d output records; want %d", len(raws), n)
	}
	got := map[string][]expectedTotal{}
	for _, m := range raws {
		if id := schemaID(m.Key); id != keyID {
			t.Errorf("output key % x: schema id %d, want %d (subject %s-key)", m.Key, id, keyID, output)
		}
		if id := schemaID(m.Value); id != valID {
			t.Errorf("output value % x: schema id %d, want %d (subject %s-value)", m.Value, id, valID, output)
		}
		k := must[OrderKey](t)(keySerde.Deserialize(output, nil, m.Key))
		v := must[*Total](t)(totalSerde.Deserialize(output, nil, m.Value))
		if v.Customer != k.Customer {
			t.Errorf("output %v has customer %q", k, v.Customer)
		}
		got[k.Customer] = append(got[k.Customer], expectedTotal{count: v.Count, sum: v.Sum, last: v.LastAt.UnixMilli(), ts: m.Timestamp.UnixMilli()})
	}
	for cust, w := range want {
		g := got[cust]
		if len(g) != len(w) {
			t.Errorf("customer %s: %d totals, want %d", cust, len(g), len(w))
			continue
		}
		for i := range w {
			if g[i].count != w[i].count || g[i].sum.Cmp(w[i].sum) != 0 || g[i].last != w[i].last || g[i].ts != w[i].ts {
				t.Errorf("customer %s total %d = count %d sum %v last %d @%d; want count %d sum %v last %d @%d", cust, i,
					g[i].count, g[i].sum.FloatString(2), g[i].last, g[i].ts, w[i].count, w[i].sum.FloatString(2), w[i].last, w[i].ts)
			}
		}
	}

	// Changelog: Confluent-framed Avro under the changelog topic's subjects; the last entry
	// per customer is its final total.
	clKeyID := must[srapi.Schema](t)(srapi.Of(c).Latest(ctx, changelog+"-key")).ID
	clValID := must[srapi.Schema](t)(srapi.Of(c).Latest(ctx, changelog+"-value")).ID
	if len(cl) < len(want) || len(cl) > n {
		t.Errorf("%d changelog records; want between %d (compacted to the latest put per customer) and %d (one put per order)", len(cl), len(want), n)
	}
	final := map[string]*Total{}
	for _, m := range cl {
		if schemaID(m.Key) != clKeyID || schemaID(m.Value) != clValID {
			t.Errorf("changelog record % x = % x: ids %d/%d, want %d/%d", m.Key, m.Value, schemaID(m.Key), schemaID(m.Value), clKeyID, clValID)
			continue
		}
		k := must[OrderKey](t)(keySerde.Deserialize(changelog, nil, m.Key))
		final[k.Customer] = must[*Total](t)(totalSerde.Deserialize(changelog, nil, m.Value))
	}
	for cust, w := range want {
		last := w[len(w)-1]
		if f := final[cust]; f == nil || f.Count != last.count || f.Sum.Cmp(last.sum) != 0 {
			t.Errorf("changelog final total of %s = %+v; want count %d sum %s", cust, f, last.count, last.sum.FloatString(2))
		}
	}
	// The other subjects the records crossed exist under the topic-name strategy.
	for _, s := range []string{input + "-key", input + "-value"} {
		if _, err := srapi.Of(c).Latest(ctx, s); err != nil {
			t.Errorf("subject %s: %v", s, err)
		}
	}

	// The poison record went to the handler (an *avro.Error naming the unknown id) and, raw,
	// to the dead-letter topic; no other record was lost (checked above).
	hmu.Lock()
	if len(handled) != 1 {
		t.Errorf("deserialization handler called %d times (%v); want once", len(handled), handled)
	}
	for _, e := range handled {
		var ae *serde.Error
		if !errors.As(e, &ae) || !strings.Contains(e.Error(), fmt.Sprintf("schema id %d:", poisonID)) || ae.Topic != input {
			t.Errorf("handler error %v; want a *serde.Error for schema id %d on %s", e, poisonID, input)
		}
	}
	hmu.Unlock()
	if len(dead) != 1 {
		t.Fatalf("%d dead letters; want 1", len(dead))
	}
	d := dead[0]
	if string(d.Key) != string(poisonKey) || string(d.Value) != string(poisonValue) {
		t.Errorf("dead letter % x = % x; want % x = % x", d.Key, d.Value, poisonKey, poisonValue)
	}
	hdr := map[string]string{}
	for _, h := range d.Headers {
		hdr[string(h.Key)] = string(h.Value)
	}
	if hdr["__streams.errors.topic"] != input || hdr["__streams.errors.message"] == "" {
		t.Errorf("dead-letter headers %v", hdr)
	}
}
