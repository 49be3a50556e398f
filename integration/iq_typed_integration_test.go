package integration_test

import (
	"errors"
	"github.com/kstreams-go/kstreams/processor"
	"strconv"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// wantStoreErr checks that err matches target and has exactly the message msg.
func wantStoreErr(t *testing.T, err, target error, msg string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one matching %v", err, target)
	}
	if err.Error() != msg {
		t.Fatalf("message\n got %s\nwant %s", err, msg)
	}
}

// checkTypedQueries runs a running total per customer (a DSL Aggregate into float64 values)
// and queries its store with the types of its Materialized: the
// plain view KeyValueStore[string, float64] and the timestamped view
// TimestampedKeyValueStore[string, float64] read the totals, while a view of other types is
// refused when it is made (before Start and while running) with processor.ErrWrongStoreType, not
// ErrStoreNotAvailable, and an unknown store name with ErrUnknownStore.
func checkTypedQueries(t *testing.T, b kafkatest.Broker) {
	orders := kafkatest.Name(t, "orders")
	createTopics(t, b, 2, orders)
	sb := kstream.NewStreamsBuilder()
	kstream.Stream(sb, orders, kstream.ConsumedWith(serde.String(), serde.String())).
		MapValues(func(v string) float64 { f, _ := strconv.ParseFloat(v, 64); return f }).
		GroupByKey(kstream.GroupedWith(serde.String(), serde.Double())).
		Aggregate(func() float64 { return 0 }, func(_ string, v, total float64) float64 { return total + v },
			kstream.MaterializedAs[string, float64]("customer-totals-store").WithValueSerde(serde.Double()))
	topo, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: kafkatest.Name(t, "typed-iq"), BootstrapServers: b.Addrs,
		CommitInterval: 20 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	wrong := `state store "customer-totals-store" is a store of string keys and float64 values, ` +
		`not a key-value store of string keys and string values`
	_, err = kstreams.KeyValueStore[string, string](app, "customer-totals-store")
	wantStoreErr(t, err, processor.ErrWrongStoreType, wrong)
	if errors.Is(err, kstreams.ErrStoreNotAvailable) {
		t.Fatalf("a wrong-typed view is %v, the retry-later error", err)
	}
	_, err = kstreams.KeyValueStore[string, float64](app, "customer-total-store")
	wantStoreErr(t, err, processor.ErrUnknownStore, `kstreams: unknown state store: "customer-total-store"`)
	_, err = kstreams.KeyValueStore[string, float64](app, "customer-totals-store")
	if !errors.Is(err, kstreams.ErrStoreNotAvailable) {
		t.Fatalf("right types before Start: %v, want ErrStoreNotAvailable", err)
	}

	startApp(t, app)
	for _, o := range []struct {
		customer, amount string
		ts               int64
	}{{"alice", "2.5", 1000}, {"bob", "10", 2000}, {"alice", "4", 3000}} {
		produceAt(t, b, orders, o.customer, o.amount, o.ts)
	}
	var totals store.ReadOnlyKeyValueStore[string, float64]
	deadline := time.Now().Add(time.Minute)
	for {
		totals, err = kstreams.KeyValueStore[string, float64](app, "customer-totals-store")
		if err == nil {
			if v, ok, gerr := totals.Get("alice"); gerr == nil && ok && v == 6.5 {
				if v, ok, _ := totals.Get("bob"); ok && v == 10 {
					break
				}
			}
		} else if !errors.Is(err, kstreams.ErrStoreNotAvailable) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("totals not 6.5 and 10 within a minute (last error %v)", err)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	all, err := store.Collect(totals.All())
	if err != nil || len(all) != 2 {
		t.Fatalf("All = %v %v", all, err)
	}
	got := map[string]float64{}
	for _, kv := range all {
		got[kv.Key] = kv.Value
	}
	if got["alice"] != 6.5 || got["bob"] != 10 {
		t.Fatalf("All = %v", got)
	}
	ts, err := kstreams.TimestampedKeyValueStore[string, float64](app, "customer-totals-store")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := ts.Get("alice"); err != nil || !ok || v.Value != 6.5 || v.Timestamp != 3000 {
		t.Fatalf("timestamped alice = %+v %v %v, want 6.5@3000", v, ok, err)
	}
	untyped, err := kstreams.KeyValueStore[any, any](app, "customer-totals-store")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := untyped.Get("bob"); err != nil || !ok || v != 10.0 {
		t.Fatalf("untyped bob = %v %v %v", v, ok, err)
	}
	_, err = kstreams.KeyValueStore[string, string](app, "customer-totals-store")
	wantStoreErr(t, err, processor.ErrWrongStoreType, `state store "customer-totals-store" is a timestamped key-value store of `+
		`string keys and float64 values, not a key-value store of string keys and string values; `+
		`ask for KeyValueStore[string, float64] or TimestampedKeyValueStore[string, float64]`)
	_, err = kstreams.TimestampedKeyValueStore[string, int64](app, "customer-totals-store")
	wantStoreErr(t, err, processor.ErrWrongStoreType, `state store "customer-totals-store" is a timestamped key-value store of `+
		`string keys and float64 values, not a timestamped key-value store of string keys and int64 values; `+
		`ask for KeyValueStore[string, float64] or TimestampedKeyValueStore[string, float64]`)
	closeApp(t, app)
}

func TestEmbeddedTypedQueries(t *testing.T) {
	t.Parallel()
	checkTypedQueries(t, kafkatest.Embedded(t))
}

func TestIntegrationTypedQueries(t *testing.T) { checkTypedQueries(t, kafkatest.Real(t)) }
