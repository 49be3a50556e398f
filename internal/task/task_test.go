package task

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

type capture struct{ out []OutRecord }

func (c *capture) Send(r OutRecord) error              { c.out = append(c.out, r); return nil }
func (c *capture) PartitionsFor(string) (int32, error) { return 3, nil }
func (c *capture) lines() string {
	var s []string
	for _, r := range c.out {
		s = append(s, fmt.Sprintf("%s/%d %q=%q@%d", r.Topic, r.Partition, r.Key, r.Value, r.Timestamp))
	}
	return strings.Join(s, "|")
}

// funcProc is an UntypedProcessor built from functions.
type funcProc struct {
	init    func(ctx processor.ProcessorContext[any, any]) error
	process func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error
	ctx     processor.ProcessorContext[any, any]
	closed  bool
}

func (f *funcProc) Init(ctx processor.ProcessorContext[any, any]) error {
	f.ctx = ctx
	if f.init != nil {
		return f.init(ctx)
	}
	return nil
}
func (f *funcProc) Process(r processor.Record[any, any]) error {
	if f.process != nil {
		return f.process(f.ctx, r)
	}
	return f.ctx.Forward(r)
}
func (f *funcProc) Close() error { f.closed = true; return nil }

var str = serde.Untyped(serde.String())

func pipeline(p *funcProc, stores ...string) Spec {
	return Spec{Nodes: []NodeSpec{
		{Name: "src", Kind: SourceNode, Topics: []string{"in", "in2"}, Children: []string{"proc"}},
		{Name: "proc", Kind: ProcessorNode, Children: []string{"sink"}, Stores: stores,
			NewProcessor: func() (UntypedProcessor, error) { return p, nil }},
		{Name: "sink", Kind: SinkNode, Topic: "out"},
	}}
}

