package kstreams

import (
	"strings"
	"testing"
)

// TestRenderValue: JSON documents held as bytes or strings show as JSON, other text as text,
// bytes that are not UTF-8 in hex, Go values as their JSON encoding or %+v, all cut at the cap.
func TestRenderValue(t *testing.T) {
	type order struct {
		ID    int
		Items []string
	}
	big := strings.Repeat("x", liveValueCap+10)
	for _, c := range []struct {
		v          any
		json, text string
	}{
		{[]byte(`{"a": [1, 2]}`), `{"a": [1, 2]}`, ""},
		{`["x"]`, `["x"]`, ""},
		{"plain words", "", "plain words"},
		{[]byte("héllo"), "", "héllo"},
		{[]byte{0xff, 0x00, 0x10}, "", "0xff0010"},
		{int64(42), "42", ""},
		{order{7, []string{"a<b>"}}, `{"ID":7,"Items":["a\u003cb\u003e"]}`, ""},
		{make(chan int), "", "0x"}, // no JSON encoding: %+v, an address
		{big, "", big[:liveValueCap] + "… (cut)"},
	} {
		j, text := renderValue(c.v)
		if string(j) != c.json || c.text != "0x" && text != c.text || c.text == "0x" && !strings.HasPrefix(text, "0x") {
			t.Errorf("renderValue(%T): JSON %q, text %.40q; want %q, %.40q", c.v, j, text, c.json, c.text)
		}
	}
}
