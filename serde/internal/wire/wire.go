// Package wire encodes and decodes the framing of Confluent's schema-registry wire format
// shared by the Avro, Protobuf and JSON Schema serdes: the magic byte 0, the schema id as a
// 4-byte big-endian integer, and for Protobuf the message-index array that names which
// message of the schema file the body is (a zig-zag varint count followed by that many
// zig-zag varint indexes, with the single byte 0 standing for the array [0]).
//
// The layout is Confluent's io.confluent.kafka.serializers.AbstractKafkaSchemaSerDe
// (magic byte and id) and io.confluent.kafka.serializers.protobuf.MessageIndexes
// (message indexes, zig-zag varints as org.apache.kafka.common.utils.ByteUtils.writeVarint).
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kstreams-go/kstreams/serde"
)

// MagicByte is the first byte of every framed value.
const MagicByte byte = 0

// HeaderSize is the magic byte plus the 4-byte schema id.
const HeaderSize = 5

// Errors returned by the decoders; callers wrap them in their own sentinels.
var (
	ErrTooShort       = errors.New("shorter than the 5-byte header")
	ErrMagicByte      = errors.New("unknown magic byte")
	ErrMessageIndexes = errors.New("message indexes are absent or malformed")
)

// maxIndexes bounds the count of a message-index array read from data; a schema nests
// messages far less deep than this, and a corrupt count must not allocate gigabytes.
const maxIndexes = 1 << 10

// AppendHeader appends the magic byte and id to buf.
func AppendHeader(buf []byte, id int) []byte {
	buf = append(buf, MagicByte)
	return binary.BigEndian.AppendUint32(buf, uint32(int32(id)))
}

// ParseHeader reads the header of data and returns the schema id and the bytes after it.
// Errors: ErrTooShort, ErrMagicByte (wrapped with the byte found).
func ParseHeader(data []byte) (id int, rest []byte, err error) {
	if len(data) < HeaderSize {
		return 0, nil, ErrTooShort
	}
	if data[0] != MagicByte {
		return 0, nil, fmt.Errorf("%w 0x%02x", ErrMagicByte, data[0])
	}
	return int(int32(binary.BigEndian.Uint32(data[1:HeaderSize]))), data[HeaderSize:], nil
}

// AppendMessageIndexes appends the message-index array of indexes to buf: the single byte 0
// for [0] (the first top-level message, the common case), else the count and each index as
// zig-zag varints. indexes must not be empty.
func AppendMessageIndexes(buf []byte, indexes []int) []byte {
	if len(indexes) == 1 && indexes[0] == 0 {
		return append(buf, 0)
	}
	buf = binary.AppendVarint(buf, int64(len(indexes)))
	for _, i := range indexes {
		buf = binary.AppendVarint(buf, int64(i))
	}
	return buf
}

// ReadMessageIndexes reads a message-index array from the start of data and returns it and
// the number of bytes it took. A count of 0 means [0]. Errors wrap ErrMessageIndexes: a
// varint that does not end, a negative or oversized count, a negative index, or data that
// ends before count indexes.
func ReadMessageIndexes(data []byte) ([]int, int, error) {
	count, n := binary.Varint(data)
	if n <= 0 {
		return nil, 0, fmt.Errorf("%w: no count varint", ErrMessageIndexes)
	}
	if count == 0 {
		return []int{0}, n, nil
	}
	if count < 0 || count > maxIndexes {
		return nil, 0, fmt.Errorf("%w: count %d", ErrMessageIndexes, count)
	}
	out := make([]int, 0, count)
	pos := n
	for range count {
		v, m := binary.Varint(data[pos:])
		if m <= 0 {
			return nil, 0, fmt.Errorf("%w: %d of %d indexes present", ErrMessageIndexes, len(out), count)
		}
		if v < 0 || v > math.MaxInt32 {
			return nil, 0, fmt.Errorf("%w: index %d", ErrMessageIndexes, v)
		}
		out = append(out, int(v))
		pos += m
	}
	return out, pos, nil
}

// Failure is what a schema-registry serde knew about an operation when it failed: the serde's
// name, the operation, the topic, the input length, and, as far as they were known, the
// registry subject, the schema id and (Protobuf) the message's full name. Wrap turns a cause
// into the *serde.Error the serde returns.
type Failure struct {
	Serde    string   // serde name, e.g. "Avro<main.Order>"
	Op       serde.Op // serde.OpSerialize or serde.OpDeserialize
	Topic    string   // topic passed to Serialize or Deserialize
	Len      int      // input length in bytes for OpDeserialize; -1 for OpSerialize
	Subject  string   // "" when not known (e.g. deserialization)
	SchemaID int      // 0 when not known
	Message  string   // full name of the protobuf message, "" when not known
}

// Wrap returns a *serde.Error for f whose Err is cause, preceded in the message by the
// subject, schema id and message that are known, e.g. `serde Avro<main.Order>: deserialize
// 12 bytes from topic "orders": schema id 7: schema registry: get schema by id 7: not found
// (...)`.
func (f *Failure) Wrap(cause error) error {
	var ctx []string
	if f.Subject != "" {
		ctx = append(ctx, fmt.Sprintf("subject %q", f.Subject))
	}
	if f.SchemaID != 0 {
		ctx = append(ctx, fmt.Sprintf("schema id %d", f.SchemaID))
	}
	if f.Message != "" {
		ctx = append(ctx, "message "+f.Message)
	}
	if len(ctx) > 0 {
		cause = &contextError{ctx: strings.Join(ctx, ", "), err: cause}
	}
	return &serde.Error{Serde: f.Serde, Op: f.Op, Topic: f.Topic, Len: f.Len, Err: cause}
}

// contextError prefixes err's message with what the serde knew.
type contextError struct {
	ctx string
	err error
}

func (e *contextError) Error() string { return e.ctx + ": " + e.err.Error() }
func (e *contextError) Unwrap() error { return e.err }