func newTask(t *testing.T, spec Spec, clock *int64, mods ...func(*Config)) (*Task, *capture) {
	t.Helper()
	c := &capture{}
	cfg := Config{ApplicationID: "app", Collector: c, DefaultKeySerde: str, DefaultValueSerde: str,
		Clock: func() int64 { return *clock }}
	for _, m := range mods {
		m(&cfg)
	}
	tk, err := New(processor.TaskID{Subtopology: 0, Partition: 2}, spec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.Init(); err != nil {
		t.Fatal(err)
	}
	return tk, c
}

func raw(topic string, off, ts int64, k, v string) RawRecord {
	r := RawRecord{Topic: topic, Offset: off, Timestamp: ts}
	if k != "" {
		r.Key = []byte(k)
	}
	if v != "" {
		r.Value = []byte(v)
	}
	return r
}

func drain(t *testing.T, tk *Task, wall int64) {
	t.Helper()
	for {
		ok, err := tk.Process(wall)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		if _, err := tk.MaybePunctuateStreamTime(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestForwardRecordContextAndSink(t *testing.T) {
	var seen []string
	p := &funcProc{process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		md, ok := ctx.RecordMetadata()
		seen = append(seen, fmt.Sprintf("%v:%s/%d/%d st=%d", ok, md.Topic, md.Partition, md.Offset, ctx.CurrentStreamTimeMs()))
		return ctx.Forward(r.WithValue[any](fmt.Sprint(r.Value, "!")).WithTimestamp(r.Timestamp + 1))
	}}
	clock := int64(0)
	tk, c := newTask(t, pipeline(p), &clock)
	h := serde.NewHeaders(serde.Header{Key: "h", Value: []byte("v")})
	r := raw("in", 7, 100, "k", "v")
	r.Headers = h.Clone()
	if err := tk.AddRecord(r); err != nil {
		t.Fatal(err)
	}
	drain(t, tk, 0)
	if got := c.lines(); got != `out/-1 "k"="v!"@101` {
		t.Fatalf("output %s", got)
	}
	if hh, ok := c.out[0].Headers.LastHeader("h"); !ok || string(hh.Value) != "v" {
		t.Fatal("headers not carried to the sink")
	}
	if strings.Join(seen, ",") != "true:in/0/7 st=100" {
		t.Fatalf("record context %v", seen)
	}
}

type countingDeser struct{ calls int }

func (d *countingDeser) Deserialize(_ string, _ *serde.Headers, b []byte) (any, error) {
	d.calls++
	return string(b), nil
}

func TestNullBytesAreNotDeserializedAndNilNotSerialized(t *testing.T) {
	kd := &countingDeser{}
	var got []processor.Record[any, any]
	p := &funcProc{process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		got = append(got, r)
		return ctx.Forward(r)
	}}
	spec := pipeline(p)
	spec.Nodes[0].KeyDeserializer = kd
	clock := int64(0)
	tk, c := newTask(t, spec, &clock)
	_ = tk.AddRecord(raw("in", 0, 1, "", "v"))
	drain(t, tk, 0)
	if kd.calls != 0 || got[0].Key != nil {
		t.Fatalf("deserializer calls %d, key %v", kd.calls, got[0].Key)
	}
	if c.out[0].Key != nil || string(c.out[0].Value) != "v" {
		t.Fatalf("sink output %+v", c.out[0])
	}
}

func TestStreamTimePunctuation(t *testing.T) {
	var fired []string
	var canc processor.Cancellable
	p := &funcProc{init: func(ctx processor.ProcessorContext[any, any]) error {
		var err error
		canc, err = ctx.Schedule(10*time.Millisecond, processor.StreamTime, func(ts int64) error {
			_, md := ctx.RecordMetadata()
			fired = append(fired, fmt.Sprintf("%d(md=%v)", ts, md))
			return ctx.Forward(processor.Record[any, any]{Key: "p", Value: fmt.Sprint(ts), Timestamp: ts})
		})
		return err
	}, process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error { return nil }}
	clock := int64(0)
	tk, c := newTask(t, pipeline(p), &clock)
	// Java: the first stream-time schedule is at 0, so it fires once stream time is known;
	// then at the next multiple of the interval after the current stream time.
	for i, ts := range []int64{5, 7, 3, 10, 35, 39, 40} {
		_ = tk.AddRecord(raw("in", int64(i), ts, "k", "v"))
		drain(t, tk, 0)
	}
	if got := strings.Join(fired, ","); got != "5(md=false),10(md=false),35(md=false),40(md=false)" {
		t.Fatalf("fired %s", got)
	}
	if c.out[3].Timestamp != 40 || string(c.out[3].Value) != "40" {
		t.Fatalf("punctuation output %s", c.lines())
	}
	canc.Cancel()
	_ = tk.AddRecord(raw("in", 9, 100, "k", "v"))
	drain(t, tk, 0)
	if len(fired) != 4 {
		t.Fatalf("fired after cancel: %v", fired)
	}
}

func TestWallClockPunctuationAndCancelInside(t *testing.T) {
	var fired []int64
	p := &funcProc{init: func(ctx processor.ProcessorContext[any, any]) error {
		var c processor.Cancellable
		c, err := ctx.Schedule(100*time.Millisecond, processor.WallClockTime, func(ts int64) error {
			fired = append(fired, ts)
			if len(fired) == 3 {
				c.Cancel()
			}
			return nil
		})
		return err
	}}
	clock := int64(1000)
	tk, _ := newTask(t, pipeline(p), &clock)
	for _, now := range []int64{1050, 1100, 1150, 1350, 1399, 1400, 1500, 1600} {
		clock = now
		if _, err := tk.MaybePunctuateSystemTime(now); err != nil {
			t.Fatal(err)
		}
	}
	// first at 1000+100; at 1350 one firing (missed intervals skipped) and the next at 1400.
	if fmt.Sprint(fired) != "[1100 1350 1400]" {
		t.Fatalf("fired %v", fired)
	}
	if _, err := p.ctx.Schedule(500*time.Microsecond, processor.WallClockTime, func(int64) error { return nil }); !errors.Is(err, processor.ErrInvalidSchedule) {
		t.Fatalf("sub-ms interval: %v", err)
	}
}

func TestNegativeTimestampsPerExtractor(t *testing.T) {
	clock := int64(0)
	p := &funcProc{}
	tk, _ := newTask(t, pipeline(p), &clock)
	if err := tk.AddRecord(raw("in", 0, -1, "k", "v")); !errors.Is(err, processor.ErrInvalidTimestamp) {
		t.Fatalf("FailOnInvalidTimestamp: %v", err)
	}
	tk2, c := newTask(t, pipeline(&funcProc{}), &clock, func(cfg *Config) {
		cfg.DefaultTimestampExtractor = processor.LogAndSkipOnInvalidTimestamp{}
	})
	_ = tk2.AddRecord(raw("in", 0, -5, "k", "dropped"))
	_ = tk2.AddRecord(raw("in", 1, 5, "k", "kept"))
	drain(t, tk2, 0)
	if c.lines() != `out/-1 "k"="kept"@5` || tk2.DroppedRecords() != 1 {
		t.Fatalf("output %s dropped %d", c.lines(), tk2.DroppedRecords())
	}
	tk3, c3 := newTask(t, pipeline(&funcProc{}), &clock, func(cfg *Config) {
		cfg.DefaultTimestampExtractor = processor.UsePartitionTimeOnInvalidTimestamp{}
	})
	_ = tk3.AddRecord(raw("in", 0, 8, "k", "a"))
	drain(t, tk3, 0)
	_ = tk3.AddRecord(raw("in", 1, -1, "k", "b"))
	drain(t, tk3, 0)
	if c3.lines() != `out/-1 "k"="a"@8|out/-1 "k"="b"@8` {
		t.Fatalf("partition-time output %s", c3.lines())
	}
}

func TestSmallestHeadTimestampFirst(t *testing.T) {
	clock := int64(0)
	tk, c := newTask(t, pipeline(&funcProc{}), &clock)
	_ = tk.AddRecord(raw("in", 0, 5, "a", "1"))
	_ = tk.AddRecord(raw("in", 1, 1, "a", "2"))
	_ = tk.AddRecord(raw("in2", 0, 3, "b", "1"))
	drain(t, tk, 0)
	// in's head (5) waits behind in2's head (3); in's second record (1) comes after its head.
	if c.lines() != `out/-1 "b"="1"@3|out/-1 "a"="1"@5|out/-1 "a"="2"@1` {
		t.Fatalf("order %s", c.lines())
	}
	if tk.StreamTime() != 5 {
		t.Fatalf("stream time %d", tk.StreamTime())
	}
}

func TestForwardErrorsAndStoreAccess(t *testing.T) {
	clock := int64(0)
	p := &funcProc{process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		switch r.Value {
		case "neg":
			return ctx.Forward(r.WithTimestamp(-1))
		case "child":
			return ctx.ForwardTo(r, "nope")
		case "store":
			_, err := ctx.StateStore("other")
			return err
		case "unknown":
			_, err := ctx.StateStore("missing")
			return err
		}
		return errors.New("boom")
	}}
	spec := pipeline(p, "kv")
	spec.Nodes = append(spec.Nodes, NodeSpec{Name: "p2", Kind: ProcessorNode, Stores: []string{"other"},
		NewProcessor: func() (UntypedProcessor, error) { return &funcProc{}, nil }})
	spec.Stores = []StoreSpec{
		{Builder: store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.String())},
		{Builder: store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("other"), serde.String(), serde.String())},
	}
	tk, _ := newTask(t, spec, &clock)
	cases := []struct {
		value string
		want  error
	}{
		{"neg", processor.ErrInvalidTimestamp},
		{"child", processor.ErrUnknownChild},
		{"store", processor.ErrUnknownStore},
		{"unknown", processor.ErrUnknownStore},
	}
	for i, c := range cases {
		_ = tk.AddRecord(raw("in", int64(i), 1, "k", c.value))
		_, err := tk.Process(0)
		var pe *ProcessingError
		if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Node != "proc" || pe.Topic != "in" || pe.Offset != int64(i) {
			t.Fatalf("%s: %v", c.value, err)
		}
	}
	_ = tk.AddRecord(raw("in", 9, 1, "k", "x"))
	if _, err := tk.Process(0); err == nil || !strings.Contains(err.Error(), "taskId=0_2, processor=proc, topic=in, partition=0, offset=9: boom") {
		t.Fatalf("error text: %v", err)
	}
}

