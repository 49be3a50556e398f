package task

import (
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
)

// Records read through the String serde decode to the same strings whether or not they come
// from the intern table; invalid UTF-8 decodes as Java does (U+FFFD), never to a remembered
// string of other bytes, and long values bypass the table.
func TestInternedStringsDecodeAsTheSerde(t *testing.T) {
	var got []string
	p := &funcProc{process: func(ctx processor.ProcessorContext[any, any], r processor.Record[any, any]) error {
		got = append(got, r.Key.(string)+"="+r.Value.(string))
		return nil
	}}
	clock := int64(0)
	tk, _ := newTask(t, pipeline(p), &clock)
	long := strings.Repeat("x", internMaxLen+1)
	in := []RawRecord{
		raw("in", 0, 1, "word", "word"), raw("in", 1, 2, "word", "other"), raw("in", 2, 3, "other", "word"),
		{Topic: "in", Offset: 3, Timestamp: 4, Key: []byte{'a', 0xff}, Value: []byte("")},
		{Topic: "in", Offset: 4, Timestamp: 5, Key: []byte{'a', 0xff}, Value: []byte{}},
		raw("in", 5, 6, long, long), raw("in", 6, 7, "word", long),
	}
	for _, r := range in {
		if err := tk.AddRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, tk, 0)
	want := []string{"word=word", "word=other", "other=word", "a\uFFFD=", "a\uFFFD=", long + "=" + long, "word=" + long}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("decoded %q, want %q", got, want)
	}
	if tk.intern == nil {
		t.Fatal("intern table not used")
	}
	n := 0
	for _, s := range tk.intern.slots {
		if s.v != nil {
			n++
			if s.v.(string) != s.s || len(s.s) > internMaxLen || strings.ContainsRune(s.s, '\uFFFD') {
				t.Fatalf("slot holds %q boxed as %q", s.s, s.v)
			}
		}
	}
	if n < 1 || n > 3 { // "word", "other" and "" at most (slots may collide)
		t.Fatalf("%d slots used", n)
	}
}

// Sink keys and values serialized into the shared buffer are the serde's bytes, an empty string
// stays an empty (not null) slice, no slice reaches into the next record's bytes, and values
// larger than the buffer's room get arrays of their own.
func TestSinkBufferBytes(t *testing.T) {
	p := &funcProc{}
	clock := int64(0)
	tk, c := newTask(t, pipeline(p), &clock)
	big := strings.Repeat("b", sinkBufSize)
	vals := []string{"v1", "", big, "after-big", "v5"}
	for i, v := range vals {
		r := raw("in", int64(i), int64(i), "k", v)
		if v == "" {
			r.Value = []byte{}
		}
		if err := tk.AddRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, tk, 0)
	if len(c.out) != len(vals) {
		t.Fatalf("%d records out", len(c.out))
	}
	for i, r := range c.out {
		if string(r.Key) != "k" || string(r.Value) != vals[i] {
			t.Fatalf("record %d: %q=%q, want k=%q", i, r.Key, r.Value, vals[i])
		}
		if r.Value == nil {
			t.Fatalf("record %d: empty string serialized as null", i)
		}
		if cap(r.Key) != len(r.Key) || cap(r.Value) != len(r.Value) {
			t.Fatalf("record %d: capacity beyond the bytes (key %d/%d, value %d/%d)", i, len(r.Key), cap(r.Key), len(r.Value), cap(r.Value))
		}
	}
	// Appending to one record's bytes must not change another's.
	_ = append(c.out[0].Key, 'X')
	_ = append(c.out[0].Value, 'Y')
	if string(c.out[1].Key) != "k" || string(c.out[1].Value) != "" || string(c.out[0].Value) != "v1" {
		t.Fatal("records share bytes")
	}
}

// A sink whose key and value serializers are the String serde serializes equal key and value
// strings once: the value is the key's bytes. Other records get their own bytes, a null
// value stays null.
func TestSinkEqualKeyValueSerializedOnce(t *testing.T) {
	p := &funcProc{}
	clock := int64(0)
	tk, c := newTask(t, pipeline(p), &clock)
	in := []RawRecord{raw("in", 0, 0, "word", "word"), raw("in", 1, 1, "word", "other"), {Topic: "in", Offset: 2, Timestamp: 2, Key: []byte{}, Value: []byte{}},
		{Topic: "in", Offset: 3, Timestamp: 3, Key: []byte("k")}}
	for _, r := range in {
		if err := tk.AddRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, tk, 0)
	want := []struct {
		k, v   string
		null   bool
		shared bool
	}{{"word", "word", false, true}, {"word", "other", false, false}, {"", "", false, false}, {"k", "", true, false}}
	if len(c.out) != len(want) {
		t.Fatalf("%d records out, want %d", len(c.out), len(want))
	}
	for i, w := range want {
		r := c.out[i]
		if string(r.Key) != w.k || string(r.Value) != w.v || (r.Value == nil) != w.null || r.Key == nil {
			t.Fatalf("record %d: %q=%q (null value %v), want %q=%q (null %v)", i, r.Key, r.Value, r.Value == nil, w.k, w.v, w.null)
		}
		if w.shared && &r.Key[0] != &r.Value[0] {
			t.Errorf("record %d: equal key and value serialized twice", i)
		}
		if !w.shared && len(r.Key) > 0 && len(r.Value) > 0 && &r.Key[0] == &r.Value[0] {
			t.Errorf("record %d: different key and value share bytes", i)
		}
	}
}
