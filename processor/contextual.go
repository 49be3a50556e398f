package processor

// ContextualProcessor is a base for processors that keep their context: embed a
// *ContextualProcessor[KOut, VOut] (or the value) in a processor struct, implement Process, and
// use Context() to forward, schedule and get stores; Init stores the context and Close does
// nothing, as Java's abstract class org.apache.kafka.streams.processor.api.ContextualProcessor.
// A processor that overrides Init must call the embedded Init (or keep its own context).
type ContextualProcessor[KOut, VOut any] struct {
	ctx ProcessorContext[KOut, VOut]
}

// Init stores ctx for Context(). Java: ContextualProcessor.init.
func (p *ContextualProcessor[KOut, VOut]) Init(ctx ProcessorContext[KOut, VOut]) error {
	p.ctx = ctx
	return nil
}

// Context returns the context given to Init (nil before Init). Java: ContextualProcessor.context().
func (p *ContextualProcessor[KOut, VOut]) Context() ProcessorContext[KOut, VOut] { return p.ctx }

// Close does nothing. Java: Processor.close() default.
func (p *ContextualProcessor[KOut, VOut]) Close() error { return nil }

// ContextualFixedKeyProcessor is the [FixedKeyProcessor] counterpart of [ContextualProcessor].
// Java: org.apache.kafka.streams.processor.api.ContextualFixedKeyProcessor.
type ContextualFixedKeyProcessor[KIn, VOut any] struct {
	ctx FixedKeyProcessorContext[KIn, VOut]
}

// Init stores ctx for Context(). Java: ContextualFixedKeyProcessor.init.
func (p *ContextualFixedKeyProcessor[KIn, VOut]) Init(ctx FixedKeyProcessorContext[KIn, VOut]) error {
	p.ctx = ctx
	return nil
}

// Context returns the context given to Init (nil before Init). Java: ContextualFixedKeyProcessor.context().
func (p *ContextualFixedKeyProcessor[KIn, VOut]) Context() FixedKeyProcessorContext[KIn, VOut] {
	return p.ctx
}

// Close does nothing. Java: FixedKeyProcessor.close() default.
func (p *ContextualFixedKeyProcessor[KIn, VOut]) Close() error { return nil }
