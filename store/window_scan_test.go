package store

import (
	"bytes"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/serde"
)

// scanChunks reads a scan in chunks of n entries, each chunk a fresh scan resumed after the raw
// key of the last entry of the one before, as the interactive queries do.
func scanChunks[K, V any](t *testing.T, n int, open func(after []byte) (storeapi.RawKeyIterator[K, V], bool), format func(K, V) string) []string {
	t.Helper()
	out := []string{}
	var after []byte
	for chunks := 0; ; chunks++ {
		if chunks > 10_000 {
			t.Fatal("the resumed scan does not end")
		}
		it, ok := open(after)
		if !ok {
			t.Fatal("the store cannot scan")
		}
		got := 0
		for got < n && it.Next() {
			out = append(out, format(it.Key(), it.Value()))
			got++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if got == n {
			after = bytes.Clone(it.RawKey())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if got < n {
			return out
		}
	}
}

// listOf collects a plain iterator with format.
func listOf[K, V any](t *testing.T, it KeyValueIterator[K, V], format func(K, V) string) []string {
	t.Helper()
	defer it.Close()
	out := []string{}
	for it.Next() {
		out = append(out, format(it.Key(), it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func newScanCtx() *cacheContext {
	return &cacheContext{fakeContext: fakeContext{appID: "app"}, cache: cache.New(10 << 20), rc: rcOf("in", 0, 0)}
}

// windowScanCase is a window store iteration both as a storeapi.WindowScan and as the plain method.
type windowScanCase[V any] struct {
	name  string
	scan  storeapi.WindowScan[string]
	plain func(WindowStore[string, V]) []string
}

func windowScanCases[V any](t *testing.T, format func(serde.Windowed[string], V) string) []windowScanCase[V] {
	times := func(it KeyValueIterator[int64, V], key string) []string {
		return listOf(t, it, func(ts int64, v V) string {
			return format(serde.Windowed[string]{Key: key, Window: serde.Window{Start: ts}}, v)
		})
	}
	list := func(it KeyValueIterator[serde.Windowed[string], V]) []string { return listOf(t, it, format) }
	var cases []windowScanCase[V]
	for _, rev := range []bool{false, true} {
		dir := map[bool]string{false: "forward", true: "backward"}[rev]
		cases = append(cases,
			windowScanCase[V]{"key k03 all times/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanKey, Key: "k03", TimeFrom: 0, TimeTo: math.MaxInt64, Reverse: rev},
				func(s WindowStore[string, V]) []string {
					if rev {
						return times(s.BackwardFetchTimeRange("k03", 0, math.MaxInt64), "k03")
					}
					return times(s.FetchTimeRange("k03", 0, math.MaxInt64), "k03")
				}},
			windowScanCase[V]{"key k07 some times/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanKey, Key: "k07", TimeFrom: 100_000, TimeTo: 400_070, Reverse: rev},
				func(s WindowStore[string, V]) []string {
					if rev {
						return times(s.BackwardFetchTimeRange("k07", 100_000, 400_070), "k07")
					}
					return times(s.FetchTimeRange("k07", 100_000, 400_070), "k07")
				}},
			windowScanCase[V]{"key range/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanRange, From: "k02", To: "k08", TimeFrom: 50_000, TimeTo: 450_000, Reverse: rev},
				func(s WindowStore[string, V]) []string {
					if rev {
						return list(s.BackwardFetchKeyRange("k02", "k08", 50_000, 450_000))
					}
					return list(s.FetchKeyRange("k02", "k08", 50_000, 450_000))
				}},
			windowScanCase[V]{"fetchAll/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanAll, TimeFrom: 100_000, TimeTo: 500_000, Reverse: rev},
				func(s WindowStore[string, V]) []string {
					if rev {
						return list(s.BackwardFetchAll(100_000, 500_000))
					}
					return list(s.FetchAll(100_000, 500_000))
				}},
			windowScanCase[V]{"all/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanAll, TimeFrom: math.MinInt64, TimeTo: math.MaxInt64, Reverse: rev},
				func(s WindowStore[string, V]) []string {
					if rev {
						return list(s.BackwardAll())
					}
					return list(s.All())
				}},
		)
	}
	return cases
}

// fillWindows writes 12 keys x 6 windows over two segments (interval 300 000 ms), flushes them
// below, then leaves overwrites, new windows and (with del) deletions in the record cache.
func fillWindows[V any](t *testing.T, s WindowStore[string, V], val func(string) V, del func(key string, start int64) error) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []int{5, 0, 11, 3, 8, 1, 10, 7, 2, 9, 4, 6} {
		for j := range 6 {
			start := int64(j)*100_000 + int64(k)*10
			must(s.Put(fmt.Sprintf("k%02d", k), val(fmt.Sprintf("v%d.%d", k, j)), start))
		}
	}
	must(s.Flush())
	must(s.Put("k03", val("cached"), 100_030))  // overwrite of a flushed window
	must(s.Put("k07", val("cached"), 250_000))  // a new window between flushed ones
	must(s.Put("k00", val("cached"), 599_999))  // a new window at the end of segment 1
	must(s.Put("k02", val("cached"), 0))        // a new window at the start
	must(s.Put("k055", val("cached"), 300_000)) // a new key between flushed keys
	if del != nil {
		must(del("k04", 200_040)) // a cached tombstone over a flushed window
		must(del("k07", 400_070))
	}
}

func checkWindowScans[V any](t *testing.T, s WindowStore[string, V], format func(serde.Windowed[string], V) string) {
	t.Helper()
	sc, ok := s.(storeapi.WindowScanner[string, V])
	if !ok {
		t.Fatalf("%T is no storeapi.WindowScanner", s)
	}
	for _, c := range windowScanCases[V](t, format) {
		want := c.plain(s)
		if len(want) == 0 {
			t.Fatalf("%s: the plain iteration is empty", c.name)
		}
		for _, n := range []int{1, 2, 5, 1000} {
			got := scanChunks(t, n, func(after []byte) (storeapi.RawKeyIterator[serde.Windowed[string], V], bool) {
				s := c.scan
				s.After = after
				return sc.ScanWindows(s)
			}, func(w serde.Windowed[string], v V) string {
				if c.scan.Kind == storeapi.WindowScanKey {
					w.Window.End = 0 // the plain key fetch gives window starts only
				}
				return format(w, v)
			})
			if !slices.Equal(got, want) {
				t.Fatalf("%s in chunks of %d:\n got %v\nwant %v", c.name, n, got, want)
			}
		}
	}
}

// A window store's scan, resumed after the raw key of every n-th entry, gives exactly the
// entries of the plain iteration in its order, for every iteration, both engines, with and
// without a record cache holding unflushed overwrites, new windows and tombstones, for plain
// and timestamped stores (WindowStoreBuilder keeps the caching flag without a caching layer,
// so there the cached runs read the store as the uncached ones).
func TestWindowScanResumes(t *testing.T) {
	const retention, size = 10 * time.Minute, 10 * time.Millisecond
	suppliers := map[string]func() (WindowBytesStoreSupplier, error){
		"memory": func() (WindowBytesStoreSupplier, error) {
			return Stores.InMemoryWindowStore("w", retention, size, false)
		},
		"pebble": func() (WindowBytesStoreSupplier, error) {
			return Stores.PersistentWindowStore("w", retention, size, false)
		},
	}
	plain := func(w serde.Windowed[string], v string) string {
		return fmt.Sprintf("%s@%d-%d=%s", w.Key, w.Window.Start, w.Window.End, v)
	}
	stamped := func(w serde.Windowed[string], v *ValueAndTimestamp[string]) string {
		return fmt.Sprintf("%s@%d-%d=%s/%d", w.Key, w.Window.Start, w.Window.End, v.Value, v.Timestamp)
	}
	for _, engine := range []string{"memory", "pebble"} {
		for _, caching := range []bool{false, true} {
			name := engine + map[bool]string{false: "/uncached", true: "/cached"}[caching]
			t.Run(name+"/plain", func(t *testing.T) {
				sup, err := suppliers[engine]()
				if err != nil {
					t.Fatal(err)
				}
				b := Stores.WindowStoreBuilder(sup, serde.String(), serde.String())
				if caching {
					b = b.WithCachingEnabled()
				}
				s := b.BuildStore()
				if err := s.Init(newScanCtx(), s); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				fillWindows(t, s, func(v string) string { return v }, nil)
				checkWindowScans(t, s, plain)
			})
			t.Run(name+"/timestamped", func(t *testing.T) {
				sup, err := suppliers[engine]()
				if err != nil {
					t.Fatal(err)
				}
				b := Stores.TimestampedWindowStoreBuilder(sup, serde.String(), serde.String())
				if caching {
					b = b.WithCachingEnabled()
				}
				s := b.BuildStore()
				if err := s.Init(newScanCtx(), s); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				fillWindows(t, s, func(v string) *ValueAndTimestamp[string] {
					return &ValueAndTimestamp[string]{Value: v, Timestamp: int64(len(v))}
				},
					func(key string, start int64) error { return s.Put(key, nil, start) })
				checkWindowScans(t, s, stamped)
			})
		}
	}
}

// A resumed scan sees a window written between two chunks ahead of the scan and not one behind
// it, and never repeats or reorders the others.
func TestWindowScanSeesWritesAhead(t *testing.T) {
	sup, err := Stores.PersistentWindowStore("w", 10*time.Minute, 10*time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	s := Stores.WindowStoreBuilder(sup, serde.String(), serde.String()).WithCachingEnabled().BuildStore()
	if err := s.Init(newScanCtx(), s); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"a", "c", "e"} {
		if err := s.Put(k, k, 1000); err != nil {
			t.Fatal(err)
		}
	}
	sc := s.(storeapi.WindowScanner[string, string])
	scan := storeapi.WindowScan[string]{Kind: storeapi.WindowScanAll, TimeFrom: 0, TimeTo: math.MaxInt64}
	var got []string
	var after []byte
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatalf("the resumed scan does not end: %v", got)
		}
		scan.After = after
		it, _ := sc.ScanWindows(scan)
		if !it.Next() {
			_ = it.Close()
			break
		}
		got = append(got, it.Key().Key)
		after = bytes.Clone(it.RawKey())
		_ = it.Close()
		if i == 1 { // after "c": "b" is behind the scan, "d" ahead of it
			_ = s.Put("b", "b", 1000)
			_ = s.Put("d", "d", 1000)
		}
	}
	if strings.Join(got, ",") != "a,c,d,e" {
		t.Fatalf("keys %v, want [a c d e]", got)
	}
}

// sessionScanCase is a session store iteration both as a storeapi.WindowScan and as the plain method.
type sessionScanCase struct {
	name  string
	scan  storeapi.WindowScan[string]
	plain func(SessionStore[string, string]) KeyValueIterator[serde.Windowed[string], string]
}

func sessionScanCases() []sessionScanCase {
	var cases []sessionScanCase
	for _, rev := range []bool{false, true} {
		dir := map[bool]string{false: "forward", true: "backward"}[rev]
		cases = append(cases,
			sessionScanCase{"fetch key/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanKey, Key: "k03", TimeFrom: 0, TimeTo: math.MaxInt64, Reverse: rev},
				func(s SessionStore[string, string]) KeyValueIterator[serde.Windowed[string], string] {
					if rev {
						return s.BackwardFetch("k03")
					}
					return s.Fetch("k03")
				}},
			sessionScanCase{"findSessions/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanKey, Key: "k05", TimeFrom: 150_000, TimeTo: 450_000, Reverse: rev},
				func(s SessionStore[string, string]) KeyValueIterator[serde.Windowed[string], string] {
					if rev {
						return s.BackwardFindSessions("k05", 150_000, 450_000)
					}
					return s.FindSessions("k05", 150_000, 450_000)
				}},
			sessionScanCase{"fetch range/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanRange, From: "k02", To: "k08", TimeFrom: 0, TimeTo: math.MaxInt64, Reverse: rev},
				func(s SessionStore[string, string]) KeyValueIterator[serde.Windowed[string], string] {
					if rev {
						return s.BackwardFetchRange("k02", "k08")
					}
					return s.FetchRange("k02", "k08")
				}},
			sessionScanCase{"findSessions range/" + dir, storeapi.WindowScan[string]{Kind: storeapi.WindowScanRange, From: "k01", To: "k09", TimeFrom: 100_000, TimeTo: 400_000, Reverse: rev},
				func(s SessionStore[string, string]) KeyValueIterator[serde.Windowed[string], string] {
					if rev {
						return s.BackwardFindSessionsRange("k01", "k09", 100_000, 400_000)
					}
					return s.FindSessionsRange("k01", "k09", 100_000, 400_000)
				}},
		)
	}
	return cases
}

// A session store's scan, resumed after the raw key of every n-th entry, gives exactly the
// sessions of the plain iteration in its order, for every iteration, both engines, with and
// without a record cache holding unflushed sessions and removals.
func TestSessionScanResumes(t *testing.T) {
	const retention = 10 * time.Minute
	suppliers := map[string]func() (SessionBytesStoreSupplier, error){
		"memory": func() (SessionBytesStoreSupplier, error) { return Stores.InMemorySessionStore("s", retention) },
		"pebble": func() (SessionBytesStoreSupplier, error) { return Stores.PersistentSessionStore("s", retention) },
	}
	format := func(w serde.Windowed[string], v string) string {
		return fmt.Sprintf("%s@%d-%d=%s", w.Key, w.Window.Start, w.Window.End, v)
	}
	ws := func(k string, start, end int64) serde.Windowed[string] {
		return serde.Windowed[string]{Key: k, Window: serde.Window{Start: start, End: end}}
	}
	for _, engine := range []string{"memory", "pebble"} {
		for _, caching := range []bool{false, true} {
			t.Run(engine+map[bool]string{false: "/uncached", true: "/cached"}[caching], func(t *testing.T) {
				sup, err := suppliers[engine]()
				if err != nil {
					t.Fatal(err)
				}
				b := Stores.SessionStoreBuilder(sup, serde.String(), serde.String())
				if caching {
					b = b.WithCachingEnabled()
				}
				s := b.BuildStore()
				if err := s.Init(newScanCtx(), s); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				must := func(err error) {
					t.Helper()
					if err != nil {
						t.Fatal(err)
					}
				}
				// 12 keys x 6 sessions over two segments (interval 300 000 ms, by session end).
				for _, k := range []int{5, 0, 11, 3, 8, 1, 10, 7, 2, 9, 4, 6} {
					for j := range 6 {
						start := int64(j)*100_000 + int64(k)*100
						must(s.Put(ws(fmt.Sprintf("k%02d", k), start, start+int64(k)*10), fmt.Sprintf("v%d.%d", k, j)))
					}
				}
				must(s.Flush())
				must(s.Put(ws("k03", 100_300, 100_330), "cached"))  // overwrite of a flushed session
				must(s.Put(ws("k05", 250_000, 299_999), "cached"))  // a new session
				must(s.Put(ws("k055", 300_000, 300_001), "cached")) // a new key
				must(s.Remove(ws("k05", 300_500, 300_550)))         // a cached removal of a flushed one
				must(s.Put(ws("k02", 0, 599_999), "cached"))        // a long session
				sc, ok := s.(storeapi.SessionScanner[string, string])
				if !ok {
					t.Fatalf("%T is no storeapi.SessionScanner", s)
				}
				for _, c := range sessionScanCases() {
					want := listOf(t, c.plain(s), format)
					if len(want) == 0 {
						t.Fatalf("%s: the plain iteration is empty", c.name)
					}
					for _, n := range []int{1, 2, 5, 1000} {
						got := scanChunks(t, n, func(after []byte) (storeapi.RawKeyIterator[serde.Windowed[string], string], bool) {
							scan := c.scan
							scan.After = after
							return sc.ScanSessions(scan)
						}, format)
						if !slices.Equal(got, want) {
							t.Fatalf("%s in chunks of %d:\n got %v\nwant %v", c.name, n, got, want)
						}
					}
				}
			})
		}
	}
}
