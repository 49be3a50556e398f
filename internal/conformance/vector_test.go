package conformance

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTypedValueJSONRoundTrip(t *testing.T) {
	cases := []struct {
		v    TypedValue
		json string
	}{
		{Null(), `null`},
		{String("a\"<&>ü"), `{"string":"a\"<&>ü"}`},
		{String(""), `{"string":""}`},
		{Long(math.MinInt64), `{"long":-9223372036854775808}`},
		{Long(math.MaxInt64), `{"long":9223372036854775807}`},
		{Integer(-5), `{"integer":-5}`},
		{Short(32767), `{"short":32767}`},
		{Double(1.5), `{"double":1.5}`},
		{Double(math.Inf(1)), `{"double":"Infinity"}`},
		{Double(math.Inf(-1)), `{"double":"-Infinity"}`},
		{Double(math.NaN()), `{"double":"NaN"}`},
		{Float(0.1), `{"float":0.1}`},
		{Float(float32(math.Inf(-1))), `{"float":"-Infinity"}`},
		{Boolean(true), `{"boolean":true}`},
		{Boolean(false), `{"boolean":false}`},
		{Bytes([]byte{0, 0xff, 0x10}), `{"bytes":"00ff10"}`},
		{Bytes(nil), `{"bytes":""}`},
		{UUID("123E4567-e89b-12d3-a456-426614174000"), `{"uuid":"123e4567-e89b-12d3-a456-426614174000"}`},
	}
	for _, c := range cases {
		// json.Marshal would escape <, > and & again; the vector writers do not.
		got, err := marshalNoHTMLEscape(c.v)
		if err != nil {
			t.Fatalf("marshal %#v: %v", c.v, err)
		}
		if string(got) != c.json {
			t.Errorf("marshal %#v = %s, want %s", c.v, got, c.json)
		}
		var back TypedValue
		if err := json.Unmarshal([]byte(c.json), &back); err != nil {
			t.Fatalf("unmarshal %s: %v", c.json, err)
		}
		if !back.Equal(c.v) {
			t.Errorf("unmarshal %s = %#v, want %#v", c.json, back, c.v)
		}
	}
}

func TestTypedValueJSONAcceptsJavaSpellings(t *testing.T) {
	// Jackson writes doubles with Double.toString, e.g. 1.0E21 and 1.0.
	for in, want := range map[string]TypedValue{
		`{"double":1.0E21}`: Double(1e21),
		`{"double":1.0}`:    Double(1),
		`{"float":1.1}`:     Float(1.1),
		`{ "long" : 7 }`:    Long(7),
	} {
		var v TypedValue
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !v.Equal(want) {
			t.Errorf("%s = %#v, want %#v", in, v, want)
		}
	}
}

func TestTypedValueJSONRejects(t *testing.T) {
	for _, in := range []string{
		`{}`, `{"string":"a","long":1}`, `{"text":"a"}`, `{"string":5}`, `{"long":"5"}`, `{"long":1.5}`,
		`{"long":9223372036854775808}`, `{"integer":2147483648}`, `{"short":-32769}`, `{"double":"nan"}`,
		`{"boolean":1}`, `{"bytes":"0g"}`, `{"bytes":"abc"}`, `{"uuid":"not-a-uuid"}`, `"a"`, `5`,
	} {
		var v TypedValue
		err := json.Unmarshal([]byte(in), &v)
		if !errors.Is(err, ErrBadValue) {
			t.Errorf("%s: err = %v, want ErrBadValue", in, err)
		}
	}
}

