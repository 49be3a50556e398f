package ktable

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// ErrNullKey is returned by table aggregations that receive a record with a null key (Java:
// StreamsException "Record key for KTable aggregate operator with state X should not be null").
var ErrNullKey = errors.New("record key for a KTable operator must not be null")

// base holds the context every processor of this package keeps.
type base struct {
	ctx processor.ProcessorContext[any, any]
}

func (b *base) Init(ctx processor.ProcessorContext[any, any]) error { b.ctx = ctx; return nil }
func (b *base) Close() error                                        { return nil }

// storeForwarder opens store name and its forwarder; name "" opens nothing.
func storeForwarder(ctx processor.ProcessorContext[any, any], name string, sendOld bool) (Store, *Forwarder, error) {
	if name == "" {
		return nil, nil, nil
	}
	st, err := GetStore(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return st, NewForwarder(ctx, st, sendOld), nil
}

func put(st Store, key, value any, ts int64) error {
	if v, ok := st.(*VersionedView); ok {
		_, err := v.PutAt(key, value, ts)
		return err
	}
	return st.Put(key, store.MakeValueAndTimestamp(value, ts))
}

// putLatest writes value to st at ts as the table operators do (Java: KeyValueStoreWrapper.put
// and its put return code): for a versioned table's store, stored is false when ts is beyond
// the history retention (nothing stored; the operator forwards nothing) and notLatest reports
// a version older than the key's latest (KIP-914); other stores always store the latest value.
func putLatest(st Store, key, value any, ts int64) (stored, notLatest bool, err error) {
	if v, ok := st.(*VersionedView); ok {
		res, err := v.PutAt(key, value, ts)
		if err != nil || res == store.PutReturnCodeNotPut {
			return false, false, err
		}
		return true, res != store.PutReturnCodeValidToUndefined, nil
	}
	return true, false, st.Put(key, store.MakeValueAndTimestamp(value, ts))
}

// putReusing is put that reuses old, a value read from st just before and owned by the caller,
// when st hands out values nobody else holds (storeapi.FreshValuesStore); fresh caches that.
func putReusing(st Store, fresh bool, key, value any, ts int64, old *ValueAndTimestamp) error {
	if !fresh {
		return put(st, key, value, ts)
	}
	return st.Put(key, remakeValueAndTimestamp(old, value, ts))
}

// remakeValueAndTimestamp is store.MakeValueAndTimestamp that reuses old, when not nil,
// instead of allocating: it sets old's value and timestamp and returns it (nil, with old
// unchanged, when value is null: nil, or a nil pointer, slice, map, func or chan). The
// caller owns old (putReusing).
func remakeValueAndTimestamp(old *ValueAndTimestamp, value any, ts int64) *ValueAndTimestamp {
	if old == nil || isNullValue(value) {
		return store.MakeValueAndTimestamp(value, ts)
	}
	old.Value, old.Timestamp = value, ts
	return old
}

// isNullValue reports whether v is null as the stores see it: nil, or a nil pointer, slice,
// map, func, chan or interface inside the interface.
func isNullValue(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// isFresh reports whether st is a storeapi.FreshValuesStore.
func isFresh(st Store) bool {
	_, ok := st.(storeapi.FreshValuesStore)
	return ok
}

func get(st Store, key any) (*ValueAndTimestamp, error) {
	v, _, err := st.Get(key)
	return v, err
}

// keptStore is the store of a stream aggregation when it takes kept keys
// (storeapi.KeptKeysStore): the keys of its records come from a source or repartition topic,
// decoded by the engine, so the record cache may keep them as they are.
type keptStore = storeapi.KeptKeysStore[any, *ValueAndTimestamp]

// getKept is get through kst when the store takes kept keys.
func getKept(st Store, kst keptStore, key any) (*ValueAndTimestamp, error) {
	if kst == nil {
		return get(st, key)
	}
	v, _, err := kst.GetKept(key)
	return v, err
}

// putKeptReusing is putReusing through kst when the store takes kept keys.
func putKeptReusing(st Store, kst keptStore, fresh bool, key, value any, ts int64, old *ValueAndTimestamp) error {
	if kst == nil || !fresh {
		return putReusing(st, fresh, key, value, ts, old)
	}
	return kst.PutKept(key, remakeValueAndTimestamp(old, value, ts))
}

// ---------------------------------------------------------------------------------------------
// Table source

// Source is the processor supplier of a source table (builder.table, toTable and table results
// of operators that behave as sources): records become Changes, written to the table's store
// when the table is materialized. Records with a null key are dropped. Java: KTableSource.
type Source struct {
	// StoreName is the name of the store the table uses when it is materialized.
	StoreName string
	// QueryableName is StoreName when the table is materialized, else "".
	QueryableName string
	sendOldValues bool
}

// NewSource returns a table source supplier; queryable says whether the store is materialized
// from the start (a user-named store).
func NewSource(storeName string, queryable bool) *Source {
	s := &Source{StoreName: storeName}
	if queryable {
		s.QueryableName = storeName
	}
	return s
}

// Materialize makes the table keep its store. Java: materialize().
func (s *Source) Materialize() { s.QueryableName = s.StoreName }

// Materialized reports whether the table keeps a store. Java: materialized().
func (s *Source) Materialized() bool { return s.QueryableName != "" }

// EnableSendingOldValues materializes the table (only when forced or already materialized) and
// sends old values. Java: KTableImpl.enableSendingOldValues for a KTableSource.
func (s *Source) EnableSendingOldValues(force bool) bool {
	if !force && !s.Materialized() {
		return false
	}
	s.sendOldValues = true
	s.QueryableName = s.StoreName
	return true
}

// enableOldValues is EnableSendingOldValues of a value-transforming table (filter, mapValues,
// transformValues): a materialized one sends old values from its own store; else it does when
// its parent does. It sets *send and returns it.
func enableOldValues(parent Supplier, queryableName string, force bool, send *bool) bool {
	if queryableName != "" || parent.EnableSendingOldValues(force) {
		*send = true
	}
	return *send
}

// View materializes the table and reads its store. Java: KTableSourceValueGetterSupplier.
func (s *Source) View() ValueGetterSupplier {
	s.Materialize()
	return StoreValueGetterSupplier(s.QueryableName)
}

// Get returns a new source processor.
func (s *Source) Get() processor.Processor[any, any, any, any] { return &sourceProc{s: s} }

type sourceProc struct {
	base
	s   *Source
	st  Store
	fwd *Forwarder
}

func (p *sourceProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.s.QueryableName, p.s.sendOldValues)
	return err
}

func (p *sourceProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		return nil
	}
	if p.st == nil {
		r.Value = Change{New: r.Value}
		return p.ctx.Forward(r)
	}
	old, err := get(p.st, r.Key)
	if err != nil {
		return err
	}
	if v, ok := p.st.(*VersionedView); ok {
		// A versioned table (KIP-914): the old value is the latest version; an update beyond
		// the history retention is neither stored nor forwarded; an out-of-order one is
		// forwarded marked as not the latest. Java: KTableSource.process.
		res, err := v.PutAt(r.Key, r.Value, r.Timestamp)
		if err != nil || res == store.PutReturnCodeNotPut {
			return err
		}
		r.Value = Change{New: r.Value, Old: valueOf(old), NotLatest: res != store.PutReturnCodeValidToUndefined}
		return p.fwd.MaybeForward(r)
	}
	if err := put(p.st, r.Key, r.Value, r.Timestamp); err != nil {
		return err
	}
	r.Value = Change{New: r.Value, Old: valueOf(old)}
	return p.fwd.MaybeForward(r)
}

