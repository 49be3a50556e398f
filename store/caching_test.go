package store

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// cacheContext is a StateStoreContext with a record cache, a current record context and a
// changelog that records what is logged with which context.
type cacheContext struct {
	fakeContext
	cache  *cache.ThreadCache
	rc     processor.RecordContext
	events []string
}

func (c *cacheContext) Cache() *cache.ThreadCache                     { return c.cache }
func (c *cacheContext) CurrentRecordContext() processor.RecordContext { return c.rc }
func (c *cacheContext) RecordTimestamp() int64                        { return c.rc.Timestamp }
func (c *cacheContext) TaskID() processor.TaskID {
	return processor.TaskID{Subtopology: 1, Partition: 2}
}
func (c *cacheContext) setRecord(topic string, offset, ts int64) { c.rc = rcOf(topic, offset, ts) }
func rcOf(topic string, offset, ts int64) processor.RecordContext {
	return processor.RecordContext{Topic: topic, Partition: 0, Offset: offset, Timestamp: ts}
}
func (c *cacheContext) SetRecordContext(rc processor.RecordContext) func() {
	prev := c.rc
	c.rc = rc
	return func() { c.rc = prev }
}
func (c *cacheContext) LogChange(store string, key, value []byte, ts int64) error {
	c.events = append(c.events, fmt.Sprintf("log %s=%s@%d(off %d)", key, str(value), ts, c.rc.Offset))
	return nil
}

func str(b []byte) string {
	if b == nil {
		return "null"
	}
	return string(b)
}

// newCachingStore returns an initialised caching store over a logged in-memory engine, with a
// cache of maxBytes (or none when maxBytes < 0).
func newCachingStore(t *testing.T, maxBytes int64) (*cachingKeyValueStore, *cacheContext) {
	t.Helper()
	ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, rc: rcOf("in", 0, 0)}
	if maxBytes >= 0 {
		ctx.cache = cache.New(maxBytes)
	}
	c := newCachingKeyValueStore(newChangeLoggingKeyValueBytesStore(newInMemoryKeyValueStore("s")))
	if err := c.Init(ctx, c); err != nil {
		t.Fatal(err)
	}
	return c, ctx
}

// recordingListener logs every flushed record into ctx.events.
func recordingListener(ctx *cacheContext) storeapi.CacheFlushListener[[]byte, []byte] {
	return func(r storeapi.CacheFlushRecord[[]byte, []byte]) error {
		old := "-"
		if r.HasOldValue {
			old = string(r.OldValue)
		}
		ctx.events = append(ctx.events, fmt.Sprintf("fwd %s new=%s old=%s ts=%d %s/%d/%d ctx-off=%d", r.Key, str(r.NewValue), old,
			r.Timestamp, r.Topic, r.Partition, r.Offset, ctx.rc.Offset))
		return nil
	}
}

func mustPut(t *testing.T, s KeyValueBytesStore, k, v string) {
	t.Helper()
	var vb []byte
	if v != "null" {
		vb = []byte(v)
	}
	if err := s.Put([]byte(k), vb); err != nil {
		t.Fatal(err)
	}
}

func expectEvents(t *testing.T, ctx *cacheContext, want ...string) {
	t.Helper()
	if !slices.Equal(ctx.events, want) {
		t.Fatalf("events:\n got  %q\n want %q", ctx.events, want)
	}
	ctx.events = nil
}

