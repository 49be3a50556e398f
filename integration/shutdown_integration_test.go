package integration_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// errMarker is what markerProcessor returns for the marker record.
var errMarker = errors.New("marker record: cannot process")

// markerProcessor forwards its records and fails on the value "marker", on whichever
// instance runs the task of the marker's partition.
type markerProcessor struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *markerProcessor) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	return nil
}
func (p *markerProcessor) Process(r processor.Record[string, string]) error {
	if r.Value == "marker" {
		return errMarker
	}
	return p.ctx.Forward(r)
}
func (p *markerProcessor) Close() error { return nil }

// stateLog records an instance's state changes and wakes a waiter on each.
type stateLog struct {
	mu      sync.Mutex
	changes [][2]kstreams.State // {old, new}
	changed chan struct{}
}

func newStateLog() *stateLog { return &stateLog{changed: make(chan struct{}, 1)} }

func (l *stateLog) listen(newState, oldState kstreams.State) {
	l.mu.Lock()
	l.changes = append(l.changes, [2]kstreams.State{oldState, newState})
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *stateLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := ""
	for _, c := range l.changes {
		s += fmt.Sprintf(" %s->%s", c[0], c[1])
	}
	return s
}

// waitState waits, on the listener's events, until the instance's latest state is st or the
// deadline passes.
func (l *stateLog) waitState(t *testing.T, name string, st kstreams.State, deadline time.Time) {
	t.Helper()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		l.mu.Lock()
		n := len(l.changes)
		reached := n > 0 && l.changes[n-1][1] == st
		l.mu.Unlock()
		if reached {
			return
		}
		select {
		case <-l.changed:
		case <-timer.C:
			t.Fatalf("%s: state %s not reached by the deadline; transitions:%s", name, st, l)
		}
	}
}

