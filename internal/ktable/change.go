// Package ktable holds the table semantics the DSL (package kstream) compiles to: the Change
// of a table row ({New, Old}), value getters that let joins and downstream operators read a
// table's current value, the Change serde of repartition topics, and the table-side processors
// (table source, filter, mapValues, groupBy re-keying, KGroupedTable aggregate/reduce, and the
// stream aggregations that produce tables). Java counterpart: the table classes of
// org.apache.kafka.streams.kstream.internals (Change, KTableValueGetter(Supplier), KTableSource,
// KTableFilter, KTableMapValues, KTableRepartitionMap, KTableAggregate, KTableReduce,
// KStreamAggregate, KStreamReduce, ChangedSerializer/ChangedDeserializer, TimestampedTupleForwarder).
//
// Everything here is untyped, as records travel through the engine: keys and values are `any`
// and nil is Java's null. The table processors never call their functions with a null value
// (a delete passes as New nil, as in Java), and nothing here turns a null into a value; package
// kstream's doc ("Nulls") states the rule typed functions follow. The typed user functions of package kstream are adapted to the
// untyped function types of this package (Predicate, ValueMapper, ...) by kstream. Applications
// do not use this package directly; operator authors (joins, windowed aggregations) do: see
// /work/notes/dsl-structure.md.
package ktable

import (
	"fmt"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// Change is the value of a record flowing between table operators: the row's new value and,
// when the downstream asked for old values (see Supplier.EnableSendingOldValues), its previous
// value. Nil is null: New nil is a delete (tombstone), Old nil means no old value (absent or
// not sent). Java counterpart: org.apache.kafka.streams.kstream.internals.Change.
type Change struct {
	// New is the new value (nil: the row was deleted).
	New any
	// Old is the old value (nil: none, or old values are not sent).
	Old any
	// NotLatest marks an update of a versioned table that is not its key's latest version (an
	// out-of-order update, KIP-914): table-table joins and table aggregations drop it. Java:
	// Change.isLatest (inverted, so that a zero Change is the latest).
	NotLatest bool
}

// String renders the change as Java's Change.toString: "(new<-old)".
func (c Change) String() string { return fmt.Sprintf("(%v<-%v)", c.New, c.Old) }

// ValueAndTimestamp is the untyped stored value of a timestamped store.
type ValueAndTimestamp = store.ValueAndTimestamp[any]

// Store is the untyped view of the timestamped key-value stores the DSL materializes.
type Store = store.TimestampedKeyValueStore[any, any]

// ValueGetter reads the current value of a key from a table (from its store, or computed from
// the parent table's getter for non-materialized tables). Get returns nil when the key has no
// value. One getter is obtained per processor instance and initialised in the processor's Init.
// Java counterpart: KTableValueGetter.
type ValueGetter interface {
	// Init binds the getter to the processor's context (it fetches stores by name).
	Init(ctx processor.ProcessingContext) error
	// Get returns the value and timestamp of key, or nil if absent.
	Get(key any) (*ValueAndTimestamp, error)
	// Close releases the getter.
	Close()
}

// ValueGetterSupplier creates value getters of one table and names the stores they read
// (processors using the getter must be connected to these stores). Java counterpart:
// KTableValueGetterSupplier.
type ValueGetterSupplier interface {
	// Get returns a new getter.
	Get() ValueGetter
	// StoreNames returns the names of the stores the getters read.
	StoreNames() []string
}

// Supplier is a processor supplier of a table operator: it creates the operator's processors
// and exposes what downstream operators need. Java counterpart: KTableProcessorSupplier (and
// KStreamAggProcessorSupplier for aggregations, and KTableSource).
type Supplier interface {
	processor.ProcessorSupplier[any, any, any, any]
	// EnableSendingOldValues asks the operator to put old values into the Changes it forwards.
	// forceMaterialization allows materializing a source table to get them; it reports whether
	// old values will be sent. Java: enableSendingOldValues(boolean).
	EnableSendingOldValues(forceMaterialization bool) bool
	// View returns the value getter supplier of the operator's output table (materializing a
	// source table if needed). Java: view() / valueGetterSupplier().
	View() ValueGetterSupplier
}

// storeGetterSupplier reads a materialized timestamped store by name. Java:
// KTableMaterializedValueGetterSupplier and KTableSourceValueGetterSupplier.
type storeGetterSupplier struct{ name string }

// StoreValueGetterSupplier returns a getter supplier reading the timestamped store named name.
func StoreValueGetterSupplier(name string) ValueGetterSupplier {
	return storeGetterSupplier{name: name}
}

func (s storeGetterSupplier) Get() ValueGetter     { return &storeGetter{name: s.name} }
func (s storeGetterSupplier) StoreNames() []string { return []string{s.name} }

type storeGetter struct {
	name string
	st   Store
}

func (g *storeGetter) Init(ctx processor.ProcessingContext) error {
	st, err := GetStore(ctx, g.name)
	g.st = st
	return err
}

func (g *storeGetter) Get(key any) (*ValueAndTimestamp, error) {
	v, _, err := g.st.Get(key)
	return v, err
}

func (g *storeGetter) Close() {}

// GetStore returns the untyped timestamped store named name from ctx. Errors: the context's
// error for an unknown or unconnected store, a *processor.StoreTypeError for another store type.
func GetStore(ctx processor.ProcessingContext, name string) (Store, error) {
	if st, err := ctx.StateStore(name); err == nil {
		if vs, ok := st.(store.VersionedKeyValueStore[any, any]); ok {
			return &VersionedView{Versioned: vs}, nil
		}
	}
	return processor.GetStateStore[Store](ctx, name)
}

// valueOf returns the value of a stored entry, nil for nil.
func valueOf(v *ValueAndTimestamp) any {
	if v == nil {
		return nil
	}
	return v.Value
}

// VersionedValueGetter is implemented by the value getters of versioned tables (a versioned
// source table, and the filters and mapValues over one that are not materialized): GetAsOf
// returns the table's value of key as of asOf (ms), the version with the largest timestamp
// <= asOf, or nil (no such version, a tombstone, or asOf beyond the history retention).
// IsVersioned reports whether the getter is bound to a versioned store (known after Init).
// Stream-table joins read the version as of each stream record's timestamp through it (KIP-914,
// KIP-923). Java counterpart: KTableValueGetter.isVersioned and get(key, asOfTimestamp).
type VersionedValueGetter interface {
	ValueGetter
	// IsVersioned reports whether GetAsOf answers as-of queries; valid after Init.
	IsVersioned() bool
	// GetAsOf returns the value of key as of asOf (ms), or nil.
	GetAsOf(key any, asOf int64) (*ValueAndTimestamp, error)
}

// IsVersionedGetter reports whether g reads a versioned table (after g's Init).
func IsVersionedGetter(g ValueGetter) bool {
	v, ok := g.(VersionedValueGetter)
	return ok && v.IsVersioned()
}

func (g *storeGetter) IsVersioned() bool {
	_, ok := g.st.(*VersionedView)
	return ok
}

func (g *storeGetter) GetAsOf(key any, asOf int64) (*ValueAndTimestamp, error) {
	v, ok := g.st.(*VersionedView)
	if !ok {
		return g.Get(key)
	}
	r, err := v.Versioned.GetAsOf(key, asOf)
	if err != nil || r == nil {
		return nil, err
	}
	return &ValueAndTimestamp{Value: r.Value, Timestamp: r.Timestamp}, nil
}
