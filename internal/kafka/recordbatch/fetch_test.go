package recordbatch

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The Fetch v11 codec against franz-go's generated one (kmsg), an encoding written apart
// from ours.

func TestFetchRequestAppendTo(t *testing.T) {
	q := FetchRequest{MaxWaitMs: 500, MinBytes: 1, MaxBytes: 50 << 20, ReadCommitted: true, SessionID: 77, SessionEpoch: 3,
		Partitions: []FetchPartition{
			{TopicPartition{"a", 0}, 10, 1 << 20, 4},
			{TopicPartition{"a", 2}, 20, 2 << 20, -1},
			{TopicPartition{"b", 1}, 30, 1 << 20, 5},
		},
		Forgotten: []TopicPartition{{"a", 1}, {"c", 0}, {"c", 3}},
	}
	k := kmsg.NewPtrFetchRequest()
	k.Version = FetchVersion
	if err := k.ReadFrom(q.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if k.ReplicaID != -1 || k.MaxWaitMillis != 500 || k.MinBytes != 1 || k.MaxBytes != 50<<20 || k.IsolationLevel != 1 ||
		k.SessionID != 77 || k.SessionEpoch != 3 || k.Rack != "" {
		t.Errorf("header fields: %+v", k)
	}
	var got []FetchPartition
	for _, tp := range k.Topics {
		for _, p := range tp.Partitions {
			if p.LogStartOffset != -1 {
				t.Errorf("%s %d: log start offset %d, want -1", tp.Topic, p.Partition, p.LogStartOffset)
			}
			got = append(got, FetchPartition{TopicPartition{tp.Topic, p.Partition}, p.FetchOffset, p.PartitionMaxBytes, p.CurrentLeaderEpoch})
		}
	}
	if len(k.Topics) != 2 || len(got) != 3 || got[0] != q.Partitions[0] || got[1] != q.Partitions[1] || got[2] != q.Partitions[2] {
		t.Errorf("partitions %+v in %d topics, want %+v in 2", got, len(k.Topics), q.Partitions)
	}
	var forgot []TopicPartition
	for _, ft := range k.ForgottenTopics {
		for _, p := range ft.Partitions {
			forgot = append(forgot, TopicPartition{ft.Topic, p})
		}
	}
	if len(k.ForgottenTopics) != 2 || len(forgot) != 3 || forgot[0] != q.Forgotten[0] || forgot[1] != q.Forgotten[1] || forgot[2] != q.Forgotten[2] {
		t.Errorf("forgotten %v in %d topics, want %v in 2", forgot, len(k.ForgottenTopics), q.Forgotten)
	}
}

func TestParseFetch(t *testing.T) {
	k := kmsg.NewPtrFetchResponse()
	k.Version = FetchVersion
	k.ErrorCode, k.SessionID = 0, 42
	ta := kmsg.NewFetchResponseTopic()
	ta.Topic = "a"
	p0 := kmsg.NewFetchResponseTopicPartition()
	p0.Partition, p0.HighWatermark, p0.LastStableOffset, p0.LogStartOffset = 0, 100, 90, 5
	p0.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 50}, {ProducerID: 8, FirstOffset: 60}}
	p0.RecordBatches = []byte("batches")
	p1 := kmsg.NewFetchResponseTopicPartition()
	p1.Partition, p1.ErrorCode = 3, 6 // NOT_LEADER_OR_FOLLOWER
	ta.Partitions = append(ta.Partitions, p0, p1)
	tb := kmsg.NewFetchResponseTopic()
	tb.Topic = "b"
	p2 := kmsg.NewFetchResponseTopicPartition()
	p2.Partition, p2.HighWatermark = 1, 12
	p2.RecordBatches = []byte{}
	tb.Partitions = append(tb.Partitions, p2)
	k.Topics = append(k.Topics, ta, tb)
	body := k.AppendTo(nil)

	resp, err := ParseFetch(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.SessionID != 42 || len(resp.Partitions) != 3 {
		t.Fatalf("response %+v", resp)
	}
	a0, a3, b1 := resp.Partitions[0], resp.Partitions[1], resp.Partitions[2]
	if a0.TopicPartition != (TopicPartition{"a", 0}) || a0.HighWatermark != 100 || a0.LastStableOffset != 90 || a0.LogStartOffset != 5 ||
		len(a0.Aborted) != 2 || a0.Aborted[1] != (Aborted{ProducerID: 8, FirstOffset: 60}) || string(a0.Records) != "batches" {
		t.Errorf("a-0: %+v", a0)
	}
	if a3.TopicPartition != (TopicPartition{"a", 3}) || a3.ErrorCode != 6 || a3.Aborted != nil || a3.Records != nil {
		t.Errorf("a-3: %+v", a3)
	}
	if b1.TopicPartition != (TopicPartition{"b", 1}) || b1.HighWatermark != 12 || b1.Records == nil || len(b1.Records) != 0 {
		t.Errorf("b-1: %+v", b1)
	}
	// The partition slice is reused.
	again, err := ParseFetch(body, resp.Partitions)
	if err != nil || &again.Partitions[0] != &resp.Partitions[0] {
		t.Errorf("a second parse into the first's partitions: %v, reused %v", err, err == nil && &again.Partitions[0] == &resp.Partitions[0])
	}
	if _, err := ParseFetch(body[:len(body)-3], nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("a cut response: %v, want ErrMalformed", err)
	}
}
