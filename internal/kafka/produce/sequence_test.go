package produce

import (
	"math"
	"testing"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// Per-partition sequence numbers wrap to 0 after Integer.MAX_VALUE, as Kafka's brokers expect
// (ProducerStateManager) and Java's producer does (DefaultRecordBatch.incrementSequence): a
// transactional producer keeps its epoch for the thread's life, so at 250 000 records/s into
// one partition an overflow into negative sequences would come every 2.4 hours.
func TestSequenceNumbersWrap(t *testing.T) {
	p := &Producer{pid: 7, epoch: 0}
	tp := kafka.TopicPartition{Topic: "t", Partition: 0}
	ps := &partState{tp: tp, nextSeq: math.MaxInt32 - 5}
	mk := func(n int) *batch {
		b := &batch{tp: tp, seq: -1}
		for i := 0; i < n; i++ {
			b.add(&Record{Topic: "t", Value: []byte("v")}, 10)
		}
		return b
	}
	b1, b2 := mk(10), mk(10)
	p.prepare(ps, b1)
	p.prepare(ps, b2)
	if b1.rb.FirstSequence != math.MaxInt32-5 {
		t.Fatalf("first batch's sequence %d", b1.rb.FirstSequence)
	}
	// b1 holds sequences MaxInt32-5 .. MaxInt32, 0 .. 3; the next batch starts at 4.
	if b2.rb.FirstSequence != 4 {
		t.Fatalf("the batch after the wrap has FirstSequence %d, want 4 (Java wraps at Integer.MAX_VALUE)", b2.rb.FirstSequence)
	}
}
