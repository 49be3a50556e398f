package jsonschema

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kstreams-go/kstreams/serde"
)

// ErrInvalidSchema: the serde's schema cannot be used: the schema text given to the serde,
// or fetched from the registry, is not a JSON Schema (not JSON, an unknown draft, a $ref that
// resolves nowhere) or is of another schema type; no schema was given and use.latest.version
// is off; or the subject name strategy refused the schema (a record-name strategy for a
// schema without "title"). The serde's configuration has to change; the message says which.
//
// The serde's other failures wrap the sentinels of package serde (serde.ErrCorrupt for data
// not in the wire format, serde.ErrInvalidValue for a document that is not JSON, does not
// decode into the Go type, cannot be encoded or fails its schema: a *ValidationError) or of
// package registry (registry.ErrNotFound, registry.ErrRejected, registry.ErrUnavailable,
// ...), inside a *serde.Error that names the topic, subject and schema id. Java: the
// SerializationException of KafkaJsonSchemaSerializer / KafkaJsonSchemaDeserializer.
var ErrInvalidSchema = errors.New("invalid json schema")

var (
	// errDecode: the body is not JSON, or does not decode into the Go type.
	errDecode = fmt.Errorf("%w: json body does not decode", serde.ErrInvalidValue)
	// errEncode: encoding/json cannot encode the value (a channel, a cyclic value, a
	// failing MarshalJSON).
	errEncode = fmt.Errorf("%w: value does not encode as json", serde.ErrInvalidValue)
)

// FieldError is one failing field of a document. Java counterpart: one of the causing
// exceptions of everit's ValidationException (getPointerToViolation, getKeyword,
// getErrorMessage).
type FieldError struct {
	// Pointer is the JSON pointer (RFC 6901) of the field in the document: "" for the whole
	// document, "/address/zip" for the zip of the address, "/items/2" for the third item. A
	// missing required property and a property additionalProperties forbids are reported at
	// the property's own pointer.
	Pointer string
	// Keyword is the schema keyword that failed: "type", "required", "minimum", "pattern", ...
	Keyword string
	// Message is the validator's reason, e.g. "got string, want integer".
	Message string
}

// ValidationError lists the fields of a document that fail its schema. The *serde.Error of a
// validation failure wraps it (find it with errors.As); it unwraps to serde.ErrInvalidValue.
// Java counterpart: the ValidationException (everit) that KafkaJsonSchemaSerializer and
// KafkaJsonSchemaDeserializer wrap in a SerializationException.
type ValidationError struct {
	// Fields are the failing fields, at least one.
	Fields []FieldError

	schemaID int // the schema checked against; 0 for the serde's own before registration
}

// Error formats as, for example, `json document does not match its schema
// (schema id 3): at "/age": got string, want integer; at "/address/zip": required property
// is missing`.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("json document does not match its schema")
	if e.schemaID != 0 {
		fmt.Fprintf(&b, " (schema id %d)", e.schemaID)
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

// Unwrap returns serde.ErrInvalidValue.
func (e *ValidationError) Unwrap() error { return serde.ErrInvalidValue }
