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
// This package imports no Kafka client and no store implementation.
package processor
