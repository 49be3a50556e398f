package kstream

import (
	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
)

// Join returns the inner join of this table with other on the primary key: a row of the result
// exists while both tables have a value for the key, with value joiner(value, otherValue) and
// timestamp max of the two rows' timestamps. Updates of either side update the result; a
// delete on either side deletes the result row. Both tables are materialized (source tables
// get a store "<topic>-STATE-STORE-<n>") so that each side can look the other up.
//
// Options: TableNamed[K, VR] (processors "<name>-join-this", "<name>-join-other" and the merge processor
// "<name>"; default KTABLE-JOINTHIS-<n>, KTABLE-JOINOTHER-<n>, KTABLE-MERGE-<n>) and
// Materialized[K, VR] (the result gets a store, named or "KTABLE-MERGE-STATE-STORE-<n>", key
// serde defaulting to this table's). Both tables must be co-partitioned (their source topics
// are put in one co-partition group). Errors (reported by Build, a *processor.TopologyError): a nil
// joiner, a table of another builder, both sides reading repartition topics with different
// fixed partition counts. Java: KTable.join(KTable, ValueJoiner[,
// Named][, Materialized]).
func (t KTable[K, V]) Join[VO, VR any](other KTable[K, VO], joiner func(V, VO) VR, opts ...TableOption[K, VR]) KTable[K, VR] {
	return tableTableJoin[K, V, VO, VR](t, other.t, joiner, false, false, "Join", opts)
}

// LeftJoin returns the left join of this table with other on the primary key: a row exists
// while this table has a value; joiner gets otherValue as the zero value of VO when other has
// none (Java: null; a pointer VO, e.g. other viewed with NullableTableValues, gets nil). The
// result timestamp is the max of both rows' (this row's when other has
// none). Options and errors as for [KTable.Join]. Java: KTable.leftJoin(KTable, ValueJoiner[,
// Named][, Materialized]).
func (t KTable[K, V]) LeftJoin[VO, VR any](other KTable[K, VO], joiner func(V, VO) VR, opts ...TableOption[K, VR]) KTable[K, VR] {
	return tableTableJoin[K, V, VO, VR](t, other.t, joiner, true, false, "LeftJoin", opts)
}

// OuterJoin returns the outer join of this table with other on the primary key: a row exists
// while either table has a value; the missing side reaches joiner as its zero value (Java:
// null; view a side with NullableTableValues to get nil). Options and errors as for [KTable.Join]. Java: KTable.outerJoin(KTable, ValueJoiner[,
// Named][, Materialized]).
func (t KTable[K, V]) OuterJoin[VO, VR any](other KTable[K, VO], joiner func(V, VO) VR, opts ...TableOption[K, VR]) KTable[K, VR] {
	return tableTableJoin[K, V, VO, VR](t, other.t, joiner, true, true, "OuterJoin", opts)
}

