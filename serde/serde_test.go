package serde_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/serde"
)

const topic = "orders"

func h(s string) []byte { return mustHex(s) }

// Byte layouts below are Java's (they equal vectors in
// conformance/vectors/serde.jsonl); these tests pin the Go-side API.

func TestNames(t *testing.T) {
	cases := []struct {
		s    any
		want string
	}{
		{serde.String(), "String"},
		{serde.Long(), "Long"},
		{serde.Integer(), "Integer"},
		{serde.Short(), "Short"},
		{serde.Double(), "Double"},
		{serde.Float(), "Float"},
		{serde.Boolean(), "Boolean"},
		{serde.ByteArray(), "ByteArray"},
		{serde.Bytes(), "Bytes"},
		{serde.UUID(), "UUID"},
		{serde.Void(), "Void"},
		{serde.ListSerde(serde.Long()), "ListSerde<Long>"},
		{serde.ListSerde(serde.Nullable(serde.String())), "ListSerde<String>"},
		{serde.TimeWindowed(serde.String(), 100*time.Millisecond), "TimeWindowed<String>"},
		{serde.SessionWindowed(serde.Long()), "SessionWindowed<Long>"},
		{serde.JSON[map[string]int](), "JSON<map[string]int>"},
		{serde.Untyped(serde.Long()), "Long"},
		{serde.New(func(string, *serde.Headers, int) ([]byte, error) { return nil, nil },
			func(string, *serde.Headers, []byte) (int, error) { return 0, nil }), "Serde<int>"},
		{42, "int"},
	}
	for _, c := range cases {
		if got := serde.Name(c.s); got != c.want {
			t.Errorf("Name(%T) = %q, want %q", c.s, got, c.want)
		}
	}
}

// Every decode failure of Deserialize matches ErrCorrupt, what a deserialization exception
// handler may skip; those of well-sized bytes holding an invalid value match ErrInvalidValue
// too, and those the serde's configuration cannot decode ErrUnsupported.
func TestDeserializeFailuresAreCorrupt(t *testing.T) {
	cases := []struct {
		name string
		err  error
		also error // matched besides ErrCorrupt (nil: none)
		msg  string
	}{
		{"JSON", func() error { _, err := serde.JSON[int]().Deserialize(topic, nil, []byte("{")); return err }(),
			serde.ErrInvalidValue, `serde JSON<int>: deserialize 1 bytes from topic "orders": corrupt data: invalid value: unexpected end of JSON input`},
		{"Boolean", func() error { _, err := serde.Boolean().Deserialize(topic, nil, h("02")); return err }(),
			serde.ErrInvalidValue, `serde Boolean: deserialize 1 bytes from topic "orders": corrupt data: invalid value: boolean byte 0x02, want 0x00 or 0x01`},
		{"UUID", func() error { _, err := serde.UUID().Deserialize(topic, nil, []byte("not-a-uuid")); return err }(),
			serde.ErrInvalidValue, `serde UUID: deserialize 10 bytes from topic "orders": corrupt data: invalid value: invalid UUID string "not-a-uuid"`},
		{"list null element", func() error {
			_, err := serde.ListSerde(serde.Integer()).Deserialize(topic, nil, h("00"+"00000001"+"00000000"+"00000001"))
			return err
		}(), serde.ErrUnsupported, ""},
		{"Long", func() error { _, err := serde.Long().Deserialize(topic, nil, h("01")); return err }(), nil, ""},
	}
	for _, c := range cases {
		if !errors.Is(c.err, serde.ErrCorrupt) || c.also != nil && !errors.Is(c.err, c.also) {
			t.Errorf("%s: %v, want ErrCorrupt and %v", c.name, c.err, c.also)
		}
		if c.msg != "" && (c.err == nil || c.err.Error() != c.msg) {
			t.Errorf("%s: message %v, want %s", c.name, c.err, c.msg)
		}
	}
}

