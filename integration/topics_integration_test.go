package integration_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
)

func checkStartErrors(t *testing.T, b kafkatest.Broker) {
	input, output := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts")
	appID := kafkatest.Name(t, "wc")
	// Missing source topic: Start fails with the topic named, the instance is in ERROR.
	app := newApp(t, b, wordCountTopology(t, input, output), appID, kstreams.AtLeastOnce, 1)
	err := app.Start(context.Background())
	var me *kstreams.MissingSourceTopicsError
	if !errors.As(err, &me) || !errors.Is(err, kstreams.ErrMissingSourceTopics) || len(me.Topics) != 1 || me.Topics[0] != input {
		t.Fatalf("missing source topic: %v", err)
	}
	if app.State() != kstreams.StateError || app.Err() == nil {
		t.Fatalf("state %s err %v", app.State(), app.Err())
	}
	// An existing changelog with the wrong partition count.
	createTopics(t, b, 3, input, output)
	createTopics(t, b, 2, appID+"-Counts-changelog")
	app = newApp(t, b, wordCountTopology(t, input, output), appID, kstreams.AtLeastOnce, 1)
	err = app.Start(context.Background())
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
func TestEmbeddedStartErrors(t *testing.T) {
	t.Parallel()
	checkStartErrors(t, kafkatest.Embedded(t))
}

// checkWindowedChangelogs starts a DSL time-windowed count (10 s windows, no grace) and a
// session-windowed count (5 s gap, no grace) and reads the changelog topics' configs from the
// broker: Java creates them with cleanup.policy=compact,delete and retention.ms = the store's
// retention (size + grace; gap + grace) + windowstore.changelog.additional.retention.ms (24 h).
func checkWindowedChangelogs(t *testing.T, b kafkatest.Broker) {
	input, appID := kafkatest.Name(t, "events"), kafkatest.Name(t, "win")
	createTopics(t, b, 1, input)
	sb := kstream.NewStreamsBuilder()
	g := kstream.Stream(sb, input, kstream.ConsumedWith(serde.String(), serde.String())).GroupByKey()
	kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(10*time.Second)).
		Count(kstream.MaterializedAs[string, int64]("win-counts"))
	kstream.WindowedBySession(g, kstream.SessionWindowsOfInactivityGapWithNoGrace(5*time.Second)).
		Count(kstream.MaterializedAs[string, int64]("session-counts"))
	topo, err := sb.Build()
	if err != nil {
		t.Fatal(err)
	}
	app := newApp(t, b, topo, appID, kstreams.AtLeastOnce, 1)
	startApp(t, app)
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for topic, retention := range map[string]string{
		appID + "-win-counts-changelog":     "86410000",
		appID + "-session-counts-changelog": "86405000",
	} {
		got := kafkatest.TopicConfigs(t, admin, topic)
		if got["cleanup.policy"] != "compact,delete" || got["retention.ms"] != retention {
			t.Errorf("%s: cleanup.policy=%q retention.ms=%q, want compact,delete and %s", topic,
				got["cleanup.policy"], got["retention.ms"], retention)
		}
	}
}

func TestIntegrationWindowedChangelogs(t *testing.T) { checkWindowedChangelogs(t, kafkatest.Real(t)) }
