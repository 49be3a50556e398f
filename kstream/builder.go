// Package kstream is the KStream/KTable DSL of kstreams-go, the counterpart of Java's
// org.apache.kafka.streams.kstream and StreamsBuilder: a [StreamsBuilder] creates streams and
// tables from topics; typed operators ([KStream], [KTable], [KGroupedStream], [KGroupedTable],
// [BranchedKStream], [CogroupedKStream]) build a graph that [StreamsBuilder.Build] turns into a
// *processor.Topology with Java's generated names, internal topics and Describe text.
//
//	b := kstream.NewStreamsBuilder()
//	lines := kstream.Stream(b, "streams-plaintext-input", kstream.ConsumedWith(serde.String(), serde.String()))
//	counts := lines.FlatMapValues(strings.Fields).
//		GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(serde.String(), serde.String())).
//		Count(kstream.MaterializedAs[string, int64]("counts-store"))
//	counts.ToStream().To("streams-wordcount-output", kstream.ProducedWith(serde.String(), serde.Long()))
//	topology, err := b.Build()
//
// Type-changing operators are generic methods (Go 1.27). Records travel untyped through the
// engine (nil is Java's null); user functions get typed values.
//
// # Nulls
//
// One rule holds in the whole DSL: a null value (a tombstone: a deleted table row, a session
// a merge retracted, an update a table filter dropped, a null record value on a topic) is never
// turned into a non-null value. A function whose value type can hold nil (a pointer such as
// serde.Nullable's *T, a slice, a map, an interface) gets the null as nil, exactly as Java
// passes null, and decides. A function whose value type cannot (int64, string, a struct) is not
// given the null as a value; the tombstone then goes on as a tombstone, or is dropped where
// nothing else is possible:
//
//   - value functions (MapValues, FlatMapValues, Filter, FilterNot, Peek, Split's predicates)
//     are not called: the record is forwarded with its null value (Filter keeps it, Split sends
//     it to the default branch if there is one, FlatMapValues forwards it once), as Java
//     forwards the null a null-safe function returns; Foreach is not called;
//   - key selectors (SelectKey, GroupBy, KTable.ToStreamMapper, Deduplicate's id extractor)
//     are called with the zero value and only give the key: the record stays a tombstone
//     (Java calls them with null);
//   - Map and FlatMap, which compute the value too, are not called: the tombstone is dropped and
//     counted in the task's dropped-records metric (Java would call the mapper with null);
//   - table operators (KTable.Filter, MapValues, GroupBy) and aggregations never call their
//     functions with a null, as in Java; a left or outer join's missing side is not a value
//     either: the joiner gets the zero value of a non-nillable type.
//
// To see tombstones with a typed function, view the values through pointers: [NullableValues]
// (a stream), [ToStreamNullable] (a table's updates) and [NullableTableValues] (a table, e.g.
// the other side of a left join) give *V values, nil for null, without adding a node; serdes
// downstream of the view are Serde[*V] (serde.Nullable). For example, a session count re-keyed
// with its retractions, as Java's counts.toStream().map(...) does:
//
//	kstream.ToStreamNullable(counts).Map(func(k kstream.Windowed[string], n *int64) (string, *int64) {
//		return k.Key, n // n == nil: the session was merged away
//	}).To("sessions", kstream.ProducedWith(serde.String(), serde.Nullable(serde.Long())))
//
// The Processor API (Process, ProcessValues) is not covered: its typed records carry the zero
// value of a non-nillable V for null; use a pointer V there.
//
// Errors: operators do not return errors; misuse (an invalid or duplicate name, a nil function,
// streams reading overlapping but not equal topic lists, a foreign-key join's Materialized of
// the wrong types, ...) is recorded in the builder and returned by Build, the first one wrapped
// with what it concerns (Java throws at the call or at build()): a *processor.TopologyError
// (see Build). The options of the other operators are typed, so the compiler refuses a
// Materialized of the wrong types. A topic read by two Stream
// calls is not an error: as in Java, the streams share one source node, which deserializes with
// the first call's serdes.
package kstream

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/kstreams-go/kstreams/internal/serdeapi"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// dslErr returns a *processor.TopologyError about the node or store name; kind (nil for none)
// is what it matches besides processor.ErrInvalidTopology.
func dslErr(name string, kind error, format string, args ...any) error {
	return topology.NewError(name, kind, format, args...)
}

