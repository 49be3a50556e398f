// Package topology is the untyped topology graph shared by the Processor API
// (processor.Topology wraps it), the DSL (kstream) and the processing engine (internal/task)
// and runtime. It is the counterpart of Java's
// org.apache.kafka.streams.processor.internals.InternalTopologyBuilder: nodes (sources,
// processors, sinks) in the order they were added, state stores and the processors they
// are connected to, global stores, validation with TopologyException-like errors, the node
// groups (sub-topologies) and the data of the topology description.
//
// Node payloads that are typed in package processor (processor suppliers, timestamp and
// topic-name extractors, partitioners, store builders) are held as values of type any or as
// small structural interfaces, because processor imports this package; their dynamic types
// are documented on each field.
//
// Every Add* method validates all of its arguments before changing anything: on error the
// builder is unchanged (Java may leave a partial change behind).
package topology

import (
	"github.com/kstreams-go/kstreams/internal/serdeapi"
	"reflect"
	"regexp"
	"slices"
	"time"
)

// NodeKind is the kind of a node.
type NodeKind int

const (
	// SourceNode reads records from topics (Java: SourceNode).
	SourceNode NodeKind = iota
	// ProcessorNode runs a processor (Java: ProcessorNode).
	ProcessorNode
	// SinkNode writes records to a topic (Java: SinkNode).
	SinkNode
)

// String returns "source", "processor" or "sink".
func (k NodeKind) String() string {
	switch k {
	case SourceNode:
		return "source"
	case ProcessorNode:
		return "processor"
	case SinkNode:
		return "sink"
	}
	return "unknown"
}

// OffsetReset is a source's auto.offset.reset override. Java: org.apache.kafka.streams.AutoOffsetReset.
type OffsetReset int

const (
	// ResetDefault uses the consumer's auto.offset.reset config (no override).
	ResetDefault OffsetReset = iota
	// ResetEarliest starts from the earliest offset when no offset is committed.
	ResetEarliest
	// ResetLatest starts from the latest offset when no offset is committed.
	ResetLatest
	// ResetNone fails when no offset is committed.
	ResetNone
	// ResetByDuration starts from the first offset whose timestamp is at most the node's
	// OffsetResetDuration before now.
	ResetByDuration
)

// StoreBuilder is the part of processor.StoreBuilder the graph needs; the values held are
// always processor.StoreBuilder.
type StoreBuilder interface {
	// Name returns the store name.
	Name() string
	// LoggingEnabled reports whether the store has a changelog topic.
	LoggingEnabled() bool
}

// Node is one node of the graph. Fields that do not apply to the node's Kind are zero.
type Node struct {
	// Name is the unique node name.
	Name string
	// Kind says which of the groups of fields below apply.
	Kind NodeKind
	// Parents are the parent node names in the order given (Java: predecessors); empty for
	// sources.
	Parents []string
	// Children are the child node names in the order they were added; forwarding visits them
	// in this order (as Java's ProcessorNode.children). A child that named this node twice as
	// its parent is listed twice and so receives each forwarded record twice, as in Java.
	Children []string

	// Source: Topics are the subscribed topics in the order given (nil with a Pattern).
	Topics []string
	// Source: Pattern subscribes to every topic it fully matches (nil with Topics).
	Pattern *regexp.Regexp
	// Source: PatternText is the pattern as the user wrote it, printed by Describe.
	PatternText string
	// Source: OffsetReset is the source's reset policy override.
	OffsetReset OffsetReset
	// Source: OffsetResetDuration is the duration of a ResetByDuration policy.
	OffsetResetDuration time.Duration
	// Source: TimestampExtractor is a processor.TimestampExtractor, or nil to use the
	// configured default.
	TimestampExtractor any
	// Source: KeyDeserializer is a serde.Deserializer[any] (typed deserializers adapted by
	// package processor), or nil to use the configured default.
	KeyDeserializer any
	// Source: ValueDeserializer is a serde.Deserializer[any], or nil for the configured default.
	ValueDeserializer any
	// Source: Global is true for the source of a global store.
	Global bool

	// Processor: Supplier is a processor.ProcessorSupplier[any, any, any, any] (typed and
	// fixed-key suppliers adapted by package processor).
	Supplier any
	// Processor: Stores are the names of the connected state stores, in connection order,
	// without duplicates.
	Stores []string

	// Sink: Topic is the output topic, empty when TopicExtractor is set.
	Topic string
	// Sink: TopicExtractor is a processor.TopicNameExtractor[any, any] (nil with Topic).
	TopicExtractor any
	// Sink: ExtractorText is what Describe prints for a dynamic sink ("extractor class: ...").
	ExtractorText string
	// Sink: KeySerializer is a serde.Serializer[any], or nil for the configured default.
	KeySerializer any
	// Sink: ValueSerializer is a serde.Serializer[any], or nil for the configured default.
	ValueSerializer any
	// Sink: Partitioner is a processor.StreamPartitioner[any, any], or nil for the default.
	Partitioner any
}

