package kstream_test

import (
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
)

// The join reference topologies of conformance/java/.../JoinTopologies.java, rebuilt with the
// Go DSL. Expected outputs and Describe text always come from Java. Joiners print a null side as
// "-" (a null string reaches a typed Go joiner as "").

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinVals(a, b string) string { return dash(a) + "|" + dash(b) }

func firstChar(_ string, v string) string {
	if v == "" {
		return ""
	}
	return v[:1]
}

var jms = time.Millisecond

var joinTopologies = []dslTopology{
	{name: "join-st-inner", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, "join-st-inner-table", kstream.ConsumedWith(S, S))
		kstream.Stream(b, "join-st-inner-stream", kstream.ConsumedWith(S, S)).Join(t, joinVals).
			To("join-st-inner-output", kstream.ProducedWith(S, S))
	}},
	{name: "join-st-left", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, "join-st-left-table", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("lt-store"))
		kstream.Stream(b, "join-st-left-stream", kstream.ConsumedWith(S, S)).
			LeftJoin(t, joinVals, kstream.JoinedWith(S, S, S).WithName("enrich")).
			To("join-st-left-output", kstream.ProducedWith(S, S))
	}},
	{name: "join-st-rekey", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		t := kstream.Table(b, "join-st-rekey-table", kstream.ConsumedWith(S, S))
		kstream.Stream(b, "join-st-rekey-stream", kstream.ConsumedWith(S, S)).SelectKey(firstChar).Join(t, joinVals).
			To("join-st-rekey-output", kstream.ProducedWith(S, S))
	}},
	{name: "join-global", caching: true, types: kinds{"inner": {kS, kS}, "left": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		g := kstream.GlobalTable(b, "join-global-table", kstream.ConsumedWith(S, S))
		s := kstream.Stream(b, "join-global-stream", kstream.ConsumedWith(S, S))
		s.JoinGlobal(g, firstChar, joinVals).To("join-global-inner", kstream.ProducedWith(S, S))
		s.LeftJoinGlobal(g, firstChar, joinVals, kstream.NamedAs("gleft")).To("join-global-left", kstream.ProducedWith(S, S))
	}},
	{name: "join-ss-inner", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Stream(b, "join-ss-inner-left", kstream.ConsumedWith(S, S))
		r := kstream.Stream(b, "join-ss-inner-right", kstream.ConsumedWith(S, S))
		l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(100*jms), kstream.StreamJoinedWith(S, S, S)).
			To("join-ss-inner-output", kstream.ProducedWith(S, S))
	}},
	{name: "join-ss-left", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Stream(b, "join-ss-left-left", kstream.ConsumedWith(S, S))
		r := kstream.Stream(b, "join-ss-left-right", kstream.ConsumedWith(S, S))
		l.LeftJoinStream(r, joinVals, kstream.OfTimeDifferenceAndGrace(100*jms, 50*jms), kstream.StreamJoinedWith(S, S, S)).
			To("join-ss-left-output", kstream.ProducedWith(S, S))
	}},
	{name: "join-ss-outer", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Stream(b, "join-ss-outer-left", kstream.ConsumedWith(S, S))
		r := kstream.Stream(b, "join-ss-outer-right", kstream.ConsumedWith(S, S))
		l.OuterJoinStream(r, joinVals, kstream.OfTimeDifferenceAndGrace(100*jms, 20*jms),
			kstream.StreamJoinedWith(S, S, S).WithName("oj").WithStoreName("ojs")).
			To("join-ss-outer-output", kstream.ProducedWith(S, S))
	}},
	{name: "join-ss-asym", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Stream(b, "join-ss-asym-left", kstream.ConsumedWith(S, S))
		r := kstream.Stream(b, "join-ss-asym-right", kstream.ConsumedWith(S, S))
		l.OuterJoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(30*jms).Before(10*jms).After(50*jms),
			kstream.StreamJoinedWith(S, S, S).WithLoggingDisabled()).
			To("join-ss-asym-output", kstream.ProducedWith(S, S))
	}},
	{name: "join-ss-rekey", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Stream(b, "join-ss-rekey-left", kstream.ConsumedWith(S, S)).SelectKey(firstChar)
		r := kstream.Stream(b, "join-ss-rekey-right", kstream.ConsumedWith(S, S)).SelectKey(firstChar)
		l.LeftJoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(50*jms), kstream.StreamJoinedWith(S, S, S)).
			To("join-ss-rekey-output", kstream.ProducedWith(S, S))
	}},
	{name: "join-chain", caching: true, types: kinds{"output": {kS, kS}}, build: func(b *kstream.StreamsBuilder) {
		l := kstream.Stream(b, "join-chain-left", kstream.ConsumedWith(S, S))
		r := kstream.Stream(b, "join-chain-right", kstream.ConsumedWith(S, S))
		t := kstream.Table(b, "join-chain-table", kstream.ConsumedWith(S, S))
		l.JoinStream(r, joinVals, kstream.OfTimeDifferenceWithNoGrace(100*jms)).
			LeftJoin(t, joinVals).
			To("join-chain-output", kstream.ProducedWith(S, S))
	}},
}

func TestConformanceJoins(t *testing.T) {
	for _, d := range joinTopologies {
		t.Run(d.name, func(t *testing.T) { runDSLConformance(t, d.testCase()) })
		if d.caching {
			t.Run(d.name+"/caching", func(t *testing.T) {
				if !javaAvailable() {
					t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the caching-on expectation")
				}
				runDSLConformance(t, d.testCase(cachingOnConfig))
			})
		}
	}
}
