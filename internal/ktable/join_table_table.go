package ktable

import (
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// Table-table (primary-key) joins. A join of tables A and B compiles to three processors: one
// under A reading B through B's value getter ("join this"), one under B reading A ("join
// other", with the joiner's arguments swapped), and a merger under both that forwards (and,
// when materialized, stores) the results. Java counterpart: KTableKTableInnerJoin,
// KTableKTableLeftJoin, KTableKTableRightJoin, KTableKTableOuterJoin, KTableKTableJoinMerger.

// ValueJoiner joins the values of two tables (either may be nil in left/outer joins) into a
// result (nil for null). key is the row's key. Java: ValueJoiner (the key is extra: the typed
// facade ignores it for table-table joins).
type ValueJoiner func(key, value, other any) (any, error)

// JoinKind selects the processing rule of one side of a table-table join.
type JoinKind int

const (
	// InnerJoin emits only when both sides have a value. Java: KTableKTableInnerJoin.
	InnerJoin JoinKind = iota
	// LeftJoin emits for every value of this side (other may be null). Java: KTableKTableLeftJoin.
	LeftJoin
	// RightJoin is the other side of a left join: it emits only when the left side (read
	// through the getter) has a value, passing this side's value (maybe null) as the second
	// joiner argument of the reversed joiner. Java: KTableKTableRightJoin.
	RightJoin
	// OuterJoin emits when either side has a value. Java: KTableKTableOuterJoin.
	OuterJoin
)

// unknownTimestamp is Java's ConsumerRecord.NO_TIMESTAMP (-1), used for a missing side.
const unknownTimestamp int64 = -1

// TableTableJoin is the supplier of one side of a table-table join: its processor receives the
// Changes of this table and looks the key up in the other table. Its view computes the join
// result from both tables' getters. Java: KTableKTableAbstractJoin and its subclasses.
type TableTableJoin struct {
	kind          JoinKind
	getter1       ValueGetterSupplier // this table
	getter2       ValueGetterSupplier // the other table
	enable1       func(bool) bool
	enable2       func(bool) bool
	joiner        ValueJoiner
	sendOldValues bool
}

// NewTableTableJoin returns one side of a join. getter1/getter2 are the value getter suppliers
// of this and the other table (asking for them materializes source tables, as Java's
// constructor does: call it in Java's order); enable1/enable2 ask each table for old values
// (the tables' EnableSendingOldValues); joiner gets (this value, other value).
func NewTableTableJoin(kind JoinKind, getter1, getter2 ValueGetterSupplier, enable1, enable2 func(bool) bool, joiner ValueJoiner) *TableTableJoin {
	return &TableTableJoin{kind: kind, getter1: getter1, getter2: getter2, enable1: enable1, enable2: enable2, joiner: joiner}
}

// EnableSendingOldValues makes both input tables send old values (materializing them) and this
// side compute old results; it always succeeds. Java: KTableKTableAbstractJoin.enableSendingOldValues.
func (j *TableTableJoin) EnableSendingOldValues(bool) bool {
	j.enable1(true)
	j.enable2(true)
	j.sendOldValues = true
	return true
}

// View returns the getter supplier computing the join result from both tables. Java: view().
func (j *TableTableJoin) View() ValueGetterSupplier { return joinGetterSupplier{j: j} }

// Get returns a new processor reading the other table.
func (j *TableTableJoin) Get() processor.Processor[any, any, any, any] {
	return &tableJoinProc{j: j, getter: j.getter2.Get()}
}

type tableJoinProc struct {
	base
	j      *TableTableJoin
	getter ValueGetter
}

func (p *tableJoinProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	return p.getter.Init(ctx)
}

func (p *tableJoinProc) Close() error { p.getter.Close(); return nil }

func (p *tableJoinProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil { // Java logs "Skipping record due to null key" and counts a dropped record
		return nil
	}
	c := r.Value.(Change)
	if c.NotLatest {
		// An out-of-order update of a versioned table is not joined (KIP-914; Java counts a
		// dropped record).
		return nil
	}
	o, err := p.getter.Get(r.Key)
	if err != nil {
		return err
	}
	other := valueOf(o)
	j := p.j
	var nv, ov any
	ts := r.Timestamp
	switch j.kind {
	case InnerJoin:
		if other == nil {
			return nil
		}
		ts = max(r.Timestamp, o.Timestamp)
		if c.New != nil {
			if nv, err = j.joiner(r.Key, c.New, other); err != nil {
				return err
			}
		}
		if j.sendOldValues && c.Old != nil {
			if ov, err = j.joiner(r.Key, c.Old, other); err != nil {
				return err
			}
		}
	case LeftJoin:
		otherTs := unknownTimestamp
		if other == nil {
			if c.New == nil && c.Old == nil {
				return nil
			}
		} else {
			otherTs = o.Timestamp
		}
		ts = max(r.Timestamp, otherTs)
		if c.New != nil {
			if nv, err = j.joiner(r.Key, c.New, other); err != nil {
				return err
			}
		}
		if j.sendOldValues && c.Old != nil {
			if ov, err = j.joiner(r.Key, c.Old, other); err != nil {
				return err
			}
		}
	case RightJoin:
		if other == nil {
			return nil
		}
		ts = max(r.Timestamp, o.Timestamp)
		if nv, err = j.joiner(r.Key, c.New, other); err != nil {
			return err
		}
		if j.sendOldValues {
			if ov, err = j.joiner(r.Key, c.Old, other); err != nil {
				return err
			}
		}
	case OuterJoin:
		if other == nil {
			if c.New == nil && c.Old == nil {
				return nil
			}
		} else {
			ts = max(r.Timestamp, o.Timestamp)
		}
		if other != nil || c.New != nil {
			if nv, err = j.joiner(r.Key, c.New, other); err != nil {
				return err
			}
		}
		if j.sendOldValues && (other != nil || c.Old != nil) {
			if ov, err = j.joiner(r.Key, c.Old, other); err != nil {
				return err
			}
		}
	}
	return p.ctx.Forward(r.WithValue[any](Change{New: nv, Old: ov}).WithTimestamp(ts))
}

// joinGetterSupplier computes a join result from both tables' getters (Java: the
// KTableKTable*JoinValueGetter classes).
type joinGetterSupplier struct{ j *TableTableJoin }

func (s joinGetterSupplier) Get() ValueGetter {
	return &joinGetter{j: s.j, g1: s.j.getter1.Get(), g2: s.j.getter2.Get()}
}

func (s joinGetterSupplier) StoreNames() []string {
	return unionNames(s.j.getter1.StoreNames(), s.j.getter2.StoreNames())
}

func unionNames(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, n := range b {
		dup := false
		for _, m := range out {
			dup = dup || m == n
		}
		if !dup {
			out = append(out, n)
		}
	}
	return out
}

type joinGetter struct {
	j      *TableTableJoin
	g1, g2 ValueGetter
}

func (g *joinGetter) Init(ctx processor.ProcessingContext) error {
	if err := g.g1.Init(ctx); err != nil {
		return err
	}
	return g.g2.Init(ctx)
}

func (g *joinGetter) Close() { g.g1.Close(); g.g2.Close() }

func (g *joinGetter) Get(key any) (*ValueAndTimestamp, error) {
	j := g.j
	switch j.kind {
	case InnerJoin, LeftJoin:
		a, err := g.g1.Get(key)
		if err != nil || valueOf(a) == nil {
			return nil, err
		}
		b, err := g.g2.Get(key)
		if err != nil {
			return nil, err
		}
		if valueOf(b) == nil {
			if j.kind == InnerJoin {
				return nil, nil
			}
			v, err := j.joiner(key, a.Value, nil)
			if err != nil {
				return nil, err
			}
			return store.MakeValueAndTimestamp(v, a.Timestamp), nil
		}
		v, err := j.joiner(key, a.Value, b.Value)
		if err != nil {
			return nil, err
		}
		return store.MakeValueAndTimestamp(v, max(a.Timestamp, b.Timestamp)), nil
	case RightJoin:
		// getter1 is this (right) table, getter2 the left one: a row exists when the left
		// table has a value; j.joiner is the reversed user joiner, so it takes (right, left).
		l, err := g.g2.Get(key)
		if err != nil || valueOf(l) == nil {
			return nil, err
		}
		r, err := g.g1.Get(key)
		if err != nil {
			return nil, err
		}
		ts := l.Timestamp
		if r != nil {
			ts = max(l.Timestamp, r.Timestamp)
		}
		v, err := j.joiner(key, valueOf(r), l.Value)
		if err != nil {
			return nil, err
		}
		return store.MakeValueAndTimestamp(v, ts), nil
	default: // OuterJoin
		a, err := g.g1.Get(key)
		if err != nil {
			return nil, err
		}
		b, err := g.g2.Get(key)
		if err != nil {
			return nil, err
		}
		ta, tb := unknownTimestamp, unknownTimestamp
		if a != nil {
			ta = a.Timestamp
		}
		if b != nil {
			tb = b.Timestamp
		}
		va, vb := valueOf(a), valueOf(b)
		if va == nil && vb == nil {
			return nil, nil
		}
		v, err := j.joiner(key, va, vb)
		if err != nil {
			return nil, err
		}
		return store.MakeValueAndTimestamp(v, max(ta, tb)), nil
	}
}

// JoinMerger is the supplier of the merge processor of a table-table join: it forwards the
// results of both join sides and, when materialized (queryableName set), writes them to the
// result store, forwarding through the store's record cache. Java: KTableKTableJoinMerger.
type JoinMerger struct {
	parent1, parent2 Supplier
	queryableName    string
	sendOldValues    bool
}

// NewJoinMerger returns the merger of the two join sides; queryableName "" = not materialized.
func NewJoinMerger(parent1, parent2 Supplier, queryableName string) *JoinMerger {
	return &JoinMerger{parent1: parent1, parent2: parent2, queryableName: queryableName}
}

// QueryableName returns the result store's name, "" when not materialized.
func (m *JoinMerger) QueryableName() string { return m.queryableName }

// EnableSendingOldValues enables old values on both join sides; it always succeeds.
func (m *JoinMerger) EnableSendingOldValues(bool) bool {
	m.parent1.EnableSendingOldValues(true)
	m.parent2.EnableSendingOldValues(true)
	m.sendOldValues = true
	return true
}

// View reads the result store when materialized, else computes the join from the inputs'
// getters (connected to the stores of both sides).
func (m *JoinMerger) View() ValueGetterSupplier {
	if m.queryableName != "" {
		return StoreValueGetterSupplier(m.queryableName)
	}
	return mergerGetterSupplier{m: m}
}

type mergerGetterSupplier struct{ m *JoinMerger }

func (s mergerGetterSupplier) Get() ValueGetter { return s.m.parent1.View().Get() }
func (s mergerGetterSupplier) StoreNames() []string {
	return unionNames(s.m.parent1.View().StoreNames(), s.m.parent2.View().StoreNames())
}

// Get returns a new merge processor.
func (m *JoinMerger) Get() processor.Processor[any, any, any, any] { return &mergeProc{m: m} }

type mergeProc struct {
	base
	m   *JoinMerger
	st  Store
	fwd *Forwarder
}

func (p *mergeProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	var err error
	p.st, p.fwd, err = storeForwarder(ctx, p.m.queryableName, p.m.sendOldValues)
	return err
}

func (p *mergeProc) Process(r processor.Record[any, any]) error {
	c := r.Value.(Change)
	if p.st != nil {
		// A result materialized as a versioned table: the store says whether it is the
		// latest version (KIP-914; Java: KTableKTableJoinMerger.process).
		return forwardChange(p.ctx, p.st, p.fwd, r, c)
	}
	if !p.m.sendOldValues {
		r.Value = Change{New: c.New, NotLatest: c.NotLatest}
	}
	return p.ctx.Forward(r)
}
