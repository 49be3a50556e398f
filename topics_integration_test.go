package kstreams_test

import (
	"errors"
	"testing"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

func checkStartErrors(t *testing.T, b kafkatest.Broker) {
	input, output := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts")
	appID := kafkatest.Name(t, "wc")
	// Missing source topic: Start fails with the topic named, the instance is in ERROR.
	app := newApp(t, b, wordCountTopology(t, input, output), appID, kstreams.AtLeastOnce, 1)
	err := app.Start()
	var me *kstreams.MissingSourceTopicsError
	if !errors.As(err, &me) || !errors.Is(err, kstreams.ErrMissingSourceTopics) || len(me.Topics) != 1 || me.Topics[0] != input {
		t.Fatalf("missing source topic: %v", err)
	}
	if app.State() != kstreams.Error || app.Err() == nil {
		t.Fatalf("state %s err %v", app.State(), app.Err())
	}
	// An existing changelog with the wrong partition count.
	createTopics(t, b, 3, input, output)
	createTopics(t, b, 2, appID+"-Counts-changelog")
	app = newApp(t, b, wordCountTopology(t, input, output), appID, kstreams.AtLeastOnce, 1)
	err = app.Start()
	var pe *kstreams.PartitionCountError
	if !errors.As(err, &pe) || pe.Topic != appID+"-Counts-changelog" || pe.Expected != 3 || pe.Actual != 2 ||
		!errors.Is(err, kstreams.ErrWrongPartitionCount) {
		t.Fatalf("wrong partition count: %v", err)
	}
	// The repartition topic was created with Java's configs before the check failed or is
	// created by the next (fixed) run; check its configs once it exists.
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ts, err := admin.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := ts[appID+"-words-repartition"]; ok {
		if d.NumPartitions != 3 {
			t.Fatalf("repartition partitions %d", d.NumPartitions)
		}
	}
}

func TestIntegrationStartErrors(t *testing.T) { checkStartErrors(t, kafkatest.Real(t)) }
func TestEmbeddedStartErrors(t *testing.T)    { checkStartErrors(t, kafkatest.Embedded(t)) }
