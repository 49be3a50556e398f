package processor_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// These tests rebuild the Processor API reference topologies of conformance/ (see
// conformance/README.md and conformance/java/.../PapiTopologies.java) in Go and compare
// Describe().String() with the text Java 4.4.0 printed for them
// (conformance/golden/<name>.describe.txt). The expected text comes only from Java.

// nopProcessor is a processor of the given types that does nothing; describe only depends on
// the graph.
type nopProcessor[KIn, VIn, KOut, VOut any] struct{}

func (nopProcessor[KIn, VIn, KOut, VOut]) Init(processor.ProcessorContext[KOut, VOut]) error {
	return nil
}
func (nopProcessor[KIn, VIn, KOut, VOut]) Process(processor.Record[KIn, VIn]) error { return nil }
func (nopProcessor[KIn, VIn, KOut, VOut]) Close() error                             { return nil }

func nop[KIn, VIn, KOut, VOut any]() processor.ProcessorSupplier[KIn, VIn, KOut, VOut] {
	return processor.ProcessorSupplierFunc[KIn, VIn, KOut, VOut](func() processor.Processor[KIn, VIn, KOut, VOut] {
		return &nopProcessor[KIn, VIn, KOut, VOut]{}
	})
}

// keyTopicExtractor mirrors PapiTopologies.Sinks.KeyTopicExtractor, whose toString() is
// "KeyTopicExtractor".
type keyTopicExtractor struct{}

func (keyTopicExtractor) Extract(key, _ string, _ processor.RecordContext) (string, error) {
	return "papi-sinks-key-" + key, nil
}
func (keyTopicExtractor) String() string { return "KeyTopicExtractor" }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "conformance", "golden", name+".describe.txt"))
	if err != nil {
		t.Fatalf("golden file from Java: %v", err)
	}
	return string(b)
}

func checkDescribe(t *testing.T, name string, topo *processor.Topology) {
	t.Helper()
	want := golden(t, name)
	if got := topo.Describe().String(); got != want {
		t.Errorf("%s: Describe() differs from Java\n--- got\n%q\n--- want (Java)\n%q", name, got, want)
	}
}

// TestDescribeWordCountProcessor: Kafka's WordCountProcessorDemo (PapiTopologies.WordCountProcessor).
func TestDescribeWordCountProcessor(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("Source", []string{"streams-plaintext-input"}))
	must(t, topo.AddProcessor("Process", nop[string, string, string, string](), "Source"))
	must(t, topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer()), "Process"))
	must(t, topo.AddSink("Sink", "streams-wordcount-processor-output", []string{"Process"}))
	checkDescribe(t, "wordcount-processor", topo)
}

// TestDescribePapiMulti: three sources, two processors sharing a store (one sub-topology).
func TestDescribePapiMulti(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("SourceA", []string{"papi-multi-input-a"},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(t, topo.AddSource("SourceB", []string{"papi-multi-input-b"},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())))
	must(t, topo.AddSource("SourceC", []string{"papi-multi-input-c"},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(t, topo.AddProcessor("Merge", nop[string, any, string, int64](), "SourceA", "SourceB"))
	must(t, topo.AddProcessor("Audit", nop[string, string, string, string](), "SourceC"))
	must(t, topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Shared"), serde.String(), serde.Long()), "Merge"))
	must(t, topo.ConnectProcessorAndStateStores("Audit", "Shared"))
	must(t, topo.AddSink("TotalsSink", "papi-multi-totals", []string{"Merge"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())))
	must(t, topo.AddSink("AuditSink", "papi-multi-audit", []string{"Audit"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.String())))
	checkDescribe(t, "papi-multi", topo)

	d := topo.Describe()
	if len(d.Subtopologies) != 1 || len(d.GlobalStores) != 0 || len(d.Subtopologies[0].Nodes) != 7 {
		t.Fatalf("want one sub-topology of 7 nodes, got %d sub-topologies", len(d.Subtopologies))
	}
}

// TestDescribePapiGlobal: a global store (sub-topology 0) and a pattern source.
func TestDescribePapiGlobal(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddGlobalStore(
		store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Rates"), serde.String(), serde.Double()).WithLoggingDisabled(),
		"RatesSource", serde.String(), serde.Double(), "papi-global-rates", "RatesUpdater",
		nop[string, float64, struct{}, struct{}]()))
	must(t, topo.AddSourcePattern("OrdersSource", "papi-global-orders-.*",
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Double())))
	must(t, topo.AddProcessor("Convert", nop[string, float64, string, float64](), "OrdersSource"))
	must(t, topo.AddSink("ConvertedSink", "papi-global-converted", []string{"Convert"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Double())))
	checkDescribe(t, "papi-global", topo)

	d := topo.Describe()
	if len(d.GlobalStores) != 1 || d.GlobalStores[0].ID != 0 || d.GlobalStores[0].Processor.Stores()[0] != "Rates" {
		t.Fatalf("global store description: %+v", d.GlobalStores)
	}
	if len(d.Subtopologies) != 1 || d.Subtopologies[0].ID != 1 {
		t.Fatalf("want sub-topology 1 after the global store, got %+v", d.Subtopologies)
	}
	if src, ok := d.Subtopologies[0].Nodes[0].(*processor.SourceDescription); !ok || src.TopicPattern() != "papi-global-orders-.*" || src.Topics() != nil {
		t.Fatalf("first node should be the pattern source, got %v", d.Subtopologies[0].Nodes[0])
	}
}

// TestDescribePapiSinks: a router with a named-child forward, a static and a dynamic sink.
func TestDescribePapiSinks(t *testing.T) {
	topo := processor.NewTopology()
	must(t, topo.AddSource("Input", []string{"papi-sinks-input"},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(t, topo.AddProcessor("Router", nop[string, string, string, string](), "Input"))
	must(t, topo.AddProcessor("Upper", nop[string, string, string, string](), "Router"))
	must(t, topo.AddSink("UpperSink", "papi-sinks-upper", []string{"Upper"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.String())))
	must(t, topo.AddDynamicSink("KeySink", processor.TopicNameExtractor[string, string](keyTopicExtractor{}), []string{"Router"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.String())))
	must(t, topo.AddSink("ErrorSink", "papi-sinks-errors", []string{"Router"}))
	checkDescribe(t, "papi-sinks", topo)

	d := topo.Describe()
	router := d.Subtopologies[0].Nodes[1]
	var succ []string
	for _, s := range router.Successors() {
		succ = append(succ, s.Name())
	}
	// Java orders successors by sub-graph size, then name: Upper (2 nodes) first.
	if router.Name() != "Router" || len(succ) != 3 || succ[0] != "Upper" || succ[1] != "ErrorSink" || succ[2] != "KeySink" {
		t.Fatalf("Router successors = %v", succ)
	}
	if ks, ok := d.Subtopologies[0].Nodes[4].(*processor.SinkDescription); !ok || ks.TopicNameExtractor() != "KeyTopicExtractor" || ks.Topic() != "" {
		t.Fatalf("node 4 should be the dynamic sink, got %v", d.Subtopologies[0].Nodes[4])
	}
}
