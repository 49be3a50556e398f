package streamsgroup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Kafka's primitive encodings (the protocol guide's "Protocol Primitive Types"): big-endian
// integers, unsigned varints, and in flexible versions compact strings and arrays (length
// + 1 as an unsigned varint, 0 for null) and tagged-field sections after every structure.

// ErrMalformed is wrapped by every error decoding a response that does not follow the schema.
var ErrMalformed = errors.New("streamsgroup: malformed response")

// enc appends encodings to a buffer.
type enc struct{ b []byte }

func (e *enc) int8(v int8)   { e.b = append(e.b, byte(v)) }
func (e *enc) int16(v int16) { e.b = binary.BigEndian.AppendUint16(e.b, uint16(v)) }
func (e *enc) uint16(v uint16) {
	e.b = binary.BigEndian.AppendUint16(e.b, v)
}
func (e *enc) int32(v int32) { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }
func (e *enc) int64(v int64) { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}
func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

// compactString is a non-null compact string.
func (e *enc) compactString(s string) {
	e.uvarint(uint64(len(s)) + 1)
	e.b = append(e.b, s...)
}

// compactNullableString encodes nil as null.
func (e *enc) compactNullableString(s *string) {
	if s == nil {
		e.uvarint(0)
		return
	}
	e.compactString(*s)
}

// compactBytes is a non-null compact byte array.
func (e *enc) compactBytes(b []byte) {
	e.uvarint(uint64(len(b)) + 1)
	e.b = append(e.b, b...)
}

// compactArrayLen starts a compact array of n elements; n < 0 is null.
func (e *enc) compactArrayLen(n int) {
	if n < 0 {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(n) + 1)
}

// nullableStruct starts a nullable structure: -1 for null, 1 when present.
func (e *enc) nullableStruct(present bool) {
	if present {
		e.int8(1)
	} else {
		e.int8(-1)
	}
}

// noTags ends a structure of a flexible version with an empty tagged-field section.
func (e *enc) noTags() { e.uvarint(0) }

// legacyString is a non-compact string (int16 length), used by request header v1/v2's
// client id and by SaslHandshake; nil is null (-1).
func (e *enc) legacyString(s *string) {
	if s == nil {
		e.int16(-1)
		return
	}
	e.int16(int16(len(*s)))
	e.b = append(e.b, *s...)
}

func (e *enc) compactStrings(ss []string) {
	e.compactArrayLen(len(ss))
	for _, s := range ss {
		e.compactString(s)
	}
}

func (e *enc) compactInt32s(vs []int32) {
	e.compactArrayLen(len(vs))
	for _, v := range vs {
		e.int32(v)
	}
}

// dec reads encodings; the first failure sticks in err and later reads return zero values.
type dec struct {
	b   []byte
	off int
	err error
}

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: at byte %d: %s", ErrMalformed, d.off, fmt.Sprintf(format, args...))
	}
}

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b)-d.off < n {
		d.fail("need %d bytes, %d left", n, len(d.b)-d.off)
		return nil
	}
	v := d.b[d.off : d.off+n]
	d.off += n
	return v
}

func (d *dec) int8() int8 {
	if b := d.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (d *dec) bool() bool { return d.int8() != 0 }

func (d *dec) int16() int16 {
	if b := d.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (d *dec) uint16() uint16 { return uint16(d.int16()) }

func (d *dec) int32() int32 {
	if b := d.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (d *dec) int64() int64 {
	if b := d.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("bad unsigned varint")
		return 0
	}
	d.off += n
	return v
}

// compactLen reads a compact length: -1 for null.
func (d *dec) compactLen() int {
	v := d.uvarint()
	if d.err != nil {
		return -1
	}
	if v > math.MaxInt32 {
		d.fail("length %d", v)
		return -1
	}
	return int(v) - 1
}

func (d *dec) compactNullableString() *string {
	n := d.compactLen()
	if n < 0 {
		return nil
	}
	s := string(d.take(n))
	return &s
}

func (d *dec) compactString() string {
	s := d.compactNullableString()
	if s == nil {
		if d.err == nil {
			d.fail("null string where the schema has none")
		}
		return ""
	}
	return *s
}

func (d *dec) compactBytes() []byte {
	n := d.compactLen()
	if n < 0 {
		return nil
	}
	return append([]byte(nil), d.take(n)...)
}

// arrayLen reads a compact array length (-1 null), refusing lengths the rest of the
// buffer cannot hold (each element takes at least one byte).
func (d *dec) arrayLen() int {
	n := d.compactLen()
	if n > len(d.b)-d.off {
		d.fail("array of %d elements in %d bytes", n, len(d.b)-d.off)
		return -1
	}
	return n
}

func (d *dec) compactStrings() []string {
	n := d.arrayLen()
	if n < 0 {
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		out = append(out, d.compactString())
	}
	return out
}

func (d *dec) compactInt32s() []int32 {
	n := d.arrayLen()
	if n < 0 {
		return nil
	}
	out := make([]int32, 0, n)
	for range n {
		out = append(out, d.int32())
	}
	return out
}

// nullableStruct reads a nullable structure's marker: whether it is present.
func (d *dec) nullableStruct() bool { return d.int8() >= 0 }

// skipTags skips a tagged-field section (no field we read is tagged).
func (d *dec) skipTags() {
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		d.uvarint() // tag
		size := d.uvarint()
		if size > uint64(len(d.b)) {
			d.fail("tagged field of %d bytes", size)
			return
		}
		d.take(int(size))
	}
}

// done checks the whole buffer was read.
func (d *dec) done() error {
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d bytes left over", len(d.b)-d.off)
	}
	return d.err
}
