package avro_test

import (
	"context"
	"encoding/binary"
	"errors"
	"github.com/kstreams-go/kstreams/serde/internal/srapi"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/avro"
	"github.com/kstreams-go/kstreams/serde/avro/avrotest"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

type OrderKey struct {
	Customer string `avro:"customer"`
}

type Order struct {
	ID     int64     `avro:"id"`
	Amount *big.Rat  `avro:"amount"`
	At     time.Time `avro:"at"`
	Note   *string   `avro:"note"`
}

type Total struct {
	Customer string    `avro:"customer"`
	Count    int32     `avro:"count"`
	Sum      *big.Rat  `avro:"sum"`
	LastAt   time.Time `avro:"lastAt"`
}

const (
	orderKeySchema = `{"type":"record","name":"OrderKey","namespace":"shop","fields":[{"name":"customer","type":"string"}]}`
	orderSchema    = `{"type":"record","name":"Order","namespace":"shop","fields":[
	  {"name":"id","type":"long"},
	  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
	  {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
	  {"name":"note","type":["null","string"],"default":null}]}`
	totalSchema = `{"type":"record","name":"Total","namespace":"shop","fields":[
	  {"name":"customer","type":"string"},
	  {"name":"count","type":"int"},
	  {"name":"sum","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
	  {"name":"lastAt","type":{"type":"long","logicalType":"timestamp-millis"}}]}`
)

// totals keeps a running total per customer in the "totals" store and forwards it; a
// tombstone for a customer deletes the total and forwards a tombstone.
type totals struct {
	ctx processor.ProcessorContext[OrderKey, *Total]
	kv  store.KeyValueStore[OrderKey, *Total]
}

func (p *totals) Init(ctx processor.ProcessorContext[OrderKey, *Total]) error {
	p.ctx = ctx
	kv, err := processor.GetStateStore[store.KeyValueStore[OrderKey, *Total]](ctx, "totals")
	p.kv = kv
	return err
}

func (p *totals) Process(r processor.Record[OrderKey, *Order]) error {
	if r.Value == nil {
		if _, _, err := p.kv.Delete(r.Key); err != nil {
			return err
		}
		return p.ctx.Forward(processor.NewRecord[OrderKey, *Total](r.Key, nil, r.Timestamp))
	}
	t, ok, err := p.kv.Get(r.Key)
	if err != nil {
		return err
	}
	if !ok {
		t = &Total{Customer: r.Key.Customer, Sum: new(big.Rat)}
	}
	t.Count++
	t.Sum = new(big.Rat).Add(t.Sum, r.Value.Amount)
	t.LastAt = r.Value.At
	if err := p.kv.Put(r.Key, t); err != nil {
		return err
	}
	return p.ctx.Forward(processor.NewRecord(r.Key, t, r.Timestamp))
}

func (p *totals) Close() error { return nil }

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestTopologyTestDriverRoundTrip runs a topology whose source, store and sink use Avro
// keys and values, against the in-process registry double.
func TestTopologyTestDriverRoundTrip(t *testing.T) {
	reg := avrotest.NewRegistry(t)
	c := reg.Client()
	keySerde := must[*avro.Serde[OrderKey]](t)(avro.New[OrderKey](c, orderKeySchema, avro.AsKey()))
	orderSerde := must[*avro.Serde[*Order]](t)(avro.New[*Order](c, orderSchema))
	totalSerde := must[*avro.Serde[*Total]](t)(avro.New[*Total](c, totalSchema))

	top := processor.NewTopology()
	if err := top.AddSource("Orders", []string{"orders"},
		processor.WithKeyDeserializer[OrderKey](keySerde), processor.WithValueDeserializer[*Order](orderSerde)); err != nil {
		t.Fatal(err)
	}
	if err := top.AddProcessor("Totals", processor.ProcessorSupplierFunc[OrderKey, *Order, OrderKey, *Total](
		func() processor.Processor[OrderKey, *Order, OrderKey, *Total] { return &totals{} }), "Orders"); err != nil {
		t.Fatal(err)
	}
	if err := top.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("totals"),
		serde.Serde[OrderKey](keySerde), serde.Serde[*Total](totalSerde)), "Totals"); err != nil {
		t.Fatal(err)
	}
	if err := top.AddSink("Out", "totals", []string{"Totals"},
		processor.WithKeySerializer[OrderKey](keySerde), processor.WithValueSerializer[*Total](totalSerde)); err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(top, map[string]string{props.ApplicationIDConfig: "shop"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	in := testdriver.CreateInputTopic(d, "orders", serde.Serializer[OrderKey](keySerde), serde.Serializer[*Order](orderSerde))
	out := testdriver.CreateOutputTopic(d, "totals", serde.Deserializer[OrderKey](keySerde), serde.Deserializer[*Total](totalSerde))
	rawOut := testdriver.CreateOutputTopic(d, "totals", serde.ByteArray(), serde.ByteArray())

	note := "gift"
	ann, bob := OrderKey{"ann"}, OrderKey{"bob"}
	at := func(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
	steps := []struct {
		key   OrderKey
		order *Order
		ts    int64
	}{
		{ann, &Order{ID: 1, Amount: big.NewRat(1050, 100), At: at(1000)}, 1000},
		{bob, &Order{ID: 2, Amount: big.NewRat(1, 100), At: at(2000), Note: &note}, 2000},
		{ann, &Order{ID: 3, Amount: big.NewRat(-250, 100), At: at(3000)}, 3000},
		{bob, nil, 4000},
	}
	for _, s := range steps {
		if err := in.PipeKeyValueAt(s.key, s.order, s.ts); err != nil {
			t.Fatal(err)
		}
	}
	// Peek at the raw bytes first: Confluent framing with the ids the subjects got.
	ctx := context.Background()
	keyID := must[int](t)(func() (int, error) { s, err := srapi.Of(c).Latest(ctx, "totals-key"); return s.ID, err }())
	valID := must[int](t)(func() (int, error) { s, err := srapi.Of(c).Latest(ctx, "totals-value"); return s.ID, err }())
	raws := must[[]testdriver.TestRecord[[]byte, []byte]](t)(rawOut.ReadRecordsToList())
	if len(raws) != 4 {
		t.Fatalf("%d raw output records; want 4", len(raws))
	}
	for i, r := range raws {
		if r.Key[0] != 0 || int(binary.BigEndian.Uint32(r.Key[1:5])) != keyID {
			t.Errorf("record %d key % x: not framed with totals-key id %d", i, r.Key, keyID)
		}
		if i == 3 {
			if r.Value != nil {
				t.Errorf("tombstone value % x; want nil", r.Value)
			}
			continue
		}
		if r.Value[0] != 0 || int(binary.BigEndian.Uint32(r.Value[1:5])) != valID {
			t.Errorf("record %d value % x: not framed with totals-value id %d", i, r.Value, valID)
		}
	}

	// Decode the captured bytes with the typed serdes and check the values.
	want := []struct {
		key   OrderKey
		count int32
		sum   *big.Rat
		last  int64
		ts    int64
	}{
		{ann, 1, big.NewRat(1050, 100), 1000, 1000},
		{bob, 1, big.NewRat(1, 100), 2000, 2000},
		{ann, 2, big.NewRat(800, 100), 3000, 3000},
	}
	for i, r := range raws {
		k, err := keySerde.Deserialize("totals", nil, r.Key)
		if err != nil {
			t.Fatal(err)
		}
		v, err := totalSerde.Deserialize("totals", nil, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			if k != bob || v != nil || r.Timestamp != 4000 {
				t.Errorf("record 3 = %v %v @%d; want bob tombstone @4000", k, v, r.Timestamp)
			}
			continue
		}
		w := want[i]
		if k != w.key || v.Customer != w.key.Customer || v.Count != w.count || v.Sum.Cmp(w.sum) != 0 ||
			v.LastAt.UnixMilli() != w.last || r.Timestamp != w.ts {
			t.Errorf("record %d = %v %+v @%d; want %v count %d sum %v last %d @%d", i, k, v, r.Timestamp, w.key, w.count, w.sum, w.last, w.ts)
		}
	}
	if !out.IsEmpty() {
		// The raw reader consumed the queue; the typed one shares it.
		t.Fatalf("typed output topic still has %d records", out.QueueSize())
	}

	// The store holds Avro-serialized totals, written through the changelog subjects.
	kv := must[store.KeyValueStore[OrderKey, *Total]](t)(testdriver.KeyValueStore[OrderKey, *Total](d, "totals"))
	got, ok, err := kv.Get(ann)
	if err != nil || !ok || got.Count != 2 || got.Sum.Cmp(big.NewRat(8, 1)) != 0 {
		t.Fatalf("store totals[ann] = %+v, %v, %v", got, ok, err)
	}
	if _, ok, _ := kv.Get(bob); ok {
		t.Fatal("store still has bob after the tombstone")
	}
	subjects := must[[]string](t)(srapi.Of(c).Subjects(ctx))
	wantSubjects := []string{"orders-key", "orders-value", "shop-totals-changelog-key", "shop-totals-changelog-value", "totals-key", "totals-value"}
	if len(subjects) != len(wantSubjects) {
		t.Fatalf("subjects %v; want %v", subjects, wantSubjects)
	}
	for i := range subjects {
		if subjects[i] != wantSubjects[i] {
			t.Fatalf("subjects %v; want %v", subjects, wantSubjects)
		}
	}
	cl := testdriver.CreateOutputTopic(d, "shop-totals-changelog", serde.Deserializer[OrderKey](keySerde), serde.Deserializer[*Total](totalSerde))
	if n := cl.QueueSize(); n != 4 {
		t.Fatalf("changelog has %d records; want 4 (3 puts, 1 delete)", n)
	}
}

// TestTopologyTestDriverBadAvro: a record whose schema id the registry does not know fails
// the pipe with an error naming the id (the driver's default handler is log-and-fail).
func TestTopologyTestDriverBadAvro(t *testing.T) {
	reg := avrotest.NewRegistry(t)
	c := reg.Client()
	orderSerde := must[*avro.Serde[*Order]](t)(avro.New[*Order](c, orderSchema))
	top := processor.NewTopology()
	if err := top.AddSource("Orders", []string{"orders"},
		processor.WithKeyDeserializer[[]byte](serde.ByteArray()), processor.WithValueDeserializer[*Order](orderSerde)); err != nil {
		t.Fatal(err)
	}
	if err := top.AddSink("Out", "out", []string{"Orders"},
		processor.WithKeySerializer[[]byte](serde.ByteArray()), processor.WithValueSerializer[*Order](orderSerde)); err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(top, map[string]string{props.ApplicationIDConfig: "shop"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "orders", serde.ByteArray(), serde.ByteArray())
	err = in.PipeKeyValue([]byte("k"), []byte{0, 0, 0, 0, 42, 2})
	var ae *serde.Error
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "schema id 42:") || ae.Topic != "orders" {
		t.Fatalf("pipe err = %v; want a *serde.Error for schema id 42 on orders", err)
	}
	out := testdriver.CreateOutputTopic(d, "out", serde.ByteArray(), serde.ByteArray())
	if !out.IsEmpty() {
		t.Fatalf("%d records reached the sink", out.QueueSize())
	}
}

type Category struct {
	Name string `avro:"name"`
}

// TestDSLRoundTrip runs a DSL topology with Avro serdes everywhere: the source, a
// repartition (GroupBy on a new key), the aggregation store and its changelog, and the sink.
func TestDSLRoundTrip(t *testing.T) {
	reg := avrotest.NewRegistry(t)
	c := reg.Client()
	keySerde := must[*avro.Serde[OrderKey]](t)(avro.New[OrderKey](c, orderKeySchema, avro.AsKey()))
	orderSerde := must[*avro.Serde[*Order]](t)(avro.New[*Order](c, orderSchema))
	catSerde := must[*avro.Serde[Category]](t)(avro.New[Category](c,
		`{"type":"record","name":"Category","namespace":"shop","fields":[{"name":"name","type":"string"}]}`, avro.AsKey()))
	totalSerde := must[*avro.Serde[*Total]](t)(avro.New[*Total](c, totalSchema))

	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, "orders", kstream.ConsumedWith[OrderKey, *Order](keySerde, orderSerde)).
		GroupBy(func(_ OrderKey, o *Order) Category {
			if o.Amount.Sign() < 0 {
				return Category{"refund"}
			}
			return Category{"sale"}
		}, kstream.GroupedWith[Category, *Order](catSerde, orderSerde)).
		Aggregate(func() *Total { return &Total{Sum: new(big.Rat)} },
			func(k Category, o *Order, agg *Total) *Total {
				return &Total{Customer: k.Name, Count: agg.Count + 1, Sum: new(big.Rat).Add(agg.Sum, o.Amount), LastAt: o.At}
			}, kstream.MaterializedWith[Category, *Total](catSerde, totalSerde)).
		ToStream().To("by-category", kstream.ProducedWith[Category, *Total](catSerde, totalSerde))
	top, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(top, map[string]string{props.ApplicationIDConfig: "shop", "statestore.cache.max.bytes": "0"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "orders", serde.Serializer[OrderKey](keySerde), serde.Serializer[*Order](orderSerde))
	out := testdriver.CreateOutputTopic(d, "by-category", serde.Deserializer[Category](catSerde), serde.Deserializer[*Total](totalSerde))
	for i, amt := range []*big.Rat{big.NewRat(5, 1), big.NewRat(-2, 1), big.NewRat(125, 100)} {
		o := &Order{ID: int64(i), Amount: amt, At: time.UnixMilli(int64(1000 * (i + 1))).UTC()}
		if err := in.PipeKeyValueAt(OrderKey{"ann"}, o, int64(1000*(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	recs := must[[]testdriver.TestRecord[Category, *Total]](t)(out.ReadRecordsToList())
	want := []struct {
		cat   string
		count int32
		sum   *big.Rat
		ts    int64
	}{{"sale", 1, big.NewRat(5, 1), 1000}, {"refund", 1, big.NewRat(-2, 1), 2000}, {"sale", 2, big.NewRat(625, 100), 3000}}
	if len(recs) != len(want) {
		t.Fatalf("%d output records; want %d: %+v", len(recs), len(want), recs)
	}
	for i, r := range recs {
		w := want[i]
		if r.Key.Name != w.cat || r.Value.Count != w.count || r.Value.Sum.Cmp(w.sum) != 0 || r.Timestamp != w.ts {
			t.Errorf("record %d = %v %+v @%d; want %s count %d sum %v @%d", i, r.Key, r.Value, r.Timestamp, w.cat, w.count, w.sum, w.ts)
		}
	}
	// Every topic the records crossed registered its subjects, repartition and changelog too.
	subjects := must[[]string](t)(srapi.Of(c).Subjects(context.Background()))
	var repartition, changelog bool
	for _, s := range subjects {
		repartition = repartition || strings.HasSuffix(s, "-repartition-value")
		changelog = changelog || strings.HasSuffix(s, "-changelog-value")
	}
	if !repartition || !changelog {
		t.Fatalf("subjects %v lack the repartition or changelog topic's", subjects)
	}
}
