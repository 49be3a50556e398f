package serde

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kstreams-go/kstreams/internal/serdeapi"
)

func TestAppendSerializeMatchesSerialize(t *testing.T) {
	prefix := []byte{1, 2, 3}
	long := Untyped(Long()).(AppendSerializer[any])
	got, err := long.AppendSerialize(append([]byte(nil), prefix...), "t", nil, int64(-2))
	if err != nil || !bytes.Equal(got, []byte{1, 2, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}) {
		t.Fatalf("long: %x, %v", got, err)
	}
	str := Untyped(String()).(AppendSerializer[any])
	got, err = str.AppendSerialize(append([]byte(nil), prefix...), "t", nil, "héllo")
	if err != nil || !bytes.Equal(got, append([]byte{1, 2, 3}, "héllo"...)) {
		t.Fatalf("string: %x, %v", got, err)
	}
	got, err = str.AppendSerialize(prefix, "t", nil, nil)
	if err != nil || !bytes.Equal(got, prefix) {
		t.Fatalf("null: %x, %v", got, err)
	}
	if _, err := long.AppendSerialize(nil, "t", nil, "x"); !errors.Is(err, ErrWrongType) {
		t.Fatalf("wrong type: %v", err)
	}
	// A serde without AppendSerialize: the Serialize bytes are appended.
	dbl := Untyped(Double()).(AppendSerializer[any])
	want, _ := Double().Serialize("t", nil, 1.5)
	got, err = dbl.AppendSerialize(append([]byte(nil), prefix...), "t", nil, 1.5)
	if err != nil || !bytes.Equal(got, append([]byte{1, 2, 3}, want...)) {
		t.Fatalf("double: %x, %v", got, err)
	}
}

func TestSerdeAPI(t *testing.T) {
	for _, c := range []struct {
		s                 any
		isString, inPlace bool
	}{
		{String(), true, true}, {Untyped(String()), true, true}, {Untyped(Long()), false, true}, {Long(), false, true},
		{Untyped(ByteArray()), false, false}, {Double(), false, false}, {Untyped(Double()), false, false}, {nil, false, false},
	} {
		if got := serdeapi.IsString(c.s); got != c.isString {
			t.Errorf("IsString(%v) = %v, want %v", Name(c.s), got, c.isString)
		}
		if got := serdeapi.AppendsInPlace(c.s); got != c.inPlace {
			t.Errorf("AppendsInPlace(%v) = %v, want %v", Name(c.s), got, c.inPlace)
		}
	}
}

// The primitive serdes and Untyped of them ignore their Headers, so the store layers may hand
// them one shared empty Headers; a serde made with New, or Untyped of it, may use them.
func TestIgnoresHeaders(t *testing.T) {
	custom := New(func(_ string, h *Headers, v string) ([]byte, error) { h.Add("k", nil); return []byte(v), nil },
		func(_ string, _ *Headers, b []byte) (string, error) { return string(b), nil })
	for name, c := range map[string]struct {
		s    any
		want bool
	}{
		"String": {String(), true}, "Long": {Long(), true}, "Integer": {Integer(), true},
		"Double": {Double(), true}, "ByteArray": {ByteArray(), true}, "Untyped(Long)": {Untyped(Long()), true},
		"New": {custom, false}, "Untyped(New)": {Untyped(custom), false},
	} {
		if got := serdeapi.IgnoresHeaders(c.s); got != c.want {
			t.Errorf("%s: IgnoresHeaders = %v, want %v", name, got, c.want)
		}
	}
}
