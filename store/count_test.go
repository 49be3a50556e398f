package store

import (
	"slices"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/serde"
)

// A timestamped store of String keys and Long values above a record cache reads and writes
// counts straight from and to the bytes (storeapi.CountStore): what PutCountKept writes, Get
// reads, and what Put writes, GetCountKept reads, in the cache and, once flushed, below it and
// in the changelog, with the same bytes a Put writes. Other stores say Counts false and refuse.
func TestCountStore(t *testing.T) {
	custom := customLong()
	for _, c := range []struct {
		name    string
		value   serde.Serde[int64]
		caching bool
		want    bool
	}{{"Long cached", serde.Long(), true, true}, {"Untyped Long cached", nil, true, true},
		{"custom cached", custom, true, false}, {"Long uncached", serde.Long(), false, false}} {
		ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 1, 10), cache: cache.New(1 << 20)}
		if c.value == nil {
			// The DSL's count store: values Untyped(Long) as any.
			b := Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("s"), serde.String(), serde.Untyped(serde.Long()))
			st := b.WithCachingEnabled().BuildStore()
			if err := st.Init(ctx, st); err != nil {
				t.Fatal(err)
			}
			anyCS, ok := st.(storeapi.CountStore[string])
			if !ok {
				t.Fatalf("%s: %T is not a CountStore", c.name, st)
			}
			if !anyCS.Counts() {
				t.Fatalf("%s: Counts false", c.name)
			}
			if err := anyCS.PutCountKept("a", 3, 7); err != nil {
				t.Fatal(err)
			}
			if v, ok, err := st.Get("a"); err != nil || !ok || v.Value != int64(3) || v.Timestamp != 7 {
				t.Fatalf("%s: Get after PutCountKept = %+v %v %v", c.name, v, ok, err)
			}
			continue
		}
		b := Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("s"), serde.String(), c.value)
		if c.caching {
			b = b.WithCachingEnabled()
		}
		typed := b.BuildStore()
		if err := typed.Init(ctx, typed); err != nil {
			t.Fatal(err)
		}
		cs, ok := typed.(storeapi.CountStore[string])
		if !ok {
			t.Fatalf("%s: %T is not a CountStore", c.name, typed)
		}
		if got := cs.Counts(); got != c.want {
			t.Fatalf("%s: Counts() = %v, want %v", c.name, got, c.want)
		}
		if !c.want {
			if _, _, _, err := cs.GetCountKept("a"); err == nil {
				t.Errorf("%s: GetCountKept of a store whose Counts is false returned no error", c.name)
			}
			if err := cs.PutCountKept("a", 1, 1); err == nil {
				t.Errorf("%s: PutCountKept of a store whose Counts is false returned no error", c.name)
			}
			continue
		}
		if _, _, found, err := cs.GetCountKept("a"); err != nil || found {
			t.Fatalf("%s: GetCountKept of an absent key: found %v, %v", c.name, found, err)
		}
		if err := typed.Put("a", &ValueAndTimestamp[int64]{Value: 41, Timestamp: 5}); err != nil {
			t.Fatal(err)
		}
		if n, ts, found, err := cs.GetCountKept("a"); err != nil || !found || n != 41 || ts != 5 {
			t.Fatalf("%s: GetCountKept after Put = %d @%d %v %v, want 41 @5", c.name, n, ts, found, err)
		}
		ctx.setRecord("in", 2, 9)
		if err := cs.PutCountKept("a", 42, 9); err != nil {
			t.Fatal(err)
		}
		if err := typed.Put("b", &ValueAndTimestamp[int64]{Value: 42, Timestamp: 9}); err != nil {
			t.Fatal(err)
		}
		if err := typed.Flush(); err != nil {
			t.Fatal(err)
		}
		// Both keys were logged alike: the same value bytes and timestamp, in the record's
		// context.
		logged := slices.Clone(ctx.events)
		slices.Sort(logged)
		if len(logged) != 2 || strings.TrimPrefix(logged[0], "log a") != strings.TrimPrefix(logged[1], "log b") {
			t.Fatalf("%s: changelog writes %q: want a and b logged alike", c.name, logged)
		}
		if err := typed.(storeapi.CachedStateStore[string, *ValueAndTimestamp[int64]]).ClearCache(); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"a", "b"} {
			if v, ok, err := typed.Get(k); err != nil || !ok || v.Value != 42 || v.Timestamp != 9 {
				t.Fatalf("%s: %s below the cache = %+v %v %v, want 42 @9", c.name, k, v, ok, err)
			}
		}
		// Bytes that are no timestamped Long fail as the serde fails them.
		m := typed.(*timestampedStore[string, int64]).meteredKeyValueStore
		if err := m.inner.Put([]byte("bad"), []byte{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := cs.GetCountKept("bad"); err == nil || !strings.Contains(err.Error(), "deserialize value") {
			t.Fatalf("%s: GetCountKept of 3 bytes: %v, want the serde's error", c.name, err)
		}
	}
}
