package schema

import (
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) *Type {
	t.Helper()
	typ, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	return typ
}

func TestParseNamesAndBranches(t *testing.T) {
	typ := mustParse(t, `{"type":"record","name":"R","namespace":"a.b","fields":[
	  {"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y"],"default":"X"}},
	  {"name":"f","type":{"type":"fixed","name":"c.F","size":3}},
	  {"name":"u","type":["null","E","c.F","R",{"type":"long","logicalType":"timestamp-millis"},{"type":"bytes","logicalType":"decimal","precision":4,"scale":2},{"type":"array","items":"int"}]},
	  {"name":"w","type":{"type":"string"}}]}`)
	if typ.FullName() != "a.b.R" || typ.Field("e").Type.FullName() != "a.b.E" || typ.Field("f").Type.FullName() != "c.F" {
		t.Fatalf("names: %s %s %s", typ.FullName(), typ.Field("e").Type.FullName(), typ.Field("f").Type.FullName())
	}
	var names []string
	for _, b := range typ.Field("u").Type.Branches {
		names = append(names, b.BranchName())
	}
	if got := strings.Join(names, ","); got != "null,a.b.E,c.F,a.b.R,long.timestamp-millis,bytes.decimal,array" {
		t.Fatalf("branch names %s", got)
	}
	if typ.Field("u").Type.Branches[3] != typ {
		t.Fatal("recursive reference is not the same *Type")
	}
	if typ.Field("w").Type.Kind != String || typ.Field("e").Type.Default != "X" {
		t.Fatal("wrapped primitive or enum default")
	}
	for _, bad := range []string{`nope`, `"nosuch"`, `{"type":"record","fields":[]}`, `["int","int"]`, `[["int"]]`,
		`{"type":"record","name":"A","fields":[{"name":"x","type":"A2"}]}`} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%s) succeeded", bad)
		}
	}
}

func TestCanRead(t *testing.T) {
	rec := func(fields string) string {
		return `{"type":"record","name":"R","fields":[` + fields + `]}`
	}
	cases := []struct {
		reader, writer string
		ok             bool
	}{
		{`"long"`, `"int"`, true},
		{`"int"`, `"long"`, false},
		{`"double"`, `"float"`, true},
		{`"float"`, `"long"`, true},
		{`"bytes"`, `"string"`, true},
		{`"string"`, `"bytes"`, true},
		{`"string"`, `"int"`, false},
		{`["null","string"]`, `"string"`, true},
		{`"string"`, `["null","string"]`, false},
		{`["null","long"]`, `["null","int"]`, true},
		{rec(`{"name":"a","type":"int"}`), rec(`{"name":"a","type":"int"},{"name":"b","type":"string"}`), true},
		{rec(`{"name":"a","type":"int"},{"name":"b","type":"string"}`), rec(`{"name":"a","type":"int"}`), false},
		{rec(`{"name":"a","type":"int"},{"name":"b","type":"string","default":""}`), rec(`{"name":"a","type":"int"}`), true},
		{rec(`{"name":"z","type":"int","aliases":["a"]}`), rec(`{"name":"a","type":"int"}`), true},
		{`{"type":"record","name":"S","fields":[]}`, `{"type":"record","name":"R","fields":[]}`, false},
		{`{"type":"record","name":"S","aliases":["R"],"fields":[]}`, `{"type":"record","name":"R","fields":[]}`, true},
		{`{"type":"enum","name":"E","symbols":["A","B"]}`, `{"type":"enum","name":"E","symbols":["A"]}`, true},
		{`{"type":"enum","name":"E","symbols":["A"]}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, false},
		{`{"type":"enum","name":"E","symbols":["A"],"default":"A"}`, `{"type":"enum","name":"E","symbols":["A","B"]}`, true},
		{`{"type":"fixed","name":"F","size":4}`, `{"type":"fixed","name":"F","size":8}`, false},
		{`{"type":"array","items":"long"}`, `{"type":"array","items":"int"}`, true},
		{`{"type":"map","values":"int"}`, `{"type":"map","values":"long"}`, false},
		{`{"type":"record","name":"N","fields":[{"name":"next","type":["null","N"]}]}`,
			`{"type":"record","name":"N","fields":[{"name":"next","type":["null","N"]}]}`, true},
	}
	for _, tc := range cases {
		msgs := CanRead(mustParse(t, tc.reader), mustParse(t, tc.writer))
		if (len(msgs) == 0) != tc.ok {
			t.Errorf("CanRead(reader %s, writer %s) = %v; want ok=%v", tc.reader, tc.writer, msgs, tc.ok)
		}
	}
}

func TestCompatibleLevels(t *testing.T) {
	v1 := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}`)
	v2 := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"int","default":0}]}`)
	v3 := mustParse(t, `{"type":"record","name":"R","fields":[{"name":"b","type":"int","default":0}]}`)
	// v3 drops a (no default in v1's reader): readable by v3 from v2, but v1 cannot read v3.
	check := func(level string, cand *Type, existing []*Type, want bool) {
		t.Helper()
		if got := len(Compatible(level, cand, existing)) == 0; got != want {
			t.Errorf("%s: compatible = %v; want %v", level, got, want)
		}
	}
	check(CompatBackward, v2, []*Type{v1}, true)
	check(CompatForward, v2, []*Type{v1}, true)
	check(CompatFull, v2, []*Type{v1}, true)
	check(CompatBackward, v3, []*Type{v1, v2}, true)
	check(CompatBackwardTransitive, v3, []*Type{v1, v2}, true)
	check(CompatForward, v3, []*Type{v2}, false) // v2 reading v3 data: a has no default
	check(CompatForwardTransitive, v2, []*Type{v3, v1}, true)
	check(CompatNone, v3, []*Type{v1}, true)
	check(CompatBackward, v1, nil, true)
	if !ValidLevel("FULL_TRANSITIVE") || ValidLevel("full") {
		t.Error("ValidLevel")
	}
}
