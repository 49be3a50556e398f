package store

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// fakeContext is a StateStoreContext that also records changelog writes.
type fakeContext struct {
	appID      string
	registered []string
	logged     []string
	ts         int64
}

func (f *fakeContext) ApplicationID() string    { return f.appID }
func (f *fakeContext) TaskID() processor.TaskID { return processor.TaskID{} }
func (f *fakeContext) RecordMetadata() (processor.RecordMetadata, bool) {
	return processor.RecordMetadata{}, false
}
func (f *fakeContext) KeySerde() serde.Serde[any]    { return serde.Untyped(serde.String()) }
func (f *fakeContext) ValueSerde() serde.Serde[any]  { return serde.Untyped(serde.Long()) }
func (f *fakeContext) StateDir() string              { return "" }
func (f *fakeContext) AppConfigs() map[string]string { return nil }
func (f *fakeContext) Register(s processor.StateStore, _ processor.StateRestoreCallback) error {
	f.registered = append(f.registered, s.Name())
	return nil
}
func (f *fakeContext) RecordTimestamp() int64 { return f.ts }
func (f *fakeContext) LogChange(store string, key, value []byte, ts int64) error {
	v := "<nil>"
	if value != nil {
		v = string(value)
		if len(value) == 4 {
			v = string(rune('0' + value[3]))
		}
	}
	f.logged = append(f.logged, store+":"+string(key)+"="+v+"@"+strconv.FormatInt(ts, 10))
	return nil
}

func TestTypedStoreWithChangelog(t *testing.T) {
	bld := Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer())
	if !bld.LoggingEnabled() || bld.CachingEnabled() || bld.Name() != "Counts" || len(bld.LogConfig()) != 0 || bld.LogConfig() == nil {
		t.Fatalf("builder defaults: logging %v caching %v config %v", bld.LoggingEnabled(), bld.CachingEnabled(), bld.LogConfig())
	}
	st, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	kv := st.(KeyValueStore[string, int32])
	ctx := &fakeContext{appID: "app", ts: 42}
	if err := kv.Init(ctx, kv); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ctx.registered, ",") != "Counts" {
		t.Fatalf("registered %v", ctx.registered)
	}
	if err := kv.Put("b", 2); err != nil {
		t.Fatal(err)
	}
	_ = kv.Put("a", 1)
	if v, ok, err := kv.Get("a"); err != nil || !ok || v != 1 {
		t.Fatalf("Get a = %v %v %v", v, ok, err)
	}
	if v, ok, err := kv.Get("zz"); err != nil || ok || v != 0 {
		t.Fatalf("Get zz = %v %v %v", v, ok, err)
	}
	if old, found, _ := kv.PutIfAbsent("a", 9); !found || old != 1 {
		t.Fatalf("PutIfAbsent a = %v %v", old, found)
	}
	ctx.ts = 50
	if old, found, _ := kv.Delete("b"); !found || old != 2 {
		t.Fatalf("Delete b = %v %v", old, found)
	}
	want := "Counts:b=2@42|Counts:a=1@42|Counts:b=<nil>@50"
	if got := strings.Join(ctx.logged, "|"); got != want {
		t.Fatalf("changelog %q, want %q", got, want)
	}
	_ = kv.PutAll([]KeyValue[string, int32]{Pair("c", int32(3)), Pair("d", int32(4))})
	kvs, err := Collect(kv.ReverseRange("a", "c"))
	if err != nil || len(kvs) != 2 || kvs[0] != Pair("c", int32(3)) || kvs[1] != Pair("a", int32(1)) {
		t.Fatalf("ReverseRange = %v %v", kvs, err)
	}
	kvs, _ = Collect(PrefixScan[string, int32](kv, "d", serde.String()))
	if len(kvs) != 1 || kvs[0].Key != "d" {
		t.Fatalf("PrefixScan d = %v", kvs)
	}
	var keys []string
	it := kv.All()
	for k, v := range All(it) {
		keys = append(keys, k+"="+string(rune('0'+v)))
	}
	if it.Err() != nil || strings.Join(keys, ",") != "a=1,c=3,d=4" {
		t.Fatalf("All = %v %v", keys, it.Err())
	}
}

func TestTypedStoreNullValueDeletesAndNullKey(t *testing.T) {
	st, _ := Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("s"), serde.ByteArray(), serde.Nullable(serde.Long())).WithLoggingDisabled().Build()
	kv := st.(KeyValueStore[[]byte, *int64])
	if err := kv.Init(&fakeContext{appID: "app"}, kv); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	_ = kv.Put([]byte("k"), &one)
	if err := kv.Put([]byte("k"), nil); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := kv.Get([]byte("k")); ok || v != nil {
		t.Fatalf("Put(k, nil) did not delete: %v", v)
	}
	if err := kv.Put(nil, &one); !errors.Is(err, ErrNullKey) {
		t.Fatalf("nil key: %v", err)
	}
}

func TestTypedStoreDefaultSerdes(t *testing.T) {
	// nil serdes resolve to the context defaults (String keys, Long values in fakeContext).
	st, _ := Stores.KeyValueStoreBuilder[string, int64](Stores.InMemoryKeyValueStore("d"), nil, nil).Build()
	kv := st.(KeyValueStore[string, int64])
	ctx := &fakeContext{appID: "app"}
	if err := kv.Init(ctx, kv); err != nil {
		t.Fatal(err)
	}
	_ = kv.Put("x", 7)
	if v, ok, err := kv.Get("x"); err != nil || !ok || v != 7 {
		t.Fatalf("Get = %v %v %v", v, ok, err)
	}
	raw := kv.(*meteredKeyValueStore[string, int64]).Inner()
	if v, _, _ := raw.Get([]byte("x")); len(v) != 8 || v[7] != 7 {
		t.Fatalf("stored bytes %v, want Java Long encoding", v)
	}
	// Without context and without serdes, Init fails.
	st2, _ := Stores.KeyValueStoreBuilder[string, int64](Stores.InMemoryKeyValueStore("n"), nil, nil).Build()
	if err := st2.Init(nil, st2); !errors.Is(err, ErrNoSerde) {
		t.Fatalf("Init without serdes: %v", err)
	}
}

// noDefaultsContext is a store context without default serdes.
type noDefaultsContext struct{ fakeContext }

func (noDefaultsContext) KeySerde() serde.Serde[any]   { return nil }
func (noDefaultsContext) ValueSerde() serde.Serde[any] { return nil }

// A store without a serde and no default says which serde, of which type, and how to give it.
func TestMissingStoreSerdeMessage(t *testing.T) {
	st, _ := Stores.KeyValueStoreBuilder[string, int64](Stores.InMemoryKeyValueStore("totals"), serde.String(), nil).Build()
	err := st.Init(&noDefaultsContext{fakeContext{appID: "app"}}, st)
	if !errors.Is(err, ErrNoSerde) {
		t.Fatalf("Init = %v, want ErrNoSerde", err)
	}
	want := `store "totals": init: value serde: store: no serde configured: the store has no value serde of int64 and no ` +
		`default.value.serde is configured; give the store its serdes (kstream.Materialized WithKeySerde/WithValueSerde, ` +
		`or the serdes of its store builder) or set default.value.serde (Config.DefaultValueSerde)`
	if err.Error() != want {
		t.Fatalf("message\n got %s\nwant %s", err, want)
	}
}
