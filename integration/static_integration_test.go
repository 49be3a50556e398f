package integration_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/store"
)

// localTaskIDs returns the instance's active task ids ("<sub-topology>_<partition>"), sorted.
func localTaskIDs(app *kstreams.KafkaStreams) []string {
	var ids []string
	for _, th := range app.MetadataForLocalThreads() {
		for _, tm := range th.ActiveTasks {
			ids = append(ids, tm.TaskID.String())
		}
	}
	slices.Sort(ids)
	return ids
}

// stateChanges records an instance's state changes.
type stateChanges struct {
	mu      sync.Mutex
	changes []string
}

func (l *stateChanges) listen(newState, oldState kstreams.State) {
	l.mu.Lock()
	l.changes = append(l.changes, fmt.Sprintf("%s->%s", oldState, newState))
	l.mu.Unlock()
}

func (l *stateChanges) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.changes[n:])
}

func (l *stateChanges) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.changes)
}

// A rolling restart with static membership (group.instance.id, KIP-345 on the classic
// protocol, KIP-1071's static members on the streams protocol) reassigns no task: two
// instances split the word count's 6 tasks; each in turn is closed (a static member does not
// leave the classic group, and leaves the streams group with member epoch -2, as Java 4.4's
// consumer does for a static member) and restarted on its state directory with the same
// instance id. The instance that keeps running sees no state change (no rebalance) and keeps
// its tasks, the restarted one gets exactly its tasks back, and the final counts equal the
// independent count. On the streams protocol the group keeps two members (the old member was
// replaced, not expired after the session timeout); with a persistent store the process id
// survives the restart (kafka-streams-process-metadata) and the group epoch does not move;
// with an in-memory store the restarted instance has a new process id, which the coordinator
// counts as a member change (a new group epoch, as for Java 4.4), yet no task moves.
func TestIntegrationStaticMembershipRollingRestart(t *testing.T) {
	b := kafkatest.Real(t)
	for _, c := range []struct {
		p          kstreams.GroupProtocol
		persistent bool
	}{{kstreams.GroupProtocolClassic, true}, {kstreams.GroupProtocolStreams, true}, {kstreams.GroupProtocolStreams, false}} {
		name := fmt.Sprintf("%s/persistent=%v", c.p, c.persistent)
		t.Run(name, func(t *testing.T) { checkStaticRollingRestart(t, b, c.p, c.persistent) })
	}
}

func checkStaticRollingRestart(t *testing.T, b kafkatest.Broker, p kstreams.GroupProtocol, persistent bool) {
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "static")
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, 1000, 2)
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	dirs := []string{t.TempDir(), t.TempDir()}
	logs := []*stateChanges{{}, {}}
	mk := func(i int) *kstreams.KafkaStreams {
		supplier := store.Stores.InMemoryKeyValueStore("Counts")
		if persistent {
			supplier = store.Stores.PersistentKeyValueStore("Counts")
		}
		app, err := kstreams.New(wordCountTopologyWith(t, input, output, supplier), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 200 * time.Millisecond,
			StateDir: dirs[i], Sarama: fastSarama, GroupProtocol: p,
			Consumer: func() kstreams.ConsumerConfig {
				c := fastConsumer
				c.GroupInstanceID = fmt.Sprintf("pod-%d", i)
				// Past the test's length: an expired member would show as a rebalance.
				c.SessionTimeout = 5 * time.Minute
				return c
			}(),
		})
		if err != nil {
			t.Fatal(err)
		}
		app.SetStateListener(logs[i].listen)
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return app
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	apps := []*kstreams.KafkaStreams{mk(0), mk(1)}
	defer func() {
		for _, app := range apps {
			_ = app.Close(ctx)
		}
	}()
	alive := func() error { return errors.Join(apps[0].Err(), apps[1].Err()) }
	// Split and settled: both run, the 6 tasks split, the counts final (no restore or
	// warm-up pending), and the split unchanged since.
	var tasks [2][]string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out.waitFinal(t, want, 2*time.Minute, alive)
		t0, t1 := localTaskIDs(apps[0]), localTaskIDs(apps[1])
		if apps[0].State() == kstreams.StateRunning && apps[1].State() == kstreams.StateRunning &&
			len(t0) > 0 && len(t1) > 0 && len(t0)+len(t1) == 6 && slices.Equal(t0, tasks[0]) && slices.Equal(t1, tasks[1]) {
			break
		}
		tasks = [2][]string{t0, t1}
		if time.Now().After(deadline) {
			t.Fatalf("the tasks did not settle split within 2 min: %v / %v", t0, t1)
		}
		time.Sleep(500 * time.Millisecond) // the split must hold across this interval
	}
	t.Logf("split: %v / %v", tasks[0], tasks[1])
	epoch := int32(-1)
	if p == kstreams.GroupProtocolStreams {
		g := describeStreamsGroup(t, b, appID)
		if g.GroupState != "Stable" || len(g.Members) != 2 {
			t.Fatalf("group before the restarts: %+v", g)
		}
		for _, m := range g.Members {
			if m.InstanceID == nil || (*m.InstanceID != "pod-0-1" && *m.InstanceID != "pod-1-1") {
				t.Fatalf("member %s has instance id %v, want pod-<i>-1", m.MemberID, m.InstanceID)
			}
		}
		epoch = g.GroupEpoch
	}

	for _, restart := range []int{1, 0} {
		stays := 1 - restart
		mark := logs[stays].len()
		if err := apps[restart].Close(ctx); err != nil {
			t.Fatal(err)
		}
		merge(want, produceLines(t, b, input, 300, uint64(10+restart)))
		apps[restart] = mk(restart)
		waitUntil(t, 2*time.Minute, alive, func() error {
			if got := localTaskIDs(apps[restart]); apps[restart].State() != kstreams.StateRunning || !slices.Equal(got, tasks[restart]) {
				return fmt.Errorf("restarted instance %d: %s with tasks %v, want %v", restart, apps[restart].State(), got, tasks[restart])
			}
			return nil
		})
		out.waitFinal(t, want, 2*time.Minute, alive)
		if ch := logs[stays].since(mark); len(ch) > 0 {
			t.Errorf("instance %d changed state while instance %d restarted: %v", stays, restart, ch)
		}
		if got := localTaskIDs(apps[stays]); !slices.Equal(got, tasks[stays]) {
			t.Errorf("instance %d owns %v after instance %d restarted, before %v", stays, got, restart, tasks[stays])
		}
		if p == kstreams.GroupProtocolStreams {
			g := describeStreamsGroup(t, b, appID)
			if (persistent && g.GroupEpoch != epoch) || len(g.Members) != 2 {
				t.Errorf("after instance %d restarted: group epoch %d (before %d), state %s, %d members",
					restart, g.GroupEpoch, epoch, g.GroupState, len(g.Members))
			}
		}
		t.Logf("instance %d restarted with its tasks %v", restart, tasks[restart])
	}
}

// waitUntil polls cond until it returns nil, failing the test with its last error after
// timeout or when alive reports an error.
func waitUntil(t *testing.T, timeout time.Duration, alive func() error, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if err := alive(); err != nil {
			t.Fatal(err)
		}
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}