// tableTableJoin follows Java's KTableImpl.doJoin step by step (the order of generated names
// and of materializations matters).
func tableTableJoin[K, V, VO, VR any](t KTable[K, V], other *tableImpl, joiner func(V, VO) VR, leftOuter, rightOuter bool, op string, opts []TableOption[K, VR]) KTable[K, VR] {
	b := t.t.b
	named, mat := splitTableOptions(opts)
	var mi *materializedInternal
	if mat != nil {
		mi = materialize(b, mat, tableMergeName)
	}
	mergeName := b.orElseGenerate(named, tableMergeName)
	if other == nil || other.b != b {
		b.fail(dslErr(mergeName, nil, "%s %s: the other table was created by another StreamsBuilder (or is the zero KTable)", op, mergeName))
		return KTable[K, VR]{t: &tableImpl{b: b, name: mergeName, node: t.t.node, supplier: t.t.supplier}}
	}
	if joiner == nil {
		b.fail(dslErr(mergeName, nil, "%s %s: joiner must not be nil", op, mergeName))
	}
	allSources := unionNames(t.t.sourceNodes, other.sourceNodes)
	if leftOuter {
		t.t.enableSendingOldValues(true)
	}
	if rightOuter {
		other.enableSendingOldValues(true)
	}
	var j ktable.ValueJoiner
	if joiner != nil {
		j = tableJoinerOf(joiner)
	}
	rev := func(key, a, o any) (any, error) { return j(key, o, a) }
	thisKind, otherKind := ktable.InnerJoin, ktable.InnerJoin
	switch {
	case leftOuter && rightOuter:
		thisKind, otherKind = ktable.OuterJoin, ktable.OuterJoin
	case leftOuter:
		thisKind, otherKind = ktable.LeftJoin, ktable.RightJoin
	}
	// Java's join constructors ask both tables for their value getters (this materializes
	// source tables): this side first, then the other side (which asks again in reverse).
	g1, g2 := t.t.valueGetterSupplier(), other.valueGetterSupplier()
	joinThis := ktable.NewTableTableJoin(thisKind, g1, g2, t.t.enableSendingOldValues, other.enableSendingOldValues, j)
	g2b, g1b := other.valueGetterSupplier(), t.t.valueGetterSupplier()
	joinOther := ktable.NewTableTableJoin(otherKind, g2b, g1b, other.enableSendingOldValues, t.t.enableSendingOldValues, rev)
	thisName := b.suffixOrElseGenerate(named, "-join-this", tableJoinName)
	otherName := b.suffixOrElseGenerate(named, "-join-other", tableJoinOther)

	keySerde := t.t.keySerde
	var storeName, queryable string
	var sb func() processor.StoreBuilder
	result := &tableImpl{b: b, name: mergeName, keySerde: keySerde, sourceNodes: allSources}
	if mi != nil {
		if mi.keySerde == nil {
			mi.keySerde = t.t.keySerde
		}
		result.keySerde, result.valueSerde = mi.keySerde, mi.valueSerde
		result.versioned = mi.versioned != nil
		storeName, queryable, sb = mi.storeName, mi.queryableName(), mi.storeBuilder
	}
	thisStores := t.t.valueGetterSupplier().StoreNames()
	otherStores := other.valueGetterSupplier().StoreNames()
	merger := ktable.NewJoinMerger(joinThis, joinOther, storeName)
	thisTable, otherTable := t.t.name, other.name
	n := &graphNode{name: mergeName, write: func(tp *processor.Topology, _ []string) error {
		// Java: ensureCopartitionWith; fixed partition counts that differ fail here
		if err := copartition(tp, mergeName, thisTable, otherTable); err != nil {
			return err
		}
		if err := tp.AddProcessor(thisName, processor.ProcessorSupplier[any, any, any, any](joinThis), thisTable); err != nil {
			return err
		}
		if err := tp.AddProcessor(otherName, processor.ProcessorSupplier[any, any, any, any](joinOther), otherTable); err != nil {
			return err
		}
		if err := tp.AddProcessor(mergeName, processor.ProcessorSupplier[any, any, any, any](merger), thisName, otherName); err != nil {
			return err
		}
		if err := tp.ConnectProcessorAndStateStores(thisName, otherStores...); err != nil {
			return err
		}
		if err := tp.ConnectProcessorAndStateStores(otherName, thisStores...); err != nil {
			return err
		}
		// each side looks the other side's table up
		topology.Of(tp).MarkStoreReaders(thisName, otherStores...)
		topology.Of(tp).MarkStoreReaders(otherName, thisStores...)
		if sb != nil {
			return tp.AddStateStore(sb(), mergeName)
		}
		return nil
	}}
	b.addNode(n, t.t.node)
	b.addNode(n, other.node)
	result.node, result.supplier, result.queryableName = n, merger, queryable
	return KTable[K, VR]{t: result}
}

// tableJoinerOf adapts a typed value joiner of a table-table join (null sides reach it as the
// zero value of their type).
func tableJoinerOf[V, VO, VR any](f func(V, VO) VR) ktable.ValueJoiner {
	return func(_, value, other any) (any, error) {
		v, err := cast[V]("value", value)
		if err != nil {
			return nil, err
		}
		o, err := cast[VO]("other value", other)
		if err != nil {
			return nil, err
		}
		return box(f(v, o)), nil
	}
}

// unionNames returns the names of a followed by those of b not in a (Java: the LinkedHashSet
// union of AbstractStream.ensureCopartitionWith).
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
