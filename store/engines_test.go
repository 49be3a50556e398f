package store

import (
	"bytes"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"
	"slices"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
)

// The same cases run against both engines of each store kind.

type kvEngine struct {
	name string
	new  func(t *testing.T) KeyValueBytesStore
}

func kvEngines() []kvEngine {
	return []kvEngine{
		{"memory", func(t *testing.T) KeyValueBytesStore {
			s := newInMemoryKeyValueStore("kv")
			s.Open()
			return s
		}},
		{"pebble", func(t *testing.T) KeyValueBytesStore {
			s := newPebbleKeyValueStore("kv")
			if err := s.Init(nil, s); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
}

func TestKeyValueEngines(t *testing.T) {
	large := bytes.Repeat([]byte("x"), 4<<20)
	cases := []struct {
		name string
		run  func(t *testing.T, s KeyValueBytesStore)
	}{
		{"empty key and empty value", func(t *testing.T, s KeyValueBytesStore) {
			if err := s.Put([]byte{}, []byte{}); err != nil {
				t.Fatal(err)
			}
			v, ok, err := s.Get([]byte{})
			if err != nil || !ok || v == nil || len(v) != 0 {
				t.Fatalf("Get(empty) = %q %v %v, want empty non-nil value", v, ok, err)
			}
			if got := keysOf(t, s.All()); !slices.Equal(got, []string{"="}) {
				t.Fatalf("All = %q", got)
			}
		}},
		{"large value", func(t *testing.T, s KeyValueBytesStore) {
			if err := s.Put(b("big"), large); err != nil {
				t.Fatal(err)
			}
			v, ok, err := s.Get(b("big"))
			if err != nil || !ok || !bytes.Equal(v, large) {
				t.Fatalf("Get(big): len %d ok %v err %v", len(v), ok, err)
			}
		}},
		{"put nil deletes", func(t *testing.T, s KeyValueBytesStore) {
			_ = s.Put(b("a"), b("1"))
			_ = s.Put(b("a"), nil)
			if _, ok, _ := s.Get(b("a")); ok {
				t.Fatal("a still present")
			}
		}},
		{"putIfAbsent and delete", func(t *testing.T, s KeyValueBytesStore) {
			old, found, err := s.PutIfAbsent(b("a"), b("1"))
			if err != nil || found || old != nil {
				t.Fatalf("first PutIfAbsent = %q %v %v", old, found, err)
			}
			old, found, _ = s.PutIfAbsent(b("a"), b("2"))
			if !found || string(old) != "1" {
				t.Fatalf("second PutIfAbsent = %q %v", old, found)
			}
			old, found, _ = s.Delete(b("a"))
			if !found || string(old) != "1" {
				t.Fatalf("Delete = %q %v", old, found)
			}
			_, found, _ = s.Delete(b("a"))
			if found {
				t.Fatal("second delete found a value")
			}
		}},
		{"ranges, reverse ranges, prefix, unsigned order", func(t *testing.T, s KeyValueBytesStore) {
			_ = s.PutAll([]KeyValue[[]byte, []byte]{
				{Key: b("a"), Value: b("1")}, {Key: b("ab"), Value: b("2")}, {Key: b("abc"), Value: b("3")},
				{Key: b("b"), Value: b("4")}, {Key: []byte{0xff}, Value: b("5")}, {Key: b("c"), Value: b("6")},
			})
			if got, want := keysOf(t, s.Range(b("ab"), b("b"))), []string{"ab=2", "abc=3", "b=4"}; !slices.Equal(got, want) {
				t.Fatalf("Range = %q, want %q", got, want)
			}
			if got, want := keysOf(t, s.ReverseRange(b("ab"), b("b"))), []string{"b=4", "abc=3", "ab=2"}; !slices.Equal(got, want) {
				t.Fatalf("ReverseRange = %q, want %q", got, want)
			}
			if got := keysOf(t, s.Range(b("b"), b("a"))); len(got) != 0 {
				t.Fatalf("inverted Range = %q, want empty", got)
			}
			if got, want := keysOf(t, s.PrefixScan(b("ab"))), []string{"ab=2", "abc=3"}; !slices.Equal(got, want) {
				t.Fatalf("PrefixScan = %q, want %q", got, want)
			}
			if got, want := keysOf(t, s.Range(nil, b("ab"))), []string{"a=1", "ab=2"}; !slices.Equal(got, want) {
				t.Fatalf("Range(nil, ab) = %q, want %q", got, want)
			}
			all := keysOf(t, s.All())
			if want := []string{"a=1", "ab=2", "abc=3", "b=4", "c=6", "\xff=5"}; !slices.Equal(all, want) {
				t.Fatalf("All = %q, want %q (0xff sorts last: unsigned)", all, want)
			}
			rev := keysOf(t, s.ReverseAll())
			slices.Reverse(rev)
			if !slices.Equal(rev, all) {
				t.Fatalf("ReverseAll reversed = %q", rev)
			}
			if n := s.ApproximateNumEntries(); n != 6 {
				t.Fatalf("ApproximateNumEntries = %d", n)
			}
		}},
		{"prefix of 0xff keys", func(t *testing.T, s KeyValueBytesStore) {
			_ = s.Put([]byte{0xff, 0xff}, b("1"))
			_ = s.Put([]byte{0xff, 0xff, 0x01}, b("2"))
			_ = s.Put([]byte{0xfe}, b("0"))
			if got := keysOf(t, s.PrefixScan([]byte{0xff, 0xff})); len(got) != 2 {
				t.Fatalf("PrefixScan(ffff) = %q", got)
			}
		}},
		{"iterator is a snapshot for writes after creation", func(t *testing.T, s KeyValueBytesStore) {
			_ = s.Put(b("a"), b("1"))
			_ = s.Put(b("c"), b("3"))
			it := s.All()
			defer it.Close()
			_ = s.Put(b("b"), b("2"))
			var got []string
			for it.Next() {
				got = append(got, string(it.Key()))
			}
			if !slices.Equal(got, []string{"a", "c"}) {
				t.Fatalf("iterated %q, want [a c]", got)
			}
			if it.Next() || it.Err() != nil {
				t.Fatal("Next after end")
			}
		}},
		{"closed store", func(t *testing.T, s KeyValueBytesStore) {
			_ = s.Close()
			if _, _, err := s.Get(b("a")); err == nil {
				t.Fatal("Get on closed store: no error")
			}
			if err := s.Put(b("a"), b("1")); err == nil {
				t.Fatal("Put on closed store: no error")
			}
		}},
	}
	for _, e := range kvEngines() {
		for _, c := range cases {
			t.Run(e.name+"/"+c.name, func(t *testing.T) { c.run(t, e.new(t)) })
		}
	}
}

type windowEngine struct {
	name string
	new  func(t *testing.T, retention, size int64, dups bool) WindowBytesStore
}

func windowEngines() []windowEngine {
	return []windowEngine{
		{"memory", func(t *testing.T, r, size int64, dups bool) WindowBytesStore {
			s := newInMemoryWindowStore("w", r, size, dups)
			if err := s.Init(nil, s); err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"pebble", func(t *testing.T, r, size int64, dups bool) WindowBytesStore {
			s := newPebbleWindowStore("w", r, 0, size, dups)
			if err := s.Init(nil, s); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
}

func windowedList(t *testing.T, it KeyValueIterator[serde.Windowed[[]byte], []byte]) []string {
	t.Helper()
	defer it.Close()
	out := []string{}
	for it.Next() {
		k := it.Key()
		out = append(out, fmt.Sprintf("%s@%d/%d=%s", k.Key, k.Window.Start, k.Window.End, it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func timeList(t *testing.T, it KeyValueIterator[int64, []byte]) []string {
	t.Helper()
	defer it.Close()
	out := []string{}
	for it.Next() {
		out = append(out, fmt.Sprintf("%d=%s", it.Key(), it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWindowEngines(t *testing.T) {
	const minute = 60_000
	cases := []struct {
		name string
		run  func(t *testing.T, e windowEngine)
	}{
		{"fetch single key by time, forward and backward", func(t *testing.T, e windowEngine) {
			s := e.new(t, 10*minute, 1000, false)
			for _, ts := range []int64{0, 1000, 2000, 3000} {
				_ = s.Put(b("k"), []byte(fmt.Sprint("v", ts)), ts)
			}
			_ = s.Put(b("k\x00"), b("other"), 1000) // a key with k as prefix must not leak in
			if got, want := timeList(t, s.FetchTimeRange(b("k"), 1000, 2000)), []string{"1000=v1000", "2000=v2000"}; !slices.Equal(got, want) {
				t.Fatalf("FetchTimeRange = %q, want %q", got, want)
			}
			if got, want := timeList(t, s.BackwardFetchTimeRange(b("k"), 0, 3000)), []string{"3000=v3000", "2000=v2000", "1000=v1000", "0=v0"}; !slices.Equal(got, want) {
				t.Fatalf("BackwardFetchTimeRange = %q, want %q", got, want)
			}
			v, ok, err := s.Fetch(b("k"), 2000)
			if err != nil || !ok || string(v) != "v2000" {
				t.Fatalf("Fetch = %q %v %v", v, ok, err)
			}
			if _, ok, _ := s.Fetch(b("k"), 2500); ok {
				t.Fatal("Fetch of a missing window found one")
			}
		}},
		{"empty key and large value", func(t *testing.T, e windowEngine) {
			s := e.new(t, 10*minute, 1000, false)
			big := bytes.Repeat([]byte{7}, 1<<20)
			_ = s.Put([]byte{}, big, 5)
			v, ok, err := s.Fetch([]byte{}, 5)
			if err != nil || !ok || !bytes.Equal(v, big) {
				t.Fatalf("Fetch(empty key): ok %v err %v len %d", ok, err, len(v))
			}
			if got := windowedList(t, s.All()); len(got) != 1 || got[0][:3] != "@5/" {
				t.Fatalf("All = %.40q", got)
			}
		}},
		{"key range across segments in segment, key, time order", func(t *testing.T, e windowEngine) {
			s := e.new(t, 10*minute, 1000, false) // segment interval 5 minutes
			_ = s.Put(b("b"), b("b0"), 0)
			_ = s.Put(b("a"), b("a0"), 0)
			_ = s.Put(b("a"), b("a6"), 6*minute)
			_ = s.Put(b("c"), b("c1"), 1000)
			_ = s.Put(b("b"), b("b6"), 6*minute)
			want := []string{"a@0/1000=a0", "b@0/1000=b0", "c@1000/2000=c1", "a@360000/361000=a6", "b@360000/361000=b6"}
			if got := windowedList(t, s.All()); !slices.Equal(got, want) {
				t.Fatalf("All = %q\nwant %q", got, want)
			}
			rev := windowedList(t, s.BackwardAll())
			slices.Reverse(rev)
			if !slices.Equal(rev, want) {
				t.Fatalf("BackwardAll reversed = %q", rev)
			}
			if got, want := windowedList(t, s.FetchKeyRange(b("a"), b("b"), 0, 6*minute)), []string{"a@0/1000=a0", "b@0/1000=b0", "a@360000/361000=a6", "b@360000/361000=b6"}; !slices.Equal(got, want) {
				t.Fatalf("FetchKeyRange = %q", got)
			}
			if got, want := windowedList(t, s.FetchAll(1000, 1000)), []string{"c@1000/2000=c1"}; !slices.Equal(got, want) {
				t.Fatalf("FetchAll = %q", got)
			}
			if got := windowedList(t, s.FetchKeyRange(b("b"), b("a"), 0, 6*minute)); len(got) != 0 {
				t.Fatalf("inverted key range = %q", got)
			}
		}},
		{"expired segments are dropped and late puts skipped", func(t *testing.T, e windowEngine) {
			s := e.new(t, 2*minute, 1000, false) // segment interval 60 s
			_ = s.Put(b("k"), b("old"), 0)
			_ = s.Put(b("k"), b("mid"), 90_000)
			if got := segmentsOf(s); !slices.Equal(got, []int64{0, 1}) {
				t.Fatalf("segments = %v", got)
			}
			_ = s.Put(b("k"), b("new"), 200_000) // stream time 200 s: min live segment (200-120)/60 = 1
			if got := segmentsOf(s); !slices.Equal(got, []int64{1, 3}) {
				t.Fatalf("segments after expiry = %v, want [1 3]", got)
			}
			_ = s.Put(b("k"), b("late"), 10_000) // segment 0 expired: skipped
			if got, want := timeList(t, s.FetchTimeRange(b("k"), 0, math.MaxInt64)), []string{"90000=mid", "200000=new"}; !slices.Equal(got, want) {
				t.Fatalf("after expiry = %q, want %q", got, want)
			}
			// Fetch also hides windows older than stream time - retention inside live segments.
			_ = s.Put(b("k"), b("newer"), 215_000)
			if got, want := timeList(t, s.FetchTimeRange(b("k"), 0, math.MaxInt64)), []string{"200000=new", "215000=newer"}; !slices.Equal(got, want) {
				t.Fatalf("after retention = %q, want %q", got, want)
			}
		}},
		{"duplicates retained with seqnums", func(t *testing.T, e windowEngine) {
			s := e.new(t, 10*minute, 1000, true)
			_ = s.Put(b("k"), b("1"), 0)
			_ = s.Put(b("k"), b("2"), 0)
			_ = s.Put(b("k"), nil, 0) // ignored with duplicates
			if got, want := timeList(t, s.FetchTimeRange(b("k"), 0, 0)), []string{"0=1", "0=2"}; !slices.Equal(got, want) {
				t.Fatalf("dups = %q, want %q", got, want)
			}
		}},
		{"delete with nil", func(t *testing.T, e windowEngine) {
			s := e.new(t, 10*minute, 1000, false)
			_ = s.Put(b("k"), b("1"), 0)
			_ = s.Put(b("k"), nil, 0)
			if got := timeList(t, s.FetchTimeRange(b("k"), 0, 0)); len(got) != 0 {
				t.Fatalf("after delete = %q", got)
			}
		}},
	}
	for _, e := range windowEngines() {
		for _, c := range cases {
			t.Run(e.name+"/"+c.name, func(t *testing.T) { c.run(t, e) })
		}
	}
}

func segmentsOf(s any) []int64 {
	return s.(interface{ Segments() []int64 }).Segments()
}

type sessionEngine struct {
	name string
	new  func(t *testing.T, retention int64) SessionBytesStore
}

func sessionEngines() []sessionEngine {
	return []sessionEngine{
		{"memory", func(t *testing.T, r int64) SessionBytesStore {
			s := newInMemorySessionStore("s", r)
			_ = s.Init(nil, s)
			return s
		}},
		{"pebble", func(t *testing.T, r int64) SessionBytesStore {
			s := newPebbleSessionStore("s", r, 0)
			if err := s.Init(nil, s); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}},
	}
}

func sess(k string, start, end int64) serde.Windowed[[]byte] {
	return serde.Windowed[[]byte]{Key: []byte(k), Window: serde.Window{Start: start, End: end}}
}

func TestSessionEngines(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, s SessionBytesStore)
	}{
		{"find sessions overlapping a range", func(t *testing.T, s SessionBytesStore) {
			_ = s.Put(sess("a", 0, 10), b("1"))
			_ = s.Put(sess("a", 20, 30), b("2"))
			_ = s.Put(sess("a", 100, 200), b("3"))
			_ = s.Put(sess("a\x00", 20, 30), b("x")) // prefix neighbour
			_ = s.Put(sess("b", 5, 25), b("4"))
			if got, want := windowedList(t, s.FindSessions(b("a"), 10, 25)), []string{"a@0/10=1", "a@20/30=2"}; !slices.Equal(got, want) {
				t.Fatalf("FindSessions = %q, want %q", got, want)
			}
			if got, want := windowedList(t, s.BackwardFindSessions(b("a"), 10, 25)), []string{"a@20/30=2", "a@0/10=1"}; !slices.Equal(got, want) {
				t.Fatalf("BackwardFindSessions = %q, want %q", got, want)
			}
			// Store key byte order, as Java's RocksDB session store: "a\x00"‖end‖start sorts before
			// "a"‖end‖start here because end's first bytes are 0x00 and the next differ.
			if got, want := windowedList(t, s.FindSessionsRange(b("a"), b("b"), 11, 25)), []string{"a\x00@20/30=x", "a@20/30=2", "b@5/25=4"}; !slices.Equal(got, want) {
				t.Fatalf("FindSessionsRange = %q, want %q", got, want)
			}
			if got := windowedList(t, s.Fetch(b("a"))); len(got) != 3 {
				t.Fatalf("Fetch = %q", got)
			}
			v, ok, err := s.FetchSession(b("a"), 20, 30)
			if err != nil || !ok || string(v) != "2" {
				t.Fatalf("FetchSession = %q %v %v", v, ok, err)
			}
		}},
		{"remove and empty key", func(t *testing.T, s SessionBytesStore) {
			_ = s.Put(sess("", 1, 2), b("e"))
			_ = s.Put(sess("k", 1, 2), b("v"))
			_ = s.Remove(sess("k", 1, 2))
			if got, want := windowedList(t, s.FetchRange(nil, nil)), []string{"@1/2=e"}; !slices.Equal(got, want) {
				t.Fatalf("FetchRange(all) = %q, want %q", got, want)
			}
		}},
		{"expired sessions", func(t *testing.T, s SessionBytesStore) {
			_ = s.Put(sess("k", 0, 1000), b("old"))
			_ = s.Put(sess("k", 500_000, 600_000), b("new")) // retention 120 s: segment of end 1000 expires
			_ = s.Put(sess("k", 0, 2000), b("late"))
			if got, want := windowedList(t, s.Fetch(b("k"))), []string{"k@500000/600000=new"}; !slices.Equal(got, want) {
				t.Fatalf("Fetch = %q, want %q", got, want)
			}
			if got := segmentsOf(s); !slices.Equal(got, []int64{10}) {
				t.Fatalf("segments = %v, want [10]", got)
			}
		}},
	}
	for _, e := range sessionEngines() {
		for _, c := range cases {
			t.Run(e.name+"/"+c.name, func(t *testing.T) { c.run(t, e.new(t, 120_000)) })
		}
	}
}

func TestStoreKeyLayouts(t *testing.T) {
	got := storeapi.WindowStoreKey([]byte("ab"), 0x0102030405060708, 9)
	want := []byte{'a', 'b', 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 9}
	if !bytes.Equal(got, want) {
		t.Fatalf("storeapi.WindowStoreKey = %x, want %x", got, want)
	}
	k, ts, seq, err := splitWindowStoreKey(got)
	if err != nil || string(k) != "ab" || ts != 0x0102030405060708 || seq != 9 {
		t.Fatalf("SplitWindowStoreKey = %q %x %d %v", k, ts, seq, err)
	}
	got = storeapi.SessionStoreKey([]byte("k"), 5, 7)
	want = []byte{'k', 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 5}
	if !bytes.Equal(got, want) {
		t.Fatalf("storeapi.SessionStoreKey = %x, want %x (key ‖ end ‖ start)", got, want)
	}
	if _, _, _, err := splitSessionStoreKey([]byte{1}); err == nil {
		t.Fatal("short session key: no error")
	}
	if storeapi.DefaultSegmentInterval(86_400_000) != 43_200_000 || storeapi.DefaultSegmentInterval(1000) != 60_000 {
		t.Fatal("storeapi.DefaultSegmentInterval")
	}
	if segmentName("store", 3, 60_000) != "store.180000" {
		t.Fatal(segmentName("store", 3, 60_000))
	}
}
