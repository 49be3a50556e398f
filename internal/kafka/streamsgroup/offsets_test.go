package streamsgroup

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// How a streams group member commits offsets on Apache Kafka 4.4: sarama's OffsetCommit v8
// is UNSUPPORTED_VERSION for it; our OffsetCommit v9 with the member epoch commits, a stale
// epoch is STALE_MEMBER_EPOCH and an unknown member UNKNOWN_MEMBER_ID; the produce package's
// TxnOffsetCommit v3 with the member epoch as the generation commits in a transaction, and a
// stale epoch there is ErrGroupMember (ILLEGAL_GENERATION). OffsetFetch v8 reads them back.
func TestIntegrationOffsetCommitMemberEpoch(t *testing.T) {
	br := kafkatest.Real(t)
	group := kafkatest.Name(t, "sgoff")
	topic := group + "-input"
	kafkatest.CreateTopics(t, br, 1, nil, topic)
	c, _ := coordinatorConn(t, br, kafkatest.SaramaConfig(), group)
	m := &member{t: t, c: c, group: group, id: uuid(t), pid: uuid(t)}
	m.join(&Topology{Subtopologies: []Subtopology{{ID: "0", SourceTopics: []string{topic}}}})
	m.untilAssigned([]Tasks{{Subtopology: "0", Partitions: []int32{0}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	raw := sarama.NewBroker(c.Addr())
	if err := raw.Open(kafkatest.SaramaConfig()); err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	v8 := &sarama.OffsetCommitRequest{Version: 8, ConsumerGroup: group, ConsumerGroupGeneration: m.epoch, ConsumerID: m.id}
	v8.AddBlock(topic, 0, 41, time.Now().UnixMilli(), "")
	resp8, err := raw.CommitOffset(v8)
	if err != nil {
		t.Fatal(err)
	}
	if k := resp8.Errors[topic][0]; k != sarama.ErrUnsupportedVersion {
		t.Fatalf("OffsetCommit v8 by a streams member: %v, want UNSUPPORTED_VERSION", k)
	}
	// fetch reads the committed offset, waiting while a transaction's commit is not complete
	// (UNSTABLE_OFFSET_COMMIT: the markers are being written).
	fetch := func() int64 {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			g := sarama.OffsetFetchRequestGroup{GroupId: group}
			g.AddPartition(topic, 0)
			fresp, err := raw.FetchOffset(&sarama.OffsetFetchRequest{Version: 8, RequireStable: true, Groups: []sarama.OffsetFetchRequestGroup{g}})
			if err != nil {
				t.Fatal(err)
			}
			blk := fresp.GetBlock(topic, 0)
			switch {
			case blk == nil:
				t.Fatalf("OffsetFetch: no block: %+v", fresp)
			case blk.Err == sarama.ErrNoError:
				return blk.Offset
			case blk.Err != sarama.ErrUnstableOffsetCommit || time.Now().After(deadline):
				t.Fatalf("OffsetFetch: %v", blk.Err)
			}
			time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
		}
	}

	commit := func(epoch int32, id string, offset int64) error {
		t.Helper()
		meta := "m"
		resp, err := c.OffsetCommit(ctx, &OffsetCommitRequest{GroupID: group, MemberEpoch: epoch, MemberID: id,
			Topics: []CommitTopic{{Name: topic, Partitions: []CommitPartition{{Partition: 0, Offset: offset, LeaderEpoch: -1, Metadata: &meta}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Err(group)
	}
	if err := commit(m.epoch, m.id, 42); err != nil {
		t.Fatalf("OffsetCommit v9: %v", err)
	}
	if got := fetch(); got != 42 {
		t.Fatalf("committed offset %d, want 42", got)
	}
	if err := commit(m.epoch-1, m.id, 1); !errors.Is(err, ErrStaleMemberEpoch) {
		t.Fatalf("OffsetCommit v9 with a stale epoch: %v, want STALE_MEMBER_EPOCH", err)
	}
	if err := commit(m.epoch, "nobody", 1); !errors.Is(err, sarama.ErrUnknownMemberId) {
		t.Fatalf("OffsetCommit v9 by an unknown member: %v, want UNKNOWN_MEMBER_ID", err)
	}

	cl, err := kafka.NewCluster(kafka.Config{Brokers: br.Addrs, Sarama: kafkatest.SaramaConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	p, err := produce.New(ctx, produce.Config{Cluster: cl, ClientID: "sgoff", TransactionalID: group + "-txn",
		TransactionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	send := func(epoch int32, offset int64) error {
		if err := p.Begin(); err != nil {
			t.Fatal(err)
		}
		return p.SendOffsets(ctx, map[kafka.TopicPartition]produce.Offset{{Topic: topic, Partition: 0}: {Offset: offset, LeaderEpoch: -1}},
			produce.GroupMetadata{GroupID: group, Generation: epoch, MemberID: m.id})
	}
	if err := send(m.epoch, 43); err != nil {
		t.Fatalf("TxnOffsetCommit v3 with the member epoch: %v", err)
	}
	if err := p.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fetch(); got != 43 {
		t.Fatalf("committed offset %d after the transaction, want 43", got)
	}
	if err := send(m.epoch-1, 44); !errors.Is(err, produce.ErrGroupMember) || !errors.Is(err, sarama.ErrIllegalGeneration) {
		t.Fatalf("TxnOffsetCommit v3 with a stale epoch: %v, want ErrGroupMember (ILLEGAL_GENERATION)", err)
	}
	if err := p.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fetch(); got != 43 {
		t.Fatalf("committed offset %d after the aborted transaction, want 43", got)
	}
}
