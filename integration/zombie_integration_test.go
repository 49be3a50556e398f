package integration_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// stallProcessor forwards (key, 2*value); on value 50 it blocks once for stall when armed.
type stallProcessor struct {
	ctx         processor.ProcessorContext[string, int64]
	armed, done *atomic.Bool
	stall       time.Duration
}

func (p *stallProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	return nil
}
func (p *stallProcessor) Process(r processor.Record[string, int64]) error {
	if r.Value == 50 && p.armed.CompareAndSwap(true, false) {
		time.Sleep(p.stall) // a slow external call, longer than max.poll.interval.ms
		p.done.Store(true)
	}
	return p.ctx.Forward(processor.NewRecord(r.Key, 2*r.Value, r.Timestamp))
}
func (p *stallProcessor) Close() error { return nil }

func stallTopology(t testing.TB, input, output string, armed, done *atomic.Bool, stall time.Duration) *processor.Topology {
	topo := processor.NewTopology()
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())),
		topo.AddProcessor("Stall", processor.ProcessorSupplierFunc[string, int64, string, int64](
			func() processor.Processor[string, int64, string, int64] {
				return &stallProcessor{armed: armed, done: done, stall: stall}
			}), "Source"),
		topo.AddSink("Sink", output, []string{"Stall"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return topo
}

// Exactly-once against a zombie: a stream thread that stalls in processing for longer than
// max.poll.interval.ms loses its generation (its member leaves the group) and another instance
// takes its task over from the last committed offset. When the stalled thread finishes its
// batch and commits, its transactional offset commit carries the generation it last joined, is
// fenced (as Java's) and aborted: every key is in the read_committed output once.
func checkZombieCommitDuplicates(t *testing.T, b kafkatest.Broker) {
	input, output, appID := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "zombie")
	createTopics(t, b, 1, input, output)
	consumer := kstreams.ConsumerConfig{SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond,
		MaxPollInterval: 2 * time.Second, FetchMaxWait: 20 * time.Millisecond}
	mk := func(armed, done *atomic.Bool) *kstreams.KafkaStreams {
		app, err := kstreams.New(stallTopology(t, input, output, armed, done, 5*time.Second), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
			CommitInterval: 100 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: consumer,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeApp(t, app) })
		return app
	}
	// One stall for the two instances: whichever runs the task when value 50 comes stalls,
	// once. Java's high-availability assignor places the one stateless task on the instance
	// with the lower active load, ties broken by process id, so it is not sticky: it may move
	// to app2 when app2 joins.
	var armed, done atomic.Bool
	armed.Store(true)
	app1 := mk(&armed, &done)
	waitTasks(t, time.Minute, []*kstreams.KafkaStreams{app1}, []int{1})
	app2 := mk(&armed, &done)
	waitOneTask(t, time.Minute, app1, app2)

	const n = 200
	producePoisoned(t, b, input, n, -1)
	out := readOutput(t, b, output, sarama.ReadCommitted)
	want := map[string]int64{}
	for i := 0; i < n; i++ {
		want[fmt.Sprintf("k%d", i)] = int64(2 * i)
	}
	out.waitFinal(t, want, time.Minute, nil)
	// Wait for the stalled thread to finish its batch and its commit attempt, then for the
	// output to settle: each key must be in the committed output exactly once.
	deadline := time.Now().Add(30 * time.Second)
	for !done.Load() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !done.Load() {
		t.Fatal("no instance stalled")
	}
	settle := time.Now().Add(10 * time.Second)
	for time.Now().Before(settle) {
		out.mu.Lock()
		dups := 0
		first := ""
		for k, s := range out.seqs {
			if len(s) > 1 {
				dups++
				if first == "" {
					first = fmt.Sprintf("%s: %v", k, s)
				}
			}
		}
		out.mu.Unlock()
		if dups > 0 {
			t.Fatalf("exactly-once: %d keys are in the read_committed output more than once (e.g. %s)", dups, first)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitOneTask waits until both instances run and one of them holds the one task.
func waitOneTask(t *testing.T, timeout time.Duration, a, b *kstreams.KafkaStreams) {
	t.Helper()
	kafkatest.Eventually(t, timeout, "both instances running with one task in all", func() (string, bool) {
		for i, app := range []*kstreams.KafkaStreams{a, b} {
			if err := app.Err(); err != nil {
				t.Fatalf("app %d failed: %v", i+1, err)
			}
		}
		return fmt.Sprintf("app1 %s with %d tasks, app2 %s with %d tasks", a.State(), localTaskCount(a), b.State(), localTaskCount(b)),
			a.State() == kstreams.StateRunning && b.State() == kstreams.StateRunning && localTaskCount(a)+localTaskCount(b) == 1
	})
}

func TestEmbeddedZombieCommitFenced(t *testing.T) {
	t.Parallel()
	checkZombieCommitDuplicates(t, kafkatest.Embedded(t))
}
func TestIntegrationZombieCommitFenced(t *testing.T) {
	checkZombieCommitDuplicates(t, kafkatest.Real(t))
}
