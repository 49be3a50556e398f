package testdriver

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// maxTaskIdleMs parses max.task.idle.ms (a LONG, default 0).
func maxTaskIdleMs(props map[string]string) (int64, error) {
	v, ok := props[propnames.MaxTaskIdleMsConfig]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q for configuration %s: not a number of type LONG", ErrInvalidArgument, v, propnames.MaxTaskIdleMsConfig)
	}
	return n, nil
}

// exceptionHandlers maps the handler properties to the engine's handler functions.
func exceptionHandlers(props map[string]string) (deser func(task.RawRecord, error) task.HandlerResponse,
	proc func(string, processor.Record[any, any], error) task.HandlerResponse, err error) {
	const p = "org.apache.kafka.streams.errors."
	switch c := props[propnames.DeserializationExceptionHandlerConfig]; c {
	case "", p + "LogAndFailExceptionHandler":
	case p + "LogAndContinueExceptionHandler":
		deser = func(task.RawRecord, error) task.HandlerResponse { return task.Continue }
	default:
		return nil, nil, fmt.Errorf("%w: deserialization exception handler class %q", serde.ErrUnknownClass, c)
	}
	switch c := props[propnames.ProcessingExceptionHandlerConfig]; c {
	case "", p + "LogAndFailProcessingExceptionHandler":
	case p + "LogAndContinueProcessingExceptionHandler":
		proc = func(string, processor.Record[any, any], error) task.HandlerResponse { return task.Continue }
	default:
		return nil, nil, fmt.Errorf("%w: processing exception handler class %q", serde.ErrUnknownClass, c)
	}
	return deser, proc, nil
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
