package testdriver

import (
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

type windowWriter struct {
	ws store.WindowStore[string, string]
}

func (p *windowWriter) Init(ctx processor.ProcessorContext[string, string]) error {
	var err error
	p.ws, err = processor.GetStateStore[store.WindowStore[string, string]](ctx, "win")
	return err
}
func (p *windowWriter) Process(r processor.Record[string, string]) error {
	return p.ws.Put(r.Key, r.Value, r.Timestamp/1000*1000)
}
func (p *windowWriter) Close() error { return nil }

func TestWindowAndSessionStoreAccess(t *testing.T) {
	sup, err := store.Stores.InMemoryWindowStore("win", time.Hour, time.Second, false)
	must(t, err)
	topo := processor.NewTopology()
	must(t, topo.AddSource("src", []string{"in"}))
	must(t, topo.AddProcessor("w", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &windowWriter{} }), "src"))
	must(t, topo.AddStateStore(store.Stores.WindowStoreBuilder(sup, serde.String(), serde.String()), "w"))
	d, err := New(topo, stringProps, 0)
	must(t, err)
	defer d.Close()
	must(t, CreateInputTopic(d, "in", serde.String(), serde.String()).PipeKeyValueAt("k", "v", 2500))
	ws, err := WindowStore[string, string](d, "win")
	must(t, err)
	if v, ok, err := ws.Fetch("k", 2000); err != nil || !ok || v != "v" {
		t.Fatalf("fetch = %q %v %v", v, ok, err)
	}
	_, err = SessionStore[string, string](d, "win")
	wantErr(t, err, processor.ErrWrongStoreType, `state store "win" is a window store of string keys and string values, `+
		`not a session store of string keys and string values; ask for WindowStore[string, string]`)
	_, err = WindowStore[string, int64](d, "win")
	wantErr(t, err, processor.ErrWrongStoreType, `state store "win" is a window store of string keys and string values, `+
		`not a window store of string keys and int64 values; ask for WindowStore[string, string]`)
}

type tsWindowWriter struct {
	ws store.TimestampedWindowStore[string, string]
}

func (p *tsWindowWriter) Init(ctx processor.ProcessorContext[string, string]) error {
	var err error
	p.ws, err = processor.GetStateStore[store.TimestampedWindowStore[string, string]](ctx, "tswin")
	return err
}
func (p *tsWindowWriter) Process(r processor.Record[string, string]) error {
	return p.ws.Put(r.Key, store.MakeValueAndTimestamp(r.Value, r.Timestamp), r.Timestamp/1000*1000)
}
func (p *tsWindowWriter) Close() error { return nil }

func TestTimestampedWindowStoreAndFacade(t *testing.T) {
	sup, err := store.Stores.InMemoryWindowStore("tswin", time.Hour, time.Second, false)
	must(t, err)
	topo := processor.NewTopology()
	must(t, topo.AddSource("src", []string{"in"}))
	must(t, topo.AddProcessor("w", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &tsWindowWriter{} }), "src"))
	must(t, topo.AddStateStore(store.Stores.TimestampedWindowStoreBuilder(sup, serde.String(), serde.String()), "w"))
	d, err := New(topo, stringProps, 0)
	must(t, err)
	defer d.Close()
	must(t, CreateInputTopic(d, "in", serde.String(), serde.String()).PipeKeyValueAt("k", "v", 2500))
	ts, err := TimestampedWindowStore[string, string](d, "tswin")
	must(t, err)
	if vt, ok, _ := ts.Fetch("k", 2000); !ok || vt.Value != "v" || vt.Timestamp != 2500 {
		t.Fatalf("timestamped fetch = %+v %v", vt, ok)
	}
	ws, err := WindowStore[string, string](d, "tswin")
	must(t, err)
	if v, ok, _ := ws.Fetch("k", 2000); !ok || v != "v" {
		t.Fatalf("facade fetch = %q %v", v, ok)
	}
	must(t, ws.Put("k", "w", 3000))
	if vt, _, _ := ts.Fetch("k", 3000); vt == nil || vt.Value != "w" || vt.Timestamp != -1 {
		t.Fatalf("facade put = %+v", vt)
	}
	kvs, err := store.Collect(ws.FetchTimeRange("k", 0, 5000))
	must(t, err)
	if len(kvs) != 2 || kvs[0] != store.Pair(int64(2000), "v") || kvs[1] != store.Pair(int64(3000), "w") {
		t.Fatalf("facade range = %v", kvs)
	}
	all, err := store.Collect(ws.All())
	must(t, err)
	if len(all) != 2 || all[1].Value != "w" {
		t.Fatalf("facade all = %v", all)
	}
}
