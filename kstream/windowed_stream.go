package kstream

import (
	"time"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Name prefixes of windowed aggregations (Java: KGroupedStreamImpl / CogroupedKStreamImpl).
const lateSinkSuffix = "-late-records"

// lateRecordTopic is where a windowed aggregation sends the records it drops for a closed
// window (see TimeWindowedKStream.LateRecordsTo).
type lateRecordTopic struct {
	topic                string
	keySerde, valueSerde serde.Serde[any]
}

// windowKind tells the three window types apart.
type windowKind int

const (
	timeWindowKind windowKind = iota
	slidingWindowKind
	sessionWindowKind
)

// TimeWindowedKStream is a grouped stream windowed by TimeWindows or SlidingWindows, ready for
// a windowed aggregation whose result is a KTable[Windowed[K], V]. Java counterpart:
// org.apache.kafka.streams.kstream.TimeWindowedKStream.
type TimeWindowedKStream[K, V any] struct {
	g       *groupedStreamImpl
	kind    windowKind
	time    TimeWindows
	sliding SlidingWindows
	emit    EmitStrategy
	late    *lateRecordTopic
}

// SessionWindowedKStream is a grouped stream windowed by SessionWindows. Java counterpart:
// org.apache.kafka.streams.kstream.SessionWindowedKStream.
type SessionWindowedKStream[K, V any] struct {
	g       *groupedStreamImpl
	session SessionWindows
	emit    EmitStrategy
	late    *lateRecordTopic
}

// WindowedBy windows the grouped stream by tumbling or hopping time windows. An invalid
// specification makes Build fail with ErrInvalidWindows. (A function, not a method: a method of
// KGroupedStream[K, V] returning tables keyed by Windowed[K] would make Go's generic
// instantiation cycle.) Java: KGroupedStream.windowedBy(Windows).
func WindowedBy[K, V any](g KGroupedStream[K, V], w TimeWindows) TimeWindowedKStream[K, V] {
	if w.err != nil {
		g.g.b.fail(dslErr(g.g.name, ErrInvalidWindows, "windowedBy %s: %v", g.g.name, w.err))
	}
	return TimeWindowedKStream[K, V]{g: g.g, kind: timeWindowKind, time: w}
}

// WindowedBySliding windows the grouped stream by sliding windows (KIP-450). Java:
// KGroupedStream.windowedBy(SlidingWindows).
func WindowedBySliding[K, V any](g KGroupedStream[K, V], w SlidingWindows) TimeWindowedKStream[K, V] {
	if w.err != nil {
		g.g.b.fail(dslErr(g.g.name, ErrInvalidWindows, "windowedBy %s: %v", g.g.name, w.err))
	}
	return TimeWindowedKStream[K, V]{g: g.g, kind: slidingWindowKind, sliding: w}
}

// WindowedBySession windows the grouped stream by session windows. Java:
// KGroupedStream.windowedBy(SessionWindows).
func WindowedBySession[K, V any](g KGroupedStream[K, V], w SessionWindows) SessionWindowedKStream[K, V] {
	if w.err != nil {
		g.g.b.fail(dslErr(g.g.name, ErrInvalidWindows, "windowedBy %s: %v", g.g.name, w.err))
	}
	return SessionWindowedKStream[K, V]{g: g.g, session: w}
}

// EmitStrategy returns a copy emitting with e (default: on every update). Java: emitStrategy(e).
func (w TimeWindowedKStream[K, V]) EmitStrategy(e EmitStrategy) TimeWindowedKStream[K, V] {
	w.emit = e
	return w
}

// EmitStrategy returns a copy emitting with e (default: on every update). Java: emitStrategy(e).
func (w SessionWindowedKStream[K, V]) EmitStrategy(e EmitStrategy) SessionWindowedKStream[K, V] {
	w.emit = e
	return w
}

// LateRecordsTo returns a copy whose aggregation sends every record it drops for a closed
// window to topic, unchanged (key, value, timestamp, headers), plus headers naming the window
// that rejected it and why (LateHeaderWindow, LateHeaderReason, LateHeaderStreamTime,
// LateHeaderCloseTime, LateHeaderProcessor), so nothing is lost silently. The records go
// through the nodes "<aggregation>-late-records-filter" and "<aggregation>-late-records" (a
// sink) with the grouping's serdes, else the default serdes. Records dropped for a null key are
// not sent (they are only counted). No Java counterpart (Java only counts and logs them).
func (w TimeWindowedKStream[K, V]) LateRecordsTo(topic string) TimeWindowedKStream[K, V] {
	w.late = &lateRecordTopic{topic: topic}
	return w
}

// LateRecordsToWith is LateRecordsTo with the key and value serdes of the late-record topic.
func (w TimeWindowedKStream[K, V]) LateRecordsToWith(topic string, keySerde serde.Serde[K], valueSerde serde.Serde[V]) TimeWindowedKStream[K, V] {
	w.late = &lateRecordTopic{topic: topic, keySerde: untyped(keySerde), valueSerde: untyped(valueSerde)}
	return w
}

// LateRecordsTo returns a copy whose aggregation sends every record it drops for a closed
// session to topic, as [TimeWindowedKStream.LateRecordsTo] does. No Java counterpart.
func (w SessionWindowedKStream[K, V]) LateRecordsTo(topic string) SessionWindowedKStream[K, V] {
	w.late = &lateRecordTopic{topic: topic}
	return w
}

// LateRecordsToWith is LateRecordsTo with the key and value serdes of the late-record topic.
func (w SessionWindowedKStream[K, V]) LateRecordsToWith(topic string, keySerde serde.Serde[K], valueSerde serde.Serde[V]) SessionWindowedKStream[K, V] {
	w.late = &lateRecordTopic{topic: topic, keySerde: untyped(keySerde), valueSerde: untyped(valueSerde)}
	return w
}

// windowedResult is what a windowed aggregation needs to write its nodes.
type windowedResult struct {
	name      string
	mi        *materializedInternal
	storeB    func() processor.StoreBuilder // resolved when the topology is built (default.dsl.store)
	sup       ktable.Supplier
	late      *lateRecordTopic
	keySerde  serde.Serde[any] // of the result table (windowed serde) or nil
	valueSerd serde.Serde[any]
}

// build adds the repartition (if needed), the aggregation with its store and the late-record
// nodes, and returns the result table.
func (g *groupedStreamImpl) buildWindowed(r windowedResult) *tableImpl {
	b := g.b
	parent := g.node
	if g.repartitionRequired {
		prefix := g.userName
		if prefix == "" {
			prefix = r.mi.storeName
		}
		rp := b.newRepartition(prefix, g.keySerde, g.valueSerde, nil)
		if g.repartitionNode == nil || g.userName == "" {
			g.repartitionNode = rp.node()
			b.addNode(g.repartitionNode, g.node)
		}
		parent = g.repartitionNode
	}
	n := b.addNode(processorNode(r.name, r.sup, nil, r.storeB), parent)
	if r.late != nil {
		filter, sink := r.name+lateSinkSuffix+"-filter", r.name+lateSinkSuffix
		ks, vs := r.late.keySerde, r.late.valueSerde
		if ks == nil {
			ks = g.keySerde
		}
		if vs == nil {
			vs = g.valueSerde
		}
		topic := r.late.topic
		b.addNode(&graphNode{name: sink, write: func(t *processor.Topology, parents []string) error {
			if err := t.AddProcessor(filter, processor.ProcessorSupplier[any, any, any, any](ktable.LateRecordFilter{}), parents...); err != nil {
				return err
			}
			return t.AddSink(sink, topic, []string{filter}, sinkOpts(ks, vs, nil)...)
		}}, n)
	}
	return &tableImpl{b: b, name: r.name, node: n, keySerde: r.keySerde, valueSerde: r.valueSerd, supplier: r.sup,
		queryableName: r.mi.queryableName()}
}

// windowedKeyFuncs returns the functions building and splitting typed Windowed[K] keys.
func windowedKeyFuncs[K any]() (func(any, serde.Window) any, func(any) (any, serde.Window, bool)) {
	mk := func(key any, w serde.Window) any {
		k, _ := cast[K]("key", key)
		return Windowed[K]{Key: k, Window: w}
	}
	split := func(k any) (any, serde.Window, bool) {
		w, ok := k.(Windowed[K])
		if !ok {
			return nil, serde.Window{}, false
		}
		return box(w.Key), w.Window, true
	}
	return mk, split
}

// windowParams returns size/grace/retention of the time or sliding windows (ms).
func (w TimeWindowedKStream[K, V]) params() (size, grace, minRetention int64) {
	if w.kind == slidingWindowKind {
		d := w.sliding.diffMs
		return d, w.sliding.graceMs, 2*d + w.sliding.graceMs
	}
	return w.time.sizeMs, w.time.graceMs, w.time.sizeMs + w.time.graceMs
}

// timeWindowedAggregate builds a time or sliding windowed aggregation. missing names the user
// functions that are nil ("" for none), which fails the build naming the processor; prefix is
// the processor/store prefix; defaultValue is the store value serde when none is given.
func timeWindowedAggregate[K, V, VR any](w TimeWindowedKStream[K, V], missing, prefix string, opts []TableOption[K, VR], burnIfUnnamed bool,
	defaultValue serde.Serde[any], init ktable.Initializer, agg ktable.Aggregator) KTable[Windowed[K], VR] {
	b := w.g.b
	named, mat := splitTableOptions(opts)
	late := w.late
	if burnIfUnnamed && mat != nil && mat.storeName == "" {
		b.newStoreName(prefix) // Java burns a name for count(Materialized) (topology compatibility)
	}
	mi := materialize(b, mat, prefix)
	if mi.keySerde == nil {
		mi.keySerde = w.g.keySerde
	}
	if mi.valueSerde == nil {
		mi.valueSerde = defaultValue
	}
	name := b.orElseGenerate(named, prefix)
	if missing != "" {
		b.fail(dslErr(name, nil, "%s: %s must not be nil", name, missing))
	}
	size, grace, minRet := w.params()
	retention := minRet
	if mat != nil && mat.retentionOK {
		retention = mat.retention.Milliseconds()
	}
	if size+grace > retention || (w.kind == slidingWindowKind && minRet > retention) {
		b.fail(dslErr(mi.storeName, ErrInvalidWindows, "the retention period of the window store %s must be no smaller than its window size plus the grace period. Got size=[%d], grace=[%d], retention=[%d]",
			mi.storeName, size, grace, retention))
	}
	if w.emit.onClose && w.kind != timeWindowKind && w.kind != slidingWindowKind {
		b.fail(dslErr(name, ErrInvalidWindows, "%s: ON_WINDOW_CLOSE strategy is only supported for TimeWindows and SlidingWindows", name))
	}
	mk, split := windowedKeyFuncs[K]()
	if grace == 0 {
		fix := "TimeWindowsOfSizeAndGrace"
		if w.kind == slidingWindowKind {
			fix = "SlidingWindowsOfTimeDifferenceAndGrace"
		}
		b.warnNoGrace(name, mi.storeName, fix)
	}
	wo := ktable.WindowOptions{StoreName: mi.storeName, GraceMs: grace, EmitOnClose: w.emit.onClose, KeySerde: mi.keySerde,
		WindowedKey: mk, BaseKey: split, ProcessorName: name}
	if late != nil {
		wo.LateNode = name + lateSinkSuffix + "-filter"
	}
	var sup ktable.Supplier
	if w.kind == slidingWindowKind {
		sup = ktable.NewSlidingWindowAggregate(wo, size, init, agg)
	} else {
		sup = ktable.NewWindowAggregate(wo, w.time, init, agg)
	}
	if w.emit.onClose {
		mi.caching = false // Java wraps its time-ordered store in another cache (TimeOrderedCachingWindowStore): not ported
	}
	sb := windowStoreBuilder(mi, retention, size)
	var keySerde serde.Serde[any]
	if mi.keySerde != nil {
		keySerde = serde.Untyped(serde.TimeWindowed(serde.Typed[K](mi.keySerde), msDuration(size)))
	}
	t := w.g.buildWindowed(windowedResult{name: name, mi: mi, storeB: sb, sup: sup, late: late, keySerde: keySerde, valueSerd: mi.valueSerde})
	return KTable[Windowed[K], VR]{t: t}
}

// windowStoreBuilder returns the timestamped window store of a windowed aggregation, built
// when the topology is: a Pebble engine, as Java's default is RocksDB
// (BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers, the default dsl.store.suppliers.class;
// under EmitStrategy.onWindowClose Java's time-ordered RocksDB store, whose results here come
// from the same Pebble engine), or an in-memory engine with default.dsl.store=in_memory. Java:
// WindowStoreMaterializer / SlidingWindowStoreMaterializer.
func windowStoreBuilder(mi *materializedInternal, retention, size int64) func() processor.StoreBuilder {
	return func() processor.StoreBuilder {
		sup, err := mi.b.dslWindowStore(mi.storeName, retention, size, false)
		if err != nil {
			return nil
		}
		sb := store.Stores.TimestampedWindowStoreBuilder[any, any](sup, mi.keySerde, mi.valueSerde)
		if mi.logging {
			sb.WithLoggingEnabled(mi.logConfig)
		} else {
			sb.WithLoggingDisabled()
		}
		if mi.caching {
			sb.WithCachingEnabled()
		}
		return sb
	}
}

// sessionStoreBuilder returns the session store of a session aggregation, built when the
// topology is: a Pebble engine (Java: RocksDB, the default dsl.store.suppliers.class), or an
// in-memory engine with default.dsl.store=in_memory. Java: SessionStoreMaterializer.
func sessionStoreBuilder(mi *materializedInternal, retention int64) func() processor.StoreBuilder {
	return func() processor.StoreBuilder {
		sup, err := mi.b.dslSessionStore(mi.storeName, retention)
		if err != nil {
			return nil
		}
		sb := store.Stores.SessionStoreBuilder[any, any](sup, mi.keySerde, mi.valueSerde)
		if mi.logging {
			sb.WithLoggingEnabled(mi.logConfig)
		} else {
			sb.WithLoggingDisabled()
		}
		if mi.caching {
			sb.WithCachingEnabled()
		}
		return sb
	}
}

// Count counts the records of each key per window. Store "KSTREAM-AGGREGATE-STATE-STORE-<n>"
// unless a Materialized[K, int64] names it (an unnamed Materialized uses up one more counter
// value, as Java); store value serde defaults to serde.Long(). Options: TableNamed,
// Materialized[K, int64] (WithRetention: default size + grace; sliding: 2 x difference +
// grace; smaller fails Build with ErrInvalidWindows); LateRecordsTo adds a late-record topic. Records with a null key
// are dropped. Java: TimeWindowedKStream.count.
func (w TimeWindowedKStream[K, V]) Count(opts ...TableOption[K, int64]) KTable[Windowed[K], int64] {
	return timeWindowedAggregate[K, V, int64](w, "", streamAggName, opts, true, untyped(serde.Long()),
		func() (any, error) { return int64(0), nil },
		func(_, _, agg any) (any, error) {
			n, _ := agg.(int64)
			return n + 1, nil
		})
}

// Reduce combines the values of each key per window with reducer (the first value is the
// window's initial aggregate). Store serdes default to the grouping's. Options as Count, with
// Materialized[K, V]. Java: TimeWindowedKStream.reduce.
func (w TimeWindowedKStream[K, V]) Reduce(reducer func(agg, value V) V, opts ...TableOption[K, V]) KTable[Windowed[K], V] {
	red := reducerOf(reducer)
	return timeWindowedAggregate[K, V, V](w, nilNames(reducer == nil, "reducer"), streamReduceName, opts, false, w.g.valueSerde,
		func() (any, error) { return nil, nil },
		func(_, value, agg any) (any, error) {
			if agg == nil {
				return value, nil
			}
			return red(agg, value)
		})
}

// Aggregate folds the values of each key per window: initializer gives a window's first
// aggregate, aggregator adds a value. The store's key serde defaults to the grouping's, its
// value serde to default.value.serde. Options as Count, with Materialized[K, VR]. Java:
// TimeWindowedKStream.aggregate.
func (w TimeWindowedKStream[K, V]) Aggregate[VR any](initializer func() VR, aggregator func(key K, value V, agg VR) VR, opts ...TableOption[K, VR]) KTable[Windowed[K], VR] {
	return timeWindowedAggregate[K, V, VR](w, nilNames(initializer == nil, "initializer", aggregator == nil, "aggregator"), streamAggName, opts, false, nil, initializerOf(initializer), aggregatorOf(aggregator))
}

// sessionAggregate builds a session-windowed aggregation; missing is as timeWindowedAggregate's.
func sessionAggregate[K, V, VR any](w SessionWindowedKStream[K, V], missing, prefix string, opts []TableOption[K, VR], burnIfUnnamed bool,
	defaultValue serde.Serde[any], init ktable.Initializer, agg ktable.Aggregator, merger ktable.Merger) KTable[Windowed[K], VR] {
	b := w.g.b
	named, mat := splitTableOptions(opts)
	late := w.late
	if burnIfUnnamed && mat != nil && mat.storeName == "" {
		b.newStoreName(prefix)
	}
	mi := materialize(b, mat, prefix)
	if mi.keySerde == nil {
		mi.keySerde = w.g.keySerde
	}
	if mi.valueSerde == nil {
		mi.valueSerde = defaultValue
	}
	name := b.orElseGenerate(named, prefix)
	if missing != "" {
		b.fail(dslErr(name, nil, "%s: %s must not be nil", name, missing))
	}
	gap, grace := w.session.gapMs, w.session.graceMs
	if grace == 0 {
		b.warnNoGrace(name, mi.storeName, "SessionWindowsOfInactivityGapAndGrace")
	}
	retention := gap + grace
	if mat != nil && mat.retentionOK {
		retention = mat.retention.Milliseconds()
	}
	if gap+grace > retention {
		b.fail(dslErr(mi.storeName, ErrInvalidWindows, "the retention period of the session store %s must be no smaller than the session inactivity gap plus the grace period. Got gap=[%d], grace=[%d], retention=[%d]",
			mi.storeName, gap, grace, retention))
	}
	mk, split := windowedKeyFuncs[K]()
	wo := ktable.WindowOptions{StoreName: mi.storeName, GraceMs: grace, EmitOnClose: w.emit.onClose, KeySerde: mi.keySerde,
		WindowedKey: mk, BaseKey: split, ProcessorName: name}
	if late != nil {
		wo.LateNode = name + lateSinkSuffix + "-filter"
	}
	sup := ktable.NewSessionWindowAggregate(wo, gap, init, agg, merger)
	if _, err := store.Stores.PersistentSessionStore(mi.storeName, msDuration(retention)); err != nil {
		b.fail(dslErr(mi.storeName, ErrInvalidWindows, "session store %s: %v", mi.storeName, err))
	}
	if w.emit.onClose {
		// Java never caches the store of a session aggregation that emits on window close
		// (SessionStoreMaterializer): a cache would keep sessions the store has already
		// expired, and a record within their gap would merge into them.
		mi.caching = false
	}
	sb := sessionStoreBuilder(mi, retention)
	var keySerde serde.Serde[any]
	if mi.keySerde != nil {
		keySerde = serde.Untyped(serde.SessionWindowed(serde.Typed[K](mi.keySerde)))
	}
	t := w.g.buildWindowed(windowedResult{name: name, mi: mi, storeB: sb, sup: sup, late: late, keySerde: keySerde, valueSerd: mi.valueSerde})
	return KTable[Windowed[K], VR]{t: t}
}

// Count counts the records of each key per session. Options: TableNamed, Materialized[K, int64]
// (retention default gap + grace); LateRecordsTo adds a late-record topic. Java: SessionWindowedKStream.count.
func (w SessionWindowedKStream[K, V]) Count(opts ...TableOption[K, int64]) KTable[Windowed[K], int64] {
	return sessionAggregate[K, V, int64](w, "", streamAggName, opts, true, untyped(serde.Long()),
		func() (any, error) { return int64(0), nil },
		func(_, _, agg any) (any, error) {
			n, _ := agg.(int64)
			return n + 1, nil
		},
		func(_, a, b any) (any, error) {
			x, _ := a.(int64)
			y, _ := b.(int64)
			return x + y, nil
		})
}

// Reduce combines the values of each key per session with reducer; merging sessions reduces
// their aggregates. Options as Count, with Materialized[K, V]. Java: SessionWindowedKStream.reduce.
func (w SessionWindowedKStream[K, V]) Reduce(reducer func(agg, value V) V, opts ...TableOption[K, V]) KTable[Windowed[K], V] {
	red := reducerOf(reducer)
	agg := func(_, value, a any) (any, error) {
		if a == nil {
			return value, nil
		}
		return red(a, value)
	}
	return sessionAggregate[K, V, V](w, nilNames(reducer == nil, "reducer"), streamReduceName, opts, false, w.g.valueSerde,
		func() (any, error) { return nil, nil }, agg,
		func(key, a1, a2 any) (any, error) { return agg(key, a2, a1) })
}

// Aggregate folds the values of each key per session: initializer gives a session's first
// aggregate, aggregator adds a value, merger combines the aggregates of two sessions a record
// joins. Options as Count, with Materialized[K, VR]. Java: SessionWindowedKStream.aggregate.
func (w SessionWindowedKStream[K, V]) Aggregate[VR any](initializer func() VR, aggregator func(key K, value V, agg VR) VR, merger func(key K, agg1, agg2 VR) VR, opts ...TableOption[K, VR]) KTable[Windowed[K], VR] {
	m := func(key, a1, a2 any) (any, error) {
		k, err := cast[K]("key", key)
		if err != nil {
			return nil, err
		}
		x, err := cast[VR]("aggregate", a1)
		if err != nil {
			return nil, err
		}
		y, err := cast[VR]("aggregate", a2)
		if err != nil {
			return nil, err
		}
		return box(merger(k, x, y)), nil
	}
	return sessionAggregate[K, V, VR](w, nilNames(initializer == nil, "initializer", aggregator == nil, "aggregator", merger == nil, "merger"), streamAggName, opts, false, nil, initializerOf(initializer), aggregatorOf(aggregator), m)
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// TimeWindowedCogroupedKStream is a cogrouped stream windowed by TimeWindows or SlidingWindows.
// Java counterpart: org.apache.kafka.streams.kstream.TimeWindowedCogroupedKStream.
type TimeWindowedCogroupedKStream[K, VOut any] struct {
	c       *cogroupImpl
	kind    windowKind
	time    TimeWindows
	sliding SlidingWindows
}

// SessionWindowedCogroupedKStream is a cogrouped stream windowed by SessionWindows. Java
// counterpart: org.apache.kafka.streams.kstream.SessionWindowedCogroupedKStream.
type SessionWindowedCogroupedKStream[K, VOut any] struct {
	c       *cogroupImpl
	session SessionWindows
}

// CogroupWindowedBy windows a cogrouped stream by tumbling or hopping windows (a function for
// the reason given at [WindowedBy]). Java: CogroupedKStream.windowedBy(Windows).
func CogroupWindowedBy[K, VOut any](c CogroupedKStream[K, VOut], w TimeWindows) TimeWindowedCogroupedKStream[K, VOut] {
	if w.err != nil {
		c.c.b.fail(dslErr(c.c.groups[0].name, ErrInvalidWindows, "windowedBy %s: %v", c.c.groups[0].name, w.err))
	}
	return TimeWindowedCogroupedKStream[K, VOut]{c: c.c, kind: timeWindowKind, time: w}
}

// CogroupWindowedBySliding windows a cogrouped stream by sliding windows. Java:
// CogroupedKStream.windowedBy(SlidingWindows).
func CogroupWindowedBySliding[K, VOut any](c CogroupedKStream[K, VOut], w SlidingWindows) TimeWindowedCogroupedKStream[K, VOut] {
	if w.err != nil {
		c.c.b.fail(dslErr(c.c.groups[0].name, ErrInvalidWindows, "windowedBy %s: %v", c.c.groups[0].name, w.err))
	}
	return TimeWindowedCogroupedKStream[K, VOut]{c: c.c, kind: slidingWindowKind, sliding: w}
}

// CogroupWindowedBySession windows a cogrouped stream by session windows. Java:
// CogroupedKStream.windowedBy(SessionWindows).
func CogroupWindowedBySession[K, VOut any](c CogroupedKStream[K, VOut], w SessionWindows) SessionWindowedCogroupedKStream[K, VOut] {
	if w.err != nil {
		c.c.b.fail(dslErr(c.c.groups[0].name, ErrInvalidWindows, "windowedBy %s: %v", c.c.groups[0].name, w.err))
	}
	return SessionWindowedCogroupedKStream[K, VOut]{c: c.c, session: w}
}

// cogroupWindowed writes a windowed cogrouped aggregation as Java's
// CogroupedStreamAggregateBuilder: repartitions, one "COGROUPKSTREAM-AGGREGATE-<n>" processor per
// stream sharing the store, and the "COGROUPKSTREAM-MERGE-<n>" pass-through. missing names the
// user functions that are nil ("" for none), which fails the build naming the merge processor.
func cogroupWindowed(c *cogroupImpl, named string, mi *materializedInternal, sb func() processor.StoreBuilder,
	sup func(agg ktable.Aggregator) ktable.Supplier, keySerde serde.Serde[any], missing string) *tableImpl {
	b := c.b
	parents := make([]*graphNode, len(c.groups))
	for i, g := range c.groups {
		parents[i] = g.node
		if g.repartitionRequired {
			prefix := g.userName
			if prefix == "" {
				prefix = mi.storeName
			}
			rp := b.newRepartition(prefix, g.keySerde, g.valueSerde, nil)
			parents[i] = b.addNode(rp.node(), g.node)
		}
	}
	var sups []ktable.Supplier
	var aggNodes []*graphNode
	for i := range c.groups {
		name := b.suffixOrElseGenerate(named, "-cogroup-agg-"+itoa(i), cogroupAggName)
		s := sup(c.aggs[i])
		sups = append(sups, s)
		var n *graphNode
		if i == 0 {
			n = processorNode(name, s, nil, sb)
		} else {
			n = processorNode(name, s, []string{mi.storeName}, nil)
		}
		aggNodes = append(aggNodes, b.addNode(n, parents[i]))
	}
	mergeName := b.suffixOrElseGenerate(named, "-cogroup-merge", cogroupMergeName)
	if missing != "" {
		b.fail(dslErr(mergeName, nil, "%s: %s must not be nil", mergeName, missing))
	}
	pass := ktable.NewWindowedPassThrough(sups, mi.storeName)
	n := b.addNode(processorNode(mergeName, pass, nil, nil), aggNodes...)
	return &tableImpl{b: b, name: mergeName, node: n, keySerde: keySerde, valueSerde: mi.valueSerde, supplier: pass,
		queryableName: mi.queryableName()}
}

// Aggregate builds the windowed cogrouped aggregation: initializer gives a window's first
// aggregate, each stream's aggregator adds its values. Store "COGROUPKSTREAM-AGGREGATE-STATE-STORE-<n>"
// unless a Materialized[K, VOut] names it (serdes default to the default serdes; the result's key
// serde is a time-windowed serde only when the Materialized gives a key serde, as Java). Options:
// TableNamed, Materialized[K, VOut]. Java: TimeWindowedCogroupedKStream.aggregate.
func (w TimeWindowedCogroupedKStream[K, VOut]) Aggregate(initializer func() VOut, opts ...TableOption[K, VOut]) KTable[Windowed[K], VOut] {
	b := w.c.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, cogroupAggName)
	tw := TimeWindowedKStream[K, VOut]{kind: w.kind, time: w.time, sliding: w.sliding}
	size, grace, minRet := tw.params()
	retention := minRet
	if mat != nil && mat.retentionOK {
		retention = mat.retention.Milliseconds()
	}
	if size+grace > retention || minRet > retention {
		b.fail(dslErr(mi.storeName, ErrInvalidWindows, "the retention period of the window store %s must be no smaller than its window size plus the grace period. Got size=[%d], grace=[%d], retention=[%d]",
			mi.storeName, size, grace, retention))
	}
	mk, split := windowedKeyFuncs[K]()
	wo := ktable.WindowOptions{StoreName: mi.storeName, GraceMs: grace, KeySerde: mi.keySerde, WindowedKey: mk, BaseKey: split}
	init := initializerOf(initializer)
	sup := func(agg ktable.Aggregator) ktable.Supplier {
		if w.kind == slidingWindowKind {
			return ktable.NewSlidingWindowAggregate(wo, size, init, agg)
		}
		return ktable.NewWindowAggregate(wo, w.time, init, agg)
	}
	var keySerde serde.Serde[any]
	if mi.keySerde != nil {
		keySerde = serde.Untyped(serde.TimeWindowed(serde.Typed[K](mi.keySerde), msDuration(size)))
	}
	return KTable[Windowed[K], VOut]{t: cogroupWindowed(w.c, named, mi, windowStoreBuilder(mi, retention, size), sup, keySerde, nilNames(initializer == nil, "initializer"))}
}

// Aggregate builds the session-windowed cogrouped aggregation; merger combines the aggregates
// of two sessions a record joins. Options: TableNamed, Materialized[K, VOut]. Java:
// SessionWindowedCogroupedKStream.aggregate.
func (w SessionWindowedCogroupedKStream[K, VOut]) Aggregate(initializer func() VOut, merger func(key K, agg1, agg2 VOut) VOut, opts ...TableOption[K, VOut]) KTable[Windowed[K], VOut] {
	b := w.c.b
	named, mat := splitTableOptions(opts)
	mi := materialize(b, mat, cogroupAggName)
	gap, grace := w.session.gapMs, w.session.graceMs
	retention := gap + grace
	if mat != nil && mat.retentionOK {
		retention = mat.retention.Milliseconds()
	}
	if gap+grace > retention {
		b.fail(dslErr(mi.storeName, ErrInvalidWindows, "the retention period of the session store %s must be no smaller than the session inactivity gap plus the grace period. Got gap=[%d], grace=[%d], retention=[%d]",
			mi.storeName, gap, grace, retention))
	}
	mk, split := windowedKeyFuncs[K]()
	wo := ktable.WindowOptions{StoreName: mi.storeName, GraceMs: grace, KeySerde: mi.keySerde, WindowedKey: mk, BaseKey: split}
	init := initializerOf(initializer)
	m := func(key, a1, a2 any) (any, error) {
		k, err := cast[K]("key", key)
		if err != nil {
			return nil, err
		}
		x, err := cast[VOut]("aggregate", a1)
		if err != nil {
			return nil, err
		}
		y, err := cast[VOut]("aggregate", a2)
		if err != nil {
			return nil, err
		}
		return box(merger(k, x, y)), nil
	}
	sup := func(agg ktable.Aggregator) ktable.Supplier {
		return ktable.NewSessionWindowAggregate(wo, gap, init, agg, m)
	}
	var sb func() processor.StoreBuilder
	if _, err := store.Stores.PersistentSessionStore(mi.storeName, msDuration(retention)); err == nil {
		sb = sessionStoreBuilder(mi, retention)
	}
	var keySerde serde.Serde[any]
	if mi.keySerde != nil {
		keySerde = serde.Untyped(serde.SessionWindowed(serde.Typed[K](mi.keySerde)))
	}
	return KTable[Windowed[K], VOut]{t: cogroupWindowed(w.c, named, mi, sb, sup, keySerde, nilNames(initializer == nil, "initializer", merger == nil, "merger"))}
}
