package testdriver_test

import (
	"github.com/kstreams-go/kstreams/processor"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
	"github.com/kstreams-go/kstreams/testdriver"
)

// A versioned table's store is viewed with the types of its Materialized, as Java's
// getVersionedKeyValueStore: the latest version and the one as of a timestamp, with their
// validity; an out-of-order update lands in the history without replacing the latest version.
// Other types, and a key-value view of it, are refused with a message naming the fitting view.
func TestVersionedKeyValueStoreView(t *testing.T) {
	sup, err := store.Stores.PersistentVersionedKeyValueStore("prices", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b := kstream.NewStreamsBuilder()
	kstream.Table(b, "price-updates", kstream.ConsumedWith(serde.String(), serde.Long()),
		kstream.MaterializedAsVersioned[string, int64](sup))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "versioned-view"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "price-updates", serde.String(), serde.Long())
	for _, r := range []testdriver.TestRecord[string, int64]{
		testdriver.NewTestRecordAt("apple", int64(10), 1000),
		testdriver.NewTestRecordAt("apple", int64(12), 3000),
		testdriver.NewTestRecordAt("apple", int64(11), 2000), // out of order: history only
	} {
		if err := in.PipeRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := testdriver.VersionedKeyValueStore[string, int64](d, "prices")
	if err != nil {
		t.Fatal(err)
	}
	latest, err := vs.Get("apple")
	if err != nil {
		t.Fatal(err)
	}
	if latest == nil || *latest != (store.VersionedRecord[int64]{Value: 12, Timestamp: 3000}) {
		t.Fatalf("latest version %+v, want 12 from 3000", latest)
	}
	for _, c := range []struct {
		asOf int64
		want *store.VersionedRecord[int64]
	}{
		{500, nil},
		{1500, &store.VersionedRecord[int64]{Value: 10, Timestamp: 1000, ValidTo: 2000, HasValidTo: true}},
		{2000, &store.VersionedRecord[int64]{Value: 11, Timestamp: 2000, ValidTo: 3000, HasValidTo: true}},
		{9999, &store.VersionedRecord[int64]{Value: 12, Timestamp: 3000}},
	} {
		got, err := vs.GetAsOf("apple", c.asOf)
		if err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("GetAsOf(apple, %d) = %+v, want %+v", c.asOf, got, c.want)
		}
	}
	// Writes go through the view (and the store's change logging).
	if _, err := vs.Put("pear", 3, 4000); err != nil {
		t.Fatal(err)
	}
	if got, err := vs.Get("pear"); err != nil || got == nil || got.Value != 3 {
		t.Fatalf("pear after Put: %+v, %v", got, err)
	}

	_, err = testdriver.VersionedKeyValueStore[string, string](d, "prices")
	wantErrMsg(t, err, processor.ErrWrongStoreType, `state store "prices" is a versioned key-value store of string keys and int64 values, `+
		`not a versioned key-value store of string keys and string values; ask for VersionedKeyValueStore[string, int64]`)
	_, err = testdriver.KeyValueStore[string, int64](d, "prices")
	wantErrMsg(t, err, processor.ErrWrongStoreType, `state store "prices" is a versioned key-value store of string keys and int64 values, `+
		`not a key-value store of string keys and int64 values; ask for VersionedKeyValueStore[string, int64]`)
}
