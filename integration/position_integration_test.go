package integration_test

import (
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
)

// The committed offset of an input partition is the consumer's position, which moves past
// transaction markers, as Java's (StreamTask commits the position of a partition whose queue is
// empty): an input written in transactions, fully processed, has its end offset committed (the
// offset after the last commit marker), so its lag is 0 and a restart reprocesses nothing.
// Committing the last record's offset + 1 would leave the marker uncommitted: lag 1 for ever.
func checkCommitPastMarkers(t *testing.T, b kafkatest.Broker, guarantee kstreams.ProcessingGuarantee) {
	input, output := kafkatest.Name(t, "txn-input"), kafkatest.Name(t, "out")
	createTopics(t, b, 1, input, output)
	for i := range 3 {
		produceInTransaction(t, b, input, "k", "v"+string(rune('0'+i)), int64(1000+i))
	}
	bld := kstream.NewStreamsBuilder()
	kstream.Stream(bld, input, kstream.ConsumedWith(serde.String(), serde.String())).
		To(output, kstream.ProducedWith(serde.String(), serde.String()))
	topo, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	appID := kafkatest.Name(t, "position")
	app, err := kstreams.New(topo, kstreams.Config{ApplicationID: appID, BootstrapServers: b.Addrs, StateDir: t.TempDir(),
		ProcessingGuarantee: guarantee, CommitInterval: 100 * time.Millisecond, Sarama: fastSarama, Consumer: fastConsumer})
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	if got := readRaw(t, b, output, 3, 60*time.Second); string(got[2].Value) != "v2" {
		t.Fatalf("output %q, want v0 v1 v2", []string{string(got[0].Value), string(got[1].Value), string(got[2].Value)})
	}
	closeApp(t, app) // commits
	checkNothingToReprocess(t, b, appID, input)
}

func TestEmbeddedCommitPastMarkers(t *testing.T) {
	t.Parallel()
	checkCommitPastMarkers(t, kafkatest.Embedded(t), kstreams.AtLeastOnce)
}
func TestIntegrationCommitPastMarkersAtLeastOnce(t *testing.T) {
	checkCommitPastMarkers(t, kafkatest.Real(t), kstreams.AtLeastOnce)
}
func TestIntegrationCommitPastMarkersExactlyOnce(t *testing.T) {
	checkCommitPastMarkers(t, kafkatest.Real(t), kstreams.ExactlyOnceV2)
}