// Java properties choosing the engine of DSL stores that no Materialized supplier fixes:
// Pebble (persistent, the default, as Java's RocksDB default) or in-memory.
const (
	// DefaultDSLStoreConfig is "rocksDB" (default; here the persistent Pebble engine) or
	// "in_memory". Java: StreamsConfig.DEFAULT_DSL_STORE_CONFIG (deprecated in Java 3.7).
	DefaultDSLStoreConfig = "default.dsl.store"
	// InMemoryDSLStore is the in_memory value of DefaultDSLStoreConfig.
	InMemoryDSLStore = "in_memory"
	// DSLStoreSuppliersConfig names Java's store-supplier class; a class name containing
	// "InMemoryDslStoreSuppliers" (Java's BuiltInDslStoreSuppliers$InMemoryDslStoreSuppliers)
	// selects in-memory stores. Java: StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG.
	DSLStoreSuppliersConfig = "dsl.store.suppliers.class"
)

// TopologyOptimizationConfig is the Java property selecting topology optimizations: "none"
// (the default), "all", or a comma-separated list of [ReuseKTableSourceTopics],
// [MergeRepartitionTopics], [SingleStoreSelfJoin]. Java: StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG.
const TopologyOptimizationConfig = "topology.optimization"

// StreamsBuilder builds a topology with the DSL. It numbers generated processor and store names
// with one counter, as Java's InternalStreamsBuilder does, so the same program gets the same
// names (KSTREAM-SOURCE-0000000000, KSTREAM-AGGREGATE-STATE-STORE-0000000003, ...). The zero
// value is not usable; use [NewStreamsBuilder]. Not safe for concurrent use. Java counterpart:
// org.apache.kafka.streams.StreamsBuilder.
type StreamsBuilder struct {
	index        int
	nodes        []*graphNode
	err          error
	copartitions [][]string
	// build priorities and optimizer metadata (see optimize.go)
	priority        int
	keyChangers     map[*graphNode][]*graphNode
	keyChangerOrder []*graphNode
	mergeNodes      []*graphNode
	reuseSources    bool
	// optimizations are the topology.optimization values of the Build in progress (keys:
	// ReuseKTableSourceTopics, MergeRepartitionTopics, SingleStoreSelfJoin).
	optimizations map[string]bool
	// inMemoryStores: default.dsl.store=in_memory (or the in-memory dsl.store.suppliers.class)
	// for the Build in progress.
	inMemoryStores bool
	// storeTypes are the key and value types of the stores materialized so far, by store
	// name; Build records them in the topology for typed store views.
	storeTypes map[string][2]reflect.Type
	// warnings are the suspect constructs found so far (processor.Topology.Analyze).
	warnings []topology.Warning
}

// warnNoGrace records that the windowed aggregation name (store) has no grace period; fix is
// the windows constructor that gives one.
func (b *StreamsBuilder) warnNoGrace(name, store, fix string) {
	b.warnings = append(b.warnings, topology.Warning{Kind: processor.WarningNoGrace, Node: name,
		Message: fmt.Sprintf("windowed aggregation %s (store %s) has no grace period: a window closes as soon as stream time "+
			"passes its end, so a record out of order by even 1 ms is dropped; unless the input is in timestamp order, "+
			"give the windows a grace period (%s)", name, store, fix)})
}

// NewStreamsBuilder returns an empty builder. Java: new StreamsBuilder().
func NewStreamsBuilder() *StreamsBuilder {
	return &StreamsBuilder{keyChangers: map[*graphNode][]*graphNode{}}
}

