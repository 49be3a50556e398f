package processor

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AsyncOrdering says in which order an async step hands its results downstream.
type AsyncOrdering int

const (
	// AsyncPerKey (the default): records with equal keys are called one after the other and
	// their results forwarded in input order; records with different keys are called
	// concurrently and their results forwarded as they complete.
	AsyncPerKey AsyncOrdering = iota
	// AsyncPerPartition: every record is called concurrently (equal keys included) and the
	// results are forwarded in the order the records reached the step (for a task reading one
	// partition, offset order).
	AsyncPerPartition
)

// AsyncOptions configure an async step (kstream's MapValuesAsync, [NewAsyncFixedKeySupplier]).
// Zero fields take their defaults. No Java counterpart (Kafka Streams calls out on the stream
// thread; KIP-311 and KIP-408 proposed async processing and were abandoned).
type AsyncOptions struct {
	// MaxInFlight is the most calls of the step running at once in one task. Default 32.
	// The step holds at most 2 x MaxInFlight records of a task (running, waiting for their key
	// or a free slot, or done and waiting for an earlier record); while it holds more, the task
	// takes no new input (its partitions fill up to buffered.records.per.partition and are then
	// no longer fetched).
	MaxInFlight int
	// MaxQueuedPerKey is the most records of one key waiting behind that key's running call
	// (AsyncPerKey); while a key has that many waiting, the task takes no new input. Default 16.
	MaxQueuedPerKey int
	// Timeout bounds each call: its context is cancelled after it and the call fails with an
	// error wrapping context.DeadlineExceeded. Default 30 s; negative means no timeout. A
	// commit waits for the calls in flight, so keep it well below max.poll.interval.ms.
	Timeout time.Duration
	// Ordering is AsyncPerKey (default) or AsyncPerPartition.
	Ordering AsyncOrdering
}

// AsyncError is the failure of one call of an async step (its error, its timeout, or its
// panic), with the record it was made for; the processing exception handler receives it (and
// the dead-letter record is that input record).
type AsyncError struct {
	// Key is the record's key at the step.
	Key any
	// Topic, Partition and Offset locate the input record ("" and -1 when the record came from
	// a punctuation).
	Topic     string
	Partition int32
	Offset    int64
	// Err is the call's error; a timeout wraps context.DeadlineExceeded.
	Err error
}

// Error implements error.
func (e *AsyncError) Error() string {
	return fmt.Sprintf("async call for key %v (topic=%s, partition=%d, offset=%d) failed: %v",
		e.Key, e.Topic, e.Partition, e.Offset, e.Err)
}

// Unwrap returns the call's error.
func (e *AsyncError) Unwrap() error { return e.Err }

// AsyncFixedKeyProcessor is a fixed-key processor that calls an outside service (HTTP, a
// database, a model) per record without holding up its task: the call runs on a goroutine of
// its own while the task goes on with other records.
//
// Each record goes through three steps:
//   - Start, on the task's goroutine when the record's turn comes (AsyncPerKey: every earlier
//     record of its key is complete). It may read the task's stores (for the record's key) and
//     returns the call to make, or nil to complete at once with the zero result.
//   - the call, on its own goroutine, with a context cancelled at the Timeout, on revocation and
//     on close. It must not touch the processor context or stores.
//   - Complete, on the task's goroutine with the record's own context (metadata, timestamp,
//     headers): it may read and write stores and forwards the results.
//
// A call's error goes to the processing exception handler as an [*AsyncError]; Complete is not
// called then. Not supported: punctuators scheduled by the async processor (schedule them on
// another processor), reads or writes of other keys' entries that an earlier record still in
// flight may change (range reads see only the completed records), forwarding from Start.
type AsyncFixedKeyProcessor[K, V, R, VOut any] interface {
	// Init is called once before any record.
	Init(ctx FixedKeyProcessorContext[K, VOut]) error
	// Start returns the call for rec (nil: complete with the zero R at once).
	Start(rec FixedKeyRecord[K, V]) (func(ctx context.Context) (R, error), error)
	// Complete applies the call's result: store writes, forwards.
	Complete(rec FixedKeyRecord[K, V], result R) error
	// Close releases resources.
	Close() error
}

// NewAsyncFixedKeySupplier returns a fixed-key processor supplier (for KStream.ProcessValues or
// Topology.AddFixedKeyProcessor) running the async processors f returns with opts. The step
// only runs in the engine (an application instance or the testdriver): Init fails with
// ErrAsyncUnsupported in a context that cannot run calls, such as a mock context.
func NewAsyncFixedKeySupplier[K, V, R, VOut any](opts AsyncOptions, f func() AsyncFixedKeyProcessor[K, V, R, VOut]) FixedKeyProcessorSupplier[K, V, VOut] {
	return FixedKeyProcessorSupplierFunc[K, V, VOut](func() FixedKeyProcessor[K, V, VOut] {
		p := f()
		if untypedValue(p) == nil {
			return nil
		}
		return &asyncFixedKey[K, V, R, VOut]{opts: opts, p: p}
	})
}

// ErrAsyncUnsupported is returned by the Init of an async step whose context cannot run calls.
var ErrAsyncUnsupported = errors.New("processor: async steps need the engine's processor context")

// asyncEngine is implemented by the engine's processor contexts: it registers an async step of
// the node and returns the function that submits one record to it. submit runs start (on the
// task's goroutine, when the record's turn comes), then the call start returned on a goroutine
// of its own, then complete with its result on the task's goroutine. For the engine; users
// write [AsyncFixedKeyProcessor]s. The engine fills in the options' defaults and fails for an
// unknown Ordering.
type asyncEngine interface {
	AsyncStep(opts AsyncOptions) (submit func(key any, rec Record[any, any],
		start func() (func(context.Context) (any, error), error), complete func(result any) error) error, err error)
}

type asyncFixedKey[K, V, R, VOut any] struct {
	opts   AsyncOptions
	p      AsyncFixedKeyProcessor[K, V, R, VOut]
	submit func(key any, rec Record[any, any], start func() (func(context.Context) (any, error), error), complete func(any) error) error
}

func (a *asyncFixedKey[K, V, R, VOut]) Init(ctx FixedKeyProcessorContext[K, VOut]) error {
	fc, ok := ctx.(*fixedKeyContext[K, VOut])
	if !ok {
		return ErrAsyncUnsupported
	}
	eng, ok := fc.ProcessorContext.(asyncEngine)
	if !ok {
		return ErrAsyncUnsupported
	}
	submit, err := eng.AsyncStep(a.opts)
	if err != nil {
		return err
	}
	a.submit = submit
	return a.p.Init(ctx)
}

func (a *asyncFixedKey[K, V, R, VOut]) Process(rec FixedKeyRecord[K, V]) error {
	ur := Record[any, any]{Key: untypedValue(rec.key), Value: untypedValue(rec.value), Timestamp: rec.timestamp, Headers: rec.headers}
	return a.submit(ur.Key, ur, func() (func(context.Context) (any, error), error) {
		call, err := a.p.Start(rec)
		if err != nil || call == nil {
			return nil, err
		}
		return func(ctx context.Context) (any, error) {
			r, err := call(ctx)
			return r, err
		}, nil
	}, func(result any) error {
		r, _ := result.(R) // nil: the zero R (a call that returned none)
		return a.p.Complete(rec, r)
	})
}

func (a *asyncFixedKey[K, V, R, VOut]) Close() error { return a.p.Close() }
