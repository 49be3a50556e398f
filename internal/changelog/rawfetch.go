package changelog

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/kstreams-go/kstreams/internal/kafka/kbin"
)

// Restore's own Fetch: the request encoded here, sent on a connection of the reader's own
// (streamsgroup.Conn), and the response's record batches decoded straight into Records whose
// keys, values and header values alias the response. sarama decodes every record into a
// struct of its own first, then restore copied it into a Record: for changelogs of small
// records that decoding was a third of a restore's CPU.

// apiFetch is Fetch's API key; rawFetchVersion the version sent: 11, the last one before the
// flexible encodings and topic ids, which Kafka brokers from 2.3 to 4.x answer.
const (
	apiFetch        int16 = 1
	rawFetchVersion int16 = 11
)

// errLegacyFormat is returned for a partition holding message sets of the formats before
// record batches (magic 0 and 1); the reader fetches such a partition through sarama.
var errLegacyFormat = errors.New("changelog: legacy message format")

// errMalformed is wrapped by the errors of a response or record batch that cannot be decoded.
var errMalformed = errors.New("changelog: malformed fetch response")

// encodeFetch encodes a Fetch v11 request of partition tp from offset from, without a fetch
// session (restore fetches one partition at a time, from where it wants).
func encodeFetch(tp TopicPartition, from int64, maxWait time.Duration, maxBytes int32, readCommitted bool) []byte {
	var w kbin.Writer
	w.Buf = make([]byte, 0, 64+len(tp.Topic))
	w.Int32(-1) // replica id: a consumer
	w.Int32(int32(maxWait.Milliseconds()))
	w.Int32(1) // min bytes
	w.Int32(maxBytes)
	isolation := byte(0)
	if readCommitted {
		isolation = 1
	}
	w.Buf = append(w.Buf, isolation)
	w.Int32(0)  // session id: none
	w.Int32(-1) // session epoch: no session
	w.ArrayLen(1)
	w.String(tp.Topic)
	w.ArrayLen(1)
	w.Int32(tp.Partition)
	w.Int32(-1) // current leader epoch: unknown
	w.Int64(from)
	w.Int64(-1) // log start offset: a consumer's
	w.Int32(maxBytes)
	w.ArrayLen(0) // forgotten topics
	w.String("")  // rack id
	return w.Buf
}

// abortedTxn is an aborted transaction of a Fetch response: its producer and first offset.
type abortedTxn struct {
	producerID, firstOffset int64
}

// fetchedPartition is partition tp's part of a Fetch response.
type fetchedPartition struct {
	errCode int16
	aborted []abortedTxn
	records []byte // record batches, aliasing the response
}

// parseFetch decodes a Fetch v11 response body and returns partition tp's part; found is
// false when the response does not name it.
func parseFetch(body []byte, tp TopicPartition) (p fetchedPartition, found bool, err error) {
	r := kbin.Reader{Buf: body, Malformed: errMalformed}
	r.Int32() // throttle time
	if code := r.Int16(); code != 0 && r.Err == nil {
		return p, false, fmt.Errorf("changelog: fetch %s: error code %d", tp, code)
	}
	r.Int32() // session id
	for range r.ArrayLen("responses", 6) {
		topic := r.String("topic")
		for range r.ArrayLen("partitions", 42) {
			part := r.Int32()
			var q fetchedPartition
			q.errCode = r.Int16()
			r.Int64() // high watermark
			r.Int64() // last stable offset
			r.Int64() // log start offset
			if n := int(r.Int32()); n > 0 && r.Err == nil {
				if n > r.Remaining()/16 {
					r.Fail("%d aborted transactions do not fit in %d bytes", n, r.Remaining())
					break
				}
				q.aborted = make([]abortedTxn, n)
				for i := range q.aborted {
					q.aborted[i] = abortedTxn{producerID: r.Int64(), firstOffset: r.Int64()}
				}
			}
			r.Int32() // preferred read replica
			q.records = r.NullableBytes("records")
			if r.Err == nil && topic == tp.Topic && part == tp.Partition {
				p, found = q, true
			}
		}
	}
	if r.Err != nil {
		return fetchedPartition{}, false, fmt.Errorf("changelog: fetch %s: %w", tp, r.Err)
	}
	return p, found, nil
}

