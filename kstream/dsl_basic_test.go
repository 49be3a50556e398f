package kstream_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

func javaAvailable() bool { return os.Getenv(conformance.ClasspathEnv) != "" }

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

// javaNonWord is Java's \W: anything but ASCII letters, digits and '_'.
var javaNonWord = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// javaSplit is Java's String.split("\\W+"): trailing empty strings dropped, a leading empty
// string kept when the input starts with a separator, [""] for "".
func javaSplit(s string) []string {
	if s == "" {
		return []string{""}
	}
	parts := javaNonWord.Split(s, -1)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// javaLower is Java's toLowerCase(Locale.ROOT) for the texts of the vectors.
func javaLower(s string) string { return strings.ToLower(s) }

func TestConformancePipe(t *testing.T) {
	runDSLConformance(t, dslCase{
		name:  "pipe",
		props: stringDefaults("streams-pipe"),
		build: func(t *testing.T) *processor.Topology {
			b := kstream.NewStreamsBuilder()
			kstream.Stream[string, string](b, "streams-plaintext-input").To("streams-pipe-output")
			topo, err := b.Build()
			return must(t, topo, err)
		},
		types: map[string][2]conformance.Kind{"streams-pipe-output": {kS, kS}},
	})
}

const wcStore = "KSTREAM-AGGREGATE-STATE-STORE-0000000003"

func wordCountCase(configs ...string) dslCase {
	props := stringDefaults("streams-wordcount")
	props[cacheMaxBytes] = "0"
	return dslCase{
		name:  "wordcount",
		props: props,
		build: func(t *testing.T) *processor.Topology {
			// The word count as short as the package doc shows it.
			b := kstream.NewStreamsBuilder()
			lines := kstream.Stream(b, "streams-plaintext-input", kstream.ConsumedWith(serde.String(), serde.String()))
			counts := lines.FlatMapValues(func(line string) []string { return javaSplit(javaLower(line)) }).
				GroupBy(func(_, word string) string { return word }, kstream.GroupedWith(serde.String(), serde.String())).
				Count()
			counts.ToStream().To("streams-wordcount-output", kstream.ProducedWith(serde.String(), serde.Long()))
			topo, err := b.BuildWithConfig(configMap(configs))
			return must(t, topo, err)
		},
		types: map[string][2]conformance.Kind{
			"streams-wordcount-" + wcStore + "-repartition": {kS, kS},
			"streams-wordcount-" + wcStore + "-changelog":   {kS, kL},
			"streams-wordcount-output":                      {kS, kL},
		},
		configs: configs,
	}
}

func TestConformanceWordCount(t *testing.T) { runDSLConformance(t, wordCountCase()) }

func TestConformanceWordCountCaching(t *testing.T) {
	runDSLConformance(t, wordCountCase(cachingOnConfig))
}

// With topology.optimization=all Java renames the repartition nodes after the repartition topic
// (KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition-filter/-sink/-source).
func TestConformanceWordCountOptimized(t *testing.T) {
	if !javaAvailable() {
		t.Skip("needs Java (" + conformance.ClasspathEnv + ")")
	}
	runDSLConformance(t, wordCountCase(optimizeAllConfig))
}
