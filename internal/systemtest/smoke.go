package systemtest

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// SmokeApplicationID is the smoke-test client's application id unless its properties set
// one. Java: SmokeTestClient.getStreamsConfig.
const SmokeApplicationID = "SmokeTest"

// smokeEnd is the value the driver never sends (Java: SmokeTestUtil.END, Integer.MAX_VALUE);
// the client filters it out before aggregating.
const smokeEnd = math.MaxInt32

// SmokeProperties returns props (copied) completed as Kafka's SmokeTestClient completes them:
// application id SmokeTest, client id "SmokeTest-<name>", the state directory stateDir (Java: a
// fresh temporary directory), processing.guarantee exactly_once_v2 and 3 days of additional
// changelog retention for window stores, each unless props sets it (Java lays the properties
// file over these defaults, so Kafka's system tests' state.dir wins too).
func SmokeProperties(props map[string]string, name, stateDir string) map[string]string {
	out := map[string]string{
		"application.id":       SmokeApplicationID,
		"client.id":            "SmokeTest-" + name,
		"state.dir":            stateDir,
		"processing.guarantee": "exactly_once_v2",
		"windowstore.changelog.additional.retention.ms": strconv.FormatInt((72 * time.Hour).Milliseconds(), 10),
	}
	for k, v := range props {
		out[k] = v
	}
	return out
}

