package serde

import (
	"encoding/binary"
	"fmt"
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
	if a, ok := u.s.(AppendSerializer[T]); ok {
		return a.AppendSerialize(dst, topic, headers, v)
	}
	raw, err := u.s.Serialize(topic, headers, v)
	if err != nil {
		return nil, err
	}
	return append(dst, raw...), nil
}

// IsString reports whether s is the String serde or Untyped of it: a deserializer whose result
// depends on the bytes alone (not on topic or headers), so equal bytes give equal strings. The
// processing engine uses it to decode a record whose key and value bytes are equal once. There
// is no Java counterpart.
func IsString(s any) bool {
	switch x := s.(type) {
	case stringSerde:
		return true
	case *untyped[string]:
		_, ok := x.s.(stringSerde)
		return ok
	}
	return false
}

// AppendsInPlace reports whether s is the Long or String serde or Untyped of one of them: an
// AppendSerializer that writes the bytes straight onto the caller's buffer (Untyped of another
// serde also has AppendSerialize, but it copies a Serialize result, so a caller gains nothing).
// The processing engine uses it to serialize sink records into a shared buffer instead of one
// new slice per key and value. There is no Java counterpart.
func AppendsInPlace(s any) bool {
	switch x := s.(type) {
	case longSerde, stringSerde:
		return true
	case *untyped[int64]:
		_, ok := x.s.(longSerde)
		return ok
	case *untyped[string]:
		_, ok := x.s.(stringSerde)
		return ok
	}
	return false
}
