package integration_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/store"
)

// On group.protocol=streams the instance leaves its internal topics to the group coordinator,
// as Java 4.4 does (its client creates none on that protocol): the coordinator creates them
// from the topology the member describes, the tasks come and the counts are exact; it made the
// repartition topic with the source's partition count and the configs we describe
// (cleanup.policy=delete, retention.ms=-1), the changelog compacted. A second instance whose
// topology differs (its store, so its changelog, renamed) is refused by the coordinator
// ("topology updates are not supported"): it fails, and its changelog was never created,
// which it would have been had the instance created its internal topics at start.
func TestIntegrationStreamsProtocolCoordinatorCreatesInternalTopics(t *testing.T) {
	b := kafkatest.Real(t)
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "itc")
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, 500, 2)
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	app, err := kstreams.New(wordCountTopologyWith(t, input, output, store.Stores.PersistentKeyValueStore("Counts")), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 200 * time.Millisecond, StateDir: t.TempDir(),
		Sarama: fastSarama, GroupProtocol: kstreams.GroupProtocolStreams,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = app.Close(ctx)
	}()
	out.waitFinal(t, want, 2*time.Minute, app.Err)

	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	other, err := kstreams.New(wordCountTopologyWith(t, input, output, store.Stores.PersistentKeyValueStore("Other")), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, StateDir: t.TempDir(), Sarama: fastSarama, GroupProtocol: kstreams.GroupProtocolStreams,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = other.Run(ctx)
	t.Logf("the instance with another topology: %v", err)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Run of the instance with another topology = %v (context %v), want the coordinator's refusal", err, ctx.Err())
	}
	topics, err := admin.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := topics[appID+"-Other-changelog"]; ok {
		t.Errorf("the refused instance's changelog %s exists: the instance created it", appID+"-Other-changelog")
	}
	repartition, changelog := appID+"-words-repartition", appID+"-Counts-changelog"
	md, err := admin.DescribeTopics([]string{repartition, changelog})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range md {
		if m.Err != sarama.ErrNoError || len(m.Partitions) != 3 {
			t.Errorf("topic %s: %v, %d partitions, want 3", m.Name, m.Err, len(m.Partitions))
		}
	}
	for topic, wantCfg := range map[string]map[string]string{
		repartition: {"cleanup.policy": "delete", "retention.ms": "-1"},
		changelog:   {"cleanup.policy": "compact"},
	} {
		got := kafkatest.TopicConfigs(t, admin, topic)
		for k, v := range wantCfg {
			if got[k] != v {
				t.Errorf("topic %s: %s=%q, want %q", topic, k, got[k], v)
			}
		}
	}
}