// Store is a state store of the topology.
type Store struct {
	// Builder builds the store (a processor.StoreBuilder).
	Builder StoreBuilder
	// Processors are the names of the processors connected to the store, in connection order.
	Processors []string
	// Global is true for a global store (read by every task, updated by its own source).
	Global bool
	// SourceTopic is the source topic that serves as the store's changelog (the topic of a
	// global or read-only store, a source table's topic), raw (not decorated); empty when the
	// store has its own changelog "<application.id>-<store>-changelog" (or none). A non-global
	// store with a SourceTopic never writes a changelog: the engine builds it without
	// change-logging and restores it from SourceTopic.
	SourceTopic string
	// ReprocessOnRestore is true when a global store restores by running its processor on the
	// topic (Java: addGlobalStore / reprocessOnRestore=true), false for addReadOnlyStateStore-like
	// direct restore.
	ReprocessOnRestore bool
	// KeyType and ValueType are the types of the keys and values a DSL store holds (those of
	// the Materialized it was made from; the store itself is untyped); nil for stores added
	// through the Processor API, whose builders are typed. Typed store views check them.
	KeyType, ValueType reflect.Type
}

// Builder is the untyped topology graph. The zero value is not usable; call [New]. It is not
// safe for concurrent use.
type Builder struct {
	// warnings are the suspect constructs recorded while building (AddWarning).
	warnings []Warning
	nodes    []*Node
	byName   map[string]*Node
	stores   map[string]*Store
	storeOr  []string // store names in the order added (stable iteration for the engine)
	// rawTopics are all topics read by non-global sources; globalTopics those of global stores.
	rawTopics    map[string]bool
	globalTopics map[string]bool
	uf           map[string]string // union-find parent links (Java: QuickUnion)
	// internalTopics are the repartition topics (raw names); copartition the source-node
	// groups that must be co-partitioned.
	internalTopics map[string]InternalTopicProperties
	copartition    [][]string
	// copartitionBy names the join node that recorded each copartition group ("" unknown).
	copartitionBy []string
	// readOnly are the processors' store connections known to only read: processor -> stores
	// (MarkStoreReaders).
	readOnly map[string]map[string]bool
}

// New returns an empty Builder.
func New() *Builder {
	return &Builder{
		byName:       map[string]*Node{},
		stores:       map[string]*Store{},
		rawTopics:    map[string]bool{},
		globalTopics: map[string]bool{},
		uf:           map[string]string{},
	}
}

// Nodes returns the nodes in the order they were added (Java: nodeFactories' order). The
// returned nodes must not be modified.
func (b *Builder) Nodes() []*Node { return slices.Clone(b.nodes) }

// Node returns the node named name, or nil.
func (b *Builder) Node(name string) *Node { return b.byName[name] }

// Store returns the store named name (global or not), or nil.
func (b *Builder) Store(name string) *Store { return b.stores[name] }

