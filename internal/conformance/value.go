// Package conformance holds the vector format shared by the Java reference harness
// (conformance/java, Kafka Streams' TopologyTestDriver) and the Go port's tests, and helpers to
// run the Java harness from Go tests.
//
// A vector is a JSON-lines file of input events (records to pipe, wall-clock advances); running
// a topology on it gives a JSON-lines file of output records, one per record the topology
// produced, in the order described in conformance/README.md. Both sides write the same format,
// so the Go TopologyTestDriver's output can be compared record by record with Java's.
package conformance

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind names the type of a TypedValue, and with it the Kafka serde that turns the value into
// bytes. The constants are the JSON member names of the vector format.
type Kind string

// The kinds of the vector format and their Java serdes (org.apache.kafka.common.serialization.Serdes).
const (
	// KindNull is the null value (Java null, JSON null). It has no serde: null is null bytes.
	KindNull Kind = ""
	// KindString is Serdes.String(): UTF-8 text. Go value: string.
	KindString Kind = "string"
	// KindLong is Serdes.Long(): 8 bytes big-endian. Go value: int64.
	KindLong Kind = "long"
	// KindInteger is Serdes.Integer(): 4 bytes big-endian. Go value: int32.
	KindInteger Kind = "integer"
	// KindShort is Serdes.Short(): 2 bytes big-endian. Go value: int16.
	KindShort Kind = "short"
	// KindDouble is Serdes.Double(): IEEE 754 bits, 8 bytes big-endian. Go value: float64.
	KindDouble Kind = "double"
	// KindFloat is Serdes.Float(): IEEE 754 bits, 4 bytes big-endian. Go value: float32.
	KindFloat Kind = "float"
	// KindBoolean is Serdes.Boolean(): one byte, 0x01 true, 0x00 false. Go value: bool.
	KindBoolean Kind = "boolean"
	// KindBytes is Serdes.ByteArray(): the bytes unchanged, written as lower-case hex in JSON.
	// Go value: []byte.
	KindBytes Kind = "bytes"
	// KindUUID is Serdes.UUID(): the 36-character text form as UTF-8. Go value: string, the
	// lower-case canonical form (8-4-4-4-12 hex digits).
	KindUUID Kind = "uuid"
)

// kinds lists every non-null kind, in the order of the README.
var kinds = []Kind{KindString, KindLong, KindInteger, KindShort, KindDouble, KindFloat, KindBoolean, KindBytes, KindUUID}

// Errors of the vector format. Functions wrap them (see *LineError) with what they concern.
var (
	// ErrBadValue reports a typed value that does not follow the format: an unknown kind, a
	// value of the wrong JSON type or out of range, a Go value of the wrong type.
	ErrBadValue = errors.New("conformance: bad typed value")
	// ErrBadBytes reports bytes a Kafka deserializer would reject (wrong length, bad boolean
	// byte, invalid UTF-8 for a UUID).
	ErrBadBytes = errors.New("conformance: bytes do not decode")
	// ErrBadEvent reports an input event or output record that does not follow the format.
	ErrBadEvent = errors.New("conformance: bad event")
)

// TypedValue is a key, value or header value of the vector format: a value with the Kafka serde
// that (de)serializes it, or null. The zero TypedValue is null.
//
// In JSON it is an object with exactly one member naming the kind, {"string":"a"}, {"long":5},
// {"double":"NaN"}, {"bytes":"00ff"}, or JSON null. Java counterpart: ValueType.Typed in the
// harness.
type TypedValue struct {
	// Kind is the type; KindNull (the zero value) means null and then Value is nil.
	Kind Kind
	// Value is the Go value, of the type documented on Kind (string, int64, int32, int16,
	// float64, float32, bool, []byte, or the UUID string).
	Value any
}

// Null returns the null value (Java null).
func Null() TypedValue { return TypedValue{} }

// String returns a value serialized by Serdes.String().
func String(s string) TypedValue { return TypedValue{KindString, s} }

