package integration_test

import (
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
)

// openOffsetTransaction opens a transaction of transactional id txnID that commits offset 1 of
// partition 0 of topic for group and never ends it (its timeout is 10 minutes): a zombie's
// transaction, or a hanging one. Until it ends, the group coordinator answers
// UNSTABLE_OFFSET_COMMIT to a require_stable offset fetch of that partition.
func openOffsetTransaction(t *testing.T, b kafkatest.Broker, txnID, group, topic string) {
	t.Helper()
	client, err := sarama.NewClient(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	tc, err := client.TransactionCoordinator(txnID)
	if err != nil {
		t.Fatal(err)
	}
	init, err := tc.InitProducerID(&sarama.InitProducerIDRequest{Version: 1, TransactionalID: &txnID, TransactionTimeout: 10 * time.Minute})
	if err != nil || init.Err != sarama.ErrNoError {
		t.Fatalf("InitProducerId: %v %v", err, init)
	}
	add, err := tc.AddOffsetsToTxn(&sarama.AddOffsetsToTxnRequest{Version: 1, TransactionalID: txnID,
		ProducerID: init.ProducerID, ProducerEpoch: init.ProducerEpoch, GroupID: group})
	if err != nil || add.Err != sarama.ErrNoError {
		t.Fatalf("AddOffsetsToTxn: %v %v", err, add)
	}
	gc, err := client.Coordinator(group)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := gc.TxnOffsetCommit(&sarama.TxnOffsetCommitRequest{Version: 1, TransactionalID: txnID, GroupID: group,
		ProducerID: init.ProducerID, ProducerEpoch: init.ProducerEpoch,
		Topics: map[string][]*sarama.PartitionOffsetMetadata{topic: {{Partition: 0, Offset: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range commit.Topics {
		for _, p := range ps {
			if p.Err != sarama.ErrNoError {
				t.Fatalf("TxnOffsetCommit: %s-%d: %v", topic, p.Partition, p.Err)
			}
		}
	}
}

// TestIntegrationUnstableOffsetsTaskTimeout: a transaction that commits offsets of partition 0
// of the application's input is open and never ends (a hanging transaction). The stream thread
// cannot read where task 0_0 starts; it does not block for it (it would be expelled after
// max.poll.interval.ms, 10 s here, and loop): task 0_1 processes its partition meanwhile and
// its output is committed, while 0_0 waits, and after task.timeout.ms (15 s here) the thread
// fails through the uncaught-exception handler with a *TaskTimeoutError naming the partition
// and its task, and wrapping UNSTABLE_OFFSET_COMMIT.
func TestIntegrationUnstableOffsetsTaskTimeout(t *testing.T) {
	b := kafkatest.Real(t)
	input, output, appID := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "unstable")
	createTopics(t, b, 2, input, output)
	waiting := produceLongsTo(t, b, input, 0, "p0-%d", 5)
	going := produceLongsTo(t, b, input, 1, "p1-%d", 5)
	openOffsetTransaction(t, b, appID+"-zombie", appID, input)
	out := readOutput(t, b, output, sarama.ReadCommitted)
	waits, expelled := &atomic.Int64{}, &atomic.Int64{}
	logger := slog.New(countingHandler{countingHandler{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}),
		"the committed offsets of input partitions cannot be read yet", waits}, "stream thread expelled", expelled})
	const timeout = 15 * time.Second
	app, err := kstreams.New(doubleTopology(t, input, output), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer, TaskTimeout: new(timeout), Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	err = failsOnce(t, app)
	var te *kstreams.TaskTimeoutError
	if !errors.As(err, &te) || !errors.Is(err, kstreams.ErrTaskTimeout) || !errors.Is(err, sarama.ErrUnstableOffsetCommit) {
		t.Fatalf("handled error %v (%T), want a *TaskTimeoutError wrapping UNSTABLE_OFFSET_COMMIT", err, err)
	}
	if te.Topic != input || te.Partition != 0 || !te.TaskKnown || te.Task != (processor.TaskID{}) || te.Timeout != timeout ||
		te.Elapsed < timeout || !strings.Contains(err.Error(), "reading the committed offset of "+input+"-0") {
		t.Fatalf("task timeout error %+v: %v", te, err)
	}
	if waits.Load() < 1 || expelled.Load() != 0 {
		t.Fatalf("%d warnings about the offsets, %d expulsions; want some and none", waits.Load(), expelled.Load())
	}
	deadline := time.Now().Add(30 * time.Second)
	for !out.has2x(going) {
		if time.Now().After(deadline) {
			t.Fatalf("task 0_1's output was not committed: %v", out.seqs)
		}
		time.Sleep(20 * time.Millisecond) // polling the reader, bounded by the deadline
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	for _, k := range waiting {
		if len(out.seqs[k]) > 0 {
			t.Fatalf("task 0_0 processed %s, whose committed offset could not be read", k)
		}
	}
}

// has2x reports whether every key i of keys was output once, with the value 2*i (doubled).
func (o *outputReader) has2x(keys []string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, k := range keys {
		if s := o.seqs[k]; len(s) != 1 || s[0] != int64(2*i) {
			return false
		}
	}
	return true
}
