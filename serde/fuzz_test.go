package serde_test

import (
	"math"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kstreams-go/kstreams/serde"
)

// decodeAgain checks that a value our deserializer accepted survives a
// serialize/deserialize round trip unchanged.
func decodeAgain[T any](t *testing.T, s serde.Serde[T], data []byte) {
	t.Helper()
	if nd, ok := s.(serde.NullDecoder); ok && nd.DecodesToNull(data) {
		return // Java null, not a value
	}
	v, err := s.Deserialize(topic, nil, data)
	if err != nil {
		return
	}
	b, err := s.Serialize(topic, nil, v)
	if err != nil {
		t.Fatalf("%s: re-serializing %#v from %x: %v", serde.Name(s), v, data, err)
	}
	v2, err := s.Deserialize(topic, nil, b)
	if err != nil {
		t.Fatalf("%s: re-reading %x (from %x): %v", serde.Name(s), b, data, err)
	}
	if !reflect.DeepEqual(v, v2) && !nanEqual(v, v2) {
		t.Fatalf("%s: %x reads as %#v, its bytes %x as %#v", serde.Name(s), data, v, b, v2)
	}
}

func nanEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		return math.IsNaN(x) && math.IsNaN(b.(float64))
	}
	return false
}

// FuzzDeserialize feeds arbitrary bytes to the deserializers: none may
// panic, and whatever one accepts must round-trip. Normal test runs use the
// seed corpus only; explore with `go test -fuzz FuzzDeserialize ./serde`.
func FuzzDeserialize(f *testing.F) {
	for _, s := range []string{
		"", "00", "01", "ff", "0000000000000000", "7ff0000000000001",
		"0000000000000000010000000000000005", "0100000002000000080000000000000007ffffffff",
		"00000000020000000000000000000000020000000000000005", "0100000001000000016100",
		"610000000000000005", "6100000000000000090000000000000005", "eda080f09f98",
		"312d322d332d342d35", "31323365343536372d653839622d343264332d613435362d343236363134313734303030",
	} {
		f.Add(mustHex(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		decodeAgain(t, serde.String(), data)
		decodeAgain(t, serde.Long(), data)
		decodeAgain(t, serde.Double(), data)
		decodeAgain(t, serde.Boolean(), data)
		decodeAgain(t, serde.UUID(), data)
		decodeAgain(t, serde.ListSerde(serde.Nullable(serde.Long())), data)
		decodeAgain(t, serde.ListSerde(serde.Nullable(serde.String())), data)
		decodeAgain(t, serde.ListSerde(serde.ByteArray()), data)
		decodeAgain(t, serde.ListSerde(serde.Nullable(serde.UUID())), data)
		decodeAgain(t, serde.TimeWindowed(serde.String(), 100*time.Millisecond), data)
		decodeAgain(t, serde.SessionWindowed(serde.ByteArray()), data)
		if s, _ := serde.String().Deserialize(topic, nil, data); !utf8.ValidString(s) {
			t.Fatalf("String decoded %x to invalid UTF-8 %q", data, s)
		} else if utf8.Valid(data) && s != string(data) {
			t.Fatalf("String changed valid UTF-8 %x to %q", data, s)
		}
	})
}

// FuzzRoundTrip serializes values built from the fuzz input and checks they
// read back unchanged, across the primitive, list and windowed serdes.
func FuzzRoundTrip(f *testing.F) {
	f.Add(int64(0), "", 0.0, uint8(0))
	f.Add(int64(-1), "héllo 😀", math.Inf(-1), uint8(5))
	f.Add(int64(math.MinInt64), "\x00", math.Copysign(0, -1), uint8(255))
	f.Add(int64(math.MaxInt64), "a\xffb", math.MaxFloat64, uint8(3))
	f.Fuzz(func(t *testing.T, n int64, s string, x float64, nullMask uint8) {
		check := func(name string, got, want any) {
			t.Helper()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: got %#v, want %#v", name, got, want)
			}
		}
		rt := func(name string, s serde.Serde[any], v any) any {
			t.Helper()
			b, err := s.Serialize(topic, nil, v)
			if err != nil {
				t.Fatalf("%s: serialize %#v: %v", name, v, err)
			}
			out, err := s.Deserialize(topic, nil, b)
			if err != nil {
				t.Fatalf("%s: deserialize %x: %v", name, b, err)
			}
			return out
		}
		check("Long", rt("Long", serde.Untyped(serde.Long()), n), n)
		check("Integer", rt("Integer", serde.Untyped(serde.Integer()), int32(n)), int32(n))
		check("Short", rt("Short", serde.Untyped(serde.Short()), int16(n)), int16(n))
		if got := rt("Double", serde.Untyped(serde.Double()), x).(float64); got != x && !(math.IsNaN(x) && math.IsNaN(got)) {
			t.Fatalf("Double: %v != %v", got, x)
		}
		if utf8.ValidString(s) {
			check("String", rt("String", serde.Untyped(serde.String()), s), s)
		}
		var u [16]byte
		for i := range u {
			u[i] = byte(n >> (i % 8 * 8))
		}
		check("UUID", rt("UUID", serde.Untyped(serde.UUID()), u), u)

		// Lists with nulls where nullMask has bits set.
		longs := make([]*int64, 0, 8)
		strs := make([]*string, 0, 8)
		for i := range 8 {
			if nullMask&(1<<i) != 0 {
				longs, strs = append(longs, nil), append(strs, nil)
				continue
			}
			rs := []rune(s)
			v, w := n+int64(i), string(rs[:min(i, len(rs))])
			longs, strs = append(longs, &v), append(strs, &w)
		}
		check("List<Long>", rt("List<Long>", serde.Untyped(serde.ListSerde(serde.Nullable(serde.Long()))), longs), longs)
		if utf8.ValidString(s) {
			check("List<String>", rt("List<String>", serde.Untyped(serde.ListSerde(serde.Nullable(serde.String()))), strs), strs)
		}

		start := n & math.MaxInt64 // Java windows have start >= 0
		if start == math.MaxInt64 {
			start-- // a time window needs end > start
		}
		size := int64(nullMask) + 1
		end := start + size
		if end < 0 {
			end = math.MaxInt64
		}
		tw := serde.Windowed[int64]{Key: n, Window: serde.Window{Start: start, End: end}}
		check("TimeWindowed", rt("TimeWindowed", serde.Untyped(serde.TimeWindowed(serde.Long(), time.Duration(size)*time.Millisecond)), tw), tw)
		sw := serde.Windowed[[]byte]{Key: []byte(s), Window: serde.Window{Start: start / 2, End: start}}
		check("SessionWindowed", rt("SessionWindowed", serde.Untyped(serde.SessionWindowed(serde.ByteArray())), sw), sw)
	})
}
