// Package processor is the Processor API of kstreams-go, the Go counterpart of Java's
// org.apache.kafka.streams.processor and org.apache.kafka.streams.processor.api packages
// (Kafka Streams 4.x).
//
// It defines the record ([Record], [FixedKeyRecord]), the processors ([Processor],
// [FixedKeyProcessor]) and the context they run in ([ProcessorContext],
// [FixedKeyProcessorContext]), punctuation ([Punctuator], [PunctuationType], [Cancellable]),
// state stores as seen by processors ([StateStore], [StateStoreContext], [StoreBuilder]),
// timestamp extraction ([TimestampExtractor] and Java's four built-in extractors), and the
// [Topology] builder with its [TopologyDescription].
//
// Null: a Java null key or value is a Go nil. Records travel untyped inside the engine
// (key and value of type any); the typed adapters in this package turn a nil into the zero
// value of a non-nillable type parameter.
//
// Errors are values: every operation that can fail in Java (by throwing) returns an error
// here; sentinel errors are matched with errors.Is and typed errors with errors.As.
//
// # Building a topology
//
// [Topology] mirrors Java's Topology: AddSource / AddSourcePattern, AddProcessor (and
// AddFixedKeyProcessor), AddSink / AddDynamicSink, AddStateStore, ConnectProcessorAndStateStores,
// AddGlobalStore and AddReadOnlyStateStore. Typed arguments (processor suppliers, serdes,
// extractors, partitioners) are carried by generic methods and options such as
// [WithKeyDeserializer]; Java's overloads become options. Errors surface at the call, as Java
// throws at the call, and a failed call leaves the topology unchanged. [Topology.Describe]
// returns a [TopologyDescription] whose String() is byte for byte Java's describe() text.
//
// # The untyped graph (for the engine and the DSL)
//
// Underneath, a Topology is an untyped graph, which the engine, the test driver, the runtime and
// the DSL work on. Its payloads have these dynamic types:
// processor nodes hold a ProcessorSupplier[any, any, any, any] (typed and fixed-key suppliers are
// wrapped by Topology's Add* methods, whose processors
// take a ProcessorContext[any, any] in Init); sources hold serde.Deserializer[any] values and a
// [TimestampExtractor] (nil: the configured defaults); sinks hold serde.Serializer[any] values, a
// TopicNameExtractor[any, any] and a StreamPartitioner[any, any] (nil: defaults); stores hold a
// [StoreBuilder]. In the untyped form nil is null: adapters give typed nodes the zero value for a
// nil key or value, and turn typed nils they emit into nil.
//
// This package imports no Kafka client and no store implementation.
package processor
