package systemtest

import (
	"math"
	"strconv"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// EosApplicationID is the application id of the EOS test client, which Kafka's EosTestDriver
// reads the committed offsets of. Java: EosTestClient.APP_ID.
const EosApplicationID = "EosTest"

// EosProperties returns props (copied) with what Kafka's EosTestClient sets over its
// properties file: application id EosTest, one stream thread, two standby replicas, a probing
// rebalance every minute, no cap on warm-up replicas, no record cache, a 5 s commit interval
// (so a killed client has a transaction open), String keys and Integer values by default.
// Java's client also sets replication.factor=3; a single broker cannot hold that, so the
// internal topics here take the broker's default (replication.factor is left as props has
// it). The driver needs none of it: it reads the topics and the group's committed offsets.
func EosProperties(props map[string]string) map[string]string {
	out := make(map[string]string, len(props)+10)
	for k, v := range props {
		out[k] = v
	}
	out["application.id"] = EosApplicationID
	out["num.stream.threads"] = "1"
	out["num.standby.replicas"] = "2"
	out["probing.rebalance.interval.ms"] = "60000"
	out["max.warmup.replicas"] = strconv.Itoa(math.MaxInt32)
	out["statestore.cache.max.bytes"] = "0"
	out["commit.interval.ms"] = "5000"
	out["default.key.serde"] = "org.apache.kafka.common.serialization.Serdes$StringSerde"
	out["default.value.serde"] = "org.apache.kafka.common.serialization.Serdes$IntegerSerde"
	return out
}

// EosTopology is Kafka's EosTestClient topology: the input "data" (String keys, Integer
// values, default serdes) is copied to "echo" and printed; grouped by key, its per-key minimum
// goes to "min" (Integer) and its per-key sum to "sum" (Long). With withRepartitioning (the
// "complex" client, StreamsEosTest process-complex) "data" is also copied to the user topic
// "repartition", read back, printed, and its per-key maximum goes to "max" (Integer) and its
// per-key count to "cnt" (Long). Progress lines go to out. Java: EosTestClient's
// createKafkaStreams.
func EosTopology(withRepartitioning bool, out *Printer) (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()
	data := kstream.Stream[string, int32](b, "data")

	data.To("echo")
	data.Process(printSupplier[string, int32]("data", "", out, nil))

	grouped := data.GroupByKey()
	grouped.Aggregate(
		func() int32 { return math.MaxInt32 },
		func(_ string, value, agg int32) int32 { return min(value, agg) },
		kstream.MaterializedWith[string, int32](nil, serde.Integer())).
		ToStream().
		To("min", kstream.ProducedWith(serde.String(), serde.Integer()))

	grouped.Aggregate(
		func() int64 { return 0 },
		func(_ string, value int32, agg int64) int64 { return int64(value) + agg },
		kstream.MaterializedWith[string, int64](nil, serde.Long())).
		ToStream().
		To("sum", kstream.ProducedWith(serde.String(), serde.Long()))

	if withRepartitioning {
		data.To("repartition")
		repartitioned := kstream.Stream[string, int32](b, "repartition")
		repartitioned.Process(printSupplier[string, int32]("repartition", "", out, nil))

		regrouped := repartitioned.GroupByKey()
		regrouped.Aggregate(
			func() int32 { return math.MinInt32 },
			func(_ string, value, agg int32) int32 { return max(value, agg) },
			kstream.MaterializedWith[string, int32](nil, serde.Integer())).
			ToStream().
			To("max", kstream.ProducedWith(serde.String(), serde.Integer()))

		regrouped.Count().
			ToStream().
			To("cnt", kstream.ProducedWith(serde.String(), serde.Long()))
	}
	return b.Build()
}
