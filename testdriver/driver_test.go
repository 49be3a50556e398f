package testdriver

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var stringProps = map[string]string{
	propnames.ApplicationIDConfig:     "app",
	propnames.DefaultKeySerdeConfig:   "org.apache.kafka.common.serialization.Serdes$StringSerde",
	propnames.DefaultValueSerdeConfig: "org.apache.kafka.common.serialization.Serdes$StringSerde",
}

// procSupplier returns the untyped supplier processor.Topology.AddProcessor puts in the graph
// for a node name running f's processors.
func procSupplier[KIn, VIn, KOut, VOut any](name string, f func() processor.Processor[KIn, VIn, KOut, VOut]) processor.ProcessorSupplier[any, any, any, any] {
	topo := processor.NewTopology()
	if err := topo.AddSource(name+"-source", []string{name + "-topic"}); err != nil {
		panic(err)
	}
	if err := topo.AddProcessor(name, processor.ProcessorSupplierFunc[KIn, VIn, KOut, VOut](f), name+"-source"); err != nil {
		panic(err)
	}
	return topology.Of(topo).Node(name).Supplier.(processor.ProcessorSupplier[any, any, any, any])
}

// wordCountGraph builds WordCountProcessorDemo's topology.
func wordCountGraph(t *testing.T) *topology.Builder {
	b := topology.New()
	must(t, b.AddSource("Source", []string{"streams-plaintext-input"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(t, b.AddProcessor("Process", procSupplier("Process", func() processor.Processor[string, string, string, string] {
		return &wordCountProcessor{}
	}), "Source"))
	must(t, b.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer()), "Process"))
	must(t, b.AddSink("Sink", "streams-wordcount-processor-output", nil, "", nil, nil, nil, "Process"))
	return b
}

func TestWordCountProcessorDemo(t *testing.T) {
	d, err := newDriver(wordCountGraph(t), stringProps, 0)
	must(t, err)
	defer d.Close()
	in := CreateInputTopic(d, "streams-plaintext-input", serde.String(), serde.String(), WithStartTimestamp(0))
	out := CreateOutputTopic(d, "streams-wordcount-processor-output", serde.String(), serde.String())
	// Stream-time punctuation every 1 s, first due at 0: fires after the first record (stream
	// time 500), next when stream time reaches 1000.
	must(t, in.PipeValueAt("Hello Kafka", 500))
	must(t, in.PipeValueAt("hello streams", 900))
	must(t, in.PipeValueAt("bye", 1000))
	recs, err := out.ReadRecordsToList()
	must(t, err)
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s=%s@%d", r.Key, r.Value, r.Timestamp))
	}
	want := "hello=1@500,kafka=1@500,bye=1@1000,hello=2@1000,kafka=1@1000,streams=1@1000"
	if strings.Join(got, ",") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(got, ","), want)
	}
	// Changelog writes are captured too, one per put, with the record's timestamp.
	cl := CreateOutputTopic(d, "app-Counts-changelog", serde.String(), serde.Integer())
	if cl.QueueSize() != 5 {
		t.Fatalf("changelog size %d", cl.QueueSize())
	}
	first, err := cl.ReadRecord()
	must(t, err)
	if first.Key != "hello" || first.Value != 1 || first.Timestamp != 500 {
		t.Fatalf("first changelog record %v", first)
	}
	if names := d.ProducedTopicNames(); !slices.Equal(names, []string{"app-Counts-changelog", "streams-wordcount-processor-output"}) {
		t.Fatalf("produced topics %v", names)
	}
	kv, err := KeyValueStore[string, int32](d, "Counts")
	must(t, err)
	if v, ok, _ := kv.Get("hello"); !ok || v != 2 {
		t.Fatalf("store hello = %v %v", v, ok)
	}
	_, err = KeyValueStore[string, int64](d, "Counts")
	wantErr(t, err, processor.ErrWrongStoreType, `state store "Counts" is a key-value store of string keys and int32 values, `+
		`not a key-value store of string keys and int64 values; ask for KeyValueStore[string, int32]`)
	_, err = KeyValueStore[string, int32](d, "Count")
	wantErr(t, err, processor.ErrUnknownStore, `testdriver: unknown state store: "Count"`)
	must(t, d.Close())
	if kv.IsOpen() {
		t.Fatal("store open after Close")
	}
	if err := in.PipeInput("x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("pipe after close: %v", err)
	}
}

