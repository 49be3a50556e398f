package produce

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// A batch in flight when the transaction becomes abortable that then comes back with a
// retriable error is dropped, not put back into its queue, where nothing would ever send it:
// Commit returns the abortable error at once instead of waiting until its deadline.
func TestEmbeddedCommitAfterRetriedBatchOfAbortableTxn(t *testing.T) {
	t.Parallel()
	b := kafkatest.Embedded(t)
	topic := createTopic(t, b, 2)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{TransactionalID: kafkatest.Name(t, "txn"), TransactionTimeout: 30 * time.Second,
		Linger: time.Hour, DeliveryTimeout: (1<<31 - 1) * time.Millisecond})
	// One request carries both partitions' batches (one broker); partition 0's fails for good,
	// then partition 1's is retried.
	b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Partitions: []int32{0}, Err: kerr.InvalidRecord, Count: 1})
	b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: 1})
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	for part := int32(0); part < 2; part++ {
		if err := p.Send(Record{Topic: topic, Partition: part, Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := p.Commit(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Commit waited %v (pending %d) for a retried batch of the abortable transaction, which is never sent",
			time.Since(start).Round(time.Millisecond), p.Pending())
	}
	if !errors.Is(err, ErrAbortable) {
		t.Fatalf("Commit: %v, want ErrAbortable", err)
	}
}
