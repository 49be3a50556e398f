package processor

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"time"

	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/serde"
)

// Topology is a graph of sources, processors and sinks with their state stores: the logic of
// a Kafka Streams application, built with the Processor API (the Add* methods) or by the DSL
// (kstream.StreamsBuilder.Build). It is the counterpart of Java's org.apache.kafka.streams.Topology.
//
// Errors surface at once, as Java throws at once: every Add*/Connect* method validates its
// arguments and returns a [*TopologyError] (matching [ErrInvalidTopology]) that names the node
// or store and says what is wrong, without changing the topology (exception: a supplier's own
// stores, see AddProcessor). Nodes must be added after their parents.
//
// Generic methods (Go 1.27) carry the key and value types of typed processors, serdes,
// extractors and partitioners; the graph itself is untyped, and a record whose key or value has
// another type than a typed node expects fails with [ErrRecordTypeMismatch] at run time (Java:
// ClassCastException).
//
// A Topology is not safe for concurrent use while being built.
type Topology struct {
	b *topology.Builder
}

// NewTopology returns an empty topology. Java: new Topology().
func NewTopology() *Topology { return &Topology{b: topology.New()} }

func init() {
	topology.Of = func(t any) *topology.Builder { return t.(*Topology).b }
	topology.Wrap = func(b *topology.Builder) any { return &Topology{b: b} }
	topology.MakeError = func(name, reason string, kind error) error {
		return &TopologyError{Name: name, Reason: reason, cause: kind}
	}
}

// Errors of topology construction and of store lookups, matched with errors.Is.
var (
	// ErrInvalidTopology is wrapped by every error of topology construction: the Add* and
	// Connect* methods of Topology, kstream.StreamsBuilder.Build, and a topology that cannot
	// run (a state store connected to no processor, refused by testdriver.New and by a task
	// of kstreams: Java accepts such a topology and ignores the store, but an unconnected
	// store is almost always a forgotten connection). The error is a [*TopologyError] that
	// names the node or store and says what to do. Java: TopologyException.
	ErrInvalidTopology = topology.ErrInvalidTopology
	// ErrUnknownStore: no state store of the name is reachable: connecting a store that is
	// not added (also a *TopologyError, Java: "StateStore X is not added yet."), a processor
	// asking for a store no node of its task has or one that is not connected to it
	// (ProcessorContext.StateStore, Java: StreamsException "Processor X has no access to
	// StateStore Y"), an interactive query or a test driver asking for a store the topology
	// lacks. The error wrapping it names the store; unlike [ErrWrongStoreType] it says the
	// store is missing rather than of another type. A retry does not fix it.
	ErrUnknownStore = topology.ErrUnknownStore
)

// topoErr returns a *TopologyError about the node or store name.
func topoErr(name string, cause error, format string, args ...any) error {
	return topology.NewError(name, cause, format, args...)
}

// TopologyError is the error of a topology that cannot be built or run: it names the node or
// store and says what is wrong. Every error of topology construction is one (errors.As with a
// **TopologyError): the Add* and Connect* methods of Topology, kstream.StreamsBuilder.Build,
// and a topology refused where it is run (a store connected to no processor).
//
// With errors.Is, a TopologyError always matches [ErrInvalidTopology] (its Is method), and
// matches [ErrUnknownStore] when a store to connect is not added; errors.As finds the
// *regexp/syntax.Error of a source pattern that does not compile; kstream's doc names the
// sentinels of its own that some DSL errors match too (kstream.ErrInvalidWindows). Nothing else
// about the cause is part of the API. Java: TopologyException.
type TopologyError struct {
	// Name is the node or state store the failing call adds or connects (the one Reason
	// names first, e.g. the processor of a duplicate name, the store of a failed connection);
	// empty when the call got no name (a nil store builder, a configuration value).
	Name string
	// Reason says what is wrong, naming the node, topic or store, and what to do, modelled on
	// Java's message (e.g. "Processor X is already added.", "Parent node X is unknown.",
	// "Topic X has already been registered by another source.").
	Reason string
	// cause is what Unwrap returns (nil for none): ErrUnknownStore, a pattern's syntax error,
	// a DSL sentinel, or a sentinel of internal/topology naming the check that failed, which
	// the library's own tests match.
	cause error
}

// Error returns "invalid topology: " followed by Reason (Java's TopologyException message
// starts "Invalid topology: ").
func (e *TopologyError) Error() string { return "invalid topology: " + e.Reason }

