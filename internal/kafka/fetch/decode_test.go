package fetch

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka/recordbatch"
)

// decodeFunc is decodeBlock's signature: the tests run on decodeBlock (sarama's decoded
// blocks) and on decodeRaw (the same batches encoded as a response carries them).
type decodeFunc func(blk *sarama.FetchResponseBlock, from int64, readCommitted bool, buf []Record) decoded

// bothDecoders runs test on decodeBlock and on decodeRaw.
func bothDecoders(t *testing.T, test func(*testing.T, decodeFunc)) {
	t.Run("sarama", func(t *testing.T) { test(t, decodeBlock) })
	t.Run("raw", func(t *testing.T) { test(t, rawDecode) })
}

// rawDecode encodes blk's record sets and aborted transactions as a Fetch response carries
// them and decodes them with decodeRaw.
func rawDecode(blk *sarama.FetchResponseBlock, from int64, readCommitted bool, buf []Record) decoded {
	var raw []byte
	for _, rs := range blk.RecordsSet {
		if rs.MsgSet != nil {
			raw = appendLegacy(raw, rs.MsgSet)
			continue
		}
		b := encodeBatch(rs.RecordBatch)
		if rs.RecordBatch.PartialTrailingRecord {
			b = b[:40] // cut off by the response's size
		}
		raw = append(raw, b...)
	}
	if blk.Partial && len(raw) == 0 {
		raw = make([]byte, 10) // shorter than a batch header
	}
	var aborted []recordbatch.Aborted
	for _, a := range blk.AbortedTransactions {
		aborted = append(aborted, recordbatch.Aborted{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
	}
	var dec recordbatch.Decoder
	return decodeRaw(&dec, raw, aborted, from, readCommitted, func() []Record { return buf })
}

// encodeBatch encodes rb as a record batch of format v2, uncompressed.
func encodeBatch(rb *sarama.RecordBatch) []byte {
	var recs []byte
	for _, r := range rb.Records {
		body := []byte{0} // attributes
		body = binary.AppendVarint(body, int64(r.TimestampDelta/time.Millisecond))
		body = binary.AppendVarint(body, r.OffsetDelta)
		body = appendVarBytes(body, r.Key)
		body = appendVarBytes(body, r.Value)
		body = binary.AppendVarint(body, int64(len(r.Headers)))
		for _, h := range r.Headers {
			body = appendVarBytes(body, h.Key)
			body = appendVarBytes(body, h.Value)
		}
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	attrs := uint16(0)
	if rb.LogAppendTime {
		attrs |= 0x08
	}
	if rb.IsTransactional {
		attrs |= 0x10
	}
	if rb.Control {
		attrs |= 0x20
	}
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return -1
		}
		return t.UnixMilli()
	}
	be := binary.BigEndian
	b := be.AppendUint64(nil, uint64(rb.FirstOffset))
	b = be.AppendUint32(b, 0) // length, set below
	b = be.AppendUint32(b, uint32(rb.PartitionLeaderEpoch))
	b = append(b, 2)          // magic
	b = be.AppendUint32(b, 0) // CRC, set below
	b = be.AppendUint16(b, attrs)
	b = be.AppendUint32(b, uint32(rb.LastOffsetDelta))
	b = be.AppendUint64(b, uint64(ms(rb.FirstTimestamp)))
	b = be.AppendUint64(b, uint64(ms(rb.MaxTimestamp)))
	b = be.AppendUint64(b, uint64(rb.ProducerID))
	b = be.AppendUint16(b, uint16(rb.ProducerEpoch))
	b = be.AppendUint32(b, uint32(rb.FirstSequence))
	b = be.AppendUint32(b, uint32(len(rb.Records)))
	b = append(b, recs...)
	be.PutUint32(b[8:], uint32(len(b)-12))
	be.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}

// appendLegacy appends the messages of ms in the message format v1 (magic 1), without
// valid CRCs: the decoders refuse them by their magic.
func appendLegacy(b []byte, ms *sarama.MessageSet) []byte {
	be := binary.BigEndian
	for _, m := range ms.Messages {
		msg := be.AppendUint32(nil, 0) // CRC
		msg = append(msg, 1, 0)        // magic, attributes
		msg = be.AppendUint64(msg, 0)  // timestamp
		msg = be.AppendUint32(msg, 0xffffffff)
		msg = be.AppendUint32(msg, uint32(len(m.Msg.Value)))
		msg = append(msg, m.Msg.Value...)
		b = be.AppendUint64(b, uint64(m.Offset))
		b = be.AppendUint32(b, uint32(len(msg)))
		b = append(b, msg...)
	}
	return b
}

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

func TestDecodeFromMidBatch(t *testing.T) { bothDecoders(t, testDecodeFromMidBatch) }

func testDecodeFromMidBatch(t *testing.T, decode decodeFunc) {
	blk := &sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{batch(0, 5, -1, false), batch(5, 2, -1, false)}}
	d := decode(blk, 2, false, nil)
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

func TestDecodeTimestampsAndHeaders(t *testing.T) { bothDecoders(t, testDecodeTimestampsAndHeaders) }

func testDecodeTimestampsAndHeaders(t *testing.T, decode decodeFunc) {
	b := batch(0, 2, -1, false)
	b.RecordBatch.Records[0].Headers = []*sarama.RecordHeader{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("n")}}
	b.RecordBatch.Records[1].Key, b.RecordBatch.Records[1].Value = nil, nil
	d := decode(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{b}}, 0, false, nil)
	h := d.records[0].Headers
	if len(h) != 2 || h[0].Key != "a" || string(h[0].Value) != "1" || h[1].Key != "n" || h[1].Value != nil {
		t.Errorf("headers %+v", h)
	}
	if r := d.records[1]; r.Key != nil || r.Value != nil {
		t.Errorf("null key and value came out as %q %q", r.Key, r.Value)
	}

	la := batch(10, 2, -1, false)
	la.RecordBatch.LogAppendTime = true
	d = decode(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{la}}, 10, false, nil)
	if d.records[0].Timestamp != 1_000_002 || d.records[1].Timestamp != 1_000_002 {
		t.Errorf("LogAppendTime batch: timestamps %d %d, want the max timestamp 1000002", d.records[0].Timestamp, d.records[1].Timestamp)
	}

	none := batch(20, 1, -1, false)
	none.RecordBatch.FirstTimestamp = time.Time{} // -1 on the wire
	d = decode(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{none}}, 20, false, nil)
	if d.records[0].Timestamp != -1 {
		t.Errorf("no timestamp: %d, want -1", d.records[0].Timestamp)
	}
}

