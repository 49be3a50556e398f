package runtime

import (
	"github.com/IBM/sarama"
)

// explicitPartition marks a ProducerMessage whose Partition was chosen by the task (changelog
// writes, StreamPartitioner results).
type explicitPartition struct{}

// javaPartitioner keeps an explicitly chosen partition and otherwise partitions by Java's
// default partitioner: (murmur2(keyBytes) & 0x7fffffff) % partitions (DESIGN section 5).
type javaPartitioner struct{ murmur sarama.Partitioner }

func newJavaPartitioner(topic string) sarama.Partitioner {
	return &javaPartitioner{murmur: sarama.NewMurmur2Partitioner(topic)}
}

// Partition implements sarama.Partitioner.
func (p *javaPartitioner) Partition(msg *sarama.ProducerMessage, n int32) (int32, error) {
	if _, ok := msg.Metadata.(explicitPartition); ok {
		return msg.Partition, nil
	}
	return p.murmur.Partition(msg, n)
}

// RequiresConsistency implements sarama.Partitioner: a retried message keeps its partition.
func (p *javaPartitioner) RequiresConsistency() bool { return true }