// SmokeTopology is Kafka's SmokeTestClient topology. The input "data" (String keys, Integer
// values) is copied to "echo" (without the driver's "flush" records); the rest of it, grouped
// by key, feeds:
//   - "min": the per-key minimum in 1-day windows with 1 min grace (store "uwin-min", 25 h
//     retention), un-windowed; its windowed updates also go to "min-raw", and once each
//     window closes (suppressed, unbounded buffer) to "min-suppressed", keyed by the window's
//     text "[key@start/end]";
//   - "sws-raw" and "sws-suppressed": the sum in 2 s windows hopping by 1 s with 30 s grace,
//     raw and suppressed until each window closes;
//   - "max", "sum" (Long) and "cnt" (Long): per key in 2-day windows without grace (stores
//     "uwin-max", "win-sum", "uwin-cnt"), un-windowed;
//   - tables read back from "min", "max", "sum" and "cnt" (stores "minStoreName",
//     "maxStoreName", the source store of "sum", "cntStoreName"), each printed; "dif" is
//     max - min and "avg" (Double) sum / cnt, both table joins; "tagg" counts how many keys have
//     each count: cnt re-grouped by its value (through a repartition topic) into the in-memory
//     store "cntByCnt".
//
// name labels the printed progress (Java: the client's UUID); total, when not nil, receives
// how many "data" records the processors saw, added as each closes. Java:
// SmokeTestClient.getTopology.
func SmokeTopology(name string, out *Printer, total *atomic.Int64) (*processor.Topology, error) {
	var (
		stringSerde = serde.String()
		intSerde    = serde.Integer()
		longSerde   = serde.Long()
		doubleSerde = serde.Double()
	)
	notFlush := func(key string, _ int32) bool { return key == "flush" }
	notFlushLong := func(key string, _ int64) bool { return key == "flush" }
	unwindow := func(key kstream.Windowed[string], _ int32) string { return key.Key }
	unwindowLong := func(key kstream.Windowed[string], _ int64) string { return key.Key }

	b := kstream.NewStreamsBuilder()
	source := kstream.Stream(b, "data", kstream.ConsumedWith(stringSerde, intSerde))
	source.FilterNot(notFlush).
		To("echo", kstream.ProducedWith(stringSerde, intSerde))
	// Java keeps null values too (value == null || value != END); the driver sends none.
	data := source.Filter(func(_ string, value int32) bool { return value != smokeEnd })
	data.Process(printSupplier[string, int32]("data", name, out, total))

	// min
	groupedData := data.GroupByKey(kstream.GroupedWith(stringSerde, intSerde))

	minAggregation := kstream.WindowedBy(groupedData, kstream.TimeWindowsOfSizeAndGrace(24*time.Hour, time.Minute)).
		Aggregate(
			func() int32 { return math.MaxInt32 },
			func(_ string, value, agg int32) int32 { return min(value, agg) },
			kstream.MaterializedAs[string, int32]("uwin-min").
				WithValueSerde(intSerde).
				WithRetention(25*time.Hour))

	streamify(minAggregation, "min-raw")
	streamify(minAggregation.Suppress(kstream.SuppressedUntilWindowCloses(kstream.BufferConfigUnbounded())), "min-suppressed")

	minAggregation.
		ToStreamMapper(unwindow).
		FilterNot(notFlush).
		To("min", kstream.ProducedWith(stringSerde, intSerde))

	smallWindowSum := kstream.WindowedBy(groupedData, kstream.TimeWindowsOfSizeAndGrace(2*time.Second, 30*time.Second).AdvanceBy(time.Second)).
		Reduce(func(agg, value int32) int32 { return agg + value })

	streamify(smallWindowSum, "sws-raw")
	streamify(smallWindowSum.Suppress(kstream.SuppressedUntilWindowCloses(kstream.BufferConfigUnbounded())), "sws-suppressed")

	minTable := kstream.Table(b, "min",
		kstream.ConsumedWith(stringSerde, intSerde),
		kstream.MaterializedAs[string, int32]("minStoreName"))

	minTable.ToStream().Process(printSupplier[string, int32]("min", name, out, nil))

	// max
	kstream.WindowedBy(groupedData, kstream.TimeWindowsOfSizeWithNoGrace(48*time.Hour)).
		Aggregate(
			func() int32 { return math.MinInt32 },
			func(_ string, value, agg int32) int32 { return max(value, agg) },
			kstream.MaterializedAs[string, int32]("uwin-max").WithValueSerde(intSerde)).
		ToStreamMapper(unwindow).
		FilterNot(notFlush).
		To("max", kstream.ProducedWith(stringSerde, intSerde))

	maxTable := kstream.Table(b, "max",
		kstream.ConsumedWith(stringSerde, intSerde),
		kstream.MaterializedAs[string, int32]("maxStoreName"))
	maxTable.ToStream().Process(printSupplier[string, int32]("max", name, out, nil))

	// sum
	kstream.WindowedBy(groupedData, kstream.TimeWindowsOfSizeWithNoGrace(48*time.Hour)).
		Aggregate(
			func() int64 { return 0 },
			func(_ string, value int32, agg int64) int64 { return int64(value) + agg },
			kstream.MaterializedAs[string, int64]("win-sum").WithValueSerde(longSerde)).
		ToStreamMapper(unwindowLong).
		FilterNot(notFlushLong).
		To("sum", kstream.ProducedWith(stringSerde, longSerde))

	sumTable := kstream.Table(b, "sum", kstream.ConsumedWith(stringSerde, longSerde))
	sumTable.ToStream().Process(printSupplier[string, int64]("sum", name, out, nil))

	// cnt
	kstream.WindowedBy(groupedData, kstream.TimeWindowsOfSizeWithNoGrace(48*time.Hour)).
		Count(kstream.MaterializedAs[string, int64]("uwin-cnt")).
		ToStreamMapper(unwindowLong).
		FilterNot(notFlushLong).
		To("cnt", kstream.ProducedWith(stringSerde, longSerde))

	cntTable := kstream.Table(b, "cnt",
		kstream.ConsumedWith(stringSerde, longSerde),
		kstream.MaterializedAs[string, int64]("cntStoreName"))
	cntTable.ToStream().Process(printSupplier[string, int64]("cnt", name, out, nil))

	// dif
	maxTable.
		Join(minTable, func(maxValue, minValue int32) int32 { return maxValue - minValue }).
		ToStream().
		FilterNot(notFlush).
		To("dif", kstream.ProducedWith(stringSerde, intSerde))

	// avg
	sumTable.
		Join(cntTable, func(sum, cnt int64) float64 { return float64(sum) / float64(cnt) }).
		ToStream().
		FilterNot(func(key string, _ float64) bool { return key == "flush" }).
		To("avg", kstream.ProducedWith(stringSerde, doubleSerde))

	// test repartition: how many keys have each count
	cntTable.
		GroupBy(func(_ string, cnt int64) (string, int64) { return strconv.FormatInt(cnt, 10), 1 },
			kstream.GroupedWith(stringSerde, longSerde)).
		Aggregate(
			func() int64 { return 0 },
			func(_ string, value, agg int64) int64 { return agg + value },
			func(_ string, value, agg int64) int64 { return agg - value },
			kstream.MaterializedAsSupplier[string, int64](store.Stores.InMemoryKeyValueStore("cntByCnt")).
				WithKeySerde(serde.String()).
				WithValueSerde(serde.Long())).
		ToStream().
		To("tagg", kstream.ProducedWith(stringSerde, longSerde))

	return b.Build()
}

// streamify writes a windowed table's updates, without the driver's "flush" key, to topic
// keyed by the window's text "[key@start/end]". Java: SmokeTestClient.streamify.
func streamify(windowedTable kstream.KTable[kstream.Windowed[string], int32], topic string) {
	windowedTable.
		ToStream().
		FilterNot(func(key kstream.Windowed[string], _ int32) bool { return key.Key == "flush" }).
		Map(func(key kstream.Windowed[string], value int32) (string, int32) { return key.String(), value }).
		To(topic, kstream.ProducedWith(serde.String(), serde.Integer()))
}
