package store

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/serde"
)

// The timestamped store with caching and String keys, through GetKept and PutKept (the DSL's
// stream aggregations), hands the cache the key strings themselves, unserialized, and the
// cache keeps them as its map keys: keys of every length (the empty key included, which is not
// a null key) read back their own values, and what the cache flushes, evicts or logs is under
// the right key, with a cache (tiny: evicting on every put) and without one.
// TestTimestampedCachingKeysFromReusedBuffer does the same for Long keys through Get and Put.
func TestTimestampedCachingStringKeys(t *testing.T) {
	for _, maxBytes := range []int64{-1, 0, 200, 1 << 20} {
		t.Run(fmt.Sprint(maxBytes), func(t *testing.T) {
			st := Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("s"), serde.String(), serde.Long()).
				WithCachingEnabled().BuildStore()
			ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 1, 10)}
			if maxBytes >= 0 {
				ctx.cache = cache.New(maxBytes)
			}
			if err := st.Init(ctx, st); err != nil {
				t.Fatal(err)
			}
			if _, ok := st.(storeapi.FreshValuesStore); !ok {
				t.Fatal("timestamped store does not report fresh values")
			}
			var flushed []string
			st.(storeapi.CachedStateStore[string, *ValueAndTimestamp[int64]]).SetFlushListener(func(r storeapi.CacheFlushRecord[string, *ValueAndTimestamp[int64]]) error {
				flushed = append(flushed, fmt.Sprintf("%s=%d", r.Key, r.NewValue.Value))
				return nil
			}, false)
			kst, ok := st.(storeapi.KeptKeysStore[string, *ValueAndTimestamp[int64]])
			if !ok {
				t.Fatal("the timestamped caching store does not take kept keys")
			}
			keys := []string{"", "a", "long-key-long-key-long-key-long-key-long-key-long-key-long-key-long-key", "b", "ab"}
			for round := int64(1); round <= 3; round++ {
				for i, k := range keys {
					old, ok, err := kst.GetKept(k)
					if err != nil {
						t.Fatal(err)
					}
					if round == 1 && ok {
						t.Fatalf("round 1: key %q already has %v", k, old)
					}
					if round > 1 && (!ok || old.Value != (round-1)*10+int64(i)) {
						t.Fatalf("round %d: key %q read %v %v", round, k, old, ok)
					}
					if err := kst.PutKept(k, remake(old, round*10+int64(i), round)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := st.Flush(); err != nil {
				t.Fatal(err)
			}
			for i, k := range keys {
				v, ok, err := st.Get(k)
				if err != nil || !ok || v.Value != 30+int64(i) || v.Timestamp != 3 {
					t.Fatalf("key %q: %v %v %v", k, v, ok, err)
				}
			}
			// What reached the layers below went through the flush listener (with a cache) and
			// the in-memory engine: the last value of every key under its own key.
			if maxBytes == 1<<20 {
				want := []string{"=30", "a=31", keys[2] + "=32", "b=33", "ab=34"}
				if !slices.Equal(flushed, want) {
					t.Fatalf("flushed %q, want %q", flushed, want)
				}
			}
			it := st.All()
			var all []string
			for it.Next() {
				all = append(all, fmt.Sprintf("%s=%d", it.Key(), it.Value().Value))
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			it.Close()
			want := []string{"=30", "a=31", "ab=34", "b=33", keys[2] + "=32"}
			if !slices.Equal(all, want) {
				t.Fatalf("store holds %q, want %q", all, want)
			}
		})
	}
}

// The timestamped store with caching serializes Long Get and Put keys into a reused buffer:
// every key still reads back its own value, and every key the cache keeps, flushes, evicts or
// logs is its own copy, with a cache (tiny: evicting on every put) and without one.
func TestTimestampedCachingKeysFromReusedBuffer(t *testing.T) {
	keys := []int64{0, 1, -1, 1 << 40, 256}
	for _, maxBytes := range []int64{-1, 0, 200, 1 << 20} {
		t.Run(fmt.Sprint(maxBytes), func(t *testing.T) {
			st := Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("s"), serde.Long(), serde.Long()).
				WithCachingEnabled().BuildStore()
			ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 1, 10)}
			if maxBytes >= 0 {
				ctx.cache = cache.New(maxBytes)
			}
			if err := st.Init(ctx, st); err != nil {
				t.Fatal(err)
			}
			for round := int64(1); round <= 3; round++ {
				for i, k := range keys {
					old, ok, err := st.Get(k)
					if err != nil {
						t.Fatal(err)
					}
					if round > 1 && (!ok || old.Value != (round-1)*10+int64(i)) {
						t.Fatalf("round %d: key %d read %v %v", round, k, old, ok)
					}
					if err := st.Put(k, remake(old, round*10+int64(i), round)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := st.Flush(); err != nil {
				t.Fatal(err)
			}
			it := st.All()
			got := map[int64]int64{}
			for it.Next() {
				got[it.Key()] = it.Value().Value
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			it.Close()
			for i, k := range keys {
				if got[k] != 30+int64(i) {
					t.Fatalf("store holds %v, want key %d = %d", got, k, 30+i)
				}
			}
			if len(got) != len(keys) {
				t.Fatalf("store holds %d keys, want %d", len(got), len(keys))
			}
		})
	}
}

// remake sets old's value and timestamp and returns it (a new value when old is nil), as the
// DSL's aggregations put back a value they read from a fresh-values store.
func remake(old *ValueAndTimestamp[int64], value, timestamp int64) *ValueAndTimestamp[int64] {
	if old == nil {
		return MakeValueAndTimestamp(value, timestamp)
	}
	old.Value, old.Timestamp = value, timestamp
	return old
}

// Every serde call of the typed layer gets an empty Headers, also when the key buffer is lent
// and the value's serde calls use its Headers: what a serde adds to them is gone by the next
// call.
func TestSerdeCallsGetEmptyHeaders(t *testing.T) {
	var calls, dirty int
	seen := func(h *serde.Headers) {
		calls++
		if h.Len() != 0 {
			dirty++
		}
		h.Add("added", []byte("x"))
	}
	long := serde.Long()
	value := serde.New(func(topic string, h *serde.Headers, v int64) ([]byte, error) {
		seen(h)
		return long.Serialize(topic, h, v)
	}, func(topic string, h *serde.Headers, b []byte) (int64, error) {
		seen(h)
		return long.Deserialize(topic, h, b)
	})
	st := Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("s"), serde.String(), value).
		WithCachingEnabled().BuildStore()
	ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 1, 10), cache: cache.New(1 << 20)}
	if err := st.Init(ctx, st); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		for _, k := range []string{"a", "b", "a"} {
			old, _, err := st.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Put(k, remake(old, i, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if v, ok, err := st.Get("a"); err != nil || !ok || v.Value != 3 {
		t.Fatalf("a = %v %v %v", v, ok, err)
	}
	if calls != 17 || dirty != 0 { // 9 Puts, 8 Gets of a present value
		t.Fatalf("%d serde calls, %d of them given headers a call before added to", calls, dirty)
	}
}

// customLong is the Long serde's bytes through a serde of the user's own (serde.New): not
// known to the stores as the Long serde.
func customLong() serde.Serde[int64] {
	return serde.New(func(_ string, _ *serde.Headers, v int64) ([]byte, error) { return serde.Long().Serialize("", nil, v) },
		func(_ string, _ *serde.Headers, b []byte) (int64, error) { return serde.Long().Deserialize("", nil, b) })
}

// A store whose serdes both ignore their Headers (String keys, Long counts under the
// timestamped wrapper) hands them the shared empty Headers; one with a serde of its own lends
// a Headers per call (TestSerdeCallsGetEmptyHeaders).
func TestHeaderFreeSerdesShareEmptyHeaders(t *testing.T) {
	custom := customLong()
	for _, c := range []struct {
		name  string
		value serde.Serde[int64]
		want  bool
	}{{"Long", serde.Long(), true}, {"custom", custom, false}} {
		st := Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("s"), serde.String(), c.value).
			WithCachingEnabled().BuildStore()
		ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 1, 10), cache: cache.New(1 << 20)}
		if err := st.Init(ctx, st); err != nil {
			t.Fatal(err)
		}
		ts, ok := st.(*timestampedStore[string, int64])
		if !ok {
			t.Fatalf("%s: the store is a %T", c.name, st)
		}
		m := ts.meteredKeyValueStore
		if m.noHeaders != c.want {
			t.Errorf("%s: noHeaders = %v, want %v", c.name, m.noHeaders, c.want)
		}
		if err := st.Put("a", &ValueAndTimestamp[int64]{Value: 7, Timestamp: 1}); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := st.Get("a"); err != nil || !ok || v.Value != 7 {
			t.Fatalf("%s: a = %v %v %v", c.name, v, ok, err)
		}
		if emptyHeaders.Len() != 0 {
			t.Fatalf("%s: the shared empty Headers were written", c.name)
		}
	}
}
