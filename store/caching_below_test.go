package store

import (
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/serde"
)

// GetBelowCache sees what the cache has flushed: not a dirty put, not a dirty delete, and no
// trace of a key put and deleted again between two flushes (which the flush skips); without a
// cache it reads what Get reads.
func TestGetBelowCache(t *testing.T) {
	for _, cached := range []bool{true, false} {
		ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 0, 0)}
		if cached {
			ctx.cache = cache.New(1 << 20)
		}
		m := newMeteredKeyValueStore[string, string](newCachingKeyValueStore(newChangeLoggingKeyValueBytesStore(newInMemoryKeyValueStore("s"))),
			serde.String(), serde.String())
		if err := m.Init(ctx, m); err != nil {
			t.Fatal(err)
		}
		check := func(step, key string, want string, wantOK bool) {
			t.Helper()
			v, ok, err := m.GetBelowCache(key)
			if err != nil || v != want || ok != wantOK {
				t.Fatalf("cached=%v %s: GetBelowCache(%s) = %q, %v, %v; want %q, %v", cached, step, key, v, ok, err, want, wantOK)
			}
		}
		flush := func() {
			t.Helper()
			if err := m.FlushCache(); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Put("a", "1"); err != nil {
			t.Fatal(err)
		}
		if cached {
			check("dirty put", "a", "", false)
		} else {
			check("put", "a", "1", true)
		}
		if v, ok, err := m.Get("a"); err != nil || !ok || v != "1" {
			t.Fatalf("cached=%v: Get(a) = %q, %v, %v", cached, v, ok, err)
		}
		flush()
		check("flushed put", "a", "1", true)
		if _, _, err := m.Delete("a"); err != nil {
			t.Fatal(err)
		}
		if cached {
			check("dirty delete", "a", "1", true)
		} else {
			check("delete", "a", "", false)
		}
		flush()
		check("flushed delete", "a", "", false)
		if err := m.Put("b", "2"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Delete("b"); err != nil {
			t.Fatal(err)
		}
		flush()
		check("put and delete between flushes", "b", "", false)
	}
}
