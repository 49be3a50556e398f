package kstreams

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/storeview"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Which stores answer which queries, and how the others refuse, as Java 4.0's store layers
// decide (StoreQueryUtils.handleBasicQueries and the Metered*Store query handlers):
//   - KeyQuery, RangeQuery: key-value stores (timestamped ones give plain values); the basic
//     handlers refuse window and session stores with UNKNOWN_QUERY_TYPE after the bound check;
//     MeteredVersionedKeyValueStore throws UnsupportedOperationException.
//   - TimestampedKeyQuery, TimestampedRangeQuery: only MeteredTimestampedKeyValueStore has
//     handlers; every other store has none, so UNKNOWN_QUERY_TYPE before the bound check.
//   - WindowKeyQuery: window stores; others UNKNOWN_QUERY_TYPE after the bound check.
//   - WindowRangeQuery: window stores by time, session stores by key; the metered layers refuse
//     the other shape before the bound check; other stores after it.
//   - VersionedKeyQuery, MultiVersionedKeyQuery: versioned stores; others after the bound
//     check; a MultiVersionedKeyQuery with fromTime > toTime throws IllegalArgumentException
//     in MeteredVersionedKeyValueStore.
func TestQueryAccepts(t *testing.T) {
	const (
		kv  = storeview.KeyValue
		tkv = storeview.TimestampedKeyValue
		win = storeview.Window
		tw  = storeview.TimestampedWindow
		ses = storeview.Session
		ver = storeview.Versioned
	)
	type want struct {
		acc acceptance
		err error
	}
	run, unk, unkAny := want{acc: queryRuns}, want{acc: queryUnknown}, want{acc: queryUnknownAnyBound}
	unsupported, invalid := want{err: errors.ErrUnsupported}, want{err: ErrInvalidQuery}
	type accepter interface {
		accepts(storeview.Kind) (acceptance, error)
	}
	kinds := []storeview.Kind{kv, tkv, win, tw, ses, ver, ""}
	for _, c := range []struct {
		q    accepter
		want []want // by kinds
	}{
		{KeyQuery[string, int64]{}, []want{run, run, unk, unk, unk, unsupported, run}},
		{RangeQueryWithLowerBound[string, int64]("a"), []want{run, run, unk, unk, unk, unsupported, run}},
		{TimestampedKeyQuery[string, int64]{}, []want{unkAny, run, unkAny, unkAny, unkAny, unkAny, run}},
		{TimestampedRangeQueryWithNoBounds[string, int64](), []want{unkAny, run, unkAny, unkAny, unkAny, unkAny, run}},
		{WindowKeyQuery[string, int64]{}, []want{unk, unk, run, run, unk, unk, run}},
		{WindowRangeQuery[string, int64]{}, []want{unk, unk, run, run, unkAny, unk, run}},
		{WindowRangeQuery[string, int64]{HasKey: true}, []want{unk, unk, unkAny, unkAny, run, unk, run}},
		{VersionedKeyQueryWithKey[string, int64]("k").AsOf(5), []want{unk, unk, unk, unk, unk, run, run}},
		{MultiVersionedKeyQueryWithKey[string, int64]("k").FromTime(1).ToTime(1), []want{unk, unk, unk, unk, unk, run, run}},
		{MultiVersionedKeyQueryWithKey[string, int64]("k").FromTime(2).ToTime(1), []want{unk, unk, unk, unk, unk, invalid, invalid}},
	} {
		for i, k := range kinds {
			acc, err := c.q.accepts(k)
			w := c.want[i]
			if w.err != nil {
				if !errors.Is(err, w.err) {
					t.Errorf("%s of a %q store: %v, want %v", queryName(c.q), k, err, w.err)
				}
				continue
			}
			if err != nil || acc != w.acc {
				t.Errorf("%s of a %q store: %d %v, want %d", queryName(c.q), k, acc, err, w.acc)
			}
		}
	}
}

