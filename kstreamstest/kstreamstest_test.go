package kstreamstest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/kstreamstest"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// checkWordCount is the test a user writes: a word count on a broker of
// the helper package, its output read back typed, then WaitProcessed and an interactive query
// with the final counts.
func checkWordCount(t *testing.T, b *kstreamstest.Broker) {
	lines, counts := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts")
	appID := kafkatest.Name(t, "wc")
	b.CreateTopics(t, 2, lines, counts)
	sb := kstream.NewStreamsBuilder()
	kstream.Stream(sb, lines, kstream.ConsumedWith(serde.String(), serde.String())).
		FlatMapValues(func(line string) []string { return strings.Fields(line) }).
		GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(serde.String(), serde.String())).
		Count(kstream.MaterializedAs[string, int64]("counts-store").WithCachingDisabled()).
		ToStream().To(counts, kstream.ProducedWith(serde.String(), serde.Long()))
	topo, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	app, err := kstreams.New(topo, kstreams.Config{ApplicationID: appID, BootstrapServers: b.Addrs(),
		StateDir: t.TempDir(), CommitInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app.Close(context.Background())

	kstreamstest.Produce(t, b, lines, serde.String(), serde.String(),
		kstreamstest.KV("", "the quick fox"), kstreamstest.KV("", "the lazy dog"), kstreamstest.KVAt("", "the end", 1000))
	got := kstreamstest.Consume(t, b, counts, serde.String(), serde.Long(), 8, time.Minute)
	final := map[string]int64{}
	for _, r := range got {
		if r.Value > final[r.Key] {
			final[r.Key] = r.Value
		}
	}
	want := map[string]int64{"the": 3, "quick": 1, "fox": 1, "lazy": 1, "dog": 1, "end": 1}
	if len(got) != 8 || len(final) != len(want) { // caching off: every update, the:1,2,3 and five 1s
		t.Fatalf("output %+v", got)
	}
	for w, n := range want {
		if final[w] != n {
			t.Fatalf("count of %q = %d, want %d (output %+v)", w, final[w], n, got)
		}
	}
	if err := b.WaitProcessed(appID, time.Minute, lines); err != nil {
		t.Fatal(err)
	}
	kv, err := kstreams.KeyValueStore[string, int64](app, "counts-store")
	if err != nil {
		t.Fatal(err)
	}
	all, err := store.Collect(kv.All())
	if err != nil || len(all) != len(want) {
		t.Fatalf("store %v %v", all, err)
	}
	for _, e := range all {
		if want[e.Key] != e.Value {
			t.Fatalf("store %q = %d, want %d", e.Key, e.Value, want[e.Key])
		}
	}
	// An application that never ran has processed nothing: WaitProcessed says which
	// partitions are behind (all three lines have the key "", so partition 1; partition 0 is
	// empty and not waited for).
	err = b.WaitProcessed(appID+"-never", 200*time.Millisecond, lines)
	if !errors.Is(err, kstreamstest.ErrNotProcessed) || !strings.HasSuffix(err.Error(), lines+"-1 committed -1 of 3") {
		t.Fatalf("WaitProcessed of an idle application = %v", err)
	}
}

func TestEmbeddedWordCount(t *testing.T) { checkWordCount(t, kstreamstest.NewBroker(t)) }

func TestIntegrationWordCount(t *testing.T) {
	addrs := kafkatest.Real(t).Addrs
	checkWordCount(t, kstreamstest.Connect(addrs...))
}
