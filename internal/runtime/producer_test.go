package runtime

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func TestFailFastBackoff(t *testing.T) {
	var st sarama.ProducerTxnStatusFlag
	f := failFastBackoff(500*time.Millisecond, func() sarama.ProducerTxnStatusFlag { return st })
	st = sarama.ProducerTxnFlagInTransaction
	if d := f(1, 60); d != 500*time.Millisecond {
		t.Errorf("in a transaction: backoff %v, want 500ms", d)
	}
	st = sarama.ProducerTxnFlagInError | sarama.ProducerTxnFlagAbortableError
	if d := f(1, 60); d != 0 {
		t.Errorf("transaction failed: backoff %v, want 0", d)
	}
}