// checkShutdownApplication: two instances of one application (A with one stream thread, B
// with two); the processor fails on a marker record on whichever instance owns its partition,
// whose handler answers ShutdownApplication; both instances end in Error (through
// PendingError, as Java's closeToError), the failing one with the processor's error, the
// other with ErrApplicationShutdown, and only one handler ran. The marker goes to a
// partition that the instance named by failing ("A" or "B") owns once both run (should a
// rebalance move it in between, the other instance fails instead; the test logs which did).
//
// lateSyncs (kfake only) holds, once the failing instance's handler ran, every SyncGroup of a
// group member other than the leader until an instance reached ERROR: the members learn the
// leader's answer only after the leader's instance stopped, which must not end their chance to
// get it (the stopped instance stays in the group, so the generation stands).
func checkShutdownApplication(t *testing.T, b kafkatest.Broker, failing string, protocol kstreams.GroupProtocol, lateSyncs bool) {
	input, output, appID := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "shutdown-app")
	createTopics(t, b, 4, input, output)
	topo := processor.NewTopology()
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())),
		topo.AddProcessor("Marker", processor.ProcessorSupplierFunc[string, string, string, string](
			func() processor.Processor[string, string, string, string] { return &markerProcessor{} }), "Source"),
		topo.AddSink("Sink", output, []string{"Marker"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.String())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	type instance struct {
		name    string
		app     *kstreams.KafkaStreams
		states  *stateLog
		handled atomic.Int64
		cause   atomic.Value
		// errored is closed when the instance reaches ERROR.
		errored     chan struct{}
		erroredOnce sync.Once
	}
	start := func(name string, threads int) *instance {
		in := &instance{name: name, states: newStateLog(), errored: make(chan struct{})}
		in.app = newAppOn(t, b, topo, appID, kstreams.AtLeastOnce, threads, protocol)
		in.app.SetStateListener(func(newState, oldState kstreams.State) {
			in.states.listen(newState, oldState)
			if newState == kstreams.StateError {
				in.erroredOnce.Do(func() { close(in.errored) })
			}
		})
		in.app.SetUncaughtExceptionHandler(func(err error) kstreams.ThreadResponse {
			in.handled.Add(1)
			in.cause.Store(err)
			return kstreams.ShutdownApplication
		})
		startApp(t, in.app)
		return in
	}
	deadline := time.Now().Add(90 * time.Second)
	a := start("A", 1)
	a.states.waitState(t, a.name, kstreams.StateRunning, deadline)
	bb := start("B", 2)
	bb.states.waitState(t, bb.name, kstreams.StateRunning, deadline)
	a.states.waitState(t, a.name, kstreams.StateRunning, deadline)
	// Both protocols hand tasks to a joining instance in steps: a member of a streams group
	// runs (with no tasks) from its first heartbeat on and gets its tasks with later ones; under
	// the classic protocol's cooperative rebalancing B runs with no task after the first
	// rebalance (A still owns them all) and gets its share in the follow-up rebalance. Wait
	// until both instances hold some.
	kafkatest.Eventually(t, time.Until(deadline), "the 4 tasks split between A and B", func() (string, bool) {
		na, nb := localTaskCount(a.app), localTaskCount(bb.app)
		return fmt.Sprintf("A %v, B %v", a.app.MetadataForLocalThreads(), bb.app.MetadataForLocalThreads()), na > 0 && nb > 0 && na+nb == 4
	})
	owner := map[string]*instance{"A": a, "B": bb}[failing]
	markerPartition := int32(-1)
	for _, th := range owner.app.MetadataForLocalThreads() {
		for _, tm := range th.ActiveTasks {
			markerPartition = int32(tm.TaskID.Partition)
		}
	}
	if markerPartition < 0 {
		t.Fatalf("%s runs no task: A %v, B %v", failing, a.app.MetadataForLocalThreads(), bb.app.MetadataForLocalThreads())
	}
	t.Logf("marker on partition %d, owned by %s", markerPartition, failing)
	if lateSyncs {
		b.Cluster.ControlKey(int16(kmsg.SyncGroup), func(req kmsg.Request) (kmsg.Response, error, bool) {
			b.Cluster.KeepControl()
			if sync := req.(*kmsg.SyncGroupRequest); len(sync.GroupAssignment) == 0 && owner.handled.Load() > 0 {
				b.Cluster.SleepControl(func() {
					select {
					case <-a.errored:
					case <-bb.errored:
					case <-t.Context().Done():
					}
				})
			}
			return nil, nil, false
		})
	}
	// Records on every partition, the marker last.
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*sarama.ProducerMessage
	for i := 0; i < 20; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Partition: int32(i % 4), Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)),
			Value: sarama.StringEncoder(fmt.Sprintf("v%d", i)), Timestamp: time.UnixMilli(int64(1000 + i))})
	}
	msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Partition: markerPartition, Key: sarama.StringEncoder("m"),
		Value: sarama.StringEncoder("marker"), Timestamp: time.UnixMilli(2000)})
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	p.Close()
	shutdownDeadline := time.Now().Add(60 * time.Second)
	for _, in := range []*instance{a, bb} {
		in.states.waitState(t, in.name, kstreams.StateError, shutdownDeadline)
	}
	var failed, told int
	for _, in := range []*instance{a, bb} {
		t.Logf("%s: handler calls %d, transitions:%s, err: %v", in.name, in.handled.Load(), in.states, in.app.Err())
		in.states.mu.Lock()
		n := len(in.states.changes)
		last := in.states.changes[n-1]
		var sawNotRunning bool
		for _, c := range in.states.changes {
			sawNotRunning = sawNotRunning || c[1] == kstreams.StateNotRunning || c[1] == kstreams.StatePendingShutdown
		}
		in.states.mu.Unlock()
		if last != [2]kstreams.State{kstreams.StatePendingError, kstreams.StateError} || sawNotRunning {
			t.Errorf("%s: transitions%s, want them to end PENDING_ERROR->ERROR without a clean shutdown", in.name, in.states)
		}
		if in.app.State() != kstreams.StateError {
			t.Errorf("%s: state %s, want ERROR", in.name, in.app.State())
		}
		switch h := in.handled.Load(); h {
		case 0:
			told++
			if err := in.app.Err(); !errors.Is(err, kstreams.ErrApplicationShutdown) {
				t.Errorf("%s: Err %v, want ErrApplicationShutdown", in.name, err)
			}
		case 1:
			failed++
			if cause, _ := in.cause.Load().(error); !errors.Is(cause, errMarker) {
				t.Errorf("%s: handler got %v, want the processor's error", in.name, cause)
			}
			if err := in.app.Err(); !errors.Is(err, errMarker) {
				t.Errorf("%s: Err %v, want the processor's error", in.name, err)
			}
		default:
			t.Errorf("%s: handler called %d times, want at most once", in.name, h)
		}
	}
	if failed != 1 || told != 1 {
		t.Errorf("%d instance(s) failed on the marker and %d were told to shut down, want 1 and 1", failed, told)
	}
	// Close after ERROR returns at once and the state stays ERROR.
	for _, in := range []*instance{a, bb} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := in.app.Close(ctx); err != nil {
			t.Errorf("%s: Close: %v", in.name, err)
		}
		cancel()
		if in.app.State() != kstreams.StateError {
			t.Errorf("%s: state after Close %s, want ERROR", in.name, in.app.State())
		}
	}
}

func shutdownApplicationCases(t *testing.T, broker func(testing.TB) kafkatest.Broker, protocol kstreams.GroupProtocol) {
	// A: the failed thread is the instance's only one; B: its other thread announces too.
	for _, failing := range []string{"A", "B"} {
		t.Run("failing"+failing, func(t *testing.T) { checkShutdownApplication(t, broker(t), failing, protocol, false) })
	}
}

func TestIntegrationShutdownApplication(t *testing.T) {
	shutdownApplicationCases(t, func(t testing.TB) kafkatest.Broker { return kafkatest.Real(t) }, "")
}
func TestEmbeddedShutdownApplication(t *testing.T) {
	t.Parallel()
	shutdownApplicationCases(t, func(t testing.TB) kafkatest.Broker { return kafkatest.Embedded(t) }, "")
}

// The group's answer reaches the other instance's members after the leader's instance, which
// got its own answer first, shut down: they still get SHUTDOWN_REQUESTED (the instance that
// stopped did not leave the group, which would have started a new generation without the
// request and let the other instance take over the marker's task).
func TestEmbeddedShutdownApplicationLateSync(t *testing.T) {
	t.Parallel()
	checkShutdownApplication(t, kafkatest.Embedded(t), "A", "", true)
}

// The same on group.protocol=streams (KIP-1071): the request goes with the heartbeats
// (ShutdownApplication) and the coordinator tells every member with the status
// SHUTDOWN_APPLICATION.
func TestIntegrationShutdownApplicationStreamsProtocol(t *testing.T) {
	shutdownApplicationCases(t, func(t testing.TB) kafkatest.Broker { return kafkatest.Real(t) }, kstreams.GroupProtocolStreams)
}
