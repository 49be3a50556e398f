package store

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/serde"
)

// cachingWindowEngines are the engines a window caching layer is tested over: in memory (one cache
// range per fetch) and Pebble (persistent: the cache is walked one segment at a time).
var cachingWindowEngines = []struct {
	name string
	new  func() WindowBytesStore
	seg  int64
}{
	{"in-memory", func() WindowBytesStore { return newInMemoryWindowStore("w", 100_000, 10, false) }, storeapi.DefaultSegmentInterval(100_000)},
	{"pebble", func() WindowBytesStore { return newPebbleWindowStore("w", 100_000, 60_000, 10, false) }, 60_000},
}

func openCachingWindowStore(t *testing.T, engine func() WindowBytesStore, seg, maxBytes int64) (*cachingWindowStore, *cacheContext) {
	t.Helper()
	ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, cache: cache.New(maxBytes), rc: rcOf("in", 0, 0)}
	c := newCachingWindowStore(newChangeLoggingWindowBytesStore(engine(), false), 10, seg)
	if err := c.Init(ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ctx
}

func windowListener(ctx *cacheContext) storeapi.CacheFlushListener[[]byte, []byte] {
	return func(r storeapi.CacheFlushRecord[[]byte, []byte]) error {
		k, start, seq, err := splitWindowStoreKey(r.Key)
		if err != nil {
			return err
		}
		old := "-"
		if r.HasOldValue {
			old = string(r.OldValue)
		}
		ctx.events = append(ctx.events, fmt.Sprintf("fwd %s@%d/%d new=%s old=%s ts=%d off=%d", k, start, seq, str(r.NewValue), old, r.Timestamp, r.Offset))
		return nil
	}
}

func TestCachingWindowStoreFlush(t *testing.T) {
	for _, eng := range cachingWindowEngines {
		t.Run(eng.name, func(t *testing.T) {
			c, ctx := openCachingWindowStore(t, eng.new, eng.seg, 10<<20)
			if !c.SetFlushListener(windowListener(ctx), true) {
				t.Fatal("no cache")
			}
			ctx.setRecord("in", 1, 5)
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(c.Put([]byte("a"), []byte("1"), 0))
			must(c.Put([]byte("a"), []byte("1"), 10))
			ctx.setRecord("in", 2, 7)
			must(c.Put([]byte("a"), []byte("2"), 0)) // same window again: collapsed, moves behind a@10
			if v, ok, err := c.Fetch([]byte("a"), 0); err != nil || !ok || string(v) != "2" {
				t.Fatalf("Fetch(a, 0) = %q %v %v", v, ok, err)
			}
			expectEvents(t, ctx)
			must(c.Flush())
			ctx.windowEvents()
			expectEvents(t, ctx,
				"log a@10=1", "fwd a@10/0 new=1 old=- ts=5 off=1",
				"log a@0=2", "fwd a@0/0 new=2 old=- ts=7 off=2")
			ctx.setRecord("in", 3, 9)
			must(c.Put([]byte("a"), []byte("3"), 0))
			must(c.Flush())
			ctx.windowEvents()
			expectEvents(t, ctx, "log a@0=3", "fwd a@0/0 new=3 old=2 ts=9 off=3")
		})
	}
}

// windowEvents renders the changelog writes of a window store (key ‖ start ‖ seq) readably.
func (c *cacheContext) windowEvents() {
	for i, e := range c.events {
		if !strings.HasPrefix(e, "log ") {
			continue
		}
		rest := strings.TrimPrefix(e, "log ")
		k, v, _ := strings.Cut(rest, "=")
		v, _, _ = strings.Cut(v, "@")
		if key, start, _, err := splitWindowStoreKey([]byte(k)); err == nil {
			c.events[i] = fmt.Sprintf("log %s@%d=%s", key, start, v)
		}
	}
}

