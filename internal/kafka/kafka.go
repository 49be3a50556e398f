// Package kafka is the runtime's batch-level Kafka client, written on sarama's protocol layer
// (*sarama.Broker and its request and response types) instead of sarama's ConsumerGroup,
// Consumer and AsyncProducer, whose per-message goroutines and channels cost more CPU than the
// stream processing itself (DESIGN.md section 2).
//
// This package holds what its parts share: a [Cluster] (metadata, one connection per broker
// and purpose, coordinator lookup), error classification, and Java's default partitioner.
// The parts are its subpackages:
//
//   - fetch: per-leader fetch loops over all of a stream thread's partitions, with incremental
//     fetch sessions (KIP-227), decoding record batches straight into per-partition chunks;
//   - produce: per-partition accumulators of v2 record batches, sent per broker with several
//     requests in flight, idempotent by default and transactional under exactly-once;
//   - group: classic consumer-group membership (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
//     OffsetCommit/OffsetFetch).
//
// One stream thread owns one Cluster and one of each part, as a Java StreamThread owns its
// consumer and producer.
package kafka

import (
	"strconv"
)

// TopicPartition names a partition of a topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String returns "topic-partition", as Java's TopicPartition.toString.
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.Itoa(int(tp.Partition))
}

// Offsets with a special meaning where an offset is expected.
const (
	// OffsetUnknown is an offset not known (yet): no committed offset, no position.
	OffsetUnknown int64 = -1
)

// IsolationLevel is isolation.level: which records a fetch returns.
type IsolationLevel int8

const (
	// ReadUncommitted returns every record, up to the high watermark (Java: read_uncommitted,
	// the consumer default).
	ReadUncommitted IsolationLevel = 0
	// ReadCommitted returns only records of committed transactions (and non-transactional
	// ones), up to the last stable offset (Java: read_committed; Kafka Streams under
	// exactly-once).
	ReadCommitted IsolationLevel = 1
)