// Long returns a value serialized by Serdes.Long().
func Long(n int64) TypedValue { return TypedValue{KindLong, n} }

// Integer returns a value serialized by Serdes.Integer().
func Integer(n int32) TypedValue { return TypedValue{KindInteger, n} }

// Short returns a value serialized by Serdes.Short().
func Short(n int16) TypedValue { return TypedValue{KindShort, n} }

// Double returns a value serialized by Serdes.Double(); NaN and ±Inf are allowed.
func Double(f float64) TypedValue { return TypedValue{KindDouble, f} }

// Float returns a value serialized by Serdes.Float(); NaN and ±Inf are allowed.
func Float(f float32) TypedValue { return TypedValue{KindFloat, f} }

// Boolean returns a value serialized by Serdes.Boolean().
func Boolean(b bool) TypedValue { return TypedValue{KindBoolean, b} }

// Bytes returns a value serialized by Serdes.ByteArray(). A nil b gives an empty (not null)
// byte array; use Null for null.
func Bytes(b []byte) TypedValue {
	if b == nil {
		b = []byte{}
	}
	return TypedValue{KindBytes, b}
}

// UUID returns a value serialized by Serdes.UUID(). s must be the canonical 36-character form;
// it is stored lower-case. Invalid text gives a value that Validate, Serialize and MarshalJSON
// reject with ErrBadValue.
func UUID(s string) TypedValue { return TypedValue{KindUUID, strings.ToLower(s)} }

// IsNull reports whether v is the null value.
func (v TypedValue) IsNull() bool { return v.Kind == KindNull }

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Validate reports (ErrBadValue) whether Value has the Go type Kind requires.
func (v TypedValue) Validate() error {
	ok := false
	switch v.Kind {
	case KindNull:
		ok = v.Value == nil
	case KindString:
		_, ok = v.Value.(string)
	case KindLong:
		_, ok = v.Value.(int64)
	case KindInteger:
		_, ok = v.Value.(int32)
	case KindShort:
		_, ok = v.Value.(int16)
	case KindDouble:
		_, ok = v.Value.(float64)
	case KindFloat:
		_, ok = v.Value.(float32)
	case KindBoolean:
		_, ok = v.Value.(bool)
	case KindBytes:
		b, isBytes := v.Value.([]byte)
		ok = isBytes && b != nil
	case KindUUID:
		s, isString := v.Value.(string)
		ok = isString && uuidRE.MatchString(s)
	default:
		return fmt.Errorf("%w: unknown kind %q", ErrBadValue, string(v.Kind))
	}
	if !ok {
		return fmt.Errorf("%w: kind %q with Go value %#v", ErrBadValue, string(v.Kind), v.Value)
	}
	return nil
}

// Equal reports whether v and o are the same kind and value. Bytes compare by content; floats
// compare by bits, except that every NaN equals every NaN (Java's serializers write one NaN).
func (v TypedValue) Equal(o TypedValue) bool {
	if v.Kind != o.Kind {
		return false
	}
	if v.Validate() != nil || o.Validate() != nil {
		// Invalid values may hold incomparable Go types: == could panic.
		return reflect.DeepEqual(v.Value, o.Value)
	}
	switch a := v.Value.(type) {
	case []byte:
		b, ok := o.Value.([]byte)
		return ok && bytes.Equal(a, b)
	case float64:
		b, ok := o.Value.(float64)
		return ok && (math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b)))
	case float32:
		b, ok := o.Value.(float32)
		return ok && (math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b))
	default:
		return v.Value == o.Value
	}
}

// String renders v as its JSON form, for messages; invalid values render with %#v.
func (v TypedValue) String() string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("{%s %#v}", v.Kind, v.Value)
	}
	return string(b)
}