// graphNode is one operator of the DSL graph (Java: GraphNode). name is the topology node
// children attach to; write adds the operator's nodes to the topology, given the names of the
// parents.
type graphNode struct {
	name    string
	parents []*graphNode
	write   func(t *processor.Topology, parents []string) error
	// source marks a stream source node: its topics (as given) or its pattern; duplicate
	// sources are merged at Build (Java: mergeDuplicateSourceNodes).
	source        bool
	sourceTopics  []string
	sourcePattern string

	// children, in the order they were linked (Java: GraphNode.childNodes).
	children []*graphNode
	// priority is the build priority: the order nodes were added (Java: buildPriority).
	priority int
	// keyChanging, valueChanging and merge are the optimizer's marks (Java:
	// isKeyChangingOperation, isValueChangingOperation, isMergeNode).
	keyChanging, valueChanging, merge bool
	// optimizable is the repartition of an OptimizableRepartitionNode (nil otherwise).
	optimizable *repartitionSpec
	// repartition is the repartition this node writes (optimizable or not; nil otherwise).
	repartition *repartitionSpec
	// nullKeyRelaxedJoin marks a join that accepts null-key records (KIP-962: stream-table and
	// stream-globalTable left joins, stream-stream left and outer joins). Java:
	// GraphNode.Label.NULL_KEY_RELAXED_JOIN.
	nullKeyRelaxedJoin bool
	removed            bool
	// selfJoin is set on a stream-stream join of a stream with itself (see rewriteSelfJoins).
	selfJoin *selfJoinRewrite
}

// addNode links n under parents and gives it the next build priority (adding a node again
// re-links it and renews its priority, as Java's addGraphNode does); nodes are written to the
// topology in build-priority order. It records what the optimizer needs. Java:
// InternalStreamsBuilder.addGraphNode + maybeAddNodeForOptimizationMetadata.
func (b *StreamsBuilder) addNode(n *graphNode, parents ...*graphNode) *graphNode {
	if !slices.Contains(b.nodes, n) {
		b.nodes = append(b.nodes, n)
	}
	for _, p := range parents {
		p.addChild(n)
	}
	n.priority = b.priority
	b.priority++
	switch {
	case n.keyChanging:
		if _, ok := b.keyChangers[n]; !ok {
			b.keyChangerOrder = append(b.keyChangerOrder, n)
		}
		b.keyChangers[n] = nil
	case n.optimizable != nil:
		if kc := keyChangingParent(n); kc != nil {
			if !slices.Contains(b.keyChangers[kc], n) {
				b.keyChangers[kc] = append(b.keyChangers[kc], n)
			}
		}
	case n.merge:
		b.mergeNodes = append(b.mergeNodes, n)
	}
	return n
}

func (n *graphNode) addChild(c *graphNode) {
	if !slices.Contains(n.children, c) {
		n.children = append(n.children, c)
	}
	if !slices.Contains(c.parents, n) {
		c.parents = append(c.parents, n)
	}
}

func (n *graphNode) removeChild(c *graphNode) {
	n.children = slices.DeleteFunc(n.children, func(x *graphNode) bool { return x == c })
	c.parents = slices.DeleteFunc(c.parents, func(x *graphNode) bool { return x == n })
}

// fail records the first construction error.
func (b *StreamsBuilder) fail(err error) {
	if b.err == nil && err != nil {
		b.err = err
	}
}

// newProcessorName returns prefix + the next counter value (10 digits). Java: newProcessorName.
func (b *StreamsBuilder) newProcessorName(prefix string) string {
	n := fmt.Sprintf("%s%010d", prefix, b.index)
	b.index++
	return n
}

// newStoreName returns prefix + "STATE-STORE-" + the next counter value. Java: newStoreName.
func (b *StreamsBuilder) newStoreName(prefix string) string {
	n := fmt.Sprintf("%sSTATE-STORE-%010d", prefix, b.index)
	b.index++
	return n
}

