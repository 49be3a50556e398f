package testdriver

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/serdeapi"

	"github.com/kstreams-go/kstreams/serde"
)

// TestOutputTopic reads the records the topology produced to one topic, in production order,
// deserializing them. Null (nil) bytes give the zero value (nil for nillable types) without
// calling the deserializer. Java counterpart: org.apache.kafka.streams.TestOutputTopic.
type TestOutputTopic[K, V any] struct {
	d          *TopologyTestDriver
	topic      string
	keyDeser   serde.Deserializer[K]
	valueDeser serde.Deserializer[V]
}

// CreateOutputTopic returns an output topic of d for topic with the given deserializers (a
// serde.Serde works). A nil deserializer makes every read fail with ErrInvalidArgument. Java: createOutputTopic(topic, keyDeser, valueDeser).
func CreateOutputTopic[K, V any](d *TopologyTestDriver, topic string, keyDeserializer serde.Deserializer[K], valueDeserializer serde.Deserializer[V]) *TestOutputTopic[K, V] {
	return &TestOutputTopic[K, V]{d: d, topic: topic, keyDeser: keyDeserializer, valueDeser: valueDeserializer}
}

// Topic returns the topic name.
func (o *TestOutputTopic[K, V]) Topic() string { return o.topic }

// ReadRecord reads the next record. Errors: ErrEmptyTopic (all read, or nothing was ever
// produced to the topic), deserialization errors. Java: readRecord().
func (o *TestOutputTopic[K, V]) ReadRecord() (TestRecord[K, V], error) {
	var zero TestRecord[K, V]
	if serdeapi.IsNil(o.keyDeser) || serdeapi.IsNil(o.valueDeser) {
		return zero, fmt.Errorf("%w: output topic %s: nil deserializer", ErrInvalidArgument, o.topic)
	}
	r, err := o.d.readRaw(o.topic)
	if err != nil {
		return zero, err
	}
	rec := TestRecord[K, V]{Headers: r.Headers.Clone(), Timestamp: r.Timestamp, HasTimestamp: true}
	if r.Key != nil {
		if rec.Key, err = o.keyDeser.Deserialize(o.topic, &rec.Headers, r.Key); err != nil {
			return zero, fmt.Errorf("testdriver: deserialize key from %s: %w", o.topic, err)
		}
	}
	if r.Value != nil {
		if rec.Value, err = o.valueDeser.Deserialize(o.topic, &rec.Headers, r.Value); err != nil {
			return zero, fmt.Errorf("testdriver: deserialize value from %s: %w", o.topic, err)
		}
	}
	return rec, nil
}

// ReadValue reads the next record's value. Errors as ReadRecord. Java: readValue().
func (o *TestOutputTopic[K, V]) ReadValue() (V, error) {
	r, err := o.ReadRecord()
	return r.Value, err
}

// ReadKeyValue reads the next record's key and value. Errors as ReadRecord. Java: readKeyValue().
func (o *TestOutputTopic[K, V]) ReadKeyValue() (KeyValue[K, V], error) {
	r, err := o.ReadRecord()
	return KeyValue[K, V]{Key: r.Key, Value: r.Value}, err
}

// ReadRecordsToList reads all remaining records. Java: readRecordsToList().
func (o *TestOutputTopic[K, V]) ReadRecordsToList() ([]TestRecord[K, V], error) {
	var out []TestRecord[K, V]
	for !o.IsEmpty() {
		r, err := o.ReadRecord()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ReadValuesToList reads all remaining values. Java: readValuesToList().
func (o *TestOutputTopic[K, V]) ReadValuesToList() ([]V, error) {
	var out []V
	for !o.IsEmpty() {
		v, err := o.ReadValue()
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// ReadKeyValuesToList reads all remaining key-value pairs. Java: readKeyValuesToList().
func (o *TestOutputTopic[K, V]) ReadKeyValuesToList() ([]KeyValue[K, V], error) {
	var out []KeyValue[K, V]
	for !o.IsEmpty() {
		kv, err := o.ReadKeyValue()
		if err != nil {
			return out, err
		}
		out = append(out, kv)
	}
	return out, nil
}

// ReadKeyValuesToMap reads all remaining records into a map, later values replacing earlier
// ones (a nil value is stored, not removed, as in Java). Errors: ErrNullKey for a nil key.
// A function rather than a method because K must be comparable. Java: readKeyValuesToMap().
func ReadKeyValuesToMap[K comparable, V any](o *TestOutputTopic[K, V]) (map[K]V, error) {
	out := map[K]V{}
	for !o.IsEmpty() {
		kv, err := o.ReadKeyValue()
		if err != nil {
			return out, err
		}
		if serdeapi.IsNil(kv.Key) {
			return out, ErrNullKey
		}
		out[kv.Key] = kv.Value
	}
	return out, nil
}

// QueueSize returns the number of unread records (0 for a topic never produced to).
// Java: getQueueSize().
func (o *TestOutputTopic[K, V]) QueueSize() int { return o.d.queueSize(o.topic) }

// IsEmpty reports whether all records were read. Java: isEmpty().
func (o *TestOutputTopic[K, V]) IsEmpty() bool { return o.QueueSize() == 0 }
