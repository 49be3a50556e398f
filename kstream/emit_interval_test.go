package kstream_test

import (
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// EmitOnWindowClose in the test driver emits a window as soon as a record closes it (the
// driver sets EmitIntervalWindowedAggregationConfig to 0, as Java's); with the interval set to
// 60 s the aggregation looks again only once the wall clock moved 60 s, on the next record.
func TestEmitOnWindowCloseInterval(t *testing.T) {
	run := func(props map[string]string, advance time.Duration) []string {
		t.Helper()
		b := kstream.NewStreamsBuilder()
		s := kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String()))
		kstream.WindowedBy(s.GroupByKey(), kstream.TimeWindowsOfSizeWithNoGrace(10*time.Millisecond)).
			EmitStrategy(kstream.EmitOnWindowClose()).
			Count(kstream.MaterializedAs[string, int64]("counts").WithRetention(time.Hour)). // windows outlive the throttle
			ToStream().
			To("out", kstream.ProducedWith(serde.TimeWindowed(serde.String(), 10*time.Millisecond), serde.Long()))
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		props["application.id"] = "emit-interval"
		d, err := testdriver.New(topo, props, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String())
		out := testdriver.CreateOutputTopic(d, "out", serde.TimeWindowed(serde.String(), 10*time.Millisecond), serde.Long())
		var got []string
		read := func() {
			rs, err := out.ReadRecordsToList()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				got = append(got, r.Key.String())
			}
		}
		for _, r := range []testdriver.TestRecord[string, string]{
			testdriver.NewTestRecordAt("a", "1", 1),
			testdriver.NewTestRecordAt("a", "2", 12), // closes [0,10)
			testdriver.NewTestRecordAt("a", "3", 25), // closes [10,20)
		} {
			if err := in.PipeRecord(r); err != nil {
				t.Fatal(err)
			}
			read()
		}
		if advance > 0 {
			if err := d.AdvanceWallClockTime(advance); err != nil {
				t.Fatal(err)
			}
			if err := in.PipeRecord(testdriver.NewTestRecordAt("a", "4", 26)); err != nil {
				t.Fatal(err)
			}
			read()
		}
		return got
	}
	if got := run(map[string]string{}, 0); len(got) != 2 || got[0] != "[a@0/10]" || got[1] != "[a@10/20]" {
		t.Fatalf("interval 0: %q, want [a@0/10] [a@10/20]", got)
	}
	throttled := map[string]string{kstream.EmitIntervalWindowedAggregationConfig: "60000"}
	// The first check (on the first record) finds nothing closed and sets the next to 60 s on.
	if got := run(throttled, 0); len(got) != 0 {
		t.Fatalf("interval 60 s, clock still: %q, want nothing", got)
	}
	throttled = map[string]string{kstream.EmitIntervalWindowedAggregationConfig: "60000"}
	if got := run(throttled, time.Minute); len(got) != 2 || got[0] != "[a@0/10]" || got[1] != "[a@10/20]" {
		t.Fatalf("interval 60 s, clock moved 60 s: %q, want [a@0/10] [a@10/20]", got)
	}
}
