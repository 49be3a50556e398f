package ktable

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/kstreams-go/kstreams/serde"
)

// The expected bytes are Java's ChangedSerializer output as recorded on the repartition topics
// of conformance/golden/dsl-table-*.out.jsonl (e.g. 047531753102 = new "u1", old "u1").
func TestChangeSerdeJavaBytes(t *testing.T) {
	s := ChangeSerde(serde.Untyped(serde.String()))
	l := ChangeSerde(serde.Untyped(serde.Long()))
	cases := []struct {
		s    serde.Serde[any]
		c    Change
		want string
	}{
		{s, Change{New: "u1"}, "753101"},
		{s, Change{Old: "u1"}, "753100"},
		{s, Change{New: "u1", Old: "u1"}, "047531753102"},
		{l, Change{New: int64(10), Old: int64(5)}, "10000000000000000a000000000000000502"},
		{s, Change{New: ""}, "01"},
	}
	for _, c := range cases {
		b, err := c.s.Serialize("t", nil, c.c)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(b); got != c.want {
			t.Errorf("serialize %v = %s, want %s", c.c, got, c.want)
		}
		back, err := c.s.Deserialize("t", nil, b)
		if err != nil {
			t.Fatal(err)
		}
		if back != c.c {
			t.Errorf("round trip %v -> %v", c.c, back)
		}
	}
	if _, err := s.Serialize("t", nil, Change{}); !errors.Is(err, ErrBadChange) {
		t.Errorf("empty Change: %v, want ErrBadChange", err)
	}
	if _, err := s.Deserialize("t", nil, []byte{'a', 9}); !errors.Is(err, ErrBadChange) {
		t.Errorf("unknown flag: %v, want ErrBadChange", err)
	}
	// Versioned flags (Java 4.x reads them): 4 = new value + is-latest byte.
	if c, err := s.Deserialize("t", nil, []byte{'x', 1, 4}); err != nil || c != (Change{New: "x"}) {
		t.Errorf("flag 4: %v %v", c, err)
	}
	// A nil inner serde takes default.value.serde from the engine hook.
	d := ChangeSerde(nil)
	d.(interface{ UseDefaultSerdes(k, v serde.Serde[any]) }).UseDefaultSerdes(nil, serde.Untyped(serde.String()))
	if b, err := d.Serialize("t", nil, Change{New: "a"}); err != nil || !bytes.Equal(b, []byte{'a', 1}) {
		t.Errorf("default inner: %x %v", b, err)
	}
}
