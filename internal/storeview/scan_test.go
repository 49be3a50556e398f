package storeview

import (
	"bytes"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// resumed reads a scan in chunks of n entries, each a fresh scan resumed after the raw key of
// the chunk's last entry.
func resumed[V any](t *testing.T, n int, open func(after []byte) (storeapi.RawKeyIterator[serde.Windowed[string], V], bool)) []string {
	t.Helper()
	var out []string
	var after []byte
	for {
		it, ok := open(after)
		if !ok {
			t.Fatal("the view cannot scan")
		}
		got := 0
		for got < n && it.Next() {
			out = append(out, fmt.Sprintf("%s@%d-%d=%v", it.Key().Key, it.Key().Window.Start, it.Key().Window.End, it.Value()))
			got++
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		after = bytes.Clone(it.RawKey())
		_ = it.Close()
		if got < n {
			return out
		}
	}
}

func plainList[V any](t *testing.T, it store.KeyValueIterator[serde.Windowed[string], V]) []string {
	t.Helper()
	defer it.Close()
	var out []string
	for it.Next() {
		out = append(out, fmt.Sprintf("%s@%d-%d=%v", it.Key().Key, it.Key().Window.Start, it.Key().Window.End, it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The typed views of the DSL's untyped window and session stores pass resumable scans
// through: a scan read in chunks through a view gives the view's plain iteration.
func TestViewsScan(t *testing.T) {
	wsup, err := store.Stores.PersistentWindowStore("w", time.Hour, time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	tw := store.Stores.TimestampedWindowStoreBuilder(wsup, serde.Untyped(serde.String()), serde.Untyped(serde.Long())).
		WithLoggingDisabled().BuildStore()
	if err := tw.Init(nil, tw); err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	ssup, err := store.Stores.PersistentSessionStore("s", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ss := store.Stores.SessionStoreBuilder(ssup, serde.Untyped(serde.String()), serde.Untyped(serde.Long())).
		WithLoggingDisabled().BuildStore()
	if err := ss.Init(nil, ss); err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	for k := range 7 {
		for j := range 5 {
			start := int64(j) * 60_000
			if err := tw.Put(fmt.Sprintf("k%d", k), &store.ValueAndTimestamp[any]{Value: int64(k*10 + j), Timestamp: start}, start); err != nil {
				t.Fatal(err)
			}
			if err := ss.Put(serde.Windowed[any]{Key: fmt.Sprintf("k%d", k), Window: serde.Window{Start: start, End: start + 100}}, int64(k*10+j)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, rev := range []bool{false, true} {
		plain, _ := ReadOnlyWindow[string, int64](tw)
		stamped, _ := ReadOnlyTimestampedWindow[string, int64](tw)
		sess, _ := ReadOnlySession[string, int64](ss)
		all := storeapi.WindowScan[string]{Kind: storeapi.WindowScanAll, TimeFrom: math.MinInt64, TimeTo: math.MaxInt64, Reverse: rev}
		rng := storeapi.WindowScan[string]{Kind: storeapi.WindowScanRange, From: "k1", To: "k5", TimeFrom: 0, TimeTo: math.MaxInt64, Reverse: rev}
		wantAll, wantStamped, wantSess := plainList(t, plain.All()), plainList(t, stamped.All()), plainList(t, sess.FetchRange("k1", "k5"))
		if rev {
			wantAll, wantStamped, wantSess = plainList(t, plain.BackwardAll()), plainList(t, stamped.BackwardAll()), plainList(t, sess.BackwardFetchRange("k1", "k5"))
		}
		if len(wantAll) != 35 || len(wantSess) != 25 {
			t.Fatalf("plain iterations: %d windows, %d sessions", len(wantAll), len(wantSess))
		}
		for _, n := range []int{1, 3, 100} {
			got := resumed(t, n, func(after []byte) (storeapi.RawKeyIterator[serde.Windowed[string], int64], bool) {
				s := all
				s.After = after
				return plain.(storeapi.WindowScanner[string, int64]).ScanWindows(s)
			})
			if !slices.Equal(got, wantAll) {
				t.Fatalf("window view, chunks of %d, reverse %v:\n got %v\nwant %v", n, rev, got, wantAll)
			}
			gotStamped := resumed(t, n, func(after []byte) (storeapi.RawKeyIterator[serde.Windowed[string], *store.ValueAndTimestamp[int64]], bool) {
				s := all
				s.After = after
				return stamped.(storeapi.WindowScanner[string, *store.ValueAndTimestamp[int64]]).ScanWindows(s)
			})
			if !slices.Equal(gotStamped, wantStamped) {
				t.Fatalf("timestamped window view, chunks of %d, reverse %v:\n got %v\nwant %v", n, rev, gotStamped, wantStamped)
			}
			gotSess := resumed(t, n, func(after []byte) (storeapi.RawKeyIterator[serde.Windowed[string], int64], bool) {
				s := rng
				s.After = after
				return sess.(storeapi.SessionScanner[string, int64]).ScanSessions(s)
			})
			if !slices.Equal(gotSess, wantSess) {
				t.Fatalf("session view, chunks of %d, reverse %v:\n got %v\nwant %v", n, rev, gotSess, wantSess)
			}
		}
	}
}
