package integration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

func localTaskCount(app *kstreams.KafkaStreams) int {
	n := 0
	for _, th := range app.MetadataForLocalThreads() {
		n += len(th.ActiveTasks)
	}
	return n
}

// waitTasks polls until every app runs and owns the given number of tasks.
func waitTasks(t *testing.T, timeout time.Duration, apps []*kstreams.KafkaStreams, counts []int) {
	t.Helper()
	kafkatest.Eventually(t, timeout, fmt.Sprintf("every app running with task counts %v", counts), func() ([]string, bool) {
		ok := true
		var seen []string
		for i, a := range apps {
			if err := a.Err(); err != nil {
				t.Fatalf("app %d failed: %v", i, err)
			}
			seen = append(seen, fmt.Sprintf("app %d: %s, %d tasks", i, a.State(), localTaskCount(a)))
			if a.State() != kstreams.StateRunning || localTaskCount(a) != counts[i] {
				ok = false
			}
		}
		return seen, ok
	})
}

func merge(dst, src map[string]int64) {
	for k, v := range src {
		dst[k] += v
	}
}

func checkTwoInstances(t *testing.T, b kafkatest.Broker, standbys int) {
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "wc2")
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, 2000, 2)
	mk := func() (*kstreams.KafkaStreams, *prometheus.Registry) {
		reg := prometheus.NewRegistry()
		app, err := kstreams.New(wordCountTopology(t, input, output), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
			CommitInterval: 200 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
			NumStandbyReplicas: standbys, Registry: reg,
		})
		if err != nil {
			t.Fatal(err)
		}
		return app, reg
	}
	app1, reg1 := mk()
	if err := app1.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := readOutput(t, b, output, sarama.ReadCommitted)
	out.waitFinal(t, want, 2*time.Minute, app1.Err)
	waitTasks(t, time.Minute, []*kstreams.KafkaStreams{app1}, []int{6})

	// A second instance joins and takes half of the 6 tasks, restoring their stores.
	app2, reg2 := mk()
	if err := app2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitTasks(t, time.Minute, []*kstreams.KafkaStreams{app1, app2}, []int{3, 3})
	// Task counts in the metrics: three active tasks each. Standbys, as Java's
	// high-availability assignor places them: one per stateful task (the three counting
	// tasks; stateless tasks have none) on the instance that does not run it; without standby
	// replicas the instance that is not caught up on a task it should take may warm it up
	// (at most max.warmup.replicas, 2) while the other keeps running it.
	for i, reg := range []*prometheus.Registry{reg1, reg2} {
		app := []*kstreams.KafkaStreams{app1, app2}[i]
		waitGauge(t, app, time.Minute, func() bool { return gaugeSum(t, reg, "kstreams_active_tasks") == 3 },
			fmt.Sprintf("instance %d: 3 active tasks", i+1))
	}
	waitGauge(t, app2, time.Minute, func() bool {
		n := gaugeSum(t, reg1, "kstreams_standby_tasks") + gaugeSum(t, reg2, "kstreams_standby_tasks")
		if standbys > 0 {
			return n == float64(3*standbys)
		}
		return n <= 2
	}, fmt.Sprintf("%d standby tasks in all", 3*standbys))
	merge(want, produceLines(t, b, input, 2000, 3))
	out.waitFinal(t, want, 2*time.Minute, app2.Err)

	// Interactive queries: each word is in exactly one instance's local store, with its count.
	waitTasks(t, time.Minute, []*kstreams.KafkaStreams{app1, app2}, []int{3, 3})
	kv1, err1 := kstreams.KeyValueStore[string, int64](app1, "Counts")
	kv2, err2 := kstreams.KeyValueStore[string, int64](app2, "Counts")
	if err1 != nil || err2 != nil {
		t.Fatalf("stores: %v %v", err1, err2)
	}
	for w, n := range want {
		v1, ok1, err1 := kv1.Get(w)
		v2, ok2, err2 := kv2.Get(w)
		if err1 != nil || err2 != nil || ok1 == ok2 || max(v1, v2) != n {
			t.Fatalf("word %s: app1 %d %v %v, app2 %d %v %v, want %d", w, v1, ok1, err1, v2, ok2, err2, n)
		}
	}
	if kv1.ApproximateNumEntries()+kv2.ApproximateNumEntries() != int64(len(want)) {
		t.Fatalf("entries %d + %d, want %d", kv1.ApproximateNumEntries(), kv2.ApproximateNumEntries(), len(want))
	}

	// With standbys, the second instance's standby tasks apply the changelog up to the final
	// counts before the first instance stops (its stale view answers every word with its
	// count), so the fail-over below restores only what the standbys had not applied then.
	// Waiting for that event, not for time, keeps the bound below independent of load.
	if standbys > 0 {
		kafkatest.Eventually(t, time.Minute, "instance 2's stores, standbys included, at the final counts", func() (string, bool) {
			stale, err := kstreams.KeyValueStore[string, int64](app2, "Counts", kstreams.EnableStaleStores())
			if err != nil {
				return err.Error(), false
			}
			for w, n := range want {
				if v, ok, err := stale.Get(w); err != nil || !ok || v != n {
					return fmt.Sprintf("word %s: %d %v %v, want %d", w, v, ok, err, n), false
				}
			}
			return "", true
		})
	}

	// The first instance stops; the second takes everything over.
	restoredBefore := counterValue(t, reg2, "kstreams_restored_records_total")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitTasks(t, time.Minute, []*kstreams.KafkaStreams{app2}, []int{6})
	failover := counterValue(t, reg2, "kstreams_restored_records_total") - restoredBefore
	var changelog int64
	for _, n := range want {
		changelog += n
	}
	t.Logf("fail-over with %d standby replicas restored %v of %d changelog records", standbys, failover, changelog)
	// Without a standby the three moved tasks restore their whole changelogs (about half of
	// all records). With one, the standbys were at the final counts when the first instance
	// stopped (above), so only what it wrote while closing is left to restore: nothing, as its
	// output was final.
	if standbys > 0 && failover != 0 {
		t.Errorf("fail-over restored %v records; with standbys at the final counts none should be", failover)
	}
	if standbys == 0 && failover <= float64(changelog)/10 {
		t.Errorf("fail-over without standby restored only %v records (changelog %d)", failover, changelog)
	}
	merge(want, produceLines(t, b, input, 2000, 4))
	out.waitFinal(t, want, 2*time.Minute, app2.Err)
	out.checkExactSequences(t, want)
	if err := app2.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestIntegrationTwoInstancesHandOver(t *testing.T) { checkTwoInstances(t, kafkatest.Real(t), 0) }
func TestEmbeddedTwoInstancesHandOver(t *testing.T) {
	t.Parallel()
	checkTwoInstances(t, kafkatest.Embedded(t), 0)
}

func TestIntegrationTwoInstancesStandby(t *testing.T) { checkTwoInstances(t, kafkatest.Real(t), 1) }
func TestEmbeddedTwoInstancesStandby(t *testing.T) {
	t.Parallel()
	checkTwoInstances(t, kafkatest.Embedded(t), 1)
}
