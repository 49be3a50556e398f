package kstream

import (
	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// ValueTransformerWithKey computes the new value of a table row from its key and value, with
// the processing context at hand: the state stores connected to it, the record's metadata
// (ctx.RecordMetadata), punctuation. Each task (and each reader of an unmaterialized result,
// such as a join) gets its own instance from a ValueTransformerWithKeySupplier. Java:
// org.apache.kafka.streams.kstream.ValueTransformerWithKey.
type ValueTransformerWithKey[K, V, VR any] interface {
	// Init binds the transformer to its context, which cannot forward records. An error fails
	// the task.
	Init(ctx processor.ProcessingContext) error
	// Transform returns the new value for r: its key and value (a deleted row arrives as the
	// zero value of V, nil for a pointer V), the timestamp and headers of the record being
	// processed. The result replaces the row's value; a nil result (pointer, map, slice or
	// interface VR) deletes the row. An error fails the task.
	Transform(r processor.FixedKeyRecord[K, V]) (VR, error)
	// Close releases the transformer when its task closes.
	Close() error
}

// ValueTransformerWithKeySupplier returns a new transformer on every call. Java:
// org.apache.kafka.streams.kstream.ValueTransformerWithKeySupplier.
type ValueTransformerWithKeySupplier[K, V, VR any] func() ValueTransformerWithKey[K, V, VR]

// TransformValues maps every row's value with a transformer that can read state stores and
// record metadata: the processor "KTABLE-TRANSFORMVALUES-<n>" (or the TableNamed name) is
// connected to stateStoreNames (stores added with StreamsBuilder.AddStateStore), and calls
// the transformer for every update, deletes included (see ValueTransformerWithKey.Transform).
//
// When downstream operators need old values, a materialized result reads them from its store,
// and an unmaterialized one calls the transformer again on the old value in the current
// record's context (so a transformer that counts calls sees two). A reader of an
// unmaterialized result (a join, a value getter) transforms the parent table's value with its
// own transformer instance, whose records carry the parent value's timestamp (-1 when there
// is none), no headers and no RecordMetadata; stateStoreNames are not connected to such
// readers.
//
// Options: TableNamed, Materialized[K, VR]: only a Materialized with a store name
// materializes the result (as in Java, an unnamed Materialized only sets serdes). Errors
// (reported by Build, a *processor.TopologyError): a nil supplier. Java: KTable.transformValues(
// ValueTransformerWithKeySupplier[, Materialized][, Named], String... stateStoreNames).
func (t KTable[K, V]) TransformValues[VR any](supplier ValueTransformerWithKeySupplier[K, V, VR], stateStoreNames []string, opts ...TableOption[K, VR]) KTable[K, VR] {
	b := t.t.b
	named, mat := splitTableOptions(opts)
	keySerde := t.t.keySerde
	var valueSerde serde.Serde[any]
	var storeName string
	var mi *materializedInternal
	if mat != nil {
		if mat.storeName == "" {
			mi = &materializedInternal{keySerde: untyped(mat.keySerde), valueSerde: untyped(mat.valueSerde)}
		} else {
			mi = materialize(b, mat, tableTransformName)
			storeName = mi.queryableName()
		}
		if mi.keySerde != nil {
			keySerde = mi.keySerde
		}
		valueSerde = mi.valueSerde
	}
	name := b.orElseGenerate(named, tableTransformName)
	if supplier == nil {
		b.fail(dslErr(name, nil, "%s: transformer supplier must not be nil", name))
	}
	newTransformer := func() ktable.ValueTransformer { return typedTransformer[K, V, VR]{tr: supplier()} }
	sup := ktable.NewTransformValues(t.t.supplier, newTransformer, storeName)
	n := b.addNode(processorNode(name, sup, append([]string(nil), stateStoreNames...), storeBuilderIf(storeName, mi)), t.t.node)
	return KTable[K, VR]{t: &tableImpl{b: b, name: name, node: n, keySerde: keySerde, valueSerde: valueSerde, supplier: sup, queryableName: storeName,
		sourceNodes: t.t.sourceNodes, versioned: t.t.versionedOutput(mi, storeName)}}
}

// typedTransformer adapts a typed transformer to ktable.ValueTransformer.
type typedTransformer[K, V, VR any] struct {
	tr ValueTransformerWithKey[K, V, VR]
}

func (a typedTransformer[K, V, VR]) Init(ctx processor.ProcessingContext) error {
	return a.tr.Init(ctx)
}
func (a typedTransformer[K, V, VR]) Close() error { return a.tr.Close() }

func (a typedTransformer[K, V, VR]) Transform(key, value any, ts int64, h serde.Headers) (any, error) {
	k, v, err := cast2[K, V](key, value)
	if err != nil {
		return nil, err
	}
	out, err := a.tr.Transform(processor.NewFixedKeyRecordFromRecord(processor.NewRecordWithHeaders(k, v, ts, h)))
	if err != nil {
		return nil, err
	}
	return box(out), nil
}