func TestCachingWindowStoreRanges(t *testing.T) {
	for _, eng := range cachingWindowEngines {
		t.Run(eng.name, func(t *testing.T) {
			c, ctx := openCachingWindowStore(t, eng.new, eng.seg, 10<<20)
			c.SetFlushListener(windowListener(ctx), false)
			for _, w := range []struct {
				k     string
				start int64
			}{{"a", 0}, {"a", 20}, {"b", 10}, {"a", 40}} {
				if err := c.Put([]byte(w.k), []byte("store"), w.start); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			c.ClearCache()
			// Cached: a@20 updated, a@30 new, b@10 updated; store below: a@0, a@20, a@40, b@10.
			for _, w := range []struct {
				k     string
				start int64
			}{{"a", 20}, {"a", 30}, {"b", 10}} {
				if err := c.Put([]byte(w.k), []byte("cache"), w.start); err != nil {
					t.Fatal(err)
				}
			}
			times := func(it KeyValueIterator[int64, []byte]) string {
				var parts []string
				for it.Next() {
					parts = append(parts, fmt.Sprintf("%d=%s", it.Key(), it.Value()))
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				it.Close()
				return strings.Join(parts, ",")
			}
			if got, want := times(c.FetchTimeRange([]byte("a"), 0, 35)), "0=store,20=cache,30=cache"; got != want {
				t.Errorf("FetchTimeRange(a, 0, 35) = %s, want %s", got, want)
			}
			if got, want := times(c.BackwardFetchTimeRange([]byte("a"), 10, 100)), "40=store,30=cache,20=cache"; got != want {
				t.Errorf("BackwardFetchTimeRange(a, 10, 100) = %s, want %s", got, want)
			}
			windows := func(it KeyValueIterator[serde.Windowed[[]byte], []byte]) string {
				var parts []string
				for it.Next() {
					parts = append(parts, fmt.Sprintf("%s@%d-%d=%s", it.Key().Key, it.Key().Window.Start, it.Key().Window.End, it.Value()))
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				it.Close()
				return strings.Join(parts, ",")
			}
			all := windows(c.FetchAll(0, 100))
			for _, w := range []string{"a@0-10=store", "a@20-30=cache", "a@30-40=cache", "a@40-50=store", "b@10-20=cache"} {
				if !strings.Contains(all, w) {
					t.Errorf("FetchAll = %s, missing %s", all, w)
				}
			}
			if n := strings.Count(all, "="); n != 5 {
				t.Errorf("FetchAll = %s, want 5 windows", all)
			}
			if got := windows(c.FetchKeyRange([]byte("b"), []byte("b"), 0, 100)); got != "b@10-20=cache" {
				t.Errorf("FetchKeyRange(b, b) = %s", got)
			}
		})
	}
}

// A cached window entry's key carries the 8-byte segment id: node size = 8 + key + 12 + 24 + entry.
func TestCachingWindowStoreSizeAccounting(t *testing.T) {
	c, ctx := openCachingWindowStore(t, cachingWindowEngines[1].new, 60_000, 10<<20)
	if err := c.Put([]byte("key"), []byte("value"), 120_000); err != nil {
		t.Fatal(err)
	}
	e := cache.NewEntry([]byte("value"), ctx.rc, true)
	if got, want := ctx.cache.SizeBytes(), int64(8+3+12+24)+e.Size(); got != want {
		t.Fatalf("size = %d, want %d", got, want)
	}
	ck := ctx.cache.All(c.namespace).PeekNextKey()
	if len(ck) != 8+3+12 || ck[7] != 2 { // segment id 120000/60000 = 2
		t.Fatalf("cache key = %x", ck)
	}
}

func TestCachingWindowStoreTypedListener(t *testing.T) {
	ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, cache: cache.New(1 << 20), rc: rcOf("in", 4, 44)}
	inner := newCachingWindowStore(newInMemoryWindowStore("tw", 100_000, 10, false), 10, 1)
	m := newMeteredWindowStore(inner, serde.String(), serde.Long())
	if err := m.Init(ctx, m); err != nil {
		t.Fatal(err)
	}
	var got []string
	if !m.SetFlushListener(func(r storeapi.CacheFlushRecord[serde.Windowed[string], int64]) error {
		got = append(got, fmt.Sprintf("%s new=%d/%v old=%d/%v ts=%d", r.Key, r.NewValue, r.HasNewValue, r.OldValue, r.HasOldValue, r.Timestamp))
		return nil
	}, true) {
		t.Fatal("no cache")
	}
	if err := m.Put("k", 5, 30); err != nil {
		t.Fatal(err)
	}
	if err := m.FlushCache(); err != nil {
		t.Fatal(err)
	}
	if err := m.Put("k", 6, 30); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []string{"[k@30/40] new=5/true old=0/false ts=44", "[k@30/40] new=6/true old=5/true ts=44"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("flushed %q, want %q", got, want)
	}
}