func pipeGraph(t *testing.T) *topology.Builder {
	b := topology.New()
	must(t, b.AddSource("src", []string{"in"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(t, b.AddSink("sink", "out", nil, "", nil, nil, nil, "src"))
	return b
}

func TestInputTopicTimestampsAndHeaders(t *testing.T) {
	d, err := newDriver(pipeGraph(t), stringProps, 0)
	must(t, err)
	in := CreateInputTopic(d, "in", serde.String(), serde.String(), WithStartTimestamp(1000), WithAutoAdvance(10*time.Millisecond))
	out := CreateOutputTopic(d, "out", serde.String(), serde.String())
	must(t, in.PipeInput("a"))
	must(t, in.PipeKeyValue("k", "b"))
	must(t, in.PipeKeyValueAt("k", "c", 5)) // explicit time does not advance the topic time
	must(t, in.AdvanceTime(time.Second))
	must(t, in.PipeValueList([]string{"d", "e"}))
	must(t, in.PipeKeyValueList([]KeyValue[string, string]{{Key: "x", Value: "f"}}))
	must(t, in.PipeValueListAt([]string{"g", "h"}, 50, 5*time.Millisecond))
	must(t, in.PipeKeyValueListAt([]KeyValue[string, string]{{Key: "y", Value: "i"}}, 70, 0))
	rec := NewTestRecordAt("hk", "j", 99).WithHeaders(*serde.NewHeaders(serde.Header{Key: "h1", Value: []byte("x")}))
	must(t, in.PipeRecordList([]TestRecord[string, string]{rec}))
	if out.QueueSize() != 10 {
		t.Fatalf("queue size %d", out.QueueSize())
	}
	recs, err := out.ReadRecordsToList()
	must(t, err)
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s:%s@%d", r.Key, r.Value, r.Timestamp))
	}
	want := ":a@1000,k:b@1010,k:c@5,:d@2020,:e@2030,x:f@2040,:g@50,:h@55,y:i@70,hk:j@99"
	if strings.Join(got, ",") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, ","), want)
	}
	if h, ok := recs[9].Headers.LastHeader("h1"); !ok || string(h.Value) != "x" {
		t.Fatal("header lost")
	}
	if _, err := out.ReadValue(); !errors.Is(err, ErrEmptyTopic) {
		t.Fatalf("read empty: %v", err)
	}
	if _, err := CreateOutputTopic(d, "nothing", serde.String(), serde.String()).ReadValue(); !errors.Is(err, ErrEmptyTopic) || !strings.Contains(err.Error(), "nothing (uninitialized: nothing was ever produced to it)") {
		t.Fatalf("read uninitialized: %v", err)
	}
	if err := CreateInputTopic(d, "nope", serde.String(), serde.String()).PipeInput("x"); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("unknown topic: %v", err)
	}
	if err := in.AdvanceTime(-time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("negative advance: %v", err)
	}
}

func TestOutputTopicReaders(t *testing.T) {
	d, err := newDriver(pipeGraph(t), stringProps, 0)
	must(t, err)
	in := CreateInputTopic(d, "in", serde.String(), serde.String(), WithStartTimestamp(0))
	out := CreateOutputTopic(d, "out", serde.String(), serde.String())
	must(t, in.PipeKeyValueList([]KeyValue[string, string]{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}, {Key: "a", Value: "3"}}))
	m, err := ReadKeyValuesToMap(out)
	must(t, err)
	if len(m) != 2 || m["a"] != "3" || m["b"] != "2" {
		t.Fatalf("map %v", m)
	}
	must(t, in.PipeKeyValue("k", "v"))
	kv, err := out.ReadKeyValue()
	must(t, err)
	if kv.Key != "k" || kv.Value != "v" {
		t.Fatalf("kv %v", kv)
	}
	must(t, in.PipeValueList([]string{"x", "y"}))
	vals, err := out.ReadValuesToList()
	must(t, err)
	if !slices.Equal(vals, []string{"x", "y"}) || !out.IsEmpty() {
		t.Fatalf("values %v", vals)
	}
	// Null key: the map reader refuses it (Java: IllegalStateException).
	outp := CreateOutputTopic(d, "out", serde.Nullable(serde.String()), serde.String())
	inp := CreateInputTopic(d, "in", serde.Nullable(serde.String()), serde.String(), WithStartTimestamp(0))
	must(t, inp.PipeInput("v"))
	if _, err := ReadKeyValuesToMap(outp); !errors.Is(err, ErrNullKey) {
		t.Fatalf("null key: %v", err)
	}
}

