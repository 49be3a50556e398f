package kstreams

import (
	"errors"
	"testing"

	"github.com/kstreams-go/kstreams/store"
)

// The composite key-value view's iterator behaves as the store package's iterators do when
// misused: Key and Value give zero values (never a panic across the API) before the first
// Next, after the end, after an error and after Close, and Next after Close reports
// store.ErrIteratorClosed.
func TestConcatIterNoPanicOutsideEntries(t *testing.T) {
	errLookup := errors.New("lookup failed")
	failed := &concatIter[string, int64]{name: "counts", err: errLookup, pos: -1}
	if k, v := failed.Key(), failed.Value(); k != "" || v != 0 {
		t.Fatalf("before Next: Key/Value = %q/%d, want zero", k, v)
	}
	if failed.Next() {
		t.Fatal("Next = true on a failed iterator")
	}
	if k, v := failed.Key(), failed.Value(); k != "" || v != 0 {
		t.Fatalf("after a failed Next: Key/Value = %q/%d, want zero", k, v)
	}
	if !errors.Is(failed.Err(), errLookup) {
		t.Fatalf("Err = %v, want %v", failed.Err(), errLookup)
	}

	// An iterator over entries already read (as after a store's Collect), walked to the end.
	entries := []store.KeyValue[string, int64]{store.Pair("a", int64(1)), store.Pair("b", int64(2))}
	walk := &concatIter[string, int64]{name: "counts", cur: entries, pos: -1}
	var got []string
	for walk.Next() {
		got = append(got, walk.Key())
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("keys %v, want [a b]", got)
	}
	if k, v := walk.Key(), walk.Value(); k != "" || v != 0 {
		t.Fatalf("after the end: Key/Value = %q/%d, want zero (not the last entry)", k, v)
	}
	if err := walk.Close(); err != nil {
		t.Fatal(err)
	}
	if k, v := walk.Key(), walk.Value(); k != "" || v != 0 {
		t.Fatalf("after Close: Key/Value = %q/%d, want zero", k, v)
	}
	if walk.Next() {
		t.Fatal("Next = true after Close")
	}
	if !errors.Is(walk.Err(), store.ErrIteratorClosed) {
		t.Fatalf("Err after Next on a closed iterator = %v, want store.ErrIteratorClosed", walk.Err())
	}
}

// The window and session views' iterator reads one task at a time; a key's lookup stops at the
// first task with entries (a key lives in one task), a range reads every task; Key and Value
// are zero outside entries, and Next after Close reports store.ErrIteratorClosed.
func TestCollectIterTasks(t *testing.T) {
	reads := 0
	task := func(keys ...string) func() ([]store.KeyValue[string, int64], error) {
		return func() ([]store.KeyValue[string, int64], error) {
			reads++
			var out []store.KeyValue[string, int64]
			for _, k := range keys {
				out = append(out, store.Pair(k, int64(len(k))))
			}
			return out, nil
		}
	}
	walk := func(it *collectIter[string, int64]) []string {
		var got []string
		for it.Next() {
			got = append(got, it.Key())
		}
		if k, v := it.Key(), it.Value(); k != "" || v != 0 {
			t.Fatalf("after the end: %q/%d", k, v)
		}
		return got
	}
	all := &collectIter[string, int64]{tasks: []func() ([]store.KeyValue[string, int64], error){task("a", "b"), task(), task("c")}, pos: -1}
	if got := walk(all); len(got) != 3 || got[2] != "c" || reads != 3 {
		t.Fatalf("range: %v after %d reads", got, reads)
	}
	reads = 0
	one := &collectIter[string, int64]{tasks: []func() ([]store.KeyValue[string, int64], error){task(), task("k"), task("x")}, pos: -1, firstOnly: true}
	if got := walk(one); len(got) != 1 || got[0] != "k" || reads != 2 {
		t.Fatalf("key lookup: %v after %d reads, want [k] after 2", got, reads)
	}
	_ = one.Close()
	if one.Next() || !errors.Is(one.Err(), store.ErrIteratorClosed) {
		t.Fatalf("Next after Close: Err = %v", one.Err())
	}
}
