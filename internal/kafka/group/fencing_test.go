package group

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// A member that lost its generation (here its poll timeout; equally a session expiry or
// UNKNOWN_MEMBER_ID) keeps giving the generation and member id of its last join in Metadata,
// as Java's ConsumerCoordinator.groupMetadata() does: a zombie's transactional offset commit
// with it is fenced (ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID). Generation -1 with an empty
// member id would pass the coordinator's check (Kafka's ClassicGroup.validateOffsetCommit and
// kfake skip it), and the zombie's transaction would commit its offsets and output while
// another member owns the partitions in a newer generation.
func TestEmbeddedZombieTxnOffsetCommitFenced(t *testing.T) {
	t.Parallel()
	testZombieTxnOffsetCommit(t, kafkatest.Embedded(t))
}
func TestIntegrationZombieTxnOffsetCommitFenced(t *testing.T) {
	testZombieTxnOffsetCommit(t, kafkatest.Real(t))
}

func testZombieTxnOffsetCommit(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	e.rebalance = 2 * time.Second
	topic := e.topic("zombie", 1)
	group := kafkatest.Name(t, "group")
	a := e.member("a", group, []string{topic})
	joinAll(t, a)
	stale := a.Metadata()

	cl := e.cluster()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := produce.New(ctx, produce.Config{Cluster: cl, TransactionalID: kafkatest.Name(t, "txn"), TransactionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	// a stalls past max.poll.interval.ms and loses its generation; b takes the group over.
	a.stopPolling()
	waitRejoin(t, a, ErrPollTimeout)
	b := e.member("b", group, []string{topic})
	jb := joinAll(t, b)
	if len(jb[0].Assignment.Partitions) != 1 {
		t.Fatalf("b owns %v", jb[0].Assignment.Partitions)
	}
	tp := kafka.TopicPartition{Topic: topic, Partition: 0}
	commit := func(md GroupMetadata, off int64) error {
		if err := p.Begin(); err != nil {
			t.Fatal(err)
		}
		err := p.SendOffsets(ctx, map[kafka.TopicPartition]produce.Offset{tp: {Offset: off, LeaderEpoch: -1}},
			produce.GroupMetadata{GroupID: md.GroupID, Generation: md.Generation, MemberID: md.MemberID, InstanceID: md.InstanceID})
		if err != nil {
			_ = p.Abort(ctx)
			return err
		}
		return p.Commit(ctx)
	}
	// The generation a joined last (what Java's groupMetadata() gives) is fenced:
	if err := commit(stale, 10); !errors.Is(err, produce.ErrGroupMember) {
		t.Fatalf("commit with a's last generation %+v: %v, want ErrGroupMember", stale, err)
	}
	// What a stream thread sends when it commits after the loss (Metadata() then):
	now := a.Metadata()
	err = commit(now, 20)
	got, cerr := b.Committed(ctx, []kafka.TopicPartition{tp})
	if cerr != nil {
		t.Fatal(cerr)
	}
	if err == nil || got[tp].Offset == 20 {
		t.Fatalf("zombie a's transactional commit with Metadata() = %+v was accepted (err %v): the group's committed offset is now %d, "+
			"although b owns %s in generation %d", now, err, got[tp].Offset, tp, jb[0].Generation)
	}
}
