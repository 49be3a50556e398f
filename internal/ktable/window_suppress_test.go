package ktable

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Java's bytes: the changelog value Java 4.4's suppress buffer wrote for key b@[0,100) of
// conformance/golden/win-suppress-log-full.out.jsonl (step 1: count 1, no prior/old value, one
// header "h"="x1" and one null header "e", topic win-suppress-log-full-input, offset 1).
const javaBufferValue = "000000000000000200000000000000010000001b77696e2d73757070726573732d6c6f672d66756c6c2d696e707574" +
	"000000000000000200000001680000000278310000000165ffffffff000000080000000000000000fffffffe0000000800000000000000010000000000000002"

func TestSuppressBufferValueJavaBytes(t *testing.T) {
	raw, _ := hex.DecodeString(javaBufferValue)
	kb, _ := hex.DecodeString("620000000000000000")
	e, err := decodeBufEntry(kb, raw)
	if err != nil {
		t.Fatal(err)
	}
	if e.ts != 2 || e.offset != 1 || e.topic != "win-suppress-log-full-input" || e.partition != 0 || e.time != 2 {
		t.Fatalf("context: ts %d offset %d topic %q partition %d time %d", e.ts, e.offset, e.topic, e.partition, e.time)
	}
	if h, ok := e.headers.LastHeader("h"); !ok || string(h.Value) != "x1" {
		t.Fatalf("header h: %v %v", h, ok)
	}
	if h, ok := e.headers.LastHeader("e"); !ok || h.Value != nil {
		t.Fatalf("header e: %v %v", h, ok)
	}
	if hex.EncodeToString(e.prior) != "0000000000000000" || !e.sameOld || hex.EncodeToString(e.newB) != "0000000000000001" {
		t.Fatalf("values: prior %x old %x (same %v) new %x", e.prior, e.old, e.sameOld, e.newB)
	}
	if got := hex.EncodeToString(e.encode()); got != javaBufferValue {
		t.Fatalf("re-encoded:\n got %s\nwant %s", got, javaBufferValue)
	}
	// A different old value and null values round-trip.
	e2 := &bufEntry{kb: kb, ts: 7, offset: -1, partition: -1, prior: nil, old: []byte{1}, newB: nil, time: 9}
	d, err := decodeBufEntry(kb, e2.encode())
	if err != nil || d.prior != nil || string(d.old) != "\x01" || d.newB != nil || d.sameOld || d.time != 9 || d.offset != -1 {
		t.Fatalf("round trip: %+v %v", d, err)
	}
	if _, err := decodeBufEntry(kb, raw[:len(raw)-1]); !errors.Is(err, ErrSuppressChangelog) {
		t.Fatalf("truncated: %v", err)
	}
}

func TestSuppressBufferRestore(t *testing.T) {
	b := &SuppressBuffer{name: "s", logging: true, index: map[string]*bufEntry{}, dirty: map[string]int{}, dirtyCap: 16}
	v3 := *serde.NewHeaders(serde.Header{Key: "v", Value: []byte{3}})
	mk := func(key string, time int64, newV byte) processor.RestoreRecord {
		e := &bufEntry{kb: []byte(key), time: time, newB: []byte{newV}, offset: 1}
		return processor.RestoreRecord{Key: []byte(key), Value: e.encode(), Headers: v3}
	}
	if err := b.restore([]processor.RestoreRecord{mk("a", 5, 1), mk("b", 3, 2), mk("a", 8, 3), {Key: []byte("b")}, mk("c", 1, 4)}); err != nil {
		t.Fatal(err)
	}
	if b.NumRecords() != 2 || b.entries[0].time != 1 || string(b.entries[1].kb) != "a" || b.entries[1].time != 5 || b.entries[1].newB[0] != 3 {
		t.Fatalf("restored: %d entries, first %+v", b.NumRecords(), b.entries[0])
	}
	if len(b.dirty) != 0 {
		t.Fatalf("restore marked %d keys dirty", len(b.dirty))
	}
	want := b.entries[0].recordBytes + b.entries[1].recordBytes
	if b.BufferSize() != want {
		t.Fatalf("size %d, want %d", b.BufferSize(), want)
	}
	bad := mk("d", 1, 1)
	bad.Headers = *serde.NewHeaders(serde.Header{Key: "v", Value: []byte{1}})
	if err := b.restore([]processor.RestoreRecord{bad}); !errors.Is(err, ErrSuppressChangelog) {
		t.Fatalf("version 1: %v", err)
	}
}

// TestSuppressBufferDirtyOrder checks the flush order against java.util.HashSet<Bytes>: keys
// of conformance/golden/win-suppress-log-full.out.jsonl step 6 (d@0 and a@0 evicted, b@0 put)
// come out as d, a, b.
func TestSuppressBufferDirtyOrder(t *testing.T) {
	b := &SuppressBuffer{logging: true, dirty: map[string]int{}, dirtyCap: 16}
	for _, k := range []string{"620000000000000000", "640000000000000000", "610000000000000000"} {
		kb, _ := hex.DecodeString(k)
		b.markDirty(kb)
	}
	var got []string
	for _, k := range b.dirtyOrder() {
		got = append(got, hex.EncodeToString([]byte(k))[:2])
	}
	if len(got) != 3 || got[0] != "64" || got[1] != "61" || got[2] != "62" {
		t.Fatalf("order %v, want [64 61 62]", got)
	}
}