func TestCachingReadYourWritesAndFlushOrder(t *testing.T) {
	s, ctx := newCachingStore(t, 10<<20)
	if !s.SetFlushListener(recordingListener(ctx), true) {
		t.Fatal("SetFlushListener reported no cache")
	}
	ctx.setRecord("in", 1, 100)
	mustPut(t, s, "a", "1")
	ctx.setRecord("in", 2, 200)
	mustPut(t, s, "b", "1")
	ctx.setRecord("in", 3, 300)
	mustPut(t, s, "a", "2") // a moves behind b in the flush order
	if v, ok, err := s.Get([]byte("a")); err != nil || !ok || string(v) != "2" {
		t.Fatalf("Get(a) = %q %v %v, want the cached 2", v, ok, err)
	}
	if v, _, _ := s.Inner().Get([]byte("a")); v != nil {
		t.Fatalf("the store below already has a = %q before any flush", v)
	}
	expectEvents(t, ctx) // nothing logged or forwarded before the flush
	ctx.setRecord("in", 9, 900)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	// Each entry is written below (logged) and forwarded with the context of its last write;
	// the context of the flush caller is restored afterwards.
	expectEvents(t, ctx,
		"log b=1@200(off 2)", "fwd b new=1 old=- ts=200 in/0/2 ctx-off=2",
		"log a=2@300(off 3)", "fwd a new=2 old=- ts=300 in/0/3 ctx-off=3")
	if ctx.rc.Offset != 9 {
		t.Fatalf("record context not restored: offset %d", ctx.rc.Offset)
	}
	// Updates between two flushes collapse; the old value is the one flushed last time.
	ctx.setRecord("in", 10, 1000)
	mustPut(t, s, "a", "3")
	mustPut(t, s, "a", "4")
	if err := s.FlushCache(); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, ctx, "log a=4@1000(off 10)", "fwd a new=4 old=2 ts=1000 in/0/10 ctx-off=10")
	if err := s.Flush(); err != nil { // nothing dirty any more
		t.Fatal(err)
	}
	expectEvents(t, ctx)
}

func TestCachingTombstones(t *testing.T) {
	s, ctx := newCachingStore(t, 10<<20)
	s.SetFlushListener(recordingListener(ctx), false)
	mustPut(t, s, "a", "1")
	mustPut(t, s, "b", "1")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx.events = nil
	ctx.setRecord("in", 5, 50)
	old, found, err := s.Delete([]byte("a"))
	if err != nil || !found || string(old) != "1" {
		t.Fatalf("Delete(a) = %q %v %v", old, found, err)
	}
	if _, ok, _ := s.Get([]byte("a")); ok {
		t.Fatal("a still visible after Delete")
	}
	if v, _, _ := s.Inner().Get([]byte("a")); string(v) != "1" {
		t.Fatal("the delete reached the store below before the flush")
	}
	mustPut(t, s, "never", "x") // written and deleted between flushes: no output at all
	if _, _, err := s.Delete([]byte("never")); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "b", "null") // put(null) is a delete too
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	// Old values are not sent (sendOldValues=false) even though they are read to detect absent keys.
	expectEvents(t, ctx,
		"log a=null@50(off 5)", "fwd a new=null old=- ts=50 in/0/5 ctx-off=5",
		"log b=null@50(off 5)", "fwd b new=null old=- ts=50 in/0/5 ctx-off=5")
	if got := s.cache.Size(); got != 0 {
		t.Fatalf("tombstones stay cached after the flush: %d entries", got)
	}
}

