package kstream_test

import (
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
)

// The windowed-aggregation reference topologies of conformance/java/.../WindowTopologies.java,
// rebuilt with the Go DSL. Expected outputs (including changelog topics) and Describe text come
// from Java 4.4.0's TopologyTestDriver (or its golden files).

var (
	kB  = conformance.KindBytes
	wms = time.Millisecond
)

func winGrouped(b *kstream.StreamsBuilder, name string) kstream.KGroupedStream[string, string] {
	return kstream.Stream(b, name+"-input", kstream.ConsumedWith(S, S)).GroupByKey()
}

func concat(a, v string) string { return a + "+" + v }

var windowTopologies = []dslTopology{
	{name: "win-tumbling", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-tumbling"), kstream.TimeWindowsOfSizeWithNoGrace(10*wms)).
			Count().ToStream().To("win-tumbling-output")
	}},
	{name: "win-grace", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-grace"), kstream.TimeWindowsOfSizeAndGrace(10*wms, 5*wms)).
			Count(kstream.MaterializedAs[string, int64]("grace-counts")).ToStream().To("win-grace-output")
	}},
	{name: "win-hopping", types: kinds{"output": {kB, kS}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-hopping"), kstream.TimeWindowsOfSizeAndGrace(10*wms, 2*wms).AdvanceBy(5*wms)).
			Reduce(concat).ToStream().To("win-hopping-output")
	}},
	{name: "win-aggregate", types: kinds{"output": {kB, kS}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-aggregate"), kstream.TimeWindowsOfSizeAndGrace(15*wms, 3*wms).AdvanceBy(5*wms)).
			Aggregate(func() string { return "<" }, func(_ string, v, agg string) string { return agg + v },
				kstream.TableNamedAs[string, string]("win-agg"), kstream.MaterializedAs[string, string]("agg-store").WithValueSerde(S).WithRetention(100*wms)).
			MapValues(func(v string) string { return v + ">" }).
			ToStream().To("win-aggregate-output")
	}},
	{name: "win-repartition", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		g := kstream.Stream(b, "win-repartition-input", kstream.ConsumedWith(S, S)).
			GroupBy(func(_, v string) string { return v[:1] }, kstream.GroupedWith(S, S))
		kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(10*wms)).Count().ToStream().To("win-repartition-output")
	}},
	{name: "win-sliding", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBySliding(winGrouped(b, "win-sliding"), kstream.SlidingWindowsOfTimeDifferenceWithNoGrace(10*wms)).
			Count().ToStream().To("win-sliding-output")
	}},
	{name: "win-sliding-grace", types: kinds{"output": {kB, kS}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBySliding(winGrouped(b, "win-sliding-grace"), kstream.SlidingWindowsOfTimeDifferenceAndGrace(10*wms, 5*wms)).
			Reduce(concat).ToStream().To("win-sliding-grace-output")
	}},
	{name: "win-session", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBySession(winGrouped(b, "win-session"), kstream.SessionWindowsOfInactivityGapWithNoGrace(5*wms)).
			Count().ToStream().To("win-session-output")
	}},
	{name: "win-session-agg", types: kinds{"output": {kB, kS}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBySession(winGrouped(b, "win-session-agg"), kstream.SessionWindowsOfInactivityGapAndGrace(5*wms, 3*wms)).
			Aggregate(func() string { return "" }, func(_ string, v, agg string) string { return agg + v },
				func(_ string, a1, a2 string) string { return a1 + "|" + a2 },
				kstream.MaterializedWith(S, S)).
			ToStream().To("win-session-agg-output")
	}},
	{name: "win-session-reduce", types: kinds{"output": {kB, kS}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBySession(winGrouped(b, "win-session-reduce"), kstream.SessionWindowsOfInactivityGapAndGrace(10*wms, 0)).
			Reduce(concat, kstream.MaterializedAs[string, string]("sessions")).ToStream().To("win-session-reduce-output")
	}},
	{name: "win-emit-close", types: kinds{"output": {kB, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-emit-close"), kstream.TimeWindowsOfSizeAndGrace(10*wms, 2*wms)).
			EmitStrategy(kstream.EmitOnWindowClose()).Count().ToStream().To("win-emit-close-output")
	}},
	{name: "win-emit-close-hopping", types: kinds{"output": {kB, kS}}, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-emit-close-hopping"), kstream.TimeWindowsOfSizeWithNoGrace(10*wms).AdvanceBy(5*wms)).
			EmitStrategy(kstream.EmitOnWindowClose()).Reduce(concat).ToStream().To("win-emit-close-hopping-output")
	}},
	{name: "win-suppress-close", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-suppress-close"), kstream.TimeWindowsOfSizeAndGrace(10*wms, 3*wms)).Count().
			Suppress(kstream.SuppressedUntilWindowCloses(kstream.BufferConfigUnbounded().WithLoggingDisabled())).
			ToStream().To("win-suppress-close-output")
	}},
	{name: "win-suppress-full", types: kinds{"output": {kB, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-suppress-full"), kstream.TimeWindowsOfSizeWithNoGrace(100*wms)).Count().
			Suppress(kstream.SuppressedUntilTimeLimit(20*wms, kstream.BufferConfigMaxRecords(2).WithLoggingDisabled()).WithName("limit")).
			ToStream().To("win-suppress-full-output")
	}},
	{name: "win-suppress-log", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-suppress-log"), kstream.TimeWindowsOfSizeAndGrace(10*wms, 3*wms)).Count().
			Suppress(kstream.SuppressedUntilWindowCloses(kstream.BufferConfigUnbounded())).
			ToStream().To("win-suppress-log-output")
	}},
	{name: "win-suppress-log-full", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-suppress-log-full"), kstream.TimeWindowsOfSizeWithNoGrace(100*wms)).Count().
			Suppress(kstream.SuppressedUntilTimeLimit(20*wms, kstream.BufferConfigMaxRecords(2)).WithName("limit")).
			ToStream().To("win-suppress-log-full-output")
	}},
	{name: "win-suppress-bytes", types: kinds{"output": {kB, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBy(winGrouped(b, "win-suppress-bytes"), kstream.TimeWindowsOfSizeWithNoGrace(100*wms)).Count().
			Suppress(kstream.SuppressedUntilTimeLimit(20*wms, kstream.BufferConfigMaxBytes(130).WithLoggingDisabled())).
			ToStream().To("win-suppress-bytes-output")
	}},
	{name: "win-session-suppress", types: kinds{"output": {kB, kL}}, caching: true, build: func(b *kstream.StreamsBuilder) {
		kstream.WindowedBySession(winGrouped(b, "win-session-suppress"), kstream.SessionWindowsOfInactivityGapAndGrace(5*wms, 2*wms)).Count().
			Suppress(kstream.SuppressedUntilWindowCloses(kstream.BufferConfigUnbounded().WithLoggingDisabled())).
			ToStream().To("win-session-suppress-output")
	}},
}

