package group

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

var none = Offset{Offset: -1, LeaderEpoch: -1}

// Commit then Committed gives back offset, leader epoch and metadata; a partition without a
// commit says -1; a commit of a stale generation fails with ErrMemberLost.
func TestCommit(t *testing.T)            { testCommit(t, kafkatest.Embedded(t)) }
func TestIntegrationCommit(t *testing.T) { testCommit(t, kafkatest.Real(t)) }

func testCommit(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("commit", 3)
	group := kafkatest.Name(t, "group")
	m1 := e.member("m1", group, []string{topic})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tp0, tp1, tp2 := kafka.TopicPartition{Topic: topic, Partition: 0}, kafka.TopicPartition{Topic: topic, Partition: 1}, kafka.TopicPartition{Topic: topic, Partition: 2}

	// Before any member joined: nothing committed (kfake answers GROUP_ID_NOT_FOUND here).
	got, err := m1.Committed(ctx, []kafka.TopicPartition{tp0, tp1})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[kafka.TopicPartition]Offset{tp0: none, tp1: none}; !maps.Equal(got, want) {
		t.Fatalf("Committed before any commit = %v, want %v", got, want)
	}
	if err := m1.Commit(ctx, map[kafka.TopicPartition]Offset{tp0: {Offset: 1}}); !errors.Is(err, ErrNotJoined) {
		t.Fatalf("Commit before Join = %v, want ErrNotJoined", err)
	}

	formGroup(t, m1)
	if got, err := m1.Committed(ctx, []kafka.TopicPartition{tp0}); err != nil || got[tp0] != none {
		t.Fatalf("Committed of a joined group without commits = %v, %v", got, err)
	}
	offsets := map[kafka.TopicPartition]Offset{
		tp0: {Offset: 42, LeaderEpoch: 7, Metadata: "task 0_0 stream time 1234"},
		tp1: {Offset: 0, LeaderEpoch: -1},
	}
	if err := m1.Commit(ctx, offsets); err != nil {
		t.Fatal(err)
	}
	got, err = m1.Committed(ctx, []kafka.TopicPartition{tp0, tp1, tp2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[kafka.TopicPartition]Offset{tp0: offsets[tp0], tp1: offsets[tp1], tp2: none}
	if !maps.Equal(got, want) {
		t.Fatalf("Committed = %v, want %v", got, want)
	}
	// Committed does not need the member: another one of the group reads the same.
	m2 := e.member("m2", group, []string{topic})
	if got, err := m2.Committed(ctx, []kafka.TopicPartition{tp0}); err != nil || got[tp0] != offsets[tp0] {
		t.Fatalf("Committed of a member that has not joined = %v, %v", got, err)
	}
	if err := m1.Commit(ctx, map[kafka.TopicPartition]Offset{tp0: {Offset: -2}}); err == nil {
		t.Fatal("Commit of a negative offset succeeded")
	}

	// m2 joins: m1 rejoins to a new generation. A commit with the old one is refused.
	js := formGroup(t, m1, m2)
	gen := js[0].Generation
	m1.mu.Lock()
	m1.generation = gen - 1
	m1.mu.Unlock()
	err = m1.Commit(ctx, map[kafka.TopicPartition]Offset{tp0: {Offset: 50, LeaderEpoch: -1}})
	if !errors.Is(err, ErrMemberLost) || !errors.Is(err, sarama.ErrIllegalGeneration) {
		t.Fatalf("Commit of a stale generation = %v, want ErrMemberLost (ILLEGAL_GENERATION)", err)
	}
	if err := m1.RejoinNeeded(); !errors.Is(err, ErrMemberLost) {
		t.Fatalf("RejoinNeeded after a stale commit = %v", err)
	}
	if md := m1.Metadata(); md.MemberID != js[0].MemberID || md.Generation < 1 {
		t.Fatalf("Metadata after ILLEGAL_GENERATION = %+v, want the last join's (member id %s)", md, js[0].MemberID)
	}
	if err := m1.Commit(ctx, map[kafka.TopicPartition]Offset{tp0: {Offset: 50}}); !errors.Is(err, ErrMemberLost) {
		t.Fatalf("Commit of a lost member = %v", err)
	}
	if got, err := m1.Committed(ctx, []kafka.TopicPartition{tp0}); err != nil || got[tp0] != offsets[tp0] {
		t.Fatalf("Committed after the refused commit = %v, %v", got, err)
	}
	// m2's generation still stands; m1 rejoins and commits again.
	if err := m2.Commit(ctx, map[kafka.TopicPartition]Offset{tp2: {Offset: 9, LeaderEpoch: 1, Metadata: "m2"}}); err != nil {
		t.Fatal(err)
	}
	checkGeneration(t, rejoinAfter(t, m1, m2))
	if err := m1.Commit(ctx, map[kafka.TopicPartition]Offset{tp0: {Offset: 50, LeaderEpoch: -1}}); err != nil {
		t.Fatal(err)
	}
	got, err = m2.Committed(ctx, []kafka.TopicPartition{tp0, tp2})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[kafka.TopicPartition]Offset{tp0: {Offset: 50, LeaderEpoch: -1}, tp2: {Offset: 9, LeaderEpoch: 1, Metadata: "m2"}}; !maps.Equal(got, want) {
		t.Fatalf("Committed = %v, want %v", got, want)
	}
}

// require_stable (KIP-447): while a transaction holds offsets for a partition, Committed
// retries until the transaction commits, then returns its offset; CommittedStable does not
// wait: it returns that partition as unstable at once, and the other partitions' offsets.
func TestCommittedRequireStable(t *testing.T)            { testRequireStable(t, kafkatest.Embedded(t)) }
func TestIntegrationCommittedRequireStable(t *testing.T) { testRequireStable(t, kafkatest.Real(t)) }

func testRequireStable(t *testing.T, br kafkatest.Broker) {
	e := newEnv(t, br)
	topic := e.topic("stable", 2)
	group := kafkatest.Name(t, "group")
	m1 := e.member("m1", group, []string{topic})
	formGroup(t, m1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tp := kafka.TopicPartition{Topic: topic, Partition: 0}
	if err := m1.Commit(ctx, map[kafka.TopicPartition]Offset{tp: {Offset: 10, LeaderEpoch: -1, Metadata: "plain"}}); err != nil {
		t.Fatal(err)
	}

	other := kafka.TopicPartition{Topic: topic, Partition: 1}
	if err := m1.Commit(ctx, map[kafka.TopicPartition]Offset{other: {Offset: 7, LeaderEpoch: -1}}); err != nil {
		t.Fatal(err)
	}

	txn := newRawTxn(t, e, kafkatest.Name(t, "txn"))
	txn.addOffsets(group)
	md := m1.Metadata()
	txn.commitOffsets(md, tp, 100, "in txn")

	// Apache Kafka answers per partition; kfake holds every partition of the group unstable.
	wantStable, wantUnstable := map[kafka.TopicPartition]Offset{other: {Offset: 7, LeaderEpoch: -1}}, []kafka.TopicPartition{tp}
	if br.Kind == kafkatest.Kfake {
		wantStable, wantUnstable = map[kafka.TopicPartition]Offset{}, []kafka.TopicPartition{tp, other}
	}
	stable, unstable, err := m1.CommittedStable(ctx, []kafka.TopicPartition{tp, other})
	slices.SortFunc(unstable, func(a, b kafka.TopicPartition) int { return int(a.Partition - b.Partition) })
	if err != nil || !maps.Equal(stable, wantStable) || !slices.Equal(unstable, wantUnstable) {
		t.Fatalf("CommittedStable during the transaction = %v, unstable %v, %v; want %v, unstable %v", stable, unstable, err, wantStable, wantUnstable)
	}

	// The offset is unstable: Committed retries until its context ends.
	sctx, scancel := context.WithTimeout(ctx, time.Second)
	_, err = m1.Committed(sctx, []kafka.TopicPartition{tp})
	scancel()
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, sarama.ErrUnstableOffsetCommit) {
		t.Fatalf("Committed during the transaction = %v, want DeadlineExceeded after UNSTABLE_OFFSET_COMMIT", err)
	}

	// Committed waits for the transaction's end.
	type result struct {
		got map[kafka.TopicPartition]Offset
		err error
	}
	done := make(chan result, 1)
	before := m1.unstable.Load()
	go func() {
		got, err := m1.Committed(ctx, []kafka.TopicPartition{tp})
		done <- result{got, err}
	}()
	eventually(t, 30*time.Second, func() error {
		if m1.unstable.Load() < before+2 {
			return fmt.Errorf("Committed has not retried after UNSTABLE_OFFSET_COMMIT")
		}
		return nil
	})
	txn.end(true)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := (Offset{Offset: 100, LeaderEpoch: -1, Metadata: "in txn"}); r.got[tp] != want {
		t.Fatalf("Committed after the transaction = %v, want %v", r.got[tp], want)
	}
	if stable, unstable, err := m1.CommittedStable(ctx, []kafka.TopicPartition{tp}); err != nil || len(unstable) != 0 ||
		stable[tp] != (Offset{Offset: 100, LeaderEpoch: -1, Metadata: "in txn"}) {
		t.Fatalf("CommittedStable after the transaction = %v, unstable %v, %v", stable, unstable, err)
	}
}

// rawTxn is a transactional producer made of raw requests: enough to hold offsets in an open
// transaction.
type rawTxn struct {
	t     *testing.T
	e     *env
	id    string
	b     *sarama.Broker
	pid   int64
	epoch int16
}

func newRawTxn(t *testing.T, e *env, id string) *rawTxn {
	cl := e.cluster()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := cl.FindCoordinator(ctx, id, sarama.CoordinatorTransaction)
	if err != nil {
		t.Fatal(err)
	}
	tx := &rawTxn{t: t, e: e, id: id, b: rawBroker(t, n.Addr)}
	eventually(t, 30*time.Second, func() error {
		resp, err := tx.b.InitProducerID(&sarama.InitProducerIDRequest{Version: 2, TransactionalID: &id, TransactionTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Err != sarama.ErrNoError {
			return resp.Err
		}
		tx.pid, tx.epoch = resp.ProducerID, resp.ProducerEpoch
		return nil
	})
	return tx
}

func rawBroker(t *testing.T, addr string) *sarama.Broker {
	conf := kafkatest.SaramaConfig()
	b := sarama.NewBroker(addr)
	if err := b.Open(conf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func (tx *rawTxn) addOffsets(group string) {
	eventually(tx.t, 30*time.Second, func() error {
		resp, err := tx.b.AddOffsetsToTxn(&sarama.AddOffsetsToTxnRequest{Version: 2, TransactionalID: tx.id, ProducerID: tx.pid, ProducerEpoch: tx.epoch, GroupID: group})
		if err != nil {
			tx.t.Fatal(err)
		}
		if resp.Err != sarama.ErrNoError {
			return resp.Err
		}
		return nil
	})
}

// commitOffsets sends a TxnOffsetCommit with the member's group metadata (KIP-447).
func (tx *rawTxn) commitOffsets(md GroupMetadata, tp kafka.TopicPartition, offset int64, meta string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := tx.e.cluster().FindCoordinator(ctx, md.GroupID, sarama.CoordinatorGroup)
	if err != nil {
		tx.t.Fatal(err)
	}
	gb := rawBroker(tx.t, n.Addr)
	var inst *string
	if md.InstanceID != "" {
		inst = &md.InstanceID
	}
	eventually(tx.t, 30*time.Second, func() error {
		resp, err := gb.TxnOffsetCommit(&sarama.TxnOffsetCommitRequest{Version: 3, TransactionalID: tx.id, GroupID: md.GroupID,
			ProducerID: tx.pid, ProducerEpoch: tx.epoch, GenerationID: md.Generation, MemberID: md.MemberID, GroupInstanceID: inst,
			Topics: map[string][]*sarama.PartitionOffsetMetadata{tp.Topic: {{Partition: tp.Partition, Offset: offset, LeaderEpoch: -1, Metadata: &meta}}}})
		if err != nil {
			tx.t.Fatal(err)
		}
		for _, pes := range resp.Topics {
			for _, pe := range pes {
				if pe.Err != sarama.ErrNoError {
					return pe.Err
				}
			}
		}
		return nil
	})
}

func (tx *rawTxn) end(commit bool) {
	eventually(tx.t, 30*time.Second, func() error {
		resp, err := tx.b.EndTxn(&sarama.EndTxnRequest{Version: 2, TransactionalID: tx.id, ProducerID: tx.pid, ProducerEpoch: tx.epoch, TransactionResult: commit})
		if err != nil {
			tx.t.Fatal(err)
		}
		if resp.Err != sarama.ErrNoError {
			return resp.Err
		}
		return nil
	})
}
