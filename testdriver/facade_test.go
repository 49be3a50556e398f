package testdriver

import (
	"testing"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// lastValue keeps the last value per key with the record timestamp in a timestamped store.
type lastValue struct {
	ts store.TimestampedKeyValueStore[string, string]
}

func (p *lastValue) Init(ctx processor.ProcessorContext[string, string]) error {
	var err error
	p.ts, err = processor.GetStateStore[store.TimestampedKeyValueStore[string, string]](ctx, "last")
	return err
}
func (p *lastValue) Process(r processor.Record[string, string]) error {
	return p.ts.Put(r.Key, store.MakeValueAndTimestamp(r.Value, r.Timestamp))
}
func (p *lastValue) Close() error { return nil }

func TestTimestampedStoreAccessAndFacade(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("src", []string{"in"}))
	must(t, topo.AddProcessor("last", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &lastValue{} }), "src"))
	must(t, topo.AddStateStore(store.Stores.TimestampedKeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("last"), serde.String(), serde.String()), "last"))
	d, err := New(topo, stringProps, 0)
	must(t, err)
	defer d.Close()
	in := CreateInputTopic(d, "in", serde.String(), serde.String(), WithStartTimestamp(100))
	must(t, in.PipeKeyValue("a", "x"))
	must(t, in.PipeKeyValueAt("b", "y", 7))

	ts, err := TimestampedKeyValueStore[string, string](d, "last")
	must(t, err)
	if vt, _, _ := ts.Get("a"); vt == nil || vt.Value != "x" || vt.Timestamp != 100 {
		t.Fatalf("timestamped a = %+v", vt)
	}
	// The plain view drops timestamps and writes with timestamp -1 (Java's KeyValueStoreFacade).
	kv, err := KeyValueStore[string, string](d, "last")
	must(t, err)
	if v, ok, _ := kv.Get("b"); !ok || v != "y" {
		t.Fatalf("facade b = %q %v", v, ok)
	}
	must(t, kv.Put("c", "z"))
	if vt, _, _ := ts.Get("c"); vt == nil || vt.Value != "z" || vt.Timestamp != -1 {
		t.Fatalf("facade put = %+v", vt)
	}
	kvs, err := store.Collect(kv.All())
	must(t, err)
	if len(kvs) != 3 || kvs[0] != store.Pair("a", "x") || kvs[2] != store.Pair("c", "z") {
		t.Fatalf("facade all = %v", kvs)
	}
	if old, ok, _ := kv.Delete("a"); !ok || old != "x" {
		t.Fatalf("facade delete = %q %v", old, ok)
	}
	_, err = TimestampedKeyValueStore[string, int64](d, "last")
	wantErr(t, err, processor.ErrWrongStoreType, `state store "last" is a timestamped key-value store of string keys and string values, `+
		`not a timestamped key-value store of string keys and int64 values; ask for KeyValueStore[string, string] or TimestampedKeyValueStore[string, string]`)
}
