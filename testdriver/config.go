package testdriver

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Java property names the driver reads.
const (
	// ApplicationIDConfig is "application.id"; it prefixes changelog and repartition topics.
	// Default (as Java's driver): "dummy-topology-test-driver-app-id-<random int>".
	ApplicationIDConfig = "application.id"
	// DefaultKeySerdeConfig is "default.key.serde": a Java serde class name (see [JavaSerde]).
	DefaultKeySerdeConfig = "default.key.serde"
	// DefaultValueSerdeConfig is "default.value.serde": a Java serde class name.
	DefaultValueSerdeConfig = "default.value.serde"
	// DefaultTimestampExtractorConfig is "default.timestamp.extractor": a Java extractor class
	// name (see [JavaTimestampExtractor]); default FailOnInvalidTimestamp.
	DefaultTimestampExtractorConfig = "default.timestamp.extractor"
	// DeserializationExceptionHandlerConfig is "deserialization.exception.handler":
	// org.apache.kafka.streams.errors.LogAndFailExceptionHandler (default) or
	// LogAndContinueExceptionHandler (skip records that fail to deserialize).
	DeserializationExceptionHandlerConfig = "deserialization.exception.handler"
	// ProcessingExceptionHandlerConfig is "processing.exception.handler":
	// org.apache.kafka.streams.errors.LogAndFailProcessingExceptionHandler (default) or
	// LogAndContinueProcessingExceptionHandler (drop the record at the failing node).
	ProcessingExceptionHandlerConfig = "processing.exception.handler"
	// MaxTaskIdleMsConfig is "max.task.idle.ms": how long (ms of the mocked wall-clock time) the
	// task waits, when one of its input topics has no buffered record, before it processes the
	// others; default 0 (no waiting), -1 disables even that check. As in Java's driver, records
	// then wait until records arrive on every input or AdvanceWallClockTime passes the deadline.
	MaxTaskIdleMsConfig = "max.task.idle.ms"
)

// maxTaskIdleMs parses max.task.idle.ms (a LONG, default 0).
func maxTaskIdleMs(props map[string]string) (int64, error) {
	v, ok := props[MaxTaskIdleMsConfig]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q for configuration %s: not a number of type LONG", ErrInvalidConfig, v, MaxTaskIdleMsConfig)
	}
	return n, nil
}

// exceptionHandlers maps the handler properties to the engine's handler functions.
func exceptionHandlers(props map[string]string) (deser func(task.RawRecord, error) task.HandlerResponse,
	proc func(string, processor.Record[any, any], error) task.HandlerResponse, err error) {
	const p = "org.apache.kafka.streams.errors."
	switch c := props[DeserializationExceptionHandlerConfig]; c {
	case "", p + "LogAndFailExceptionHandler":
	case p + "LogAndContinueExceptionHandler":
		deser = func(task.RawRecord, error) task.HandlerResponse { return task.Continue }
	default:
		return nil, nil, fmt.Errorf("%w: deserialization exception handler class %q", ErrUnknownClass, c)
	}
	switch c := props[ProcessingExceptionHandlerConfig]; c {
	case "", p + "LogAndFailProcessingExceptionHandler":
	case p + "LogAndContinueProcessingExceptionHandler":
		proc = func(string, processor.Record[any, any], error) task.HandlerResponse { return task.Continue }
	default:
		return nil, nil, fmt.Errorf("%w: processing exception handler class %q", ErrUnknownClass, c)
	}
	return deser, proc, nil
}

// JavaSerde returns the Go serde (as Serde[any]) of a Java serde class name, as used in
// default.key.serde / default.value.serde: org.apache.kafka.common.serialization.Serdes$XSerde
// for X in String, Long, Integer, Short, Double, Float, Boolean, ByteArray, Bytes, UUID, Void.
// Unknown names return an error wrapping ErrUnknownClass.
func JavaSerde(className string) (serde.Serde[any], error) {
	const p = "org.apache.kafka.common.serialization.Serdes$"
	switch className {
	case p + "StringSerde":
		return serde.Untyped(serde.String()), nil
	case p + "LongSerde":
		return serde.Untyped(serde.Long()), nil
	case p + "IntegerSerde":
		return serde.Untyped(serde.Integer()), nil
	case p + "ShortSerde":
		return serde.Untyped(serde.Short()), nil
	case p + "DoubleSerde":
		return serde.Untyped(serde.Double()), nil
	case p + "FloatSerde":
		return serde.Untyped(serde.Float()), nil
	case p + "BooleanSerde":
		return serde.Untyped(serde.Boolean()), nil
	case p + "ByteArraySerde":
		return serde.Untyped(serde.ByteArray()), nil
	case p + "BytesSerde":
		return serde.Untyped(serde.Bytes()), nil
	case p + "UUIDSerde":
		return serde.Untyped(serde.UUID()), nil
	case p + "VoidSerde":
		return serde.Untyped(serde.Void()), nil
	}
	return nil, fmt.Errorf("%w: serde class %q", ErrUnknownClass, className)
}

// JavaTimestampExtractor returns the Go extractor of a Java extractor class name
// (org.apache.kafka.streams.processor.FailOnInvalidTimestamp, LogAndSkipOnInvalidTimestamp,
// UsePartitionTimeOnInvalidTimestamp, WallclockTimestampExtractor). Unknown names return an
// error wrapping ErrUnknownClass.
func JavaTimestampExtractor(className string) (processor.TimestampExtractor, error) {
	const p = "org.apache.kafka.streams.processor."
	switch className {
	case p + "FailOnInvalidTimestamp":
		return processor.FailOnInvalidTimestamp{}, nil
	case p + "LogAndSkipOnInvalidTimestamp":
		return processor.LogAndSkipOnInvalidTimestamp{}, nil
	case p + "UsePartitionTimeOnInvalidTimestamp":
		return processor.UsePartitionTimeOnInvalidTimestamp{}, nil
	case p + "WallclockTimestampExtractor":
		return processor.WallclockTimestampExtractor{}, nil
	}
	return nil, fmt.Errorf("%w: timestamp extractor class %q", ErrUnknownClass, className)
}

// Option configures a TopologyTestDriver beyond its Java properties.
type Option func(*options)

type options struct {
	keySerde, valueSerde serde.Serde[any]
	extractor            processor.TimestampExtractor
	logger               *slog.Logger
}

// WithLogger sets the logger of warnings (dropped records); default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithDefaultSerdes sets the default key and value serdes (Go values; they take precedence over
// default.key.serde / default.value.serde). Either may be nil to keep the property's.
func WithDefaultSerdes(key, value serde.Serde[any]) Option {
	return func(o *options) {
		if key != nil {
			o.keySerde = key
		}
		if value != nil {
			o.valueSerde = value
		}
	}
}

// WithTimestampExtractor sets the default timestamp extractor (over default.timestamp.extractor).
func WithTimestampExtractor(e processor.TimestampExtractor) Option {
	return func(o *options) { o.extractor = e }
}