// ---------------------------------------------------------------------------------------------
// Filter and mapValues

// Filter is the supplier of KTable.filter/filterNot: a row whose value fails the predicate
// (passes, for filterNot) becomes a delete. With a store name it is materialized. Java:
// KTableFilter.
type Filter struct {
	parent        Supplier
	pred          Predicate
	not           bool
	queryableName string
	sendOldValues bool
	versioned     bool
}

// UseVersionedSemantics tells the filter that its input is a versioned table (KIP-914: the
// table or one upstream of it is materialized as versioned): it then forwards an update that
// is a delete before and after, which it otherwise drops when sending old values. Java:
// KTableFilter.setUseVersionedSemantics.
func (f *Filter) UseVersionedSemantics() { f.versioned = true }

// NewFilter returns the supplier; storeName "" means not materialized. It asks parent for old
// values without forcing materialization, as Java's constructor does.
func NewFilter(parent Supplier, pred Predicate, not bool, storeName string) *Filter {
	f := &Filter{parent: parent, pred: pred, not: not, queryableName: storeName}
	f.sendOldValues = parent.EnableSendingOldValues(false)
	return f
}

// EnableSendingOldValues: see Supplier.
func (f *Filter) EnableSendingOldValues(force bool) bool {
	return enableOldValues(f.parent, f.queryableName, force, &f.sendOldValues)
}