func TestChangelogWritesAndCommitClose(t *testing.T) {
	clock := int64(0)
	var kv store.KeyValueStore[string, string]
	p := &funcProc{init: func(ctx processor.ProcessorContext[any, any]) error {
		var err error
		kv, err = processor.GetStateStore[store.KeyValueStore[string, string]](ctx, "kv")
		return err
	}, process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		return kv.Put(r.Key.(string), r.Value.(string))
	}}
	spec := pipeline(p, "kv")
	spec.Stores = []StoreSpec{{Builder: store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.String())}}
	tk, c := newTask(t, spec, &clock)
	_ = tk.AddRecord(raw("in", 0, 42, "k", "v"))
	drain(t, tk, 0)
	if c.lines() != `app-kv-changelog/2 "k"="v"@42` || !c.out[0].Changelog {
		t.Fatalf("changelog %s", c.lines())
	}
	if !tk.CommitNeeded() {
		t.Fatal("commit not needed after processing")
	}
	if err := tk.Commit(); err != nil || tk.CommitNeeded() {
		t.Fatalf("commit: %v", err)
	}
	if err := tk.Close(); err != nil || !p.closed || kv.IsOpen() {
		t.Fatalf("close: %v closed=%v open=%v", err, p.closed, kv.IsOpen())
	}
	if _, err := tk.Process(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("process after close: %v", err)
	}
}

