package produce

import (
	"bytes"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// A batch keeps its records compactly (bytes in the arena, 24 bytes of metadata each) and gives
// them back unchanged, as the Record of a failure and as the sarama records of a request: null
// and empty keys, values and header values stay apart, timestamps and offset deltas are the
// records'.
func TestBatchKeepsRecordsCompactly(t *testing.T) {
	recs := []Record{
		{Key: []byte("k0"), Value: []byte("value0"), Timestamp: 1000},
		{Key: nil, Value: []byte{}, Timestamp: 990, Source: "s1"},
		{Key: []byte{}, Value: nil, Timestamp: 1200, Headers: []Header{{Key: "h", Value: []byte("x")}, {Key: "n", Value: nil}, {Key: "", Value: []byte{}}}},
		{Key: []byte("k3"), Value: []byte("v3"), Timestamp: 1201, Headers: []Header{{Key: "only", Value: []byte("y")}}},
	}
	tp := kafka.TopicPartition{Topic: "t", Partition: 3}
	b := &batch{tp: tp, seq: -1}
	for i := range recs {
		b.add(&recs[i], recordSize(&recs[i]))
	}
	if b.n != 4 || b.firstTS != 1000 || b.maxTS != 1201 {
		t.Fatalf("n %d firstTS %d maxTS %d, want 4, 1000, 1201", b.n, b.firstTS, b.maxTS)
	}
	same := func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
	for i, want := range recs {
		got := b.record(i)
		if got.Topic != "t" || got.Partition != 3 || got.Timestamp != want.Timestamp || got.Source != want.Source ||
			!same(got.Key, want.Key) || !same(got.Value, want.Value) || len(got.Headers) != len(want.Headers) {
			t.Fatalf("record %d: %+v, want %+v", i, got, want)
		}
		for j, h := range want.Headers {
			if g := got.Headers[j]; g.Key != h.Key || !same(g.Value, h.Value) {
				t.Fatalf("record %d header %d: %q=%q (nil %v), want %q=%q (nil %v)", i, j, g.Key, g.Value, g.Value == nil, h.Key, h.Value, h.Value == nil)
			}
		}
	}
	var e encBuf
	b.encode(&e)
	if len(e.recs) != 4 || len(e.ptrs) != 4 {
		t.Fatalf("encoded %d records, %d pointers, want 4", len(e.recs), len(e.ptrs))
	}
	for i, want := range recs {
		r := e.ptrs[i]
		if r != &e.recs[i] || r.OffsetDelta != int64(i) || r.TimestampDelta != time.Duration(want.Timestamp-1000)*time.Millisecond ||
			!same(r.Key, want.Key) || !same(r.Value, want.Value) || len(r.Headers) != len(want.Headers) {
			t.Fatalf("sarama record %d: %+v, want %+v", i, r, want)
		}
		for j, h := range want.Headers {
			if g := r.Headers[j]; string(g.Key) != h.Key || !same(g.Value, h.Value) {
				t.Fatalf("sarama record %d header %d: %q=%q, want %q=%q", i, j, g.Key, g.Value, h.Key, h.Value)
			}
		}
	}
	// The views are capped: appending to one cannot overwrite the next record's bytes.
	k := b.record(0).Key
	_ = append(k, 'X')
	if got := b.record(0).Value; string(got) != "value0" {
		t.Fatalf("value after appending to the key view: %q", got)
	}
}

// Once a request is written, its batches give up their sarama records (a batch waiting for the
// broker's answer costs its bytes and metadata only) and the record buffers go back for the
// next request; a batch settled meanwhile (recycled, or already holding another request's
// records) keeps what it has. A retry encodes the same records again.
func TestWrittenReleasesTheEncodedRecords(t *testing.T) {
	p := &Producer{pid: 1, epoch: 0}
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	ps := &partState{tp: tp}
	mk := func() *batch {
		b := &batch{tp: tp, seq: -1}
		for i := range 3 {
			b.add(&Record{Key: []byte{'k', byte('0' + i)}, Value: []byte("v"), Timestamp: int64(i)}, 25)
		}
		return b
	}
	b1, b2 := mk(), mk()
	p.prepare(ps, b1)
	p.prepare(ps, b2)
	if b1.rb == nil || b1.rb.Records != nil || b1.enc != nil {
		t.Fatalf("prepare: rb %+v enc %v, want a RecordBatch without records (send encodes them)", b1.rb, b1.enc)
	}
	p.encodeRecords(b1)
	p.encodeRecords(b2)
	rb1, rb2, e1, e2 := b1.rb, b2.rb, b1.enc, b2.enc
	if e1 == nil || len(rb1.Records) != 3 || rb1.Records[2] != &e1.recs[2] {
		t.Fatalf("encodeRecords: rb %+v enc %v", rb1, e1)
	}
	// b2 was settled and its memory taken by a new batch before written ran.
	b2.rb, b2.enc = nil, nil
	p.written([]*batch{b1, b2}, []*sarama.RecordBatch{rb1, rb2}, []*encBuf{e1, e2})
	if b1.rb != nil || b1.enc != nil {
		t.Fatal("the written batch still holds its RecordBatch")
	}
	if rb1.Records != nil || rb2.Records != nil {
		t.Fatal("the written RecordBatches still hold their records (sarama keeps them until the answer)")
	}
	if len(p.encFree) != 2 || len(p.encFree[0].recs) != 0 || cap(p.encFree[0].recs) < 3 {
		t.Fatalf("free record buffers: %d", len(p.encFree))
	}
	if r := p.encFree[0].recs[:1][0]; r.Key != nil {
		t.Fatalf("a free record buffer still points into an arena: %q", r.Key)
	}
	// The retry: encoded again into a free buffer, same records, same sequence number.
	seq := b1.seq
	p.prepare(ps, b1)
	p.encodeRecords(b1)
	if b1.rb == nil || b1.rb.FirstSequence != seq || len(b1.rb.Records) != 3 || string(b1.rb.Records[1].Key) != "k1" || len(p.encFree) != 1 {
		t.Fatalf("retry: rb %+v, free buffers %d", b1.rb, len(p.encFree))
	}
}
