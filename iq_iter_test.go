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
