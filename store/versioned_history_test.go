package store

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/serde"
)

func formatVersions(t *testing.T, it VersionedRecordIterator[[]byte], err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	recs, err := CollectVersions(it)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range recs {
		out = append(out, formatVersioned(&recs[i]))
	}
	return strings.Join(out, " ")
}

// GetVersions returns what Java's MultiVersionedKeyQuery (KIP-968) defines: the non-tombstone
// versions with timestamp <= toTime and validTo > fromTime, newest first unless ascending; and
// when toTime is older than the history retention bound only the latest version, if its
// timestamp is <= toTime (RocksDBVersionedStore.get(key, from, to, order)).
func TestVersionedStoreGetVersions(t *testing.T) {
	for _, eng := range versionedEngines() {
		t.Run(eng.name, func(t *testing.T) {
			s := eng.new(t, 100)
			r := s.(VersionHistoryReader[[]byte, []byte])
			k := []byte("k")
			// Out of order: a@10, c@30, b@20, a tombstone at 40, d@50. The versions: a [10,20),
			// b [20,30), c [30,40), (tombstone [40,50)), d [50, end).
			for _, p := range []struct {
				v  string
				ts int64
			}{{"a", 10}, {"c", 30}, {"b", 20}, {"", 40}, {"d", 50}} {
				var v []byte
				if p.v != "" {
					v = []byte(p.v)
				}
				if _, err := s.Put(k, v, p.ts); err != nil {
					t.Fatal(err)
				}
			}
			const minT, maxT = math.MinInt64, math.MaxInt64
			for _, c := range []struct {
				from, to int64
				asc      bool
				want     string
			}{
				{minT, maxT, false, "d@50 c@30-40 b@20-30 a@10-20"},
				{minT, maxT, true, "a@10-20 b@20-30 c@30-40 d@50"},
				{25, 45, true, "b@20-30 c@30-40"}, // a ends at 20 <= 25; d starts at 50 > 45
				{40, 40, false, ""},               // c ends at 40; the tombstone is no version
				{0, 9, false, ""},
				{55, 60, false, "d@50"},
				{20, 20, false, "b@20-30"}, // a is valid to 20, exclusive
				{minT, 10, false, "a@10-20"},
			} {
				it, err := r.GetVersions(k, c.from, c.to, c.asc)
				if got := formatVersions(t, it, err); got != c.want {
					t.Errorf("versions [%d, %d] ascending %v: %q, want %q", c.from, c.to, c.asc, got, c.want)
				}
			}
			it, err := r.GetVersions([]byte("other"), minT, maxT, false)
			if got := formatVersions(t, it, err); got != "" {
				t.Errorf("unknown key: %q", got)
			}
			// Stream time 300, retention 100: the bound is 200. a, b and c ended before it (gone);
			// d is valid to 300 > 200, still held. A range ending before 200 sees only the latest
			// version e@300, which starts after it: nothing, although d was valid then (Java's
			// "history retention exceeded" rule, as GetAsOf(150) is nil).
			if _, err := s.Put(k, []byte("e"), 300); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				from, to int64
				want     string
			}{
				{minT, 150, ""},
				{minT, 250, "d@50-300"},
				{minT, maxT, "e@300 d@50-300"},
				{350, maxT, "e@300"},
			} {
				it, err := r.GetVersions(k, c.from, c.to, false)
				if got := formatVersions(t, it, err); got != c.want {
					t.Errorf("after e@300, versions [%d, %d]: %q, want %q", c.from, c.to, got, c.want)
				}
			}
			if g, err := s.GetAsOf(k, 150); err != nil || g != nil {
				t.Errorf("GetAsOf(150) = %v, %v, want nil", formatVersioned(g), err)
			}
			if _, err := r.GetVersions(nil, 0, 1, false); err == nil {
				t.Error("nil key: no error")
			}
		})
	}
}

// The typed layer over change logging lists the versions deserialized.
func TestVersionedTypedGetVersions(t *testing.T) {
	sup, err := Stores.InMemoryVersionedKeyValueStore("prices", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	vs := Stores.VersionedKeyValueStoreBuilder(sup, serde.String(), serde.Long()).BuildStore()
	if err := vs.Init(&fakeContext{appID: "app"}, vs); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]int64{{7, 100}, {5, 90}} {
		if _, err := vs.Put("k", p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	it, err := vs.(VersionHistoryReader[string, int64]).GetVersions("k", 95, 200, true)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := CollectVersions(it)
	if err != nil || len(recs) != 2 || recs[0] != (VersionedRecord[int64]{Value: 5, Timestamp: 90, ValidTo: 100, HasValidTo: true}) ||
		recs[1] != (VersionedRecord[int64]{Value: 7, Timestamp: 100}) {
		t.Fatalf("versions %+v, %v", recs, err)
	}
	if it.Next() || it.Err() != ErrIteratorClosed {
		t.Fatalf("closed iterator: Err %v", it.Err())
	}
}