func TestErrorFormatAndUnwrap(t *testing.T) {
	_, err := serde.Long().Deserialize(topic, nil, h("01020304050607"))
	want := `serde Long: deserialize 7 bytes from topic "orders": corrupt data: wrong length, want 8 bytes`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	var se *serde.Error
	if !errors.As(err, &se) || se.Serde != "Long" || se.Topic != topic || se.Len != 7 || se.Op != serde.OpDeserialize {
		t.Fatalf("errors.As: %+v", se)
	}
	if !errors.Is(err, serde.ErrCorrupt) || errors.Is(err, serde.ErrInvalidValue) {
		t.Fatal("errors.Is does not single out ErrCorrupt")
	}

	// Nested: an inner error stays reachable through the list's error.
	_, err = serde.ListSerde(serde.Boolean()).Deserialize(topic, nil, h("01"+"00000001"+"00000001"+"02"))
	if !errors.Is(err, serde.ErrInvalidValue) {
		t.Fatalf("list error %v does not wrap the inner ErrInvalidValue", err)
	}
	var inner *serde.Error
	if !errors.As(errors.Unwrap(errors.Unwrap(err)), &inner) || inner.Serde != "Boolean" || inner.Len != 1 {
		t.Fatalf("inner error: %+v", inner)
	}
	if !strings.Contains(err.Error(), "element 0") {
		t.Fatalf("list error %q does not name the element", err)
	}
}

// Value-type serdes never return nil bytes and read nil bytes as the zero
// value; the engine itself maps null (COMMON.md).
func TestValueTypesNullConvention(t *testing.T) {
	if b, _ := serde.String().Serialize(topic, nil, ""); b == nil || len(b) != 0 {
		t.Fatalf("String.Serialize(\"\") = %#v, want empty non-nil", b)
	}
	if v, err := serde.Long().Deserialize(topic, nil, nil); v != 0 || err != nil {
		t.Fatalf("Long.Deserialize(nil) = %v, %v", v, err)
	}
	if v, err := serde.Boolean().Deserialize(topic, nil, nil); v || err != nil {
		t.Fatalf("Boolean.Deserialize(nil) = %v, %v", v, err)
	}
	if v, err := serde.String().Deserialize(topic, nil, nil); v != "" || err != nil {
		t.Fatalf("String.Deserialize(nil) = %q, %v", v, err)
	}
	// ByteArray keeps null and empty apart.
	for _, in := range [][]byte{nil, {}} {
		b, _ := serde.ByteArray().Serialize(topic, nil, in)
		v, _ := serde.ByteArray().Deserialize(topic, nil, b)
		if (b == nil) != (in == nil) || (v == nil) != (in == nil) {
			t.Fatalf("ByteArray(%#v): bytes %#v value %#v", in, b, v)
		}
	}
	// Void: always nil bytes, only nil input.
	if b, _ := serde.Void().Serialize(topic, nil, struct{}{}); b != nil {
		t.Fatalf("Void.Serialize = %#v", b)
	}
	if _, err := serde.Void().Deserialize(topic, nil, []byte{}); !errors.Is(err, serde.ErrCorrupt) {
		t.Fatalf("Void.Deserialize(empty) err = %v", err)
	}
}

func TestNullable(t *testing.T) {
	s := serde.Nullable(serde.Long())
	b, err := s.Serialize(topic, nil, nil)
	if b != nil || err != nil {
		t.Fatalf("Serialize(nil) = %#v, %v", b, err)
	}
	v, err := s.Deserialize(topic, nil, nil)
	if v != nil || err != nil {
		t.Fatalf("Deserialize(nil) = %v, %v", v, err)
	}
	n := int64(-2)
	b, _ = s.Serialize(topic, nil, &n)
	if hex.EncodeToString(b) != "fffffffffffffffe" {
		t.Fatalf("Serialize(-2) = %x", b)
	}
	v, _ = s.Deserialize(topic, nil, b)
	if v == nil || *v != -2 {
		t.Fatalf("Deserialize = %v", v)
	}
	if fs, ok := s.(serde.FixedSizer); !ok || fs.FixedSize() != 8 {
		t.Fatal("Nullable(Long) lost FixedSize")
	}
	// A windowed key's empty bytes are Java null.
	w := serde.Nullable(serde.TimeWindowed(serde.String(), 10*time.Millisecond))
	if v, err := w.Deserialize(topic, nil, []byte{}); v != nil || err != nil {
		t.Fatalf("Nullable(TimeWindowed).Deserialize(empty) = %v, %v", v, err)
	}
}