// Expected bytes follow Kafka's serializers (big-endian, IEEE bits,
// UUID as text); the long and string cases equal what the Java harness wrote for wordcount.
func TestSerializeDeserialize(t *testing.T) {
	cases := []struct {
		v   TypedValue
		hex string
	}{
		{String("kafka"), "6b61666b61"},
		{String(""), ""},
		{Long(1), "0000000000000001"},
		{Long(-2), "fffffffffffffffe"},
		{Integer(258), "00000102"},
		{Short(-1), "ffff"},
		{Double(1.5), "3ff8000000000000"},
		{Double(math.NaN()), "7ff8000000000000"},
		{Float(1.5), "3fc00000"},
		{Boolean(true), "01"},
		{Boolean(false), "00"},
		{Bytes([]byte{1, 2}), "0102"},
		{UUID("123e4567-e89b-12d3-a456-426614174000"), hex.EncodeToString([]byte("123e4567-e89b-12d3-a456-426614174000"))},
	}
	for _, c := range cases {
		b, err := c.v.Serialize()
		if err != nil {
			t.Fatalf("serialize %v: %v", c.v, err)
		}
		if got := hex.EncodeToString(b); got != c.hex || b == nil {
			t.Errorf("serialize %v = %q (nil %v), want %q", c.v, got, b == nil, c.hex)
		}
		back, err := Deserialize(c.v.Kind, b)
		if err != nil {
			t.Fatalf("deserialize %v: %v", c.v, err)
		}
		if !back.Equal(c.v) {
			t.Errorf("deserialize %s as %s = %v, want %v", c.hex, c.v.Kind, back, c.v)
		}
	}
	if b, err := Null().Serialize(); b != nil || err != nil {
		t.Errorf("null serializes to %v, %v; want nil, nil", b, err)
	}
	if v, err := Deserialize(KindLong, nil); !v.IsNull() || err != nil {
		t.Errorf("nil bytes deserialize to %v, %v; want null", v, err)
	}
	for _, bad := range []struct {
		k Kind
		b []byte
	}{{KindLong, []byte{1}}, {KindInteger, make([]byte, 8)}, {KindBoolean, []byte{2}}, {KindUUID, []byte("x")}} {
		if _, err := Deserialize(bad.k, bad.b); !errors.Is(err, ErrBadBytes) {
			t.Errorf("deserialize %x as %s: err = %v, want ErrBadBytes", bad.b, bad.k, err)
		}
	}
	bad := TypedValue{Kind: KindBytes, Value: []int{1}}
	if !bad.Equal(bad) || bad.Equal(Bytes([]byte{1})) {
		t.Error("Equal on an invalid value holding a slice")
	}
	if _, err := (TypedValue{Kind: KindLong, Value: 5}).Serialize(); !errors.Is(err, ErrBadValue) {
		t.Errorf("long holding an int: err = %v, want ErrBadValue", err)
	}
}

