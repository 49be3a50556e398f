package runtime

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/IBM/sarama"
	"github.com/IBM/sarama/mocks"

	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// Batches handed to the producer one after the other without waiting are sent in order, at
// most maxInflight of them unhandled at a time; each record's result reaches its own batch
// (a failed record goes to the production handler), and the slabs come back for reuse.
func TestPipelinedBatches(t *testing.T) {
	pc := sarama.NewConfig()
	pc.Producer.Return.Successes = true
	pc.Producer.Partitioner = newJavaPartitioner
	mp := mocks.NewAsyncProducer(t, pc)
	var mu sync.Mutex
	var order []string
	const batches, perBatch = 7, 5
	for i := 0; i < batches*perBatch; i++ {
		check := func(m *sarama.ProducerMessage) error {
			v, _ := m.Value.Encode()
			mu.Lock()
			order = append(order, fmt.Sprintf("%s/%d=%s", m.Topic, m.Partition, v))
			mu.Unlock()
			return nil
		}
		if i == 12 {
			mp.ExpectInputWithMessageCheckerFunctionAndFail(check, sarama.ErrMessageSizeTooLarge)
		} else {
			mp.ExpectInputWithMessageCheckerFunctionAndSucceed(check)
		}
	}
	var handled []string
	th := &thread{log: slog.New(slog.DiscardHandler), rt: &Runtime{cfg: Config{Production: func(rec task.OutRecord, err error) task.HandlerResponse {
		handled = append(handled, fmt.Sprintf("%s=%s: %v", rec.Topic, rec.Value, err))
		return task.Continue
	}}}, states: map[processor.TaskID]*changelog.TaskState{}, changelogOwner: map[changelog.TopicPartition]processor.TaskID{}}
	th.producer = mp
	th.feed, th.fed, th.resultsGone = startSender(mp)
	c := collector{th: th}
	var want []string
	maxSeen := 0
	for b := 0; b < batches; b++ {
		for i := 0; i < perBatch; i++ {
			n := b*perBatch + i
			rec := task.OutRecord{Topic: "out", Partition: int32(n % 3), Value: []byte(fmt.Sprint(n)), Timestamp: int64(n)}
			if err := c.Send(rec); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("out/%d=%d", n%3, n))
		}
		if err := th.flushAsync(); err != nil {
			t.Fatal(err)
		}
		maxSeen = max(maxSeen, len(th.inflight))
		if len(th.inflight) > maxInflight {
			t.Fatalf("%d batches in flight, limit %d", len(th.inflight), maxInflight)
		}
	}
	if err := th.awaitSend(); err != nil {
		t.Fatal(err)
	}
	if len(th.inflight) != 0 {
		t.Fatalf("%d batches still in flight", len(th.inflight))
	}
	if maxSeen < 1 {
		t.Fatal("no batch was in flight")
	}
	mu.Lock()
	got := slices.Clone(order)
	mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("sent in order\n %q\nwant\n %q", got, want)
	}
	if wantH := []string{"out=12: kafka server: Message was too large, server rejected it to avoid allocation error"}; !slices.Equal(handled, wantH) {
		t.Fatalf("production handler saw %q, want %q", handled, wantH)
	}
	if len(th.spareSlabs) == 0 || len(th.spareSlabs) > maxInflight {
		t.Fatalf("%d spare slabs", len(th.spareSlabs))
	}
	th.closeProducer()
	select {
	case <-th.resultsGone:
	default:
		t.Fatal("result reader still running after close")
	}
}

// A batch whose producer is closed before all its results came in ends with
// errProducerClosed instead of waiting for ever.
func TestBatchProducerGone(t *testing.T) {
	gone := make(chan struct{})
	b := &sendBatch{done: make(chan error, 1), gone: gone, pending: 2}
	b.result(nil)
	close(gone)
	if err := b.wait(); err != errProducerClosed {
		t.Fatalf("wait = %v, want errProducerClosed", err)
	}
	// All results in before the close: the outcome wins.
	b = &sendBatch{done: make(chan error, 1), gone: gone, pending: 1}
	b.result(&sarama.ProducerError{Err: sarama.ErrInvalidMessage})
	if err := b.wait(); err == nil || err == errProducerClosed {
		t.Fatalf("wait = %v, want the batch's producer errors", err)
	}
}
