package serde

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// String returns the serde of Go strings as UTF-8 bytes (Java:
// org.apache.kafka.common.serialization.StringSerializer and
// StringDeserializer with their default UTF-8 encoding).
//
// Layout: the string's bytes, no length prefix, no terminator; "" is an
// empty, non-nil slice. Serialize copies the string's bytes as they are (a
// Go string holding invalid UTF-8 is written unchanged; a Java String cannot
// hold such bytes). Deserialize decodes as Java's new String(bytes, UTF_8)
// does: valid UTF-8 is returned unchanged, and each maximal ill-formed
// subsequence is replaced by U+FFFD (EF BF BD), so malformed input never
// fails. nil bytes give "".
func String() Serde[string] { return stringSerde{} }

type stringSerde struct{}

func (stringSerde) String() string { return "String" }

func (stringSerde) Serialize(_ string, _ *Headers, data string) ([]byte, error) {
	return append(make([]byte, 0, len(data)), data...), nil
}

func (stringSerde) Deserialize(_ string, _ *Headers, data []byte) (string, error) {
	if utf8.Valid(data) {
		return string(data), nil
	}
	return javaDecodeUTF8(data), nil
}

// Long returns the serde of int64 (Java: LongSerializer/LongDeserializer).
// Layout: 8 bytes, big-endian two's complement. Deserialize returns an
// *Error wrapping ErrCorrupt unless the input is exactly 8 bytes; nil
// bytes give 0. FixedSize is 8.
func Long() Serde[int64] { return longSerde{} }

type longSerde struct{}

func (longSerde) String() string { return "Long" }
func (longSerde) FixedSize() int { return 8 }

func (longSerde) Serialize(_ string, _ *Headers, data int64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(data)), nil
}

func (s longSerde) Deserialize(topic string, _ *Headers, data []byte) (int64, error) {
	if data == nil {
		return 0, nil
	}
	if len(data) != 8 {
		return 0, wrongLen(s.String(), topic, data, 8)
	}
	return int64(binary.BigEndian.Uint64(data)), nil
}

// Integer returns the serde of int32 (Java: IntegerSerializer/
// IntegerDeserializer). Layout: 4 bytes, big-endian two's complement.
// Deserialize returns an *Error wrapping ErrCorrupt unless the input is
// exactly 4 bytes; nil bytes give 0. FixedSize is 4.
func Integer() Serde[int32] { return integerSerde{} }

type integerSerde struct{}

func (integerSerde) String() string { return "Integer" }
func (integerSerde) FixedSize() int { return 4 }

func (integerSerde) Serialize(_ string, _ *Headers, data int32) ([]byte, error) {
	return binary.BigEndian.AppendUint32(make([]byte, 0, 4), uint32(data)), nil
}

func (s integerSerde) Deserialize(topic string, _ *Headers, data []byte) (int32, error) {
	if data == nil {
		return 0, nil
	}
	if len(data) != 4 {
		return 0, wrongLen(s.String(), topic, data, 4)
	}
	return int32(binary.BigEndian.Uint32(data)), nil
}

// Short returns the serde of int16 (Java: ShortSerializer/ShortDeserializer).
// Layout: 2 bytes, big-endian two's complement. Deserialize returns an
// *Error wrapping ErrCorrupt unless the input is exactly 2 bytes; nil
// bytes give 0. FixedSize is 2.
func Short() Serde[int16] { return shortSerde{} }

type shortSerde struct{}

func (shortSerde) String() string { return "Short" }
func (shortSerde) FixedSize() int { return 2 }

func (shortSerde) Serialize(_ string, _ *Headers, data int16) ([]byte, error) {
	return binary.BigEndian.AppendUint16(make([]byte, 0, 2), uint16(data)), nil
}

func (s shortSerde) Deserialize(topic string, _ *Headers, data []byte) (int16, error) {
	if data == nil {
		return 0, nil
	}
	if len(data) != 2 {
		return 0, wrongLen(s.String(), topic, data, 2)
	}
	return int16(binary.BigEndian.Uint16(data)), nil
}

// javaNaN64 is the bit pattern Java's Double.doubleToLongBits gives every NaN
// and hence the bytes DoubleSerializer writes for any NaN.
const javaNaN64 uint64 = 0x7ff8000000000000

// Double returns the serde of float64 (Java: DoubleSerializer/
// DoubleDeserializer). Layout: the IEEE 754 binary64 bits, 8 bytes
// big-endian. Every NaN serializes as 7ff8000000000000 (Java's
// doubleToLongBits canonical NaN); -0.0 keeps its sign bit (8000000000000000).
// Deserialize keeps the bits it reads, so a NaN payload survives decoding but
// not re-encoding, as in Java. It returns an *Error wrapping ErrCorrupt
// unless the input is exactly 8 bytes; nil bytes give 0. FixedSize is 8.
func Double() Serde[float64] { return doubleSerde{} }

type doubleSerde struct{}

func (doubleSerde) String() string { return "Double" }
func (doubleSerde) FixedSize() int { return 8 }

