package produce

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// Abort drops the queued batches, among them one sent before that waits for its resend: it
// holds sequence numbers the broker never saw, so the epoch is bumped after the abort (as Java
// bumps it when an aborted transaction had batches with unresolved sequence numbers) and the
// next transaction's batches are accepted, not refused with OUT_OF_ORDER_SEQUENCE.
func TestEmbeddedAbortBumpsEpochAfterDroppedResend(t *testing.T) {
	t.Parallel()
	b := kafkatest.Embedded(t)
	topic := createTopic(t, b, 1)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{TransactionalID: kafkatest.Name(t, "txn"), TransactionTimeout: 30 * time.Second,
		Linger: time.Millisecond, RetryBackoff: 2 * time.Second, RetryBackoffMax: 2 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A first transaction writes to the partition: the broker now has this producer's
	// sequence state there (last sequence 0).
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(Record{Topic: topic, Partition: 0, Value: []byte("first")}); err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h := b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Partitions: []int32{0}, Err: kerr.NotLeaderForPartition, Count: 1})
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := p.Send(Record{Topic: topic, Partition: 0, Value: []byte("aborted")}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.Hits() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.Hits() == 0 {
		t.Fatal("the fault was not hit")
	}
	// The batch (sequences 1..5) now waits 2 s for its resend; the transaction is aborted.
	if err := p.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(Record{Topic: topic, Partition: 0, Value: []byte("committed")}); err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(ctx); err != nil {
		t.Fatalf("the transaction after the abort failed: %v (its first batch starts past the dropped batch's sequence numbers)", err)
	}
}
