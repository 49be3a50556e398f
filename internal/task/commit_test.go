package task

import (
	"testing"

	"github.com/kstreams-go/kstreams/processor"
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
