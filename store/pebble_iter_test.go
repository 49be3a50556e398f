package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
)

// dirContext is a fakeContext with a state directory, so that Pebble stores live on disk and
// Flush writes sstables.
type dirContext struct {
	fakeContext
	dir string
}

func (d *dirContext) StateDir() string { return d.dir }

// The Pebble iterators hand out views valid until Next; these tests check that the layers
// that keep entries (Collect, the typed stores with []byte serdes) copy them, and that what a
// caller copies while iterating is right.

func fillPebble(t *testing.T, n int) *pebbleKeyValueStore {
	t.Helper()
	s := newPebbleKeyValueStore("views")
	// A state directory: without one the store lives in memory and Flush writes no sstable.
	if err := s.Init(&dirContext{dir: t.TempDir()}, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for i := 0; i < n; i++ {
		if err := s.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "value-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Flushed to sstables, whose iterators rebuild prefix-compressed keys in a reused buffer:
	// views into it change with Next, unlike views into the memtable.
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return s
}

func wantEntries(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("k%04d=value-%d", i, i))
	}
	return out
}

func TestPebbleIteratorCopiesWhileIterating(t *testing.T) {
	s := fillPebble(t, 500)
	var got []string
	it := s.All()
	for it.Next() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Close(); err != nil || it.Err() != nil {
		t.Fatal(err, it.Err())
	}
	if !slices.Equal(got, wantEntries(500)) {
		t.Fatalf("All = %d entries, first %q", len(got), got[:min(3, len(got))])
	}
	if it.Key() != nil || it.Value() != nil {
		t.Fatalf("after Close Key/Value = %q/%q, want nil", it.Key(), it.Value())
	}
}

