package processor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// fakeContext is an untyped context recording forwards.
type fakeContext struct {
	forwarded []processor.Record[any, any]
	to        []string
}

func (c *fakeContext) ApplicationID() string    { return "app" }
func (c *fakeContext) TaskID() processor.TaskID { return processor.TaskID{} }
func (c *fakeContext) RecordMetadata() (processor.RecordMetadata, bool) {
	return processor.RecordMetadata{}, false
}
func (c *fakeContext) KeySerde() serde.Serde[any]    { return nil }
func (c *fakeContext) ValueSerde() serde.Serde[any]  { return nil }
func (c *fakeContext) StateDir() string              { return "" }
func (c *fakeContext) AppConfigs() map[string]string { return nil }
func (c *fakeContext) StateStore(string) (processor.StateStore, error) {
	return nil, processor.ErrUnknownStore
}
func (c *fakeContext) Schedule(time.Duration, processor.PunctuationType, processor.Punctuator) (processor.Cancellable, error) {
	return nil, nil
}
func (c *fakeContext) ScheduleAt(time.Time, time.Duration, processor.PunctuationType, processor.Punctuator) (processor.Cancellable, error) {
	return nil, nil
}
func (c *fakeContext) Commit()                    {}
func (c *fakeContext) CurrentSystemTimeMs() int64 { return 0 }
func (c *fakeContext) CurrentStreamTimeMs() int64 { return -1 }
func (c *fakeContext) Forward(r processor.Record[any, any]) error {
	c.forwarded = append(c.forwarded, r)
	c.to = append(c.to, "")
	return nil
}
func (c *fakeContext) ForwardTo(r processor.Record[any, any], child string) error {
	c.forwarded = append(c.forwarded, r)
	c.to = append(c.to, child)
	return nil
}

// lengthProcessor forwards (key, *len(value)) and a nil pointer for an empty value.
type lengthProcessor struct {
	ctx processor.ProcessorContext[string, *int]
}

func (p *lengthProcessor) Init(ctx processor.ProcessorContext[string, *int]) error {
	p.ctx = ctx
	return nil
}
func (p *lengthProcessor) Process(r processor.Record[string, string]) error {
	if r.Value == "" {
		return p.ctx.ForwardTo(r.WithValue((*int)(nil)), "nulls")
	}
	n := len(r.Value)
	return p.ctx.Forward(r.WithValue(&n))
}
func (p *lengthProcessor) Close() error { return nil }

func TestUntypedProcessorAdapter(t *testing.T) {
	sup := processor.UntypedProcessorSupplier("len", processor.ProcessorSupplierFunc[string, string, string, *int](
		func() processor.Processor[string, string, string, *int] { return &lengthProcessor{} }))
	p := sup.Get()
	ctx := &fakeContext{}
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Process(processor.Record[any, any]{Key: "a", Value: "xyz", Timestamp: 5}); err != nil {
		t.Fatal(err)
	}
	// A null (nil) value reaches a string processor as "" and a typed nil pointer leaves as nil.
	if err := p.Process(processor.Record[any, any]{Key: nil, Value: nil, Timestamp: 6}); err != nil {
		t.Fatal(err)
	}
	if len(ctx.forwarded) != 2 {
		t.Fatalf("forwarded %v", ctx.forwarded)
	}
	if r := ctx.forwarded[0]; r.Key != "a" || *(r.Value.(*int)) != 3 || r.Timestamp != 5 || ctx.to[0] != "" {
		t.Fatalf("first %+v", r)
	}
	if r := ctx.forwarded[1]; r.Key != "" || r.Value != nil || ctx.to[1] != "nulls" {
		t.Fatalf("second %+v (value %#v)", r, r.Value)
	}
	err := p.Process(processor.Record[any, any]{Key: int64(1), Value: "x"})
	var rte *processor.RecordTypeError
	if !errors.Is(err, processor.ErrRecordTypeMismatch) || !errors.As(err, &rte) || rte.Node != "len" || rte.Field != "key" || rte.Want != "string" || rte.Got != "int64" {
		t.Fatalf("type mismatch error: %v", err)
	}
}

type upperValue struct {
	ctx processor.FixedKeyProcessorContext[string, int]
}

func (p *upperValue) Init(ctx processor.FixedKeyProcessorContext[string, int]) error {
	p.ctx = ctx
	return nil
}
func (p *upperValue) Process(r processor.FixedKeyRecord[string, string]) error {
	return p.ctx.Forward(r.WithValue(len(r.Value())))
}
func (p *upperValue) Close() error { return nil }

func TestUntypedFixedKeyAdapter(t *testing.T) {
	sup := processor.UntypedFixedKeyProcessorSupplier("fk", processor.FixedKeyProcessorSupplierFunc[string, string, int](
		func() processor.FixedKeyProcessor[string, string, int] { return &upperValue{} }))
	p := sup.Get()
	ctx := &fakeContext{}
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Process(processor.Record[any, any]{Key: "k", Value: "abcd", Timestamp: 3}); err != nil {
		t.Fatal(err)
	}
	if r := ctx.forwarded[0]; r.Key != "k" || r.Value != 4 || r.Timestamp != 3 {
		t.Fatalf("forwarded %+v", r)
	}
}

// NewSupplier takes its type parameters from the function: they are written once.
func TestNewSupplierInfersTypes(t *testing.T) {
	topo := processor.NewTopology()
	if err := topo.AddSource("in", []string{"in"}); err != nil {
		t.Fatal(err)
	}
	sup := processor.NewSupplier(func() processor.Processor[string, string, string, int] { return &lenProc{} })
	var _ processor.ProcessorSupplier[string, string, string, int] = sup
	if err := topo.AddProcessor("len", sup, "in"); err != nil {
		t.Fatal(err)
	}
	fk := processor.NewFixedKeySupplier(func() processor.FixedKeyProcessor[string, string, int] { return nil })
	var _ processor.FixedKeyProcessorSupplier[string, string, int] = fk
}

type lenProc struct {
	ctx processor.ProcessorContext[string, int]
}

func (p *lenProc) Init(ctx processor.ProcessorContext[string, int]) error { p.ctx = ctx; return nil }
func (p *lenProc) Process(r processor.Record[string, string]) error {
	return p.ctx.Forward(processor.Record[string, int]{Key: r.Key, Value: len(r.Value), Timestamp: r.Timestamp})
}
func (p *lenProc) Close() error { return nil }
