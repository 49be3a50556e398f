package kbin

import (
	"bytes"
	"errors"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	var w Writer
	w.Int16(-2)
	w.Int32(70000)
	w.Int64(-1 << 40)
	w.ArrayLen(2)
	w.String("topic")
	w.NullableString("")
	w.Bytes(nil)
	w.NullableBytes(nil)
	w.NullableBytes([]byte{})
	w.NullableBytes([]byte("x"))
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	want := []byte{0xff, 0xfe, 0, 1, 0x11, 0x70, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 5, 't', 'o', 'p', 'i', 'c',
		0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 'x'}
	if !bytes.Equal(w.Buf, want) {
		t.Fatalf("encoded % x\nwant    % x", w.Buf, want)
	}
	r := Reader{Buf: w.Buf}
	if v := r.Int16(); v != -2 {
		t.Errorf("int16 %d", v)
	}
	if v := r.Int32(); v != 70000 {
		t.Errorf("int32 %d", v)
	}
	if v := r.Int64(); v != -1<<40 {
		t.Errorf("int64 %d", v)
	}
	if n := r.ArrayLen("a", 1); n != 2 {
		t.Errorf("array len %d", n)
	}
	if s := r.String("s"); s != "topic" {
		t.Errorf("string %q", s)
	}
	if s := r.NullableString("n"); s != "" {
		t.Errorf("nullable string %q", s)
	}
	if b := r.Bytes("b"); b == nil || len(b) != 0 {
		t.Errorf("bytes %v", b)
	}
	if b := r.NullableBytes("nb"); b != nil {
		t.Errorf("null bytes %v", b)
	}
	if b := r.NullableBytes("eb"); b == nil || len(b) != 0 {
		t.Errorf("empty bytes %v", b)
	}
	if b := r.NullableBytes("xb"); string(b) != "x" {
		t.Errorf("bytes %q", b)
	}
	if r.Err != nil || r.Remaining() != 0 {
		t.Fatalf("err %v, %d bytes left", r.Err, r.Remaining())
	}
}

// The first error sticks, wraps the caller's sentinel and names what was short; a count the
// remaining bytes cannot hold fails before anything is allocated.
func TestReaderErrors(t *testing.T) {
	malformed := errors.New("malformed thing")
	r := Reader{Buf: []byte{0, 0, 0, 9, 1, 2}, Malformed: malformed}
	if n := r.ArrayLen("partitions", 4); n != 0 {
		t.Fatalf("array len %d", n)
	}
	if !errors.Is(r.Err, malformed) || r.Err.Error() != "malformed thing: array partitions of 9 elements does not fit in the 2 bytes left" {
		t.Fatalf("error %v", r.Err)
	}
	if v := r.Int16(); v != 0 {
		t.Fatalf("read after error: %d", v)
	}
	r = Reader{Buf: []byte{0, 3, 'a'}}
	if s := r.String("host"); s != "" || r.Err == nil || r.Err.Error() != "host needs 3 bytes at offset 2, 1 left" {
		t.Fatalf("string %q, error %v", s, r.Err)
	}
	r = Reader{Buf: []byte{0xff, 0xff}}
	if r.String("topic"); r.Err == nil || r.Err.Error() != "non-nullable string topic is null" {
		t.Fatalf("error %v", r.Err)
	}
}
