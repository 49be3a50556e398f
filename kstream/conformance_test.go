package kstream_test

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// dslCase is a reference topology of conformance/README.md built with the DSL.
type dslCase struct {
	name  string
	props map[string]string
	build func(t *testing.T) *processor.Topology
	// types are the declared key/value kinds of output topics (README "Output types"); topics
	// not listed decode as bytes, as in the Java Runner.
	types map[string][2]conformance.Kind
	// configs are extra --config settings passed to both sides.
	configs []string
	// dropped reports the driver's dropped-records count after each step that changed it, as
	// the Java Runner does for topologies whose reportsDroppedRecords is true.
	dropped bool
}

func (c dslCase) kinds(topic string) (conformance.Kind, conformance.Kind) {
	if k, ok := c.types[topic]; ok {
		return k[0], k[1]
	}
	for p, k := range c.types {
		if strings.HasSuffix(p, "*") && strings.HasPrefix(topic, strings.TrimSuffix(p, "*")) {
			return k[0], k[1]
		}
	}
	return conformance.KindBytes, conformance.KindBytes
}

// runGo runs the vector through our driver; outputs in the Runner's order (per step, topics
// ascending, each in production order).
func runGo(t *testing.T, c dslCase, topo *processor.Topology, props map[string]string, events []conformance.Event) []conformance.OutputRecord {
	t.Helper()
	d, err := testdriver.New(topo, props, 0)
	if err != nil {
		t.Fatal(err)
	}
	var outs []conformance.OutputRecord
	var lastDropped int64
	drain := func(step int) {
		defer func() {
			if n := d.DroppedRecords(); c.dropped && n != lastDropped {
				lastDropped = n
				vb := binary.BigEndian.AppendUint64(nil, uint64(n))
				outs = append(outs, conformance.OutputRecord{Step: step, Topic: conformance.DroppedRecordsTopic,
					Key: conformance.Null(), Value: conformance.Long(n), ValueBytes: vb, Headers: nil})
			}
		}()
		for _, topic := range d.ProducedTopicNames() {
			kk, vk := c.kinds(topic)
			o := testdriver.CreateOutputTopic(d, topic, serde.ByteArray(), serde.ByteArray())
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
			if err := d.AdvanceWallClockTime(time.Duration(ev.AdvanceWallClockMs) * time.Millisecond); err != nil {
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
			in := testdriver.CreateInputTopic(d, r.Topic, serde.ByteArray(), serde.ByteArray())
			if err := in.PipeRecord(testdriver.NewTestRecordAt(kb, vb, r.Timestamp).WithHeaders(h)); err != nil {
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

// runDSLConformance checks outputs and Describe against Java's TopologyTestDriver run now (and,
// when Java is not available, against the committed golden files, which Java regenerates in CI).
func runDSLConformance(t *testing.T, c dslCase) {
	t.Helper()
	vector := filepath.Join("..", "conformance", "vectors", c.name+".jsonl")
	events, err := conformance.ReadEventsFile(vector)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for k, v := range c.props {
		props[k] = v
	}
	for _, kv := range c.configs {
		k, v, _ := strings.Cut(kv, "=")
		props[k] = v
	}
	topo := c.build(t)
	got := runGo(t, c, topo, props, events)
	want, describe := javaOrGolden(t, c.name, vector, c.configs)
	if diff := conformance.DiffOutputs(want, got); diff != "" {
		t.Fatalf("output differs from Java (%d Java records, %d Go records):\n%s", len(want), len(got), diff)
	}
	if len(want) == 0 {
		t.Fatal("Java produced no output; the vector tests nothing")
	}
	if gd := topo.Describe().String(); gd != describe {
		t.Fatalf("describe differs:\n--- java\n%s\n--- go\n%s", describe, gd)
	}
}

// javaOrGolden runs Java when KSTREAMS_CONFORMANCE_CP is set, else reads the golden files
// (only for the default configuration; with extra configs the test needs Java).
func javaOrGolden(t *testing.T, name, vector string, configs []string) ([]conformance.OutputRecord, string) {
	t.Helper()
	if javaAvailable() || len(configs) > 0 {
		return conformance.RunJava(t, name, vector, configs...)
	}
	outs, err := conformance.ReadOutputsFile(filepath.Join("..", "conformance", "golden", name+".out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := readFile(filepath.Join("..", "conformance", "golden", name+".describe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return outs, d
}

func must(t *testing.T, topo *processor.Topology, err error) *processor.Topology {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

const (
	appIDConfig      = "application.id"
	defaultKeySerde  = "default.key.serde"
	defaultValSerde  = "default.value.serde"
	cacheMaxBytes    = "statestore.cache.max.bytes"
	javaStringSerde  = "org.apache.kafka.common.serialization.Serdes$StringSerde"
	cachingOnConfig  = "statestore.cache.max.bytes=10485760"
	cachingOffConfig = "statestore.cache.max.bytes=0"
)

func stringDefaults(appID string) map[string]string {
	return map[string]string{appIDConfig: appID, defaultKeySerde: javaStringSerde, defaultValSerde: javaStringSerde}
}

var (
	kS = conformance.KindString
	kL = conformance.KindLong
	kI = conformance.KindInteger
)
