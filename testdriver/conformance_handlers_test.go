package testdriver

import (
	"errors"
	"path/filepath"
	"testing"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Exception-handler conformance: the same reference topologies on vectors that make Java
// throw, run with the LogAndContinue handlers, must drop the same records as Java.

// nullFailingWordCount is the word-count processor with Java's behaviour on a null line:
// record.value().toLowerCase() throws a NullPointerException.
type nullFailingWordCount struct{ wordCountProcessor }

func (p *nullFailingWordCount) Process(r processor.Record[any, any]) error {
	if r.Value == nil {
		return errors.New("NullPointerException: value is null")
	}
	return p.wordCountProcessor.Process(processor.Record[string, string]{Key: stringOrEmpty(r.Key), Value: r.Value.(string), Timestamp: r.Timestamp, Headers: r.Headers})
}

func stringOrEmpty(v any) string {
	s, _ := v.(string)
	return s
}

func nullFailingWordCountTopology(t *testing.T) *processor.Topology {
	topo := processor.NewTopology()
	must(t, topo.AddSource("Source", []string{"streams-plaintext-input"}))
	must(t, topo.AddProcessor("Process", processor.ProcessorSupplierFunc[any, any, string, string](
		func() processor.Processor[any, any, string, string] { return &nullFailingWordCount{} }), "Source"))
	must(t, topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer()), "Process"))
	must(t, topo.AddSink("Sink", "streams-wordcount-processor-output", []string{"Process"}))
	return topo
}

func runConformanceVector(t *testing.T, c conformanceCase, vector string, configs ...string) {
	events, err := conformance.ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	got := runGo(t, c, events)
	want, _ := conformance.RunJava(t, c.name, vector, configs...)
	if diff := conformance.DiffOutputs(want, got); diff != "" {
		t.Fatalf("output differs from Java (%d Java records, %d Go records):\n%s", len(want), len(got), diff)
	}
	if len(want) == 0 {
		t.Fatal("Java produced no output")
	}
}

func TestConformanceProcessingExceptionHandlerContinue(t *testing.T) {
	const h = "org.apache.kafka.streams.errors.LogAndContinueProcessingExceptionHandler"
	c := wordCountProcessorCase()
	c.props = withProps(c.props, propnames.ProcessingExceptionHandlerConfig, h)
	c.build = nullFailingWordCountTopology
	runConformanceVector(t, c, filepath.Join("testdata", "wordcount-processor-nulls.jsonl"), propnames.ProcessingExceptionHandlerConfig+"="+h)
}

func TestConformanceDeserializationExceptionHandlerContinue(t *testing.T) {
	const h = "org.apache.kafka.streams.errors.LogAndContinueExceptionHandler"
	c := papiMultiCase()
	c.props = withProps(c.props, propnames.DeserializationExceptionHandlerConfig, h)
	runConformanceVector(t, c, filepath.Join("testdata", "papi-multi-badbytes.jsonl"), propnames.DeserializationExceptionHandlerConfig+"="+h)
}

// With the default handlers, the same inputs fail the pipe call with an error (Java throws).
func TestDefaultHandlersFail(t *testing.T) {
	c := wordCountProcessorCase()
	d, err := New(nullFailingWordCountTopology(t), c.props, 0)
	must(t, err)
	in := CreateInputTopic(d, "streams-plaintext-input", serde.String(), serde.Nullable(serde.String()), WithStartTimestamp(0))
	if err := in.PipeInput(nil); err == nil {
		t.Fatal("null line accepted by the default processing handler")
	}
	m := papiMultiCase()
	d2, err := New(papiMultiTopology(t), m.props, 0)
	must(t, err)
	bad := CreateInputTopic(d2, "papi-multi-input-b", serde.String(), serde.ByteArray(), WithStartTimestamp(0))
	if err := bad.PipeKeyValue("x", []byte{1, 2, 3}); err == nil {
		t.Fatal("3-byte Long accepted by the default deserialization handler")
	}
}
