package task

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

func TestSinkPartitionerAndTopicExtractor(t *testing.T) {
	clock := int64(0)
	spec := pipeline(&funcProc{})
	spec.Nodes[2].TopicExtractor = processor.TopicNameExtractorFunc[any, any](func(k, v any, rc processor.RecordContext) (string, error) {
		if v == "bad" {
			return "", errors.New("no topic")
		}
		return fmt.Sprintf("t-%v-%s", k, rc.Topic), nil
	})
	spec.Nodes[2].Partitioner = processor.StreamPartitionerFunc[any, any](func(topic string, k, v any, n int32) ([]int32, bool, error) {
		switch v {
		case "default":
			return nil, false, nil
		case "drop":
			return []int32{}, true, nil
		case "multi":
			return []int32{2, 0, 2, n - 1}, true, nil
		}
		return []int32{1}, true, nil
	})
	tk, c := newTask(t, spec, &clock)
	for i, v := range []string{"one", "default", "drop", "multi"} {
		_ = tk.AddRecord(raw("in", int64(i), int64(i), "k", v))
	}
	drain(t, tk, 0)
	want := `t-k-in/1 "k"="one"@0|t-k-in/-1 "k"="default"@1|t-k-in/2 "k"="multi"@3|t-k-in/0 "k"="multi"@3`
	if c.lines() != want {
		t.Fatalf("got  %s\nwant %s", c.lines(), want)
	}
	_ = tk.AddRecord(raw("in", 9, 9, "k", "bad"))
	if _, err := tk.Process(0); err == nil || !strings.Contains(err.Error(), "no topic") {
		t.Fatalf("extractor error: %v", err)
	}
}

func TestContextAccessorsRestoreAndCommitRequest(t *testing.T) {
	clock := int64(42)
	var ctxSeen processor.ProcessorContext[any, any]
	p := &funcProc{init: func(ctx processor.ProcessorContext[any, any]) error { ctxSeen = ctx; return nil },
		process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
			ctx.Commit()
			return nil
		}}
	spec := pipeline(p, "kv")
	spec.Stores = []StoreSpec{{Builder: store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.String())}}
	tk, _ := newTask(t, spec, &clock, func(c *Config) {
		c.AppConfigs = map[string]string{"a": "b"}
		c.StateDir = "/tmp/x"
	})
	if ctxSeen.ApplicationID() != "app" || ctxSeen.TaskID() != (processor.TaskID{Subtopology: 0, Partition: 2}) ||
		ctxSeen.AppConfigs()["a"] != "b" || ctxSeen.StateDir() != "/tmp/x" || ctxSeen.KeySerde() == nil || ctxSeen.ValueSerde() == nil ||
		ctxSeen.CurrentSystemTimeMs() != 42 || tk.ID().String() != "0_2" {
		t.Fatal("context accessors")
	}
	if got := tk.ChangelogTopics(); got["kv"] != "app-kv-changelog" {
		t.Fatalf("changelog topics %v", got)
	}
	if err := tk.Restore("kv", []processor.RestoreRecord{{Key: []byte("r"), Value: []byte("1")}, {Key: []byte("x"), Value: []byte("2")}, {Key: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	kv := tk.Store("kv").(store.KeyValueStore[string, string])
	if v, _, _ := kv.Get("r"); v != "1" {
		t.Fatalf("restored r = %q", v)
	}
	if _, ok, _ := kv.Get("x"); ok {
		t.Fatal("restored tombstone ignored")
	}
	if err := tk.Restore("nope", nil); !errors.Is(err, processor.ErrUnknownStore) {
		t.Fatalf("restore unknown: %v", err)
	}
	_ = tk.AddRecord(raw("in", 0, 1, "k", "v"))
	drain(t, tk, 0)
	if !tk.CommitRequested() || tk.ConsumedOffsets()["in"][0] != 0 || strings.Join(tk.StoreNames(), ",") != "kv" || len(tk.SourceTopics()) != 2 {
		t.Fatal("commit request / offsets / names")
	}
}

func TestSpecFromTopology(t *testing.T) {
	b := topology.New()
	b.AddInternalTopic("rep", topology.InternalTopicProperties{})
	sup := processor.ProcessorSupplierFunc[any, any, any, any](func() processor.Processor[any, any, any, any] { return &funcProc{} })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.AddSource("s1", []string{"in"}, nil, "", topology.ResetDefault, nil, serde.Untyped(serde.String()), nil))
	must(b.AddProcessor("p1", sup, "s1"))
	must(b.AddSink("k1", "rep", nil, "", nil, nil, nil, "p1"))
	must(b.AddSource("s2", []string{"rep"}, nil, "", topology.ResetDefault, nil, nil, nil))
	must(b.AddProcessor("p2", sup, "s2"))
	must(b.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("st"), serde.String(), serde.String()), "p2"))
	must(b.AddSink("k2", "out", nil, "", nil, nil, nil, "p2"))
	all, err := SpecFromTopology(b, "app", nil)
	must(err)
	var names []string
	for _, n := range all.Nodes {
		names = append(names, n.Name+":"+strings.Join(n.Topics, ",")+n.Topic)
	}
	if strings.Join(names, " ") != "s1:in p1: k1:app-rep s2:app-rep p2: k2:out" || len(all.Stores) != 1 || all.Stores[0].ChangelogTopic != "app-st-changelog" {
		t.Fatalf("spec %v stores %+v", names, all.Stores)
	}
	sub1, err := SpecFromTopology(b, "app", []int{1})
	must(err)
	if len(sub1.Nodes) != 3 || sub1.Nodes[0].Name != "s2" {
		t.Fatalf("sub-topology 1: %+v", sub1.Nodes)
	}
	g, err := GlobalSpec(b, "app")
	must(err)
	if len(g.Nodes) != 0 {
		t.Fatal("global spec of a topology without global stores")
	}
	// A payload of the wrong type is refused.
	b2 := topology.New()
	must(b2.AddSource("s", []string{"in"}, nil, "", topology.ResetDefault, nil, "not a deserializer", nil))
	if _, err := SpecFromTopology(b2, "app", nil); !errors.Is(err, ErrInvalidSpec) {
		t.Fatalf("bad payload: %v", err)
	}
}

