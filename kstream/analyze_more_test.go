package kstream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// lookup is a processor that only reads store "lookup" (it declares so).
type lookup struct{}

func (lookup) Init(processor.ProcessorContext[string, string]) error { return nil }
func (lookup) Process(processor.Record[string, string]) error        { return nil }
func (lookup) Close() error                                          { return nil }

type lookupSupplier struct{ readOnly []string }

func (s lookupSupplier) Get() processor.Processor[string, string, string, string] { return &lookup{} }
func (s lookupSupplier) ReadOnlyStores() []string                                 { return s.readOnly }

func analyze(t *testing.T, b *kstream.StreamsBuilder) []processor.TopologyWarning {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo.Analyze()
}

func checkWarnings(t *testing.T, got, want []processor.TopologyWarning) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("Analyze = %d warnings\n%v\nwant %d\n%v", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("warning %d\n got %#v\nwant %#v", i, got[i], want[i])
		}
	}
}

func notCopartitioned(join, topics, sources string) processor.TopologyWarning {
	return processor.TopologyWarning{Kind: processor.WarningNotCopartitioned, Node: join,
		Message: "join " + join + " reads topics " + topics + " directly (sources " + sources + "), which nothing in the topology " +
			"co-partitions: they must have the same number of partitions (else the application fails at start) and be " +
			"partitioned by the join key with the same partitioner (else records that should join land in different tasks " +
			"and are missed); if they may not be, Repartition one side before the join"}
}

// Joins of two different user topics read directly (stream-table, table-table, stream-stream)
// cannot be co-partitioned by the topology; a join whose other side comes through a
// repartition topic, or that reads one topic twice, can.
func TestAnalyzeNotCopartitioned(t *testing.T) {
	S := serde.String()
	join := func(v, tv string) string { return v + tv }

	b := kstream.NewStreamsBuilder()
	orders := kstream.Stream(b, "orders", kstream.ConsumedWith(S, S))
	customers := kstream.Table(b, "customers", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("customers-store"))
	orders.Join(customers, join).To("enriched")
	checkWarnings(t, analyze(t, b), []processor.TopologyWarning{
		notCopartitioned("KSTREAM-JOIN-0000000003", `"orders", "customers"`, "KSTREAM-SOURCE-0000000000, KSTREAM-SOURCE-0000000001"),
	})

	b = kstream.NewStreamsBuilder()
	left := kstream.Table(b, "left", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("left-store"))
	right := kstream.Table(b, "right", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("right-store"))
	left.Join(right, join).ToStream().To("joined")
	checkWarnings(t, analyze(t, b), []processor.TopologyWarning{
		notCopartitioned("KTABLE-MERGE-0000000004", `"left", "right"`, "KSTREAM-SOURCE-0000000000, KSTREAM-SOURCE-0000000002"),
	})

	b = kstream.NewStreamsBuilder()
	clicks := kstream.Stream(b, "clicks", kstream.ConsumedWith(S, S))
	views := kstream.Stream(b, "views", kstream.ConsumedWith(S, S))
	clicks.JoinStream(views, join, kstream.OfTimeDifferenceAndGrace(time.Minute, time.Second)).To("pairs")
	got := analyze(t, b)
	if len(got) != 1 || got[0].Kind != processor.WarningNotCopartitioned || !strings.Contains(got[0].Message, `reads topics "clicks", "views" directly`) {
		t.Fatalf("stream-stream join: %v", got)
	}

	// One side re-keyed: it reaches the join through a repartition topic, which the assignor
	// sizes as the other side: nothing to warn about.
	b = kstream.NewStreamsBuilder()
	orders = kstream.Stream(b, "orders", kstream.ConsumedWith(S, S))
	customers = kstream.Table(b, "customers", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("customers-store"))
	orders.SelectKey(func(_, v string) string { return v }).Join(customers, join).To("enriched")
	checkWarnings(t, analyze(t, b), nil)

	// A foreign-key join needs no co-partitioning (it repartitions both ways itself), nor does
	// a join with a global table.
	b = kstream.NewStreamsBuilder()
	left = kstream.Table(b, "left", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("left-store"))
	right = kstream.Table(b, "right", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("right-store"))
	left.JoinFK(right, func(v string) string { return v }, join).ToStream().To("joined")
	kstream.Stream(b, "orders", kstream.ConsumedWith(S, S)).JoinGlobal(kstream.GlobalTable(b, "rates", kstream.ConsumedWith(S, S)),
		func(k, _ string) string { return k }, join).To("priced")
	checkWarnings(t, analyze(t, b), nil)

	// A self-join reads one topic.
	b = kstream.NewStreamsBuilder()
	clicks = kstream.Stream(b, "clicks", kstream.ConsumedWith(S, S))
	clicks.JoinStream(clicks, join, kstream.OfTimeDifferenceAndGrace(time.Minute, time.Second)).To("pairs")
	checkWarnings(t, analyze(t, b), nil)
}

