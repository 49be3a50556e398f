package integration_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Environment of the fail-over child process.
const (
	envFailoverChild = "KSTREAMS_FAILOVER_CHILD"
	envFailoverArgs  = "KSTREAMS_FAILOVER_ARGS" // bootstrap|input|output|appID|stateDir|group.protocol
)

// pebbleCountTopology counts the records of every key of input into the Pebble store "Counts"
// (logged) and writes each new count to output.
func pebbleCountTopology(t testing.TB, input, output string) *processor.Topology {
	t.Helper()
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("Source", []string{input},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(topo.AddProcessor("Count", processor.ProcessorSupplierFunc[string, string, string, int64](
		func() processor.Processor[string, string, string, int64] { return &countProcessor{} }), "Source"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore("Counts"), serde.String(), serde.Long()), "Count"))
	must(topo.AddSink("Sink", output, []string{"Count"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())))
	return topo
}

// failoverConfig is the configuration of both instances of the fail-over test: no record
// cache (every update is output at once), no standbys.
func failoverConfig(addrs []string, appID, stateDir string, protocol kstreams.GroupProtocol) kstreams.Config {
	noCache := int64(0)
	return kstreams.Config{ApplicationID: appID, BootstrapServers: addrs, CommitInterval: 100 * time.Millisecond,
		StateDir: stateDir, Sarama: fastSarama, Consumer: fastConsumer, NumStreamThreads: 1, StateStoreCacheMaxBytes: &noCache,
		GroupProtocol: protocol}
}

// TestHelperFailoverChild is not a test: run by checkFailover as a child process, it runs the
// count until it is killed.
func TestHelperFailoverChild(t *testing.T) {
	if os.Getenv(envFailoverChild) == "" {
		t.Skip("helper process for the fail-over test")
	}
	a := strings.Split(os.Getenv(envFailoverArgs), "|")
	app, err := kstreams.New(pebbleCountTopology(t, a[1], a[2]), failoverConfig(strings.Split(a[0], ","), a[3], a[4], kstreams.GroupProtocol(a[5])))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	app.SetStateListener(func(n, _ kstreams.State) { fmt.Println("STATE", n) })
	if err := app.Run(context.Background()); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
}

// restoreGate is the survivor's restore listener: once armed, it holds every restore after its
// first batch until released (the state updater restores two tasks at once; the test
// meanwhile produces to the survivor's own partitions and waits for their output), reports
// the first batch held, and records the order of events.
type restoreGate struct {
	armed    atomic.Bool
	once     sync.Once
	reached  chan changelog.TopicPartition
	release  chan struct{}
	mu       sync.Mutex
	events   []string
	restored map[changelog.TopicPartition]int64
}

func newRestoreGate() *restoreGate {
	return &restoreGate{reached: make(chan changelog.TopicPartition, 1), release: make(chan struct{}),
		restored: map[changelog.TopicPartition]int64{}}
}

func (g *restoreGate) event(e string) {
	g.mu.Lock()
	g.events = append(g.events, e)
	g.mu.Unlock()
}

func (g *restoreGate) OnRestoreStart(tp changelog.TopicPartition, _ string, from, to int64) {
	if g.armed.Load() {
		g.event(fmt.Sprintf("restore start %s %d..%d", tp, from, to))
	}
}
func (g *restoreGate) OnBatchRestored(tp changelog.TopicPartition, _ string, _, n int64) {
	if !g.armed.Load() {
		return
	}
	g.mu.Lock()
	g.restored[tp] += n
	g.mu.Unlock()
	g.once.Do(func() {
		g.event("first batch " + tp.String())
		g.reached <- tp
	})
	<-g.release
}
func (g *restoreGate) OnRestoreEnd(tp changelog.TopicPartition, _ string, total int64) {
	if g.armed.Load() {
		g.event(fmt.Sprintf("restore end %s %d", tp, total))
	}
}

// ownedPartitions returns the input partitions of app's running tasks (one sub-topology: the
// task's partition).
func ownedPartitions(app *kstreams.KafkaStreams) []int32 {
	var out []int32
	for _, th := range app.MetadataForLocalThreads() {
		for _, tk := range th.ActiveTasks {
			out = append(out, int32(tk.TaskID.Partition))
		}
	}
	return out
}

// produceMarkers writes one record with a fresh key to each of partitions and returns the keys.
func produceMarkers(t *testing.T, addrs []string, topic string, partitions []int32, tag string) []string {
	t.Helper()
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var keys []string
	for _, part := range partitions {
		k := fmt.Sprintf("marker-%s-%d", tag, part)
		keys = append(keys, k)
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: part, Key: sarama.StringEncoder(k), Value: sarama.StringEncoder("x")}); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// outputHas reports whether every key was output (with the count 1).
func (o *outputReader) has(keys []string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range keys {
		if s := o.seqs[k]; len(s) == 0 || s[0] != 1 {
			return false
		}
	}
	return true
}