func TestPanicsBecomeErrors(t *testing.T) {
	clock := int64(0)
	p := &funcProc{process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		panic("processor bug")
	}}
	tk, _ := newTask(t, pipeline(p), &clock)
	_ = tk.AddRecord(raw("in", 3, 1, "k", "v"))
	_, err := tk.Process(0)
	var pe *ProcessingError
	var pan *PanicError
	if !errors.As(err, &pe) || pe.Node != "proc" || pe.Offset != 3 || !errors.As(err, &pan) || pan.Value != "processor bug" || len(pan.Stack) == 0 {
		t.Fatalf("panic: %v", err)
	}
	// The task goes on with the next record.
	p.process = nil
	_ = tk.AddRecord(raw("in", 4, 2, "k", "v"))
	if _, err := tk.Process(0); err != nil {
		t.Fatal(err)
	}
}

func TestProcessingHandlerContinueDropsAtNode(t *testing.T) {
	clock := int64(0)
	var handled []string
	failing := &funcProc{process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		return errors.New("bad")
	}}
	spec := Spec{Nodes: []NodeSpec{
		{Name: "src", Kind: SourceNode, Topics: []string{"in"}, Children: []string{"fail", "sink"}},
		{Name: "fail", Kind: ProcessorNode, NewProcessor: func() (UntypedProcessor, error) { return failing, nil }},
		{Name: "sink", Kind: SinkNode, Topic: "out"},
	}}
	tk, c := newTask(t, spec, &clock, func(cfg *Config) {
		cfg.ProcessingHandler = func(node string, r processor.Record[any, any], err error) HandlerResponse {
			handled = append(handled, fmt.Sprintf("%s:%v:%v", node, r.Value, err))
			return Continue
		}
	})
	_ = tk.AddRecord(raw("in", 0, 1, "k", "v"))
	drain(t, tk, 0)
	// The failing child drops the record; its sibling (the sink) still gets it.
	if strings.Join(handled, ",") != "fail:v:bad" || c.lines() != `out/-1 "k"="v"@1` || tk.DroppedRecords() != 1 {
		t.Fatalf("handled %v output %s dropped %d", handled, c.lines(), tk.DroppedRecords())
	}
}

func TestDeserializationErrors(t *testing.T) {
	clock := int64(0)
	spec := pipeline(&funcProc{})
	spec.Nodes[0].ValueDeserializer = serde.Untyped(serde.Long())
	spec.Nodes[2].ValueSerializer = serde.Untyped(serde.Long())
	tk, _ := newTask(t, spec, &clock)
	err := tk.AddRecord(raw("in", 5, 1, "k", "abc"))
	var de *DeserializationError
	if !errors.As(err, &de) || de.Offset != 5 || de.Topic != "in" {
		t.Fatalf("deserialization error: %v", err)
	}
	tk2, c := newTask(t, spec, &clock, func(cfg *Config) {
		cfg.DeserializationHandler = func(RawRecord, error) HandlerResponse { return Continue }
	})
	if err := tk2.AddRecord(raw("in", 0, 1, "k", "abc")); err != nil {
		t.Fatal(err)
	}
	_ = tk2.AddRecord(RawRecord{Topic: "in", Offset: 1, Timestamp: 2, Key: []byte("k"), Value: []byte{0, 0, 0, 0, 0, 0, 0, 7}})
	drain(t, tk2, 0)
	if tk2.DroppedRecords() != 1 || len(c.out) != 1 || c.out[0].Timestamp != 2 {
		t.Fatalf("dropped %d output %s", tk2.DroppedRecords(), c.lines())
	}
}

// A record the deserialization handler skips is sent, through the task's collector, as the
// dead-letter record the config builds, before the records after it are processed.
func TestDeserializationErrorDeadLetter(t *testing.T) {
	clock := int64(0)
	spec := pipeline(&funcProc{})
	spec.Nodes[0].ValueDeserializer = serde.Untyped(serde.Long())
	spec.Nodes[2].ValueSerializer = serde.Untyped(serde.Long())
	tk, c := newTask(t, spec, &clock, func(cfg *Config) {
		cfg.DeserializationHandler = func(RawRecord, error) HandlerResponse { return Continue }
		cfg.DeadLetter = func(rec RawRecord, err error) OutRecord {
			return OutRecord{Topic: "dlq", Partition: -1, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp}
		}
	})
	if err := tk.AddRecord(raw("in", 0, 1, "k", "abc")); err != nil {
		t.Fatal(err)
	}
	_ = tk.AddRecord(RawRecord{Topic: "in", Offset: 1, Timestamp: 2, Key: []byte("k"), Value: []byte{0, 0, 0, 0, 0, 0, 0, 7}})
	drain(t, tk, 0)
	if tk.DroppedRecords() != 1 || len(c.out) != 2 || c.out[0].Topic != "dlq" || string(c.out[0].Value) != "abc" ||
		c.out[0].Timestamp != 1 || c.out[1].Topic != "out" {
		t.Fatalf("dropped %d output %s", tk.DroppedRecords(), c.lines())
	}
}

