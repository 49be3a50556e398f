package task

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// flushCounter is a store that counts its cache flushes and store flushes.
type flushCounter struct {
	open                  bool
	cacheFlushes, flushes int
}

func (s *flushCounter) Name() string { return "counted" }
func (s *flushCounter) Init(processor.StateStoreContext, processor.StateStore) error {
	s.open = true
	return nil
}
func (s *flushCounter) Flush() error      { s.flushes++; return nil }
func (s *flushCounter) FlushCache() error { s.cacheFlushes++; return nil }
func (s *flushCounter) Close() error      { s.open = false; return nil }
func (s *flushCounter) Persistent() bool  { return true }
func (s *flushCounter) IsOpen() bool      { return s.open }

type flushCounterBuilder struct{ s *flushCounter }

func (b flushCounterBuilder) Name() string                         { return b.s.Name() }
func (b flushCounterBuilder) Build() (processor.StateStore, error) { return b.s, nil }
func (b flushCounterBuilder) LoggingEnabled() bool                 { return false }
func (b flushCounterBuilder) LogConfig() map[string]string         { return nil }

// The runtime's regular commit flushes only the record caches (Java's prepareCommit with
// postCommit(false)); the stores are flushed before a checkpoint (FlushStores) and by Commit,
// the test driver's commit with an enforced checkpoint (postCommit(true)).
func TestCommitCachesDoesNotFlushStores(t *testing.T) {
	clock := int64(0)
	s := &flushCounter{}
	spec := pipeline(&funcProc{}, "counted")
	spec.Stores = []StoreSpec{{Builder: flushCounterBuilder{s}}}
	tk, _ := newTask(t, spec, &clock)
	_ = tk.AddRecord(raw("in", 0, 42, "k", "v"))
	drain(t, tk, 0)
	if !tk.CommitNeeded() {
		t.Fatal("commit not needed after processing")
	}
	if err := tk.CommitCaches(); err != nil || tk.CommitNeeded() {
		t.Fatalf("CommitCaches: %v, still needed %v", err, tk.CommitNeeded())
	}
	if s.cacheFlushes != 1 || s.flushes != 0 {
		t.Fatalf("after CommitCaches: %d cache flushes, %d store flushes; want 1, 0", s.cacheFlushes, s.flushes)
	}
	if err := tk.FlushStores(); err != nil {
		t.Fatal(err)
	}
	if s.cacheFlushes != 1 || s.flushes != 1 {
		t.Fatalf("after FlushStores: %d cache flushes, %d store flushes; want 1, 1", s.cacheFlushes, s.flushes)
	}
	if err := tk.Commit(); err != nil {
		t.Fatal(err)
	}
	if s.cacheFlushes != 2 || s.flushes != 2 {
		t.Fatalf("after Commit: %d cache flushes, %d store flushes; want 2, 2", s.cacheFlushes, s.flushes)
	}
	if err := tk.Close(); err != nil || s.open {
		t.Fatalf("close: %v open=%v", err, s.open)
	}
	if err := tk.CommitCaches(); err != ErrClosed {
		t.Fatalf("CommitCaches after close: %v", err)
	}
	if err := tk.FlushStores(); err != ErrClosed {
		t.Fatalf("FlushStores after close: %v", err)
	}
}