// Stores returns all stores, global ones included, in the order they were added.
func (b *Builder) Stores() []*Store {
	out := make([]*Store, 0, len(b.storeOr))
	for _, n := range b.storeOr {
		out = append(out, b.stores[n])
	}
	return out
}

// AddSource adds a source node reading topics (in that order) or, when pattern is non-nil,
// every topic pattern fully matches (patternText is the pattern as written by the user,
// printed by Describe). keyDeser, valueDeser and extractor may be nil (configured defaults).
//
// Errors (Java: Topology.addSource): ErrNoTopics, ErrDuplicateName, ErrTopicAlreadyRegistered.
func (b *Builder) AddSource(name string, topics []string, pattern *regexp.Regexp, patternText string,
	reset OffsetReset, extractor, keyDeser, valueDeser any) error {
	if pattern == nil && len(topics) == 0 {
		return newErr(name, ErrNoTopics, "source %s: topics cannot be empty; give at least one topic or a pattern", name)
	}
	if pattern != nil && len(topics) > 0 {
		return newErr(name, ErrNoTopics, "source %s: give either topics or a pattern, not both", name)
	}
	if b.byName[name] != nil {
		return dupName(name)
	}
	if pattern != nil {
		for _, t := range sortedKeys(b.rawTopics, b.globalTopics) {
			if matchFull(pattern, t) {
				return newErr(name, ErrTopicAlreadyRegistered, "source %s: pattern %s will match a topic that has already been registered by another source (%s); "+
					"every topic can be read by one source only", name, patternText, t)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, t := range topics {
			if seen[t] {
				return newErr(name, ErrTopicAlreadyRegistered, "topic %s is given twice to source %s", t, name)
			}
			seen[t] = true
			if err := b.checkTopicFree(name, t); err != nil {
				return err
			}
		}
	}
	n := &Node{Name: name, Kind: SourceNode, Topics: slices.Clone(topics), Pattern: pattern, PatternText: patternText,
		OffsetReset: reset, TimestampExtractor: extractor, KeyDeserializer: keyDeser, ValueDeserializer: valueDeser}
	for _, t := range topics {
		b.rawTopics[t] = true
	}
	b.addNode(n)
	return nil
}

// matchFull reports whether re matches all of s (Java's Matcher.matches()).
func matchFull(re *regexp.Regexp, s string) bool {
	anchored, err := regexp.Compile(`^(?:` + re.String() + `)$`)
	return err == nil && anchored.MatchString(s)
}

func sortedKeys(ms ...map[string]bool) []string {
	var out []string
	for _, m := range ms {
		for k := range m {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// MatchesPattern reports whether topic is read by the pattern source node n (a full match,
// as Java's Pattern.matcher(topic).matches()).
func MatchesPattern(n *Node, topic string) bool {
	return n.Pattern != nil && matchFull(n.Pattern, topic)
}

func (b *Builder) checkTopicFree(node, t string) error {
	if b.rawTopics[t] || b.globalTopics[t] {
		return newErr(node, ErrTopicAlreadyRegistered, "source %s: topic %s has already been registered by another source; "+
			"every topic can be read by one source only: add the topic to that source or share its node", node, t)
	}
	for _, n := range b.nodes {
		if n.Kind == SourceNode && n.Pattern != nil && matchFull(n.Pattern, t) {
			return newErr(node, ErrTopicAlreadyRegistered, "source %s: topic %s matches the pattern %s already registered by source %s", node, t, n.PatternText, n.Name)
		}
	}
	return nil
}

func dupName(name string) error {
	return newErr(name, ErrDuplicateName, "processor %s is already added; node names must be unique", name)
}

func (b *Builder) addNode(n *Node) {
	b.nodes = append(b.nodes, n)
	b.byName[n.Name] = n
	b.uf[n.Name] = n.Name
	for _, p := range n.Parents {
		pn := b.byName[p]
		pn.Children = append(pn.Children, n.Name)
		b.unite(p, n.Name)
	}
}

func (b *Builder) checkParents(kind, name string, parents []string) error {
	if b.byName[name] != nil {
		return dupName(name)
	}
	if len(parents) == 0 {
		return newErr(name, ErrNoParent, "%s %s: predecessorNames cannot be empty; give at least one parent", kind, name)
	}
	for _, p := range parents {
		if p == name {
			return newErr(name, ErrSelfParent, "parent node %s is unknown (self-reference); a node cannot be its own parent", name)
		}
		pn := b.byName[p]
		if pn == nil {
			return newErr(name, ErrUnknownParent, "parent node %s is unknown (for %s %s); add parents before their children", p, kind, name)
		}
		if pn.Kind == SinkNode {
			return newErr(name, ErrSinkAsParent, "sink %s cannot be used a parent (of %s); sinks have no children", p, name)
		}
	}
	return nil
}

// AddProcessor adds a processor node with the given parents (in order). supplier is a
// processor.ProcessorSupplier[any, any, any, any].
//
// Errors (Java: Topology.addProcessor): ErrNilArgument, ErrDuplicateName, ErrNoParent,
// ErrSelfParent, ErrUnknownParent, ErrSinkAsParent.
func (b *Builder) AddProcessor(name string, supplier any, parents ...string) error {
	if serdeapi.IsNil(supplier) {
		return newErr(name, ErrNilArgument, "processor %s: supplier must not be nil", name)
	}
	if err := b.checkParents("processor", name, parents); err != nil {
		return err
	}
	b.addNode(&Node{Name: name, Kind: ProcessorNode, Parents: slices.Clone(parents), Supplier: supplier})
	return nil
}

// AddSink adds a sink node writing to topic or, when topicExtractor is non-nil, to the topic
// it returns per record (extractorText is printed by Describe). Serializers and partitioner may
// be nil (defaults).
//
// Errors (Java: Topology.addSink): ErrNilArgument (neither topic nor extractor),
// ErrDuplicateName, ErrNoParent, ErrSelfParent, ErrUnknownParent, ErrSinkAsParent.
func (b *Builder) AddSink(name, topic string, topicExtractor any, extractorText string,
	keySer, valueSer, partitioner any, parents ...string) error {
	if topic == "" && serdeapi.IsNil(topicExtractor) {
		return newErr(name, ErrNilArgument, "sink %s: a topic or a topic name extractor is needed", name)
	}
	if err := b.checkParents("sink", name, parents); err != nil {
		return err
	}
	n := &Node{Name: name, Kind: SinkNode, Parents: slices.Clone(parents), Topic: topic, KeySerializer: keySer,
		ValueSerializer: valueSer, Partitioner: partitioner}
	if topic == "" {
		n.TopicExtractor, n.ExtractorText = topicExtractor, extractorText
	}
	b.addNode(n)
	return nil
}

// AddStateStore adds a store and connects it to the named processors. Adding the same builder
// again (identical value) is allowed and only connects; a different builder with the same name
// is refused (Java: StoreBuilderWrapper.isCompatibleWith).
//
// Errors (Java: Topology.addStateStore): ErrNilArgument, ErrDuplicateStore, and those of
// ConnectProcessorAndStateStores.
func (b *Builder) AddStateStore(builder StoreBuilder, processors ...string) error {
	if serdeapi.IsNil(builder) {
		return newErr("", ErrNilArgument, "store builder must not be nil")
	}
	name := builder.Name()
	if old := b.stores[name]; old != nil {
		if old.Global {
			return newErr(name, ErrDuplicateStore, "a different global state store has already been added with the name %s", name)
		}
		if !sameValue(old.Builder, builder) {
			return newErr(name, ErrDuplicateStore, "a different state store has already been added with the name %s; "+
				"store names must be unique (add the same builder again to share it)", name)
		}
	}
	if err := b.checkConnect(name, processors, builder); err != nil {
		return err
	}
	if b.stores[name] == nil {
		b.stores[name] = &Store{Builder: builder}
		b.storeOr = append(b.storeOr, name)
	}
	for _, p := range processors {
		b.connect(p, name)
	}
	return nil
}

// ConnectProcessorAndStateStores connects already added stores to an already added processor.
//
// Errors (Java: Topology.connectProcessorAndStateStores): ErrNoStoreNames,
// ErrGlobalStoreConnected, ErrUnknownStore, ErrUnknownProcessor, ErrStoreOnSourceOrSink.
func (b *Builder) ConnectProcessorAndStateStores(processor string, stores ...string) error {
	if len(stores) == 0 {
		return newErr(processor, ErrNoStoreNames, "processor %s: stateStoreNames cannot be empty; give at least one store name", processor)
	}
	for _, s := range stores {
		if err := b.checkConnect(s, []string{processor}, nil); err != nil {
			return err
		}
	}
	for _, s := range stores {
		b.connect(processor, s)
	}
	return nil
}

// checkConnect validates connecting store to processors; pending is the builder about to be
// added under store (nil when the store must already exist).
func (b *Builder) checkConnect(store string, processors []string, pending StoreBuilder) error {
	for _, p := range processors {
		if st := b.stores[store]; st != nil && st.Global {
			return newErr(store, ErrGlobalStoreConnected, "global state store %s can be used by a processor without being connected; "+
				"do not pass it for processor %s", store, p)
		}
		if b.stores[store] == nil && pending == nil {
			return newErr(store, ErrUnknownStore, "state store %s is not added yet; add it with AddStateStore first", store)
		}
		n := b.byName[p]
		if n == nil {
			return newErr(store, ErrUnknownProcessor, "processor %s is not added yet; add the processor before connecting store %s", p, store)
		}
		if n.Kind != ProcessorNode {
			return newErr(store, ErrStoreOnSourceOrSink, "cannot connect state store %s to %s node %s; connect it to a processor", store, n.Kind, p)
		}
	}
	return nil
}

func (b *Builder) connect(processor, store string) {
	st := b.stores[store]
	if len(st.Processors) > 0 {
		b.unite(st.Processors[0], processor)
	}
	if !slices.Contains(st.Processors, processor) {
		st.Processors = append(st.Processors, processor)
	}
	n := b.byName[processor]
	if !slices.Contains(n.Stores, store) {
		n.Stores = append(n.Stores, store)
	}
}

// AddGlobalStore adds a global store with its own source (reading topic, the store's
// changelog) and processor (supplier: a processor.ProcessorSupplier[any, any, any, any] that
// writes the store). reprocessOnRestore: see [Store.ReprocessOnRestore].
//
// Errors (Java: Topology.addGlobalStore): ErrNilArgument, ErrDuplicateName (source or
// processor), ErrDuplicateStore, ErrSameSourceAndProcessorName, ErrTopicAlreadyRegistered,
// ErrNoTopics (empty topic).
//
// A global store never has a changelog of its own (its topic is one): as Java 4.x disables
// logging on the builder, the engine must build global stores without change-logging whatever
// builder.LoggingEnabled() says.
func (b *Builder) AddGlobalStore(builder StoreBuilder, sourceName string, extractor, keyDeser, valueDeser any,
	topic, processorName string, supplier any, reprocessOnRestore bool) error {
	if serdeapi.IsNil(builder) {
		return newErr("", ErrNilArgument, "global store builder must not be nil")
	}
	if serdeapi.IsNil(supplier) {
		return newErr(builder.Name(), ErrNilArgument, "global store %s: processor supplier must not be nil", builder.Name())
	}
	if topic == "" {
		return newErr(builder.Name(), ErrNoTopics, "global store %s: a source topic is needed", builder.Name())
	}
	name := builder.Name()
	switch {
	case b.byName[sourceName] != nil:
		return dupName(sourceName)
	case b.byName[processorName] != nil:
		return dupName(processorName)
	case b.stores[name] != nil && !b.stores[name].Global:
		return newErr(name, ErrDuplicateStore, "a different state store has already been added with the name %s", name)
	case b.stores[name] != nil:
		return newErr(name, ErrDuplicateStore, "a different global state store has already been added with the name %s", name)
	case sourceName == processorName:
		return newErr(name, ErrSameSourceAndProcessorName, "global store %s: source name and processor name must be different (both %s)", name, sourceName)
	}
	if err := b.checkTopicFree(sourceName, topic); err != nil {
		return err
	}
	b.globalTopics[topic] = true
	b.addNode(&Node{Name: sourceName, Kind: SourceNode, Topics: []string{topic}, TimestampExtractor: extractor,
		KeyDeserializer: keyDeser, ValueDeserializer: valueDeser, Global: true})
	b.addNode(&Node{Name: processorName, Kind: ProcessorNode, Parents: []string{sourceName}, Supplier: supplier,
		Stores: []string{name}})
	b.stores[name] = &Store{Builder: builder, Processors: []string{processorName}, Global: true, SourceTopic: topic,
		ReprocessOnRestore: reprocessOnRestore}
	b.storeOr = append(b.storeOr, name)
	return nil
}

// IsGlobalSource reports whether name is the source node of a global store (Java:
// isGlobalSource: a source whose single topic is a global topic).
func (b *Builder) IsGlobalSource(name string) bool {
	n := b.byName[name]
	return n != nil && n.Kind == SourceNode && len(n.Topics) == 1 && b.globalTopics[n.Topics[0]]
}

// root returns the representative of n's node group (Java: QuickUnion.root).
//
// It only reads the union-find links (no path compression), so a built topology can be
// queried (NodeGroups, Describe) from several goroutines at once, e.g. by two application
// instances sharing one Topology or by interactive-query metadata during a rebalance.
// Topologies are small, so the unshortened walk costs nothing that matters.
func (b *Builder) root(n string) string {
	for b.uf[n] != n {
		n = b.uf[n]
	}
	return n
}

func (b *Builder) unite(a, c string) {
	ra, rc := b.root(a), b.root(c)
	if ra != rc {
		b.uf[rc] = ra
	}
}

// NodeGroup is a set of nodes connected through parent links or shared state stores: a
// sub-topology, or the nodes of a global store.
type NodeGroup struct {
	// ID is the group number (Java: the sub-topology id); global store groups are numbered too.
	ID int
	// Nodes are the group's node names in the order they were added.
	Nodes []string
	// Global is true for the group of a global store (it contains a global source).
	Global bool
}

// NodeGroups returns the node groups numbered as Java does (InternalTopologyBuilder.makeNodeGroups):
// walking the nodes in the order they were added, each node whose group has not been seen yet
// opens the next number, so upstream groups come first and global store groups take numbers
// too.
func (b *Builder) NodeGroups() []NodeGroup {
	var groups []NodeGroup
	idx := map[string]int{}
	for _, n := range b.nodes {
		r := b.root(n.Name)
		i, ok := idx[r]
		if !ok {
			i = len(groups)
			idx[r] = i
			groups = append(groups, NodeGroup{ID: i})
		}
		groups[i].Nodes = append(groups[i].Nodes, n.Name)
		if b.IsGlobalSource(n.Name) {
			groups[i].Global = true
		}
	}
	return groups
}

// sameValue reports whether a and b are the same (comparable) value, without panicking on
// incomparable dynamic types.
func sameValue(a, b any) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb || ta == nil || !ta.Comparable() {
		return false
	}
	return a == b
}

// CheckStoresConnected returns an error wrapping ErrUnusedStore for the first (non-global)
// store, in the order stores were added, that no processor is connected to; nil when every
// store is used. The test driver and the runtime call it before running a topology.
func (b *Builder) CheckStoresConnected() error {
	for _, name := range b.storeOr {
		st := b.stores[name]
		if st == nil || st.Global || len(st.Processors) > 0 {
			continue
		}
		return newErr(name, ErrUnusedStore, "state store %s is connected to no processor; connect it with "+
			"AddStateStore(builder, processorNames...) or ConnectProcessorAndStateStores, or remove it", name)
	}
	return nil
}
