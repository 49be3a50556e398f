package kstream

import (
	"context"

	"github.com/kstreams-go/kstreams/processor"
)

// MapValuesAsync replaces every record's value with f(ctx, key, value), calling f on a
// goroutine of its own so that a slow outside service (HTTP, a database, a model) does not hold
// up the task: up to opts.MaxInFlight calls of a task run at once. With the default
// processor.AsyncPerKey ordering, records with equal keys are called one after the other and
// their results forwarded in input order, while different keys run concurrently
// (processor.AsyncPerPartition forwards everything in input order). Results go downstream on
// the task's goroutine; a commit waits for the records in flight, so under exactly-once every
// result is in the transaction of its input's offsets. ctx ends at opts.Timeout (default 30 s)
// and when the task is revoked or closed.
//
// An error (or a timeout, or a panic) of f goes to the processing exception handler as a
// *processor.AsyncError with the record's key, topic, partition and offset; a handler that
// continues drops the record (and dead-letters its input record). A tombstone (null value) is
// not passed to f: it is forwarded as a tombstone, in its key's order. The node is named like
// MapValues's, "KSTREAM-MAPVALUES-<n>". No Java counterpart (Java calls out on the stream
// thread, in mapValues).
func (s KStream[K, V]) MapValuesAsync[VR any](f func(ctx context.Context, key K, value V) (VR, error), opts processor.AsyncOptions, named ...Named) KStream[K, VR] {
	name := s.impl().b.orElseGenerate(lastNamed(named), mapValuesName)
	s.checkFunc(name, f == nil)
	vNil := nillable[V]()
	n := processorNode(name, asyncMapSupplier{opts: opts, call: func(ctx context.Context, r processor.Record[any, any]) (any, error) {
		k, v, err := cast2[K, V](r.Key, r.Value)
		if err != nil {
			return nil, err
		}
		vr, err := f(ctx, k, v)
		if err != nil {
			return nil, err
		}
		return box(vr), nil
	}, tombstone: func(v any) bool { return tombstoneFor(vNil, v) }}, nil, nil)
	n.valueChanging = true
	s.impl().b.addNode(n, s.impl().node)
	return KStream[K, VR]{s: s.derive(name, n, s.impl().keySerde, nil, s.impl().repartitionRequired)}
}

// asyncEngine is the engine's side of async steps (the task's processor context).
type asyncEngine interface {
	AsyncStep(opts processor.AsyncOptions) (func(key any, rec processor.Record[any, any],
		start func() (func(context.Context) (any, error), error), complete func(any) error) error, error)
}

type asyncMapSupplier struct {
	opts      processor.AsyncOptions
	call      func(context.Context, processor.Record[any, any]) (any, error)
	tombstone func(any) bool
}

func (s asyncMapSupplier) Get() processor.Processor[any, any, any, any] { return &asyncMap{s: s} }

type asyncMap struct {
	s      asyncMapSupplier
	ctx    processor.ProcessorContext[any, any]
	submit func(key any, rec processor.Record[any, any], start func() (func(context.Context) (any, error), error), complete func(any) error) error
}

func (p *asyncMap) Init(ctx processor.ProcessorContext[any, any]) error {
	eng, ok := ctx.(asyncEngine)
	if !ok {
		return processor.ErrAsyncUnsupported
	}
	submit, err := eng.AsyncStep(p.s.opts)
	if err != nil {
		return err
	}
	p.ctx, p.submit = ctx, submit
	return nil
}

func (p *asyncMap) Process(r processor.Record[any, any]) error {
	if p.s.tombstone(r.Value) {
		// No call: forwarded as a tombstone when its key's turn comes.
		return p.submit(r.Key, r, func() (func(context.Context) (any, error), error) { return nil, nil },
			func(any) error { return p.ctx.Forward(r) })
	}
	return p.submit(r.Key, r, func() (func(context.Context) (any, error), error) {
		return func(ctx context.Context) (any, error) { return p.s.call(ctx, r) }, nil
	}, func(res any) error {
		out := r
		out.Value = res
		return p.ctx.Forward(out)
	})
}

func (p *asyncMap) Close() error { return nil }