var legalName = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// checkName validates a user-given name as Java's Named.validate.
func (b *StreamsBuilder) checkName(name string) {
	switch {
	case len(name) > 249:
		b.fail(dslErr(name, nil, "name %q is illegal, it can't be longer than 249 characters", name))
	case !legalName.MatchString(name):
		b.fail(dslErr(name, nil, "name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name))
	}
}

// orElseGenerate returns name (validated) or a generated one; a given name still uses up a
// counter value, as Java's NamedInternal.orElseGenerateWithPrefix.
func (b *StreamsBuilder) orElseGenerate(name, prefix string) string {
	gen := b.newProcessorName(prefix)
	if name != "" {
		b.checkName(name)
		return name
	}
	return gen
}

// suffixOrElseGenerate returns name+suffix or a generated name (a counter value is used either
// way). Java: NamedInternal.suffixWithOrElseGet(suffix, provider, prefix).
func (b *StreamsBuilder) suffixOrElseGenerate(name, suffix, prefix string) string {
	gen := b.newProcessorName(prefix)
	if name != "" {
		b.checkName(name + suffix)
		return name + suffix
	}
	return gen
}

// Build returns the topology with the default configuration (no optimization). Java: build().
//
// Errors: the first misuse recorded while the topology was described, as a
// *processor.TopologyError matching processor.ErrInvalidTopology (Java: TopologyException, or
// the IllegalArgumentException, NullPointerException or ConfigException Java throws at once).
// Its Name is the operator (node) or store concerned, when there is one, and its Reason says
// what is wrong: an illegal name (empty, longer than 249 characters, or a character other than
// ASCII letters, digits, '.', '_' and '-'; Java: "Name ... is illegal"), a nil function, a
// stream or table without topics or with a topic pattern that does not compile, an unknown
// topology.optimization value, sources of overlapping but not equal topic lists, streams or
// tables of another builder, a foreign-key join option of other types than the join's (Java's
// generics reject it at compile time), join inputs whose repartition topics have different
// fixed partition counts (Java finds this when the application starts: "Following topics do
// not have the same number of partitions"), inconsistent StreamJoined store suppliers (Java:
// StreamsException), a stream-table join grace period the table cannot serve (Java: "KTable
// must be versioned to use a grace period in a stream table join.", "History retention must be
// at least grace period."), an untilWindowCloses suppression of a table that is not windowed
// (Java: "Window close time is only defined for windowed computations"), or an invalid window
// specification (which also matches [ErrInvalidWindows]). Errors of the Processor API (a node
// name or topic used twice, ...) come through as they are.
func (b *StreamsBuilder) Build() (*processor.Topology, error) { return b.BuildWithConfig(nil) }

// BuildWithConfig returns the topology for the given Java properties; it reads
// topology.optimization (see [TopologyOptimizationConfig]; an invalid value fails with a
// *processor.TopologyError). Optimizations rewrite the builder's graph, as in Java, so build a
// builder once. Java: build(Properties).
func (b *StreamsBuilder) BuildWithConfig(props map[string]string) (*processor.Topology, error) {
	if b.err != nil {
		return nil, b.err
	}
	opts, err := parseOptimizations(props[TopologyOptimizationConfig])
	if err != nil {
		return nil, err
	}
	if err := b.mergeDuplicateSources(); err != nil {
		return nil, err
	}
	b.optimizations = opts
	b.inMemoryStores = props[DefaultDSLStoreConfig] == InMemoryDSLStore ||
		strings.Contains(props[DSLStoreSuppliersConfig], "InMemoryDslStoreSuppliers")
	b.reuseSources = opts[ReuseKTableSourceTopics]
	if opts[MergeRepartitionTopics] {
		if err := b.mergeRepartitionTopics(); err != nil {
			return nil, err
		}
	}
	if opts[SingleStoreSelfJoin] {
		b.rewriteSelfJoins()
	}
	b.relaxNullKeyRepartitions()
	t := processor.NewTopology()
	if err := b.writeInPriorityOrder(t); err != nil {
		return nil, err
	}
	b.applyCopartitions(t)
	for _, w := range b.warnings {
		topology.Of(t).AddWarning(w)
	}
	for name, kv := range b.storeTypes {
		if st := topology.Of(t).Store(name); st != nil {
			st.KeyType, st.ValueType = kv[0], kv[1]
		}
	}
	return t, nil
}

// AddStateStore adds a store that Process/ProcessValues processors can use by name. Java:
// StreamsBuilder.addStateStore.
func (b *StreamsBuilder) AddStateStore(builder processor.StoreBuilder) *StreamsBuilder {
	b.addNode(&graphNode{name: builder.Name(), write: func(t *processor.Topology, _ []string) error {
		return t.AddStateStore(builder)
	}})
	return b
}

// materializedInternal is a Materialized with resolved name and untyped serdes (Java:
// MaterializedInternal).
type materializedInternal struct {
	storeName  string
	queryable  bool
	keySerde   serde.Serde[any]
	valueSerde serde.Serde[any]
	supplier   store.KeyValueBytesStoreSupplier
	versioned  store.VersionedBytesStoreSupplier
	caching    bool
	logging    bool
	logConfig  map[string]string
	builder    processor.StoreBuilder
	b          *StreamsBuilder
}

// materialize resolves m (nil: Materialized with nothing set); without a store name one is
// generated with prefix (using a counter value). Java: new MaterializedInternal(m, builder, prefix).
func materialize[K, V any](b *StreamsBuilder, m *Materialized[K, V], prefix string) *materializedInternal {
	mi := &materializedInternal{caching: true, logging: true, b: b}
	if m != nil {
		mi.storeName, mi.keySerde, mi.valueSerde, mi.supplier = m.storeName, untyped(m.keySerde), untyped(m.valueSerde), m.supplier
		mi.caching, mi.logging, mi.logConfig = !m.noCaching, !m.noLogging, m.logConfig
		mi.versioned = m.versioned
	}
	if mi.storeName != "" {
		mi.queryable = true
		b.checkName(mi.storeName)
	} else {
		mi.storeName = b.newStoreName(prefix)
	}
	if b.storeTypes == nil {
		b.storeTypes = map[string][2]reflect.Type{}
	}
	b.storeTypes[mi.storeName] = [2]reflect.Type{reflect.TypeFor[K](), reflect.TypeFor[V]()}
	return mi
}

// queryableName is the store name if the user named it, else "".
func (m *materializedInternal) queryableName() string {
	if m.queryable {
		return m.storeName
	}
	return ""
}

// storeBuilder returns the (one) timestamped store builder of m: the Materialized's supplier, else
// a persistent (Pebble) engine, or an in-memory one with default.dsl.store=in_memory. Java:
// KeyValueStoreMaterializer.
func (m *materializedInternal) storeBuilder() processor.StoreBuilder {
	if m.builder != nil {
		return m.builder
	}
	if m.versioned != nil {
		vb := store.Stores.VersionedKeyValueStoreBuilder[any, any](m.versioned, m.keySerde, m.valueSerde)
		if m.logging {
			vb.WithLoggingEnabled(m.logConfig)
		} else {
			vb.WithLoggingDisabled()
		}
		m.builder = vb
		return vb
	}
	sup := m.supplier
	if sup == nil {
		sup = m.b.dslKeyValueStore(m.storeName, true)
	}
	sb := store.Stores.TimestampedKeyValueStoreBuilder[any, any](sup, m.keySerde, m.valueSerde)
	if m.logging {
		sb.WithLoggingEnabled(m.logConfig)
	} else {
		sb.WithLoggingDisabled()
	}
	if m.caching {
		sb.WithCachingEnabled()
	} else {
		sb.WithCachingDisabled()
	}
	m.builder = sb
	return sb
}

// dslKeyValueStore returns the key-value engine of a DSL store that no supplier fixes:
// Pebble, as Java's default RocksDB (BuiltInDslStoreSuppliers.RocksDBDslStoreSuppliers), or
// in-memory with default.dsl.store=in_memory (or Java's in-memory dsl.store.suppliers.class).
// Call it while the topology is built. Java: DslStoreSuppliers.keyValueStore.
func (b *StreamsBuilder) dslKeyValueStore(name string, timestamped bool) store.KeyValueBytesStoreSupplier {
	switch {
	case b != nil && b.inMemoryStores:
		return store.Stores.InMemoryKeyValueStore(name)
	case timestamped:
		return store.Stores.PersistentTimestampedKeyValueStore(name)
	}
	return store.Stores.PersistentKeyValueStore(name)
}

// dslWindowStore returns the window engine of a DSL store (windowed aggregations, the window
// stores of stream-stream joins): Pebble by default, in-memory with default.dsl.store=in_memory.
// Errors: store.ErrInvalidStoreArgument. Java: DslStoreSuppliers.windowStore.
func (b *StreamsBuilder) dslWindowStore(name string, retention, size int64, retainDuplicates bool) (store.WindowBytesStoreSupplier, error) {
	if b != nil && b.inMemoryStores {
		return store.Stores.InMemoryWindowStore(name, msDuration(retention), msDuration(size), retainDuplicates)
	}
	return store.Stores.PersistentWindowStore(name, msDuration(retention), msDuration(size), retainDuplicates)
}

// dslSessionStore returns the session engine of a session aggregation: Pebble by default,
// in-memory with default.dsl.store=in_memory. Errors: store.ErrInvalidStoreArgument. Java:
// DslStoreSuppliers.sessionStore.
func (b *StreamsBuilder) dslSessionStore(name string, retention int64) (store.SessionBytesStoreSupplier, error) {
	if b != nil && b.inMemoryStores {
		return store.Stores.InMemorySessionStore(name, msDuration(retention))
	}
	return store.Stores.PersistentSessionStore(name, msDuration(retention))
}

// typeName names T for messages.
func typeName[T any]() string { return reflect.TypeFor[T]().String() }

// box turns a typed value into an engine value: nil pointers, slices, maps, funcs,
// interfaces and channels become untyped nil (null).
func box[T any](v T) any {
	a := any(v)
	switch a.(type) {
	case nil:
		return nil
	case string, int64, int32, int16, int, float64, float32, bool, [16]byte:
		return a // never nil: skip reflection on the common record types
	}
	rv := reflect.ValueOf(a)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Func, reflect.Interface, reflect.Chan:
		if rv.IsNil() {
			return nil
		}
	}
	return a
}

// boxLike is box(v), except that a string equal to the string held by other returns other: a
// key selected from the value (groupBy(word -> word)) shares the value's boxed string instead of
// allocating a second box for it. Strings are immutable, so the two are indistinguishable.
func boxLike[T any](v T, other any) any {
	if os, ok := other.(string); ok {
		if vs, ok := any(v).(string); ok && vs == os {
			return other
		}
	}
	return box(v)
}

// cast turns an engine value into T: nil becomes the zero value (the operators never give a
// null value to a function whose value type is not nillable: see nillable), and a value of type
// X becomes a new *X when T is *X (the nullable views, KStream.NullableValues).
func cast[T any](what string, v any) (T, error) {
	var zero T
	if v == nil {
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		if p, ok := serdeapi.PointerTo[T](v); ok {
			return p, nil
		}
		return zero, fmt.Errorf("%w: %s has type %T, the function expects %s", processor.ErrRecordTypeMismatch, what, v, typeName[T]())
	}
	return t, nil
}

// nillable reports whether T can hold nil (pointer, slice, map, interface, func, channel).
// The DSL's rule for nulls (package doc): a function whose value parameter is nillable gets a
// null value as nil; one whose value type is not is never called for a null value.
func nillable[T any]() bool {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	}
	return false
}

