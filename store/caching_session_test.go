package store

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/serde"
)

func TestCachingSessionStore(t *testing.T) {
	for _, eng := range []struct {
		name string
		new  func() SessionBytesStore
		seg  int64
	}{
		{"in-memory", func() SessionBytesStore { return newInMemorySessionStore("s", 100_000) }, storeapi.DefaultSegmentInterval(100_000)},
		{"pebble", func() SessionBytesStore { return newPebbleSessionStore("s", 100_000, 0) }, storeapi.DefaultSegmentInterval(100_000)},
	} {
		t.Run(eng.name, func(t *testing.T) {
			ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, cache: cache.New(10 << 20), rc: rcOf("in", 0, 0)}
			c := newCachingSessionStore(newChangeLoggingSessionBytesStore(eng.new()), eng.seg)
			if err := c.Init(ctx, c); err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var fwd []string
			c.SetFlushListener(func(r storeapi.CacheFlushRecord[[]byte, []byte]) error {
				k, start, end, err := splitSessionStoreKey(r.Key)
				fwd = append(fwd, fmt.Sprintf("%s@%d-%d new=%s old=%s", k, start, end, str(r.NewValue), str(r.OldValue)))
				return err
			}, true)
			sess := func(k string, s, e int64) serde.Windowed[[]byte] {
				return serde.Windowed[[]byte]{Key: []byte(k), Window: serde.Window{Start: s, End: e}}
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(c.Put(sess("a", 0, 10), []byte("1")))
			must(c.Put(sess("a", 100, 100), []byte("2")))
			must(c.Flush())
			c.ClearCache()
			// Merge: remove both stored sessions, put the merged one; remove a session never stored.
			must(c.Remove(sess("a", 0, 10)))
			must(c.Remove(sess("a", 100, 100)))
			must(c.Put(sess("a", 0, 100), []byte("3")))
			must(c.Remove(sess("a", 500, 500)))
			list := func(it KeyValueIterator[serde.Windowed[[]byte], []byte]) string {
				kvs, err := Collect(it)
				must(err)
				var parts []string
				for _, kv := range kvs {
					parts = append(parts, fmt.Sprintf("%d-%d=%s", kv.Key.Window.Start, kv.Key.Window.End, str(kv.Value)))
				}
				return strings.Join(parts, ",")
			}
			if got := list(c.FindSessions([]byte("a"), 0, 1000)); got != "0-100=3" {
				t.Fatalf("FindSessions = %s, want the merged session only", got)
			}
			if v, ok, err := c.FetchSession([]byte("a"), 0, 10); err != nil || ok || v != nil {
				t.Fatalf("FetchSession of a removed session = %q %v %v", v, ok, err)
			}
			fwd = nil
			must(c.Flush())
			want := []string{"a@0-10 new=null old=1", "a@100-100 new=null old=2", "a@0-100 new=3 old=null"}
			if fmt.Sprint(fwd) != fmt.Sprint(want) {
				t.Fatalf("flushed %q, want %q", fwd, want)
			}
		})
	}
}
