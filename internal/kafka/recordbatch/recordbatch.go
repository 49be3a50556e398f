// Package recordbatch decodes Kafka's record batches (message format v2, magic 2) straight
// from a Fetch response's bytes, and encodes and parses the Fetch request and response
// (version 11) that carry them. Keys, values and header values of the decoded records alias
// the response (or a batch's decompressed records): nothing is copied, and the caller keeps
// the response alive as long as it uses them.
//
// sarama decodes every record of a response into a struct of its own, with a few
// allocations each; for small records that decoding cost more than the processing. The
// restore reader (internal/changelog) and the stream thread's fetcher (internal/kafka/fetch)
// send their own Fetch requests and decode with [Decoder]. Java counterpart: the record
// batch iteration of DefaultRecordBatch and the consumer's CompletedFetch.
package recordbatch

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

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// ErrLegacyFormat is returned for a partition holding message sets of the formats before
// record batches (magic 0 and 1), which [Decoder] does not decode.
var ErrLegacyFormat = errors.New("recordbatch: legacy message format")

// ErrMalformed is wrapped by the errors of a response or record batch that cannot be decoded
// (including a CRC mismatch).
var ErrMalformed = errors.New("recordbatch: malformed fetch response")

// Offsets in a record batch's header (format v2, magic 2).
const (
	batchLengthOffset   = 8  // int32: the bytes after this field
	batchEpochOffset    = 12 // int32: partition leader epoch
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

// Batch attributes.
const (
	attrCodec         = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Aborted is an aborted transaction of a Fetch response: its producer id and first offset.
type Aborted struct {
	ProducerID, FirstOffset int64
}

// Record is one record decoded by a [Decoder]. Key, Value and the header bytes alias the
// decoded bytes.
type Record struct {
	// Offset is the record's offset.
	Offset int64
	// Timestamp is in ms since the epoch: the record's CreateTime, or the batch's max
	// timestamp for LogAppendTime batches (-1 when the producer sent none).
	Timestamp int64
	// Key and Value are nil for null, empty (not nil) for empty.
	Key, Value []byte
	// LeaderEpoch is the partition leader epoch of the record's batch (-1 unknown).
	LeaderEpoch int32
	// NumHeaders is the number of headers, encoded in Headers (already checked): read them
	// with [NextHeader].
	NumHeaders int
	// Headers holds the encoded headers.
	Headers []byte
}

// NextHeader returns the first header of b, the Headers of a [Record] (or what an earlier
// NextHeader left of it), and the rest. The value is nil for null. b must hold a header:
// call it Record.NumHeaders times.
func NextHeader(b []byte) (key, value, rest []byte) {
	key, b, _ = varBytes(b)
	value, b, _ = varBytes(b)
	return key, value, b
}

// Count returns the records of the complete data batches of raw (record batches of a fetched
// partition): a capacity for the decoded records.
func Count(raw []byte) int {
	n := 0
	for b := raw; len(b) >= batchHeaderSize; {
		size := 12 + int(int32(binary.BigEndian.Uint32(b[batchLengthOffset:])))
		if size < batchHeaderSize || size > len(b) {
			break
		}
		if b[batchMagicOffset] == 2 && binary.BigEndian.Uint16(b[batchAttrOffset:])&attrControl == 0 {
			n += max(int(int32(binary.BigEndian.Uint32(b[batchCountOffset:]))), 0)
		}
		b = b[size:]
	}
	return min(n, len(raw)/7) // a record takes at least 7 bytes
}

// Decoder decodes the record batches of one fetched partition into the records at offsets
// >= the offset asked for. Control batches are dropped, and when reading committed records
// the batches of aborted transactions: an aborted transaction's producer counts as aborted
// from the transaction's first offset (the response's list) until its abort marker, and its
// transactional batches in that span are skipped, as Kafka's consumer does. A batch cut off
// by the response's size ends the records: the caller fetches it again from [Decoder.Next].
// The zero Decoder is ready for Reset; a Decoder may be reused.
type Decoder struct {
	raw           []byte // batches not started yet
	from          int64
	readCommitted bool
	aborted       []Aborted // sorted by first offset; those not reached yet
	abortedBuf    []Aborted
	abortedPIDs   []int64 // producers inside an aborted transaction; usually none or one
	next          int64
	batches       int
	err           error

	// The batch being decoded.
	recs      []byte // its records not decoded yet
	left      int    // records not decoded yet
	index     int    // of the next record
	base      int64  // its base offset
	baseTime  int64
	logAppend bool
	epoch     int32
}

// Reset starts decoding raw, a fetched partition's record batches asked from offset from;
// with readCommitted, aborted (the response's aborted transactions, in any order; not
// modified) filters the records of aborted transactions.
func (d *Decoder) Reset(raw []byte, from int64, readCommitted bool, aborted []Aborted) {
	*d = Decoder{raw: raw, from: from, readCommitted: readCommitted, next: from,
		abortedBuf: d.abortedBuf[:0], abortedPIDs: d.abortedPIDs[:0]}
	if readCommitted && len(aborted) > 0 {
		d.abortedBuf = append(d.abortedBuf, aborted...)
		if len(aborted) > 1 {
			slices.SortFunc(d.abortedBuf, func(a, b Aborted) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
		}
		d.aborted = d.abortedBuf
	}
}

// NextOffset returns the offset to fetch next: after the last complete batch started
// (control and aborted batches included), at least the offset asked for.
func (d *Decoder) NextOffset() int64 { return d.next }

// Batches returns the complete record batches met so far (control and aborted ones
// included). Once Next returned false, 0 with a non-empty input means it held only a batch
// cut off by the response's size.
func (d *Decoder) Batches() int { return d.batches }

// Next decodes the next deliverable record into rec; false at the end or on an error.
// Errors: [ErrLegacyFormat] (wrapped) for a message set of magic 0 or 1; [ErrMalformed]
// (wrapped) for a batch that does not decode or whose CRC does not match; decompression
// errors. After an error the records returned before it must be dropped.
func (d *Decoder) Next(rec *Record) (bool, error) {
	for {
		for d.left > 0 {
			d.left--
			i := d.index
			d.index++
			rest, tsDelta, offDelta, err := decodeRecord(d.recs, rec)
			if err != nil {
				d.err = fmt.Errorf("%w: record %d of the batch at offset %d: %v", ErrMalformed, i, d.base, err)
				d.left, d.raw = 0, nil
				return false, d.err
			}
			d.recs = rest
			rec.Offset = d.base + offDelta
			if rec.Offset < d.from {
				continue // a batch may start before the offset asked for
			}
			rec.Timestamp = d.baseTime
			if !d.logAppend {
				rec.Timestamp += tsDelta
			}
			rec.LeaderEpoch = d.epoch
			return true, nil
		}
		if d.err != nil {
			return false, d.err
		}
		if !d.nextBatch() {
			return false, d.err
		}
	}
}

// nextBatch starts the next data batch to deliver, skipping control and aborted ones; false
// at the end or on an error (d.err).
func (d *Decoder) nextBatch() bool {
	for len(d.raw) >= 17 {
		raw := d.raw
		base := int64(binary.BigEndian.Uint64(raw))
		size := 12 + int(int32(binary.BigEndian.Uint32(raw[batchLengthOffset:])))
		if magic := raw[batchMagicOffset]; magic != 2 {
			return d.fail(fmt.Errorf("%w: magic %d at offset %d", ErrLegacyFormat, magic, base))
		}
		if size > len(raw) {
			break // cut off by the response's size
		}
		if size < batchHeaderSize {
			return d.fail(fmt.Errorf("%w: record batch at offset %d of %d bytes", ErrMalformed, base, size))
		}
		b := raw[:size]
		d.raw = raw[size:]
		if crc := binary.BigEndian.Uint32(b[batchCRCOffset:]); crc32.Checksum(b[batchAttrOffset:], castagnoli) != crc {
			return d.fail(fmt.Errorf("%w: CRC mismatch in the record batch at offset %d", ErrMalformed, base))
		}
		d.batches++
		attrs := binary.BigEndian.Uint16(b[batchAttrOffset:])
		last := base + int64(int32(binary.BigEndian.Uint32(b[batchLastDeltaOff:])))
		control, transactional := attrs&attrControl != 0, attrs&attrTransactional != 0
		pid := int64(binary.BigEndian.Uint64(b[batchProducerOffset:]))
		if d.readCommitted {
			for len(d.aborted) > 0 && d.aborted[0].FirstOffset <= last {
				if !slices.Contains(d.abortedPIDs, d.aborted[0].ProducerID) {
					d.abortedPIDs = append(d.abortedPIDs, d.aborted[0].ProducerID)
				}
				d.aborted = d.aborted[1:]
			}
		}
		if control || (d.readCommitted && transactional && slices.Contains(d.abortedPIDs, pid)) {
			if control && d.readCommitted && len(d.abortedPIDs) > 0 {
				abort, err := isAbortBatch(b, attrs)
				if err != nil {
					return d.fail(fmt.Errorf("%w (record batch at offset %d)", err, base))
				}
				if abort {
					if i := slices.Index(d.abortedPIDs, pid); i >= 0 {
						d.abortedPIDs = slices.Delete(d.abortedPIDs, i, i+1)
					}
				}
			}
			d.next = max(d.next, last+1)
			continue
		}
		recs, err := batchRecords(b, attrs)
		if err != nil {
			return d.fail(fmt.Errorf("%w (record batch at offset %d)", err, base))
		}
		d.recs, d.index, d.base = recs, 0, base
		d.left = max(int(int32(binary.BigEndian.Uint32(b[batchCountOffset:]))), 0)
		d.logAppend = attrs&attrLogAppendTime != 0
		d.baseTime = int64(binary.BigEndian.Uint64(b[batchBaseTimeOffset:]))
		if d.logAppend {
			d.baseTime = int64(binary.BigEndian.Uint64(b[batchMaxTimeOffset:]))
		}
		d.epoch = int32(binary.BigEndian.Uint32(b[batchEpochOffset:]))
		d.next = max(d.next, last+1)
		if d.left > 0 {
			return true
		}
	}
	d.raw = nil
	return false
}

func (d *Decoder) fail(err error) bool {
	d.err, d.raw, d.left = err, nil, 0
	return false
}

// batchRecords returns the records section of batch b, decompressed by the codec of its
// attributes.
func batchRecords(b []byte, attrs uint16) ([]byte, error) {
	recs := b[batchHeaderSize:]
	codec := attrs & attrCodec
	if codec == 0 {
		return recs, nil
	}
	return decompress(codec, recs)
}

// isAbortBatch reports whether control batch b holds an abort marker: its record's key is
// int16 version, int16 type, and type 0 is ABORT (1 is COMMIT).
func isAbortBatch(b []byte, attrs uint16) (bool, error) {
	if int32(binary.BigEndian.Uint32(b[batchCountOffset:])) < 1 {
		return false, nil
	}
	recs, err := batchRecords(b, attrs)
	if err != nil {
		return false, err
	}
	var rec Record
	if _, _, _, err := decodeRecord(recs, &rec); err != nil {
		return false, fmt.Errorf("%w: control record: %v", ErrMalformed, err)
	}
	return IsAbortMarker(rec.Key), nil
}

// IsAbortMarker reports whether a control record key (int16 version, int16 type) is an abort
// marker (type 0).
func IsAbortMarker(key []byte) bool {
	return len(key) >= 4 && binary.BigEndian.Uint16(key[2:4]) == 0
}

// decodeRecord decodes the record at the start of b (length, attributes, timestamp delta,
// offset delta, key, value, headers) into rec's Key, Value, NumHeaders and Headers, and
// returns the rest of b and the timestamp and offset deltas.
func decodeRecord(b []byte, rec *Record) (rest []byte, tsDelta, offDelta int64, err error) {
	length, n := varint(b)
	if n <= 0 || length < 0 || length > int64(len(b)-n) {
		return nil, 0, 0, errors.New("bad record length")
	}
	rest = b[n+int(length):]
	r := b[n : n+int(length)]
	if len(r) < 1 {
		return nil, 0, 0, errors.New("empty record")
	}
	r = r[1:] // attributes: unused
	if tsDelta, n = varint(r); n <= 0 {
		return nil, 0, 0, errors.New("bad timestamp delta")
	}
	r = r[n:]
	if offDelta, n = varint(r); n <= 0 {
		return nil, 0, 0, errors.New("bad offset delta")
	}
	r = r[n:]
	var ok bool
	if rec.Key, r, ok = varBytes(r); !ok {
		return nil, 0, 0, errors.New("bad key length")
	}
	if rec.Value, r, ok = varBytes(r); !ok {
		return nil, 0, 0, errors.New("bad value length")
	}
	headers, n := varint(r)
	if n <= 0 || headers < 0 || headers > int64(len(r)) {
		return nil, 0, 0, errors.New("bad header count")
	}
	r = r[n:]
	rec.NumHeaders, rec.Headers = int(headers), nil
	if headers > 0 {
		h := r
		for range headers {
			if _, r, ok = varBytes(r); !ok {
				return nil, 0, 0, errors.New("bad header key length")
			}
			if _, r, ok = varBytes(r); !ok {
				return nil, 0, 0, errors.New("bad header value length")
			}
		}
		rec.Headers = h[: len(h)-len(r) : len(h)-len(r)]
	}
	return rest, tsDelta, offDelta, nil
}

// varint decodes a zigzag varint (one byte without a call) and its size; n <= 0 when b does
// not hold one.
func varint(b []byte) (v int64, n int) {
	if len(b) > 0 && b[0] < 0x80 {
		return int64(b[0]>>1) ^ -int64(b[0]&1), 1
	}
	return binary.Varint(b)
}

// varBytes decodes a varint length and that many bytes (-1: nil; 0: empty, not nil); ok is
// false when b does not hold them.
func varBytes(b []byte) (v, rest []byte, ok bool) {
	l, n := varint(b)
	switch {
	case n <= 0 || l < -1 || l > int64(len(b)-n):
		return nil, nil, false
	case l < 0:
		return nil, b[n:], true
	}
	end := n + int(l)
	return b[n:end:end], b[end:], true
}

// decompress decompresses a record batch's records with Kafka's codec codec (1 gzip, 2 snappy
// in the xerial framing or raw, 3 LZ4 frames, 4 zstd).
func decompress(codec uint16, src []byte) ([]byte, error) {
	switch codec {
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, fmt.Errorf("recordbatch: gzip: %w", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("recordbatch: gzip: %w", err)
		}
		return out, nil
	case 2:
		out, err := xerial.Decode(src)
		if err != nil {
			return nil, fmt.Errorf("recordbatch: snappy: %w", err)
		}
		return out, nil
	case 3:
		out, err := io.ReadAll(lz4.NewReader(bytes.NewReader(src)))
		if err != nil {
			return nil, fmt.Errorf("recordbatch: lz4: %w", err)
		}
		return out, nil
	case 4:
		d, err := zstdOnce()
		if err != nil {
			return nil, err
		}
		out, err := d.DecodeAll(src, nil)
		if err != nil {
			return nil, fmt.Errorf("recordbatch: zstd: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: compression codec %d", ErrMalformed, codec)
}

// zstdOnce returns the process's zstd decoder (DecodeAll is safe for concurrent use).
var zstdOnce = sync.OnceValues(func() (*zstd.Decoder, error) {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	if err != nil {
		return nil, fmt.Errorf("recordbatch: zstd: %w", err)
	}
	return d, nil
})
