package integration_test

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/processor"
	"slices"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// waitFor polls cond (every 20 ms, for at most a minute) and fails with what() when it never
// holds.
func waitFor(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	kafkatest.Eventually(t, time.Minute, "condition", func() (string, bool) {
		if cond() {
			return "", true
		}
		return what(), false
	})
}

// checkStaleQueries runs a count on two instances with one standby per task (two partitions,
// application.server localhost:7101 and :7102) and checks KIP-535: the instances' metadata
// (MetadataForAllStreamsClients, StreamsMetadataForStore, QueryMetadataForKeyOf with the
// standby hosts) says which instance runs and which keeps a standby of each task; a view
// without EnableStaleStores does not answer a key whose task this instance only keeps as a
// standby, one with it answers from the standby (WithPartition picks the key's task); and
// once the active instance is closed, the other answers every key with stale data allowed.
func checkStaleQueries(t *testing.T, b kafkatest.Broker) {
	input, appID := kafkatest.Name(t, "votes"), kafkatest.Name(t, "iq-stale")
	createTopics(t, b, 2, input)
	mk := func(port int) iqInstance {
		sb := kstream.NewStreamsBuilder()
		kstream.Stream(sb, input, kstream.ConsumedWith(serde.String(), serde.String())).
			GroupByKey().Count(kstream.MaterializedAs[string, int64]("vote-counts"))
		topo, err := sb.Build()
		if err != nil {
			t.Fatal(err)
		}
		app, err := kstreams.New(topo, kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ApplicationServer: fmt.Sprintf("localhost:%d", port),
			NumStandbyReplicas: 1, CommitInterval: 20 * time.Millisecond, StateDir: t.TempDir(),
			Sarama: fastSarama, Consumer: fastConsumer,
		})
		if err != nil {
			t.Fatal(err)
		}
		startApp(t, app)
		return iqInstance{app: app, port: port}
	}
	insts := []iqInstance{mk(7101), mk(7102)}
	waitFor(t, func() bool {
		return activeCount(insts[0].app) == 1 && activeCount(insts[1].app) == 1 &&
			insts[0].app.State() == kstreams.StateRunning && insts[1].app.State() == kstreams.StateRunning
	}, func() string {
		return fmt.Sprintf("one active task on each instance (%d and %d)", activeCount(insts[0].app), activeCount(insts[1].app))
	})
	want := map[string]int64{}
	for i := range 10 {
		k := fmt.Sprintf("option-%d", i)
		for range i + 1 {
			produceAt(t, b, input, k, "x", 1000)
		}
		want[k] = int64(i + 1)
	}

	// Metadata: each instance runs one partition and keeps a standby of the other.
	var all []kstreams.StreamsMetadata
	waitFor(t, func() bool {
		var err error
		all, err = insts[0].app.MetadataForAllStreamsClients()
		if err != nil {
			t.Fatal(err)
		}
		return len(all) == 2 && len(all[0].StandbyTopicPartitions) == 1 && len(all[1].StandbyTopicPartitions) == 1
	}, func() string { return fmt.Sprintf("two instances with a standby each in %+v", all) })
	for i, md := range all {
		if md.HostInfo != (kstreams.HostInfo{Host: "localhost", Port: insts[i].port}) ||
			!slices.Equal(md.StateStoreNames, []string{"vote-counts"}) || !slices.Equal(md.StandbyStateStoreNames, []string{"vote-counts"}) ||
			len(md.TopicPartitions) != 1 || md.TopicPartitions[0].Topic != input ||
			md.StandbyTopicPartitions[0].Partition == md.TopicPartitions[0].Partition {
			t.Fatalf("metadata of instance %d: %+v", i, md)
		}
	}
	perStore, err := insts[1].app.StreamsMetadataForStore("vote-counts")
	if err != nil || !slices.EqualFunc(perStore, all, func(a, b kstreams.StreamsMetadata) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("StreamsMetadataForStore = %+v %v, want %+v", perStore, err, all)
	}
	if _, err := insts[1].app.StreamsMetadataForStore("vote-count"); !errors.Is(err, processor.ErrUnknownStore) {
		t.Fatalf("StreamsMetadataForStore of an unknown store: %v", err)
	}

	owner := map[string]int{}
	for k := range want {
		md, err := kstreams.QueryMetadataForKeyOf(insts[0].app, "vote-counts", k, serde.String())
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := insts[0].app.QueryMetadataForKey("vote-counts", []byte(k))
		if fmt.Sprint(raw) != fmt.Sprint(md) {
			t.Fatalf("typed and serialized metadata of %s differ: %+v, %+v", k, md, raw)
		}
		o := slices.IndexFunc(insts, func(in iqInstance) bool { return in.port == md.ActiveHost.Port })
		if o < 0 || len(md.StandbyHosts) != 1 || md.StandbyHosts[0].Port != insts[1-o].port {
			t.Fatalf("metadata of %s: %+v", k, md)
		}
		owner[k] = o
	}

	// Each instance answers the other's keys only with stale data allowed, from its standby.
	for i, in := range insts {
		strict, err := kstreams.KeyValueStore[string, int64](in.app, "vote-counts")
		if err != nil {
			t.Fatal(err)
		}
		for k, n := range want {
			md, _ := kstreams.QueryMetadataForKeyOf(in.app, "vote-counts", k, serde.String())
			stale, err := kstreams.KeyValueStore[string, int64](in.app, "vote-counts", kstreams.EnableStaleStores(), kstreams.WithPartition(int(md.Partition)))
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			var ok bool
			waitFor(t, func() bool {
				got, ok, err = stale.Get(k)
				if err != nil {
					t.Fatal(err)
				}
				return ok && got == n
			}, func() string { return fmt.Sprintf("instance %d: stale %s = %d %v, want %d", i, k, got, ok, n) })
			if owner[k] != i {
				if v, ok, err := strict.Get(k); err != nil || ok {
					t.Fatalf("instance %d answers %s (%d) without stale stores, from its standby", i, k, v)
				}
				_, err := kstreams.KeyValueStore[string, int64](in.app, "vote-counts", kstreams.WithPartition(int(md.Partition)))
				if !errors.Is(err, kstreams.ErrStoreNotAvailable) {
					t.Fatalf("instance %d: a strict view of its standby's partition: %v, want ErrStoreNotAvailable", i, err)
				}
			}
		}
	}

	// The active of some keys goes away: the other instance answers them all with stale data
	// allowed (from its standby until the group moves the task, then from the promoted task).
	closeApp(t, insts[0].app)
	survivor := insts[1].app
	for k, n := range want {
		var got int64
		var ok bool
		var err error
		waitFor(t, func() bool {
			var view store.ReadOnlyKeyValueStore[string, int64]
			if view, err = kstreams.KeyValueStore[string, int64](survivor, "vote-counts", kstreams.EnableStaleStores()); err == nil {
				got, ok, err = view.Get(k)
			}
			if err != nil && !errors.Is(err, kstreams.ErrStoreNotAvailable) {
				t.Fatal(err)
			}
			if err == nil && ok && got != n {
				t.Fatalf("after the active closed: %s = %d, want %d", k, got, n)
			}
			return err == nil && ok
		}, func() string { return fmt.Sprintf("%s answered after the active closed (%d %v %v)", k, got, ok, err) })
	}
}

func TestIntegrationStaleQueries(t *testing.T) { checkStaleQueries(t, kafkatest.Real(t)) }
