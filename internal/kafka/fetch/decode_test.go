package fetch

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// batch builds a decoded record batch as sarama's response decoding leaves it: records at
// first..first+n-1 with values v<offset>, timestamps base+delta.
func batch(first int64, n int, pid int64, txn bool) *sarama.Records {
	rb := &sarama.RecordBatch{FirstOffset: first, Version: 2, LastOffsetDelta: int32(n - 1), ProducerID: pid,
		IsTransactional: txn, PartitionLeaderEpoch: 7, FirstTimestamp: time.UnixMilli(1_000_000), MaxTimestamp: time.UnixMilli(1_000_000 + int64(n))}
	for i := range n {
		rb.Records = append(rb.Records, &sarama.Record{OffsetDelta: int64(i), TimestampDelta: time.Duration(i) * time.Millisecond,
			Key: []byte("k"), Value: []byte("v" + itoa(first+int64(i)))})
	}
	return &sarama.Records{RecordBatch: rb}
}

// marker is a control batch at offset off: a commit or abort marker of producer pid.
func marker(off, pid int64, commit bool) *sarama.Records {
	typ := byte(0)
	if commit {
		typ = 1
	}
	rb := &sarama.RecordBatch{FirstOffset: off, Version: 2, ProducerID: pid, IsTransactional: true, Control: true,
		Records: []*sarama.Record{{Key: []byte{0, 0, 0, typ}, Value: []byte{0, 0, 0, 0, 0, 0}}}}
	return &sarama.Records{RecordBatch: rb}
}

func itoa(n int64) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int64) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

func TestDecodeFromMidBatch(t *testing.T) {
	blk := &sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{batch(0, 5, -1, false), batch(5, 2, -1, false)}}
	d := decodeBlock(blk, 2, false, nil)
	if got := offsetsOf(d.records); !slices.Equal(got, []int64{2, 3, 4, 5, 6}) || d.next != 7 || d.partialOnly || d.err != nil {
		t.Fatalf("offsets %v next %d partialOnly %v err %v; want [2..6], 7", got, d.next, d.partialOnly, d.err)
	}
	r := d.records[0]
	if r.Timestamp != 1_000_002 || string(r.Value) != "v2" || string(r.Key) != "k" || r.LeaderEpoch != 7 || r.Headers != nil {
		t.Errorf("record %+v", r)
	}
	if cap(d.records) != 7 {
		t.Errorf("record slice capacity %d, want one allocation sized for the block's 7 records", cap(d.records))
	}
}

func TestDecodeTimestampsAndHeaders(t *testing.T) {
	b := batch(0, 2, -1, false)
	b.RecordBatch.Records[0].Headers = []*sarama.RecordHeader{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("n")}}
	b.RecordBatch.Records[1].Key, b.RecordBatch.Records[1].Value = nil, nil
	d := decodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{b}}, 0, false, nil)
	h := d.records[0].Headers
	if len(h) != 2 || h[0].Key != "a" || string(h[0].Value) != "1" || h[1].Key != "n" || h[1].Value != nil {
		t.Errorf("headers %+v", h)
	}
	if r := d.records[1]; r.Key != nil || r.Value != nil {
		t.Errorf("null key and value came out as %q %q", r.Key, r.Value)
	}

	la := batch(10, 2, -1, false)
	la.RecordBatch.LogAppendTime = true
	d = decodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{la}}, 10, false, nil)
	if d.records[0].Timestamp != 1_000_002 || d.records[1].Timestamp != 1_000_002 {
		t.Errorf("LogAppendTime batch: timestamps %d %d, want the max timestamp 1000002", d.records[0].Timestamp, d.records[1].Timestamp)
	}

	none := batch(20, 1, -1, false)
	none.RecordBatch.FirstTimestamp = time.Time{} // -1 on the wire
	d = decodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{none}}, 20, false, nil)
	if d.records[0].Timestamp != -1 {
		t.Errorf("no timestamp: %d, want -1", d.records[0].Timestamp)
	}
}

