package main

import (
	"context"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstreamstest"
	"github.com/kstreams-go/kstreams/serde"
)

// TestWordCountOnEmbeddedBroker is the README's ten-line test with the public test helper:
// the word count runs on an embedded broker and its output is read back typed.
func TestWordCountOnEmbeddedBroker(t *testing.T) {
	b := kstreamstest.NewBroker(t)
	b.CreateTopics(t, 1, "lines", "counts")
	topo, _ := Topology("lines", "counts")
	app, _ := kstreams.New(topo, kstreams.Config{ApplicationID: "wordcount-test", BootstrapServers: b.Addrs(),
		StateDir: t.TempDir(), CommitInterval: 100 * time.Millisecond})
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app.Close(context.Background())
	kstreamstest.Produce(t, b, "lines", serde.String(), serde.String(), kstreamstest.KV("", "Nevermore, quoth the Raven: nevermore!"))
	if err := b.WaitProcessed("wordcount-test", time.Minute, "lines"); err != nil {
		t.Fatal(err)
	}
	kv, _ := kstreams.KeyValueStore[string, int64](app, storeName)
	for w, n := range map[string]int64{"nevermore": 2, "quoth": 1, "the": 1, "raven": 1} {
		if got, _, _ := kv.Get(w); got != n {
			t.Errorf("count of %q = %d, want %d", w, got, n)
		}
	}
	out := kstreamstest.Consume(t, b, "counts", serde.String(), serde.Long(), 1, time.Minute)
	if len(out) == 0 {
		t.Fatal("no output")
	}
}
