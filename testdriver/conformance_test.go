package testdriver

import (
	"path/filepath"
	"strings"
	"testing"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// conformanceCase is a reference topology of conformance/README.md built with our API.
type conformanceCase struct {
	name  string
	props map[string]string
	build func(t *testing.T) *processor.Topology
	// types are the declared key/value kinds of each output topic (README "Output types");
	// topics not listed decode as bytes, as in the Java Runner.
	types func(topic string) (key, value conformance.Kind)
}

// runGo runs the vector through our driver and returns the outputs in the Runner's order:
// after each event, every produced topic in ascending name order, each in production order.
func runGo(t *testing.T, c conformanceCase, events []conformance.Event) []conformance.OutputRecord {
	t.Helper()
	d, err := New(c.build(t), c.props, 0)
	if err != nil {
		t.Fatal(err)
	}
	var outs []conformance.OutputRecord
	drain := func(step int) {
		for _, topic := range d.ProducedTopicNames() {
			kk, vk := c.types(topic)
			o := CreateOutputTopic(d, topic, serde.ByteArray(), serde.ByteArray())
			recs, err := o.ReadRecordsToList()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				key, err := conformance.Deserialize(kk, r.Key)
				if err != nil {
					t.Fatalf("step %d topic %s key: %v", step, topic, err)
				}
				value, err := conformance.Deserialize(vk, r.Value)
				if err != nil {
					t.Fatalf("step %d topic %s value: %v", step, topic, err)
				}
				var hs []conformance.Header
				for h := range r.Headers.All() {
					hv := conformance.Null()
					if h.Value != nil {
						hv = conformance.Bytes(h.Value)
					}
					hs = append(hs, conformance.Header{Key: h.Key, Value: hv})
				}
				outs = append(outs, conformance.OutputRecord{Step: step, Topic: topic, Key: key, Value: value,
					KeyBytes: r.Key, ValueBytes: r.Value, Timestamp: r.Timestamp, Headers: hs})
			}
		}
	}
	drain(-1)
	for i, ev := range events {
		if ev.Record == nil {
			if err := d.AdvanceWallClockTime(msDuration(ev.AdvanceWallClockMs)); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		} else {
			r := ev.Record
			kb, err := r.Key.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			vb, err := r.Value.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			var h serde.Headers
			for _, hd := range r.Headers {
				hb, err := hd.Value.Serialize()
				if err != nil {
					t.Fatal(err)
				}
				h.Add(hd.Key, hb)
			}
			in := CreateInputTopic(d, r.Topic, serde.ByteArray(), serde.ByteArray())
			if err := in.PipeRecord(NewTestRecordAt(kb, vb, r.Timestamp).WithHeaders(h)); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		drain(i)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	drain(len(events))
	return outs
}

func runConformance(t *testing.T, c conformanceCase) {
	vector := filepath.Join("..", "conformance", "vectors", c.name+".jsonl")
	events, err := conformance.ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	got := runGo(t, c, events)
	// The expected side is always what Java's TopologyTestDriver produced, run now.
	want, describe := conformance.RunJava(t, c.name, vector)
	if diff := conformance.DiffOutputs(want, got); diff != "" {
		t.Fatalf("output differs from Java (%d Java records, %d Go records):\n%s", len(want), len(got), diff)
	}
	if len(want) == 0 {
		t.Fatal("Java produced no output; the vector tests nothing")
	}
	if gd := c.build(t).Describe().String(); gd != describe {
		t.Fatalf("describe differs:\n--- java\n%s\n--- go\n%s", describe, gd)
	}
}

func typesOf(m map[string][2]conformance.Kind, prefixes map[string][2]conformance.Kind) func(string) (conformance.Kind, conformance.Kind) {
	return func(topic string) (conformance.Kind, conformance.Kind) {
		if k, ok := m[topic]; ok {
			return k[0], k[1]
		}
		for p, k := range prefixes {
			if strings.HasPrefix(topic, p) {
				return k[0], k[1]
			}
		}
		return conformance.KindBytes, conformance.KindBytes
	}
}

// wordCountProcessorTopology is Kafka's WordCountProcessorDemo topology.
func wordCountProcessorTopology(t *testing.T) *processor.Topology {
	topo := processor.NewTopology()
	must(t, topo.AddSource("Source", []string{"streams-plaintext-input"}))
	must(t, topo.AddProcessor("Process", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &wordCountProcessor{} }), "Source"))
	must(t, topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer()), "Process"))
	must(t, topo.AddSink("Sink", "streams-wordcount-processor-output", []string{"Process"}))
	return topo
}

func wordCountProcessorCase() conformanceCase {
	return conformanceCase{
		name: "wordcount-processor",
		props: map[string]string{
			propnames.ApplicationIDConfig:     "streams-wordcount-processor",
			propnames.DefaultKeySerdeConfig:   "org.apache.kafka.common.serialization.Serdes$StringSerde",
			propnames.DefaultValueSerdeConfig: "org.apache.kafka.common.serialization.Serdes$StringSerde",
			"statestore.cache.max.bytes":      "0",
		},
		build: wordCountProcessorTopology,
		types: typesOf(map[string][2]conformance.Kind{
			"streams-wordcount-processor-Counts-changelog": {conformance.KindString, conformance.KindInteger},
			"streams-wordcount-processor-output":           {conformance.KindString, conformance.KindString},
		}, nil),
	}
}

// TestConformanceWordCountProcessor is the main check: Kafka's WordCountProcessorDemo in our
// driver and in Java's TopologyTestDriver on the same vector (records and wall-clock advances)
// give identical output records, timestamps and order.
func TestConformanceWordCountProcessor(t *testing.T) { runConformance(t, wordCountProcessorCase()) }

// TestGolden checks our output against the committed Java golden files, so the check also runs
// where Java is not available (CI regenerates the goldens from Java).
func TestGolden(t *testing.T) {
	for _, c := range []conformanceCase{wordCountProcessorCase(), papiMultiCase(), papiGlobalCase(), papiSinksCase()} {
		t.Run(c.name, func(t *testing.T) {
			events, err := conformance.ReadEventsFile(filepath.Join("..", "conformance", "vectors", c.name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := conformance.ReadOutputsFile(filepath.Join("..", "conformance", "golden", c.name+".out.jsonl"))
			if err != nil {
				t.Skipf("no golden file: %v", err)
			}
			got := runGo(t, c, events)
			if diff := conformance.DiffOutputs(want, got); diff != "" {
				t.Fatalf("output differs from the Java golden file:\n%s", diff)
			}
			if len(want) == 0 {
				t.Fatal("empty golden file")
			}
		})
	}
}