func TestCachingWithoutListenerLogsEveryDirtyEntry(t *testing.T) {
	s, ctx := newCachingStore(t, 10<<20)
	mustPut(t, s, "x", "1")
	if _, _, err := s.Delete([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	// Without a flush listener Java writes the entry below even when it deletes an absent key.
	expectEvents(t, ctx, "log x=null@0(off 0)")
}

func TestCachingRangeMerge(t *testing.T) {
	s, ctx := newCachingStore(t, 10<<20)
	s.SetFlushListener(recordingListener(ctx), false)
	for _, k := range []string{"a", "b", "c", "e"} {
		mustPut(t, s, k, "store-"+k)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s.ClearCache() // the store below holds a, b, c, e; the cache nothing
	mustPut(t, s, "b", "cache-b")
	mustPut(t, s, "d", "cache-d")
	mustPut(t, s, "c", "null")
	mustPut(t, s, "f", "null") // tombstone of a key absent below
	collect := func(it KeyValueIterator[[]byte, []byte]) string {
		var parts []string
		kvs, err := Collect(it)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range kvs {
			parts = append(parts, string(kv.Key)+"="+string(kv.Value))
		}
		return strings.Join(parts, ",")
	}
	cases := []struct {
		name string
		it   KeyValueIterator[[]byte, []byte]
		want string
	}{
		{"all", s.All(), "a=store-a,b=cache-b,d=cache-d,e=store-e"},
		// Java 4.4's merged iterator compares keys without regard to the direction when it skips
		// tombstones: in reverse order a tombstone sorting after the store's next key comes out
		// as an entry with a null value (f here; checked against Java by papi-cache's "<").
		{"reverseAll", s.ReverseAll(), "f=,e=store-e,d=cache-d,b=cache-b,a=store-a"},
		{"range b..d", s.Range([]byte("b"), []byte("d")), "b=cache-b,d=cache-d"},
		{"range c..c", s.Range([]byte("c"), []byte("c")), ""},
		{"reverseRange a..c", s.ReverseRange([]byte("a"), []byte("c")), "b=cache-b,a=store-a"},
		{"range open from", s.Range(nil, []byte("b")), "a=store-a,b=cache-b"},
		{"range open to", s.Range([]byte("d"), nil), "d=cache-d,e=store-e"},
		{"range from>to", s.Range([]byte("e"), []byte("a")), ""},
		{"prefix d", s.PrefixScan([]byte("d")), "d=cache-d"},
		{"prefix empty", s.PrefixScan([]byte{}), "a=store-a,b=cache-b,d=cache-d,e=store-e"},
	}
	for _, c := range cases {
		if got := collect(c.it); got != c.want {
			t.Errorf("%s = %q, want %q", c.name, got, c.want)
		}
	}
	if n := s.ApproximateNumEntries(); n != 4 {
		t.Errorf("ApproximateNumEntries = %d, want the store below's 4", n)
	}
}

func TestCachingPrefixScanAtTheTopOfTheKeySpace(t *testing.T) {
	s, _ := newCachingStore(t, 10<<20)
	mustPut(t, s, "\xff\xff", "x")
	mustPut(t, s, "\xff\xfe", "y")
	mustPut(t, s, "\xfe", "z")
	kvs, err := Collect(s.PrefixScan([]byte{0xff}))
	if err != nil || len(kvs) != 2 || string(kvs[0].Value) != "y" || string(kvs[1].Value) != "x" {
		t.Fatalf("prefix 0xff = %v %v", kvs, err)
	}
}

// A read that misses the cache loads the value as a clean entry: it takes budget and can evict
// (and so flush) dirty entries, as Java's CachingKeyValueStore.get does on the stream thread.
func TestCachingGetLoadsCleanEntryAndEvicts(t *testing.T) {
	s, ctx := newCachingStore(t, 10<<20)
	s.SetFlushListener(recordingListener(ctx), false)
	mustPut(t, s, "k1", "v1")
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s.ClearCache()
	ctx.events = nil
	// Budget for exactly one entry of this context.
	one := int64(len("k1")) + 24 + cache.NewEntry([]byte("v1"), ctx.rc, true).Size()
	if err := ctx.cache.Resize(one); err != nil {
		t.Fatal(err)
	}
	ctx.setRecord("in", 7, 70)
	mustPut(t, s, "k2", "v2") // fits
	expectEvents(t, ctx)
	if v, ok, err := s.Get([]byte("k1")); err != nil || !ok || string(v) != "v1" {
		t.Fatalf("Get(k1) = %q %v %v", v, ok, err)
	}
	// The clean k1 (no topic: smaller) pushed the cache over budget: the LRU entry k2 was evicted
	// (dirty: flushed with its own context), k1 stays cached.
	expectEvents(t, ctx, "log k2=v2@70(off 7)", "fwd k2 new=v2 old=- ts=70 in/0/7 ctx-off=7")
	if ctx.cache.Size() != 1 || ctx.cache.Get(s.namespace, []byte("k1")) == nil {
		t.Fatalf("cache should hold only the clean k1")
	}
	if s.namespace != "1_2-s" {
		t.Fatalf("namespace = %q, want <task id>-<store>", s.namespace)
	}
}

func TestCachingPutIfAbsentAndPutAll(t *testing.T) {
	s, ctx := newCachingStore(t, 10<<20)
	s.SetFlushListener(recordingListener(ctx), false)
	if old, found, err := s.PutIfAbsent([]byte("a"), []byte("1")); err != nil || found || old != nil {
		t.Fatalf("PutIfAbsent(a) = %q %v %v", old, found, err)
	}
	if old, found, err := s.PutIfAbsent([]byte("a"), []byte("2")); err != nil || !found || string(old) != "1" {
		t.Fatalf("second PutIfAbsent(a) = %q %v %v", old, found, err)
	}
	if err := s.PutAll([]KeyValue[[]byte, []byte]{{Key: []byte("b"), Value: []byte("1")}, {Key: []byte("a"), Value: []byte("3")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, ctx, "log b=1@0(off 0)", "fwd b new=1 old=- ts=0 in/0/0 ctx-off=0",
		"log a=3@0(off 0)", "fwd a new=3 old=- ts=0 in/0/0 ctx-off=0")
	if err := s.Put(nil, []byte("x")); !errors.Is(err, ErrNullKey) {
		t.Fatalf("Put(nil key) = %v, want ErrNullKey", err)
	}
}

// Without a cache (statestore.cache.max.bytes=0 strips caching, or a context without a cache)
// every operation goes straight through and SetFlushListener reports false.
func TestCachingPassThroughWithoutCache(t *testing.T) {
	s, ctx := newCachingStore(t, -1)
	if s.SetFlushListener(recordingListener(ctx), true) {
		t.Fatal("SetFlushListener must report false without a cache")
	}
	mustPut(t, s, "a", "1")
	mustPut(t, s, "a", "2")
	expectEvents(t, ctx, "log a=1@0(off 0)", "log a=2@0(off 0)")
	if kvs, _ := Collect(s.All()); len(kvs) != 1 {
		t.Fatalf("All = %v", kvs)
	}
}

func TestCachingCloseFlushesAndDropsNamespace(t *testing.T) {
	s, ctx := newCachingStore(t, 10<<20)
	s.SetFlushListener(recordingListener(ctx), false)
	mustPut(t, s, "a", "1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, ctx, "log a=1@0(off 0)", "fwd a new=1 old=- ts=0 in/0/0 ctx-off=0")
	if len(ctx.cache.Namespaces()) != 0 || ctx.cache.SizeBytes() != 0 {
		t.Fatalf("namespace kept after Close: %v", ctx.cache.Namespaces())
	}
}

// The typed layer decodes the flushed key, new and old values with its serdes; the builder puts
// the caching layer between the typed and the change-logging layer.
func TestCachingTypedStoreFlushListener(t *testing.T) {
	bld := Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Long()).WithCachingEnabled()
	st, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	caching, ok := st.(*meteredKeyValueStore[string, int64]).Inner().(*cachingKeyValueStore)
	if !ok {
		t.Fatalf("the layer below the typed one is %T, want *CachingKeyValueStore", st.(*meteredKeyValueStore[string, int64]).Inner())
	}
	if _, ok := caching.Inner().(*changeLoggingKeyValueBytesStore); !ok {
		t.Fatalf("the layer below the cache is %T, want the change-logging layer", caching.Inner())
	}
	kv := st.(KeyValueStore[string, int64])
	ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, cache: cache.New(1 << 20), rc: rcOf("in", 3, 30)}
	if err := kv.Init(ctx, kv); err != nil {
		t.Fatal(err)
	}
	var got []storeapi.CacheFlushRecord[string, int64]
	cs := st.(storeapi.CachedStateStore[string, int64])
	if !cs.SetFlushListener(func(r storeapi.CacheFlushRecord[string, int64]) error { got = append(got, r); return nil }, true) {
		t.Fatal("no cache")
	}
	if err := kv.Put("w", 1); err != nil {
		t.Fatal(err)
	}
	if err := cs.FlushCache(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Put("w", 5); err != nil {
		t.Fatal(err)
	}
	if _, _, err := kv.Delete("absent"); err != nil {
		t.Fatal(err)
	}
	if err := kv.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []storeapi.CacheFlushRecord[string, int64]{
		{Key: "w", NewValue: 1, HasNewValue: true, Timestamp: 30, Topic: "in", Offset: 3},
		{Key: "w", NewValue: 5, HasNewValue: true, OldValue: 1, HasOldValue: true, Timestamp: 30, Topic: "in", Offset: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("flushed %+v, want %+v", got, want)
	}
	for i := range want {
		g := got[i]
		g.Headers = serde.Headers{}
		if fmt.Sprint(g) != fmt.Sprint(want[i]) {
			t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// Plain stores without caching report false.
	plain := Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("P"), serde.String(), serde.Long()).BuildStore()
	if plain.(storeapi.CachedStateStore[string, int64]).SetFlushListener(nil, false) {
		t.Fatal("a store without caching layer reported a cache")
	}
}

// A query view reads the cache and the store below but never caches what it reads, so a query
// cannot evict or flush; it can run while the task writes (run with -race).
func TestCachingQueryView(t *testing.T) {
	bld := Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("Q"), serde.String(), serde.Long()).WithCachingEnabled()
	kv := bld.BuildStore()
	ctx := &cacheContext{fakeContext: fakeContext{appID: "app"}, cache: cache.New(10 << 20), rc: rcOf("in", 0, 0)}
	if err := kv.Init(ctx, kv); err != nil {
		t.Fatal(err)
	}
	view, ok := queryViewOf[string, int64](kv)
	if !ok {
		t.Fatal("no query view")
	}
	if err := kv.Put("a", 1); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := view.Get("a"); err != nil || !ok || v != 1 {
		t.Fatalf("view.Get(a) = %d %v %v, want the cached 1", v, ok, err)
	}
	if err := kv.Flush(); err != nil {
		t.Fatal(err)
	}
	kv.(storeapi.CachedStateStore[string, int64]).ClearCache()
	before := ctx.cache.Size()
	if v, ok, err := view.Get("a"); err != nil || !ok || v != 1 {
		t.Fatalf("view.Get(a) from below = %d %v %v", v, ok, err)
	}
	if ctx.cache.Size() != before {
		t.Fatal("a query read filled the cache")
	}
	if _, ok := view.(KeyValueStore[string, int64]); ok {
		if err := view.(KeyValueStore[string, int64]).Put("x", 1); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("write through the view = %v, want ErrReadOnly", err)
		}
	}
	// A query reads on a goroutine of its own, holding the task's lock as the runtime's
	// QueryableStore.Read does, between the task's writes and flushes.
	var task sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 500 {
			task.Lock()
			view.Get("k3")
			_, err := Collect(view.All())
			task.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 500 {
		task.Lock()
		err := kv.Put(fmt.Sprintf("k%d", i%10), int64(i))
		if err == nil && i%50 == 0 {
			err = kv.Flush()
		}
		task.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	<-done
}

// queryViewOf is st's QueryView (as internal/storeview reads it), else st itself.
func queryViewOf[K, V any](st processor.StateStore) (ReadOnlyKeyValueStore[K, V], bool) {
	if q, ok := st.(interface {
		QueryView() ReadOnlyKeyValueStore[K, V]
	}); ok {
		return q.QueryView(), true
	}
	ro, ok := st.(ReadOnlyKeyValueStore[K, V])
	return ro, ok
}
