package kstream_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
)

// The deduplication topologies of conformance/java/.../DedupTopologies.java:
// Java has no deduplication operator, so the expectation is Java's TopologyTestDriver running
// the processor a Java user writes by hand over a window store, with the node and store names
// our DSL generates (describe and the store's changelog bytes are compared too). Ids repeat
// inside the window (dropped, boundary included), just outside it (forwarded), out of order,
// null keys, and an id late by more than the store's retention.

const dedupeWindow = 10 * time.Millisecond

var dedupeTopologies = []dslTopology{
	{name: "dedupe-key", caching: true, types: kinds{"output": {kS, kS}, "KSTREAM-DEDUPLICATE-STATE-STORE-0000000001-changelog": {kB, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dedupe-key-input", kstream.ConsumedWith(NS, S)).DeduplicateByKey(dedupeWindow).
			To("dedupe-key-output", kstream.ProducedWith(NS, S))
	}},
	{name: "dedupe-id", caching: true, types: kinds{"output": {kS, kS}, "dd-store-changelog": {kB, kL}}, build: func(b *kstream.StreamsBuilder) {
		kstream.Stream(b, "dedupe-id-input", kstream.ConsumedWith(S, S)).
			Deduplicate(func(_, v string) string { id, _, _ := strings.Cut(v, ":"); return id }, dedupeWindow,
				kstream.DeduplicatedAs[string]("dd").WithIDSerde(S)).
			To("dedupe-id-output", kstream.ProducedWith(S, S))
	}},
}

func TestConformanceDeduplicate(t *testing.T) {
	for _, d := range dedupeTopologies {
		t.Run(d.name, func(t *testing.T) { runDSLConformance(t, d.testCase()) })
		t.Run(d.name+"/caching", func(t *testing.T) {
			if !javaAvailable() {
				t.Skip("needs Java (" + conformance.ClasspathEnv + ") for the caching-on expectation")
			}
			runDSLConformance(t, d.testCase(cachingOnConfig))
		})
	}
}

func TestDeduplicateInvalid(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, "in", kstream.ConsumedWith(S, S)).DeduplicateByKey(0)
	if _, err := b.Build(); !errors.Is(err, kstream.ErrInvalidWindows) || !errors.Is(err, processor.ErrInvalidTopology) || !strings.Contains(err.Error(), "window must be at least 1 ms, got 0s") {
		t.Fatalf("window 0: %v, want ErrInvalidWindows in a topology error", err)
	}
	b = kstream.NewStreamsBuilder()
	kstream.Stream(b, "in", kstream.ConsumedWith(S, S)).Deduplicate[string](nil, dedupeWindow)
	if _, err := b.Build(); !errors.Is(err, processor.ErrInvalidTopology) || !strings.Contains(err.Error(), "KSTREAM-DEDUPLICATE-0000000002: id extractor must not be nil") {
		t.Fatalf("nil extractor: %v, want a topology error saying the extractor is nil", err)
	}
}