// The constructors and With methods build the bounds and orders of Java's factory methods.
func TestQueryBuilders(t *testing.T) {
	r := RangeQueryWithRange[int64, string](3, 9).WithDescendingKeys()
	if r.Lower == nil || *r.Lower != 3 || r.Upper == nil || *r.Upper != 9 || r.Order != ResultOrderDescending {
		t.Errorf("withRange: %+v", r)
	}
	// One-sided bounds for a key type with no nil: the zero key is a real bound.
	if l := RangeQueryWithLowerBound[int64, string](0); l.Lower == nil || *l.Lower != 0 || l.Upper != nil || l.Order != ResultOrderAny {
		t.Errorf("withLowerBound: %+v", l)
	}
	if u := RangeQueryWithUpperBound[int64, string](0).WithAscendingKeys(); u.Lower != nil || u.Upper == nil || u.Order != ResultOrderAscending {
		t.Errorf("withUpperBound: %+v", u)
	}
	if n := RangeQueryWithNoBounds[int64, string](); n != (RangeQuery[int64, string]{}) {
		t.Errorf("withNoBounds: %+v", n)
	}
	tr := TimestampedRangeQueryWithUpperBound[string, int64]("m").WithDescendingKeys()
	if tr.Lower != nil || *tr.Upper != "m" || tr.Order != ResultOrderDescending {
		t.Errorf("timestamped withUpperBound: %+v", tr)
	}
	v := VersionedKeyQueryWithKey[string, int64]("k")
	if v.AsOfTimestamp != nil || *v.AsOf(7).AsOfTimestamp != 7 || v.AsOfTimestamp != nil {
		t.Errorf("versioned: %+v", v)
	}
	m := MultiVersionedKeyQueryWithKey[string, int64]("k")
	if from, to := m.span(); from != -1<<63 || to != 1<<63-1 || m.Order != ResultOrderAny {
		t.Errorf("multi-versioned default span %d, %d", from, to)
	}
	m = m.FromTime(5).ToTime(8).WithAscendingTimestamps()
	if from, to := m.span(); from != 5 || to != 8 || m.Order != ResultOrderAscending || m.WithDescendingTimestamps().Order != ResultOrderDescending {
		t.Errorf("multi-versioned: %+v", m)
	}
	if ResultOrderAny.String() != "ANY" || ResultOrderAscending.String() != "ASCENDING" || ResultOrderDescending.String() != "DESCENDING" {
		t.Error("ResultOrder names")
	}
	if got := queryName(TimestampedKeyQuery[string, int64]{}); got != "TimestampedKeyQuery[string,int64]" {
		t.Errorf("queryName %q", got)
	}
}

// rangeIter over a view that is no composite of tasks (a custom store): two bounds and no
// bounds run through Range and All in the order asked; a one-sided range of a key type with
// no nil cannot be expressed through Range and fails with errors.ErrUnsupported instead of
// scanning from the zero key.
func TestRangeIterPlainStore(t *testing.T) {
	st := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("plain"), serde.Long(), serde.String()).
		WithLoggingDisabled().BuildStore()
	if err := st.Init(nil, st); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{1, 2, 3, 4} {
		if err := st.Put(k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(it store.KeyValueIterator[int64, string]) ([]int64, error) {
		kvs, err := store.Collect(it)
		var out []int64
		for _, kv := range kvs {
			out = append(out, kv.Key)
		}
		return out, err
	}
	two, three := int64(2), int64(3)
	if got, err := keys(rangeIter[int64, string](st, &two, &three, ResultOrderDescending)); err != nil || !slices.Equal(got, []int64{3, 2}) {
		t.Errorf("[2, 3] descending: %v %v", got, err)
	}
	if got, err := keys(rangeIter[int64, string](st, nil, nil, ResultOrderDescending)); err != nil || !slices.Equal(got, []int64{4, 3, 2, 1}) {
		t.Errorf("all descending: %v %v", got, err)
	}
	if _, err := keys(rangeIter[int64, string](st, &two, nil, ResultOrderAny)); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("one-sided over a plain store: %v, want errors.ErrUnsupported", err)
	}
}

// The kind that decides which queries a store answers is found for Processor API stores too
// (typed, by their methods) and for the DSL's untyped stores.
func TestQueryStoreKind(t *testing.T) {
	verSup, err := store.Stores.InMemoryVersionedKeyValueStore("v", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    processor.StateStore
		want storeview.Kind
	}{
		{store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.Long()).BuildStore(), storeview.KeyValue},
		{store.Stores.TimestampedKeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("ts"), serde.String(), serde.Long()).BuildStore(), storeview.TimestampedKeyValue},
		{store.Stores.VersionedKeyValueStoreBuilder(verSup, serde.String(), serde.Long()).BuildStore(), storeview.Versioned},
		{store.Stores.VersionedKeyValueStoreBuilder[any, any](verSup, nil, nil).BuildStore(), storeview.Versioned},
	} {
		if got := queryStoreKind(c.s); got != c.want {
			t.Errorf("%T: kind %q, want %q", c.s, got, c.want)
		}
	}
	typed := store.Stores.VersionedKeyValueStoreBuilder(verSup, serde.String(), serde.Long()).BuildStore()
	if _, ok := storeview.ReadOnlyVersioned[string, int64](typed); !ok {
		t.Error("no versioned view of a typed versioned store")
	}
	if _, ok := storeview.ReadOnlyVersioned[string, string](typed); ok {
		t.Error("a versioned view of the wrong value type")
	}
}