func (f *Filter) compute(key, value any) (any, error) {
	if value == nil {
		return nil, nil
	}
	ok, err := f.pred(key, value)
	if err != nil {
		return nil, err
	}
	if ok != f.not {
		return value, nil
	}
	return nil, nil
}

// View: see Supplier.
func (f *Filter) View() ValueGetterSupplier {
	if f.queryableName != "" {
		return StoreValueGetterSupplier(f.queryableName)
	}
	return derivedGetterSupplier{parent: f.parent.View(), compute: func(key any, v *ValueAndTimestamp) (*ValueAndTimestamp, error) {
		if v == nil {
			return nil, nil
		}
		nv, err := f.compute(key, v.Value)
		if err != nil || nv == nil {
			return nil, err
		}
		return v, nil
	}}
}

// Get returns a new filter processor.
func (f *Filter) Get() processor.Processor[any, any, any, any] { return &filterProc{f: f} }

type filterProc struct {
	base
	f   *Filter
	st  Store
	fwd *Forwarder
}

func (p *filterProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.f.queryableName, p.f.sendOldValues)
	return err
}

func (p *filterProc) Process(r processor.Record[any, any]) error {
	c := r.Value.(Change)
	nv, err := p.f.compute(r.Key, c.New)
	if err != nil {
		return err
	}
	var ov any
	if p.f.sendOldValues {
		if p.st != nil {
			o, err := get(p.st, r.Key)
			if err != nil {
				return err
			}
			ov = valueOf(o)
		} else if ov, err = p.f.compute(r.Key, c.Old); err != nil {
			return err
		}
	}
	if p.f.sendOldValues && ov == nil && nv == nil && !p.f.versioned {
		return nil
	}
	return forwardChange(p.ctx, p.st, p.fwd, r, Change{New: nv, Old: ov, NotLatest: c.NotLatest})
}

// forwardChange forwards the Change c of a table operator: through its store when it has one
// (the store decides whether c is the latest version, and a versioned store may refuse a
// version beyond its history, which is then not forwarded), else at once with c's own NotLatest.
// Java: the process methods of KTableFilter, KTableMapValues and KTableTransformValues.
func forwardChange(ctx processor.ProcessorContext[any, any], st Store, fwd *Forwarder, r processor.Record[any, any], c Change) error {
	if st == nil {
		r.Value = c
		return ctx.Forward(r)
	}
	stored, notLatest, err := putLatest(st, r.Key, c.New, r.Timestamp)
	if err != nil || !stored {
		return err
	}
	c.NotLatest = notLatest
	r.Value = c
	return fwd.MaybeForward(r)
}

// MapValues is the supplier of KTable.mapValues (also the transform a table's toStream-less
// value change needs). Java: KTableMapValues.
type MapValues struct {
	parent        Supplier
	mapper        ValueMapper
	queryableName string
	sendOldValues bool
}

// NewMapValues returns the supplier; storeName "" means not materialized.
func NewMapValues(parent Supplier, mapper ValueMapper, storeName string) *MapValues {
	return &MapValues{parent: parent, mapper: mapper, queryableName: storeName}
}

// EnableSendingOldValues: see Supplier.
func (m *MapValues) EnableSendingOldValues(force bool) bool {
	return enableOldValues(m.parent, m.queryableName, force, &m.sendOldValues)
}

func (m *MapValues) compute(key, value any) (any, error) {
	if value == nil {
		return nil, nil
	}
	return m.mapper(key, value)
}

