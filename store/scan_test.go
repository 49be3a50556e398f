package store

import (
	"bytes"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"slices"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/serde"
)

// chunked runs s in chunks of n entries, each a fresh storeapi.Scan resumed after the last raw key, as
// interactive queries read a store; between chunks it calls between (which may write).
func chunked(t *testing.T, sc storeapi.Scanner[string, string], s storeapi.Scan[string], n int, between func(chunk int)) []string {
	t.Helper()
	var keys []string
	for chunk := 0; ; chunk++ {
		it, ok := sc.Scan(s)
		if !ok {
			t.Fatal("storeapi.Scan not supported")
		}
		got := 0
		for got < n && it.Next() {
			keys = append(keys, it.Key()+"="+it.Value())
			got++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		after := bytes.Clone(it.RawKey())
		_ = it.Close()
		if got < n {
			return keys
		}
		s.After = after
		if between != nil {
			between(chunk)
		}
	}
}

func plain(t *testing.T, it KeyValueIterator[string, string]) []string {
	t.Helper()
	kvs, err := Collect(it)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range kvs {
		out = append(out, kv.Key+"="+kv.Value)
	}
	return out
}

// A storeapi.Scan read in chunks, each resumed after the last key, gives exactly what the plain
// iterator gives, for every kind and direction, on the in-memory and Pebble engines (through
// their change-logging layer) and through a caching layer holding dirty entries (the QueryView interactive queries read);
// chunk sizes that divide the entry count exactly and that do not are both covered.
func TestScanResumesLikeThePlainIterators(t *testing.T) {
	for _, engine := range []string{"memory", "cached-memory", "pebble", "cached-pebble"} {
		t.Run(engine, func(t *testing.T) {
			sup := Stores.PersistentKeyValueStore("scan")
			if strings.HasSuffix(engine, "memory") {
				sup = Stores.InMemoryKeyValueStore("scan")
			}
			b := Stores.KeyValueStoreBuilder(sup, serde.String(), serde.String())
			ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 0, 1)}
			if strings.HasPrefix(engine, "cached") {
				b = b.WithCachingEnabled()
				ctx.cache = cache.New(1 << 20)
			}
			st := b.BuildStore()
			if err := st.Init(ctx, st); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			for i := range 600 { // more than a page of the paged layers (256 keys)
				if err := st.Put(fmt.Sprintf("k%03d", i), fmt.Sprint(i)); err != nil {
					t.Fatal(err)
				}
				if i == 299 && strings.HasPrefix(engine, "cached") {
					if err := st.Flush(); err != nil { // half below, half dirty in the cache
						t.Fatal(err)
					}
				}
			}
			for _, k := range []string{"a", "k1", "k4x", "k5", "z"} { // keys around the prefixes and bounds
				if err := st.Put(k, "x"); err != nil {
					t.Fatal(err)
				}
			}
			q, ok := queryViewOf[string, string](st)
			if !ok {
				t.Fatal("no query view")
			}
			sc := q.(storeapi.Scanner[string, string])
			cases := []struct {
				name string
				scan storeapi.Scan[string]
				want KeyValueIterator[string, string]
			}{
				{"all", storeapi.Scan[string]{Kind: storeapi.ScanAll}, q.All()},
				{"reverse all", storeapi.Scan[string]{Kind: storeapi.ScanAll, Reverse: true}, q.ReverseAll()},
				{"range", storeapi.Scan[string]{Kind: storeapi.ScanRange, From: "k005", To: "k410"}, q.Range("k005", "k410")},
				{"reverse range", storeapi.Scan[string]{Kind: storeapi.ScanRange, From: "k005", To: "k410", Reverse: true}, q.ReverseRange("k005", "k410")},
				{"empty range", storeapi.Scan[string]{Kind: storeapi.ScanRange, From: "k410", To: "k005"}, q.Range("k410", "k005")},
				// One-sided ranges of a key type with no nil (NoFrom, NoTo: the From or To given is
				// ignored): every key is at least "" and below "zz".
				{"open below", storeapi.Scan[string]{Kind: storeapi.ScanRange, From: "k999", To: "k005", NoFrom: true}, q.Range("", "k005")},
				{"open above", storeapi.Scan[string]{Kind: storeapi.ScanRange, From: "k410", To: "a", NoTo: true}, q.Range("k410", "zz")},
				{"reverse open above", storeapi.Scan[string]{Kind: storeapi.ScanRange, From: "k410", NoTo: true, Reverse: true}, q.ReverseRange("k410", "zz")},
				{"open both", storeapi.Scan[string]{Kind: storeapi.ScanRange, NoFrom: true, NoTo: true}, q.All()},
				{"prefix", storeapi.Scan[string]{Kind: storeapi.ScanPrefix, Prefix: []byte("k4")}, q.PrefixScan([]byte("k4"))},
				{"prefix k1", storeapi.Scan[string]{Kind: storeapi.ScanPrefix, Prefix: []byte("k1")}, q.PrefixScan([]byte("k1"))},
			}
			for _, c := range cases {
				want := plain(t, c.want)
				for _, n := range []int{1, 3, 4, 300, 1000} {
					if got := chunked(t, sc, c.scan, n, nil); !slices.Equal(got, want) {
						t.Fatalf("%s in chunks of %d: got %d entries (first %v), want %d (first %v)", c.name, n, len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
					}
				}
			}
		})
	}
}

// Writes between two chunks: a key ahead of the scan is seen, a key behind it is not, a
// deleted resume key does not lose the entries after it, and no key comes twice.
func TestScanSeesWritesAheadOnly(t *testing.T) {
	st := Stores.KeyValueStoreBuilder(Stores.PersistentKeyValueStore("scan"), serde.String(), serde.String()).
		WithLoggingDisabled().BuildStore()
	if err := st.Init(&fakeContext{appID: "app"}, st); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for _, k := range []string{"b", "d", "f", "h"} {
		if err := st.Put(k, "1"); err != nil {
			t.Fatal(err)
		}
	}
	sc := st.(storeapi.Scanner[string, string])
	got := chunked(t, sc, storeapi.Scan[string]{Kind: storeapi.ScanAll}, 2, func(int) {
		for _, k := range []string{"a", "e", "g"} { // a is behind, e and g ahead
			if err := st.Put(k, "2"); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := st.Delete("d"); err != nil { // the resume key
			t.Fatal(err)
		}
	})
	want := []string{"b=1", "d=1", "e=2", "f=1", "g=2", "h=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
