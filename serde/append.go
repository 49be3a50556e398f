package serde

import (
	"encoding/binary"
	"fmt"

	"github.com/kstreams-go/kstreams/internal/serdeapi"
)

// AppendSerializer is implemented by serializers that can write a value's bytes onto the end
// of a caller's buffer, so that a layer adding its own prefix (the timestamped store value's
// 8-byte timestamp) builds its output in one allocation. AppendSerialize appends exactly the
// bytes Serialize would return for data to dst and returns the extended slice (dst unchanged
// for null), with the same errors as Serialize. Long, String and Untyped of them implement it.
// There is no Java counterpart.
type AppendSerializer[T any] interface {
	AppendSerialize(dst []byte, topic string, headers *Headers, data T) ([]byte, error)
}

// AppendSerialize appends data's 8 big-endian bytes to dst.
func (longSerde) AppendSerialize(dst []byte, _ string, _ *Headers, data int64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(dst, uint64(data)), nil
}

// AppendSerialize appends data's UTF-8 bytes to dst.
func (stringSerde) AppendSerialize(dst []byte, _ string, _ *Headers, data string) ([]byte, error) {
	return append(dst, data...), nil
}

// AppendSerialize appends the bytes Serialize returns for data to dst: nothing for nil, the
// wrapped serde's AppendSerialize when it has one, else a copy of its Serialize result.
func (u *untyped[T]) AppendSerialize(dst []byte, topic string, headers *Headers, data any) ([]byte, error) {
	if data == nil {
		return dst, nil
	}
	v, ok := data.(T)
	if !ok {
		return nil, serErr(Name(u.s), topic, fmt.Errorf("%w: got %T, want %s", ErrWrongType, data, typeName[T]()))
	}
	if u.app != nil {
		return u.app.AppendSerialize(dst, topic, headers, v)
	}
	raw, err := u.s.Serialize(topic, headers, v)
	if err != nil {
		return nil, err
	}
	return append(dst, raw...), nil
}

// DecodesString is serdeapi.StringDecoder: the String serde decodes the bytes alone.
func (stringSerde) DecodesString() bool { return true }

// AppendsInPlace is serdeapi.InPlaceAppender: String appends straight onto the buffer.
func (stringSerde) AppendsInPlace() bool { return true }

// AppendsInPlace is serdeapi.InPlaceAppender: Long appends straight onto the buffer.
func (longSerde) AppendsInPlace() bool { return true }

// DecodesLong is serdeapi.LongDecoder.
func (longSerde) DecodesLong() bool { return true }

// DecodesLong is serdeapi.LongDecoder: true for Untyped of the Long serde.
func (u *untyped[T]) DecodesLong() bool { return serdeapi.IsLong(u.s) }

// DecodesString is serdeapi.StringDecoder: true for Untyped of the String serde.
func (u *untyped[T]) DecodesString() bool { return serdeapi.IsString(u.s) }

// AppendsInPlace is serdeapi.InPlaceAppender: true for Untyped of the Long or String serde
// (Untyped of another serde copies a Serialize result).
func (u *untyped[T]) AppendsInPlace() bool { return serdeapi.AppendsInPlace(u.s) }

// IgnoresHeaders is serdeapi.HeaderFree: the primitive serdes never look at the headers.
func (stringSerde) IgnoresHeaders() bool  { return true }
func (longSerde) IgnoresHeaders() bool    { return true }
func (integerSerde) IgnoresHeaders() bool { return true }
func (shortSerde) IgnoresHeaders() bool   { return true }
func (doubleSerde) IgnoresHeaders() bool  { return true }
func (floatSerde) IgnoresHeaders() bool   { return true }
func (booleanSerde) IgnoresHeaders() bool { return true }
func (bytesSerde) IgnoresHeaders() bool   { return true }
func (voidSerde) IgnoresHeaders() bool    { return true }

// IgnoresHeaders is serdeapi.HeaderFree: true for Untyped of a serde that ignores them.
func (u *untyped[T]) IgnoresHeaders() bool { return serdeapi.IgnoresHeaders(u.s) }
