package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func b(s string) []byte { return []byte(s) }

func openMem(t *testing.T, entries ...string) *inMemoryKeyValueStore {
	t.Helper()
	s := newInMemoryKeyValueStore("mem")
	if err := s.Init(nil, s); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(entries); i += 2 {
		if err := s.Put(b(entries[i]), b(entries[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func keysOf(t *testing.T, it KeyValueIterator[[]byte, []byte]) []string {
	t.Helper()
	kvs, err := Collect(it)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, kv := range kvs {
		out = append(out, string(kv.Key)+"="+string(kv.Value))
	}
	return out
}

func TestInMemoryRanges(t *testing.T) {
	// Keys include an empty key and bytes >= 0x80, which sort after ASCII in unsigned order
	// (Java's Bytes comparator).
	s := openMem(t, "", "empty", "a", "1", "ab", "2", "b", "3", "\x80", "hi", "\xff\x00", "ff0", "\xff\xff", "ffff")
	all := []string{"=empty", "a=1", "ab=2", "b=3", "\x80=hi", "\xff\x00=ff0", "\xff\xff=ffff"}
	rev := func(in []string) []string {
		out := make([]string, len(in))
		for i, v := range in {
			out[len(in)-1-i] = v
		}
		return out
	}
	cases := []struct {
		name string
		it   KeyValueIterator[[]byte, []byte]
		want []string
	}{
		{"all", s.All(), all},
		{"reverseAll", s.ReverseAll(), rev(all)},
		{"range inclusive both ends", s.Range(b("a"), b("b")), []string{"a=1", "ab=2", "b=3"}},
		{"reverse range", s.ReverseRange(b("a"), b("b")), []string{"b=3", "ab=2", "a=1"}},
		{"range bounds not present", s.Range(b("aa"), b("az")), []string{"ab=2"}},
		{"range from > to is empty", s.Range(b("b"), b("a")), []string{}},
		{"reverse range from > to is empty", s.ReverseRange(b("b"), b("a")), []string{}},
		{"range from == to", s.Range(b("ab"), b("ab")), []string{"ab=2"}},
		{"range nil from", s.Range(nil, b("a")), []string{"=empty", "a=1"}},
		{"range nil to", s.Range(b("\x80"), nil), []string{"\x80=hi", "\xff\x00=ff0", "\xff\xff=ffff"}},
		{"range empty key to empty key", s.Range(b(""), b("")), []string{"=empty"}},
		{"prefix a", s.PrefixScan(b("a")), []string{"a=1", "ab=2"}},
		{"prefix 0xff", s.PrefixScan(b("\xff")), []string{"\xff\x00=ff0", "\xff\xff=ffff"}},
		{"prefix 0xffff", s.PrefixScan(b("\xff\xff")), []string{"\xff\xff=ffff"}},
		{"prefix none", s.PrefixScan(b("c")), []string{}},
		{"empty prefix", s.PrefixScan(b("")), all},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := keysOf(t, c.it)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
	if n := s.ApproximateNumEntries(); n != 7 {
		t.Fatalf("ApproximateNumEntries = %d, want 7", n)
	}
}

func TestInMemoryPutGetDelete(t *testing.T) {
	large := bytes.Repeat([]byte{0xAB}, 5<<20)
	cases := []struct {
		name  string
		key   []byte
		value []byte
	}{
		{"empty key", []byte{}, b("v")},
		{"empty value is not null", b("k"), []byte{}},
		{"large value", b("big"), large},
		{"binary key", []byte{0, 0xff, 0x10}, b("x")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openMem(t)
			if err := s.Put(c.key, c.value); err != nil {
				t.Fatal(err)
			}
			got, ok, err := s.Get(c.key)
			if err != nil || !ok || !bytes.Equal(got, c.value) || got == nil {
				t.Fatalf("Get = %d bytes, %v, %v", len(got), ok, err)
			}
			old, ok, err := s.Delete(c.key)
			if err != nil || !ok || !bytes.Equal(old, c.value) {
				t.Fatalf("Delete = %d bytes, %v, %v", len(old), ok, err)
			}
			if _, ok, _ := s.Get(c.key); ok {
				t.Fatal("key still present after Delete")
			}
			if _, ok, _ := s.Delete(c.key); ok {
				t.Fatal("second Delete found the key")
			}
		})
	}
}

func TestInMemoryNullValueDeletesAndPutIfAbsent(t *testing.T) {
	s := openMem(t, "k", "v")
	if err := s.Put(b("k"), nil); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(b("k")); ok || s.ApproximateNumEntries() != 0 {
		t.Fatal("Put(k, nil) did not delete")
	}
	old, found, err := s.PutIfAbsent(b("k"), b("1"))
	if err != nil || found || old != nil {
		t.Fatalf("PutIfAbsent on absent = %q, %v, %v", old, found, err)
	}
	old, found, err = s.PutIfAbsent(b("k"), b("2"))
	if err != nil || !found || string(old) != "1" {
		t.Fatalf("PutIfAbsent on present = %q, %v, %v", old, found, err)
	}
	if v, _, _ := s.Get(b("k")); string(v) != "1" {
		t.Fatalf("value after PutIfAbsent = %q", v)
	}
	if err := s.PutAll([]KeyValue[[]byte, []byte]{{b("x"), b("1")}, {b("k"), nil}, {b("x"), b("2")}}); err != nil {
		t.Fatal(err)
	}
	if got := keysOf(t, s.All()); strings.Join(got, ",") != "x=2" {
		t.Fatalf("after PutAll: %q", got)
	}
}

func TestInMemoryIteratorSnapshotAndMutation(t *testing.T) {
	s := openMem(t, "a", "1", "b", "2", "c", "3")
	it := s.All()
	if !it.Next() || string(it.Key()) != "a" {
		t.Fatal("first entry")
	}
	// Deleted keys are skipped, added keys are not seen, updated values are read live.
	_, _, _ = s.Delete(b("b"))
	_ = s.Put(b("bb"), b("new"))
	_ = s.Put(b("c"), b("33"))
	var rest []string
	for it.Next() {
		rest = append(rest, string(it.Key())+"="+string(it.Value()))
	}
	if strings.Join(rest, ",") != "c=33" {
		t.Fatalf("rest = %q", rest)
	}
	_ = it.Close()
	if it.Next() || !errors.Is(it.Err(), ErrIteratorClosed) {
		t.Fatalf("Next after Close: err %v", it.Err())
	}
}

func TestInMemoryClosed(t *testing.T) {
	s := newInMemoryKeyValueStore("closed")
	if err := s.Put(b("k"), b("v")); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("Put before Init: %v", err)
	}
	var se *StoreError
	if _, _, err := s.Get(b("k")); !errors.As(err, &se) || se.Store != "closed" {
		t.Fatalf("Get before Init: %v", err)
	}
	s.Open()
	_ = s.Put(b("k"), b("v"))
	it := s.All()
	_ = s.Close()
	if s.IsOpen() {
		t.Fatal("open after Close")
	}
	if it.Next() || !errors.Is(it.Err(), ErrStoreClosed) {
		t.Fatalf("iterating a closed store: %v", it.Err())
	}
	if it := s.Range(b("a"), b("z")); it.Next() || !errors.Is(it.Err(), ErrStoreClosed) {
		t.Fatalf("Range on closed store: %v", it.Err())
	}
}

func TestSkiplistManyKeys(t *testing.T) {
	s := openMem(t)
	// Insert 2000 keys in a scrambled order and delete every third; the scan must be sorted.
	for i := 0; i < 2000; i++ {
		k := []byte{byte((i * 7919) % 2000 >> 8), byte((i * 7919) % 2000)}
		_ = s.Put(k, k)
	}
	for i := 0; i < 2000; i += 3 {
		_, _, _ = s.Delete([]byte{byte(i >> 8), byte(i)})
	}
	kvs, err := Collect(s.All())
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := 0; i < 2000; i++ {
		if i%3 != 0 {
			want++
		}
	}
	if len(kvs) != want || int(s.ApproximateNumEntries()) != want {
		t.Fatalf("%d entries (approx %d), want %d", len(kvs), s.ApproximateNumEntries(), want)
	}
	for i := 1; i < len(kvs); i++ {
		if bytes.Compare(kvs[i-1].Key, kvs[i].Key) >= 0 {
			t.Fatalf("not sorted at %d", i)
		}
	}
}