// Is reports whether target is [ErrInvalidTopology], which every TopologyError matches;
// errors.Is goes on to Unwrap's cause for other targets.
func (e *TopologyError) Is(target error) bool { return target == ErrInvalidTopology }

// Unwrap returns the cause: [ErrUnknownStore] or another error that says which check failed
// (see TopologyError for those that are part of the API), or nil when there is none.
// ErrInvalidTopology is matched by Is, not returned here.
func (e *TopologyError) Unwrap() error { return e.cause }

// AutoOffsetReset is a source's override of the consumer's auto.offset.reset: where to start
// reading a partition that has no committed offset. The zero value keeps the configured policy
// (auto.offset.reset). Build one with [OffsetResetEarliest], [OffsetResetLatest],
// [OffsetResetNone] or [OffsetResetByDuration]. Java: org.apache.kafka.streams.AutoOffsetReset
// (KIP-1106).
type AutoOffsetReset struct {
	r topology.OffsetReset
	d time.Duration
}

// OffsetResetEarliest starts from the earliest offset. Java: AutoOffsetReset.earliest().
func OffsetResetEarliest() AutoOffsetReset { return AutoOffsetReset{r: topology.ResetEarliest} }

// OffsetResetLatest starts from the end of the partition. Java: AutoOffsetReset.latest().
func OffsetResetLatest() AutoOffsetReset { return AutoOffsetReset{r: topology.ResetLatest} }

// OffsetResetNone fails when there is no committed offset. Java: AutoOffsetReset.none().
func OffsetResetNone() AutoOffsetReset { return AutoOffsetReset{r: topology.ResetNone} }

// OffsetResetByDuration starts from the first offset whose timestamp is at most d before now
// (d is truncated to ms; AddSource refuses a negative d with a [*TopologyError]).
// Java: AutoOffsetReset.byDuration(Duration).
func OffsetResetByDuration(d time.Duration) AutoOffsetReset {
	return AutoOffsetReset{r: topology.ResetByDuration, d: d}
}

// String returns "default", "earliest", "latest", "none" or "by_duration:<ms>" (Java's
// auto.offset.reset spelling).
func (r AutoOffsetReset) String() string {
	switch r.r {
	case topology.ResetEarliest:
		return "earliest"
	case topology.ResetLatest:
		return "latest"
	case topology.ResetNone:
		return "none"
	case topology.ResetByDuration:
		return "by_duration:" + strconv.FormatInt(r.d.Milliseconds(), 10)
	}
	return "default"
}

// SourceOption sets an optional parameter of a source (the extra arguments of Java's
// addSource overloads).
type SourceOption func(*sourceOptions)

type sourceOptions struct {
	extractor  TimestampExtractor
	reset      AutoOffsetReset
	keyDeser   serde.Deserializer[any]
	valueDeser serde.Deserializer[any]
}

// WithTimestampExtractor sets the source's timestamp extractor (default: the
// default.timestamp.extractor config, [FailOnInvalidTimestamp]).
func WithTimestampExtractor(e TimestampExtractor) SourceOption {
	return func(o *sourceOptions) { o.extractor = e }
}

// WithOffsetReset sets the source's offset reset policy (default: the zero AutoOffsetReset,
// the auto.offset.reset config).
func WithOffsetReset(r AutoOffsetReset) SourceOption {
	return func(o *sourceOptions) { o.reset = r }
}

// WithKeyDeserializer sets the source's key deserializer (default: default.key.serde).
func WithKeyDeserializer[K any](d serde.Deserializer[K]) SourceOption {
	return func(o *sourceOptions) { o.keyDeser = adaptDeserializer(d) }
}

// WithValueDeserializer sets the source's value deserializer (default: default.value.serde).
func WithValueDeserializer[V any](d serde.Deserializer[V]) SourceOption {
	return func(o *sourceOptions) { o.valueDeser = adaptDeserializer(d) }
}

func (r AutoOffsetReset) check(source string) error {
	if r.r == topology.ResetByDuration && r.d < 0 {
		return topoErr(source, nil, "source %s: the offset reset duration %v is negative; it must be zero or more", source, r.d)
	}
	return nil
}

