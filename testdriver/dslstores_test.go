package testdriver_test

import (
	"errors"
	"github.com/kstreams-go/kstreams/processor"
	"strconv"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

func wantErrMsg(t *testing.T, err, target error, msg string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one matching %v", err, target)
	}
	if err.Error() != msg {
		t.Fatalf("message\n got %s\nwant %s", err, msg)
	}
}

// The DSL's stores are viewed with the types of their Materialized: an order total
// per customer is a KeyValueStore[string, float64] (plain values) and a
// TimestampedKeyValueStore[string, float64]; other types are refused with a message that says
// which views fit. Windowed and session counts likewise.
func TestDSLStoresTypedViews(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	orders := kstream.Stream(b, "orders", kstream.ConsumedWith(serde.String(), serde.String()))
	orders.MapValues(func(v string) float64 { f, _ := strconv.ParseFloat(v, 64); return f }).
		GroupByKey(kstream.GroupedWith(serde.String(), serde.Double())).
		Aggregate(func() float64 { return 0 }, func(_ string, v, total float64) float64 { return total + v },
			kstream.MaterializedAs[string, float64]("customer-totals-store").WithValueSerde(serde.Double()))
	g := orders.GroupByKey(kstream.GroupedWith(serde.String(), serde.String()))
	kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).
		Count(kstream.MaterializedAs[string, int64]("per-minute"))
	kstream.WindowedBySession(g, kstream.SessionWindowsOfInactivityGapWithNoGrace(time.Minute)).
		Count(kstream.MaterializedAs[string, int64]("sessions"))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "typed-views", "statestore.cache.max.bytes": "0"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "orders", serde.String(), serde.String())
	for _, r := range []testdriver.TestRecord[string, string]{
		testdriver.NewTestRecordAt("alice", "2.5", 1000),
		testdriver.NewTestRecordAt("bob", "10", 2000),
		testdriver.NewTestRecordAt("alice", "4", 3000),
	} {
		if err := in.PipeRecord(r); err != nil {
			t.Fatal(err)
		}
	}

	totals, err := testdriver.KeyValueStore[string, float64](d, "customer-totals-store")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := totals.Get("alice"); err != nil || !ok || v != 6.5 {
		t.Fatalf("alice = %v %v %v, want 6.5", v, ok, err)
	}
	all, err := store.Collect(totals.All())
	if err != nil || len(all) != 2 || all[0] != store.Pair("alice", 6.5) || all[1] != store.Pair("bob", 10.0) {
		t.Fatalf("All = %v %v", all, err)
	}
	if err := totals.Put("carol", 1.25); err != nil {
		t.Fatal(err)
	}
	ts, err := testdriver.TimestampedKeyValueStore[string, float64](d, "customer-totals-store")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := ts.Get("alice"); err != nil || !ok || v.Value != 6.5 || v.Timestamp != 3000 {
		t.Fatalf("timestamped alice = %+v %v %v, want 6.5@3000", v, ok, err)
	}
	if v, ok, err := ts.Get("carol"); err != nil || !ok || v.Value != 1.25 || v.Timestamp != -1 {
		t.Fatalf("carol written through the plain view = %+v %v %v, want 1.25@-1", v, ok, err)
	}
	untyped, err := testdriver.KeyValueStore[any, any](d, "customer-totals-store")
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := untyped.Get("bob"); v != 10.0 {
		t.Fatalf("untyped view bob = %v", v)
	}
	_, err = testdriver.KeyValueStore[string, string](d, "customer-totals-store")
	wantErrMsg(t, err, processor.ErrWrongStoreType, `state store "customer-totals-store" is a timestamped key-value store of `+
		`string keys and float64 values, not a key-value store of string keys and string values; `+
		`ask for KeyValueStore[string, float64] or TimestampedKeyValueStore[string, float64]`)
	_, err = testdriver.KeyValueStore[int64, float64](d, "customer-totals-store")
	wantErrMsg(t, err, processor.ErrWrongStoreType, `state store "customer-totals-store" is a timestamped key-value store of `+
		`string keys and float64 values, not a key-value store of int64 keys and float64 values; `+
		`ask for KeyValueStore[string, float64] or TimestampedKeyValueStore[string, float64]`)
	_, err = testdriver.WindowStore[string, float64](d, "customer-totals-store")
	wantErrMsg(t, err, processor.ErrWrongStoreType, `state store "customer-totals-store" is a timestamped key-value store of `+
		`string keys and float64 values, not a window store of string keys and float64 values; `+
		`ask for KeyValueStore[string, float64] or TimestampedKeyValueStore[string, float64]`)

	win, err := testdriver.WindowStore[string, int64](d, "per-minute")
	if err != nil {
		t.Fatal(err)
	}
	if n, ok, err := win.Fetch("alice", 0); err != nil || !ok || n != 2 {
		t.Fatalf("alice's minute 0 = %v %v %v, want 2", n, ok, err)
	}
	tw, err := testdriver.TimestampedWindowStore[string, int64](d, "per-minute")
	if err != nil {
		t.Fatal(err)
	}
	windows, err := store.Collect(tw.FetchAll(0, 60000))
	if err != nil || len(windows) != 2 || windows[0].Key.Key != "alice" || windows[0].Value.Value != 2 || windows[0].Value.Timestamp != 3000 ||
		windows[1].Key.Key != "bob" || windows[1].Value.Value != 1 {
		t.Fatalf("windows = %+v %v", windows, err)
	}
	_, err = testdriver.WindowStore[string, string](d, "per-minute")
	wantErrMsg(t, err, processor.ErrWrongStoreType, `state store "per-minute" is a timestamped window store of string keys and int64 values, `+
		`not a window store of string keys and string values; ask for WindowStore[string, int64] or TimestampedWindowStore[string, int64]`)

	sessions, err := testdriver.SessionStore[string, int64](d, "sessions")
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Collect(sessions.Fetch("alice"))
	if err != nil || len(got) != 1 || got[0].Value != 2 || got[0].Key.Window.Start != 1000 || got[0].Key.Window.End != 3000 {
		t.Fatalf("alice's sessions = %+v %v", got, err)
	}
	_, err = testdriver.SessionStore[string, float64](d, "sessions")
	wantErrMsg(t, err, processor.ErrWrongStoreType, `state store "sessions" is a session store of string keys and int64 values, `+
		`not a session store of string keys and float64 values; ask for SessionStore[string, int64]`)
}
