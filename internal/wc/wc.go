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
//
// The words are counted first, so that the result is allocated once at its size: a slice grown
// by append took five allocations for a line of ten words.
func SplitWords(line string) []string {
	line = strings.ToLower(line)
	n, in := 0, false
	for i := 0; i < len(line); i++ {
		w := isWordByte(line[i])
		if w && !in || !w && i == 0 {
			n++
		}
		in = w
	}
	out := make([]string, 0, n)
	start := -1
	for i := 0; i < len(line); i++ {
		c := line[i]
		word := isWordByte(c)
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
		// Java: "".split("\\W+") is [""] (no match: the line itself).
		return []string{""}
	}
	if len(out) == 1 && out[0] == "" {
		// A non-empty line of only separators: Java's split drops trailing empty strings, and
		// the leading one is the only one, so it gives [].
		return nil
	}
	return out
}

// isWordByte reports whether c is in Java's \w for ASCII: [A-Za-z0-9_].
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z'
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
