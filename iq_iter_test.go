package kstreams

import (
	"errors"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/store"
)

// The composite key-value view's iterator behaves as the store package's iterators do when
// misused: Key and Value give zero values (never a panic across the API) before the first
// Next, after the end, after an error and after Close, and Next after Close reports
// store.ErrIteratorClosed.
func TestConcatIterNoPanicOutsideEntries(t *testing.T) {
	errLookup := errors.New("lookup failed")
	failed := &chunkIter[string, int64]{err: errLookup, pos: -1}
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
	walk := &chunkIter[string, int64]{cur: entries, pos: -1}
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

// The views' iterator reads each task in chunks, resuming after the raw key of the last entry
// of the chunk before; a key's lookup stops at the first task with entries (a key lives in one
// task), a range reads every task; Key and Value are zero outside entries, and Next after
// Close reports store.ErrIteratorClosed.
func TestChunkIterTasks(t *testing.T) {
	defer func(n int) { queryChunk = n }(queryChunk)
	queryChunk = 2
	reads := 0
	// task serves keys in chunks of queryChunk, resuming after the key given (the raw key is the
	// key's bytes).
	task := func(keys ...string) chunkReader[string, int64] {
		return func(after []byte, buf []store.KeyValue[string, int64]) ([]store.KeyValue[string, int64], []byte, error) {
			reads++
			i := 0
			if after != nil {
				for i < len(keys) && keys[i] <= string(after) {
					i++
				}
			}
			for ; i < len(keys) && len(buf) < queryChunk; i++ {
				buf = append(buf, store.Pair(keys[i], int64(len(keys[i]))))
			}
			var next []byte
			if len(buf) == queryChunk {
				next = []byte(buf[len(buf)-1].Key)
			}
			return buf, next, nil
		}
	}
	walk := func(it *chunkIter[string, int64]) []string {
		var got []string
		for it.Next() {
			got = append(got, it.Key())
		}
		if k, v := it.Key(), it.Value(); k != "" || v != 0 {
			t.Fatalf("after the end: %q/%d", k, v)
		}
		return got
	}
	all := &chunkIter[string, int64]{tasks: []chunkReader[string, int64]{task("a", "b", "c"), task(), task("d", "e")}, pos: -1}
	// a,b | c | (none) | d,e | (none): five reads.
	if got := walk(all); strings.Join(got, ",") != "a,b,c,d,e" || reads != 5 {
		t.Fatalf("range: %v after %d reads, want [a b c d e] after 5", got, reads)
	}
	reads = 0
	one := &chunkIter[string, int64]{tasks: []chunkReader[string, int64]{task(), task("k", "l", "m"), task("x")}, pos: -1, firstOnly: true}
	if got := walk(one); strings.Join(got, ",") != "k,l,m" || reads != 3 {
		t.Fatalf("key lookup: %v after %d reads, want [k l m] after 3", got, reads)
	}
	_ = one.Close()
	if one.Next() || !errors.Is(one.Err(), store.ErrIteratorClosed) {
		t.Fatalf("Next after Close: Err = %v", one.Err())
	}
}
