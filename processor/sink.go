package processor

import "github.com/kstreams-go/kstreams/serde"

// RecordContext is the context of the record being written by a sink, given to a
// [TopicNameExtractor]. Counterpart of Java's org.apache.kafka.streams.processor.RecordContext.
type RecordContext struct {
	// Topic is the topic of the input record the output derives from (empty for records
	// produced by a punctuator).
	Topic string
	// Partition is the partition of that input record (-1 in a punctuator).
	Partition int32
	// Offset is the offset of that input record (-1 in a punctuator).
	Offset int64
	// Timestamp is the output record's timestamp in ms.
	Timestamp int64
	// Headers are the output record's headers.
	Headers serde.Headers
}

// TopicNameExtractor chooses the topic of each record a sink writes (dynamic routing). The
// topics must exist; they are not created by the application. Counterpart of Java's
// org.apache.kafka.streams.processor.TopicNameExtractor<K, V>.
type TopicNameExtractor[K, V any] interface {
	// Extract returns the topic for the record. Java: extract(key, value, recordContext).
	Extract(key K, value V, rc RecordContext) (string, error)
}

// TopicNameExtractorFunc adapts a function to a [TopicNameExtractor].
type TopicNameExtractorFunc[K, V any] func(key K, value V, rc RecordContext) (string, error)

// Extract calls f.
func (f TopicNameExtractorFunc[K, V]) Extract(key K, value V, rc RecordContext) (string, error) {
	return f(key, value, rc)
}

// StreamPartitioner chooses the partitions a sink writes a record to. Counterpart of Java's
// org.apache.kafka.streams.processor.StreamPartitioner<K, V> (partitions(), KIP-837).
type StreamPartitioner[K, V any] interface {
	// Partitions returns the partitions (each in [0, numPartitions)) to send the record to and
	// ok=true; ok=false means "use the default partitioner" (murmur2 of the serialized key,
	// Java: Optional.empty()); ok=true with no partitions drops the record (Java: an empty set);
	// several partitions multicast it.
	Partitions(topic string, key K, value V, numPartitions int32) (partitions []int32, ok bool, err error)
}

// StreamPartitionerFunc adapts a function to a [StreamPartitioner].
type StreamPartitionerFunc[K, V any] func(topic string, key K, value V, numPartitions int32) ([]int32, bool, error)

// Partitions calls f.
func (f StreamPartitionerFunc[K, V]) Partitions(topic string, key K, value V, numPartitions int32) ([]int32, bool, error) {
	return f(topic, key, value, numPartitions)
}