func TestSiblingsDoNotShareHeaderStorage(t *testing.T) {
	clock := int64(0)
	var seen []string
	adder := func(tag string) *funcProc {
		return &funcProc{process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
			r.Headers.Add("by", []byte(tag))
			var hs []string
			for h := range r.Headers.All() {
				hs = append(hs, h.Key+"="+string(h.Value))
			}
			seen = append(seen, tag+":"+strings.Join(hs, ","))
			return nil
		}}
	}
	a, b := adder("a"), adder("b")
	spec := Spec{Nodes: []NodeSpec{
		{Name: "src", Kind: SourceNode, Topics: []string{"in"}, Children: []string{"a", "b"}},
		{Name: "a", Kind: ProcessorNode, NewProcessor: func() (UntypedProcessor, error) { return a, nil }},
		{Name: "b", Kind: ProcessorNode, NewProcessor: func() (UntypedProcessor, error) { return b, nil }},
	}}
	tk, _ := newTask(t, spec, &clock)
	r := raw("in", 0, 1, "k", "v")
	h := serde.NewHeaders(serde.Header{Key: "h", Value: []byte("1")})
	r.Headers = h.Clone()
	_ = tk.AddRecord(r)
	drain(t, tk, 0)
	if strings.Join(seen, " ") != "a:h=1,by=a b:h=1,by=b" {
		t.Fatalf("seen %v", seen)
	}
}

func TestFailedInitClosesWhatWasOpened(t *testing.T) {
	clock := int64(0)
	first := &funcProc{}
	failing := &funcProc{init: func(processor.ProcessorContext[any, any]) error { return errors.New("cannot start") }}
	spec := Spec{Nodes: []NodeSpec{
		{Name: "src", Kind: SourceNode, Topics: []string{"in"}, Children: []string{"a", "b"}},
		{Name: "a", Kind: ProcessorNode, Stores: []string{"kv"}, NewProcessor: func() (UntypedProcessor, error) { return first, nil }},
		{Name: "b", Kind: ProcessorNode, NewProcessor: func() (UntypedProcessor, error) { return failing, nil }},
	}, Stores: []StoreSpec{{Builder: store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.String())}}}
	tk, err := New(processor.TaskID{}, spec, Config{ApplicationID: "app", Collector: &capture{}, DefaultKeySerde: str, DefaultValueSerde: str,
		Clock: func() int64 { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.Init(); err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("init: %v", err)
	}
	if !first.closed || failing.closed || tk.Store("kv").IsOpen() {
		t.Fatalf("after failed init: first closed %v, failing closed %v, store open %v", first.closed, failing.closed, tk.Store("kv").IsOpen())
	}
	if err := tk.Init(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second init: %v", err)
	}
}
