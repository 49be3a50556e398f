package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/store"
)

// checkCloseRestart runs the word count under exactly-once with Pebble stores to its final
// counts, closes it within a deadline, and restarts it on the same state directory: Close must
// have left the input's committed offsets at its end and the stores' checkpoints current, so
// the restarted instance restores nothing from the changelogs and reprocesses nothing (a
// reprocessed line would show as a repeated or skipped count in the read_committed output).
func checkCloseRestart(t *testing.T, b kafkatest.Broker) {
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "close")
	stateDir := t.TempDir()
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, 5000, 21)
	out := readOutput(t, b, output, sarama.ReadCommitted)
	run := func(name string) (*kstreams.KafkaStreams, *prometheus.Registry) {
		reg := prometheus.NewRegistry()
		app, err := kstreams.New(wordCountTopologyWith(t, input, output, store.Stores.PersistentKeyValueStore("Counts")), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
			CommitInterval: 100 * time.Millisecond, StateDir: stateDir, Sarama: fastSarama, Consumer: fastConsumer, NumStreamThreads: 2,
			Registry: reg,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Start(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return app, reg
	}
	closeApp := func(app *kstreams.KafkaStreams, name string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		if err := app.Close(ctx); err != nil {
			t.Fatalf("%s: Close: %v", name, err)
		}
		t.Logf("%s: Close took %v", name, time.Since(start).Round(time.Millisecond))
	}

	app, _ := run("first run")
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	closeApp(app, "first run")
	checkNothingToReprocess(t, b, appID, input)

	// New lines (on every partition: keys 0..29 spread over the three) show that the restarted
	// instance processes: once their counts are out, anything it reprocessed would be too.
	app, reg := run("restart")
	merge(want, produceLines(t, b, input, 30, 22))
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	if n := counterValue(t, reg, "kstreams_restored_records_total"); n != 0 {
		t.Errorf("restart restored %v changelog records, want 0 (checkpoints written by Close)", n)
	}
	closeApp(app, "restart")
	out.checkExactSequences(t, want)
	checkNothingToReprocess(t, b, appID, input)
}

// TestIntegrationExactlyOnceCloseRestart: Close leaves committed offsets and checkpoints so a
// restart reprocesses and restores nothing (Apache Kafka).
func TestIntegrationExactlyOnceCloseRestart(t *testing.T) { checkCloseRestart(t, kafkatest.Real(t)) }

// TestEmbeddedExactlyOnceCloseRestart is the same on kfake.
func TestEmbeddedExactlyOnceCloseRestart(t *testing.T) {
	t.Parallel()
	checkCloseRestart(t, kafkatest.Embedded(t))
}
