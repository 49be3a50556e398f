package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
)

func TestLruMapEvictionAndChangelog(t *testing.T) {
	sup, err := Stores.LruMap("lru", 2)
	if err != nil || sup.MetricsScope() != "in-memory-lru" {
		t.Fatal(err)
	}
	st, _ := Stores.KeyValueStoreBuilder(sup, serde.String(), serde.String()).Build()
	kv := st.(KeyValueStore[string, string])
	ctx := &fakeContext{appID: "app", ts: 5}
	if err := kv.Init(ctx, kv); err != nil {
		t.Fatal(err)
	}
	_ = kv.Put("a", "1")
	_ = kv.Put("b", "2")
	_, _, _ = kv.Get("a") // a is now most recently used
	_ = kv.Put("c", "3")  // evicts b
	if _, ok, _ := kv.Get("b"); ok {
		t.Fatal("b not evicted")
	}
	kvs, _ := Collect(kv.All())
	if len(kvs) != 2 || kvs[0].Key != "a" || kvs[1].Key != "c" {
		t.Fatalf("entries %v", kvs)
	}
	kvs, _ = Collect(kv.ReverseRange("a", "c"))
	if len(kvs) != 2 || kvs[0].Key != "c" {
		t.Fatalf("reverse %v", kvs)
	}
	// The changelog has the puts and a tombstone for the evicted key, written during the inner
	// put and so before the put that caused it (Java: the eviction listener runs inside
	// wrapped().put, before ChangeLoggingKeyValueBytesStore logs the put).
	want := "lru:a=1@5|lru:b=2@5|lru:b=<nil>@5|lru:c=3@5"
	if got := strings.Join(ctx.logged, "|"); got != want {
		t.Fatalf("changelog %q want %q", got, want)
	}
	if _, err := Stores.LruMap("x", -1); !errors.Is(err, errNegativeSize) {
		t.Fatalf("negative size: %v", err)
	}
	if it := kv.Range("c", "a"); it.Next() {
		t.Fatal("from > to not empty")
	}
}

func TestLruMapZeroSize(t *testing.T) {
	s := newLRUKeyValueStore("z", 0)
	s.Open()
	var evicted []string
	s.SetEvictionListener(func(k, _ []byte) error { evicted = append(evicted, string(k)); return nil })
	_ = s.Put([]byte("k"), []byte("v"))
	if s.ApproximateNumEntries() != 0 || strings.Join(evicted, ",") != "k" {
		t.Fatalf("size %d evicted %v", s.ApproximateNumEntries(), evicted)
	}
}