// TestDecodeReadCommitted: two producers, one of whose transactions is aborted while the
// other's commits around it, then the aborted producer's next transaction commits.
func TestDecodeReadCommitted(t *testing.T) {
	const p5, p7 = 5, 7
	blk := &sarama.FetchResponseBlock{
		RecordsSet: []*sarama.Records{
			batch(0, 2, p5, true),   // committed at 6
			batch(2, 2, p7, true),   // aborted at 5
			batch(4, 1, -1, false),  // plain
			marker(5, p7, false),    // abort
			marker(6, p5, true),     // commit
			batch(7, 2, p7, true),   // committed at 11
			batch(9, 1, p5, true),   // aborted at 10
			marker(10, p5, false),   // abort
			marker(11, p7, true),    // commit
			batch(12, 1, p7, true),  // aborted at 14 (after this response)
			batch(13, 1, p5, false), // idempotent, not transactional
		},
		AbortedTransactions: []*sarama.AbortedTransaction{{ProducerID: p5, FirstOffset: 9}, {ProducerID: p7, FirstOffset: 2}, {ProducerID: p7, FirstOffset: 12}},
	}
	d := decodeBlock(blk, 0, true, nil)
	if got := offsetsOf(d.records); !slices.Equal(got, []int64{0, 1, 4, 7, 8, 13}) || d.next != 14 {
		t.Errorf("read_committed: offsets %v next %d, want [0 1 4 7 8 13] 14", got, d.next)
	}
	d = decodeBlock(blk, 0, false, nil)
	if got := offsetsOf(d.records); !slices.Equal(got, []int64{0, 1, 2, 3, 4, 7, 8, 9, 12, 13}) || d.next != 14 {
		t.Errorf("read_uncommitted: offsets %v next %d, want every data record, next 14", got, d.next)
	}
	// From the middle: the aborted list still applies to batches the response starts with.
	d = decodeBlock(blk, 3, true, nil)
	if got := offsetsOf(d.records); !slices.Equal(got, []int64{4, 7, 8, 13}) || d.next != 14 {
		t.Errorf("read_committed from 3: offsets %v next %d", got, d.next)
	}
	// A response of only markers moves next.
	d = decodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{marker(20, p5, true)}}, 20, true, nil)
	if len(d.records) != 0 || d.next != 21 {
		t.Errorf("marker only: %d records next %d, want 0 and 21", len(d.records), d.next)
	}
}

func TestDecodePartial(t *testing.T) {
	partial := &sarama.Records{RecordBatch: &sarama.RecordBatch{FirstOffset: 5, Version: 2, LastOffsetDelta: 9, PartialTrailingRecord: true}}
	d := decodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{batch(0, 5, -1, false), partial}}, 0, false, nil)
	if len(d.records) != 5 || d.next != 5 || d.partialOnly {
		t.Errorf("complete + partial: %d records next %d partialOnly %v; want 5, 5, false", len(d.records), d.next, d.partialOnly)
	}
	d = decodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{partial}}, 5, false, nil)
	if len(d.records) != 0 || d.next != 5 || !d.partialOnly {
		t.Errorf("partial only: %d records next %d partialOnly %v; want 0, 5, true", len(d.records), d.next, d.partialOnly)
	}
	d = decodeBlock(&sarama.FetchResponseBlock{Partial: true}, 5, false, nil)
	if !d.partialOnly {
		t.Error("a block too short for a batch header is not partialOnly")
	}
	d = decodeBlock(&sarama.FetchResponseBlock{}, 5, false, nil)
	if d.partialOnly || d.next != 5 {
		t.Errorf("empty block: partialOnly %v next %d", d.partialOnly, d.next)
	}
}

func TestDecodeLegacyFormat(t *testing.T) {
	ms := &sarama.Records{MsgSet: &sarama.MessageSet{Messages: []*sarama.MessageBlock{{Offset: 0, Msg: &sarama.Message{Value: []byte("x")}}}}}
	if d := decodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{ms}}, 0, false, nil); !errors.Is(d.err, ErrUnsupportedFormat) {
		t.Errorf("legacy message set: err %v", d.err)
	}
}

// A recycled slice is decoded into, not a new one; Recycle clears what it is given.
func TestDecodeIntoRecycled(t *testing.T) {
	f := &Fetcher{}
	buf := make([]Record, 3, 100)
	buf[0].Key = []byte("stale")
	f.Recycle(buf)
	if buf[0].Key != nil {
		t.Fatal("Recycle left a record in place")
	}
	got := f.takeRecords()
	if cap(got) != 100 || f.takeRecords() != nil {
		t.Fatalf("takeRecords: cap %d, want the recycled slice once", cap(got))
	}
	d := decodeBlock(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{batch(0, 5, -1, false)}}, 0, false, got)
	if len(d.records) != 5 || &d.records[0] != &got[:1][0] {
		t.Fatalf("decoded %d records, into the recycled slice: %v", len(d.records), &d.records[0] == &got[:1][0])
	}
}