// Serialize returns the bytes Java's serde for v.Kind writes for v; the null value gives nil.
// Errors wrap ErrBadValue.
func (v TypedValue) Serialize() ([]byte, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	switch x := v.Value.(type) {
	case nil:
		return nil, nil
	case string: // string and uuid
		return []byte(x), nil
	case int64:
		return binary.BigEndian.AppendUint64(nil, uint64(x)), nil
	case int32:
		return binary.BigEndian.AppendUint32(nil, uint32(x)), nil
	case int16:
		return binary.BigEndian.AppendUint16(nil, uint16(x)), nil
	case float64:
		// Java's DoubleSerializer uses doubleToLongBits, which writes the canonical NaN.
		if math.IsNaN(x) {
			return binary.BigEndian.AppendUint64(nil, 0x7ff8000000000000), nil
		}
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(x)), nil
	case float32:
		if x != x {
			return binary.BigEndian.AppendUint32(nil, 0x7fc00000), nil
		}
		return binary.BigEndian.AppendUint32(nil, math.Float32bits(x)), nil
	case bool:
		if x {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case []byte:
		return append([]byte{}, x...), nil
	}
	return nil, fmt.Errorf("%w: %#v", ErrBadValue, v.Value)
}

// Deserialize decodes bytes as Java's deserializer for kind does; nil bytes give the null value
// whatever the kind. Wrong lengths, a boolean byte other than 0 or 1 and text that is not a UUID
// give ErrBadBytes; an unknown kind gives ErrBadValue.
func Deserialize(kind Kind, b []byte) (TypedValue, error) {
	if b == nil {
		return Null(), nil
	}
	size := func(n int) error {
		if len(b) != n {
			return fmt.Errorf("%w: %s needs %d bytes, got %d", ErrBadBytes, kind, n, len(b))
		}
		return nil
	}
	switch kind {
	case KindString:
		// Java's StringDeserializer replaces invalid UTF-8; keep the bytes as a Go string.
		return String(string(b)), nil
	case KindLong:
		if err := size(8); err != nil {
			return Null(), err
		}
		return Long(int64(binary.BigEndian.Uint64(b))), nil
	case KindInteger:
		if err := size(4); err != nil {
			return Null(), err
		}
		return Integer(int32(binary.BigEndian.Uint32(b))), nil
	case KindShort:
		if err := size(2); err != nil {
			return Null(), err
		}
		return Short(int16(binary.BigEndian.Uint16(b))), nil
	case KindDouble:
		if err := size(8); err != nil {
			return Null(), err
		}
		return Double(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case KindFloat:
		if err := size(4); err != nil {
			return Null(), err
		}
		return Float(math.Float32frombits(binary.BigEndian.Uint32(b))), nil
	case KindBoolean:
		if err := size(1); err != nil {
			return Null(), err
		}
		switch b[0] {
		case 0:
			return Boolean(false), nil
		case 1:
			return Boolean(true), nil
		}
		return Null(), fmt.Errorf("%w: boolean byte %#02x", ErrBadBytes, b[0])
	case KindBytes:
		return Bytes(append([]byte{}, b...)), nil
	case KindUUID:
		s := strings.ToLower(string(b))
		if !utf8.Valid(b) || !uuidRE.MatchString(s) {
			return Null(), fmt.Errorf("%w: not a UUID: %q", ErrBadBytes, b)
		}
		return UUID(s), nil
	}
	return Null(), fmt.Errorf("%w: unknown kind %q", ErrBadValue, string(kind))
}

// MarshalJSON writes v in the vector format: null, or {"<kind>": value}. Doubles and floats that
// are NaN or infinite are written as the strings "NaN", "Infinity", "-Infinity"; bytes as
// lower-case hex.
func (v TypedValue) MarshalJSON() ([]byte, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	var inner []byte
	var err error
	switch x := v.Value.(type) {
	case nil:
		return []byte("null"), nil
	case float64:
		inner, err = marshalFloat(x, 64)
	case float32:
		inner, err = marshalFloat(float64(x), 32)
	case []byte:
		inner, err = json.Marshal(hex.EncodeToString(x))
	default:
		inner, err = marshalNoHTMLEscape(x)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadValue, err)
	}
	out := make([]byte, 0, len(inner)+len(v.Kind)+5)
	out = append(out, `{"`...)
	out = append(out, v.Kind...)
	out = append(out, `":`...)
	out = append(out, inner...)
	return append(out, '}'), nil
}

