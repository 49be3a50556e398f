package kstream_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// The word count, run in the test driver.
func Example() {
	b := kstream.NewStreamsBuilder()
	lines := kstream.Stream(b, "streams-plaintext-input", kstream.ConsumedWith(serde.String(), serde.String()))
	counts := lines.FlatMapValues(strings.Fields).
		GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(serde.String(), serde.String())).
		Count(kstream.MaterializedAs[string, int64]("counts-store"))
	counts.ToStream().To("streams-wordcount-output", kstream.ProducedWith(serde.String(), serde.Long()))

	topology, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := testdriver.New(topology, map[string]string{"application.id": "wordcount", "statestore.cache.max.bytes": "0"}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "streams-plaintext-input", serde.String(), serde.String())
	out := testdriver.CreateOutputTopic(d, "streams-wordcount-output", serde.String(), serde.Long())
	_ = in.PipeValueList([]string{"hello kafka streams", "hello go"})
	kvs, _ := out.ReadKeyValuesToList()
	for _, kv := range kvs {
		fmt.Println(kv.Key, kv.Value)
	}
	fmt.Print(topology.Describe())
	// Output:
	// hello 1
	// kafka 1
	// streams 1
	// hello 2
	// go 1
	// Topologies:
	//    Sub-topology: 0
	//     Source: KSTREAM-SOURCE-0000000000 (topics: [streams-plaintext-input])
	//       --> KSTREAM-FLATMAPVALUES-0000000001
	//     Processor: KSTREAM-FLATMAPVALUES-0000000001 (stores: [])
	//       --> KSTREAM-KEY-SELECT-0000000002
	//       <-- KSTREAM-SOURCE-0000000000
	//     Processor: KSTREAM-KEY-SELECT-0000000002 (stores: [])
	//       --> counts-store-repartition-filter
	//       <-- KSTREAM-FLATMAPVALUES-0000000001
	//     Processor: counts-store-repartition-filter (stores: [])
	//       --> counts-store-repartition-sink
	//       <-- KSTREAM-KEY-SELECT-0000000002
	//     Sink: counts-store-repartition-sink (topic: counts-store-repartition)
	//       <-- counts-store-repartition-filter
	//
	//   Sub-topology: 1
	//     Source: counts-store-repartition-source (topics: [counts-store-repartition])
	//       --> KSTREAM-AGGREGATE-0000000003
	//     Processor: KSTREAM-AGGREGATE-0000000003 (stores: [counts-store])
	//       --> KTABLE-TOSTREAM-0000000007
	//       <-- counts-store-repartition-source
	//     Processor: KTABLE-TOSTREAM-0000000007 (stores: [])
	//       --> KSTREAM-SINK-0000000008
	//       <-- KSTREAM-AGGREGATE-0000000003
	//     Sink: KSTREAM-SINK-0000000008 (topic: streams-wordcount-output)
	//       <-- KTABLE-TOSTREAM-0000000007
}

// Windows emitting on close (and suppression) wait for stream time, which only records move:
// on a quiet topic the last window stays open until a producer writes a record with a later
// timestamp to the partition. Here a "tick" record under its own key closes it, and the
// application filters the ticks' own windows out of its results.
func Example_closeWindowsOnQuietTopic() {
	const tick = "__tick"
	b := kstream.NewStreamsBuilder()
	views := kstream.Stream(b, "page-views", kstream.ConsumedWith(serde.String(), serde.String()))
	kstream.WindowedBy(views.GroupByKey(), kstream.TimeWindowsOfSizeAndGrace(time.Minute, 10*time.Second)).
		EmitStrategy(kstream.EmitOnWindowClose()).
		Count().
		ToStream().
		Filter(func(w kstream.Windowed[string], _ int64) bool { return w.Key != tick }).
		Map(func(w kstream.Windowed[string], n int64) (string, int64) {
			return fmt.Sprintf("%s@%d", w.Key, w.Window.Start), n
		}).
		To("views-per-minute", kstream.ProducedWith(serde.String(), serde.Long()))
	topology, err := b.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := testdriver.New(topology, map[string]string{"application.id": "quiet-topic"}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "page-views", serde.String(), serde.String())
	out := testdriver.CreateOutputTopic(d, "views-per-minute", serde.String(), serde.Long())
	_ = in.PipeRecord(testdriver.NewTestRecordAt("home", "v1", 1_000))
	_ = in.PipeRecord(testdriver.NewTestRecordAt("home", "v2", 30_000))
	n := out.QueueSize()
	fmt.Println("results before the tick:", n)
	// The topic goes quiet. A tick past the window's end plus grace (60 s + 10 s) closes it.
	_ = in.PipeRecord(testdriver.NewTestRecordAt(tick, "", 70_000))
	kvs, _ := out.ReadKeyValuesToList()
	for _, kv := range kvs {
		fmt.Println(kv.Key, kv.Value)
	}
	// Output:
	// results before the tick: 0
	// home@0 2
}
