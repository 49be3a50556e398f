package processor

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/kstreams-go/kstreams/serde"
)

// ConsumerRecord is an input record as read from Kafka and deserialized, the input of a
// [TimestampExtractor]. It mirrors the parts of Java's
// org.apache.kafka.clients.consumer.ConsumerRecord<Object, Object> that extractors use (this
// package imports no Kafka client).
type ConsumerRecord struct {
	// Topic is the topic the record was read from.
	Topic string
	// Partition is the partition of Topic.
	Partition int32
	// Offset is the record's offset in the partition.
	Offset int64
	// Timestamp is the record's timestamp in ms (CreateTime or LogAppendTime), -1 when the
	// record has none.
	Timestamp int64
	// Key is the deserialized key (nil for null).
	Key any
	// Value is the deserialized value (nil for null).
	Value any
	// Headers are the record headers.
	Headers serde.Headers
}

// TimestampExtractor gives each input record the timestamp the topology processes it with.
// Counterpart of Java's org.apache.kafka.streams.processor.TimestampExtractor.
//
// partitionTime is the largest timestamp extracted so far from the record's partition (-1 if
// none). Extract returns the timestamp in ms. A negative result with a nil error makes the
// engine drop the record (logged and counted in the dropped-records metric, as in Java); a
// non-nil error stops processing (Java: a thrown StreamsException).
type TimestampExtractor interface {
	// Extract returns the timestamp of record. Java: extract(ConsumerRecord, long partitionTime).
	Extract(record ConsumerRecord, partitionTime int64) (int64, error)
}

// TimestampExtractorFunc adapts a function to a [TimestampExtractor].
type TimestampExtractorFunc func(record ConsumerRecord, partitionTime int64) (int64, error)

// Extract calls f.
func (f TimestampExtractorFunc) Extract(record ConsumerRecord, partitionTime int64) (int64, error) {
	return f(record, partitionTime)
}

// FailOnInvalidTimestamp uses the record's own timestamp (the embedded CreateTime or
// LogAppendTime) and fails on a negative one with an error wrapping [ErrInvalidTimestamp]. It
// is the default extractor (default.timestamp.extractor). Java:
// org.apache.kafka.streams.processor.FailOnInvalidTimestamp.
type FailOnInvalidTimestamp struct{}

// Extract returns record.Timestamp, or an error wrapping [ErrInvalidTimestamp] if negative.
func (FailOnInvalidTimestamp) Extract(record ConsumerRecord, _ int64) (int64, error) {
	if record.Timestamp < 0 {
		return record.Timestamp, fmt.Errorf("%w: input record from topic %s partition %d offset %d has invalid (negative) timestamp %d; "+
			"possibly it was written without a timestamp; use a different TimestampExtractor to process this data",
			ErrInvalidTimestamp, record.Topic, record.Partition, record.Offset, record.Timestamp)
	}
	return record.Timestamp, nil
}

// LogAndSkipOnInvalidTimestamp uses the record's own timestamp; a negative one is logged at
// warn level and returned as is, so the engine drops the record. Java:
// org.apache.kafka.streams.processor.LogAndSkipOnInvalidTimestamp.
type LogAndSkipOnInvalidTimestamp struct {
	// Logger receives the warning; nil means slog.Default().
	Logger *slog.Logger
}

// Extract returns record.Timestamp (never an error); a negative one is logged.
func (e LogAndSkipOnInvalidTimestamp) Extract(record ConsumerRecord, _ int64) (int64, error) {
	if record.Timestamp < 0 {
		l := e.Logger
		if l == nil {
			l = slog.Default()
		}
		l.Warn("input record will be dropped because it has an invalid (negative) timestamp",
			"topic", record.Topic, "partition", record.Partition, "offset", record.Offset, "timestamp", record.Timestamp)
	}
	return record.Timestamp, nil
}

// UsePartitionTimeOnInvalidTimestamp uses the record's own timestamp; for a negative one it
// uses the partition time (the largest timestamp seen on the partition) instead, and fails
// with an error wrapping [ErrInvalidTimestamp] when that is unknown (negative) too. Java:
// org.apache.kafka.streams.processor.UsePartitionTimeOnInvalidTimestamp.
type UsePartitionTimeOnInvalidTimestamp struct{}

// Extract returns record.Timestamp, else partitionTime, else an error.
func (UsePartitionTimeOnInvalidTimestamp) Extract(record ConsumerRecord, partitionTime int64) (int64, error) {
	if record.Timestamp >= 0 {
		return record.Timestamp, nil
	}
	if partitionTime < 0 {
		return record.Timestamp, fmt.Errorf("%w: could not infer a new timestamp for input record from topic %s partition %d offset %d "+
			"because the partition time is unknown", ErrInvalidTimestamp, record.Topic, record.Partition, record.Offset)
	}
	return partitionTime, nil
}

// WallclockTimestampExtractor ignores the record and returns the current wall-clock time in
// ms (processing-time semantics); it never returns a negative timestamp. Java:
// org.apache.kafka.streams.processor.WallclockTimestampExtractor.
type WallclockTimestampExtractor struct {
	// Now returns the current time; nil means time.Now. Tests may set it.
	Now func() time.Time
}

// Extract returns the current time in ms since the epoch.
func (e WallclockTimestampExtractor) Extract(ConsumerRecord, int64) (int64, error) {
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	return now().UnixMilli(), nil
}