// checkFailover: two instances of a count (Pebble store, changelog, no standbys), each with two
// of the four partitions; one (a child process) is killed. The survivor takes over the dead
// one's tasks and restores them from their changelogs; its restore is held after its first
// batch, and records then produced to the survivor's own partitions must be output while the
// restore is held, that is before the restore ends: the survivor's kept tasks process beside
// the restore (Java's state updater). Order of events, not timing: with a restore inside the
// rebalance (before the state updater) nothing is output until the restore is released, and
// the test fails at its deadline.
func checkFailover(t *testing.T, b kafkatest.Broker, protocol kstreams.GroupProtocol) {
	input, output, appID := kafkatest.Name(t, "in"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "failover")
	createTopics(t, b, 4, input, output)
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	survivor, err := kstreams.New(pebbleCountTopology(t, input, output), failoverConfig(b.Addrs, appID, t.TempDir(), protocol))
	if err != nil {
		t.Fatal(err)
	}
	gate := newRestoreGate()
	survivor.SetGlobalStateRestoreListener(gate)
	startApp(t, survivor)
	waitTasks(t, 2*time.Minute, []*kstreams.KafkaStreams{survivor}, []int{4})

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFailoverChild$", "-test.v")
	cmd.Env = append(os.Environ(), envFailoverChild+"=1",
		envFailoverArgs+"="+strings.Join([]string{strings.Join(b.Addrs, ","), input, output, appID, t.TempDir(), string(protocol)}, "|"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "ERROR") || strings.HasPrefix(l, "STATE") {
				t.Logf("child: %s", l)
			}
		}
	}()
	// Both run two tasks each (the changelogs are empty: the child is caught up, and the
	// assignment balances at once).
	waitTasks(t, 2*time.Minute, []*kstreams.KafkaStreams{survivor}, []int{2})
	kept := ownedPartitions(survivor)
	// The load: every changelog partition gets 3 000 records (keys spread over the
	// partitions), so the moved tasks restore in several batches.
	want := produceKeysN(t, b, input, 12_000, 600, 7)
	out.waitFinal(t, want, 2*time.Minute, survivor.Err)
	if got := ownedPartitions(survivor); fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Fatalf("the survivor's partitions changed from %v to %v before the kill", kept, got)
	}

	// Everything processed is committed: the moved tasks reprocess nothing (at-least-once), so
	// the final counts are exact.
	deadline := time.Now().Add(time.Minute)
	for !committedAll(t, b, appID, input) {
		if time.Now().After(deadline) {
			t.Fatal("the input's committed offsets did not reach its end within a minute")
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}

	gate.armed.Store(true)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	var moved changelog.TopicPartition
	select {
	case moved = <-gate.reached:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the survivor restored nothing within 2 minutes of the kill (error: %v)", survivor.Err())
	}
	for _, p := range kept {
		if moved.Partition == p {
			t.Fatalf("the survivor restores its own partition %d", p)
		}
	}
	// The restore is held after its first batch: records of the survivor's own partitions
	// produced now must come out now.
	keys := produceMarkers(t, b.Addrs, input, kept, "during-restore")
	gate.event("markers produced")
	deadline = time.Now().Add(time.Minute)
	for !out.has(keys) {
		if time.Now().After(deadline) {
			close(gate.release)
			t.Fatalf("records of the kept partitions %v produced during the restore of %v were not output while it restored", kept, moved)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	gate.event("markers output")
	close(gate.release)

	// The restore ends and the moved tasks process: every count is final, the markers too.
	for _, k := range keys {
		want[k] = 1
	}
	more := produceKeysN(t, b, input, 400, 600, 8)
	for k, n := range more {
		want[k] += n
	}
	out.waitFinal(t, want, 2*time.Minute, survivor.Err)
	waitTasks(t, time.Minute, []*kstreams.KafkaStreams{survivor}, []int{4})
	gate.mu.Lock()
	events := strings.Join(gate.events, "; ")
	ends := 0
	outputAt, firstEnd := -1, -1
	for i, e := range gate.events {
		switch {
		case e == "markers output":
			outputAt = i
		case strings.HasPrefix(e, "restore end "):
			ends++
			if firstEnd < 0 {
				firstEnd = i
			}
		}
	}
	gate.mu.Unlock()
	t.Logf("events: %s", events)
	if ends != 2 || outputAt < 0 || firstEnd < outputAt {
		t.Fatalf("want the kept partitions' records output before either moved task's restore ended (and two restores): %s", events)
	}
}

// produceKeysN writes n records with keys from a vocabulary of vocab and returns their counts.
func produceKeysN(t *testing.T, b kafkatest.Broker, topic string, n, vocab int, seed int) map[string]int64 {
	t.Helper()
	p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	counts := map[string]int64{}
	msgs := make([]*sarama.ProducerMessage, 0, n)
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("key-%04d", (i*7919+seed*31)%vocab)
		counts[k]++
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(k), Value: sarama.StringEncoder("x")})
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	return counts
}

func TestIntegrationFailoverKeepsProcessing(t *testing.T) {
	checkFailover(t, kafkatest.Real(t), kstreams.GroupProtocolClassic)
}

// The streams protocol's variant passes too (checkFailover with kstreams.GroupProtocolStreams)
// but takes a minute: the broker expires a killed streams group member only after
// group.streams.session.timeout.ms (45 s, which group.streams.min.session.timeout.ms keeps any
// group from lowering on the test broker).