func TestQueueRecoversAfterDeserializationError(t *testing.T) {
	clock := int64(0)
	spec := pipeline(&funcProc{})
	spec.Nodes[0].ValueDeserializer = serde.Untyped(serde.Long())
	spec.Nodes[2].ValueSerializer = serde.Untyped(serde.Long())
	tk, c := newTask(t, spec, &clock)
	good := RawRecord{Topic: "in", Offset: 1, Timestamp: 2, Key: []byte("k"), Value: []byte{0, 0, 0, 0, 0, 0, 0, 7}}
	if err := tk.AddRecord(raw("in", 0, 1, "k", "bad")); err == nil {
		t.Fatal("bad record accepted")
	}
	if err := tk.AddRecord(good); err != nil {
		t.Fatal(err)
	}
	drain(t, tk, 0)
	if len(c.out) != 1 || tk.HasRecordsQueued() {
		t.Fatalf("output %s queued %v", c.lines(), tk.HasRecordsQueued())
	}
}

// Equal head timestamps: Java's PriorityQueue alternates between the queues (the queue just
// polled is re-offered behind the other one).
func TestEqualTimestampsAlternateLikeJava(t *testing.T) {
	clock := int64(0)
	tk, c := newTask(t, pipeline(&funcProc{}), &clock)
	for i := int64(0); i < 2; i++ {
		_ = tk.AddRecord(raw("in", i, 5, "a", fmt.Sprint(i)))
		_ = tk.AddRecord(raw("in2", i, 5, "b", fmt.Sprint(i)))
	}
	drain(t, tk, 0)
	if c.lines() != `out/-1 "a"="0"@5|out/-1 "b"="0"@5|out/-1 "a"="1"@5|out/-1 "b"="1"@5` {
		t.Fatalf("order %s", c.lines())
	}
}

func TestStoreContextRecordContextAccess(t *testing.T) {
	clock := int64(0)
	var access storeapi.RecordContextAccess
	var seen []string
	p := &funcProc{process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		rc := access.CurrentRecordContext()
		seen = append(seen, fmt.Sprintf("%s/%d/%d@%d", rc.Topic, rc.Partition, rc.Offset, rc.Timestamp))
		restore := access.SetRecordContext(processor.RecordContext{Topic: "other", Partition: 3, Offset: 9, Timestamp: 77})
		md, ok := ctx.RecordMetadata()
		seen = append(seen, fmt.Sprintf("%v:%s/%d/%d", ok, md.Topic, md.Partition, md.Offset))
		err := ctx.Forward(r)
		restore()
		md, _ = ctx.RecordMetadata()
		seen = append(seen, md.Topic)
		return err
	}}
	spec := pipeline(p, "kv")
	spec.Stores = []StoreSpec{{Builder: contextGrabber{name: "kv", got: &access}}}
	tk, _ := newTask(t, spec, &clock)
	_ = tk.AddRecord(raw("in", 4, 10, "k", "v"))
	drain(t, tk, 0)
	if strings.Join(seen, ",") != "in/0/4@10,true:other/3/9,in" {
		t.Fatalf("seen %v", seen)
	}
}

// contextGrabber builds an in-memory store and hands out the StateStoreContext it was given.
type contextGrabber struct {
	name string
	got  *storeapi.RecordContextAccess
}

func (c contextGrabber) Name() string                 { return c.name }
func (c contextGrabber) LoggingEnabled() bool         { return false }
func (c contextGrabber) LogConfig() map[string]string { return nil }
func (c contextGrabber) Build() (processor.StateStore, error) {
	return &grabStore{KeyValueBytesStore: store.Stores.InMemoryKeyValueStore(c.name).Get(), got: c.got}, nil
}

type grabStore struct {
	store.KeyValueBytesStore
	got *storeapi.RecordContextAccess
}

func (g *grabStore) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	*g.got = ctx.(storeapi.RecordContextAccess)
	return g.KeyValueBytesStore.Init(ctx, root)
}
