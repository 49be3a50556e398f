package integration_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/testhooks"
)

// checkScaleOut: two instances of a count (Pebble store, changelog) process a steady load; a
// third joins. The rebalance it starts is held open at the group leader's assignment (every
// member then waits for its SyncGroup answer: testhooks.BeforeAssign), and records produced
// then to the partitions of the first two must be output while it is held: both keep
// processing their tasks while they rejoin (cooperative rebalancing). Order of events, not
// timing: a member that stops processing for its rejoin outputs nothing until the rebalance
// is released, and the test fails at its deadline. Then all three run and every count is
// final.
func checkScaleOut(t *testing.T, b kafkatest.Broker) {
	input, output, appID := kafkatest.Name(t, "in"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "scaleout")
	createTopics(t, b, 6, input, output)
	out := readOutput(t, b, output, sarama.ReadUncommitted)

	var armed atomic.Bool
	var once sync.Once
	held, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var events []string
	event := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	testhooks.BeforeAssign = func(group string) {
		if group != appID || !armed.Load() {
			return
		}
		first := false
		once.Do(func() { first = true })
		if first {
			event("assignment held")
			close(held)
			<-release
			event("assignment released")
		}
	}
	t.Cleanup(func() { testhooks.BeforeAssign = nil }) // after the applications closed
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()

	newInstance := func(name string) *kstreams.KafkaStreams {
		app, err := kstreams.New(pebbleCountTopology(t, input, output), failoverConfig(b.Addrs, appID, t.TempDir(), kstreams.GroupProtocolClassic))
		if err != nil {
			t.Fatal(err)
		}
		app.SetStateListener(func(n, _ kstreams.State) { event(name + " " + n.String()) })
		startApp(t, app)
		return app
	}
	a := newInstance("A")
	waitTasks(t, 2*time.Minute, []*kstreams.KafkaStreams{a}, []int{6})
	bApp := newInstance("B")
	waitTasks(t, 2*time.Minute, []*kstreams.KafkaStreams{a, bApp}, []int{3, 3})

	// A steady load until the end.
	want := map[string]int64{}
	stop, loaded := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(loaded)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			merge(want, produceKeysN(t, b, input, 200, 300, i))
		}
	}()
	stopLoad := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-loaded
	}
	defer stopLoad()

	armed.Store(true)
	c := newInstance("C")
	select {
	case <-held:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no rebalance within 2 minutes of the third instance's start (errors: %v, %v, %v)", a.Err(), bApp.Err(), c.Err())
	}
	parts := append(ownedPartitions(a), ownedPartitions(bApp)...)
	if len(parts) != 6 {
		t.Fatalf("the first two instances run %d tasks during the rebalance, want 6", len(parts))
	}
	keys := produceMarkers(t, b.Addrs, input, parts, "during-rebalance")
	event("markers produced")
	deadline := time.Now().Add(time.Minute)
	for !out.has(keys) {
		if time.Now().After(deadline) {
			t.Fatalf("records of the partitions %v of the first two instances produced while the rebalance is held were not output", parts)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	event("markers output")
	close(release)
	released = true

	stopLoad()
	for _, k := range keys {
		want[k] = 1
	}
	out.waitFinal(t, want, 2*time.Minute, func() error {
		for _, x := range []*kstreams.KafkaStreams{a, bApp, c} {
			if err := x.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	// The rebalance was held until the markers were output: no instance finished a rebalance
	// in between (the coordinator may not have given up on the held one either).
	mu.Lock()
	got := strings.Join(events, "; ")
	phase := ""
	for _, e := range events {
		switch {
		case e == "assignment held" || e == "markers produced" || e == "markers output" || e == "assignment released":
			phase = e
		case phase != "" && phase != "assignment released" && strings.HasSuffix(e, " RUNNING"):
			t.Errorf("%s after %q: a rebalance ended before the markers were output", e, phase)
		}
	}
	mu.Unlock()
	if phase != "assignment released" {
		t.Fatalf("events: %s", got)
	}
	t.Logf("events: %s; tasks after: %d, %d, %d", got, localTaskCount(a), localTaskCount(bApp), localTaskCount(c))
}

func TestIntegrationScaleOutKeepsProcessing(t *testing.T) { checkScaleOut(t, kafkatest.Real(t)) }