// Offsets in a record batch's header (format v2, magic 2).
const (
	batchLengthOffset   = 8  // int32: the bytes after this field
	batchMagicOffset    = 16 // int8
	batchCRCOffset      = 17 // uint32: CRC-32C of the bytes from the attributes to the end
	batchAttrOffset     = 21 // int16
	batchLastDeltaOff   = 23 // int32: last offset delta
	batchBaseTimeOffset = 27 // int64
	batchMaxTimeOffset  = 35 // int64
	batchProducerOffset = 43 // int64
	batchCountOffset    = 57 // int32: records
	batchHeaderSize     = 61
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decodeBatches turns the record batches of a fetched partition, asked from offset from, into
// the records at offsets >= from, appended to buf[:0] (growing it at most once), and the
// offset to fetch next: after the last complete batch (control and aborted batches
// included), at least from. Keys, values and header values alias raw, or a batch's
// decompressed records. Control batches are dropped, and with readCommitted the batches of
// aborted transactions: an aborted transaction's producer counts as aborted from the
// transaction's first offset (the response's list) until its abort marker, and its
// transactional batches in that span are skipped, as Kafka's consumer does. A batch cut off
// by the response's size ends the records: it is fetched again from next. Errors:
// errLegacyFormat for a message set of magic 0 or 1; errMalformed (wrapped) for a batch that
// does not decode or whose CRC does not match; decompression errors.
func decodeBatches(raw []byte, from int64, readCommitted bool, aborted []abortedTxn, buf []Record) ([]Record, int64, error) {
	n := 0
	for b := raw; len(b) >= batchHeaderSize; {
		size := 12 + int(int32(binary.BigEndian.Uint32(b[batchLengthOffset:])))
		if size < batchHeaderSize || size > len(b) {
			break
		}
		if b[batchMagicOffset] == 2 && binary.BigEndian.Uint16(b[batchAttrOffset:])&0x20 == 0 {
			n += max(int(int32(binary.BigEndian.Uint32(b[batchCountOffset:]))), 0)
		}
		b = b[size:]
	}
	out := slices.Grow(buf[:0], min(n, len(raw)/7)) // a record takes at least 7 bytes
	if readCommitted && len(aborted) > 1 {
		aborted = slices.Clone(aborted)
		slices.SortFunc(aborted, func(a, b abortedTxn) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
	}
	var abortedPIDs []int64 // producers inside an aborted transaction; usually none or one
	next := from
	for len(raw) >= 17 {
		base := int64(binary.BigEndian.Uint64(raw))
		size := 12 + int(int32(binary.BigEndian.Uint32(raw[batchLengthOffset:])))
		if magic := raw[batchMagicOffset]; magic != 2 {
			return nil, from, fmt.Errorf("%w: magic %d at offset %d", errLegacyFormat, magic, base)
		}
		if size > len(raw) {
			break // cut off by the response's size
		}
		if size < batchHeaderSize {
			return nil, from, fmt.Errorf("%w: record batch at offset %d of %d bytes", errMalformed, base, size)
		}
		b := raw[:size]
		raw = raw[size:]
		if crc := binary.BigEndian.Uint32(b[batchCRCOffset:]); crc32.Checksum(b[batchAttrOffset:], castagnoli) != crc {
			return nil, from, fmt.Errorf("%w: CRC mismatch in the record batch at offset %d", errMalformed, base)
		}
		attrs := binary.BigEndian.Uint16(b[batchAttrOffset:])
		last := base + int64(int32(binary.BigEndian.Uint32(b[batchLastDeltaOff:])))
		control, transactional := attrs&0x20 != 0, attrs&0x10 != 0
		pid := int64(binary.BigEndian.Uint64(b[batchProducerOffset:]))
		if readCommitted {
			for len(aborted) > 0 && aborted[0].firstOffset <= last {
				if !slices.Contains(abortedPIDs, aborted[0].producerID) {
					abortedPIDs = append(abortedPIDs, aborted[0].producerID)
				}
				aborted = aborted[1:]
			}
		}
		if control || (readCommitted && transactional && slices.Contains(abortedPIDs, pid)) {
			if control && readCommitted {
				abort, err := isAbortBatch(b)
				if err != nil {
					return nil, from, err
				}
				if abort {
					if i := slices.Index(abortedPIDs, pid); i >= 0 {
						abortedPIDs = slices.Delete(abortedPIDs, i, i+1)
					}
				}
			}
			next = max(next, last+1)
			continue
		}
		recs, err := batchRecords(b, attrs)
		if err != nil {
			return nil, from, fmt.Errorf("%w (record batch at offset %d)", err, base)
		}
		baseTime := int64(binary.BigEndian.Uint64(b[batchBaseTimeOffset:]))
		logAppend := attrs&0x08 != 0
		if logAppend {
			baseTime = int64(binary.BigEndian.Uint64(b[batchMaxTimeOffset:]))
		}
		count := int(int32(binary.BigEndian.Uint32(b[batchCountOffset:])))
		for i := 0; i < count; i++ {
			var rec Record
			var delta, offDelta int64
			if recs, delta, offDelta, rec, err = decodeRecord(recs); err != nil {
				return nil, from, fmt.Errorf("%w: record %d of the batch at offset %d: %v", errMalformed, i, base, err)
			}
			rec.Offset = base + offDelta
			if rec.Offset < from {
				continue // a batch may start before the offset asked for
			}
			rec.Timestamp = baseTime
			if !logAppend {
				rec.Timestamp += delta
			}
			out = append(out, rec)
		}
		next = max(next, last+1)
	}
	return out, next, nil
}

// batchRecords returns the records section of batch b, decompressed by the codec of its
// attributes.
func batchRecords(b []byte, attrs uint16) ([]byte, error) {
	recs := b[batchHeaderSize:]
	codec := attrs & 0x07
	if codec == 0 {
		return recs, nil
	}
	return decompress(codec, recs)
}

// isAbortBatch reports whether control batch b holds an abort marker (see isAbortMarker).
func isAbortBatch(b []byte) (bool, error) {
	if int32(binary.BigEndian.Uint32(b[batchCountOffset:])) < 1 {
		return false, nil
	}
	recs, err := batchRecords(b, binary.BigEndian.Uint16(b[batchAttrOffset:]))
	if err != nil {
		return false, err
	}
	_, _, _, rec, err := decodeRecord(recs)
	if err != nil {
		return false, fmt.Errorf("%w: control record: %v", errMalformed, err)
	}
	return isAbortMarker(rec.Key), nil
}

// decodeRecord decodes the record at the start of b (length, attributes, timestamp delta,
// offset delta, key, value, headers) and returns the rest of b, the timestamp and offset
// deltas and the record (Key, Value and Headers set).
func decodeRecord(b []byte) (rest []byte, tsDelta, offDelta int64, rec Record, err error) {
	length, n := varint(b)
	if n <= 0 || length < 0 || length > int64(len(b)-n) {
		return nil, 0, 0, rec, errors.New("bad record length")
	}
	rest = b[n+int(length):]
	r := b[n : n+int(length)]
	if len(r) < 1 {
		return nil, 0, 0, rec, errors.New("empty record")
	}
	r = r[1:] // attributes: unused
	if tsDelta, n = varint(r); n <= 0 {
		return nil, 0, 0, rec, errors.New("bad timestamp delta")
	}
	r = r[n:]
	if offDelta, n = varint(r); n <= 0 {
		return nil, 0, 0, rec, errors.New("bad offset delta")
	}
	r = r[n:]
	if rec.Key, r, err = varBytes(r, "key"); err != nil {
		return nil, 0, 0, rec, err
	}
	if rec.Value, r, err = varBytes(r, "value"); err != nil {
		return nil, 0, 0, rec, err
	}
	headers, n := varint(r)
	if n <= 0 || headers < 0 || headers > int64(len(r)) {
		return nil, 0, 0, rec, errors.New("bad header count")
	}
	r = r[n:]
	for range headers {
		var k, v []byte
		if k, r, err = varBytes(r, "header key"); err != nil {
			return nil, 0, 0, rec, err
		}
		if v, r, err = varBytes(r, "header value"); err != nil {
			return nil, 0, 0, rec, err
		}
		rec.Headers.Add(string(k), v)
	}
	return rest, tsDelta, offDelta, rec, nil
}

// varint decodes a zigzag varint (one byte without a call) and its size; n <= 0 when b does
// not hold one.
func varint(b []byte) (v int64, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		return int64(b[0]>>1) ^ -int64(b[0]&1), 1
	}
	return binary.Varint(b)
}

// varBytes decodes a varint length and that many bytes (-1: nil; 0: empty, not nil).
func varBytes(b []byte, what string) (v, rest []byte, err error) {
	l, n := varint(b)
	switch {
	case n <= 0 || l < -1 || l > int64(len(b)-n):
		return nil, nil, fmt.Errorf("bad %s length", what)
	case l < 0:
		return nil, b[n:], nil
	}
	end := n + int(l)
	return b[n:end:end], b[end:], nil
}

// decompress decompresses a record batch's records with Kafka's codec codec (1 gzip, 2 snappy
// in the xerial framing or raw, 3 LZ4 frames, 4 zstd).
func decompress(codec uint16, src []byte) ([]byte, error) {
	switch codec {
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, fmt.Errorf("changelog: gzip: %w", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("changelog: gzip: %w", err)
		}
		return out, nil
	case 2:
		out, err := xerial.Decode(src)
		if err != nil {
			return nil, fmt.Errorf("changelog: snappy: %w", err)
		}
		return out, nil
	case 3:
		out, err := io.ReadAll(lz4.NewReader(bytes.NewReader(src)))
		if err != nil {
			return nil, fmt.Errorf("changelog: lz4: %w", err)
		}
		return out, nil
	case 4:
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		out, err := d.DecodeAll(src, nil)
		if err != nil {
			return nil, fmt.Errorf("changelog: zstd: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: compression codec %d", errMalformed, codec)
}

var zstdOnce = sync.OnceValues(func() (*zstd.Decoder, error) {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	if err != nil {
		return nil, fmt.Errorf("changelog: zstd: %w", err)
	}
	return d, nil
})

// zstdDecoder returns the process's zstd decoder (DecodeAll is safe for concurrent use).
func zstdDecoder() (*zstd.Decoder, error) { return zstdOnce() }