func TestUntypedAndTyped(t *testing.T) {
	u := serde.Untyped(serde.Integer())
	if b, err := u.Serialize(topic, nil, nil); b != nil || err != nil {
		t.Fatalf("Serialize(nil) = %#v, %v", b, err)
	}
	if v, err := u.Deserialize(topic, nil, nil); v != nil || err != nil {
		t.Fatalf("Deserialize(nil) = %#v, %v", v, err)
	}
	b, err := u.Serialize(topic, nil, int32(258))
	if err != nil || hex.EncodeToString(b) != "00000102" {
		t.Fatalf("Serialize(258) = %x, %v", b, err)
	}
	v, err := u.Deserialize(topic, nil, b)
	if err != nil || v != any(int32(258)) {
		t.Fatalf("Deserialize = %#v, %v", v, err)
	}
	_, err = u.Serialize(topic, nil, int64(1))
	var se *serde.Error
	if !errors.Is(err, serde.ErrWrongType) || !errors.As(err, &se) || se.Serde != "Integer" || se.Op != serde.OpSerialize {
		t.Fatalf("wrong type err = %v", err)
	}
	if !strings.Contains(err.Error(), "int64") || !strings.Contains(err.Error(), "int32") {
		t.Fatalf("wrong type message %q names neither type", err)
	}

	// Empty windowed bytes are null for the engine.
	uw := serde.Untyped(serde.SessionWindowed(serde.String()))
	if v, err := uw.Deserialize(topic, nil, []byte{}); v != nil || err != nil {
		t.Fatalf("Untyped(SessionWindowed).Deserialize(empty) = %#v, %v", v, err)
	}

	// Typed undoes Untyped and maps nil to the zero value.
	if tl := serde.Typed[int32](u); tl != serde.Integer() {
		t.Fatalf("Typed(Untyped(s)) = %#v, want s", tl)
	}
	ts := serde.Typed[int32](serde.Untyped(serde.New(
		func(_ string, _ *serde.Headers, v any) ([]byte, error) {
			return serde.Integer().Serialize(topic, nil, v.(int32))
		},
		func(_ string, _ *serde.Headers, b []byte) (any, error) {
			if len(b) == 0 {
				return nil, nil
			}
			return serde.Integer().Deserialize(topic, nil, b)
		})))
	if v, err := ts.Deserialize(topic, nil, []byte{}); v != 0 || err != nil {
		t.Fatalf("Typed nil result = %v, %v", v, err)
	}
	if v, err := ts.Deserialize(topic, nil, h("00000007")); v != 7 || err != nil {
		t.Fatalf("Typed = %v, %v", v, err)
	}
}

func TestNewAndFrom(t *testing.T) {
	upper := serde.New(
		func(_ string, hs *serde.Headers, v string) ([]byte, error) {
			hs.Add("enc", []byte("upper"))
			return []byte(strings.ToUpper(v)), nil
		},
		func(_ string, _ *serde.Headers, b []byte) (string, error) { return strings.ToLower(string(b)), nil })
	hs := &serde.Headers{}
	b, _ := upper.Serialize(topic, hs, "abc")
	if string(b) != "ABC" {
		t.Fatalf("Serialize = %q", b)
	}
	if hv, ok := hs.LastHeader("enc"); !ok || string(hv.Value) != "upper" {
		t.Fatal("serializer did not see the headers")
	}
	if v, _ := upper.Deserialize(topic, hs, b); v != "abc" {
		t.Fatalf("Deserialize = %q", v)
	}
	f := serde.From[int64](serde.Long(), serde.Long())
	if serde.Name(f) != "Long" {
		t.Fatalf("From name = %q", serde.Name(f))
	}
	if fs, ok := f.(serde.FixedSizer); !ok || fs.FixedSize() != 8 {
		t.Fatal("From lost FixedSize")
	}
	// A list of From(Long) still uses the constant-size layout.
	b, _ = serde.ListSerde(f).Serialize(topic, nil, []int64{1})
	if hex.EncodeToString(b) != "00"+"00000000"+"00000001"+"0000000000000001" {
		t.Fatalf("List(From(Long)) = %x", b)
	}
}

