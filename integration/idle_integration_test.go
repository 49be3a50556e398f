package integration_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
)

// idleJoinApp starts a stream-table left join (orders enriched with customers, both one
// partition, so one task reads both) with the given max.task.idle.ms and a metrics registry.
func idleJoinApp(t *testing.T, b kafkatest.Broker, orders, customers, output string, idle time.Duration, opts ...func(*kstreams.Config)) (*kstreams.KafkaStreams, *prometheus.Registry) {
	t.Helper()
	sb := kstream.NewStreamsBuilder()
	table := kstream.Table(sb, customers, kstream.ConsumedWith(serde.String(), serde.String()))
	kstream.Stream(sb, orders, kstream.ConsumedWith(serde.String(), serde.String())).
		LeftJoin(table, func(order, customer string) string { return order + "/" + customer }).
		To(output, kstream.ProducedWith(serde.String(), serde.String()))
	topo, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := kstreams.Config{
		ApplicationID: kafkatest.Name(t, "idle"), BootstrapServers: b.Addrs, CommitInterval: 100 * time.Millisecond,
		StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer, MaxTaskIdle: idle, Registry: reg,
	}
	for _, o := range opts {
		o(&cfg)
	}
	app, err := kstreams.New(topo, cfg)
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	return app, reg
}

// produceAt writes one string record with the given timestamp (ms).
func produceAt(t testing.TB, b kafkatest.Broker, topic, key, value string, ts int64) {
	t.Helper()
	p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(key),
		Value: sarama.StringEncoder(value), Timestamp: time.UnixMilli(ts)}); err != nil {
		t.Fatal(err)
	}
}

// produceInTransaction writes one string record with the given timestamp (ms) in a committed
// transaction, so a commit marker follows it in the partition.
func produceInTransaction(t testing.TB, b kafkatest.Broker, topic, key, value string, ts int64) {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Transaction.ID = kafkatest.Name(t, "txn")
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(key),
		Value: sarama.StringEncoder(value), Timestamp: time.UnixMilli(ts)}); err != nil {
		t.Fatal(err)
	}
	if err := p.CommitTxn(); err != nil {
		t.Fatal(err)
	}
}

// lagGauge returns the records-lag gauge of topic's partition 0, and whether it is set.
func lagGauge(t testing.TB, reg *prometheus.Registry, topic string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kstreams_records_lag" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["topic"] == topic && labels["partition"] == "0" && labels["task"] == "0_0" {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// gaugeSum sums the samples of a gauge family in reg.
func gaugeSum(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				v += m.GetGauge().GetValue()
			}
		}
	}
	return v
}

// waitGauge polls cond until it holds, or fails at the deadline naming what.
func waitGauge(t *testing.T, app *kstreams.KafkaStreams, timeout time.Duration, cond func() bool, what string) {
	t.Helper()
	kafkatest.Eventually(t, timeout, what, func() (kstreams.State, bool) {
		if err := app.Err(); err != nil {
			t.Fatalf("application failed: %v", err)
		}
		return app.State(), cond()
	})
}

// waitCaughtUp polls until the records-lag gauges of the topics are 0 (every record on the
// broker handed to the task), or fails at the deadline.
func waitCaughtUp(t *testing.T, app *kstreams.KafkaStreams, reg *prometheus.Registry, timeout time.Duration, topics ...string) {
	t.Helper()
	waitGauge(t, app, timeout, func() bool {
		for _, tp := range topics {
			if v, ok := lagGauge(t, reg, tp); !ok || v != 0 {
				return false
			}
		}
		return true
	}, fmt.Sprintf("records-lag 0 of %v", topics))
}

