package streamsgroup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// wordCountTopology is the topology Java Kafka Streams sends for a word count (KIP-1071):
// sub-topology 0 reads the input and writes the repartition topic, sub-topology 1 reads it
// and counts into a store with a compacted changelog.
func wordCountTopology(app, input string) *Topology {
	repartition := app + "-counts-store-repartition"
	return &Topology{Epoch: 0, Subtopologies: []Subtopology{
		{ID: "0", SourceTopics: []string{input}, RepartitionSinkTopics: []string{repartition}},
		{ID: "1", RepartitionSourceTopics: []TopicInfo{{Name: repartition,
			Configs: []KeyValue{{"cleanup.policy", "delete"}, {"retention.ms", "-1"}, {"segment.bytes", "52428800"}}}},
			StateChangelogTopics: []TopicInfo{{Name: app + "-counts-store-changelog",
				Configs: []KeyValue{{"cleanup.policy", "compact"}, {"message.timestamp.type", "CreateTime"}}}}},
	}}
}

// The heartbeat's statuses: a source topic that does not exist is MISSING_SOURCE_TOPICS
// (naming it) with no tasks; once it exists, the internal topics are MISSING_INTERNAL_TOPICS
// until the coordinator has created them (the repartition topic with the input's partition
// count, the changelog compacted as sent), and then the member gets the tasks of both
// sub-topologies.
func TestIntegrationStatusesAndInternalTopics(t *testing.T) {
	br := kafkatest.Real(t)
	app := kafkatest.Name(t, "sgwc")
	input := app + "-lines"
	c, _ := coordinatorConn(t, br, kafkatest.SaramaConfig(), app)
	m := &member{t: t, c: c, group: app, id: uuid(t), pid: uuid(t)}
	join := m.joinRequest(wordCountTopology(app, input))
	// With a user endpoint, Apache Kafka 4.4 answers a join whose source topic is missing
	// UNKNOWN_SERVER_ERROR (see the package doc); without one, MISSING_SOURCE_TOPICS.
	resp := m.heartbeat(join)
	if errors.Is(m.lastErr, sarama.ErrUnknown) {
		t.Logf("join with a user endpoint and a missing source topic: %v; joining without", m.lastErr)
		join.UserEndpoint = nil
		resp = m.heartbeat(join)
	}
	if m.lastErr != nil {
		t.Fatalf("join: %v", m.lastErr)
	}
	var missing *Status
	for i := range resp.Status {
		if resp.Status[i].Code == StatusMissingSourceTopics {
			missing = &resp.Status[i]
		}
	}
	if missing == nil || !strings.Contains(missing.Detail, input) || len(resp.ActiveTasks) != 0 {
		t.Fatalf("join with a missing source topic: statuses %+v, tasks %v", resp.Status, resp.ActiveTasks)
	}
	t.Logf("missing source topic: %+v", resp.Status)

	kafkatest.CreateTopics(t, br, 3, nil, input)
	sawInternal := false
	want := []Tasks{{Subtopology: "0", Partitions: []int32{0, 1, 2}}, {Subtopology: "1", Partitions: []int32{0, 1, 2}}}
	deadline := time.Now().Add(60 * time.Second)
	for !tasksEqual(m.active, want) {
		if time.Now().After(deadline) {
			t.Fatalf("no tasks %v within 60 s: statuses %+v, active %v", want, m.status, m.active)
		}
		time.Sleep(100 * time.Millisecond) // heartbeat pace, bounded by the deadline
		m.heartbeat(&HeartbeatRequest{GroupID: app, MemberID: m.id, MemberEpoch: m.epoch, RebalanceTimeoutMs: -1,
			ActiveTasks: nonNil(m.active), StandbyTasks: []Tasks{}, WarmupTasks: []Tasks{}})
		if m.lastErr != nil {
			t.Fatalf("heartbeat: %v", m.lastErr)
		}
		for _, s := range m.status {
			if s.Code == StatusMissingInternalTopics && !sawInternal {
				sawInternal = true
				t.Logf("missing internal topics: %s", s.Detail)
			}
		}
	}
	t.Logf("saw MISSING_INTERNAL_TOPICS: %v", sawInternal)

	admin, err := sarama.NewClusterAdmin(br.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	repartition, changelog := app+"-counts-store-repartition", app+"-counts-store-changelog"
	md, err := admin.DescribeTopics([]string{repartition, changelog})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range md {
		if tm.Err != sarama.ErrNoError || len(tm.Partitions) != 3 {
			t.Fatalf("internal topic %s: %v, %d partitions, want 3", tm.Name, tm.Err, len(tm.Partitions))
		}
	}
	if cfg := kafkatest.TopicConfigs(t, admin, changelog); cfg["cleanup.policy"] != "compact" {
		t.Fatalf("changelog configs: %+v", cfg)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.Describe(ctx, &DescribeRequest{GroupIDs: []string{app}})
	if err != nil || d.Groups[0].Err() != nil {
		t.Fatal(err, d.Groups[0].Err())
	}
	g := d.Groups[0]
	if len(g.Subtopologies) != 2 || g.Subtopologies[1].ID != "1" || len(g.Subtopologies[1].RepartitionSourceTopics) != 1 ||
		g.Subtopologies[1].RepartitionSourceTopics[0].Partitions != 3 || g.Subtopologies[1].StateChangelogTopics[0].Name != changelog {
		t.Fatalf("described topology %+v", g.Subtopologies)
	}
	m.heartbeat(&HeartbeatRequest{GroupID: app, MemberID: m.id, MemberEpoch: LeaveEpoch, RebalanceTimeoutMs: -1})
	if m.lastErr != nil {
		t.Fatalf("leave: %v", m.lastErr)
	}
}

func nonNil(ts []Tasks) []Tasks {
	if ts == nil {
		return []Tasks{}
	}
	return ts
}