// tombstoneFor reports whether a record value v is a null that a function of value type V must
// not see (v is nil and V is not nillable); vNil is nillable[V](), computed once per operator.
func tombstoneFor(vNil bool, v any) bool { return v == nil && !vNil }

// dropTombstone counts a tombstone a key-changing operator cannot re-key without calling its
// function (see the package doc) as a dropped record. Java would call the function with null.
func dropTombstone(ctx processor.ProcessorContext[any, any]) error {
	if d, ok := ctx.(interface{ RecordDropped(n int64) }); ok {
		d.RecordDropped(1)
	}
	return nil
}

// untypedPartitioner adapts a typed partitioner to the engine's untyped records: a key or value
// of another type fails the call with processor.ErrRecordTypeMismatch (see cast).
func untypedPartitioner[K, V any](p processor.StreamPartitioner[K, V]) processor.StreamPartitioner[any, any] {
	if u, ok := any(p).(processor.StreamPartitioner[any, any]); ok {
		return u
	}
	return processor.StreamPartitionerFunc[any, any](func(topic string, key, value any, n int32) ([]int32, bool, error) {
		k, v, err := cast2[K, V](key, value)
		if err != nil {
			return nil, false, err
		}
		return p.Partitions(topic, k, v, n)
	})
}

func cast2[K, V any](key, value any) (K, V, error) {
	k, err := cast[K]("key", key)
	if err != nil {
		var v V
		return k, v, err
	}
	v, err := cast[V]("value", value)
	return k, v, err
}

