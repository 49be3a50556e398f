package produce

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// Once a transaction is abortable (a batch failed for good), the batches not sent yet are
// dropped, as Java aborts the undrained batches: Commit returns the abortable error at once
// instead of waiting (under exactly-once their delivery timeout is Integer.MAX_VALUE ms) for
// batches that can never be sent.
func TestEmbeddedCommitAfterAbortableBatch(t *testing.T) {
	t.Parallel()
	b := kafkatest.Embedded(t)
	topic := createTopic(t, b, 2)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{TransactionalID: kafkatest.Name(t, "txn"), TransactionTimeout: 30 * time.Second,
		Linger: time.Hour, BatchSize: 64, MaxInFlight: 1, DeliveryTimeout: (1<<31 - 1) * time.Millisecond})
	b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Partitions: []int32{0}, Err: kerr.InvalidRecord, Count: 1})
	if err := p.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(Record{Topic: topic, Partition: 0, Value: []byte("bad")}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ { // many small batches for partition 1: most wait in its queue
		if err := p.Send(Record{Topic: topic, Partition: 1, Key: []byte(fmt.Sprintf("k%03d", i)), Value: make([]byte, 40)}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := p.Commit(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Commit waited %v for batches that are never sent (pending %d) instead of returning the abortable error",
			time.Since(start).Round(time.Millisecond), p.Pending())
	}
	if !errors.Is(err, ErrAbortable) {
		t.Fatalf("Commit: %v, want ErrAbortable", err)
	}
}
