package testdriver

import (
	"fmt"
	"reflect"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// KeyValue is a key and a value. Java counterpart: org.apache.kafka.streams.KeyValue.
type KeyValue[K, V any] = store.KeyValue[K, V]

// TestRecord is a record piped into or read from the driver: key, value, headers and a
// timestamp in ms. HasTimestamp is false for an input record that should take the input
// topic's current time (Java: a TestRecord without record time); records read from an output
// topic always have one. Java counterpart: org.apache.kafka.streams.test.TestRecord.
type TestRecord[K, V any] struct {
	// Key is the record key (nil / zero value for null).
	Key K
	// Value is the record value (nil / zero value for null).
	Value V
	// Headers are the record headers.
	Headers serde.Headers
	// Timestamp is the record timestamp in ms, meaningful when HasTimestamp is true.
	Timestamp int64
	// HasTimestamp tells whether Timestamp is set.
	HasTimestamp bool
}

// NewTestRecord returns a record without timestamp. Java: new TestRecord<>(key, value).
func NewTestRecord[K, V any](key K, value V) TestRecord[K, V] {
	return TestRecord[K, V]{Key: key, Value: value}
}

// NewTestRecordAt returns a record with timestamp timestampMs (ms).
// Java: new TestRecord<>(key, value, headers, timestampMs) without headers.
func NewTestRecordAt[K, V any](key K, value V, timestampMs int64) TestRecord[K, V] {
	return TestRecord[K, V]{Key: key, Value: value, Timestamp: timestampMs, HasTimestamp: true}
}

// WithHeaders returns a copy of r with a copy of headers.
func (r TestRecord[K, V]) WithHeaders(headers serde.Headers) TestRecord[K, V] {
	r.Headers = headers.Clone()
	return r
}

// Equal reports whether r and o have equal keys and values (reflect.DeepEqual), equal headers
// (same keys and values in the same order) and the same timestamp (or both none).
// Java: TestRecord.equals.
func (r TestRecord[K, V]) Equal(o TestRecord[K, V]) bool {
	if r.HasTimestamp != o.HasTimestamp || (r.HasTimestamp && r.Timestamp != o.Timestamp) {
		return false
	}
	return reflect.DeepEqual(r.Key, o.Key) && reflect.DeepEqual(r.Value, o.Value) && r.Headers.Equal(&o.Headers)
}

// String formats the record as Java's TestRecord.toString does:
// "TestRecord[key=k, value=v, headers=..., recordTime=...]" (recordTime in ms here).
func (r TestRecord[K, V]) String() string {
	ts := "null"
	if r.HasTimestamp {
		ts = fmt.Sprint(r.Timestamp)
	}
	return fmt.Sprintf("TestRecord[key=%v, value=%v, headers=%v, recordTime=%s]", r.Key, r.Value, r.Headers.ToSlice(), ts)
}