func marshalFloat(f float64, bits int) ([]byte, error) {
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Infinity"`), nil
	}
	if bits == 32 {
		return json.Marshal(float32(f))
	}
	return json.Marshal(f)
}

func marshalNoHTMLEscape(x any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a value in the vector format. Errors wrap ErrBadValue.
func (v *TypedValue) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		*v = Null()
		return nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadValue, data, err)
	}
	if len(members) != 1 {
		return fmt.Errorf("%w: want null or an object with one member, got %s", ErrBadValue, data)
	}
	for name, raw := range members {
		tv, err := parseMember(Kind(name), bytes.TrimSpace(raw))
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadValue, data, err)
		}
		*v = tv
	}
	return nil
}

func parseMember(kind Kind, raw []byte) (TypedValue, error) {
	str := func() (string, error) {
		var s string
		if len(raw) == 0 || raw[0] != '"' {
			return "", fmt.Errorf("string expected")
		}
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	integral := func(bits int) (int64, error) {
		if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
			return 0, fmt.Errorf("integer expected")
		}
		return strconv.ParseInt(string(raw), 10, bits)
	}
	floating := func(bits int) (float64, error) {
		if len(raw) > 0 && raw[0] == '"' {
			s, err := str()
			if err != nil {
				return 0, err
			}
			switch s {
			case "NaN":
				return math.NaN(), nil
			case "Infinity":
				return math.Inf(1), nil
			case "-Infinity":
				return math.Inf(-1), nil
			}
			return 0, fmt.Errorf("number, \"NaN\", \"Infinity\" or \"-Infinity\" expected")
		}
		if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
			return 0, fmt.Errorf("number expected")
		}
		return strconv.ParseFloat(string(raw), bits)
	}
	switch kind {
	case KindString:
		s, err := str()
		return String(s), err
	case KindLong:
		n, err := integral(64)
		return Long(n), err
	case KindInteger:
		n, err := integral(32)
		return Integer(int32(n)), err
	case KindShort:
		n, err := integral(16)
		return Short(int16(n)), err
	case KindDouble:
		f, err := floating(64)
		return Double(f), err
	case KindFloat:
		f, err := floating(32)
		return Float(float32(f)), err
	case KindBoolean:
		switch string(raw) {
		case "true":
			return Boolean(true), nil
		case "false":
			return Boolean(false), nil
		}
		return Null(), fmt.Errorf("true or false expected")
	case KindBytes:
		s, err := str()
		if err != nil {
			return Null(), err
		}
		b, err := hex.DecodeString(s)
		return Bytes(b), err
	case KindUUID:
		s, err := str()
		if err != nil {
			return Null(), err
		}
		u := UUID(s)
		return u, u.Validate()
	}
	return Null(), fmt.Errorf("unknown kind %q (known: %v)", string(kind), kinds)
}

// HexBytes is raw record bytes, written in JSON as a lower-case hex string, or null for nil.
// An empty non-nil slice is "" (an empty key is not a null key).
type HexBytes []byte

// MarshalJSON writes null for nil, else the hex string.
func (h HexBytes) MarshalJSON() ([]byte, error) {
	if h == nil {
		return []byte("null"), nil
	}
	return json.Marshal(hex.EncodeToString(h))
}

// UnmarshalJSON reads null as nil and a hex string as a non-nil slice. Errors wrap ErrBadEvent.
func (h *HexBytes) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*h = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%w: hex string or null expected, got %s", ErrBadEvent, data)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%w: bad hex %q: %v", ErrBadEvent, s, err)
	}
	*h = append(HexBytes{}, b...)
	return nil
}
