package protobuf

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/serde/internal/srprops"
)

// Sentinel errors wrapped by *Error; test for them with errors.Is. Registry failures are
// wrapped as they come from package registry (registry.ErrSchemaNotFound,
// registry.ErrIncompatible, registry.ErrUnavailable, ...).
var (
	// ErrUnknownMagicByte: the first byte is not 0, so the data is not in the Confluent wire
	// format (Java: SerializationException "Unknown magic byte!"). It wraps serde.ErrCorrupt.
	ErrUnknownMagicByte = fmt.Errorf("%w: unknown magic byte", serde.ErrCorrupt)
	// ErrTooShort: fewer than the 5 header bytes (magic byte and schema id). It wraps
	// serde.ErrCorrupt.
	ErrTooShort = fmt.Errorf("%w: shorter than the 5-byte header", serde.ErrCorrupt)
	// ErrMessageIndexes: the message-index array after the header is malformed, or names
	// no message of the writer schema. It wraps serde.ErrCorrupt.
	ErrMessageIndexes = fmt.Errorf("%w: bad protobuf message indexes", serde.ErrCorrupt)
	// ErrDecode: the body does not decode as the message the indexes name (truncated or
	// corrupt data). It wraps serde.ErrCorrupt.
	ErrDecode = fmt.Errorf("%w: protobuf body does not decode", serde.ErrCorrupt)
	// ErrSchemaMismatch: the message to serialize is not a message of the schema the
	// serializer writes with (its full name is not declared there). It wraps
	// serde.ErrInvalidValue.
	ErrSchemaMismatch = fmt.Errorf("%w: message is not in the protobuf schema", serde.ErrInvalidValue)
	// ErrInvalidSchema: schema text given to the serde, or fetched from the registry, does
	// not compile (the message names the line and column), or a descriptor cannot be
	// written as .proto text.
	ErrInvalidSchema = errors.New("invalid protobuf schema")
	// ErrNoRecordName: RecordNameStrategy or TopicRecordNameStrategy was asked to name the
	// subject without a message name.
	ErrNoRecordName = srprops.ErrNoRecordName
	// ErrNoSchema: the dynamic serializer has no schema to write with: none was given and
	// use.latest.version is off.
	ErrNoSchema = errors.New("no protobuf schema configured")
)

// Error is the error the Protobuf serde returns. It names the operation, the topic, and,
// as far as they were known when the failure happened, the registry subject, the schema id
// and the message. Err wraps a sentinel of this package, a registry *registry.Error or a
// serde sentinel. Java counterpart: org.apache.kafka.common.errors.SerializationException
// from KafkaProtobufSerializer / KafkaProtobufDeserializer.
type Error struct {
	Serde    string   // serde name, e.g. "Protobuf<*orderpb.Order>"
	Op       serde.Op // serde.OpSerialize or serde.OpDeserialize
	Topic    string
	Subject  string // "" when not known (e.g. deserialization)
	SchemaID int    // 0 when not known
	Message  string // full name of the protobuf message, "" when not known
	Len      int    // input length in bytes for OpDeserialize; -1 for OpSerialize
	Err      error
}

// Error formats as, for example, `serde Protobuf: deserialize 12 bytes from topic "orders"
// (schema id 7, message shop.Order): protobuf body does not decode: ...`.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "serde %s: ", e.Serde)
	if e.Op == serde.OpDeserialize {
		fmt.Fprintf(&b, "deserialize %d bytes from topic %q", e.Len, e.Topic)
	} else {
		fmt.Fprintf(&b, "serialize for topic %q", e.Topic)
	}
	var ctx []string
	if e.Subject != "" {
		ctx = append(ctx, fmt.Sprintf("subject %q", e.Subject))
	}
	if e.SchemaID != 0 {
		ctx = append(ctx, fmt.Sprintf("schema id %d", e.SchemaID))
	}
	if e.Message != "" {
		ctx = append(ctx, "message "+e.Message)
	}
	if len(ctx) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(ctx, ", "))
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
