package protobuf

import (
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/serde"
)

// ErrInvalidSchema: the serde's schema cannot be used: schema text given to the serde, or
// fetched from the registry, does not compile (the message names the line and column) or is
// of another schema type; a descriptor cannot be written as .proto text (proto2 groups,
// editions); a dynamic serializer has no schema (none was given and use.latest.version is
// off); or the subject name strategy refused the message. The serde's configuration has to
// change; the message says which.
//
// The serde's other failures wrap the sentinels of package serde (serde.ErrCorrupt for data
// that does not decode: a short header, another magic byte, bad message indexes, a body that
// is not the message; serde.ErrInvalidValue for a message the schema does not declare) or of
// package registry (registry.ErrNotFound, registry.ErrRejected, registry.ErrUnavailable,
// ...), inside a *serde.Error that names the topic, subject, schema id and message. Java:
// the SerializationException of KafkaProtobufSerializer / KafkaProtobufDeserializer.
var ErrInvalidSchema = errors.New("invalid protobuf schema")

var (
	// errIndexes: the message-index array after the header is malformed, or names no
	// message of the writer schema.
	errIndexes = fmt.Errorf("%w: bad protobuf message indexes", serde.ErrCorrupt)
	// errDecode: the body does not decode as the message the indexes name (truncated or
	// corrupt data).
	errDecode = fmt.Errorf("%w: protobuf body does not decode", serde.ErrCorrupt)
	// errMismatch: the message to serialize is not a message of the schema the serializer
	// writes with (its full name is not declared there).
	errMismatch = fmt.Errorf("%w: message is not in the protobuf schema", serde.ErrInvalidValue)
)