// A store that only readers reach: a processor declaring it read-only (ReadOnlyStoreProvider)
// and nothing writing it. The same store with a writer connected, and a DSL table read by a
// join (written by its source), give no warning.
func TestAnalyzeStoreNotWritten(t *testing.T) {
	S := serde.String()
	sb := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("lookup"), S, S)

	b := kstream.NewStreamsBuilder()
	b.AddStateStore(sb)
	kstream.Stream(b, "events", kstream.ConsumedWith(S, S)).Process(processor.ProcessorSupplier[string, string, string, string](
		lookupSupplier{readOnly: []string{"lookup"}}), "lookup").To("out")
	checkWarnings(t, analyze(t, b), []processor.TopologyWarning{{Kind: processor.WarningStoreNotWritten, Node: "lookup",
		Message: "state store lookup is connected only to processors that read it (KSTREAM-PROCESSOR-0000000001): no processor " +
			"writes it, so every lookup finds nothing; connect the processor that fills it (AddStateStore or " +
			"ConnectProcessorAndStateStores), or fill it from a topic (AddReadOnlyStateStore, a global store or a table)"}})

	// A second processor, which may write (it declares nothing), connected to the store.
	b = kstream.NewStreamsBuilder()
	b.AddStateStore(sb)
	events := kstream.Stream(b, "events", kstream.ConsumedWith(S, S))
	events.Process(processor.ProcessorSupplier[string, string, string, string](lookupSupplier{readOnly: []string{"lookup"}}), "lookup").To("out")
	events.Process(processor.ProcessorSupplier[string, string, string, string](lookupSupplier{}), "lookup").To("out2")
	checkWarnings(t, analyze(t, b), nil)

	// The Processor API alike: reader only, then reader and writer.
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("src", []string{"events"}))
	must(topo.AddProcessor("reader", processor.ProcessorSupplier[string, string, string, string](lookupSupplier{readOnly: []string{"lookup"}}), "src"))
	must(topo.AddStateStore(sb, "reader"))
	if w := topo.Analyze(); len(w) != 1 || w[0].Kind != processor.WarningStoreNotWritten || w[0].Node != "lookup" {
		t.Fatalf("Processor API reader only: %v", w)
	}
	must(topo.AddProcessor("writer", processor.ProcessorSupplier[string, string, string, string](lookupSupplier{}), "src"))
	must(topo.ConnectProcessorAndStateStores("writer", "lookup"))
	if w := topo.Analyze(); len(w) != 0 {
		t.Fatalf("Processor API reader and writer: %v", w)
	}
}

// The two earlier warnings still come, first, beside the new ones.
func TestAnalyzeAllKinds(t *testing.T) {
	S := serde.String()
	b := kstream.NewStreamsBuilder()
	b.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("lookup"), S, S))
	orders := kstream.Stream(b, "orders", kstream.ConsumedWith(S, S))
	customers := kstream.Table(b, "customers", kstream.ConsumedWith(S, S), kstream.MaterializedAs[string, string]("customers-store"))
	kstream.WindowedBy(orders.GroupByKey(), kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).Count()
	orders.Join(customers, func(v, tv string) string { return v + tv }).To("orders")
	orders.Process(processor.ProcessorSupplier[string, string, string, string](lookupSupplier{readOnly: []string{"lookup"}}), "lookup")
	var kinds []string
	for _, w := range analyze(t, b) {
		kinds = append(kinds, w.Kind)
	}
	want := []string{processor.WarningNoGrace, processor.WarningSinkIsSource, processor.WarningStoreNotWritten, processor.WarningNotCopartitioned}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
}