func TestEventsRoundTrip(t *testing.T) {
	events := []Event{
		RecordEvent(InputRecord{Topic: "in", Key: String("k"), Value: Long(5), Timestamp: 1000,
			Headers: []Header{{Key: "h", Value: String("v")}, {Key: "n", Value: Null()}}}),
		RecordEvent(InputRecord{Topic: "in", Key: Null(), Value: Null(), Timestamp: -1}),
		AdvanceEvent(0),
		AdvanceEvent(1500),
	}
	var buf bytes.Buffer
	if err := WriteEvents(&buf, events); err != nil {
		t.Fatal(err)
	}
	want := `{"topic":"in","key":{"string":"k"},"value":{"long":5},"timestamp":1000,"headers":[{"key":"h","value":{"string":"v"}},{"key":"n","value":null}]}
{"topic":"in","key":null,"value":null,"timestamp":-1}
{"advanceWallClockMs":0}
{"advanceWallClockMs":1500}
`
	if buf.String() != want {
		t.Fatalf("WriteEvents wrote\n%s\nwant\n%s", buf.String(), want)
	}
	back, err := ReadEvents(strings.NewReader("\n" + want + "\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(events) {
		t.Fatalf("read %d events, want %d", len(back), len(events))
	}
	for i := range events {
		a, b := events[i], back[i]
		if (a.Record == nil) != (b.Record == nil) || a.AdvanceWallClockMs != b.AdvanceWallClockMs {
			t.Errorf("event %d: read %+v, want %+v", i, b, a)
			continue
		}
		if a.Record == nil {
			continue
		}
		ra, rb := a.Record, b.Record
		if ra.Topic != rb.Topic || !ra.Key.Equal(rb.Key) || !ra.Value.Equal(rb.Value) ||
			ra.Timestamp != rb.Timestamp || len(ra.Headers) != len(rb.Headers) {
			t.Errorf("event %d: read %+v, want %+v", i, *rb, *ra)
		}
	}
	// A record without key, value and headers members is all nulls.
	ev, err := ReadEvents(strings.NewReader(`{"topic":"t","timestamp":5}`))
	if err != nil || len(ev) != 1 || ev[0].Record == nil || !ev[0].Record.Key.IsNull() || !ev[0].Record.Value.IsNull() {
		t.Errorf("minimal record: %+v, %v", ev, err)
	}
}

func TestReadEventsRejects(t *testing.T) {
	for _, in := range []string{
		`{"topic":"t"}`,   // no timestamp
		`{"timestamp":1}`, // no topic
		`{"topic":"t","timestamp":1,"partition":0}`,     // unknown member
		`{"topic":"t","timestamp":1.5}`,                 // fractional timestamp
		`{"advanceWallClockMs":-1}`,                     // negative advance
		`{"advanceWallClockMs":5,"topic":"t"}`,          // mixed
		`{"topic":"t","timestamp":1,"key":{"str":"a"}}`, // unknown kind
		`[1]`, // not an object
		`{"topic":"t","timestamp":1} {"topic":"t","timestamp":1}`, // two objects on a line
	} {
		_, err := ReadEvents(strings.NewReader("\n" + in + "\n"))
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 {
			t.Errorf("%s: err = %v, want a *LineError on line 2", in, err)
			continue
		}
		if !errors.Is(err, ErrBadEvent) && !errors.Is(err, ErrBadValue) {
			t.Errorf("%s: err = %v, want ErrBadEvent or ErrBadValue", in, err)
		}
	}
}

func TestOutputsRoundTrip(t *testing.T) {
	// Two lines exactly as the Java Runner writes them.
	javaLines := `{"step":3,"topic":"streams-wordcount-output","key":{"string":""},"value":{"long":1},"keyBytes":"","valueBytes":"0000000000000001","timestamp":2500,"headers":[]}
{"step":1,"topic":"streams-pipe-output","key":null,"value":{"string":"no key here"},"keyBytes":null,"valueBytes":"6e6f206b65792068657265","timestamp":2000,"headers":[{"key":"h1","value":{"bytes":"7631"}},{"key":"empty","value":null}]}
`
	outs, err := ReadOutputs(strings.NewReader(javaLines))
	if err != nil {
		t.Fatal(err)
	}
	want := []OutputRecord{
		{Step: 3, Topic: "streams-wordcount-output", Key: String(""), Value: Long(1), KeyBytes: HexBytes{},
			ValueBytes: HexBytes{0, 0, 0, 0, 0, 0, 0, 1}, Timestamp: 2500},
		{Step: 1, Topic: "streams-pipe-output", Key: Null(), Value: String("no key here"), KeyBytes: nil,
			ValueBytes: HexBytes("no key here"), Timestamp: 2000,
			Headers: []Header{{Key: "h1", Value: Bytes([]byte("v1"))}, {Key: "empty", Value: Null()}}},
	}
	if d := DiffOutputs(want, outs); d != "" {
		t.Fatal(d)
	}
	if outs[0].KeyBytes == nil || outs[1].KeyBytes != nil {
		t.Errorf("empty and null key bytes not kept apart: %q, %q", outs[0].KeyBytes, outs[1].KeyBytes)
	}
	var buf bytes.Buffer
	if err := WriteOutputs(&buf, outs); err != nil {
		t.Fatal(err)
	}
	if buf.String() != javaLines {
		t.Errorf("WriteOutputs wrote\n%s\nwant the Java bytes\n%s", buf.String(), javaLines)
	}
	changed := append([]OutputRecord{}, want...)
	changed[1].ValueBytes = HexBytes("no key her")
	if d := DiffOutputs(want, changed); !strings.Contains(d, "record 1 differs") {
		t.Errorf("DiffOutputs missed a byte change: %q", d)
	}
	if d := DiffOutputs(want, want[:1]); !strings.Contains(d, "want 2 records, got 1") {
		t.Errorf("DiffOutputs missed a missing record: %q", d)
	}
	if _, err := ReadOutputs(strings.NewReader(`{"step":0,"topic":"t","extra":1}`)); !errors.Is(err, ErrBadEvent) {
		t.Errorf("unknown member: err = %v, want ErrBadEvent", err)
	}
}

// The committed topology vectors must parse. A topology's vector is vectors/<name>.jsonl for
// each golden/<name>.describe.txt (vectors/ also holds files of other formats, e.g. serde.jsonl).
func TestSampleVectorsParse(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join("../../conformance/golden", "*.describe.txt"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	for _, g := range goldens {
		p := filepath.Join("../../conformance/vectors", strings.TrimSuffix(filepath.Base(g), ".describe.txt")+".jsonl")
		ev, err := ReadEventsFile(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if len(ev) == 0 {
			t.Errorf("%s: empty", p)
		}
	}
	if _, err := ReadEventsFile(filepath.Join("../../conformance/vectors", "does-not-exist.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want os.ErrNotExist", err)
	}
}
