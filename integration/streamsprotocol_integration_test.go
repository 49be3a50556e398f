package integration_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// describeStreamsGroup describes the streams group appID with StreamsGroupDescribe.
func describeStreamsGroup(t *testing.T, b kafkatest.Broker, appID string) streamsgroup.DescribedGroup {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kafka.NewCluster(kafka.Config{Brokers: b.Addrs, Sarama: kafkatest.SaramaConfig()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	coord, err := cl.FindCoordinator(ctx, appID, sarama.CoordinatorGroup)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := streamsgroup.ConfigFromSarama(kafkatest.SaramaConfig(), "streamsprotocol-test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := streamsgroup.Dial(ctx, coord.Addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.Describe(ctx, &streamsgroup.DescribeRequest{GroupIDs: []string{appID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Groups) != 1 {
		t.Fatalf("describe: %+v", d)
	}
	return d.Groups[0]
}

// waitSplit waits until both instances run, each with some of the 6 tasks and all 6 taken,
// and the coordinator describes a stable streams group of two members whose owned active
// tasks are those the instances run.
func waitSplit(t *testing.T, b kafkatest.Broker, appID string, apps []*kstreams.KafkaStreams) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n1, n2 := localTaskCount(apps[0]), localTaskCount(apps[1])
		for i, a := range apps {
			if err := a.Err(); err != nil {
				t.Fatalf("app %d failed: %v", i+1, err)
			}
		}
		if apps[0].State() == kstreams.StateRunning && apps[1].State() == kstreams.StateRunning && n1 > 0 && n2 > 0 && n1+n2 == 6 {
			g := describeStreamsGroup(t, b, appID)
			owned := 0
			members := 0
			for _, m := range g.Members {
				for _, ts := range m.Assignment.Active {
					owned += len(ts.Partitions)
				}
				if len(m.Assignment.Active) > 0 {
					members++
				}
			}
			if g.Err() == nil && g.GroupState == "Stable" && len(g.Members) == 2 && members == 2 && owned == 6 {
				t.Logf("tasks split %d/%d; group %s epoch %d", n1, n2, g.GroupState, g.GroupEpoch)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks not split between the two instances within 2 min: %d and %d tasks, group %+v", n1, n2, describeStreamsGroup(t, b, appID))
		}
		time.Sleep(100 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// The word count on group.protocol=streams (KIP-1071) with two instances: the group
// coordinator splits the 6 tasks between them (seen in the instances' metadata and in
// StreamsGroupDescribe), one instance is restarted on its state directory, and the final
// counts equal the independent count of the lines produced (with both running, the key
// metadata of interactive queries names the instance holding each word); under exactly_once_v2 every
// word's updates are exactly 1, 2, ..., n.
func checkStreamsProtocolWordCount(t *testing.T, guarantee kstreams.ProcessingGuarantee) {
	b := kafkatest.Real(t)
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "sp")
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, 1000, 2)
	iso := sarama.ReadUncommitted
	if guarantee == kstreams.ExactlyOnceV2 {
		iso = sarama.ReadCommitted
	}
	out := readOutput(t, b, output, iso)
	dirs := []string{t.TempDir(), t.TempDir()}
	mk := func(i int) *kstreams.KafkaStreams {
		app, err := kstreams.New(wordCountTopology(t, input, output), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: guarantee,
			CommitInterval: 200 * time.Millisecond, StateDir: dirs[i], Sarama: fastSarama, Consumer: fastConsumer,
			GroupProtocol: kstreams.GroupProtocolStreams, ApplicationServer: fmt.Sprintf("localhost:%d", 8080+i),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return app
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	app1 := mk(0)
	out.waitFinal(t, want, 2*time.Minute, app1.Err)
	waitTasks(t, time.Minute, []*kstreams.KafkaStreams{app1}, []int{6})
	t.Logf("one instance: all 6 tasks, counts exact after %v", time.Since(start).Round(time.Millisecond))

	app2 := mk(1)
	waitSplit(t, b, appID, []*kstreams.KafkaStreams{app1, app2})
	merge(want, produceLines(t, b, input, 1000, 3))
	out.waitFinal(t, want, 2*time.Minute, app2.Err)
	t.Logf("two instances: counts exact after %v", time.Since(start).Round(time.Millisecond))
	waitKeyHosts(t, []*kstreams.KafkaStreams{app1, app2}, want)

	// Restart the first instance on its state directory while lines keep coming.
	if err := app1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	merge(want, produceLines(t, b, input, 500, 4))
	app1 = mk(0)
	waitSplit(t, b, appID, []*kstreams.KafkaStreams{app1, app2})
	merge(want, produceLines(t, b, input, 500, 5))
	out.waitFinal(t, want, 2*time.Minute, func() error { return errors.Join(app1.Err(), app2.Err()) })
	t.Logf("after the restart: counts exact after %v", time.Since(start).Round(time.Millisecond))
	if guarantee == kstreams.ExactlyOnceV2 {
		out.checkExactSequences(t, want)
	}
	for _, app := range []*kstreams.KafkaStreams{app1, app2} {
		if err := app.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Both left: the group is empty.
	if g := describeStreamsGroup(t, b, appID); g.Err() != nil || g.GroupState != "Empty" || len(g.Members) != 0 {
		t.Errorf("after both closed: %+v", g)
	}
}

// waitKeyHosts waits until, on both instances, QueryMetadataForKey names for every word the
// instance (its application.server, localhost:8080+i) whose local store holds it: the
// coordinator's partitions by user endpoint became the instances' host metadata.
func waitKeyHosts(t *testing.T, apps []*kstreams.KafkaStreams, want map[string]int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		wrong := ""
		for i, app := range apps {
			local, err := kstreams.KeyValueStore[string, int64](app, "Counts")
			if err != nil {
				wrong = err.Error()
				break
			}
			for w := range want {
				md, err := app.QueryMetadataForKey("Counts", []byte(w))
				if err != nil {
					t.Fatal(err)
				}
				_, here, err := local.Get(w)
				if err != nil {
					wrong = err.Error()
					break
				}
				if here != (md.ActiveHost == kstreams.HostInfo{Host: "localhost", Port: 8080 + i}) || md.ActiveHost.Port == 0 {
					wrong = fmt.Sprintf("instance %d: word %s is local: %v, metadata: %+v", i+1, w, here, md)
					break
				}
			}
			if wrong != "" {
				break
			}
		}
		if wrong == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("key metadata does not match the local stores within 1 min: %s", wrong)
		}
		time.Sleep(100 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

func TestIntegrationStreamsProtocolWordCountAtLeastOnce(t *testing.T) {
	checkStreamsProtocolWordCount(t, kstreams.AtLeastOnce)
}

func TestIntegrationStreamsProtocolWordCountExactlyOnce(t *testing.T) {
	checkStreamsProtocolWordCount(t, kstreams.ExactlyOnceV2)
}

// An instance on the other group protocol than the group's fails at once, both ways: Run
// returns a *group.ProtocolMismatchError (fatal) long before its context ends, and the
// instance holding the group keeps its tasks.
func TestIntegrationStreamsProtocolMismatch(t *testing.T) {
	b := kafkatest.Real(t)
	for _, c := range []struct {
		name         string
		holder, late kstreams.GroupProtocol
		// what the late instance's error says
		groupType, says string
	}{
		{"streams member, classic group", kstreams.GroupProtocolClassic, kstreams.GroupProtocolStreams, "", "not a streams group"},
		{"classic member, streams group", kstreams.GroupProtocolStreams, kstreams.GroupProtocolClassic, group.GroupTypeStreams, "streams group (KIP-1071"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "mm")
			createTopics(t, b, 2, input, output)
			want := produceLines(t, b, input, 200, 2)
			out := readOutput(t, b, output, sarama.ReadUncommitted)
			mk := func(p kstreams.GroupProtocol) *kstreams.KafkaStreams {
				app, err := kstreams.New(wordCountTopology(t, input, output), kstreams.Config{
					ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 200 * time.Millisecond,
					StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer, GroupProtocol: p,
				})
				if err != nil {
					t.Fatal(err)
				}
				return app
			}
			holder := mk(c.holder)
			if err := holder.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				_ = holder.Close(ctx)
			}()
			out.waitFinal(t, want, 2*time.Minute, holder.Err)
			waitTasks(t, time.Minute, []*kstreams.KafkaStreams{holder}, []int{4})

			late := mk(c.late)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			err := late.Run(ctx)
			t.Logf("Run returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
			if err == nil || ctx.Err() != nil {
				t.Fatalf("Run = %v (context %v), want the protocol mismatch before the context ends", err, ctx.Err())
			}
			var pm *group.ProtocolMismatchError
			if !errors.As(err, &pm) || !errors.Is(err, group.ErrFatal) || pm.GroupID != appID || pm.GroupType != c.groupType {
				t.Fatalf("Run = %v, want a *group.ProtocolMismatchError of group %s (type %q)", err, appID, c.groupType)
			}
			if !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), appID) {
				t.Errorf("Run's error %q does not say %q and name the group", err, c.says)
			}
			if late.State() != kstreams.StateError {
				t.Errorf("late instance's state after Run: %v", late.State())
			}
			// The holder was not disturbed.
			merge(want, produceLines(t, b, input, 100, 3))
			out.waitFinal(t, want, 2*time.Minute, holder.Err)
			waitTasks(t, time.Minute, []*kstreams.KafkaStreams{holder}, []int{4})
		})
	}
}