// chainSpec is src -> upd (stores first, second) -> mirror (store first) -> sink: upd writes
// into the cached store "second", whose flush listener forwards to mirror, which writes into
// the cached store "first" (initialised, so flushed, before "second"), whose flush listener
// forwards to the sink.
func chainSpec(t *testing.T) Spec {
	t.Helper()
	listen := func(ctx processor.ProcessorContext[any, any], name string) (store.KeyValueStore[string, string], error) {
		kv, err := processor.GetStateStore[store.KeyValueStore[string, string]](ctx, name)
		if err != nil {
			return nil, err
		}
		cs, ok := kv.(storeapi.CachedStateStore[string, string])
		if !ok || !cs.SetFlushListener(func(r storeapi.CacheFlushRecord[string, string]) error {
			return ctx.Forward(processor.Record[any, any]{Key: r.Key, Value: r.NewValue, Timestamp: r.Timestamp})
		}, false) {
			return nil, fmt.Errorf("store %s: no active cache", name)
		}
		return kv, nil
	}
	var second, first store.KeyValueStore[string, string]
	upd := &funcProc{
		init: func(ctx processor.ProcessorContext[any, any]) (err error) {
			second, err = listen(ctx, "second")
			return err
		},
		process: func(_ processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
			return second.Put(r.Key.(string), r.Value.(string))
		}}
	mirror := &funcProc{
		init: func(ctx processor.ProcessorContext[any, any]) (err error) {
			first, err = listen(ctx, "first")
			return err
		},
		process: func(_ processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
			return first.Put(r.Key.(string), r.Value.(string))
		}}
	builder := func(name string) processor.StoreBuilder {
		return store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore(name), serde.String(), serde.String()).
			WithCachingEnabled().WithLoggingDisabled()
	}
	return Spec{
		Nodes: []NodeSpec{
			{Name: "src", Kind: SourceNode, Topics: []string{"in"}, Children: []string{"upd"}},
			{Name: "upd", Kind: ProcessorNode, Children: []string{"mirror"}, Stores: []string{"first", "second"},
				NewProcessor: func() (UntypedProcessor, error) { return upd, nil }},
			{Name: "mirror", Kind: ProcessorNode, Children: []string{"sink"}, Stores: []string{"first"},
				NewProcessor: func() (UntypedProcessor, error) { return mirror, nil }},
			{Name: "sink", Kind: SinkNode, Topic: "out"},
		},
		Stores: []StoreSpec{{Builder: builder("first")}, {Builder: builder("second")}},
	}
}

// A regular commit flushes the caches once, as Java's prepareCommit: what the flush of
// "second" writes into "first" (flushed earlier in the pass) stays cached until the next
// commit. CommitFinal, the commit before a suspend or close, flushes until no cache is dirty,
// so the close forwards nothing more.
func TestCommitFinalFlushesCacheChains(t *testing.T) {
	clock := int64(0)
	tk, c := newTask(t, chainSpec(t), &clock, func(cfg *Config) { cfg.Cache = cache.New(1 << 20) })
	defer tk.Close()
	_ = tk.AddRecord(raw("in", 0, 10, "a", "1"))
	_ = tk.AddRecord(raw("in", 1, 11, "b", "2"))
	_ = tk.AddRecord(raw("in", 2, 12, "a", "3"))
	drain(t, tk, 0)
	if err := tk.CommitCaches(); err != nil {
		t.Fatal(err)
	}
	if got := c.lines(); got != "" {
		t.Fatalf("after CommitCaches: output %s, want none (first flushed before second)", got)
	}
	if got := tk.dirtyCaches(); fmt.Sprint(got) != "[first]" {
		t.Fatalf("dirty caches after CommitCaches: %v, want [first]", got)
	}
	_ = tk.AddRecord(raw("in", 3, 13, "b", "4"))
	drain(t, tk, 0)
	if err := tk.CommitFinal(); err != nil {
		t.Fatal(err)
	}
	if got := tk.dirtyCaches(); len(got) != 0 || tk.CommitNeeded() {
		t.Fatalf("after CommitFinal: dirty caches %v, commit needed %v", got, tk.CommitNeeded())
	}
	// The entries left in "first" (in the order of their last write), then the new update of b.
	want := `out/-1 "b"="2"@11|out/-1 "a"="3"@12|out/-1 "b"="4"@13`
	if got := c.lines(); got != want {
		t.Fatalf("after CommitFinal: output %s, want %s", got, want)
	}
	n := len(c.out)
	if err := tk.FlushStores(); err != nil {
		t.Fatal(err)
	}
	if len(c.out) != n {
		t.Fatalf("FlushStores after CommitFinal forwarded %s", c.lines())
	}
}
