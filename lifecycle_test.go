package kstreams_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstreamstest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// The instance's life: every way it stops (Close, Close timing out, a fatal error, Run's context,
// a failed Start) ends with its final state set, its state directory released and Done closed.
// These run on the embedded broker; they wait for events (channels, Done), never for time.

// stepProc hands every record to the test: it reports the record on got and waits for the test's
// answer on reply (nil: processed; an error: the processor fails with it).
type stepProc struct {
	got   chan<- string
	reply <-chan error
}

func (p *stepProc) Init(processor.ProcessorContext[string, string]) error { return nil }
func (p *stepProc) Close() error                                          { return nil }
func (p *stepProc) Process(r processor.Record[string, string]) error {
	p.got <- r.Value
	return <-p.reply
}

// lifecycleApp is an instance reading input through a stepProc with a persistent (Pebble)
// store, so that New locks the state directory; states records every transition.
type lifecycleApp struct {
	app      *kstreams.KafkaStreams
	broker   *kstreamstest.Broker
	input    string
	stateDir string
	got      chan string
	reply    chan error

	mu     sync.Mutex
	states []kstreams.State
	// running is closed at the first transition to Running.
	running     chan struct{}
	runningOnce sync.Once
}

func newLifecycleApp(t *testing.T, b *kstreamstest.Broker, stateDir string) *lifecycleApp {
	t.Helper()
	a := &lifecycleApp{broker: b, input: "lifecycle-in", stateDir: stateDir, got: make(chan string), reply: make(chan error),
		running: make(chan struct{})}
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("in", []string{a.input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(topo.AddProcessor("step", processor.NewSupplier(func() processor.Processor[string, string, string, string] {
		return &stepProc{got: a.got, reply: a.reply}
	}), "in"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore("kept"), serde.String(), serde.String()), "step"))
	app, err := kstreams.New(topo, kstreams.Config{ApplicationID: "lifecycle", BootstrapServers: b.Addrs(), StateDir: stateDir,
		CommitInterval: 50 * time.Millisecond})
	must(err)
	app.SetStateListener(func(newState, _ kstreams.State) {
		a.mu.Lock()
		a.states = append(a.states, newState)
		a.mu.Unlock()
		if newState == kstreams.StateRunning {
			a.runningOnce.Do(func() { close(a.running) })
		}
	})
	a.app = app
	return a
}

func (a *lifecycleApp) transitions() []kstreams.State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]kstreams.State(nil), a.states...)
}

// produce writes one record to the input topic.
func (a *lifecycleApp) produce(t *testing.T, value string) {
	t.Helper()
	kstreamstest.Produce(t, a.broker, a.input, serde.String(), serde.String(), kstreamstest.KV("k", value))
}

// waitRecord waits until the processor holds a record and returns its value.
func (a *lifecycleApp) waitRecord(t *testing.T) string {
	t.Helper()
	select {
	case v := <-a.got:
		return v
	case <-a.app.Done():
		t.Fatalf("the instance stopped (state %v, err %v) before processing a record", a.app.State(), a.app.Err())
	case <-time.After(time.Minute):
		t.Fatal("no record reached the processor within a minute")
	}
	return ""
}

