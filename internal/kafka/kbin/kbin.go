// Package kbin reads and writes the primitive types of Kafka's classic (non-flexible) binary
// encoding, big-endian: int16, int32, int64, strings with an int16 length, bytes and arrays
// with an int32 length, -1 for null. The consumer protocol's subscription and assignment
// (internal/kafka/group) and Kafka Streams' SubscriptionInfo and AssignmentInfo
// (internal/assignment) are written in it. The flexible versions' compact encodings are in
// internal/kafka/streamsgroup.
//
// A Writer and a Reader keep the first error and ignore what follows it, so a codec writes or
// reads a whole message and checks Err once.
package kbin

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Writer appends to Buf; the first error sticks in Err.
type Writer struct {
	Buf []byte
	Err error
}

// SetErr keeps err unless an earlier error is kept.
func (w *Writer) SetErr(err error) {
	if w.Err == nil {
		w.Err = err
	}
}

// Int16 writes v.
func (w *Writer) Int16(v int16) { w.Buf = binary.BigEndian.AppendUint16(w.Buf, uint16(v)) }

// Int32 writes v.
func (w *Writer) Int32(v int32) { w.Buf = binary.BigEndian.AppendUint32(w.Buf, uint32(v)) }

// Int64 writes v.
func (w *Writer) Int64(v int64) { w.Buf = binary.BigEndian.AppendUint64(w.Buf, uint64(v)) }

// ArrayLen writes an array's element count (int32).
func (w *Writer) ArrayLen(n int) {
	if n > math.MaxInt32 {
		w.SetErr(fmt.Errorf("array of %d elements", n))
		return
	}
	w.Int32(int32(n))
}

// String writes a non-nullable string: int16 length, then the bytes.
func (w *Writer) String(s string) {
	if len(s) > math.MaxInt16 {
		w.SetErr(fmt.Errorf("string of %d bytes is longer than %d", len(s), math.MaxInt16))
		return
	}
	w.Int16(int16(len(s)))
	w.Buf = append(w.Buf, s...)
}

// NullableString writes a nullable string, "" as null.
func (w *Writer) NullableString(s string) {
	if s == "" {
		w.Int16(-1)
		return
	}
	w.String(s)
}

// Bytes writes non-nullable bytes: int32 length, then the bytes (nil as empty).
func (w *Writer) Bytes(b []byte) {
	if len(b) > math.MaxInt32 {
		w.SetErr(fmt.Errorf("bytes of %d bytes", len(b)))
		return
	}
	w.Int32(int32(len(b)))
	w.Buf = append(w.Buf, b...)
}

// NullableBytes writes nullable bytes, nil as null.
func (w *Writer) NullableBytes(b []byte) {
	if b == nil {
		w.Int32(-1)
		return
	}
	w.Bytes(b)
}

// Reader reads Buf from Off. The first error sticks in Err (wrapping Malformed, the caller's
// sentinel, when it is set) and makes every later read return zero values.
type Reader struct {
	Buf       []byte
	Off       int
	Err       error
	Malformed error
}

// Remaining returns the number of bytes not read yet.
func (r *Reader) Remaining() int { return len(r.Buf) - r.Off }

// Fail keeps an error formatted from format and args (wrapping Malformed) unless an earlier
// error is kept.
func (r *Reader) Fail(format string, args ...any) {
	if r.Err != nil {
		return
	}
	if r.Malformed != nil {
		r.Err = fmt.Errorf("%w: "+format, append([]any{r.Malformed}, args...)...)
		return
	}
	r.Err = fmt.Errorf(format, args...)
}

// Take returns the next n bytes (aliasing Buf, capacity capped), or nil with an error naming
// what when fewer are left.
func (r *Reader) Take(n int, what string) []byte {
	if r.Err != nil {
		return nil
	}
	if n < 0 || r.Remaining() < n {
		r.Fail("%s needs %d bytes at offset %d, %d left", what, n, r.Off, r.Remaining())
		return nil
	}
	b := r.Buf[r.Off : r.Off+n : r.Off+n]
	r.Off += n
	return b
}

// Int16 reads an int16.
func (r *Reader) Int16() int16 {
	if b := r.Take(2, "int16"); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

// Int32 reads an int32.
func (r *Reader) Int32() int32 {
	if b := r.Take(4, "int32"); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// Int64 reads an int64.
func (r *Reader) Int64() int64 {
	if b := r.Take(8, "int64"); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// ArrayLen reads the element count of the non-nullable array field; minSize is the least
// encoded size of one element (at least 1), so that a count the remaining bytes cannot hold
// fails before anything is allocated for it.
func (r *Reader) ArrayLen(field string, minSize int) int {
	n := int(r.Int32())
	if r.Err != nil {
		return 0
	}
	if n < 0 {
		r.Fail("non-nullable array %s is null", field)
		return 0
	}
	if n > r.Remaining()/max(minSize, 1) {
		r.Fail("array %s of %d elements does not fit in the %d bytes left", field, n, r.Remaining())
		return 0
	}
	return n
}

// String reads the non-nullable string field.
func (r *Reader) String(field string) string {
	n := int(r.Int16())
	if r.Err != nil {
		return ""
	}
	if n < 0 {
		r.Fail("non-nullable string %s is null", field)
		return ""
	}
	return string(r.Take(n, field))
}

// NullableString reads the nullable string field, null as "".
func (r *Reader) NullableString(field string) string {
	n := int(r.Int16())
	if r.Err != nil || n < 0 {
		return ""
	}
	return string(r.Take(n, field))
}

// Bytes reads the non-nullable bytes field (aliasing Buf).
func (r *Reader) Bytes(field string) []byte {
	n := int(r.Int32())
	if r.Err != nil {
		return nil
	}
	if n < 0 {
		r.Fail("non-nullable bytes %s is null", field)
		return nil
	}
	return r.Take(n, field)
}

// NullableBytes reads the nullable bytes field: null as nil, empty as a non-nil empty slice,
// else aliasing Buf.
func (r *Reader) NullableBytes(field string) []byte {
	n := int(r.Int32())
	if r.Err != nil || n < 0 {
		return nil
	}
	b := r.Take(n, field)
	if b == nil && r.Err == nil {
		b = []byte{}
	}
	return b
}