// checkMaxTaskIdle runs the join with the customer record arriving after the order it
// belongs to (by timestamp). Java's PartitionGroup.readyToProcess decides the expected
// outputs: with max.task.idle.ms > 0 the task waits for the empty customers partition, so the
// order meets its customer; with 0 it waits only for records already on the broker; with -1
// it never waits.
func checkMaxTaskIdle(t *testing.T, b kafkatest.Broker) {
	type topics struct{ orders, customers, output string }
	newTopics := func(t *testing.T) topics {
		tp := topics{kafkatest.Name(t, "orders"), kafkatest.Name(t, "customers"), kafkatest.Name(t, "enriched")}
		createTopics(t, b, 1, tp.orders, tp.customers, tp.output)
		return tp
	}
	readOne := func(t *testing.T, topic string) string {
		t.Helper()
		m := readRaw(t, b, topic, 1, 60*time.Second)
		return string(m[0].Key) + ":" + string(m[0].Value)
	}

	t.Run("idle waits for the late side", func(t *testing.T) {
		tp := newTopics(t)
		produceAt(t, b, tp.orders, "c1", "order1", 2000)
		app, reg := idleJoinApp(t, b, tp.orders, tp.customers, tp.output, time.Hour)
		// The order is in the task's buffer and both partitions are caught up: the task idles
		// on the empty customers partition.
		waitCaughtUp(t, app, reg, 60*time.Second, tp.orders, tp.customers)
		// The customer comes late but with an earlier timestamp; a later customer follows, so
		// both partitions have records and the task processes in timestamp order at once (after
		// the first customer its partition would be empty again, and with an hour of idling the
		// order would wait for the second).
		produceAt(t, b, tp.customers, "c1", "alice", 1000)
		produceAt(t, b, tp.customers, "c2", "bob", 3000)
		if got, want := readOne(t, tp.output), "c1:order1/alice"; got != want {
			t.Fatalf("join output %q, want %q", got, want)
		}
		if n := counterValue(t, reg, "kstreams_enforced_processing_total"); n != 0 {
			t.Fatalf("enforced processing %v, want 0", n)
		}
	})

	t.Run("zero waits for records on the broker", func(t *testing.T) {
		tp := newTopics(t)
		produceAt(t, b, tp.orders, "c1", "order1", 2000)
		produceAt(t, b, tp.customers, "c1", "alice", 1000)
		_, reg := idleJoinApp(t, b, tp.orders, tp.customers, tp.output, 0)
		if got, want := readOne(t, tp.output), "c1:order1/alice"; got != want {
			t.Fatalf("join output %q, want %q", got, want)
		}
		// The order itself is processed with the customers partition empty (and caught up)
		// after the customer: Java counts that once.
		if n := counterValue(t, reg, "kstreams_enforced_processing_total"); n != 1 {
			t.Fatalf("enforced processing %v, want 1", n)
		}
	})

	t.Run("zero does not wait for an empty partition", func(t *testing.T) {
		tp := newTopics(t)
		produceAt(t, b, tp.orders, "c1", "order1", 2000)
		_, reg := idleJoinApp(t, b, tp.orders, tp.customers, tp.output, 0)
		if got, want := readOne(t, tp.output), "c1:order1/"; got != want {
			t.Fatalf("join output %q, want %q", got, want)
		}
		if n := counterValue(t, reg, "kstreams_enforced_processing_total"); n != 1 {
			t.Fatalf("enforced processing %v, want 1", n)
		}
	})

	t.Run("transaction markers do not count as lag", func(t *testing.T) {
		// The position after the last record is the commit marker's offset, one below the end
		// offset: only a consumer that skips the marker sees a lag of 0. Otherwise the order,
		// processed after the customer with the customers partition empty, would wait forever.
		tp := newTopics(t)
		produceInTransaction(t, b, tp.customers, "c1", "alice", 1000)
		produceInTransaction(t, b, tp.orders, "c1", "order1", 2000)
		_, reg := idleJoinApp(t, b, tp.orders, tp.customers, tp.output, 0, func(c *kstreams.Config) {
			c.ProcessingGuarantee = kstreams.ExactlyOnceV2
		})
		if got, want := readOne(t, tp.output), "c1:order1/alice"; got != want {
			t.Fatalf("join output %q, want %q", got, want)
		}
		if n := counterValue(t, reg, "kstreams_enforced_processing_total"); n != 1 {
			t.Fatalf("enforced processing %v, want 1", n)
		}
	})

	t.Run("records-lag and task counts", func(t *testing.T) {
		// The task idles on the empty customers partition (an hour), so it processes none of
		// the orders; the first fetch still moves the ten orders into the task's queue (as
		// Java's poll hands them to the task, whatever buffered.records.per.partition says: a
		// full queue pauses the partition for the next fetches): the orders partition's
		// position is at its end, its lag 0, the consumer's records-lag.
		tp := newTopics(t)
		for i := range 10 {
			produceAt(t, b, tp.orders, "c1", fmt.Sprint("order", i), int64(2000+i))
		}
		app, reg := idleJoinApp(t, b, tp.orders, tp.customers, tp.output, time.Hour, func(c *kstreams.Config) {
			c.BufferedRecordsPerPartition = 1
		})
		waitGauge(t, app, 60*time.Second, func() bool {
			v, ok := lagGauge(t, reg, tp.orders)
			return ok && v == 0
		}, "records-lag of orders 0")
		if v, ok := lagGauge(t, reg, tp.customers); !ok || v != 0 {
			t.Fatalf("records-lag of customers %v (set %v), want 0", v, ok)
		}
		if n := gaugeSum(t, reg, "kstreams_active_tasks"); n != 1 {
			t.Fatalf("active tasks %v, want 1", n)
		}
		if n := gaugeSum(t, reg, "kstreams_standby_tasks"); n != 0 {
			t.Fatalf("standby tasks %v, want 0", n)
		}
	})

	t.Run("disabled never waits", func(t *testing.T) {
		tp := newTopics(t)
		produceAt(t, b, tp.orders, "c1", "order1", 2000)
		_, reg := idleJoinApp(t, b, tp.orders, tp.customers, tp.output, -time.Millisecond)
		if got, want := readOne(t, tp.output), "c1:order1/"; got != want {
			t.Fatalf("join output %q, want %q", got, want)
		}
		if n := counterValue(t, reg, "kstreams_enforced_processing_total"); n != 0 {
			t.Fatalf("enforced processing %v, want 0", n)
		}
	})
}

func TestIntegrationMaxTaskIdle(t *testing.T) { checkMaxTaskIdle(t, kafkatest.Real(t)) }
func TestEmbeddedMaxTaskIdle(t *testing.T) {
	t.Parallel()
	checkMaxTaskIdle(t, kafkatest.Embedded(t))
}
