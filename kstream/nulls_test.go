package kstream_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// TestTombstonesNeverBecomeValues checks the package doc's rule for nulls operator by operator
// on a stream of int64 with a null value: value functions are not called and the null passes,
// key selectors give the key only, Map drops the tombstone (counted), and the nullable view
// shows it as nil. Java's behaviour for the same topologies with null-safe functions is checked
// by the tomb-* conformance topologies (semantics_conformance_test.go).
func TestTombstonesNeverBecomeValues(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	s := kstream.Stream(b, "in", kstream.ConsumedWith(S, L))
	var calls []string
	call := func(what string, v int64) { calls = append(calls, fmt.Sprintf("%s(%d)", what, v)) }
	out := kstream.ProducedWith(S, serde.Nullable(L))
	nullable := func(st kstream.KStream[string, int64]) kstream.KStream[string, *int64] {
		return kstream.NullableValues(st)
	}
	nullable(s.MapValues(func(v int64) int64 { call("mapValues", v); return v + 1 })).To("mapvalues", out)
	nullable(s.Filter(func(_ string, v int64) bool { call("filter", v); return v > 100 })).To("filter", out)
	nullable(s.FlatMapValues(func(v int64) []int64 { call("flatMapValues", v); return []int64{v, v} })).To("flatmapvalues", out)
	nullable(s.Peek(func(_ string, v int64) { call("peek", v) })).To("peek", out)
	s.Foreach(func(_ string, v int64) { call("foreach", v) })
	br := s.Split().Branch(func(_ string, v int64) bool { call("branch", v); return true }).DefaultBranch()
	for name, st := range br {
		nullable(st).To("branch-"+name[len(name)-1:], out)
	}
	nullable(s.SelectKey(func(k string, v int64) string { call("selectKey", v); return k + "!" })).To("selectkey", out)
	nullable(kstream.KStream[string, int64].Map(s, func(k string, v int64) (string, int64) { call("map", v); return k, v })).To("map", out)
	kstream.NullableValues(s).Map(func(k string, v *int64) (string, *int64) {
		if v == nil {
			return k + "-deleted", nil
		}
		n := *v * 2
		return k, &n
	}).To("view", out)
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "nulls"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.Nullable(L))
	five := int64(5)
	if err := in.PipeKeyValue("a", &five); err != nil {
		t.Fatal(err)
	}
	if err := in.PipeKeyValue("b", nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"mapValues(5)", "filter(5)", "flatMapValues(5)", "peek(5)", "foreach(5)", "branch(5)", "selectKey(5)", "map(5)",
		"selectKey(0)"}
	if !slices.Equal(calls, want) {
		t.Fatalf("calls %v\nwant  %v", calls, want)
	}
	read := func(topic string) string {
		kvs, err := testdriver.CreateOutputTopic(d, topic, serde.String(), serde.Nullable(L)).ReadKeyValuesToList()
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, kv := range kvs {
			if kv.Value == nil {
				out += kv.Key + "=null "
			} else {
				out += fmt.Sprintf("%s=%d ", kv.Key, *kv.Value)
			}
		}
		return out
	}
	for topic, want := range map[string]string{
		"mapvalues":     "a=6 b=null ",
		"filter":        "b=null ",
		"flatmapvalues": "a=5 a=5 b=null ",
		"peek":          "a=5 b=null ",
		"branch-1":      "a=5 ",
		"branch-0":      "b=null ",
		"selectkey":     "a!=5 b!=null ",
		"map":           "a=5 ",
		"view":          "a=10 b-deleted=null ",
	} {
		if got := read(topic); got != want {
			t.Errorf("%s: %q, want %q", topic, got, want)
		}
	}
	if n := d.DroppedRecords(); n != 1 {
		t.Errorf("dropped records %d, want 1 (Map's tombstone)", n)
	}
}

// TestNullableTableValuesJoin: a left join's missing side is the zero value of a non-nillable
// type, and nil through the table's nullable view.
func TestNullableTableValuesJoin(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	tbl := kstream.Table(b, "t", kstream.ConsumedWith(S, L))
	s := kstream.Stream(b, "s", kstream.ConsumedWith(S, S))
	s.LeftJoin(tbl, func(v string, o int64) string { return fmt.Sprintf("%s|%d", v, o) }).To("zero", kstream.ProducedWith(S, S))
	s.LeftJoin(kstream.NullableTableValues(tbl), func(v string, o *int64) string {
		if o == nil {
			return v + "|missing"
		}
		return fmt.Sprintf("%s|%d", v, *o)
	}).To("view", kstream.ProducedWith(S, S))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "nullable-join"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := testdriver.CreateInputTopic(d, "t", serde.String(), L).PipeKeyValue("a", 7); err != nil {
		t.Fatal(err)
	}
	in := testdriver.CreateInputTopic(d, "s", serde.String(), serde.String())
	for _, k := range []string{"a", "b"} {
		if err := in.PipeKeyValue(k, "x"); err != nil {
			t.Fatal(err)
		}
	}
	for topic, want := range map[string][]string{"zero": {"x|7", "x|0"}, "view": {"x|7", "x|missing"}} {
		got, err := testdriver.CreateOutputTopic(d, topic, serde.String(), serde.String()).ReadValuesToList()
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", topic, got, err, want)
		}
	}
}
