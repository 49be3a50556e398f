package changelog

import (
	"fmt"
	"slices"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka/recordbatch"
)

// Restore's own Fetch: the request encoded by recordbatch, sent on a connection of the reader's own
// (streamsgroup.Conn), and the response's record batches decoded straight into Records whose
// keys, values and header values alias the response. sarama decodes every record into a
// struct of its own first, then restore copied it into a Record: for changelogs of small
// records that decoding was a third of a restore's CPU.

// apiFetch is Fetch's API key; rawFetchVersion the version sent (recordbatch's).
const (
	apiFetch        = recordbatch.APIKeyFetch
	rawFetchVersion = recordbatch.FetchVersion
)

// errLegacyFormat is returned for a partition holding message sets of the formats before
// record batches (magic 0 and 1); the reader fetches such a partition through sarama.
var errLegacyFormat = recordbatch.ErrLegacyFormat

// errMalformed is wrapped by the errors of a response or record batch that cannot be decoded.
var errMalformed = recordbatch.ErrMalformed

// encodeFetch encodes a Fetch v11 request of partition tp from offset from, without a fetch
// session (restore fetches one partition at a time, from where it wants).
func encodeFetch(tp TopicPartition, from int64, maxWait time.Duration, maxBytes int32, readCommitted bool) []byte {
	q := recordbatch.FetchRequest{MaxWaitMs: int32(maxWait.Milliseconds()), MinBytes: 1, MaxBytes: maxBytes,
		ReadCommitted: readCommitted, SessionEpoch: -1,
		Partitions: []recordbatch.FetchPartition{{TopicPartition: recordbatch.TopicPartition{Topic: tp.Topic, Partition: tp.Partition},
			Offset: from, MaxBytes: maxBytes, LeaderEpoch: -1}}}
	return q.AppendTo(make([]byte, 0, 64+len(tp.Topic)))
}

// parseFetch decodes a Fetch v11 response body and returns partition tp's part (its Records
// aliasing body); found is false when the response does not name it.
func parseFetch(body []byte, tp TopicPartition) (p recordbatch.FetchedPartition, found bool, err error) {
	resp, err := recordbatch.ParseFetch(body, nil)
	if err != nil {
		return p, false, fmt.Errorf("changelog: fetch %s: %w", tp, err)
	}
	if resp.ErrorCode != 0 {
		return p, false, fmt.Errorf("changelog: fetch %s: error code %d", tp, resp.ErrorCode)
	}
	for _, q := range resp.Partitions {
		if q.Topic == tp.Topic && q.Partition == tp.Partition {
			return q, true, nil
		}
	}
	return p, false, nil
}

// decodeBatches turns the record batches of a fetched partition, asked from offset from, into
// the records at offsets >= from, appended to buf[:0] (growing it at most once), and the
// offset to fetch next: after the last complete batch (control and aborted batches
// included), at least from. It decodes with recordbatch.Decoder: keys, values and header
// values alias raw, or a batch's decompressed records; control batches are dropped, and with
// readCommitted the batches of aborted transactions; a batch cut off by the response's size
// ends the records. Errors: errLegacyFormat for a message set of magic 0 or 1; errMalformed
// (wrapped) for a batch that does not decode or whose CRC does not match; decompression
// errors.
func decodeBatches(raw []byte, from int64, readCommitted bool, aborted []recordbatch.Aborted, buf []Record) ([]Record, int64, error) {
	out := slices.Grow(buf[:0], recordbatch.Count(raw))
	var d recordbatch.Decoder
	d.Reset(raw, from, readCommitted, aborted)
	var rec recordbatch.Record
	for {
		ok, err := d.Next(&rec)
		if err != nil {
			clear(out)
			return nil, from, err
		}
		if !ok {
			break
		}
		r := Record{Offset: rec.Offset, Timestamp: rec.Timestamp, Key: rec.Key, Value: rec.Value}
		for h := rec.Headers; len(h) > 0; {
			var k, v []byte
			k, v, h = recordbatch.NextHeader(h)
			r.Headers.Add(string(k), v)
		}
		out = append(out, r)
	}
	return out, d.NextOffset(), nil
}