// View: see Supplier.
func (m *MapValues) View() ValueGetterSupplier {
	if m.queryableName != "" {
		return StoreValueGetterSupplier(m.queryableName)
	}
	return derivedGetterSupplier{parent: m.parent.View(), compute: func(key any, v *ValueAndTimestamp) (*ValueAndTimestamp, error) {
		if v == nil {
			return nil, nil
		}
		nv, err := m.compute(key, v.Value)
		if err != nil {
			return nil, err
		}
		return store.MakeValueAndTimestamp(nv, v.Timestamp), nil
	}}
}

// Get returns a new mapValues processor.
func (m *MapValues) Get() processor.Processor[any, any, any, any] { return &mapValuesProc{m: m} }

type mapValuesProc struct {
	base
	m   *MapValues
	st  Store
	fwd *Forwarder
}

func (p *mapValuesProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.m.queryableName, p.m.sendOldValues)
	return err
}

func (p *mapValuesProc) Process(r processor.Record[any, any]) error {
	c := r.Value.(Change)
	nv, err := p.m.compute(r.Key, c.New)
	if err != nil {
		return err
	}
	var ov any
	if p.m.sendOldValues {
		if p.st != nil {
			o, err := get(p.st, r.Key)
			if err != nil {
				return err
			}
			ov = valueOf(o)
		} else if ov, err = p.m.compute(r.Key, c.Old); err != nil {
			return err
		}
	}
	return forwardChange(p.ctx, p.st, p.fwd, r, Change{New: nv, Old: ov, NotLatest: c.NotLatest})
}

// derivedGetterSupplier computes values from the parent table's getter (non-materialized
// filter/mapValues tables).
type derivedGetterSupplier struct {
	parent  ValueGetterSupplier
	compute func(key any, v *ValueAndTimestamp) (*ValueAndTimestamp, error)
}

func (d derivedGetterSupplier) Get() ValueGetter {
	return &derivedGetter{parent: d.parent.Get(), compute: d.compute}
}
func (d derivedGetterSupplier) StoreNames() []string { return d.parent.StoreNames() }

type derivedGetter struct {
	parent  ValueGetter
	compute func(key any, v *ValueAndTimestamp) (*ValueAndTimestamp, error)
}

func (g *derivedGetter) Init(ctx processor.ProcessingContext) error { return g.parent.Init(ctx) }
func (g *derivedGetter) Get(key any) (*ValueAndTimestamp, error) {
	v, err := g.parent.Get(key)
	if err != nil {
		return nil, err
	}
	return g.compute(key, v)
}
func (g *derivedGetter) Close() { g.parent.Close() }

// IsVersioned reports whether the parent getter reads a versioned table (Java:
// KTableFilter/KTableMapValues getters' isVersioned).
func (g *derivedGetter) IsVersioned() bool { return IsVersionedGetter(g.parent) }

// GetAsOf computes the value from the parent's version as of asOf.
func (g *derivedGetter) GetAsOf(key any, asOf int64) (*ValueAndTimestamp, error) {
	p, ok := g.parent.(VersionedValueGetter)
	if !ok || !p.IsVersioned() {
		return g.Get(key)
	}
	v, err := p.GetAsOf(key, asOf)
	if err != nil {
		return nil, err
	}
	return g.compute(key, v)
}

// ---------------------------------------------------------------------------------------------
// groupBy re-keying

// RepartitionMap is the supplier of KTable.groupBy's selector: each Change becomes a
// subtraction of the old pair and an addition of the new pair under their (new) keys, or one
// record carrying both when the key is unchanged. Java: KTableRepartitionMap.
type RepartitionMap struct {
	parent Supplier
	mapper KeyValueMapper
}

// NewRepartitionMap returns the supplier.
func NewRepartitionMap(parent Supplier, mapper KeyValueMapper) *RepartitionMap {
	return &RepartitionMap{parent: parent, mapper: mapper}
}

// EnableSendingOldValues is not supported downstream of a groupBy (Java throws): it reports false.
func (m *RepartitionMap) EnableSendingOldValues(bool) bool { return false }

// View is not available on a grouped table (Java throws); it returns nil.
func (m *RepartitionMap) View() ValueGetterSupplier { return nil }

// Get returns a new processor.
func (m *RepartitionMap) Get() processor.Processor[any, any, any, any] {
	return &repartitionMapProc{m: m}
}

