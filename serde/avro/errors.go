package avro

import (
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/serde"
)

// ErrInvalidSchema: the serde's schema cannot be used: the schema text given to the serde,
// or fetched from the registry, is not a valid Avro schema; no schema was given and
// use.latest.version is off; the subject name strategy refused the schema (a record-name
// strategy for a schema that is not a named type); or, under use.latest.version with
// latest.compatibility.strict, the latest registered schema cannot read data written with
// the serde's own schema. The serde's configuration has to change; the error message says
// which. Java: the SerializationException of KafkaAvroSerializer for these cases.
//
// The serde's other failures wrap the sentinels of package serde (serde.ErrCorrupt for data
// that does not decode, serde.ErrInvalidValue for a value that does not fit the schema) or
// of package registry (registry.ErrNotFound, registry.ErrRejected, registry.ErrUnavailable,
// ...), inside a *serde.Error that names the topic, subject and schema id.
var ErrInvalidSchema = errors.New("invalid avro schema")

var (
	// errDecode: the Avro body does not decode with the writer schema (truncated or
	// corrupt data).
	errDecode = fmt.Errorf("%w: avro body does not decode", serde.ErrCorrupt)
	// errMismatch: the value does not fit the schema (wrong Go type, missing field, unknown
	// enum symbol, value out of range, ...), when encoding or when mapping a decoded record
	// onto a Go type.
	errMismatch = fmt.Errorf("%w: value does not match the avro schema", serde.ErrInvalidValue)
)