// repartitionGraph: in -> map key -> sink rep; rep -> sink out (rep is read back in).
func repartitionGraph(t *testing.T) *topology.Builder {
	b := topology.New()
	must(t, b.AddSource("src", []string{"in"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(t, b.AddProcessor("rekey", procSupplier("rekey", func() processor.Processor[string, string, string, string] {
		return &rekey{}
	}), "src"))
	must(t, b.AddSink("to-rep", "app-rep-repartition", nil, "", nil, nil, nil, "rekey"))
	must(t, b.AddSource("from-rep", []string{"app-rep-repartition"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(t, b.AddSink("sink", "out", nil, "", nil, nil, nil, "from-rep"))
	return b
}

type rekey struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *rekey) Init(ctx processor.ProcessorContext[string, string]) error { p.ctx = ctx; return nil }
func (p *rekey) Process(r processor.Record[string, string]) error {
	if r.Value == "fail" {
		return errors.New("boom")
	}
	return p.ctx.Forward(r.WithKey(r.Value))
}
func (p *rekey) Close() error { return nil }

func TestRepartitionLoopbackAndErrors(t *testing.T) {
	d, err := newDriver(repartitionGraph(t), stringProps, 0)
	must(t, err)
	in := CreateInputTopic(d, "in", serde.String(), serde.String(), WithStartTimestamp(7))
	out := CreateOutputTopic(d, "out", serde.String(), serde.String())
	must(t, in.PipeKeyValue("k", "v1"))
	kv, err := out.ReadKeyValue()
	must(t, err)
	if kv.Key != "v1" || kv.Value != "v1" {
		t.Fatalf("got %v", kv)
	}
	if names := d.ProducedTopicNames(); !slices.Equal(names, []string{"app-rep-repartition", "out"}) {
		t.Fatalf("produced %v", names)
	}
	err = in.PipeKeyValue("k", "fail")
	var pe interface{ Unwrap() error }
	if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "processor=rekey, topic=in, partition=0, offset=1: boom") {
		t.Fatalf("processing error: %v", err)
	}
	// The driver keeps working after a failed record.
	must(t, in.PipeKeyValue("k", "v2"))
	if v, err := out.ReadValue(); err != nil || v != "v2" {
		t.Fatalf("after error: %v %v", v, err)
	}
}

// wallClockGraph: a processor emitting a record per wall-clock punctuation.
type ticker struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *ticker) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	_, err := ctx.Schedule(100*time.Millisecond, processor.WallClockTime, func(ts int64) error {
		return ctx.Forward(processor.NewRecord("tick", fmt.Sprint(ctx.CurrentSystemTimeMs()), ts))
	})
	return err
}
func (p *ticker) Process(processor.Record[string, string]) error { return nil }
func (p *ticker) Close() error                                   { return nil }

func TestAdvanceWallClockTime(t *testing.T) {
	b := topology.New()
	must(t, b.AddSource("src", []string{"in"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(t, b.AddProcessor("tick", procSupplier("tick", func() processor.Processor[string, string, string, string] { return &ticker{} }), "src"))
	must(t, b.AddSink("sink", "out", nil, "", nil, nil, nil, "tick"))
	d, err := newDriver(b, stringProps, 1000)
	must(t, err)
	out := CreateOutputTopic(d, "out", serde.String(), serde.String())
	for _, adv := range []time.Duration{50, 50, 250, 10} {
		must(t, d.AdvanceWallClockTime(adv*time.Millisecond))
	}
	recs, err := out.ReadRecordsToList()
	must(t, err)
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s@%d", r.Value, r.Timestamp))
	}
	// Due at 1100 (reached at 1100), then 1200; at 1350 it fires once and moves to 1400.
	if strings.Join(got, ",") != "1100@1100,1350@1350" {
		t.Fatalf("got %v", got)
	}
	if d.WallClockTimeMs() != 1360 {
		t.Fatalf("wall clock %d", d.WallClockTimeMs())
	}
	if err := d.AdvanceWallClockTime(-time.Millisecond); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("negative: %v", err)
	}
}

// Global store: a global processor writes the store; a stream processor reads it.
type globalWriter struct {
	kv store.KeyValueStore[string, string]
}

func (p *globalWriter) Init(ctx processor.ProcessorContext[any, any]) error {
	var err error
	p.kv, err = processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "global")
	return err
}
func (p *globalWriter) Process(r processor.Record[any, any]) error {
	return p.kv.Put(r.Key.(string), r.Value.(string))
}
func (p *globalWriter) Close() error { return nil }

type enricher struct {
	ctx processor.ProcessorContext[string, string]
	kv  store.KeyValueStore[string, string]
}

func (p *enricher) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	var err error
	p.kv, err = processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "global")
	return err
}
func (p *enricher) Process(r processor.Record[string, string]) error {
	v, _, err := p.kv.Get(r.Key)
	if err != nil {
		return err
	}
	return p.ctx.Forward(r.WithValue(r.Value + "+" + v))
}
func (p *enricher) Close() error { return nil }