func TestListNulls(t *testing.T) {
	// Null elements need a nillable element type.
	_, err := serde.ListSerde(serde.Long()).Deserialize(topic, nil, h("00"+"00000001"+"00000000"+"00000001"))
	if !errors.Is(err, serde.ErrUnsupported) || !strings.Contains(err.Error(), "Nullable") {
		t.Fatalf("null into []int64: %v", err)
	}
	v, err := serde.ListSerde(serde.Nullable(serde.Long())).Deserialize(topic, nil, h("00"+"00000001"+"00000000"+"00000001"))
	if err != nil || len(v) != 1 || v[0] != nil {
		t.Fatalf("null into []*int64 = %v, %v", v, err)
	}
	// Nil list is nil bytes; empty list is the header and decodes non-nil.
	if b, _ := serde.ListSerde(serde.String()).Serialize(topic, nil, nil); b != nil {
		t.Fatalf("nil list = %x", b)
	}
	b, _ := serde.ListSerde(serde.String()).Serialize(topic, nil, []string{})
	if hex.EncodeToString(b) != "0100000000" {
		t.Fatalf("empty string list = %x", b)
	}
	l, _ := serde.ListSerde(serde.String()).Deserialize(topic, nil, b)
	if l == nil || len(l) != 0 {
		t.Fatalf("empty list decodes to %#v", l)
	}
	// Void elements are always null.
	b, _ = serde.ListSerde(serde.Nullable(serde.Void())).Serialize(topic, nil, []*struct{}{{}, nil})
	if hex.EncodeToString(b) != "01"+"00000002"+"ffffffff"+"ffffffff" {
		t.Fatalf("void list = %x", b)
	}
	// ByteArray elements must not alias the input.
	in := h("01" + "00000001" + "00000002" + "abcd")
	bl, _ := serde.ListSerde(serde.ByteArray()).Deserialize(topic, nil, in)
	in[len(in)-1] = 0
	if hex.EncodeToString(bl[0]) != "abcd" {
		t.Fatal("list element aliases the input")
	}
}

func TestListStrategy(t *testing.T) {
	type strategist interface{ Strategy() serde.ListStrategy }
	cases := []struct {
		s    any
		want serde.ListStrategy
	}{
		{serde.ListSerde(serde.Long()), serde.ListConstantSize},
		{serde.ListSerde(serde.Integer()), serde.ListConstantSize},
		{serde.ListSerde(serde.Short()), serde.ListConstantSize},
		{serde.ListSerde(serde.Float()), serde.ListConstantSize},
		{serde.ListSerde(serde.Double()), serde.ListConstantSize},
		{serde.ListSerde(serde.UUID()), serde.ListConstantSize},
		{serde.ListSerde(serde.Nullable(serde.Double())), serde.ListConstantSize},
		{serde.ListSerde(serde.Boolean()), serde.ListVariableSize},
		{serde.ListSerde(serde.String()), serde.ListVariableSize},
		{serde.ListSerde(serde.ByteArray()), serde.ListVariableSize},
		{serde.ListSerde(serde.JSON[int]()), serde.ListVariableSize},
	}
	for _, c := range cases {
		if got := c.s.(strategist).Strategy(); got != c.want {
			t.Errorf("%s: strategy %v, want %v", serde.Name(c.s), got, c.want)
		}
	}
	if serde.ListConstantSize.String() != "CONSTANT_SIZE" || serde.ListVariableSize.String() != "VARIABLE_SIZE" {
		t.Fatal("strategy names differ from Java's")
	}
}

type order struct {
	ID    string   `json:"id"`
	Qty   int      `json:"qty"`
	Tags  []string `json:"tags,omitempty"`
	Price float64  `json:"price"`
}

func TestJSON(t *testing.T) {
	s := serde.JSON[order]()
	b, err := s.Serialize(topic, nil, order{ID: "o1", Qty: 2, Price: 1.5})
	if err != nil || string(b) != `{"id":"o1","qty":2,"price":1.5}` {
		t.Fatalf("Serialize = %s, %v", b, err)
	}
	v, err := s.Deserialize(topic, nil, []byte(`{"id":"o2","qty":3,"tags":["a"],"price":0}`))
	if err != nil || !reflect.DeepEqual(v, order{ID: "o2", Qty: 3, Tags: []string{"a"}}) {
		t.Fatalf("Deserialize = %+v, %v", v, err)
	}
	_, err = s.Deserialize(topic, nil, []byte(`{"id":`))
	var se *serde.Error
	if !errors.Is(err, serde.ErrInvalidValue) || !errors.As(err, &se) || se.Len != 6 || se.Serde != "JSON<serde_test.order>" {
		t.Fatalf("malformed JSON err = %v", err)
	}
	if _, err := s.Deserialize(topic, nil, []byte{}); !errors.Is(err, serde.ErrInvalidValue) {
		t.Fatalf("empty JSON err = %v", err)
	}
	if _, err := serde.JSON[float64]().Serialize(topic, nil, math.Inf(1)); !errors.Is(err, serde.ErrUnsupported) {
		t.Fatalf("Inf err = %v", err)
	}

	p := serde.JSON[*order]()
	if b, err := p.Serialize(topic, nil, nil); b != nil || err != nil {
		t.Fatalf("nil pointer = %#v, %v", b, err)
	}
	if v, err := p.Deserialize(topic, nil, nil); v != nil || err != nil {
		t.Fatalf("nil bytes = %v, %v", v, err)
	}
	if v, err := p.Deserialize(topic, nil, []byte("null")); v != nil || err != nil {
		t.Fatalf("null text = %v, %v", v, err)
	}
	m := serde.JSON[map[string]int]()
	if b, _ := m.Serialize(topic, nil, nil); b != nil {
		t.Fatalf("nil map = %#v", b)
	}
}

