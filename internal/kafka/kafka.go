// Package kafka is the runtime's batch-level Kafka client, written on sarama's protocol layer
// (*sarama.Broker and its request and response types) instead of sarama's ConsumerGroup,
// Consumer and AsyncProducer, whose per-message goroutines and channels cost more CPU than the
// stream processing itself (Java's layout).
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
//
// # Broker behaviour this layer relies on
//
// Checked against Apache Kafka 4.4 (and kfake where it says so); each has a test:
//
//   - Fetch sessions (KIP-227): session id 0 with epoch 0 opens a session; a known id with
//     epoch 0 closes it and opens a new one; epoch -1 means no session. A partition that does
//     not fit fetch.max.bytes after the first comes back empty, never as a cut-off batch; a
//     fetch returns whole batches, so records below the fetch offset are skipped.
//   - A broker's controlled shutdown and restart bump the leader epochs of its partitions, so a
//     fetch naming the old epoch is refused (FENCED_LEADER_EPOCH) until metadata is refreshed.
//   - EndTxn returns before the transaction markers are written: the last stable offset lags a
//     commit that has returned, so a read_committed reader waits for it.
//   - A broker with no state for a producer id takes any first sequence number into a
//     partition (kfake: not into a never-written log, KAFKA-15591), so the first batch of a
//     producer id goes alone to each partition until it is acknowledged.
//   - A topic the principal may not describe is left out of a Metadata response for all
//     topics instead of being listed with TOPIC_AUTHORIZATION_FAILED.
//   - sarama sends a SCRAM credential upsertion without a salt as a null salt, which Kafka
//     refuses; kfake closes the connection on a wrong SASL password instead of answering
//     SASL_AUTHENTICATION_FAILED.
//   - With connections.max.reauth.ms set, Kafka grants a SASL session the lesser of that and
//     the OAUTHBEARER token's remaining lifetime (SaslAuthenticate's session lifetime) and
//     closes a connection at its first request after the session ended; a SaslHandshake on the
//     open connection re-authenticates it (KIP-368), which sarama does before a request at
//     85-95% of the lifetime, calling the token provider again. When that call fails, sarama
//     has already sent the SaslHandshake, so the connection's next request is answered
//     ILLEGAL_SASL_STATE.
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
