package serde

import (
	"encoding/hex"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// ParseUUID parses s as java.util.UUID.fromString does (JDK 17), including
// its leniencies: hex digits of either case, five dash-separated fields of
// any length 1 or more (each parsed as a Java long and then truncated to
// 8, 4, 4, 4 and 12 hex digits), a leading '+' on a field, and the Unicode
// decimal digits and full-width letters that Character.digit accepts. It
// rejects strings longer than 36 characters, other than exactly four dashes,
// empty fields, and fields beyond the range of a Java long. The error wraps
// ErrInvalidValue.
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	if utf8.RuneCountInString(s) > 36 {
		return u, fmt.Errorf("%w: UUID string too large", ErrInvalidValue)
	}
	var dash [4]int
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '-' {
			if n == 4 {
				return u, fmt.Errorf("%w: invalid UUID string %q", ErrInvalidValue, s)
			}
			dash[n] = i
			n++
		}
	}
	if n != 4 {
		return u, fmt.Errorf("%w: invalid UUID string %q", ErrInvalidValue, s)
	}
	fields := [5]string{s[:dash[0]], s[dash[0]+1 : dash[1]], s[dash[1]+1 : dash[2]], s[dash[2]+1 : dash[3]], s[dash[3]+1:]}
	var v [5]uint64
	for i, f := range fields {
		x, err := javaParseHexLong(f)
		if err != nil {
			return u, fmt.Errorf("%w: invalid UUID string %q: %v", ErrInvalidValue, s, err)
		}
		v[i] = x
	}
	msb := (v[0]&0xffffffff)<<32 | (v[1]&0xffff)<<16 | v[2]&0xffff
	lsb := (v[3]&0xffff)<<48 | v[4]&0xffffffffffff
	for i := range 8 {
		u[i] = byte(msb >> (56 - 8*i))
		u[8+i] = byte(lsb >> (56 - 8*i))
	}
	return u, nil
}

// javaParseHexLong parses s as Long.parseLong(s, 16) does and returns the
// two's complement bits of the result.
func javaParseHexLong(s string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty field")
	}
	neg := false
	switch s[0] {
	case '+', '-':
		neg = s[0] == '-'
		s = s[1:]
		if s == "" {
			return 0, fmt.Errorf("lone sign")
		}
	}
	const limit = uint64(1) << 63 // magnitude limit: 2^63-1 positive, 2^63 negative
	var m uint64
	for _, r := range s {
		d := javaHexDigit(r)
		if d < 0 {
			return 0, fmt.Errorf("%q is not a hex digit", r)
		}
		if m > (limit)/16 {
			return 0, fmt.Errorf("out of range")
		}
		m = m*16 + uint64(d)
		if m > limit || (!neg && m == limit) {
			return 0, fmt.Errorf("out of range")
		}
	}
	if neg {
		return -m, nil
	}
	return m, nil
}

// javaHexDigit returns the value of r as Character.digit(char, 16) gives it,
// or -1: ASCII and full-width 0-9, A-F, a-f, and BMP Unicode decimal digits
// (category Nd). Characters outside the BMP are two Java chars and never
// digits.
func javaHexDigit(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r >= 'a' && r <= 'f':
		return int(r-'a') + 10
	case r >= 'A' && r <= 'F':
		return int(r-'A') + 10
	case r >= 0xFF21 && r <= 0xFF26: // full-width A-F
		return int(r-0xFF21) + 10
	case r >= 0xFF41 && r <= 0xFF46: // full-width a-f
		return int(r-0xFF41) + 10
	case r < 0x80 || r > 0xFFFF:
		return -1
	}
	// Decimal digits (category Nd) come in runs of ten starting at a digit
	// zero, and the table merges adjacent runs into one range.
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) < rg.Lo {
			break
		}
		if uint16(r) <= rg.Hi && rg.Stride == 1 {
			return int(uint16(r)-rg.Lo) % 10
		}
	}
	return -1
}

// FormatUUID returns the canonical 36-character lower-case form of u,
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, as java.util.UUID.toString does. u
// holds the most significant byte first (bytes 0-7 are Java's
// getMostSignificantBits), the layout of github.com/google/uuid.UUID.
func FormatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// UUID returns the serde of UUIDs, held as [16]byte most significant byte
// first, as text (Java: UUIDSerializer/
// UUIDDeserializer with their default UTF-8 encoding).
//
// Layout: the 36-character canonical lower-case text as UTF-8, no length
// prefix. Deserialize decodes the bytes as Java UTF-8 (see String) and parses
// them as ParseUUID does; text java.util.UUID.fromString rejects gives an
// *Error wrapping ErrCorrupt and ParseUUID's error (ErrInvalidValue). nil bytes give the zero [16]byte. FixedSize is
// 36, so lists of UUIDs use Java's constant-size layout.
func UUID() Serde[[16]byte] { return uuidSerde{} }

type uuidSerde struct{}

func (uuidSerde) String() string { return "UUID" }
func (uuidSerde) FixedSize() int { return 36 }

func (uuidSerde) Serialize(_ string, _ *Headers, data [16]byte) ([]byte, error) {
	return []byte(FormatUUID(data)), nil
}

func (s uuidSerde) Deserialize(topic string, _ *Headers, data []byte) ([16]byte, error) {
	if data == nil {
		return [16]byte{}, nil
	}
	text := string(data)
	if !utf8.Valid(data) {
		text = javaDecodeUTF8(data)
	}
	u, err := ParseUUID(text)
	if err != nil {
		return [16]byte{}, deserErr(s.String(), topic, data, fmt.Errorf("%w: %w", ErrCorrupt, err))
	}
	return u, nil
}