func TestWindowed(t *testing.T) {
	w := serde.Windowed[string]{Key: "a", Window: serde.Window{Start: 0, End: 100}}
	if w.String() != "[a@0/100]" {
		t.Fatalf("String = %q", w.String())
	}
	ts := serde.TimeWindowed(serde.String(), 100*time.Millisecond)
	b, _ := ts.Serialize(topic, nil, serde.Windowed[string]{Key: "a", Window: serde.Window{Start: 5, End: 999}})
	if hex.EncodeToString(b) != "61"+"0000000000000005" {
		t.Fatalf("time-windowed = %x", b)
	}
	v, _ := ts.Deserialize(topic, nil, b)
	if v.Window != (serde.Window{Start: 5, End: 105}) {
		t.Fatalf("end from window size: %+v", v)
	}
	ss := serde.SessionWindowed(serde.String())
	b, _ = ss.Serialize(topic, nil, serde.Windowed[string]{Key: "a", Window: serde.Window{Start: 5, End: 9}})
	if hex.EncodeToString(b) != "61"+"0000000000000009"+"0000000000000005" {
		t.Fatalf("session-windowed = %x", b)
	}

	// Base key for partitioning, typed and untyped.
	bk, err := ts.(interface {
		SerializeBaseKey(string, *serde.Headers, serde.Windowed[string]) ([]byte, error)
	}).SerializeBaseKey(topic, nil, w)
	if err != nil || string(bk) != "a" {
		t.Fatalf("SerializeBaseKey = %q, %v", bk, err)
	}
	ub, ok := serde.Untyped(ss).(baseKeySerializer)
	if !ok {
		t.Fatal("Untyped(SessionWindowed) has no SerializeBaseKey")
	}
	if bk, err := ub.SerializeBaseKey(topic, nil, w); err != nil || string(bk) != "a" {
		t.Fatalf("untyped SerializeBaseKey = %q, %v", bk, err)
	}
	if _, err := ub.SerializeBaseKey(topic, nil, "a"); !errors.Is(err, serde.ErrWrongType) {
		t.Fatalf("untyped SerializeBaseKey(string) err = %v", err)
	}
	if _, ok := serde.Untyped(serde.Long()).(baseKeySerializer); ok {
		t.Fatal("Untyped(Long) has SerializeBaseKey")
	}

	// A key that serializes to null is an error (Java: NullPointerException).
	bw := serde.TimeWindowed(serde.ByteArray(), 10*time.Millisecond)
	if _, err := bw.Serialize(topic, nil, serde.Windowed[[]byte]{}); !errors.Is(err, serde.ErrInvalidValue) {
		t.Fatalf("nil key err = %v", err)
	}
	if b, err := bw.Serialize(topic, nil, serde.Windowed[[]byte]{Key: []byte{}}); err != nil || len(b) != 8 {
		t.Fatalf("empty key = %x, %v", b, err)
	}
}

