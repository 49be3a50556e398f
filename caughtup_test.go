package kstreams_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/kstreamstest"
	"github.com/kstreams-go/kstreams/serde"
)

// WaitCaughtUp returns once every record the inputs held has gone through the whole topology,
// the repartition topic's sub-topology included: the counts read from the store then equal a
// count of the input made here.
func TestWaitCaughtUpWordCount(t *testing.T) {
	b := kstreamstest.NewBroker(t)
	b.CreateTopics(t, 2, "wcu-lines", "wcu-counts")
	sb := kstream.NewStreamsBuilder()
	kstream.Stream(sb, "wcu-lines", kstream.ConsumedWith(serde.String(), serde.String())).
		FlatMapValues(func(line string) []string { return strings.Fields(line) }).
		GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(serde.String(), serde.String())).
		Count(kstream.MaterializedAs[string, int64]("wcu-store")).
		ToStream().To("wcu-counts", kstream.ProducedWith(serde.String(), serde.Long()))
	topo, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	app, err := kstreams.New(topo, kstreams.Config{ApplicationID: "wcu", BootstrapServers: b.Addrs(), StateDir: t.TempDir(),
		CommitInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close(context.Background())
	if err := app.WaitCaughtUp(context.Background()); !errors.Is(err, kstreams.ErrIllegalState) {
		t.Fatalf("WaitCaughtUp before Start = %v, want ErrIllegalState", err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	var recs []kstreamstest.Record[string, string]
	for i := 0; i < 200; i++ {
		line := strings.Repeat("x ", i%3) + "raven nevermore " + strings.Repeat("y ", i%5)
		for _, w := range strings.Fields(line) {
			want[w]++
		}
		recs = append(recs, kstreamstest.KV(string(rune('a'+i%7)), line))
	}
	kstreamstest.Produce(t, b, "wcu-lines", serde.String(), serde.String(), recs...)
	if err := app.WaitCaughtUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	kv, err := kstreams.KeyValueStore[string, int64](app, "wcu-store")
	if err != nil {
		t.Fatal(err)
	}
	for w, n := range want {
		got, ok, err := kv.Get(w)
		if err != nil || !ok || got != n {
			t.Errorf("count of %q after WaitCaughtUp = %d (found %v, %v), want %d", w, got, ok, err, n)
		}
	}
}

// While a record is held in a processor the application is behind: WaitCaughtUp returns its
// context's error naming the partition behind; once the record is done it returns nil.
func TestWaitCaughtUpBehind(t *testing.T) {
	b := kstreamstest.NewBroker(t)
	a := newLifecycleApp(t, b, t.TempDir())
	b.CreateTopics(t, 1, a.input)
	if err := a.app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.app.Close(context.Background())
	a.produce(t, "held")
	a.waitRecord(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- a.app.WaitCaughtUp(ctx) }()
	cancel()
	err := <-res
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), a.input+"-0 committed") {
		t.Fatalf("WaitCaughtUp while a record is held = %v, want context.Canceled naming %s-0", err, a.input)
	}
	a.reply <- nil
	if err := a.app.WaitCaughtUp(context.Background()); err != nil {
		t.Fatalf("WaitCaughtUp after the record = %v", err)
	}
}
