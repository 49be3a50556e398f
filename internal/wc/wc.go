// Package wc is the word count topology the benchmarks run (bench/cmd/wordcount against a
// broker, bench/cmd/tdbench in the test driver): Kafka Streams' WordCountDemo on kstreams-go.
package wc

import (
	"strings"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// SplitWords splits a line as Java's line.toLowerCase().split("\\W+") does for ASCII text:
// maximal runs of [A-Za-z0-9_], lower-cased, with a leading empty string when the line
// starts with a non-word character (Java's split keeps a leading empty match, drops
// trailing ones).
func SplitWords(line string) []string {
	line = strings.ToLower(line)
	var out []string
	start := -1
	for i := 0; i < len(line); i++ {
		c := line[i]
		word := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z'
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, line[start:i])
			start = -1
		case !word && i == 0:
			out = append(out, "")
		}
	}
	if start >= 0 {
		out = append(out, line[start:])
	}
	if len(out) == 0 {
		// Java: "".split("\\W+") is [""]; a line of only separators gives [].
		if line == "" {
			return []string{""}
		}
		return nil
	}
	return out
}

// Topology is the WordCountDemo topology from input to output.
func Topology(input, output string) (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, input, kstream.ConsumedWith(serde.String(), serde.String())).
		FlatMapValues(SplitWords).
		GroupBy(func(_, word string) string { return word }, kstream.GroupedWith(serde.String(), serde.String())).
		Count(kstream.MaterializedAs[string, int64]("counts-store")).
		ToStream().
		To(output, kstream.ProducedWith(serde.String(), serde.Long()))
	return b.Build()
}
