package recordbatch

import (
	"fmt"

	"github.com/kstreams-go/kstreams/internal/kafka/kbin"
)

// APIKeyFetch is Fetch's API key; FetchVersion the version encoded here: 11, the last one
// before the flexible encodings and topic ids, which Kafka brokers from 2.3 to 4.x answer.
const (
	APIKeyFetch  int16 = 1
	FetchVersion int16 = 11
)

// FetchRequest is a Fetch v11 request (Java: FetchRequest), encoded by AppendTo.
type FetchRequest struct {
	// MaxWaitMs is fetch.max.wait.ms: how long the broker may wait for MinBytes.
	MaxWaitMs int32
	// MinBytes is fetch.min.bytes; MaxBytes fetch.max.bytes, in bytes.
	MinBytes, MaxBytes int32
	// ReadCommitted is isolation.level read_committed (else read_uncommitted).
	ReadCommitted bool
	// SessionID and SessionEpoch are the incremental fetch session's (KIP-227): 0 and -1
	// for none, 0 and 0 to open one, the session's id and its epoch within it, or its id
	// and -1 to close it.
	SessionID, SessionEpoch int32
	// Partitions are the partitions asked for, those of one topic next to each other.
	Partitions []FetchPartition
	// Forgotten are the partitions an incremental request takes out of the session, those of
	// one topic next to each other.
	Forgotten []TopicPartition
}

// TopicPartition names a partition (Java: TopicPartition).
type TopicPartition struct {
	// Topic is the topic's name.
	Topic string
	// Partition is the partition's number.
	Partition int32
}

// FetchPartition is one partition of a [FetchRequest].
type FetchPartition struct {
	TopicPartition
	// Offset is the fetch position.
	Offset int64
	// MaxBytes is max.partition.fetch.bytes for this partition, in bytes.
	MaxBytes int32
	// LeaderEpoch is the current leader epoch the client knows (-1 unknown).
	LeaderEpoch int32
}

// AppendTo appends the request's body (after the request header) to dst.
func (q *FetchRequest) AppendTo(dst []byte) []byte {
	w := kbin.Writer{Buf: dst}
	w.Int32(-1) // replica id: a consumer
	w.Int32(q.MaxWaitMs)
	w.Int32(q.MinBytes)
	w.Int32(q.MaxBytes)
	isolation := byte(0)
	if q.ReadCommitted {
		isolation = 1
	}
	w.Buf = append(w.Buf, isolation)
	w.Int32(q.SessionID)
	w.Int32(q.SessionEpoch)
	ps := q.Partitions
	byTopic(&w, len(ps), func(i int) string { return ps[i].Topic }, func(i int) {
		p := &ps[i]
		w.Int32(p.Partition)
		w.Int32(p.LeaderEpoch)
		w.Int64(p.Offset)
		w.Int64(-1) // log start offset: a consumer's
		w.Int32(p.MaxBytes)
	})
	fs := q.Forgotten
	byTopic(&w, len(fs), func(i int) string { return fs[i].Topic }, func(i int) { w.Int32(fs[i].Partition) })
	w.String("") // rack id
	return w.Buf
}

// topics counts the runs of equal topics among n partitions.
// byTopic writes n partitions, sorted by topic, as the request's array of topics, each with
// its array of partitions: topic(i) is partition i's topic, and part writes its fields.
func byTopic(w *kbin.Writer, n int, topic func(int) string, part func(int)) {
	w.ArrayLen(topics(n, topic))
	for i := 0; i < n; {
		j := i + 1
		for j < n && topic(j) == topic(i) {
			j++
		}
		w.String(topic(i))
		w.ArrayLen(j - i)
		for k := i; k < j; k++ {
			part(k)
		}
		i = j
	}
}

func topics(n int, topic func(int) string) int {
	t := 0
	for i := range n {
		if i == 0 || topic(i) != topic(i-1) {
			t++
		}
	}
	return t
}

// FetchResponse is a Fetch v11 response, parsed by ParseFetch.
type FetchResponse struct {
	// ErrorCode is the top-level error (a fetch session's: FETCH_SESSION_ID_NOT_FOUND,
	// INVALID_FETCH_SESSION_EPOCH, ...); 0 for none.
	ErrorCode int16
	// SessionID is the fetch session's id; 0 when the broker keeps none.
	SessionID int32
	// Partitions are the partitions of the response: in an incremental session only those
	// with news.
	Partitions []FetchedPartition
}

// FetchedPartition is one partition of a [FetchResponse].
type FetchedPartition struct {
	TopicPartition
	// ErrorCode is the partition's error; 0 for none.
	ErrorCode int16
	// HighWatermark, LastStableOffset and LogStartOffset are the partition's (-1 unknown).
	HighWatermark, LastStableOffset, LogStartOffset int64
	// Aborted are the aborted transactions in the fetched range (read_committed).
	Aborted []Aborted
	// Records are the record batches, aliasing the response: decode them with [Decoder].
	Records []byte
}

// ParseFetch parses a Fetch v11 response body, its partitions appended to parts[:0] (Topic
// strings are shared by the partitions of a topic; Records alias body). Errors wrap
// [ErrMalformed].
func ParseFetch(body []byte, parts []FetchedPartition) (FetchResponse, error) {
	resp := FetchResponse{Partitions: parts[:0]}
	r := kbin.Reader{Buf: body, Malformed: ErrMalformed}
	r.Int32() // throttle time
	resp.ErrorCode = r.Int16()
	resp.SessionID = r.Int32()
	for range r.ArrayLen("responses", 6) {
		topic := r.String("topic")
		for range r.ArrayLen("partitions", 42) {
			p := FetchedPartition{TopicPartition: TopicPartition{Topic: topic, Partition: r.Int32()}}
			p.ErrorCode = r.Int16()
			p.HighWatermark = r.Int64()
			p.LastStableOffset = r.Int64()
			p.LogStartOffset = r.Int64()
			if n := int(r.Int32()); n > 0 && r.Err == nil {
				if n > r.Remaining()/16 {
					r.Fail("%d aborted transactions do not fit in %d bytes", n, r.Remaining())
					break
				}
				p.Aborted = make([]Aborted, n)
				for i := range p.Aborted {
					p.Aborted[i] = Aborted{ProducerID: r.Int64(), FirstOffset: r.Int64()}
				}
			}
			r.Int32() // preferred read replica
			p.Records = r.NullableBytes("records")
			if r.Err != nil {
				break
			}
			resp.Partitions = append(resp.Partitions, p)
		}
	}
	if r.Err != nil {
		clear(resp.Partitions)
		return FetchResponse{Partitions: resp.Partitions[:0]}, fmt.Errorf("fetch response: %w", r.Err)
	}
	return resp, nil
}
