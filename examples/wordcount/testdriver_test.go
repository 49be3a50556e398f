package main

import (
	"testing"

	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// The word-count topology under the TopologyTestDriver: no broker, records piped in and read
// out synchronously. README's "Test a topology with the test driver" section shows this test.
func TestTopologyWithTestDriver(t *testing.T) {
	topo, err := Topology("lines", "counts")
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{
		"application.id":             "wordcount-test",
		"statestore.cache.max.bytes": "0", // one output record per input word
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "lines", serde.String(), serde.String())
	out := testdriver.CreateOutputTopic(d, "counts", serde.String(), serde.Long())

	if err := in.PipeInput("Nevermore, quoth the Raven: nevermore!"); err != nil {
		t.Fatal(err)
	}
	got, err := testdriver.ReadKeyValuesToMap(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"nevermore": 2, "quoth": 1, "the": 1, "raven": 1}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for w, n := range want {
		if got[w] != n {
			t.Errorf("%s: got %d, want %d", w, got[w], n)
		}
	}
}