func TestParseUUID(t *testing.T) {
	cases := []struct{ in, want string }{
		{"123e4567-e89b-42d3-a456-426614174000", "123e4567-e89b-42d3-a456-426614174000"},
		{"123E4567-E89B-42D3-A456-426614174000", "123e4567-e89b-42d3-a456-426614174000"},
		{"1-2-3-4-5", "00000001-0002-0003-0004-000000000005"},
		{"+a-+b-c-d-e", "0000000a-000b-000c-000d-00000000000e"},
		{"７fffffffffffffff-0-0-0-1", "ffffffff-0000-0000-0000-000000000001"},
	}
	for _, c := range cases {
		u, err := serde.ParseUUID(c.in)
		if err != nil || serde.FormatUUID(u) != c.want {
			t.Errorf("ParseUUID(%q) = %s, %v; want %s", c.in, serde.FormatUUID(u), err, c.want)
		}
	}
	for _, in := range []string{"", "1-2-3-4", "1-2-3-4-5-6", "-1-2-3-4", "1-2-3-4-", "x-2-3-4-5",
		"8000000000000000-0-0-0-0", "123e4567-e89b-42d3-a456-4266141740000"} {
		if _, err := serde.ParseUUID(in); !errors.Is(err, serde.ErrInvalidValue) {
			t.Errorf("ParseUUID(%q) err = %v, want ErrInvalidValue", in, err)
		}
	}
	u := [16]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}
	if s := serde.FormatUUID(u); s != "01020304-0506-0708-090a-0b0c0d0e0f10" {
		t.Fatalf("FormatUUID = %s", s)
	}
}

func TestFloatNaN(t *testing.T) {
	// Double canonicalises every NaN (doubleToLongBits); Float writes raw
	// bits (floatToRawIntBits), and Go's float32(NaN) is Java's Float.NaN.
	b, _ := serde.Double().Serialize(topic, nil, math.Float64frombits(0xfff0000000000abc))
	if hex.EncodeToString(b) != "7ff8000000000000" {
		t.Fatalf("Double NaN = %x", b)
	}
	b, _ = serde.Float().Serialize(topic, nil, float32(math.NaN()))
	if hex.EncodeToString(b) != "7fc00000" {
		t.Fatalf("Float NaN = %x", b)
	}
	b, _ = serde.Float().Serialize(topic, nil, math.Float32frombits(0x7f800001))
	if hex.EncodeToString(b) != "7f800001" {
		t.Fatalf("Float NaN payload = %x", b)
	}
}

func TestHeaders(t *testing.T) {
	var hs serde.Headers
	hs.Add("a", []byte("1")).Add("b", nil).Add("a", []byte("2"))
	if hs.Len() != 3 {
		t.Fatalf("Len = %d", hs.Len())
	}
	if last, ok := hs.LastHeader("a"); !ok || string(last.Value) != "2" {
		t.Fatalf("LastHeader(a) = %v, %v", last, ok)
	}
	if last, ok := hs.LastHeader("b"); !ok || last.Value != nil {
		t.Fatalf("LastHeader(b) = %#v, %v", last, ok)
	}
	if _, ok := hs.LastHeader("zz"); ok {
		t.Fatal("LastHeader of a missing key")
	}
	var as []string
	for x := range hs.Get("a") {
		as = append(as, string(x.Value))
	}
	if !slices.Equal(as, []string{"1", "2"}) {
		t.Fatalf("Get(a) = %v", as)
	}
	c := hs.Clone()
	c.ToSlice()[0].Value[0] = 'x' // ToSlice shares values; Clone does not share with hs
	if v, _ := hs.LastHeader("a"); string(v.Value) != "2" {
		t.Fatal("clone shares storage")
	}
	if first := hs.ToSlice()[0]; string(first.Value) != "1" {
		t.Fatal("clone shares value bytes")
	}
	if !c.Equal(&c) || c.Equal(&hs) {
		t.Fatal("Equal")
	}
	hs.Remove("a")
	var keys []string
	for x := range hs.All() {
		keys = append(keys, x.Key)
	}
	if !slices.Equal(keys, []string{"b"}) {
		t.Fatalf("after Remove: %v", keys)
	}
	var nilH *serde.Headers
	nc := nilH.Clone()
	if nilH.Len() != 0 || nilH.ToSlice() != nil || nc.Len() != 0 {
		t.Fatal("nil *Headers is not empty")
	}
	for range nilH.All() {
		t.Fatal("nil *Headers yields")
	}
	n := serde.NewHeaders(serde.Header{Key: "k", Value: []byte("v")})
	if !bytes.Equal(n.ToSlice()[0].Value, []byte("v")) {
		t.Fatal("NewHeaders")
	}
}

// baseKeySerializer is what the DSL's windowed partitioner looks for on an untyped key serde.
type baseKeySerializer interface {
	SerializeBaseKey(topic string, headers *serde.Headers, data any) ([]byte, error)
}