type repartitionMapProc struct {
	base
	m *RepartitionMap
}

func (p *repartitionMapProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		return fmt.Errorf("%w: record key for the grouping KTable should not be null", ErrNullKey)
	}
	c := r.Value.(Change)
	if c.NotLatest {
		// An out-of-order update of a versioned table is not aggregated (KIP-914).
		return nil
	}
	var nk, nv, ok, ov any
	var err error
	if c.New != nil {
		if nk, nv, err = p.m.mapper(r.Key, c.New); err != nil {
			return err
		}
	}
	if c.Old != nil {
		if ok, ov, err = p.m.mapper(r.Key, c.Old); err != nil {
			return err
		}
	}
	oldOK := ok != nil && ov != nil
	newOK := nk != nil && nv != nil
	if oldOK && newOK && equalKeys(ok, nk) {
		return p.ctx.Forward(r.WithKey(ok).WithValue[any](Change{New: nv, Old: ov}))
	}
	if oldOK {
		if err := p.ctx.Forward(r.WithKey(ok).WithValue[any](Change{Old: ov})); err != nil {
			return err
		}
	}
	if newOK {
		return p.ctx.Forward(r.WithKey(nk).WithValue[any](Change{New: nv}))
	}
	return nil
}

// equalKeys compares keys as Java's equals would for the comparable Go types; incomparable
// keys (slices) are compared with fmt.
func equalKeys(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = fmt.Sprintf("%v", a) == fmt.Sprintf("%v", b)
		}
	}()
	return a == b
}

// ---------------------------------------------------------------------------------------------
// Aggregations

// aggSupplier is what stream and table aggregations share: a store, old values on request and
// a view on the store. Java: KStreamAggProcessorSupplier.
type aggSupplier struct {
	storeName     string
	sendOldValues bool
}

// EnableSendingOldValues always succeeds for aggregations.
func (a *aggSupplier) EnableSendingOldValues(bool) bool { a.sendOldValues = true; return true }

// View reads the aggregation's store.
func (a *aggSupplier) View() ValueGetterSupplier { return StoreValueGetterSupplier(a.storeName) }

// StreamAggregate is the supplier of KGroupedStream.aggregate/count (and of each cogrouped
// stream): records with a null key or value are dropped; the aggregate's timestamp is the
// maximum of the record's and the stored one. Java: KStreamAggregate.
type StreamAggregate struct {
	aggSupplier
	init Initializer
	agg  Aggregator
	// count: init is int64(0) and agg adds one (KGroupedStream.count), so a store that is a
	// storeapi.CountStore is read and written as counts.
	count bool
}

// NewStreamAggregate returns the supplier writing store storeName.
func NewStreamAggregate(storeName string, init Initializer, agg Aggregator) *StreamAggregate {
	return &StreamAggregate{aggSupplier: aggSupplier{storeName: storeName}, init: init, agg: agg}
}

// NewStreamCount returns the supplier of a count (KGroupedStream.count) writing store
// storeName: the aggregation of int64(0) and one more per record, whose store, when it is a
// storeapi.CountStore (Long values above a record cache), it reads and writes as counts,
// without boxing them. Java: KStreamAggregate with count's initializer and aggregator.
func NewStreamCount(storeName string) *StreamAggregate {
	a := NewStreamAggregate(storeName, func() (any, error) { return int64(0), nil },
		func(_, _, agg any) (any, error) { return agg.(int64) + 1, nil })
	a.count = true
	return a
}

// Get returns a new processor.
func (a *StreamAggregate) Get() processor.Processor[any, any, any, any] {
	return &streamAggProc{a: a}
}

type streamAggProc struct {
	base
	a     *StreamAggregate
	st    Store
	fresh bool // st is a storeapi.FreshValuesStore: the value read is reused for the write
	kept  keptStore
	// counts is st when the aggregation is a count and st a storeapi.CountStore whose Counts
	// holds: Process then reads and writes int64 counts (see processCount).
	counts storeapi.CountStore[any]
	fwd    *Forwarder
}

func (p *streamAggProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.a.storeName, p.a.sendOldValues)
	p.fresh = err == nil && isFresh(p.st)
	p.kept, _ = p.st.(keptStore)
	p.counts = nil
	if cs, ok := p.st.(storeapi.CountStore[any]); ok && err == nil && p.a.count && cs.Counts() {
		p.counts = cs
	}
	return err
}