func applySource(opts []SourceOption) sourceOptions {
	var o sourceOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// AddSource adds a source node named name that reads topics (at least one; each topic can be
// read by one source only) and forwards every record to its children. Options set the
// deserializers, timestamp extractor and offset reset. Java: Topology.addSource(...,
// String... topics).
//
// Errors: a [*TopologyError] when topics is empty, the name is taken, a topic is read by another
// source (or matched by its pattern) or the offset reset duration is negative.
func (t *Topology) AddSource(name string, topics []string, opts ...SourceOption) error {
	o := applySource(opts)
	if err := o.reset.check(name); err != nil {
		return err
	}
	if err := t.b.AddSource(name, topics, nil, "", o.reset.r, nilIfNil(o.extractor), nilIfNil(o.keyDeser), nilIfNil(o.valueDeser)); err != nil {
		return err
	}
	t.b.Node(name).OffsetResetDuration = o.reset.d
	return nil
}

// AddSourcePattern adds a source node reading every topic whose whole name matches pattern
// (Go RE2 syntax, implicitly anchored at both ends as Java's Matcher.matches()); Describe
// prints the pattern text. Java: Topology.addSource(..., Pattern topicPattern).
//
// Errors: a [*TopologyError] when the pattern does not compile (it unwraps to the
// *regexp/syntax.Error; Java: PatternSyntaxException), the name is taken, the pattern matches
// a topic another source reads or the offset reset duration is negative.
func (t *Topology) AddSourcePattern(name string, pattern string, opts ...SourceOption) error {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return topoErr(name, err, "source %s: invalid topic pattern: %v", name, err)
	}
	o := applySource(opts)
	if err := o.reset.check(name); err != nil {
		return err
	}
	if err := t.b.AddSource(name, nil, re, pattern, o.reset.r, nilIfNil(o.extractor), nilIfNil(o.keyDeser), nilIfNil(o.valueDeser)); err != nil {
		return err
	}
	t.b.Node(name).OffsetResetDuration = o.reset.d
	return nil
}

// AddProcessor adds a processor node named name, child of parents (in order; at least one,
// all added before). supplier must return a new processor on every Get (it is called twice
// here to check that, as Java does). If supplier implements [ConnectedStoreProvider], its
// stores are added and connected to the node after the node is added (an error there leaves
// the node in place, as in Java). Java: Topology.addProcessor(name, supplier, parentNames...).
//
// Errors: a [*TopologyError] when the supplier is nil, returns nil or the same instance twice
// (Java: the IllegalArgumentException of ApiUtils.checkSupplier), the name is taken, parents is
// empty, names the node itself, a node not added or a sink; and those of AddStateStore.
func (t *Topology) AddProcessor[KIn, VIn, KOut, VOut any](name string, supplier ProcessorSupplier[KIn, VIn, KOut, VOut], parents ...string) error {
	if untypedValue(supplier) == nil {
		return topoErr(name, topology.ErrNilArgument, "processor %s: supplier must not be nil", name)
	}
	if err := checkSupplier(name, func() any { return supplier.Get() }); err != nil {
		return err
	}
	return t.addUntypedProcessor(name, untypedProcessorSupplier(name, supplier), supplier, parents)
}

// AddFixedKeyProcessor adds a node running a [FixedKeyProcessor] (it cannot change keys); as
// AddProcessor otherwise. Java: Topology.addProcessor with a FixedKeyProcessorSupplier
// (internal in Java; the DSL's processValues uses it).
func (t *Topology) AddFixedKeyProcessor[KIn, VIn, VOut any](name string, supplier FixedKeyProcessorSupplier[KIn, VIn, VOut], parents ...string) error {
	if untypedValue(supplier) == nil {
		return topoErr(name, topology.ErrNilArgument, "processor %s: supplier must not be nil", name)
	}
	if err := checkSupplier(name, func() any { return supplier.Get() }); err != nil {
		return err
	}
	return t.addUntypedProcessor(name, untypedFixedKeyProcessorSupplier(name, supplier), supplier, parents)
}