// TestDecodeReadCommitted: two producers, one of whose transactions is aborted while the
// other's commits around it, then the aborted producer's next transaction commits.
func TestDecodeReadCommitted(t *testing.T) { bothDecoders(t, testDecodeReadCommitted) }

func testDecodeReadCommitted(t *testing.T, decode decodeFunc) {
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
	d := decode(blk, 0, true, nil)
	if got := offsetsOf(d.records); !slices.Equal(got, []int64{0, 1, 4, 7, 8, 13}) || d.next != 14 {
		t.Errorf("read_committed: offsets %v next %d, want [0 1 4 7 8 13] 14", got, d.next)
	}
	d = decode(blk, 0, false, nil)
	if got := offsetsOf(d.records); !slices.Equal(got, []int64{0, 1, 2, 3, 4, 7, 8, 9, 12, 13}) || d.next != 14 {
		t.Errorf("read_uncommitted: offsets %v next %d, want every data record, next 14", got, d.next)
	}
	// From the middle: the aborted list still applies to batches the response starts with.
	d = decode(blk, 3, true, nil)
	if got := offsetsOf(d.records); !slices.Equal(got, []int64{4, 7, 8, 13}) || d.next != 14 {
		t.Errorf("read_committed from 3: offsets %v next %d", got, d.next)
	}
	// A response of only markers moves next.
	d = decode(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{marker(20, p5, true)}}, 20, true, nil)
	if len(d.records) != 0 || d.next != 21 {
		t.Errorf("marker only: %d records next %d, want 0 and 21", len(d.records), d.next)
	}
}

func TestDecodePartial(t *testing.T) { bothDecoders(t, testDecodePartial) }

func testDecodePartial(t *testing.T, decode decodeFunc) {
	partial := &sarama.Records{RecordBatch: &sarama.RecordBatch{FirstOffset: 5, Version: 2, LastOffsetDelta: 9, PartialTrailingRecord: true}}
	d := decode(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{batch(0, 5, -1, false), partial}}, 0, false, nil)
	if len(d.records) != 5 || d.next != 5 || d.partialOnly {
		t.Errorf("complete + partial: %d records next %d partialOnly %v; want 5, 5, false", len(d.records), d.next, d.partialOnly)
	}
	d = decode(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{partial}}, 5, false, nil)
	if len(d.records) != 0 || d.next != 5 || !d.partialOnly {
		t.Errorf("partial only: %d records next %d partialOnly %v; want 0, 5, true", len(d.records), d.next, d.partialOnly)
	}
	d = decode(&sarama.FetchResponseBlock{Partial: true}, 5, false, nil)
	if !d.partialOnly {
		t.Error("a block too short for a batch header is not partialOnly")
	}
	d = decode(&sarama.FetchResponseBlock{}, 5, false, nil)
	if d.partialOnly || d.next != 5 {
		t.Errorf("empty block: partialOnly %v next %d", d.partialOnly, d.next)
	}
}

func TestDecodeLegacyFormat(t *testing.T) { bothDecoders(t, testDecodeLegacyFormat) }

func testDecodeLegacyFormat(t *testing.T, decode decodeFunc) {
	ms := &sarama.Records{MsgSet: &sarama.MessageSet{Messages: []*sarama.MessageBlock{{Offset: 0, Msg: &sarama.Message{Value: []byte("x")}}}}}
	if d := decode(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{ms}}, 0, false, nil); !errors.Is(d.err, ErrUnsupportedFormat) {
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
	for _, decode := range []decodeFunc{decodeBlock, rawDecode} {
		d := decode(&sarama.FetchResponseBlock{RecordsSet: []*sarama.Records{batch(0, 5, -1, false)}}, 0, false, got)
		if len(d.records) != 5 || &d.records[0] != &got[:1][0] {
			t.Fatalf("decoded %d records, into the recycled slice: %v", len(d.records), &d.records[0] == &got[:1][0])
		}
	}
}

// TestDecodeRawCorrupt: a batch whose CRC does not match fails the partition's decode (with
// recordbatch.ErrMalformed) instead of delivering the records before it.
func TestDecodeRawCorrupt(t *testing.T) {
	raw := append(encodeBatch(batch(0, 2, -1, false).RecordBatch), encodeBatch(batch(2, 2, -1, false).RecordBatch)...)
	raw[len(raw)-3] ^= 0x40
	var dec recordbatch.Decoder
	d := decodeRaw(&dec, raw, nil, 0, false, func() []Record { return nil })
	if !errors.Is(d.err, recordbatch.ErrMalformed) || d.records != nil || d.next != 0 {
		t.Errorf("corrupted second batch: err %v, %d records, next %d; want ErrMalformed and nothing", d.err, len(d.records), d.next)
	}
}
