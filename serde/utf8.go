package serde

import (
	"strings"
	"unicode/utf8"
)

// javaDecodeUTF8 decodes b as Java's new String(b, StandardCharsets.UTF_8)
// does (JDK 17, checked by the conformance vectors): well-formed sequences
// are kept and each maximal subpart of an ill-formed sequence (Unicode 3.9,
// "U+FFFD substitution of maximal subparts") becomes one U+FFFD, except that
// the JDK treats a lead byte ED like E1..EC (second byte 80..BF) when
// measuring the subpart, so an encoded surrogate ED A0..BF xx becomes one
// U+FFFD rather than three.
func javaDecodeUTF8(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			sb.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			sb.Write(b[i : i+size])
			i += size
			continue
		}
		sb.WriteRune(utf8.RuneError)
		i += maximalSubpart(b[i:])
	}
	return sb.String()
}

// maximalSubpart returns how many bytes at the start of b (which does not
// begin with a well-formed sequence) form the longest prefix of a
// well-formed UTF-8 sequence, at least 1.
func maximalSubpart(b []byte) int {
	lead := b[0]
	var n int                        // total length of a sequence with this lead byte
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	switch {
	case lead >= 0xC2 && lead <= 0xDF:
		n = 2
	case lead == 0xE0:
		n, lo = 3, 0xA0
	case lead >= 0xE1 && lead <= 0xEF: // ED included: see javaDecodeUTF8
		n = 3
	case lead == 0xF0:
		n, lo = 4, 0x90
	case lead >= 0xF1 && lead <= 0xF3:
		n = 4
	case lead == 0xF4:
		n, hi = 4, 0x8F
	default:
		return 1
	}
	i := 1
	for ; i < n && i < len(b); i++ {
		if b[i] < lo || b[i] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return i
}
