package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// TestMessageIndexes checks the encoding against values worked out by hand from the format:
// a zig-zag varint n is written as the varint of 2n, so count 2 is 04, index 1 is 02 and
// index 64 is the two bytes 80 01; [0] alone is the single byte 00.
func TestMessageIndexes(t *testing.T) {
	for _, c := range []struct {
		idx  []int
		want []byte
	}{
		{[]int{0}, []byte{0x00}},
		{[]int{1}, []byte{0x02, 0x02}},
		{[]int{0, 0}, []byte{0x04, 0x00, 0x00}},
		{[]int{1, 0}, []byte{0x04, 0x02, 0x00}},
		{[]int{1, 0, 0}, []byte{0x06, 0x02, 0x00, 0x00}},
		{[]int{2, 1}, []byte{0x04, 0x04, 0x02}},
		{[]int{64}, []byte{0x02, 0x80, 0x01}},
	} {
		got := AppendMessageIndexes([]byte{0xaa}, c.idx)
		if !bytes.Equal(got[1:], c.want) || got[0] != 0xaa {
			t.Errorf("AppendMessageIndexes(%v) = % x; want % x", c.idx, got[1:], c.want)
		}
		back, n, err := ReadMessageIndexes(append(c.want, 0x08, 0x96, 0x01))
		if err != nil || n != len(c.want) || !reflect.DeepEqual(back, c.idx) {
			t.Errorf("ReadMessageIndexes(% x) = %v, %d, %v", c.want, back, n, err)
		}
	}
}

func TestMessageIndexesMalformed(t *testing.T) {
	for _, data := range [][]byte{
		nil,                // nothing
		{0x80},             // count varint does not end
		{0x01},             // count -1
		{0x04, 0x02},       // count 2, one index
		{0x02, 0x03},       // index -2
		{0xfe, 0xff, 0x7f}, // count far too large
	} {
		if _, _, err := ReadMessageIndexes(data); !errors.Is(err, ErrMessageIndexes) {
			t.Errorf("ReadMessageIndexes(% x) err = %v; want ErrMessageIndexes", data, err)
		}
	}
}

func TestHeader(t *testing.T) {
	b := AppendHeader(nil, 0x01020304)
	if !bytes.Equal(b, []byte{0, 1, 2, 3, 4}) {
		t.Fatalf("AppendHeader = % x", b)
	}
	id, rest, err := ParseHeader([]byte{0, 0, 0, 1, 0, 9})
	if id != 256 || !bytes.Equal(rest, []byte{9}) || err != nil {
		t.Fatalf("ParseHeader = %d, % x, %v", id, rest, err)
	}
	if _, _, err := ParseHeader([]byte{0, 0, 0}); !errors.Is(err, ErrTooShort) {
		t.Fatalf("short: %v", err)
	}
	if _, _, err := ParseHeader([]byte{1, 0, 0, 0, 1}); !errors.Is(err, ErrMagicByte) {
		t.Fatalf("magic: %v", err)
	}
}