func TestCollectDetachesPebbleViews(t *testing.T) {
	s := fillPebble(t, 500)
	kvs, err := Collect(s.Range(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range kvs {
		got = append(got, string(kv.Key)+"="+string(kv.Value))
	}
	if !slices.Equal(got, wantEntries(500)) {
		t.Fatalf("Collect = %d entries, first %q", len(got), got[:min(3, len(got))])
	}
}

func TestTypedByteArrayStoreKeepsEntriesOverPebble(t *testing.T) {
	st := newMeteredKeyValueStore(newPebbleKeyValueStore("typed"), serde.ByteArray(), serde.ByteArray())
	if err := st.Init(&fakeContext{appID: "app"}, st); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for i := 0; i < 300; i++ {
		if err := st.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "value-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	// Keep the typed keys and values without copying them: the typed layer must have.
	var keys, vals [][]byte
	it := st.All()
	for it.Next() {
		keys, vals = append(keys, it.Key()), append(vals, it.Value())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	_ = it.Close()
	var got []string
	for i := range keys {
		got = append(got, string(keys[i])+"="+string(vals[i]))
	}
	if !slices.Equal(got, wantEntries(300)) {
		t.Fatalf("typed All = %d entries, first %q", len(got), got[:min(3, len(got))])
	}
}

func TestPebbleIteratorEmptyValueIsNotNull(t *testing.T) {
	s := fillPebble(t, 0)
	if err := s.Put([]byte("e"), []byte{}); err != nil {
		t.Fatal(err)
	}
	it := s.All()
	defer it.Close()
	if !it.Next() {
		t.Fatalf("no entry: %v", it.Err())
	}
	if v := it.Value(); v == nil || len(v) != 0 {
		t.Fatalf("Value = %#v, want empty non-nil", v)
	}
}

func TestTimestampedByteArrayStoreKeepsEntriesOverPebble(t *testing.T) {
	st := Stores.TimestampedKeyValueStoreBuilder(Stores.PersistentTimestampedKeyValueStore("ts"), serde.ByteArray(), serde.ByteArray()).
		WithLoggingDisabled().BuildStore()
	if err := st.Init(&fakeContext{appID: "app"}, st); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for i := 0; i < 300; i++ {
		if err := st.Put(fmt.Appendf(nil, "k%04d", i), &ValueAndTimestamp[[]byte]{Value: fmt.Appendf(nil, "value-%d", i), Timestamp: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Flush(); err != nil {
		t.Fatal(err)
	}
	var kept []*ValueAndTimestamp[[]byte]
	var keys [][]byte
	it := st.All()
	for it.Next() {
		keys, kept = append(keys, it.Key()), append(kept, it.Value())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	_ = it.Close()
	var got []string
	for i := range kept {
		got = append(got, fmt.Sprintf("%s=%s", keys[i], kept[i].Value))
		if kept[i].Timestamp != int64(i) {
			t.Fatalf("entry %d timestamp %d", i, kept[i].Timestamp)
		}
	}
	if !slices.Equal(got, wantEntries(300)) {
		t.Fatalf("timestamped All = %d entries, first %q", len(got), got[:min(3, len(got))])
	}
}

func TestPebbleIteratorLifecycle(t *testing.T) {
	s := fillPebble(t, 3)
	collect := func(it KeyValueIterator[[]byte, []byte]) []string {
		t.Helper()
		var got []string
		for it.Next() {
			got = append(got, string(it.Key()))
		}
		if it.Next() || it.Err() != nil || it.Key() != nil || it.Value() != nil {
			t.Fatalf("after the end: Next again, Err %v, Key %q, Value %q", it.Err(), it.Key(), it.Value())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if err := it.Close(); err != nil {
			t.Fatalf("second Close = %v", err)
		}
		if it.Next() || !errors.Is(it.Err(), ErrIteratorClosed) {
			t.Fatalf("Next after Close: Err = %v, want ErrIteratorClosed", it.Err())
		}
		return got
	}
	for _, c := range []struct {
		name string
		it   KeyValueIterator[[]byte, []byte]
		want []string
	}{
		{"range", s.Range([]byte("k0001"), []byte("k0002")), []string{"k0001", "k0002"}},
		{"reverse range", s.ReverseRange([]byte("k0000"), []byte("k0001")), []string{"k0001", "k0000"}},
		{"from > to", s.Range([]byte("k0002"), []byte("k0001")), nil},
		{"reverse from > to", s.ReverseRange([]byte("k0002"), []byte("k0001")), nil},
		{"open from", s.Range(nil, []byte("k0000")), []string{"k0000"}},
		{"open to", s.Range([]byte("k0002"), nil), []string{"k0002"}},
		{"reverse all", s.ReverseAll(), []string{"k0002", "k0001", "k0000"}},
		{"prefix", s.PrefixScan([]byte("k000")), []string{"k0000", "k0001", "k0002"}},
	} {
		if got := collect(c.it); !slices.Equal(got, c.want) {
			t.Errorf("%s = %q, want %q", c.name, got, c.want)
		}
	}

	it := s.Range(nil, nil)
	if !it.Next() || string(it.Key()) != "k0000" {
		t.Fatalf("first key %q", it.Key())
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if it.Key() != nil || it.Next() || !errors.Is(it.Err(), ErrIteratorClosed) {
		t.Fatalf("closed mid-way: Key %q, Err %v", it.Key(), it.Err())
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, it := range map[string]KeyValueIterator[[]byte, []byte]{
		"range": s.Range(nil, nil), "reverse": s.ReverseRange(nil, nil), "prefix": s.PrefixScan([]byte("k")),
	} {
		if it.Next() || !errors.Is(it.Err(), ErrStoreClosed) {
			t.Errorf("%s on a closed store: Err = %v, want ErrStoreClosed", name, it.Err())
		}
		if err := it.Close(); err != nil || it.Next() || !errors.Is(it.Err(), ErrStoreClosed) {
			t.Errorf("%s on a closed store after Close: %v, Err = %v", name, err, it.Err())
		}
	}
}
