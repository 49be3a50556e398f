package kstream_test

import (
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
)

// The null-key reference topologies of conformance/java/.../NullKeyTopologies.java (KIP-962,
// rebuilt with the Go DSL: a repartition keeps null-key records only when a
// stream-stream left/outer join, a stream-table left join or a stream-globalTable left join is
// downstream of it. Keys are *string (serde.Nullable) so a re-keying function can return null.

// nullKeyOf is the re-keying function: null for a value starting with "n", else the value's
// first character.
func nullKeyOf(_ string, v string) *string {
	if v == "" || strings.HasPrefix(v, "n") {
		return nil
	}
	return ptr(v[:1])
}

func lastChar(_ *string, v string) string {
	if v == "" {
		return ""
	}
	return v[len(v)-1:]
}

func nullKeyStreamStream(name, kind string) dslTopology {
	return dslTopology{name: name, caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Stream(b, name+"-left", kstream.ConsumedWith(S, S)).SelectKey(nullKeyOf)
		r := kstream.Stream(b, name+"-right", kstream.ConsumedWith(S, S)).SelectKey(nullKeyOf)
		w, sj := kstream.OfTimeDifferenceWithNoGrace(100*jms), kstream.StreamJoinedWith(NS, S, S)
		var out kstream.KStream[*string, string]
		switch kind {
		case "inner":
			out = l.JoinStream(r, joinVals, w, sj)
		case "left":
			out = l.LeftJoinStream(r, joinVals, w, sj)
		default:
			out = l.OuterJoinStream(r, joinVals, w, sj)
		}
		out.To(name+"-output", kstream.ProducedWith(NS, S))
	}}
}

func nullKeyStreamTable(name string, left bool) dslTopology {
	return dslTopology{name: name, caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, name+"-table", kstream.ConsumedWith(NS, S))
		s := kstream.Stream(b, name+"-stream", kstream.ConsumedWith(S, S)).SelectKey(nullKeyOf)
		j := kstream.JoinedWith(NS, S, S)
		if left {
			s.LeftJoin(t, joinVals, j).To(name+"-output", kstream.ProducedWith(NS, S))
		} else {
			s.Join(t, joinVals, j).To(name+"-output", kstream.ProducedWith(NS, S))
		}
	}}
}

func nullKeyStreamGlobal(name string, left bool) dslTopology {
	return dslTopology{name: name, caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		g := kstream.GlobalTable(b, name+"-table", kstream.ConsumedWith(S, S))
		s := kstream.Stream(b, name+"-stream", kstream.ConsumedWith(S, S)).SelectKey(nullKeyOf).
			Repartition(kstream.RepartitionedWith(NS, S))
		if left {
			s.LeftJoinGlobal(g, lastChar, joinVals).To(name+"-output", kstream.ProducedWith(NS, S))
		} else {
			s.JoinGlobal(g, lastChar, joinVals).To(name+"-output", kstream.ProducedWith(NS, S))
		}
	}}
}

var nullKeyTopologies = []dslTopology{
	nullKeyStreamStream("nullkey-ss-inner", "inner"),
	nullKeyStreamStream("nullkey-ss-left", "left"),
	nullKeyStreamStream("nullkey-ss-outer", "outer"),
	nullKeyStreamTable("nullkey-st-inner", false),
	nullKeyStreamTable("nullkey-st-left", true),
	nullKeyStreamGlobal("nullkey-gt-inner", false),
	nullKeyStreamGlobal("nullkey-gt-left", true),
	{name: "nullkey-shared", caching: true, types: kinds{"output": {kS, kS}, "count": {kS, kL}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, "nullkey-shared-table", kstream.ConsumedWith(NS, S))
		s := kstream.Stream(b, "nullkey-shared-stream", kstream.ConsumedWith(S, S)).SelectKey(nullKeyOf)
		s.GroupByKey(kstream.GroupedWith(NS, S)).Count().ToStream().To("nullkey-shared-count", kstream.ProducedWith(NS, L))
		kstream.KStream[*string, string].MapValues(s, func(v string) string { return v + "!" }).
			LeftJoin(t, joinVals, kstream.JoinedWith(NS, S, S)).To("nullkey-shared-output", kstream.ProducedWith(NS, S))
	}},
	{name: "nullkey-agg-left", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, "nullkey-agg-left-table", kstream.ConsumedWith(NS, S))
		kstream.Stream(b, "nullkey-agg-left-stream", kstream.ConsumedWith(S, S)).SelectKey(nullKeyOf).
			GroupByKey(kstream.GroupedWith(NS, S)).Reduce(func(a, v string) string { return a + v }).ToStream().
			LeftJoin(t, joinVals, kstream.JoinedWith(NS, S, S)).To("nullkey-agg-left-output", kstream.ProducedWith(NS, S))
	}},
}

// TestConformanceNullKeyJoins checks each join kind after a repartition against Java, with
// caching off and on and with topology.optimization=all (which merges the repartitions of
// nullkey-shared into one that must keep null keys).
func TestConformanceNullKeyJoins(t *testing.T) {
	for _, d := range nullKeyTopologies {
		t.Run(d.name, func(t *testing.T) { runDSLConformance(t, d.testCase()) })
		for _, c := range []struct{ name, config string }{{"caching", cachingOnConfig}, {"optimized", optimizeAllConfig}} {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				if !javaAvailable() {
					t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the " + c.config + " expectation")
				}
				runDSLConformance(t, d.testCase(c.config))
			})
		}
	}
}
