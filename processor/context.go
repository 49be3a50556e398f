package processor

import (
	"time"

	"github.com/kstreams-go/kstreams/serde"
)

// RecordMetadata is where the record being processed was read from. It is the counterpart
// of Java's org.apache.kafka.streams.processor.api.RecordMetadata. There is none while a
// punctuation runs (Java: Optional.empty()), nor for records created in a punctuator.
type RecordMetadata struct {
	// Topic is the topic the record was read from.
	Topic string
	// Partition is the partition of Topic.
	Partition int32
	// Offset is the record's offset in that partition.
	Offset int64
}

// ProcessingContext is what processors of every kind and state stores can ask of the engine
// while they run. It is the counterpart of Java's
// org.apache.kafka.streams.processor.api.ProcessingContext. Methods may only be called from
// the goroutine that calls the processor (from Init, Process, Close or a punctuator).
type ProcessingContext interface {
	// ApplicationID returns the application.id config. Java: applicationId().
	ApplicationID() string
	// TaskID returns the task this processor runs in. Java: taskId().
	TaskID() TaskID
	// RecordMetadata returns the origin of the record being processed and true, or false
	// during a punctuation. Java: recordMetadata() (an Optional).
	RecordMetadata() (RecordMetadata, bool)
	// KeySerde returns the default key serde (default.key.serde), or nil when none is
	// configured. Java: keySerde().
	KeySerde() serde.Serde[any]
	// ValueSerde returns the default value serde (default.value.serde), or nil when none is
	// configured. Java: valueSerde().
	ValueSerde() serde.Serde[any]
	// StateDir returns the task's state directory (empty for a task with no persistent
	// store). Java: stateDir().
	StateDir() string
	// AppConfigs returns the application's configuration as Java property names and string
	// values (a copy). Java: appConfigs().
	AppConfigs() map[string]string
	// StateStore returns the state store name connected to this processor. The error wraps
	// [ErrUnknownStore] when no store has that name or the store is not connected to the
	// node (the message says which). Use [GetStateStore] for a typed
	// result. Java: getStateStore(name) (which throws instead).
	StateStore(name string) (StateStore, error)
	// Schedule schedules punctuator to run every interval (at least 1 ms; finer parts are
	// truncated to ms) of stream time or wall-clock time (see [PunctuationType]); the returned
	// Cancellable stops it. The error wraps [ErrInvalidSchedule] for an interval below 1 ms.
	// Java: schedule(Duration, PunctuationType, Punctuator).
	Schedule(interval time.Duration, typ PunctuationType, punctuator Punctuator) (Cancellable, error)
	// ScheduleAt schedules punctuator every interval (at least 1 ms), first due at start
	// (ms precision). A start before the current stream time (StreamTime) or wall-clock time
	// (WallClockTime) moves forward onto the first point start + k*interval after it. The
	// error wraps [ErrInvalidSchedule] for an interval below 1 ms or a start before the Unix
	// epoch. Java 4.4: schedule(Instant, Duration,
	// PunctuationType, Punctuator).
	ScheduleAt(start time.Time, interval time.Duration, typ PunctuationType, punctuator Punctuator) (Cancellable, error)
	// Commit requests a commit of the task as soon as possible (after the current record).
	// Java: commit().
	Commit()
	// CurrentSystemTimeMs returns the engine's cached wall-clock time in ms (the mocked time in
	// the test driver). Java: currentSystemTimeMs().
	CurrentSystemTimeMs() int64
	// CurrentStreamTimeMs returns the task's stream time in ms: the largest timestamp of the
	// records processed so far (-1 before any, Java's RecordQueue.UNKNOWN).
	// Java: currentStreamTimeMs().
	CurrentStreamTimeMs() int64
}

// ProcessorContext is the context of a [Processor]: a [ProcessingContext] that can forward
// records of type Record[KForward, VForward] to the node's children. Counterpart of Java's
// org.apache.kafka.streams.processor.api.ProcessorContext<KForward, VForward>.
//
// Forwarded records get the current record's metadata (topic, partition, offset) if any; a
// forwarded record with a negative timestamp is rejected with [ErrInvalidTimestamp].
type ProcessorContext[KForward, VForward any] interface {
	ProcessingContext
	// Forward sends record to every child of the node, in the order the children were added,
	// processing it depth-first before returning. The first child error is returned.
	// Java: forward(record).
	Forward(record Record[KForward, VForward]) error
	// ForwardTo sends record to the child named childName only. The error wraps
	// [ErrUnknownChild] when the node has no such child. Java: forward(record, childName).
	ForwardTo(record Record[KForward, VForward], childName string) error
}

// FixedKeyProcessorContext is the context of a [FixedKeyProcessor]: it can only forward
// records whose key is the one of the input. Counterpart of Java's
// org.apache.kafka.streams.processor.api.FixedKeyProcessorContext<KForward, VForward>.
type FixedKeyProcessorContext[KForward, VForward any] interface {
	ProcessingContext
	// Forward sends record to every child. Java: forward(FixedKeyRecord).
	Forward(record FixedKeyRecord[KForward, VForward]) error
	// ForwardTo sends record to the child named childName only; the error wraps
	// [ErrUnknownChild] for an unknown child. Java: forward(FixedKeyRecord, childName).
	ForwardTo(record FixedKeyRecord[KForward, VForward], childName string) error
}

// GetStateStore returns the store name connected to the running processor, converted to S
// (a store interface such as store.KeyValueStore[K, V]). Errors: those of
// ProcessingContext.StateStore, or one wrapping [ErrWrongStoreType] when the store is not
// an S. Java: getStateStore(name) with its unchecked cast.
func GetStateStore[S any](ctx ProcessingContext, name string) (S, error) {
	var zero S
	st, err := ctx.StateStore(name)
	if err != nil {
		return zero, err
	}
	s, ok := st.(S)
	if !ok {
		return zero, &StoreTypeError{Store: name, Want: typeName[S](), Got: typeNameOf(st)}
	}
	return s, nil
}
