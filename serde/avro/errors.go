package avro

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kstreams-go/kstreams/serde"
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
	// ErrDecode: the Avro body does not decode with the writer schema (truncated or corrupt
	// data). It wraps serde.ErrCorrupt.
	ErrDecode = fmt.Errorf("%w: avro body does not decode", serde.ErrCorrupt)
	// ErrSchemaMismatch: the value does not fit the schema (wrong Go type, missing field,
	// unknown enum symbol, value out of range, ...), when encoding or when mapping a decoded
	// record onto a Go type. It wraps serde.ErrInvalidValue.
	ErrSchemaMismatch = fmt.Errorf("%w: value does not match the avro schema", serde.ErrInvalidValue)
	// ErrInvalidSchema: the schema text given to the serde, or fetched from the registry,
	// is not a valid Avro schema.
	ErrInvalidSchema = errors.New("invalid avro schema")
	// ErrNoRecordName: RecordNameStrategy or TopicRecordNameStrategy was asked to name the
	// subject of a schema that is not a named type (Java: SerializationException from the
	// record name strategies for primitive schemas).
	ErrNoRecordName = errors.New("schema has no record name for the subject name strategy")
	// ErrLatestIncompatible: under use.latest.version, the latest registered schema cannot
	// read data written with the serde's own schema (Java: SerializationException from
	// the latest.compatibility.strict check).
	ErrLatestIncompatible = errors.New("latest registered schema is incompatible with the serde's schema")
	// ErrNoSchema: the serializer has no schema to write with: none was given and
	// use.latest.version is off.
	ErrNoSchema = errors.New("no avro schema configured")
)

// Error is the error the Avro serde returns. It names the operation, the topic, and, as
// far as they were known when the failure happened, the registry subject and the schema id.
// Err wraps a sentinel of this package, a registry *registry.Error or a serde sentinel.
// Java counterpart: org.apache.kafka.common.errors.SerializationException from
// KafkaAvroSerializer / KafkaAvroDeserializer, whose messages name the schema id.
type Error struct {
	Serde    string   // serde name, e.g. "Avro<main.Order>"
	Op       serde.Op // serde.OpSerialize or serde.OpDeserialize
	Topic    string
	Subject  string // "" when not known (e.g. deserialization)
	SchemaID int    // 0 when not known
	Len      int    // input length in bytes for OpDeserialize; -1 for OpSerialize
	Err      error
}

// Error formats as, for example, `serde Avro<main.Order>: deserialize 12 bytes from topic
// "orders" (schema id 7): schema registry: get schema by id 7: schema not found (...)`.
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
	if len(ctx) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(ctx, ", "))
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
