package kstream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// The dsl-cache reference topology (conformance/README.md): DSL aggregations over cached stores
// where one input record updates a key many times between two commits and values grow past
// small cache budgets, and a cached table source feeding a table aggregation with adder and
// subtractor. It runs with several statestore.cache.max.bytes values against Java.

// spaceSplit is Java's String.split(" "): trailing empty strings are dropped ("" gives [""]).
func spaceSplit(s string) []string {
	parts := strings.Split(s, " ")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func dslCacheTopology(t *testing.T) *processor.Topology {
	str, lng := serde.String(), serde.Long()
	b := kstream.NewStreamsBuilder()
	tokens := kstream.Stream(b, "dsl-cache-input", kstream.ConsumedWith(str, str)).
		FlatMapValues(spaceSplit).
		GroupByKey()
	tokens.Count(kstream.MaterializedAs[string, int64]("token-counts")).
		ToStream().To("dsl-cache-counts", kstream.ProducedWith(str, lng))
	tokens.Reduce(func(a, v string) string { return a + "+" + v }, kstream.MaterializedAs[string, string]("token-concat")).
		ToStream().To("dsl-cache-concat", kstream.ProducedWith(str, str))
	kstream.Table(b, "dsl-cache-table", kstream.ConsumedWith(str, str), kstream.MaterializedAs[string, string]("table-store")).
		GroupBy(func(k, v string) (string, string) {
			if v == "" {
				return "", k
			}
			return v[:1], k
		}, kstream.GroupedWith(str, str)).
		Aggregate(func() string { return "" },
			func(_ string, v, agg string) string { return agg + "+" + v },
			func(_ string, v, agg string) string { return agg + "-" + v },
			kstream.MaterializedAs[string, string]("by-initial").WithValueSerde(str)).
		ToStream().To("dsl-cache-initials", kstream.ProducedWith(str, str))
	topo, err := b.Build()
	return must(t, topo, err)
}

func dslCacheCase(configs ...string) dslCase {
	ss := [2]conformance.Kind{kS, kS}
	return dslCase{
		name:  "dsl-cache",
		props: stringDefaults("dsl-cache"),
		build: dslCacheTopology,
		types: map[string][2]conformance.Kind{
			"dsl-cache-token-counts-changelog": {kS, kL},
			"dsl-cache-token-concat-changelog": ss,
			"dsl-cache-table-store-changelog":  ss,
			"dsl-cache-by-initial-changelog":   ss,
			"dsl-cache-counts":                 {kS, kL},
			"dsl-cache-concat":                 ss,
			"dsl-cache-initials":               ss,
			"dsl-cache-by-initial-repartition": {kS, conformance.KindBytes},
		},
		configs: configs,
	}
}

// TestConformanceDSLCache compares dsl-cache with Java's TopologyTestDriver for the default
// cache (10 MiB; against the golden file without Java), caching off, and budgets small enough
// to evict at different points (each gives a different Java output).
func TestConformanceDSLCache(t *testing.T) {
	t.Run("default", func(t *testing.T) { runDSLConformance(t, dslCacheCase()) })
	for _, size := range []string{"0", "1", "100", "200", "500", "800"} {
		t.Run("statestore.cache.max.bytes="+size, func(t *testing.T) {
			if !javaAvailable() {
				t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the expectation with this cache size")
			}
			runDSLConformance(t, dslCacheCase("statestore.cache.max.bytes="+size))
		})
	}
}

// The dsl-window-cache reference topology: a hopping windowed count over flatMapValues, so one
// input record updates the same windows several times between two commits; with caching on Java
// forwards each window once per commit.
func dslWindowCacheTopology(t *testing.T) *processor.Topology {
	str := serde.String()
	b := kstream.NewStreamsBuilder()
	kstream.WindowedBy(
		kstream.Stream(b, "dsl-window-cache-input", kstream.ConsumedWith(str, str)).FlatMapValues(spaceSplit).GroupByKey(),
		kstream.TimeWindowsOfSizeWithNoGrace(10*time.Second).AdvanceBy(5*time.Second)).
		Count(kstream.MaterializedAs[string, int64]("window-counts")).
		ToStream().To("dsl-window-cache-output")
	topo, err := b.Build()
	return must(t, topo, err)
}

func dslWindowCacheCase(configs ...string) dslCase {
	return dslCase{
		name:  "dsl-window-cache",
		props: stringDefaults("dsl-window-cache"),
		build: dslWindowCacheTopology,
		types: map[string][2]conformance.Kind{
			"dsl-window-cache-window-counts-changelog": {conformance.KindBytes, kL},
			"dsl-window-cache-output":                  {conformance.KindBytes, kL},
		},
		configs: configs,
	}
}

// TestConformanceDSLWindowCache compares dsl-window-cache with Java with caching off (0), with
// every put evicted at once (1 byte, same output as off), with the default cache and with 200
// bytes (where Java collapses window updates in the record cache and evicts).
func TestConformanceDSLWindowCache(t *testing.T) {
	for _, size := range []string{"default", "0", "1", "200"} {
		t.Run("statestore.cache.max.bytes="+size, func(t *testing.T) {
			if !javaAvailable() {
				t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the expectation with this cache size")
			}
			var cfg []string
			if size != "default" {
				cfg = []string{"statestore.cache.max.bytes=" + size}
			}
			runDSLConformance(t, dslWindowCacheCase(cfg...))
		})
	}
}