func (t *Topology) addUntypedProcessor(name string, u ProcessorSupplier[any, any, any, any], orig any, parents []string) error {
	if err := t.b.AddProcessor(name, u, parents...); err != nil {
		return err
	}
	if r, ok := orig.(ReadOnlyStoreProvider); ok {
		t.b.MarkStoreReaders(name, r.ReadOnlyStores()...)
	}
	if c, ok := orig.(ConnectedStoreProvider); ok {
		for _, sb := range c.Stores() {
			if err := t.AddStateStore(sb, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSupplier calls get twice and fails when it returns the same instance (or nil), as
// Java's ApiUtils.checkSupplier.
func checkSupplier(name string, get func() any) error {
	a, b := get(), get()
	if untypedValue(a) == nil || untypedValue(b) == nil {
		return topoErr(name, topology.ErrNilArgument, "processor %s: supplier returned nil", name)
	}
	if ra, rb := reflect.ValueOf(a), reflect.ValueOf(b); ra.Kind() == reflect.Pointer && rb.Kind() == reflect.Pointer &&
		ra.Type() == rb.Type() && ra.Pointer() == rb.Pointer() && ra.Type().Elem().Size() > 0 {
		return topoErr(name, nil, "processor %s: the supplier returned the same instance twice; Get must return a new processor on every call", name)
	}
	return nil
}

// SinkOption sets an optional parameter of a sink (the extra arguments of Java's addSink
// overloads).
type SinkOption func(*sinkOptions)

type sinkOptions struct {
	keySer, valueSer serde.Serializer[any]
	partitioner      StreamPartitioner[any, any]
}

// WithKeySerializer sets the sink's key serializer (default: default.key.serde).
func WithKeySerializer[K any](s serde.Serializer[K]) SinkOption {
	return func(o *sinkOptions) { o.keySer = adaptSerializer(s) }
}

// WithValueSerializer sets the sink's value serializer (default: default.value.serde).
func WithValueSerializer[V any](s serde.Serializer[V]) SinkOption {
	return func(o *sinkOptions) { o.valueSer = adaptSerializer(s) }
}

// WithStreamPartitioner sets the sink's partitioner (default: murmur2 of the serialized key,
// as Java's producer).
func WithStreamPartitioner[K, V any](p StreamPartitioner[K, V]) SinkOption {
	return func(o *sinkOptions) { o.partitioner = adaptStreamPartitioner(p) }
}

func applySink(opts []SinkOption) sinkOptions {
	var o sinkOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// AddSink adds a sink node named name writing every record it receives from parents to topic.
// Java: Topology.addSink(name, topic, [serializers], [partitioner], parentNames...).
//
// Errors: a [*TopologyError] when topic is empty, the name is taken, parents is empty, names
// the node itself, a node not added or a sink.
func (t *Topology) AddSink(name, topic string, parents []string, opts ...SinkOption) error {
	if topic == "" {
		return topoErr(name, topology.ErrNilArgument, "sink %s: topic must not be empty", name)
	}
	o := applySink(opts)
	return t.b.AddSink(name, topic, nil, "", nilIfNil(o.keySer), nilIfNil(o.valueSer), nilIfNil(o.partitioner), parents...)
}

// AddDynamicSink adds a sink node that writes each record to the topic extractor returns for
// it (the topics must exist). Describe prints the extractor as "extractor class: X" where X
// is its String() if it implements fmt.Stringer, else its Go type (Java prints toString()).
// Java: Topology.addSink(name, TopicNameExtractor, ...).
//
// Errors: a [*TopologyError] when extractor is nil, and those of AddSink.
func (t *Topology) AddDynamicSink[K, V any](name string, extractor TopicNameExtractor[K, V], parents []string, opts ...SinkOption) error {
	if untypedValue(extractor) == nil {
		return topoErr(name, topology.ErrNilArgument, "sink %s: topic name extractor must not be nil", name)
	}
	o := applySink(opts)
	return t.b.AddSink(name, "", adaptTopicNameExtractor(extractor), describeValue(extractor),
		nilIfNil(o.keySer), nilIfNil(o.valueSer), nilIfNil(o.partitioner), parents...)
}

func describeValue(v any) string {
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", v)
}

// AddStateStore adds the store builder's store and connects it to the named processors (which
// must be added already; more can be connected later with ConnectProcessorAndStateStores).
// Adding the same builder again only connects it. Java: Topology.addStateStore.
//
// Errors: a [*TopologyError] when builder is nil, another store has the name, the store is
// global, or a processor name is not added or names a source or sink.
func (t *Topology) AddStateStore(builder StoreBuilder, processorNames ...string) error {
	if untypedValue(builder) == nil {
		return t.b.AddStateStore(nil, processorNames...)
	}
	return t.b.AddStateStore(builder, processorNames...)
}

// ConnectProcessorAndStateStores connects added stores to an added processor, which can then
// get them from its context. Java: Topology.connectProcessorAndStateStores.
//
// Errors: a [*TopologyError] when storeNames is empty, a store is global (Java: "Global
// StateStore X can be used by a Processor without being specified") or the processor is not
// added or is a source or sink; one that also wraps [ErrUnknownStore] when a store is not added.
func (t *Topology) ConnectProcessorAndStateStores(processorName string, storeNames ...string) error {
	return t.b.ConnectProcessorAndStateStores(processorName, storeNames...)
}

// AddGlobalStore adds a global store: a source named sourceName reads topic (the store's
// changelog) with the given deserializers, and a processor
// named processorName (from supplier) writes the records into the store; every task can read
// the store without connecting it. The store is never change-logged (Java 4.x disables logging
// on the builder; here the engine ignores builder.LoggingEnabled() for global stores). On restore the processor is run on the topic (Java's
// reprocessOnRestore behaviour of addGlobalStore). Options set the timestamp extractor (the
// offset reset of a global source is not configurable, as in Java). Java:
// Topology.addGlobalStore(storeBuilder, sourceName, [timestampExtractor], keyDeserializer,
// valueDeserializer, topic, processorName, stateUpdateSupplier).
//
// Errors: a [*TopologyError] when builder or supplier is nil, the supplier returns the same
// instance twice, a name is taken, another store has the name, sourceName equals
// processorName, topic is empty or read by another source.
func (t *Topology) AddGlobalStore[KIn, VIn, KOut, VOut any](builder StoreBuilder, sourceName string,
	keyDeserializer serde.Deserializer[KIn], valueDeserializer serde.Deserializer[VIn], topic, processorName string,
	supplier ProcessorSupplier[KIn, VIn, KOut, VOut], opts ...SourceOption) error {
	if untypedValue(supplier) == nil {
		return topoErr(processorName, topology.ErrNilArgument, "global store processor %s: supplier must not be nil", processorName)
	}
	if err := checkSupplier(processorName, func() any { return supplier.Get() }); err != nil {
		return err
	}
	o := applySource(opts)
	var sb topology.StoreBuilder
	if untypedValue(builder) != nil {
		sb = builder
	}
	return t.b.AddGlobalStore(sb, sourceName, nilIfNil(o.extractor), nilIfNil(adaptDeserializer(keyDeserializer)),
		nilIfNil(adaptDeserializer(valueDeserializer)), topic, processorName, untypedProcessorSupplier(processorName, supplier), true)
}

// Describe returns the description of the topology: its sub-topologies (numbered as Java
// numbers them) and global stores. Java: Topology.describe().
func (t *Topology) Describe() *TopologyDescription {
	return newDescription(t.b.Describe())
}

// String returns Describe().String().
func (t *Topology) String() string { return t.Describe().String() }

// nilIfNil turns typed nils (nil interface values of a concrete interface type) into untyped
// nil so that the graph's any fields are nil exactly when nothing was given.
func nilIfNil(v any) any {
	if untypedValue(v) == nil {
		return nil
	}
	return v
}

// AddReadOnlyStateStore adds a state store that is filled only from topic: a source named
// sourceName reads topic (from the earliest offset), and a processor named processorName
// (from supplier) writes the records into the store, which is connected to it. The topic is the
// store's changelog (no "-changelog" topic is created; the store is never change-logged). Other
// processors can be connected to the store to read it. Options set the timestamp extractor.
// Java: Topology.addReadOnlyStateStore.
//
// Errors: a [*TopologyError] when builder or supplier is nil, the supplier returns the same
// instance twice, topic is empty or read by another source, a name is taken, sourceName equals
// processorName or another store has the name. Nothing is added on error.
func (t *Topology) AddReadOnlyStateStore[KIn, VIn, KOut, VOut any](builder StoreBuilder, sourceName string,
	keyDeserializer serde.Deserializer[KIn], valueDeserializer serde.Deserializer[VIn], topic, processorName string,
	supplier ProcessorSupplier[KIn, VIn, KOut, VOut], opts ...SourceOption) error {
	if untypedValue(supplier) == nil {
		return topoErr(processorName, topology.ErrNilArgument, "read-only store processor %s: supplier must not be nil", processorName)
	}
	if err := checkSupplier(processorName, func() any { return supplier.Get() }); err != nil {
		return err
	}
	o := applySource(opts)
	var sb topology.StoreBuilder
	if untypedValue(builder) != nil {
		sb = builder
	}
	return t.b.AddReadOnlyStore(sb, sourceName, nilIfNil(o.extractor), nilIfNil(adaptDeserializer(keyDeserializer)),
		nilIfNil(adaptDeserializer(valueDeserializer)), topic, processorName, untypedProcessorSupplier(processorName, supplier))
}
