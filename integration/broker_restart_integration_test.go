package integration_test

import (
	"context"
	"log"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// TestIntegrationBrokerStopped takes the broker away (SIGKILL) for 20 s from a word count
// under exactly-once, whose group members then expire; once the broker is back, the
// application rejoins and restores by itself, processes new input and the output is exact.
// The broker is killed once the first input is processed and committed, with no transaction
// being committed: a single-node cluster leaves a transaction that commits while it shuts down
// or starts up without its markers (see kafkatest.OwnBroker.Kill), which no client recovers
// from.
func TestIntegrationBrokerStopped(t *testing.T) {
	kafkatest.Real(t) // runs with the integration tests only
	ob := kafkatest.StartOwnBroker(t, true)
	if path := os.Getenv("KSTREAMS_SARAMA_LOG"); path != "" {
		// sarama's own log (retries, metadata refreshes) for diagnosis.
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		prev := sarama.Logger
		sarama.Logger = log.New(f, "", log.LstdFlags|log.Lmicroseconds)
		t.Cleanup(func() { sarama.Logger = prev; f.Close() })
	}
	b := ob.Broker
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "outage")
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, 20_000, 8)
	var total int64
	for _, n := range want {
		total += n
	}
	app := newApp(t, b, wordCountTopology(t, input, output), appID, kstreams.ExactlyOnceV2, 2)
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := readOutput(t, b, output, sarama.ReadCommitted)
	deadline := time.Now().Add(2 * time.Minute)
	for !out.reached(want) {
		if time.Now().After(deadline) || app.Err() != nil {
			t.Fatalf("the first input was not processed before the outage: %d of %d updates, err %v", out.total(), total, app.Err())
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	ob.Kill(t)
	stopped := time.Now()
	t.Logf("broker killed at %d of %d committed updates; state %s", out.total(), total, app.State())
	time.Sleep(20 * time.Second) // the outage itself
	ob.Restart(t)
	restarted := time.Now()
	t.Logf("broker restarted %v after the kill; state %s", restarted.Sub(stopped).Round(time.Millisecond), app.State())
	merge(want, produceLines(t, b, input, 5_000, 9))
	deadline = time.Now().Add(2 * time.Minute)
	for !out.reached(want) && time.Now().Before(deadline) && app.Err() == nil {
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
	if !out.reached(want) {
		// Tell a stuck application from a stuck reader: a fresh reader, and the group's offsets.
		fresh := readOutput(t, b, output, sarama.ReadCommitted)
		d2 := time.Now().Add(30 * time.Second)
		for !fresh.reached(want) && time.Now().Before(d2) {
			time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
		}
		t.Logf("fresh reader reached the final counts: %v (first reader has %d updates, fresh %d); state %s err %v",
			fresh.reached(want), out.total(), fresh.total(), app.State(), app.Err())
		checkNothingToReprocess(t, b, appID, input)
		logTxnState(t, b.Addrs, appID, input, output)
		if os.Getenv("KSTREAMS_DEBUG_STACKS") != "" {
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		}
		t.FailNow()
	}
	t.Logf("final counts %v after the restart", time.Since(restarted).Round(time.Millisecond))
	out.checkExactSequences(t, want)
	closeApp(t, app)
}
