package kstream_test

import (
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Topology.Analyze names the suspect constructs a topology builds with: a
// windowed aggregation without grace, and a sink writing a topic the topology reads itself;
// a topology with grace and a Repartition has none.
func TestAnalyzeWarnings(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	views := kstream.Stream(b, "views", kstream.ConsumedWith(serde.String(), serde.String()))
	g := views.GroupByKey()
	kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).Count(kstream.MaterializedAs[string, int64]("per-minute"))
	kstream.WindowedBySession(g, kstream.SessionWindowsOfInactivityGapWithNoGrace(time.Minute)).Count(kstream.MaterializedAs[string, int64]("sessions"))
	views.To("views")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	got := topo.Analyze()
	want := []processor.TopologyWarning{
		{Kind: processor.WarningNoGrace, Node: "KSTREAM-AGGREGATE-0000000001", Message: "windowed aggregation KSTREAM-AGGREGATE-0000000001 " +
			"(store per-minute) has no grace period: a window closes as soon as stream time passes its end, so a record out of order " +
			"by even 1 ms is dropped; unless the input is in timestamp order, give the windows a grace period (TimeWindowsOfSizeAndGrace)"},
		{Kind: processor.WarningNoGrace, Node: "KSTREAM-AGGREGATE-0000000002", Message: "windowed aggregation KSTREAM-AGGREGATE-0000000002 " +
			"(store sessions) has no grace period: a window closes as soon as stream time passes its end, so a record out of order " +
			"by even 1 ms is dropped; unless the input is in timestamp order, give the windows a grace period (SessionWindowsOfInactivityGapAndGrace)"},
		{Kind: processor.WarningSinkIsSource, Node: "KSTREAM-SINK-0000000003", Message: `sink KSTREAM-SINK-0000000003 writes topic "views", ` +
			`which source KSTREAM-SOURCE-0000000000 of the same topology reads: the application reads its own output back through a ` +
			`topic it does not manage; for a re-keying step use Repartition (an internal repartition topic)`},
	}
	if len(got) != len(want) {
		t.Fatalf("Analyze = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("warning %d\n got %v\nwant %v", i, got[i], want[i])
		}
	}

	b = kstream.NewStreamsBuilder()
	views = kstream.Stream(b, "views", kstream.ConsumedWith(serde.String(), serde.String()))
	kstream.WindowedBy(views.Repartition().GroupByKey(), kstream.TimeWindowsOfSizeAndGrace(time.Minute, 10*time.Second)).Count()
	topo, err = b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if w := topo.Analyze(); len(w) != 0 {
		t.Fatalf("Analyze = %v, want none", w)
	}
}
