package interop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// A Java Kafka Streams 4.4 instance on group.protocol=streams (KIP-1071) holds the group; our
// instance, on the classic protocol, started with the same application id fails at once:
// Run returns an error naming the group and the protocol mismatch instead of retrying, and
// the Java instance keeps running and counting exactly.
func TestIntegrationClassicMemberAgainstStreamsGroup(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	a := newAppTopics(t, b, "protostreams")
	out := readLatest(t, b, sarama.ReadCommitted, a.output, a.windowed)
	e := newExpected()
	e.produce(t, b, a.input, 200)
	j := startJava(t, b, a, t.TempDir(), kstreams.AtLeastOnce, "--group-protocol", "streams")
	out.waitExact(t, a, e, "java", j.alive)

	app, err := kstreams.New(goTopology(t, a), goConfig(b, a, t.TempDir(), kstreams.AtLeastOnce))
	if err != nil {
		t.Fatal(err)
	}
	// Run's context is far longer than the answer takes: an error from the context would
	// mean the join was retried until it ended.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	err = app.Run(ctx)
	t.Logf("Run returned after %v: %v", time.Since(start), err)
	if err == nil || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v (context %v), want the group's protocol error before the context ends", err, ctx.Err())
	}
	var pm *group.ProtocolMismatchError
	if !errors.As(err, &pm) || !errors.Is(err, group.ErrFatal) || !errors.Is(err, sarama.ErrInconsistentGroupProtocol) {
		t.Fatalf("Run = %v, want a *group.ProtocolMismatchError (fatal, INCONSISTENT_GROUP_PROTOCOL)", err)
	}
	if pm.GroupID != a.app || pm.GroupType != group.GroupTypeStreams {
		t.Fatalf("mismatch %+v, want group %s of type streams", pm, a.app)
	}
	for _, want := range []string{a.app, "streams group (KIP-1071", "group.protocol=streams"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run's error %q does not say %q", err, want)
		}
	}
	if app.State() != kstreams.StateError {
		t.Errorf("state after Run: %v", app.State())
	}

	// The group as the coordinator describes it: Java's member and the topology it sent.
	describeJavaGroup(t, b, a)

	// The Java instance was not disturbed: it keeps its tasks and counts the next lines.
	e.produce(t, b, a.input, 100)
	out.waitExact(t, a, e, "java", j.alive)
	j.stop()
}

// describeJavaGroup describes the streams group of the Java instance with our
// StreamsGroupDescribe and checks the topology Java sent for SharedStateApp (the same as
// goTopology's): the input read by the first sub-topology, which writes the two repartition
// topics of the counts, each read by a sub-topology with its store's changelog.
func describeJavaGroup(t *testing.T, b kafkatest.Broker, a appTopics) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kafka.NewCluster(kafka.Config{Brokers: b.Addrs, Sarama: kafkatest.SaramaConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	coord, err := cl.FindCoordinator(ctx, a.app, sarama.CoordinatorGroup)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := streamsgroup.ConfigFromSarama(kafkatest.SaramaConfig(), "interop")
	if err != nil {
		t.Fatal(err)
	}
	c, err := streamsgroup.Dial(ctx, coord.Addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.Describe(ctx, &streamsgroup.DescribeRequest{GroupIDs: []string{a.app}})
	if err != nil {
		t.Fatal(err)
	}
	g := d.Groups[0]
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range g.Subtopologies {
		t.Logf("java's subtopology %s: sources %v, repartition sinks %v, repartition sources %+v, changelogs %+v",
			s.ID, s.SourceTopics, s.RepartitionSinkTopics, s.RepartitionSourceTopics, s.StateChangelogTopics)
	}
	for _, m := range g.Members {
		t.Logf("java's member %s: epoch %d, process %s, client %s, classic %v, assignment %+v", m.MemberID, m.MemberEpoch,
			m.ProcessID, m.ClientID, m.IsClassic, m.Assignment)
	}
	if g.GroupState != "Stable" || len(g.Members) != 1 || g.Members[0].IsClassic || len(g.Members[0].Assignment.Active) != 3 {
		t.Fatalf("java's group: state %s, members %+v", g.GroupState, g.Members)
	}
	// What the broker holds of Java's topology (partition counts resolved): what our member
	// must send for the same topology, configs included.
	rep := func(store string) string { return a.app + "-" + store + "-repartition" }
	chg := func(store string) string { return a.app + "-" + store + "-changelog" }
	repCfg := []streamsgroup.KeyValue{{Key: "cleanup.policy", Value: "delete"}, {Key: "message.timestamp.type", Value: "CreateTime"},
		{Key: "retention.ms", Value: "-1"}, {Key: "segment.bytes", Value: "52428800"}}
	want := []streamsgroup.DescribedSubtopology{
		{ID: "0", SourceTopics: []string{a.input}, RepartitionSinkTopics: []string{rep("counts-store"), rep("windowed-counts")}},
		{ID: "1", RepartitionSourceTopics: []streamsgroup.TopicInfo{{Name: rep("counts-store"), Partitions: 2, ReplicationFactor: 1, Configs: repCfg}},
			StateChangelogTopics: []streamsgroup.TopicInfo{{Name: chg("counts-store"), Partitions: 2, ReplicationFactor: 1,
				Configs: []streamsgroup.KeyValue{{Key: "cleanup.policy", Value: "compact"}, {Key: "message.timestamp.type", Value: "CreateTime"}}}}},
		{ID: "2", RepartitionSourceTopics: []streamsgroup.TopicInfo{{Name: rep("windowed-counts"), Partitions: 2, ReplicationFactor: 1, Configs: repCfg}},
			StateChangelogTopics: []streamsgroup.TopicInfo{{Name: chg("windowed-counts"), Partitions: 2, ReplicationFactor: 1,
				Configs: []streamsgroup.KeyValue{{Key: "cleanup.policy", Value: "compact,delete"}, {Key: "message.timestamp.type", Value: "CreateTime"},
					{Key: "retention.ms", Value: "172860000"}}}}},
	}
	if got, wantS := fmt.Sprintf("%+v", g.Subtopologies), fmt.Sprintf("%+v", want); got != wantS {
		t.Fatalf("java's topology as the broker holds it:\n%s\nwant\n%s", got, wantS)
	}
}
