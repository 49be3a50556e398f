package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// These tests check, through sarama, the broker features the runtime relies on: topic configs,
// transactions with read_committed, and KIP-447 transactional offset commits. They run on the
// real Apache Kafka broker (TestIntegration..., under `make test`) and on kfake, so a difference
// between the two shows up here first.

func TestIntegrationBroker(t *testing.T) { checkBroker(t, Real(t)) }

func TestEmbeddedBroker(t *testing.T) { checkBroker(t, Embedded(t)) }

func checkBroker(t *testing.T, b Broker) {
	t.Run("CompactedTopicConfig", func(t *testing.T) { checkCompactedTopic(t, b) })
	t.Run("TransactionsReadCommitted", func(t *testing.T) { checkTransactions(t, b) })
	t.Run("TxnOffsetCommitWithGroupMetadata", func(t *testing.T) { checkTxnOffsetCommit(t, b) })
}

func newAdmin(t *testing.T, b Broker) sarama.ClusterAdmin {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(b.Addrs, SaramaConfig())
	if err != nil {
		t.Fatalf("admin client for %s %v: %v", b.Kind, b.Addrs, err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin
}

func checkCompactedTopic(t *testing.T, b Broker) {
	admin := newAdmin(t, b)
	topic := Name(t, "compacted")
	CreateTopics(t, b, 3, map[string]string{
		"cleanup.policy":         "compact",
		"message.timestamp.type": "CreateTime",
	}, topic)

	got := TopicConfigs(t, admin, topic)
	if got["cleanup.policy"] != "compact" {
		t.Errorf("cleanup.policy = %q, want compact", got["cleanup.policy"])
	}
	if got["message.timestamp.type"] != "CreateTime" {
		t.Errorf("message.timestamp.type = %q, want CreateTime", got["message.timestamp.type"])
	}

	meta, err := admin.DescribeTopics([]string{topic})
	if err != nil || len(meta) != 1 {
		t.Fatalf("describe topic %s: %v (%d results)", topic, err, len(meta))
	}
	if meta[0].Err != sarama.ErrNoError || len(meta[0].Partitions) != 3 {
		t.Fatalf("topic %s: err %v, %d partitions; want 3 partitions", topic, meta[0].Err, len(meta[0].Partitions))
	}
}

func txnProducer(t *testing.T, b Broker, txnID string) sarama.SyncProducer {
	t.Helper()
	cfg := SaramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = txnID
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatalf("transactional producer %s: %v", txnID, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func sendAll(t *testing.T, p sarama.SyncProducer, topic string, values ...string) {
	t.Helper()
	for _, v := range values {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("k"), Value: sarama.StringEncoder(v)}); err != nil {
			t.Fatalf("send %q to %s: %v", v, topic, err)
		}
	}
}

// readUntilSentinel reads partition 0 of topic from the beginning with the given isolation level
// and returns the values before the first record whose value is sentinel. Tests write the
// sentinel last with a plain producer, so everything before it has been decided (committed or
// aborted) once it is visible.
func readUntilSentinel(t *testing.T, b Broker, topic string, isolation sarama.IsolationLevel, sentinel string) []string {
	t.Helper()
	cfg := SaramaConfig()
	cfg.Consumer.IsolationLevel = isolation
	consumer, err := sarama.NewConsumer(b.Addrs, cfg)
	if err != nil {
		t.Fatalf("consumer: %v", err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("consume %s/0: %v", topic, err)
	}
	defer pc.Close()

	var values []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m := <-pc.Messages():
			if string(m.Value) == sentinel {
				return values
			}
			values = append(values, string(m.Value))
		case err := <-pc.Errors():
			t.Fatalf("consume %s/0: %v", topic, err)
		case <-timeout:
			t.Fatalf("reading %s/0 (%v): no sentinel after 30 s; saw %q", topic, isolation, values)
		}
	}
}

const sentinel = "<end>"

func writeSentinel(t *testing.T, b Broker, topic string) {
	t.Helper()
	p, err := sarama.NewSyncProducer(b.Addrs, ProducerConfig())
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer p.Close()
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(sentinel)}); err != nil {
		t.Fatalf("send sentinel to %s: %v", topic, err)
	}
}

func checkTransactions(t *testing.T, b Broker) {
	topic := Name(t, "txn")
	CreateTopics(t, b, 1, nil, topic)
	p := txnProducer(t, b, Name(t, "txn-id"))

	steps := []struct {
		values []string
		commit bool
	}{
		{[]string{"a1", "a2"}, true},
		{[]string{"b1", "b2", "b3"}, false},
		{[]string{"c1"}, true},
		{[]string{"d1"}, false},
	}
	for _, s := range steps {
		if err := p.BeginTxn(); err != nil {
			t.Fatalf("begin: %v", err)
		}
		sendAll(t, p, topic, s.values...)
		var err error
		if s.commit {
			err = p.CommitTxn()
		} else {
			err = p.AbortTxn()
		}
		if err != nil {
			t.Fatalf("end transaction (commit=%v): %v", s.commit, err)
		}
	}

	writeSentinel(t, b, topic)
	got := readUntilSentinel(t, b, topic, sarama.ReadCommitted, sentinel)
	want := []string{"a1", "a2", "c1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("read_committed saw %q, want %q", got, want)
	}
	all := readUntilSentinel(t, b, topic, sarama.ReadUncommitted, sentinel)
	wantAll := []string{"a1", "a2", "b1", "b2", "b3", "c1", "d1"}
	if fmt.Sprint(all) != fmt.Sprint(wantAll) {
		t.Errorf("read_uncommitted saw %q, want %q", all, wantAll)
	}
}

