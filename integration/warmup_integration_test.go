package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/testhooks"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// syncBuffer is a log sink safe for the instance's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// keyCountTopology counts the records of every key of input into the logged store "Counts"
// and writes each new count to output: one stateful sub-topology, nothing stateless.
func keyCountTopology(t *testing.T, input, output string) *processor.Topology {
	t.Helper()
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("Source", []string{input},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(topo.AddProcessor("Count", processor.ProcessorSupplierFunc[string, string, string, int64](
		func() processor.Processor[string, string, string, int64] { return &countProcessor{} }), "Source"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Long()), "Count"))
	must(topo.AddSink("Sink", output, []string{"Count"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())))
	return topo
}

// produceKeys writes n records with keys from a vocabulary of 200 and returns their counts.
func produceKeys(t *testing.T, b kafkatest.Broker, topic string, n int, seed uint64) map[string]int64 {
	t.Helper()
	p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := rand.New(rand.NewPCG(seed, 441))
	counts := map[string]int64{}
	var msgs []*sarama.ProducerMessage
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("key-%03d", r.IntN(200))
		counts[k]++
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(k), Value: sarama.StringEncoder("x")})
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	return counts
}

func activeCount(app *kstreams.KafkaStreams) int {
	n := 0
	for _, th := range app.MetadataForLocalThreads() {
		n += len(th.ActiveTasks)
	}
	return n
}

// A second instance without state does not take stateful tasks at once (its lag is above
// acceptable.recovery.lag): it warms up max.warmup.replicas of them as standbys while the first
// instance keeps running them, and the leader schedules a probing rebalance
// (probing.rebalance.interval.ms after the assignment, here shortened to 3 s). The probing
// rebalance finds the warm-ups caught up and moves them (revoked first, then a follow-up at
// once, as cooperative rebalancing does); the promoted standbys restore only the tail. Java:
// KIP-441's HighAvailabilityTaskAssignor and StreamThread's scheduled probing rebalance.
func checkWarmupAndProbing(t *testing.T, b kafkatest.Broker) {
	input, output, appID := kafkatest.Name(t, "keys"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "warmup")
	createTopics(t, b, 4, input, output)
	want := produceKeys(t, b, input, 4000, 5)
	logs := &syncBuffer{}
	mk := func(name string) (*kstreams.KafkaStreams, *prometheus.Registry) {
		reg := prometheus.NewRegistry()
		app, err := kstreams.New(keyCountTopology(t, input, output), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 200 * time.Millisecond, StateDir: t.TempDir(),
			Sarama: fastSarama, Consumer: fastConsumer, Registry: reg,
			AcceptableRecoveryLag: kstreams.Int64(5), MaxWarmupReplicas: 2,
			Logger: slog.New(slog.NewTextHandler(logs, nil)).With("instance", name),
		})
		if err != nil {
			t.Fatal(err)
		}
		testhooks.SetProbingRebalanceInterval(app, 3*time.Second)
		return app, reg
	}
	app1, _ := mk("one")
	if err := app1.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app1.Close(context.Background())
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	out.waitFinal(t, want, 2*time.Minute, app1.Err)

	app2, reg2 := mk("two")
	if err := app2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app2.Close(context.Background())
	// First the new instance only warms up: two standbys, no active task, until the probing
	// rebalance 3 s after the assignment.
	waitGauge(t, app2, time.Minute, func() bool { return gaugeSum(t, reg2, "kstreams_standby_tasks") == 2 },
		"two warm-up standbys on the new instance")
	if n := activeCount(app2); n != 0 {
		t.Errorf("the new instance runs %d tasks while it warms up, want 0", n)
	}
	if n := activeCount(app1); n != 4 {
		t.Errorf("the first instance runs %d tasks while the other warms up, want all 4", n)
	}
	// Then the probing rebalance moves the caught-up warm-ups: two tasks each.
	deadline := time.Now().Add(time.Minute)
	for activeCount(app1) != 2 || activeCount(app2) != 2 {
		if err := app2.Err(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks %d / %d after 1 min, want 2 / 2\n%s", activeCount(app1), activeCount(app2), logs.String())
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
	l := logs.String()
	for _, s := range []string{"probing_rebalance=true", "rejoin requested: probing rebalance scheduled by the leader", "promoted standby task to active"} {
		if !strings.Contains(l, s) {
			t.Errorf("no %q in the log:\n%s", s, l)
		}
	}
	merge(want, produceKeys(t, b, input, 1000, 6))
	out.waitFinal(t, want, 2*time.Minute, app2.Err)
}

func TestEmbeddedWarmupAndProbingRebalance(t *testing.T) {
	t.Parallel()
	checkWarmupAndProbing(t, kafkatest.Embedded(t))
}
func TestIntegrationWarmupAndProbingRebalance(t *testing.T) {
	checkWarmupAndProbing(t, kafkatest.Real(t))
}