func TestGlobalStore(t *testing.T) {
	b := topology.New()
	gb := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("global"), serde.String(), serde.String()).WithLoggingDisabled()
	must(t, b.AddGlobalStore(gb, "gsrc", nil, nil, nil, "global-topic", "gproc",
		processor.ProcessorSupplierFunc[any, any, any, any](func() processor.Processor[any, any, any, any] { return &globalWriter{} }), true))
	must(t, b.AddSource("src", []string{"in"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(t, b.AddProcessor("enrich", procSupplier("enrich", func() processor.Processor[string, string, string, string] { return &enricher{} }), "src"))
	must(t, b.AddSink("sink", "out", nil, "", nil, nil, nil, "enrich"))
	d, err := newDriver(b, stringProps, 0)
	must(t, err)
	g := CreateInputTopic(d, "global-topic", serde.String(), serde.String(), WithStartTimestamp(0))
	in := CreateInputTopic(d, "in", serde.String(), serde.String(), WithStartTimestamp(0))
	out := CreateOutputTopic(d, "out", serde.String(), serde.String())
	must(t, g.PipeKeyValue("k", "G"))
	must(t, in.PipeKeyValue("k", "v"))
	if v, err := out.ReadValue(); err != nil || v != "v+G" {
		t.Fatalf("enriched %q %v", v, err)
	}
	kv, err := KeyValueStore[string, string](d, "global")
	must(t, err)
	if v, _, _ := kv.Get("k"); v != "G" {
		t.Fatalf("global store %q", v)
	}
	if len(d.AllStateStores()) != 1 {
		t.Fatalf("stores %v", d.AllStateStores())
	}
	must(t, d.Close())
}

func TestConfigErrors(t *testing.T) {
	_, err := newDriver(pipeGraph(t), map[string]string{propnames.DefaultKeySerdeConfig: "com.example.Nope"}, 0)
	if !errors.Is(err, serde.ErrUnknownClass) {
		t.Fatalf("unknown serde class: %v", err)
	}
	// No default serdes at all: the source cannot be initialised.
	if _, err := newDriver(pipeGraph(t), nil, 0); err == nil {
		t.Fatal("no serdes accepted")
	}
	d, err := newDriver(pipeGraph(t), nil, 0, WithDefaultSerdes(serde.Untyped(serde.String()), serde.Untyped(serde.String())))
	must(t, err)
	if !strings.HasPrefix(d.ApplicationID(), "dummy-topology-test-driver-app-id-") {
		t.Fatalf("app id %q", d.ApplicationID())
	}
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func TestInternalTopicDecorationAndReadOnlyStore(t *testing.T) {
	b := topology.New()
	b.AddInternalTopic("rep-repartition", topology.InternalTopicProperties{})
	must(t, b.AddSource("src", []string{"in"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(t, b.AddSink("to-rep", "rep-repartition", nil, "", nil, nil, nil, "src"))
	must(t, b.AddSource("from-rep", []string{"rep-repartition"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(t, b.AddSink("sink", "out", nil, "", nil, nil, nil, "from-rep"))
	// A read-only store fed from its own topic: its changelog is that topic, so nothing is logged.
	ro := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("ro"), serde.String(), serde.String())
	must(t, b.AddReadOnlyStore(ro, "ro-src", nil, nil, nil, "ro-topic", "ro-proc",
		procSupplier("ro-proc", func() processor.Processor[string, string, string, string] { return &storeWriter{} })))
	d, err := newDriver(b, stringProps, 0)
	must(t, err)
	must(t, CreateInputTopic(d, "in", serde.String(), serde.String(), WithStartTimestamp(1)).PipeKeyValue("k", "v"))
	must(t, CreateInputTopic(d, "ro-topic", serde.String(), serde.String(), WithStartTimestamp(1)).PipeKeyValue("rk", "rv"))
	if names := d.ProducedTopicNames(); !slices.Equal(names, []string{"app-rep-repartition", "out"}) {
		t.Fatalf("produced %v", names)
	}
	kv, err := KeyValueStore[string, string](d, "ro")
	must(t, err)
	if v, _, _ := kv.Get("rk"); v != "rv" {
		t.Fatalf("read-only store %q", v)
	}
	if err := CreateInputTopic(d, "rep-repartition", serde.String(), serde.String()).PipeInput("x"); !errors.Is(err, ErrUnknownTopic) {
		t.Fatalf("raw internal name accepted: %v", err)
	}
}

type storeWriter struct {
	kv store.KeyValueStore[string, string]
}

func (p *storeWriter) Init(ctx processor.ProcessorContext[string, string]) error {
	var err error
	p.kv, err = processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "ro")
	return err
}
func (p *storeWriter) Process(r processor.Record[string, string]) error {
	return p.kv.Put(r.Key, r.Value)
}
func (p *storeWriter) Close() error { return nil }

// offsetEcho forwards the offset of each record as its value.
type offsetEcho struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *offsetEcho) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	return nil
}
func (p *offsetEcho) Process(r processor.Record[string, string]) error {
	md, _ := p.ctx.RecordMetadata()
	return p.ctx.Forward(r.WithValue(fmt.Sprintf("%s@%d", md.Topic, md.Offset)))
}
func (p *offsetEcho) Close() error { return nil }

// Topics read through one pattern source share one offset sequence in Java's driver (the pattern
// is subscribed as a single placeholder partition); named topics count on their own. Java 4.4.0
// prints [orders-eu@0, orders-us@1, other@0, orders-eu@2] for this topology and input
// (testdata/PatternOffsets.java).
func TestPatternSourceOffsets(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSourcePattern("pat", "orders-.*"))
	must(t, topo.AddSource("named", []string{"other"}))
	must(t, topo.AddProcessor("echo", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &offsetEcho{} }), "pat", "named"))
	must(t, topo.AddSink("sink", "out", []string{"echo"}))
	d, err := New(topo, stringProps, 0)
	must(t, err)
	for _, topic := range []string{"orders-eu", "orders-us", "other", "orders-eu"} {
		must(t, CreateInputTopic(d, topic, serde.String(), serde.String(), WithStartTimestamp(0)).PipeKeyValue("k", "v"))
	}
	vals, err := CreateOutputTopic(d, "out", serde.String(), serde.String()).ReadValuesToList()
	must(t, err)
	if !slices.Equal(vals, []string{"orders-eu@0", "orders-us@1", "other@0", "orders-eu@2"}) {
		t.Fatalf("offsets %v", vals)
	}
}

func TestNilSerdesAreErrors(t *testing.T) {
	d, err := newDriver(pipeGraph(t), stringProps, 0)
	must(t, err)
	if err := CreateInputTopic[string, string](d, "in", nil, serde.String()).PipeInput("x"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil serializer: %v", err)
	}
	must(t, CreateInputTopic(d, "in", serde.String(), serde.String()).PipeInput("x"))
	if _, err := CreateOutputTopic[string, string](d, "out", serde.String(), nil).ReadValue(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil deserializer: %v", err)
	}
}

func TestTestRecordEqual(t *testing.T) {
	h := *serde.NewHeaders(serde.Header{Key: "a", Value: []byte("1")})
	a := NewTestRecordAt("k", []byte("v"), 5).WithHeaders(h)
	b := NewTestRecordAt("k", []byte("v"), 5).WithHeaders(h)
	if !a.Equal(b) {
		t.Fatal("equal records differ")
	}
	for _, o := range []TestRecord[string, []byte]{
		NewTestRecordAt("k", []byte("v"), 6).WithHeaders(h),
		NewTestRecordAt("k", []byte("w"), 5).WithHeaders(h),
		NewTestRecordAt("k", []byte("v"), 5),
		NewTestRecord("k", []byte("v")).WithHeaders(h),
	} {
		if a.Equal(o) {
			t.Fatalf("%v equals %v", a, o)
		}
	}
}

type failOnBad struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *failOnBad) Init(c processor.ProcessorContext[string, string]) error { p.ctx = c; return nil }
func (p *failOnBad) Process(r processor.Record[string, string]) error {
	if err := p.ctx.Forward(r.WithValue("before-" + r.Value)); err != nil {
		return err
	}
	if r.Value == "bad" {
		return errors.New("boom")
	}
	return p.ctx.Forward(r.WithValue("after-" + r.Value))
}
func (p *failOnBad) Close() error { return nil }

// What a failing record produced before the error becomes readable only after the next call.
// Java 4.4.0 prints "ok,[before-a, after-a],error,[],ok,[before-bad, before-c, after-c]"
// (testdata/ProcFail.java).
func TestOutputsOfAFailedRecordMatchJava(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("in", []string{"in"}))
	must(t, topo.AddProcessor("p", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &failOnBad{} }), "in"))
	must(t, topo.AddSink("out", "out", []string{"p"}))
	d, err := New(topo, stringProps, 0)
	must(t, err)
	in := CreateInputTopic(d, "in", serde.String(), serde.String())
	out := CreateOutputTopic(d, "out", serde.String(), serde.String())
	var log []string
	for _, v := range []string{"a", "bad", "c"} {
		if err := in.PipeKeyValueAt("k", v, 1); err != nil {
			log = append(log, "error")
		} else {
			log = append(log, "ok")
		}
		vals, _ := out.ReadValuesToList()
		log = append(log, "["+strings.Join(vals, ", ")+"]")
	}
	if got := strings.Join(log, ","); got != "ok,[before-a, after-a],error,[],ok,[before-bad, before-c, after-c]" {
		t.Fatalf("got %s", got)
	}
}

