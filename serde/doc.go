// Package serde holds the serializers and deserializers of kstreams-go: the
// typed Serializer, Deserializer and Serde interfaces, record Headers, and
// byte-for-byte ports of the serdes Apache Kafka ships (package
// org.apache.kafka.common.serialization and the windowed serdes of
// org.apache.kafka.streams.kstream), so that a Go application and a Java
// Kafka Streams application can read each other's topics and changelogs.
//
// # Null
//
// Java null is Go nil. The processing engine holds records untyped (key and
// value of type any, nil meaning null); it never calls a serializer on a nil
// value (it writes nil bytes) and never calls a deserializer on nil bytes (it
// yields nil). Serdes of value types (String, Long, ...) therefore never see
// null; if called directly, their Deserialize maps nil bytes to the zero value
// and their Serialize never returns nil bytes. Serdes of nillable types
// (ByteArray and Bytes of []byte, ListSerde of []T, JSON of pointers, maps and
// slices, Void) map nil to nil bytes and back themselves. Nullable wraps a
// value-type serde into one of *T with true null semantics: a nil pointer is
// nil bytes and the reverse. The time- and session-windowed deserializers
// decode empty input to null as Java's do; they implement NullDecoder so that
// Untyped and Nullable report that as nil.
//
// # Errors
//
// Every failure is a *Error naming the serde, the operation, the topic and
// (for Deserialize) the input length in bytes; it wraps one of the sentinel
// errors (ErrCorrupt, ErrInvalidValue, ...) so errors.Is works, and, for
// nested serdes, the inner serde's *Error. Every Deserialize failure of bytes
// that do not decode matches ErrCorrupt, whatever else it matches.
//
// # Byte layouts
//
// All integers are big-endian two's complement, as java.io.DataOutputStream
// and java.nio.ByteBuffer write them. Each constructor documents its layout
// and its Java counterpart. The conformance vectors in
// conformance/vectors/serde.jsonl are produced by Java Kafka 4.4.0 and
// checked by this package's tests.
//
// All serdes of this package are stateless and safe for concurrent use.
package serde