// mergeDuplicateSources merges every stream source node that reads exactly the topics (or the
// pattern) of an earlier one into that earlier node: the later node is removed and its
// children hang off the earlier one, whose serdes and name are kept. Sources whose topics
// overlap without being equal fail (a *processor.TopologyError naming both). Java:
// InternalStreamsBuilder.mergeDuplicateSourceNodes.
func (b *StreamsBuilder) mergeDuplicateSources() error {
	byTopic := map[string]*graphNode{}
	byPattern := map[string]*graphNode{}
	mergeInto := func(main, n *graphNode) {
		for _, c := range slices.Clone(n.children) {
			n.removeChild(c)
			main.addChild(c)
		}
		n.removed = true
	}
	for _, n := range b.nodes {
		if !n.source || n.removed {
			continue
		}
		if n.sourcePattern != "" {
			if m := byPattern[n.sourcePattern]; m != nil {
				mergeInto(m, n)
			} else {
				byPattern[n.sourcePattern] = n
			}
			continue
		}
		for _, topic := range n.sourceTopics {
			m := byTopic[topic]
			if m == nil {
				byTopic[topic] = n
				continue
			}
			if !slices.Equal(m.sourceTopics, n.sourceTopics) {
				return dslErr(m.name, nil, "sources %s %v and %s %v are subscribed to overlapping but not equal input topics; "+
					"read each topic in one Stream call (or in streams with exactly the same topics)", m.name, m.sourceTopics, n.name, n.sourceTopics)
			}
			mergeInto(m, n)
			break
		}
	}
	return nil
}

// writeInPriorityOrder writes the graph as Java does: a priority queue (by build priority)
// starting from the parentless nodes; a popped node is written once all its parents are, and
// its children are queued. Java: buildAndOptimizeTopology.
func (b *StreamsBuilder) writeInPriorityOrder(t *processor.Topology) error {
	written := map[*graphNode]bool{}
	q := &nodeQueue{}
	for _, n := range b.nodes {
		if len(n.parents) == 0 && !n.removed {
			q.push(n)
		}
	}
	for q.len() > 0 {
		n := q.pop()
		all := true
		for _, p := range n.parents {
			all = all && written[p]
		}
		if all && !written[n] {
			parents := make([]string, len(n.parents))
			for i, p := range n.parents {
				parents[i] = p.name
			}
			if err := n.write(t, parents); err != nil {
				return fmt.Errorf("build %s: %w", n.name, err)
			}
			written[n] = true
		}
		for _, c := range n.children {
			q.push(c)
		}
	}
	return nil
}