func TestConformanceWindows(t *testing.T) {
	for _, d := range windowTopologies {
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

var _ = serde.String

func init() {
	windowTopologies = append(windowTopologies,
		dslTopology{name: "win-cogroup", types: kinds{"output": {kB, kS}}, caching: true, build: func(b *kstream.StreamsBuilder) {
			g1 := winGrouped(b, "win-cogroup")
			g2 := kstream.Stream(b, "win-cogroup-input2", kstream.ConsumedWith(S, S)).GroupByKey()
			c := kstream.KGroupedStream[string, string].Cogroup(g1, func(_ string, v, agg string) string { return agg + "a" + v })
			c = kstream.CogroupedKStream[string, string].Cogroup(c, g2, func(_ string, v, agg string) string { return agg + "b" + v })
			kstream.CogroupWindowedBy(c, kstream.TimeWindowsOfSizeAndGrace(10*wms, 2*wms).AdvanceBy(5*wms)).
				Aggregate(func() string { return "" }, kstream.MaterializedWith(S, S)).
				ToStream().To("win-cogroup-output")
		}},
		dslTopology{name: "win-cogroup-session", types: kinds{"output": {kB, kS}}, caching: true, build: func(b *kstream.StreamsBuilder) {
			g1 := winGrouped(b, "win-cogroup-session")
			g2 := kstream.Stream(b, "win-cogroup-session-input2", kstream.ConsumedWith(S, S)).GroupByKey()
			c := kstream.KGroupedStream[string, string].Cogroup(g1, func(_ string, v, agg string) string { return agg + "a" + v })
			c = kstream.CogroupedKStream[string, string].Cogroup(c, g2, func(_ string, v, agg string) string { return agg + "b" + v })
			kstream.CogroupWindowedBySession(c, kstream.SessionWindowsOfInactivityGapWithNoGrace(5*wms)).
				Aggregate(func() string { return "" }, func(_ string, a1, a2 string) string { return a1 + "|" + a2 },
					kstream.TableNamedAs[string, string]("cg"), kstream.MaterializedWith(S, S)).
				ToStream().To("win-cogroup-session-output")
		}},
	)
}

func init() {
	windowTopologies = append(windowTopologies,
		dslTopology{name: "win-session-emit-close", types: kinds{"output": {kB, kL}}, build: func(b *kstream.StreamsBuilder) {
			kstream.WindowedBySession(winGrouped(b, "win-session-emit-close"), kstream.SessionWindowsOfInactivityGapAndGrace(5*wms, 1*wms)).
				EmitStrategy(kstream.EmitOnWindowClose()).Count().ToStream().To("win-session-emit-close-output")
		}},
		dslTopology{name: "win-sliding-emit-close", types: kinds{"output": {kB, kL}}, build: func(b *kstream.StreamsBuilder) {
			kstream.WindowedBySliding(winGrouped(b, "win-sliding-emit-close"), kstream.SlidingWindowsOfTimeDifferenceAndGrace(5*wms, 2*wms)).
				EmitStrategy(kstream.EmitOnWindowClose()).Count().ToStream().To("win-sliding-emit-close-output")
		}},
	)
}
