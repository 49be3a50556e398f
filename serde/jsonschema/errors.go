package jsonschema

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
	// ErrDecode: the body is not JSON, or does not decode into the Go type. It wraps
	// serde.ErrInvalidValue.
	ErrDecode = fmt.Errorf("%w: json body does not decode", serde.ErrInvalidValue)
	// ErrEncode: encoding/json cannot encode the value (a channel, a cyclic value, a
	// failing MarshalJSON). It wraps serde.ErrInvalidValue.
	ErrEncode = fmt.Errorf("%w: value does not encode as json", serde.ErrInvalidValue)
	// ErrValidation: the document does not satisfy the schema; the error is a
	// *ValidationError naming each failing field. It wraps serde.ErrInvalidValue.
	ErrValidation = fmt.Errorf("%w: json document does not match its schema", serde.ErrInvalidValue)
	// ErrInvalidSchema: the schema text given to the serde, or fetched from the registry,
	// is not a JSON Schema (not JSON, an unknown draft, a $ref that resolves nowhere).
	ErrInvalidSchema = errors.New("invalid json schema")
	// ErrNoRecordName: RecordNameStrategy or TopicRecordNameStrategy was asked to name the
	// subject of a schema without a "title".
	ErrNoRecordName = srprops.ErrNoRecordName
	// ErrNoSchema: the serializer has no schema to write with: none was given and
	// use.latest.version is off.
	ErrNoSchema = errors.New("no json schema configured")
)

// FieldError is one failing field of a document. Pointer is the JSON pointer (RFC 6901) of
// the field in the document ("" for the whole document, "/address/zip" for the zip of the
// address, "/items/2" for the third item); a missing required property and a property
// additionalProperties forbids are reported at the property's own pointer. Keyword is the
// schema keyword that failed ("type", "required", "minimum", "pattern", ...), Message the
// validator's reason.
type FieldError struct {
	Pointer string
	Keyword string
	Message string
}

// ValidationError lists the fields of a document that fail its schema. It is what Err of
// an *Error holds on a validation failure (errors.As works through *Error); it unwraps to
// ErrValidation. SchemaID is the schema the document was checked against. Java
// counterpart: the ValidationException (everit) that KafkaJsonSchemaSerializer and
// KafkaJsonSchemaDeserializer wrap in a SerializationException.
type ValidationError struct {
	SchemaID int
	Fields   []FieldError
}

// Error formats as, for example, `json document does not match its schema (schema id 3):
// at "/age": got string, want integer; at "/address/zip": required property is missing`.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("json document does not match its schema")
	if e.SchemaID != 0 {
		fmt.Fprintf(&b, " (schema id %d)", e.SchemaID)
	}
	for i, f := range e.Fields {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "at %q: %s", f.Pointer, f.Message)
	}
	return b.String()
}

// Unwrap returns ErrValidation.
func (e *ValidationError) Unwrap() error { return ErrValidation }

// Error is the error the JSON Schema serde returns. It names the operation, the topic, and,
// as far as they were known when the failure happened, the registry subject and the schema
// id. Err wraps a sentinel of this package, a *ValidationError, or a registry
// *registry.Error. Java counterpart: org.apache.kafka.common.errors.SerializationException
// from KafkaJsonSchemaSerializer / KafkaJsonSchemaDeserializer.
type Error struct {
	Serde    string   // serde name, e.g. "JSONSchema<main.Order>"
	Op       serde.Op // serde.OpSerialize or serde.OpDeserialize
	Topic    string
	Subject  string // "" when not known (e.g. deserialization)
	SchemaID int    // 0 when not known
	Len      int    // input length in bytes for OpDeserialize; -1 for OpSerialize
	Err      error
}

// Error formats as, for example, `serde JSONSchema<main.Order>: serialize for topic
// "orders" (subject "orders-value", schema id 3): json document does not match its schema
// (schema id 3): at "/qty": minimum: got -1, want 1`.
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