func (doubleSerde) Serialize(_ string, _ *Headers, data float64) ([]byte, error) {
	bits := math.Float64bits(data)
	if data != data {
		bits = javaNaN64
	}
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), bits), nil
}

func (s doubleSerde) Deserialize(topic string, _ *Headers, data []byte) (float64, error) {
	if data == nil {
		return 0, nil
	}
	if len(data) != 8 {
		return 0, wrongLen(s.String(), topic, data, 8)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(data)), nil
}

// Float returns the serde of float32 (Java: FloatSerializer/
// FloatDeserializer). Layout: the IEEE 754 binary32 bits, 4 bytes
// big-endian, taken as they are: unlike DoubleSerializer, Java's
// FloatSerializer uses floatToRawIntBits, so a NaN keeps its payload and
// sign (math.NaN() converted to float32 is 7fc00000, as Java's Float.NaN);
// -0.0 keeps its sign bit. Deserialize keeps the bits too. It returns an *Error wrapping
// ErrCorrupt unless the input is exactly 4 bytes; nil bytes give 0.
// FixedSize is 4.
func Float() Serde[float32] { return floatSerde{} }

type floatSerde struct{}

func (floatSerde) String() string { return "Float" }
func (floatSerde) FixedSize() int { return 4 }

func (floatSerde) Serialize(_ string, _ *Headers, data float32) ([]byte, error) {
	return binary.BigEndian.AppendUint32(make([]byte, 0, 4), math.Float32bits(data)), nil
}

func (s floatSerde) Deserialize(topic string, _ *Headers, data []byte) (float32, error) {
	if data == nil {
		return 0, nil
	}
	if len(data) != 4 {
		return 0, wrongLen(s.String(), topic, data, 4)
	}
	return math.Float32frombits(binary.BigEndian.Uint32(data)), nil
}

// Boolean returns the serde of bool (Java: BooleanSerializer/
// BooleanDeserializer). Layout: 1 byte, 0x01 for true, 0x00 for false.
// Deserialize returns an *Error wrapping ErrCorrupt unless the input is
// exactly 1 byte, and one wrapping ErrCorrupt and ErrInvalidValue for a byte
// other than 0x00 or 0x01 (Java rejects those too); nil bytes give false. Boolean has
// no FixedSize: Java's list serdes use the variable-size layout for it.
func Boolean() Serde[bool] { return booleanSerde{} }

type booleanSerde struct{}

func (booleanSerde) String() string { return "Boolean" }

func (booleanSerde) Serialize(_ string, _ *Headers, data bool) ([]byte, error) {
	if data {
		return []byte{1}, nil
	}
	return []byte{0}, nil
}

func (s booleanSerde) Deserialize(topic string, _ *Headers, data []byte) (bool, error) {
	if data == nil {
		return false, nil
	}
	if len(data) != 1 {
		return false, wrongLen(s.String(), topic, data, 1)
	}
	switch data[0] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, deserErr(s.String(), topic, data, fmt.Errorf("%w: %w: boolean byte 0x%02x, want 0x00 or 0x01", ErrCorrupt, ErrInvalidValue, data[0]))
}

// ByteArray returns the pass-through serde of []byte (Java:
// ByteArraySerializer/ByteArrayDeserializer). Serialize returns data itself
// and Deserialize returns the input itself, without copying; nil stays nil
// and an empty slice stays empty, so null and empty remain distinct.
func ByteArray() Serde[[]byte] { return bytesSerde{name: "ByteArray"} }

// Bytes returns the pass-through serde of []byte that stands for Java's
// org.apache.kafka.common.utils.Bytes (Java: BytesSerializer/
// BytesDeserializer). It behaves exactly as ByteArray; only its name
// differs.
func Bytes() Serde[[]byte] { return bytesSerde{name: "Bytes"} }

type bytesSerde struct{ name string }

func (s bytesSerde) String() string { return s.name }

func (bytesSerde) Serialize(_ string, _ *Headers, data []byte) ([]byte, error) {
	return data, nil
}

func (bytesSerde) Deserialize(_ string, _ *Headers, data []byte) ([]byte, error) {
	return data, nil
}

// Void returns the serde of Java's Void, whose only value is null (Java:
// VoidSerializer/VoidDeserializer). Serialize always returns nil bytes.
// Deserialize returns struct{}{} for nil bytes and an *Error wrapping
// ErrCorrupt for any other input, including empty bytes, as Java's
// VoidDeserializer throws for any non-null data.
func Void() Serde[struct{}] { return voidSerde{} }

type voidSerde struct{}

func (voidSerde) String() string { return "Void" }

func (voidSerde) Serialize(string, *Headers, struct{}) ([]byte, error) { return nil, nil }

func (s voidSerde) Deserialize(topic string, _ *Headers, data []byte) (struct{}, error) {
	if data != nil {
		return struct{}{}, deserErr(s.String(), topic, data, fmt.Errorf("%w: data should be null", ErrCorrupt))
	}
	return struct{}{}, nil
}