// Negative input timestamps per extractor. Java 4.4.0 (pipeInput with an Instant) prints
// "ok,error,ok,error,v5@5,v7@7,|,ok,ok,ok,ok,v5@5,v7@7,|,ok,ok,ok,ok,v5@5,v-1@5,v7@7,v-3@7,|"
// (testdata/NegTs.java).
func TestNegativeInputTimestampsMatchJava(t *testing.T) {
	var log []string
	for _, extractor := range []string{"", "org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp",
		"org.apache.kafka.streams.processor.UsePartitionTimeOnInvalidTimestamp"} {
		props := withProps(stringProps)
		if extractor != "" {
			props[propnames.DefaultTimestampExtractorConfig] = extractor
		}
		d, err := newDriver(pipeGraph(t), props, 0, WithLogger(slog.New(slog.DiscardHandler)))
		must(t, err)
		in := CreateInputTopic(d, "in", serde.String(), serde.String())
		for _, ts := range []int64{5, -1, 7, -3} {
			if err := in.PipeKeyValueAt("k", fmt.Sprintf("v%d", ts), ts); err != nil {
				log = append(log, "error")
			} else {
				log = append(log, "ok")
			}
		}
		recs, err := CreateOutputTopic(d, "out", serde.String(), serde.String()).ReadRecordsToList()
		must(t, err)
		for _, r := range recs {
			log = append(log, fmt.Sprintf("%s@%d", r.Value, r.Timestamp))
		}
		log = append(log, "|")
		must(t, d.Close())
	}
	want := "ok,error,ok,error,v5@5,v7@7,|,ok,ok,ok,ok,v5@5,v7@7,|,ok,ok,ok,ok,v5@5,v-1@5,v7@7,v-3@7,|"
	if got := strings.Join(log, ","); got != want {
		t.Fatalf("got  %s\njava %s", got, want)
	}
}
