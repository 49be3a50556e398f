// Package changelog is what users see of state restoration: a listener told about the restore
// of each state store from its changelog topic (<application.id>-<store>-changelog), as Java's
// org.apache.kafka.streams.processor.StateRestoreListener. Set one with
// KafkaStreams.SetGlobalStateRestoreListener before Start.
package changelog

import "strconv"

// RestoreListener is told about restore progress; the methods are called on the restoring
// goroutines, concurrently for stores that restore at the same time, and must not block for
// long. Java counterpart:
// org.apache.kafka.streams.processor.StateRestoreListener.
type RestoreListener interface {
	// OnRestoreStart is called before the first batch of a store; startOffset is the first
	// offset read, endOffset the (exclusive) offset restore stops at. Java: onRestoreStart.
	OnRestoreStart(tp TopicPartition, storeName string, startOffset, endOffset int64)
	// OnBatchRestored is called after each batch; batchEndOffset is the offset of the batch's
	// last record. In a bulk restore (1 000 records or more into a Pebble key-value store, by
	// default) the batch has been handed to the store, which may still hold it in memory: everything reported is in the
	// store when OnRestoreEnd is called. Java: onBatchRestored.
	OnBatchRestored(tp TopicPartition, storeName string, batchEndOffset, numRestored int64)
	// OnRestoreEnd is called when the store is restored. Java: onRestoreEnd.
	OnRestoreEnd(tp TopicPartition, storeName string, totalRestored int64)
}

// TopicPartition names a partition of a topic.
type TopicPartition struct {
	// Topic is the topic name.
	Topic string
	// Partition is the partition number.
	Partition int32
}

// String formats as Java's TopicPartition.toString: "topic-partition".
func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }
