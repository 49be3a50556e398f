package fetch

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka/recordbatch"
)

// decoded is one partition's part of a fetch response, decoded.
type decoded struct {
	records []Record
	// next is the position after the complete batches: the last one's last offset + 1
	// (control batches and aborted batches included), at least from.
	next int64
	// partialOnly: the block held no complete batch, only one cut off by the size limit.
	partialOnly bool
	// err is ErrUnsupportedFormat for legacy message sets; from decodeRaw also a record batch
	// that does not decode (recordbatch.ErrMalformed: a CRC mismatch, ...).
	err error
}

// decodeRaw turns raw, the record batches of a fetch response's partition asked from offset
// from, into the records at offsets >= from, as decodeBlock does with sarama's decoded
// blocks, with dec (see recordbatch.Decoder): keys, values and header values alias raw (or a
// batch's decompressed records). aborted are the response's aborted transactions of the
// partition. The records go into a slice of take (a recycled one) when there are any.
func decodeRaw(dec *recordbatch.Decoder, raw []byte, aborted []recordbatch.Aborted, from int64, readCommitted bool, take func() []Record) decoded {
	d := decoded{next: from}
	if n := recordbatch.Count(raw); n > 0 {
		d.records = slices.Grow(take()[:0], n)
	}
	dec.Reset(raw, from, readCommitted, aborted)
	var rec recordbatch.Record
	for {
		ok, err := dec.Next(&rec)
		if err != nil {
			clear(d.records)
			d.records = nil
			if errors.Is(err, recordbatch.ErrLegacyFormat) {
				d.err = ErrUnsupportedFormat
			} else {
				d.err = fmt.Errorf("fetch: %w", err)
			}
			return d
		}
		if !ok {
			break
		}
		r := Record{Offset: rec.Offset, Timestamp: rec.Timestamp, Key: rec.Key, Value: rec.Value, LeaderEpoch: rec.LeaderEpoch}
		if rec.NumHeaders > 0 {
			r.Headers = make([]Header, rec.NumHeaders)
			h := rec.Headers
			for i := range r.Headers {
				var k, v []byte
				k, v, h = recordbatch.NextHeader(h)
				r.Headers[i] = Header{Key: string(k), Value: v}
			}
		}
		d.records = append(d.records, r)
	}
	d.next = dec.NextOffset()
	d.partialOnly = dec.Batches() == 0 && len(raw) > 0
	return d
}

// decodeBlock turns a fetch response block asked from offset from into the records at
// offsets >= from, in order, appended to buf[:0] (growing it at most once). Control batches are dropped, and
// with readCommitted the batches of aborted transactions: as in Java's consumer, an aborted
// transaction's producer id counts as aborted from the transaction's first offset (from the
// response's aborted-transaction list) until that producer's abort marker, and its
// transactional batches in that span are skipped. A batch cut off by the size limit
// (PartialTrailingRecord) ends the block: it is fetched again from next.
func decodeBlock(blk *sarama.FetchResponseBlock, from int64, readCommitted bool, buf []Record) decoded {
	d := decoded{next: from}
	n, complete := 0, 0
	for _, rs := range blk.RecordsSet {
		if rs == nil {
			continue
		}
		if rs.RecordBatch == nil {
			if rs.MsgSet != nil && len(rs.MsgSet.Messages) > 0 {
				d.err = ErrUnsupportedFormat
				return d
			}
			continue
		}
		if rb := rs.RecordBatch; !rb.Control && !rb.PartialTrailingRecord {
			n += len(rb.Records)
		}
	}
	if n > 0 {
		d.records = slices.Grow(buf[:0], n)
	}

	var aborted []sarama.AbortedTransaction
	var abortedPIDs []int64 // producers inside an aborted transaction; usually none or one
	if readCommitted && len(blk.AbortedTransactions) > 0 {
		aborted = make([]sarama.AbortedTransaction, 0, len(blk.AbortedTransactions))
		for _, a := range blk.AbortedTransactions {
			if a != nil {
				aborted = append(aborted, *a)
			}
		}
		slices.SortFunc(aborted, func(a, b sarama.AbortedTransaction) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	}

	for _, rs := range blk.RecordsSet {
		if rs == nil || rs.RecordBatch == nil {
			continue
		}
		rb := rs.RecordBatch
		if rb.PartialTrailingRecord {
			break
		}
		complete++
		last := rb.LastOffset()
		if readCommitted && rb.ProducerID >= 0 {
			for len(aborted) > 0 && aborted[0].FirstOffset <= last {
				if !slices.Contains(abortedPIDs, aborted[0].ProducerID) {
					abortedPIDs = append(abortedPIDs, aborted[0].ProducerID)
				}
				aborted = aborted[1:]
			}
			if rb.Control {
				if isAbort(rb) {
					if i := slices.Index(abortedPIDs, rb.ProducerID); i >= 0 {
						abortedPIDs = slices.Delete(abortedPIDs, i, i+1)
					}
				}
			} else if rb.IsTransactional && slices.Contains(abortedPIDs, rb.ProducerID) {
				d.next = max(d.next, last+1)
				continue
			}
		}
		if rb.Control {
			d.next = max(d.next, last+1)
			continue
		}
		base := int64(-1)
		if !rb.FirstTimestamp.IsZero() {
			base = rb.FirstTimestamp.UnixMilli()
		}
		logAppend := int64(-1)
		if rb.LogAppendTime && !rb.MaxTimestamp.IsZero() {
			logAppend = rb.MaxTimestamp.UnixMilli()
		}
		for _, r := range rb.Records {
			off := rb.FirstOffset + r.OffsetDelta
			if off < from {
				continue // a batch may start before the offset asked for
			}
			ts := base + int64(r.TimestampDelta/time.Millisecond)
			if rb.LogAppendTime {
				ts = logAppend
			}
			rec := Record{Offset: off, Timestamp: ts, Key: r.Key, Value: r.Value, LeaderEpoch: rb.PartitionLeaderEpoch}
			if len(r.Headers) > 0 {
				rec.Headers = make([]Header, len(r.Headers))
				for i, h := range r.Headers {
					rec.Headers[i] = Header{Key: string(h.Key), Value: h.Value}
				}
			}
			d.records = append(d.records, rec)
		}
		d.next = max(d.next, last+1)
	}
	d.partialOnly = complete == 0 && (blk.Partial || len(blk.RecordsSet) > 0)
	return d
}

// isAbort reports whether control batch rb holds an abort marker: its record's key is
// int16 version, int16 type, and type 0 is ABORT (1 is COMMIT).
func isAbort(rb *sarama.RecordBatch) bool {
	if len(rb.Records) == 0 {
		return false
	}
	k := rb.Records[0].Key
	return len(k) >= 4 && binary.BigEndian.Uint16(k[2:4]) == 0
}