func (p *streamAggProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil || r.Value == nil {
		return nil
	}
	if p.counts != nil {
		return p.processCount(r)
	}
	old, err := getKept(p.st, p.kept, r.Key)
	if err != nil {
		return err
	}
	var oldAgg any
	ts := r.Timestamp
	if old == nil || old.Value == nil {
		if oldAgg, err = p.a.init(); err != nil {
			return err
		}
	} else {
		oldAgg = old.Value
		ts = max(r.Timestamp, old.Timestamp)
	}
	newAgg, err := p.a.agg(r.Key, r.Value, oldAgg)
	if err != nil {
		return err
	}
	if err := putKeptReusing(p.st, p.kept, p.fresh, r.Key, newAgg, ts, old); err != nil {
		return err
	}
	return p.fwd.MaybeForwardChange(r, newAgg, oldAgg, ts)
}

// processCount is Process of a count on a storeapi.CountStore: the same reads, writes and
// forwards as the aggregation's (an absent count is the initializer's 0; the new timestamp is
// the larger of the record's and the stored one), with the count as an int64 throughout.
func (p *streamAggProc) processCount(r processor.Record[any, any]) error {
	old, oldTs, found, err := p.counts.GetCountKept(r.Key)
	if err != nil {
		return err
	}
	ts := r.Timestamp
	if found {
		ts = max(ts, oldTs)
	}
	if err := p.counts.PutCountKept(r.Key, old+1, ts); err != nil {
		return err
	}
	if p.fwd.cachingOn {
		return nil // the cache forwards on flush (MaybeForwardChange would do nothing)
	}
	return p.fwd.MaybeForwardChange(r, old+1, old, ts)
}

// StreamReduce is the supplier of KGroupedStream.reduce: the first value of a key is its
// aggregate. Java: KStreamReduce.
type StreamReduce struct {
	aggSupplier
	reducer Reducer
}

// NewStreamReduce returns the supplier writing store storeName.
func NewStreamReduce(storeName string, reducer Reducer) *StreamReduce {
	return &StreamReduce{aggSupplier: aggSupplier{storeName: storeName}, reducer: reducer}
}

// Get returns a new processor.
func (a *StreamReduce) Get() processor.Processor[any, any, any, any] {
	return &streamReduceProc{a: a}
}

type streamReduceProc struct {
	base
	a     *StreamReduce
	st    Store
	fresh bool // as streamAggProc's
	kept  keptStore
	fwd   *Forwarder
}

func (p *streamReduceProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.a.storeName, p.a.sendOldValues)
	p.fresh = err == nil && isFresh(p.st)
	p.kept, _ = p.st.(keptStore)
	return err
}

func (p *streamReduceProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil || r.Value == nil {
		return nil
	}
	old, err := getKept(p.st, p.kept, r.Key)
	if err != nil {
		return err
	}
	oldAgg := valueOf(old)
	newAgg, ts := r.Value, r.Timestamp
	if oldAgg != nil {
		if newAgg, err = p.a.reducer(oldAgg, r.Value); err != nil {
			return err
		}
		ts = max(r.Timestamp, old.Timestamp)
	}
	if err := putKeptReusing(p.st, p.kept, p.fresh, r.Key, newAgg, ts, old); err != nil {
		return err
	}
	return p.fwd.MaybeForwardChange(r, newAgg, oldAgg, ts)
}

// TableAggregate is the supplier of KGroupedTable.aggregate/count: the subtractor removes the
// old value, the adder adds the new one. Java: KTableAggregate.
type TableAggregate struct {
	aggSupplier
	init        Initializer
	add, remove Aggregator
}

// NewTableAggregate returns the supplier writing store storeName.
func NewTableAggregate(storeName string, init Initializer, add, remove Aggregator) *TableAggregate {
	return &TableAggregate{aggSupplier: aggSupplier{storeName: storeName}, init: init, add: add, remove: remove}
}

// Get returns a new processor.
func (a *TableAggregate) Get() processor.Processor[any, any, any, any] {
	return &tableAggProc{a: a}
}

