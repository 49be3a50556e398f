package testdriver

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/serdeapi"
	"time"

	"github.com/kstreams-go/kstreams/serde"
)

// TestInputTopic pipes typed records into one topic of a driver. Records without a timestamp
// get the topic's current time, which then advances by the auto-advance duration.
// Java counterpart: org.apache.kafka.streams.TestInputTopic.
type TestInputTopic[K, V any] struct {
	d         *TopologyTestDriver
	topic     string
	keySer    serde.Serializer[K]
	valueSer  serde.Serializer[V]
	currentMs int64
	advanceMs int64
	err       error
}

// InputOption configures an input topic.
type InputOption func(*inputOptions)

type inputOptions struct {
	start   *int64
	advance time.Duration
}

// WithStartTimestamp sets the time (ms) of the first record without timestamp. Default: the
// real current time, as Java's createInputTopic(topic, keySer, valueSer) uses Instant.now().
func WithStartTimestamp(ms int64) InputOption { return func(o *inputOptions) { o.start = &ms } }

// WithAutoAdvance sets how much the topic's time advances after each record without
// timestamp (truncated to ms; default 0; negative is an error reported by the pipe methods).
func WithAutoAdvance(d time.Duration) InputOption { return func(o *inputOptions) { o.advance = d } }

// CreateInputTopic returns an input topic of d for topic, serializing keys and values with the
// given serializers (a serde.Serde works). A nil serializer makes every pipe call fail with
// ErrInvalidArgument (Java: NullPointerException at creation). Java: createInputTopic(topic, keySer, valueSer[,
// startTimestamp, autoAdvance]).
func CreateInputTopic[K, V any](d *TopologyTestDriver, topic string, keySerializer serde.Serializer[K], valueSerializer serde.Serializer[V], opts ...InputOption) *TestInputTopic[K, V] {
	var o inputOptions
	for _, f := range opts {
		f(&o)
	}
	t := &TestInputTopic[K, V]{d: d, topic: topic, keySer: keySerializer, valueSer: valueSerializer, advanceMs: o.advance.Milliseconds()}
	if o.start != nil {
		t.currentMs = *o.start
	} else {
		t.currentMs = time.Now().UnixMilli()
	}
	switch {
	case o.advance < 0:
		t.err = fmt.Errorf("%w: input topic %s: auto advance %v is negative", ErrInvalidArgument, topic, o.advance)
	case serdeapi.IsNil(keySerializer) || serdeapi.IsNil(valueSerializer):
		t.err = fmt.Errorf("%w: input topic %s: nil serializer", ErrInvalidArgument, topic)
	case d == nil:
		t.err = fmt.Errorf("%w: input topic %s has no driver", ErrClosed, topic)
	}
	return t
}

// Topic returns the topic name.
func (t *TestInputTopic[K, V]) Topic() string { return t.topic }

// AdvanceTime moves the topic's current time forward by d (ms precision).
// Errors: ErrInvalidArgument for a negative d. Java: advanceTime(Duration).
func (t *TestInputTopic[K, V]) AdvanceTime(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: input topic %s: advance %v is negative", ErrInvalidArgument, t.topic, d)
	}
	t.currentMs += d.Milliseconds()
	return nil
}

// PipeRecord pipes r; without timestamp it gets the topic's current time (which then advances).
// Nil keys and values are sent as null without calling the serializers.
// Java: pipeInput(TestRecord).
func (t *TestInputTopic[K, V]) PipeRecord(r TestRecord[K, V]) error {
	if t.err != nil {
		return t.err
	}
	ts := r.Timestamp
	if !r.HasTimestamp {
		ts = t.currentMs
		t.currentMs += t.advanceMs
	}
	headers := r.Headers.Clone()
	var kb, vb []byte
	var err error
	if !serdeapi.IsNil(r.Key) {
		if kb, err = t.keySer.Serialize(t.topic, &headers, r.Key); err != nil {
			return fmt.Errorf("testdriver: serialize key for %s: %w", t.topic, err)
		}
	}
	if !serdeapi.IsNil(r.Value) {
		if vb, err = t.valueSer.Serialize(t.topic, &headers, r.Value); err != nil {
			return fmt.Errorf("testdriver: serialize value for %s: %w", t.topic, err)
		}
	}
	return t.d.pipeRecord(t.topic, ts, kb, vb, headers)
}

// PipeInput pipes value with a null key at the topic's current time. Java: pipeInput(V).
func (t *TestInputTopic[K, V]) PipeInput(value V) error {
	var k K
	return t.PipeRecord(NewTestRecord(k, value))
}

// PipeValueAt pipes value with a null key at timestampMs. Java: pipeInput(V, Instant).
func (t *TestInputTopic[K, V]) PipeValueAt(value V, timestampMs int64) error {
	var k K
	return t.PipeRecord(NewTestRecordAt(k, value, timestampMs))
}

// PipeKeyValue pipes key and value at the topic's current time. Java: pipeInput(K, V).
func (t *TestInputTopic[K, V]) PipeKeyValue(key K, value V) error {
	return t.PipeRecord(NewTestRecord(key, value))
}

// PipeKeyValueAt pipes key and value at timestampMs. A negative timestamp is piped as is and
// handled by the timestamp extractor (an error with the default FailOnInvalidTimestamp), as
// Java's Instant-based pipeInput(K, V, Instant) does (Java's long-based variant refuses it).
// Java: pipeInput(K, V, long) / pipeInput(K, V, Instant).
func (t *TestInputTopic[K, V]) PipeKeyValueAt(key K, value V, timestampMs int64) error {
	return t.PipeRecord(NewTestRecordAt(key, value, timestampMs))
}

// PipeRecordList pipes each record in order, stopping at the first error.
// Java: pipeRecordList(List).
func (t *TestInputTopic[K, V]) PipeRecordList(records []TestRecord[K, V]) error {
	for _, r := range records {
		if err := t.PipeRecord(r); err != nil {
			return err
		}
	}
	return nil
}

// PipeValueList pipes each value with a null key at the topic's current time.
// Java: pipeValueList(List).
func (t *TestInputTopic[K, V]) PipeValueList(values []V) error {
	for _, v := range values {
		if err := t.PipeInput(v); err != nil {
			return err
		}
	}
	return nil
}

// PipeKeyValueList pipes each key-value pair at the topic's current time.
// Java: pipeKeyValueList(List).
func (t *TestInputTopic[K, V]) PipeKeyValueList(kvs []KeyValue[K, V]) error {
	for _, kv := range kvs {
		if err := t.PipeKeyValue(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	return nil
}

// PipeValueListAt pipes values with null keys at startMs, startMs+advance, ... (ms); the
// topic's own time is not used. Java: pipeValueList(List, Instant, Duration).
func (t *TestInputTopic[K, V]) PipeValueListAt(values []V, startMs int64, advance time.Duration) error {
	ts := startMs
	for _, v := range values {
		if err := t.PipeValueAt(v, ts); err != nil {
			return err
		}
		ts += advance.Milliseconds()
	}
	return nil
}

// PipeKeyValueListAt pipes pairs at startMs, startMs+advance, ... (ms).
// Java: pipeKeyValueList(List, Instant, Duration).
func (t *TestInputTopic[K, V]) PipeKeyValueListAt(kvs []KeyValue[K, V], startMs int64, advance time.Duration) error {
	ts := startMs
	for _, kv := range kvs {
		if err := t.PipeKeyValueAt(kv.Key, kv.Value, ts); err != nil {
			return err
		}
		ts += advance.Milliseconds()
	}
	return nil
}
