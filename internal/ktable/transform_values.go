package ktable

import (
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// ValueTransformer is the untyped transformer of KTable.transformValues: one instance per
// processor (and per value getter), initialised with a context that cannot forward.
type ValueTransformer interface {
	// Init binds the transformer to its context (stores, record metadata, punctuation).
	Init(ctx processor.ProcessingContext) error
	// Transform returns the new value of key's row for value (nil: a deleted row), in the
	// record context of timestamp ts and headers h. A nil result deletes the row.
	Transform(key, value any, ts int64, h serde.Headers) (any, error)
	// Close releases the transformer.
	Close() error
}

// TransformValues is the supplier of KTable.transformValues: each Change's new value (and,
// when old values are sent, the old value: read from its store when materialized, else
// transformed again) goes through a transformer that can read stores and record metadata.
// Deletes reach the transformer as nil values. Java: KTableTransformValues.
type TransformValues struct {
	parent         Supplier
	newTransformer func() ValueTransformer
	queryableName  string
	sendOldValues  bool
}

// NewTransformValues returns the supplier; storeName "" means not materialized.
func NewTransformValues(parent Supplier, newTransformer func() ValueTransformer, storeName string) *TransformValues {
	return &TransformValues{parent: parent, newTransformer: newTransformer, queryableName: storeName}
}

// EnableSendingOldValues: see Supplier.
func (t *TransformValues) EnableSendingOldValues(force bool) bool {
	return enableOldValues(t.parent, t.queryableName, force, &t.sendOldValues)
}

// View reads the store when materialized; else each getter transforms the parent's value with
// its own transformer, in a record context with the parent value's timestamp (-1 when absent),
// no headers and no record metadata (Java: KTableTransformValuesGetter).
func (t *TransformValues) View() ValueGetterSupplier {
	if t.queryableName != "" {
		return StoreValueGetterSupplier(t.queryableName)
	}
	return transformGetterSupplier{t: t, parent: t.parent.View()}
}

type transformGetterSupplier struct {
	t      *TransformValues
	parent ValueGetterSupplier
}

func (s transformGetterSupplier) Get() ValueGetter {
	return &transformGetter{parent: s.parent.Get(), tr: s.t.newTransformer()}
}

func (s transformGetterSupplier) StoreNames() []string { return s.parent.StoreNames() }

type transformGetter struct {
	parent ValueGetter
	tr     ValueTransformer
}

func (g *transformGetter) Init(ctx processor.ProcessingContext) error {
	if err := g.parent.Init(ctx); err != nil {
		return err
	}
	return g.tr.Init(noMetadataContext{ctx})
}

func (g *transformGetter) Get(key any) (*ValueAndTimestamp, error) {
	v, err := g.parent.Get(key)
	if err != nil {
		return nil, err
	}
	return g.transform(key, v)
}

func (g *transformGetter) transform(key any, v *ValueAndTimestamp) (*ValueAndTimestamp, error) {
	ts := unknownTimestamp
	if v != nil {
		ts = v.Timestamp
	}
	nv, err := g.tr.Transform(key, valueOf(v), ts, serde.Headers{})
	if err != nil || nv == nil {
		return nil, err
	}
	return &ValueAndTimestamp{Value: nv, Timestamp: ts}, nil
}

func (g *transformGetter) Close() {
	g.parent.Close()
	_ = g.tr.Close()
}

// IsVersioned reports whether the parent getter reads a versioned table.
func (g *transformGetter) IsVersioned() bool { return IsVersionedGetter(g.parent) }

// GetAsOf transforms the parent's version as of asOf.
func (g *transformGetter) GetAsOf(key any, asOf int64) (*ValueAndTimestamp, error) {
	p, ok := g.parent.(VersionedValueGetter)
	if !ok || !p.IsVersioned() {
		return g.Get(key)
	}
	v, err := p.GetAsOf(key, asOf)
	if err != nil {
		return nil, err
	}
	return g.transform(key, v)
}

// noMetadataContext is the context of a getter's transformer: the record it reads has no
// topic, partition or offset.
type noMetadataContext struct{ processor.ProcessingContext }

func (noMetadataContext) RecordMetadata() (processor.RecordMetadata, bool) {
	return processor.RecordMetadata{}, false
}

// forwardingDisabled hides Forward from a transformer (Java: ForwardingDisabledProcessorContext).
type forwardingDisabled struct{ processor.ProcessingContext }

// Get returns a new transformValues processor.
func (t *TransformValues) Get() processor.Processor[any, any, any, any] {
	return &transformValuesProc{t: t, tr: t.newTransformer()}
}

type transformValuesProc struct {
	base
	t   *TransformValues
	tr  ValueTransformer
	st  Store
	fwd *Forwarder
}

func (p *transformValuesProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	if err := p.tr.Init(forwardingDisabled{ctx}); err != nil {
		return err
	}
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.t.queryableName, p.t.sendOldValues)
	return err
}

func (p *transformValuesProc) Close() error { return p.tr.Close() }

func (p *transformValuesProc) Process(r processor.Record[any, any]) error {
	c := r.Value.(Change)
	nv, err := p.tr.Transform(r.Key, c.New, r.Timestamp, r.Headers)
	if err != nil {
		return err
	}
	var ov any
	if p.t.sendOldValues {
		if p.st != nil {
			o, err := get(p.st, r.Key)
			if err != nil {
				return err
			}
			ov = valueOf(o)
		} else if ov, err = p.tr.Transform(r.Key, c.Old, r.Timestamp, r.Headers); err != nil {
			return err
		}
	}
	return forwardChange(p.ctx, p.st, p.fwd, r, Change{New: nv, Old: ov, NotLatest: c.NotLatest})
}