type tableAggProc struct {
	base
	a   *TableAggregate
	st  Store
	fwd *Forwarder
}

func (p *tableAggProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.a.storeName, p.a.sendOldValues)
	return err
}

func (p *tableAggProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		return fmt.Errorf("%w: KTable aggregate operator with state %s", ErrNullKey, p.a.storeName)
	}
	c := r.Value.(Change)
	old, err := get(p.st, r.Key)
	if err != nil {
		return err
	}
	oldAgg := valueOf(old)
	ts := r.Timestamp
	inter := oldAgg
	if c.Old != nil && oldAgg != nil {
		if inter, err = p.a.remove(r.Key, c.Old, oldAgg); err != nil {
			return err
		}
		ts = max(r.Timestamp, old.Timestamp)
	}
	newAgg := inter
	if c.New != nil {
		initAgg := inter
		if initAgg == nil {
			if initAgg, err = p.a.init(); err != nil {
				return err
			}
		}
		if newAgg, err = p.a.add(r.Key, c.New, initAgg); err != nil {
			return err
		}
		if old != nil {
			ts = max(r.Timestamp, old.Timestamp)
		}
	}
	if err := put(p.st, r.Key, newAgg, ts); err != nil {
		return err
	}
	return p.fwd.MaybeForwardChange(r, newAgg, oldAgg, ts)
}

// TableReduce is the supplier of KGroupedTable.reduce(adder, subtractor). Java: KTableReduce.
type TableReduce struct {
	aggSupplier
	add, remove Reducer
}

// NewTableReduce returns the supplier writing store storeName.
func NewTableReduce(storeName string, add, remove Reducer) *TableReduce {
	return &TableReduce{aggSupplier: aggSupplier{storeName: storeName}, add: add, remove: remove}
}

// Get returns a new processor.
func (a *TableReduce) Get() processor.Processor[any, any, any, any] {
	return &tableReduceProc{a: a}
}

type tableReduceProc struct {
	base
	a   *TableReduce
	st  Store
	fwd *Forwarder
}

func (p *tableReduceProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.a.storeName, p.a.sendOldValues)
	return err
}

func (p *tableReduceProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		return fmt.Errorf("%w: KTable reduce operator with state %s", ErrNullKey, p.a.storeName)
	}
	c := r.Value.(Change)
	old, err := get(p.st, r.Key)
	if err != nil {
		return err
	}
	oldAgg := valueOf(old)
	inter, ts := oldAgg, r.Timestamp
	if c.Old != nil && oldAgg != nil {
		if inter, err = p.a.remove(oldAgg, c.Old); err != nil {
			return err
		}
		ts = max(r.Timestamp, old.Timestamp)
	}
	newAgg := inter
	if c.New != nil {
		if inter == nil {
			newAgg = c.New
		} else {
			if newAgg, err = p.a.add(inter, c.New); err != nil {
				return err
			}
			ts = max(r.Timestamp, old.Timestamp)
		}
	}
	if err := put(p.st, r.Key, newAgg, ts); err != nil {
		return err
	}
	return p.fwd.MaybeForwardChange(r, newAgg, oldAgg, ts)
}

// PassThrough is the supplier of the merge node of a cogrouped aggregation: it forwards the
// Changes of the per-stream aggregate processors, which share one store. Java: KTablePassThrough.
type PassThrough struct {
	parents   []Supplier
	storeName string
}

// NewPassThrough returns the supplier over the cogroup's aggregate suppliers.
func NewPassThrough(parents []Supplier, storeName string) *PassThrough {
	return &PassThrough{parents: parents, storeName: storeName}
}

// EnableSendingOldValues enables old values on every parent aggregation.
func (p *PassThrough) EnableSendingOldValues(bool) bool {
	for _, s := range p.parents {
		s.EnableSendingOldValues(true)
	}
	return true
}

// View reads the shared store.
func (p *PassThrough) View() ValueGetterSupplier { return StoreValueGetterSupplier(p.storeName) }

// Get returns a new processor.
func (p *PassThrough) Get() processor.Processor[any, any, any, any] { return &passProc{} }

type passProc struct{ base }

func (p *passProc) Process(r processor.Record[any, any]) error { return p.ctx.Forward(r) }