// waitDone waits for Done and returns the final state.
func waitDone(t *testing.T, app *kstreams.KafkaStreams) kstreams.State {
	t.Helper()
	select {
	case <-app.Done():
	case <-time.After(time.Minute):
		t.Fatalf("Done not closed within a minute (state %v)", app.State())
	}
	return app.State()
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// checkDirReleased: a new instance can lock the same state directory (New fails with
// ErrStateDirLocked while the old one holds it).
func checkDirReleased(t *testing.T, b *kstreamstest.Broker, stateDir string) {
	t.Helper()
	next := newLifecycleApp(t, b, stateDir)
	if err := next.app.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func sameStates(got, want []kstreams.State) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestLifecycleCloseCreated(t *testing.T) {
	b := kstreamstest.NewBroker(t)
	dir := t.TempDir()
	a := newLifecycleApp(t, b, dir)
	if _, err := kstreams.New(processor.NewTopology(), kstreams.Config{}); err == nil {
		t.Fatal("New accepted a config without application.id")
	}
	if err := a.app.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := waitDone(t, a.app); st != kstreams.StateNotRunning {
		t.Fatalf("state after Close of a created instance = %v, want NOT_RUNNING", st)
	}
	if got, want := a.transitions(), []kstreams.State{kstreams.StatePendingShutdown, kstreams.StateNotRunning}; !sameStates(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
	checkDirReleased(t, b, dir)
	if err := a.app.Start(context.Background()); !errors.Is(err, kstreams.ErrIllegalState) {
		t.Fatalf("Start after Close = %v, want ErrIllegalState", err)
	}
}

// TestLifecycleCloseTimesOut: Close whose context ends while a processor still holds a record
// returns the context's error with the instance in PENDING_SHUTDOWN; once the record is done
// the threads finish in the background, the instance reaches NOT_RUNNING, releases the state
// directory and closes Done.
func TestLifecycleCloseTimesOut(t *testing.T) {
	b := kstreamstest.NewBroker(t)
	dir := t.TempDir()
	a := newLifecycleApp(t, b, dir)
	b.CreateTopics(t, 1, a.input)
	if err := a.app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.produce(t, "held")
	if v := a.waitRecord(t); v != "held" {
		t.Fatalf("processor got %q", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	closed := make(chan error, 1)
	go func() { closed <- a.app.Close(ctx) }()
	// Close waits for the held record; end its context.
	cancel()
	if err := <-closed; !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with an ended context = %v, want context.Canceled", err)
	}
	if st := a.app.State(); st != kstreams.StatePendingShutdown {
		t.Fatalf("state after Close timed out = %v, want PENDING_SHUTDOWN", st)
	}
	if isClosed(a.app.Done()) {
		t.Fatal("Done closed while a processor still holds a record")
	}
	a.reply <- nil // the record is done: the thread can finish
	if st := waitDone(t, a.app); st != kstreams.StateNotRunning {
		t.Fatalf("final state = %v, want NOT_RUNNING", st)
	}
	if err := a.app.Err(); err != nil {
		t.Fatalf("Err after a clean close = %v", err)
	}
	checkDirReleased(t, b, dir)
	if err := a.app.Close(context.Background()); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

// TestLifecycleCloseAfterError: a processor failing (default handler: fail) stops the instance
// in ERROR with the error in Err and Done closed; a later Close returns nil and keeps ERROR.
func TestLifecycleCloseAfterError(t *testing.T) {
	b := kstreamstest.NewBroker(t)
	dir := t.TempDir()
	a := newLifecycleApp(t, b, dir)
	b.CreateTopics(t, 1, a.input)
	if err := a.app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.produce(t, "bad")
	a.waitRecord(t)
	boom := errors.New("boom")
	a.reply <- boom
	if st := waitDone(t, a.app); st != kstreams.StateError {
		t.Fatalf("state after a processing failure = %v, want ERROR", st)
	}
	if err := a.app.Err(); !errors.Is(err, boom) {
		t.Fatalf("Err = %v, want it to wrap the processor's error", err)
	}
	tr := a.transitions()
	if n := len(tr); n < 2 || tr[n-2] != kstreams.StatePendingError || tr[n-1] != kstreams.StateError {
		t.Fatalf("transitions %v, want them to end PENDING_ERROR, ERROR", tr)
	}
	checkDirReleased(t, b, dir)
	if err := a.app.Close(context.Background()); err != nil {
		t.Fatalf("Close after the error = %v", err)
	}
	if st := a.app.State(); st != kstreams.StateError {
		t.Fatalf("state after Close = %v, want ERROR kept", st)
	}
}

// TestLifecycleRunContextEnds: Run blocks until its context ends, then closes the instance and
// returns nil; Done is closed and the instance is NOT_RUNNING.
func TestLifecycleRunContextEnds(t *testing.T) {
	b := kstreamstest.NewBroker(t)
	dir := t.TempDir()
	a := newLifecycleApp(t, b, dir)
	b.CreateTopics(t, 1, a.input)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.app.Run(ctx) }()
	a.produce(t, "one")
	a.waitRecord(t)
	a.reply <- nil
	select {
	case <-a.running:
	case <-time.After(time.Minute):
		t.Fatalf("not RUNNING within a minute (state %v)", a.app.State())
	}
	if isClosed(a.app.Done()) {
		t.Fatal("Done closed while Run's context is live")
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v, want nil after its context ended", err)
	}
	if !isClosed(a.app.Done()) || a.app.State() != kstreams.StateNotRunning {
		t.Fatalf("after Run returned: Done closed %v, state %v; want closed, NOT_RUNNING", isClosed(a.app.Done()), a.app.State())
	}
	tr := a.transitions()
	if n := len(tr); tr[0] != kstreams.StateRebalancing || tr[n-2] != kstreams.StatePendingShutdown || tr[n-1] != kstreams.StateNotRunning {
		t.Fatalf("transitions %v, want REBALANCING ... PENDING_SHUTDOWN, NOT_RUNNING", tr)
	}
	checkDirReleased(t, b, dir)
}

// TestLifecycleStartContextEnded: Start with an ended context fails with the context's error;
// the instance is then in ERROR, Done is closed and the state directory released.
func TestLifecycleStartContextEnded(t *testing.T) {
	b := kstreamstest.NewBroker(t)
	dir := t.TempDir()
	a := newLifecycleApp(t, b, dir)
	b.CreateTopics(t, 1, a.input)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := a.app.Start(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with an ended context = %v, want context.Canceled", err)
	}
	if !isClosed(a.app.Done()) || a.app.State() != kstreams.StateError {
		t.Fatalf("after a failed Start: Done closed %v, state %v; want closed, ERROR", isClosed(a.app.Done()), a.app.State())
	}
	checkDirReleased(t, b, dir)
}
