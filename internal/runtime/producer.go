package runtime

import (
	"time"

	"github.com/IBM/sarama"
)

// javaPartitioner keeps a partition the task chose (a message from the collector whose
// outMsg is marked explicit) and otherwise partitions by Java's default partitioner:
// (murmur2(keyBytes) & 0x7fffffff) % partitions (DESIGN section 5).
type javaPartitioner struct{ murmur sarama.Partitioner }

func newJavaPartitioner(topic string) sarama.Partitioner {
	return &javaPartitioner{murmur: sarama.NewMurmur2Partitioner(topic)}
}

// Partition implements sarama.Partitioner.
func (p *javaPartitioner) Partition(msg *sarama.ProducerMessage, n int32) (int32, error) {
	if om, ok := msg.Metadata.(*outMsg); ok && om.explicit {
		return msg.Partition, nil
	}
	return p.murmur.Partition(msg, n)
}

// RequiresConsistency implements sarama.Partitioner: a retried message keeps its partition.
func (p *javaPartitioner) RequiresConsistency() bool { return true }

// failFastBackoff returns the producer's retry backoff (sarama Producer.Retry.BackoffFunc):
// base between retries, but none once the transaction has failed (status has
// ProducerTxnFlagInError). A failed transaction can only be aborted, so the records still in
// flight can never be delivered, yet sarama retries each of them Producer.Retry.Max times
// before a SyncProducer.SendMessages returns: with the backoff that kept a thread blocked for
// up to 90 s after a broker restart. Without it they fail at once and the thread aborts and
// rejoins, as a Java producer fails its pending batches on an abortable error. status
// returns the producer's transaction status, or 0 before the producer exists.
func failFastBackoff(base time.Duration, status func() sarama.ProducerTxnStatusFlag) func(retries, maxRetries int) time.Duration {
	return func(int, int) time.Duration {
		if status()&sarama.ProducerTxnFlagInError != 0 {
			return 0
		}
		return base
	}
}