// txnHandler copies each input record to the output topic in its own transaction, committing
// the input offset in the same transaction with the consumer group's metadata (member id and
// generation), as exactly-once v2 does.
type txnHandler struct {
	t       *testing.T
	p       sarama.SyncProducer
	group   string
	out     string
	want    int
	mu      sync.Mutex
	copied  int
	done    chan struct{}
	errs    chan error
	staleOK chan error
}

func (h *txnHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *txnHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *txnHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	meta := sarama.NewConsumerGroupMetadataFromSession(sess, h.group, nil)
	for m := range claim.Messages() {
		if err := h.copy(m, meta); err != nil {
			h.errs <- err
			return err
		}
		h.mu.Lock()
		h.copied++
		n := h.copied
		h.mu.Unlock()
		if n == h.want {
			// One more transaction whose offsets carry a stale generation: the group coordinator
			// must fence it (KIP-447), so the transaction cannot commit.
			stale := *meta
			stale.GenerationID = meta.GenerationID + 7
			h.staleOK <- h.commitStale(m, &stale)
			close(h.done)
			return nil
		}
	}
	return nil
}

func (h *txnHandler) copy(m *sarama.ConsumerMessage, meta *sarama.ConsumerGroupMetadata) error {
	if err := h.p.BeginTxn(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if _, _, err := h.p.SendMessage(&sarama.ProducerMessage{Topic: h.out, Key: sarama.ByteEncoder(m.Key), Value: sarama.ByteEncoder(m.Value)}); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	if err := h.p.AddMessageToTxnWithGroupMetadata(m, meta, nil); err != nil {
		return fmt.Errorf("add offsets: %w", err)
	}
	if err := h.p.CommitTxn(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// commitStale returns nil when the broker rejected the stale-generation offset commit, and an
// error saying what happened otherwise.
func (h *txnHandler) commitStale(m *sarama.ConsumerMessage, stale *sarama.ConsumerGroupMetadata) error {
	if err := h.p.BeginTxn(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if _, _, err := h.p.SendMessage(&sarama.ProducerMessage{Topic: h.out, Value: sarama.StringEncoder("from-stale-generation")}); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	errAdd := h.p.AddMessageToTxnWithGroupMetadata(m, stale, nil)
	var errCommit error
	if errAdd == nil {
		errCommit = h.p.CommitTxn()
	}
	if errAdd == nil && errCommit == nil {
		return errors.New("a transaction with offsets of a stale generation committed")
	}
	if err := errors.Join(errAdd, errCommit); !errors.Is(err, sarama.ErrIllegalGeneration) {
		return fmt.Errorf("stale generation rejected with %v, want %v", err, sarama.ErrIllegalGeneration)
	}
	if h.p.TxnStatus()&sarama.ProducerTxnFlagAbortableError != 0 {
		if err := h.p.AbortTxn(); err != nil {
			return fmt.Errorf("abort after fencing: %w", err)
		}
	}
	return nil
}

func checkTxnOffsetCommit(t *testing.T, b Broker) {
	admin := newAdmin(t, b)
	in, out, group := Name(t, "in"), Name(t, "out"), Name(t, "group")
	CreateTopics(t, b, 1, nil, in, out)

	plain, err := sarama.NewSyncProducer(b.Addrs, SaramaConfig())
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer plain.Close()
	inputs := []string{"x", "y", "z"}
	for _, v := range inputs {
		if _, _, err := plain.SendMessage(&sarama.ProducerMessage{Topic: in, Value: sarama.StringEncoder(v)}); err != nil {
			t.Fatalf("produce input: %v", err)
		}
	}

	cfg := SaramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	cg, err := sarama.NewConsumerGroup(b.Addrs, group, cfg)
	if err != nil {
		t.Fatalf("consumer group: %v", err)
	}
	defer cg.Close()

	h := &txnHandler{t: t, p: txnProducer(t, b, Name(t, "txn-id")), group: group, out: out, want: len(inputs),
		done: make(chan struct{}), errs: make(chan error, 4), staleOK: make(chan error, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	consumeErr := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{in}, h); err != nil {
				consumeErr <- err
				return
			}
		}
		consumeErr <- nil
	}()
	select {
	case <-h.done:
	case err := <-h.errs:
		t.Fatalf("copying in a transaction: %v", err)
	case <-ctx.Done():
		t.Fatalf("timed out: copied %d of %d records", h.copied, len(inputs))
	}
	if err := <-h.staleOK; err != nil {
		t.Errorf("KIP-447 fencing: %v", err)
	}
	cancel()
	if err := <-consumeErr; err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("consumer group ended with %v", err)
	}

	writeSentinel(t, b, out)
	got := readUntilSentinel(t, b, out, sarama.ReadCommitted, sentinel)
	if fmt.Sprint(got) != fmt.Sprint(inputs) {
		t.Errorf("read_committed output %q, want %q", got, inputs)
	}
	offsets, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{in: {0}})
	if err != nil {
		t.Fatalf("committed offsets of %s: %v", group, err)
	}
	blk := offsets.GetBlock(in, 0)
	if blk == nil || blk.Err != sarama.ErrNoError || blk.Offset != int64(len(inputs)) {
		t.Errorf("committed offset of %s/0 = %+v, want %d (committed in the transactions)", in, blk, len(inputs))
	}
}
