package integration_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// The suppress buffer's changelog across SIGKILLs: windows held in a
// suppress(untilWindowCloses) buffer when the application is killed are emitted after the
// restart, each exactly once, under exactly-once.

const envSuppressChild = "KSTREAMS_SUPPRESS_CHILD" // bootstrap|input|output|appID|stateDir

// Window size 1 s and grace 10 s: about ten windows per word sit in the buffer at any time.
const (
	suppressWindow = time.Second
	suppressGrace  = 10 * time.Second
)

// suppressTopology counts words per 1 s window and emits each window's final count once it
// closes, as "word@windowStart" -> count.
func suppressTopology(t testing.TB, input, output string) *processor.Topology {
	t.Helper()
	S := serde.String()
	b := kstream.NewStreamsBuilder()
	kstream.WindowedBy(kstream.Stream(b, input, kstream.ConsumedWith(S, S)).GroupByKey(),
		kstream.TimeWindowsOfSizeAndGrace(suppressWindow, suppressGrace)).
		Count().
		Suppress(kstream.SuppressedUntilWindowCloses(kstream.BufferConfigUnbounded())).
		ToStream().
		SelectKey(func(wk kstream.Windowed[string], _ int64) string {
			return fmt.Sprintf("%s@%d", wk.Key, wk.Window.Start)
		}).
		To(output, kstream.ProducedWith(S, serde.Long()))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// TestHelperSuppressChild is not a test: run by checkSuppressCrash as a child process, it runs
// the suppress topology under exactly-once until it is killed.
func TestHelperSuppressChild(t *testing.T) { runChildApp(t, envSuppressChild, suppressTopology) }

// runChildApp runs, in a crash test's child process, topology on the arguments in env
// (bootstrap|input|output|appID|stateDir) under exactly-once until the process is killed,
// printing "STATE <state>" at each change and "ERROR <error>" before exiting on one. The test
// skips when env is unset (the test binary runs as the parent).
func runChildApp(t *testing.T, env string, topology func(t testing.TB, input, output string) *processor.Topology) {
	if os.Getenv(env) == "" {
		t.Skip("helper process of a crash test")
	}
	a := strings.Split(os.Getenv(env), "|")
	app, err := kstreams.New(topology(t, a[1], a[2]), kstreams.Config{
		ApplicationID: a[3], BootstrapServers: strings.Split(a[0], ","), ProcessingGuarantee: kstreams.ExactlyOnceV2,
		CommitInterval: 100 * time.Millisecond, StateDir: a[4], Sarama: fastSarama, Consumer: fastConsumer,
	})
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

// produceSuppressed writes, to each input partition, words w<p>-0..w<p>-2 in the 1 s windows
// first..last-1 (3 records per word and window) and adds each window's count to want.
func produceSuppressed(t testing.TB, b kafkatest.Broker, topic string, base int64, partitions int32, first, last int, want map[string]int64) {
	t.Helper()
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var msgs []*sarama.ProducerMessage
	for w := first; w < last; w++ {
		start := base + int64(w)*suppressWindow.Milliseconds()
		for part := range partitions {
			for i := range 3 {
				for word := range 3 {
					k := fmt.Sprintf("w%d-%d", part, word)
					msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: part, Key: sarama.StringEncoder(k),
						Value: sarama.StringEncoder("x"), Timestamp: time.UnixMilli(start + int64(i)*300)})
					if want != nil {
						want[fmt.Sprintf("%s@%d", k, start)]++
					}
				}
			}
		}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
}

// committedAll reports whether the group's committed offsets of topic are its end offsets.
func committedAll(t testing.TB, b kafkatest.Broker, appID, topic string) bool {
	t.Helper()
	for _, o := range groupOffsets(t, b, appID, topic) {
		if o.committed != o.end {
			return false
		}
	}
	return true
}

// partitionOffsets are a partition's committed offset (-1 for none) and end offset.
type partitionOffsets struct{ committed, end int64 }

// groupOffsets returns, per partition of topic, the group's committed offset and the end offset.
func groupOffsets(t testing.TB, b kafkatest.Broker, appID, topic string) map[int32]partitionOffsets {
	t.Helper()
	client, err := sarama.NewClient(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	om, err := sarama.NewOffsetManagerFromClient(appID, client)
	if err != nil {
		t.Fatal(err)
	}
	defer om.Close()
	ps, err := client.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int32]partitionOffsets, len(ps))
	for _, p := range ps {
		end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		pom, err := om.ManagePartition(topic, p)
		if err != nil {
			t.Fatal(err)
		}
		committed, _ := pom.NextOffset()
		pom.AsyncClose()
		out[p] = partitionOffsets{committed: committed, end: end}
	}
	return out
}

// runKilledChild runs the test binary's helper test as a child process (env=args), logs its
// ERROR and STATE lines, and SIGKILLs it once until() holds (polled; 3 minutes at most).
func runKilledChild(t *testing.T, helper, env, args string, k int, until func() bool, what string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.v")
	cmd.Env = append(os.Environ(), env+"="+args)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "ERROR") || strings.HasPrefix(l, "STATE") {
				t.Logf("child %d: %s", k, l)
			}
		}
	}()
	deadline := time.Now().Add(3 * time.Minute)
	for !until() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			cmd.Wait()
			t.Fatalf("child %d: not %s in time", k, what)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	_ = cmd.Wait()
}

func checkSuppressCrash(t *testing.T, b kafkatest.Broker) {
	input, output, appID := kafkatest.Name(t, "events"), kafkatest.Name(t, "finals"), kafkatest.Name(t, "suppress")
	stateDir := t.TempDir()
	const partitions = 2
	createTopics(t, b, partitions, input)
	createTopics(t, b, 1, output) // one partition: a duplicate would come before the last window's result
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	want := map[string]int64{}
	out := readOutput(t, b, output, sarama.ReadCommitted)
	emitted := func() int { return out.total() }
	childArgs := strings.Join([]string{strings.Join(b.Addrs, ","), input, output, appID, stateDir}, "|")

	// Child 1 processes windows 0..29 and is killed once every input record is committed: the
	// windows still open at stream time (window 29 + 10 s of grace) sit in the buffer and in its
	// changelog only, since nothing will be reprocessed.
	produceSuppressed(t, b, input, base, partitions, 0, 30, want)
	closedBefore := 2 * 3 * (30 - 11) // per partition and word, windows 0..18 closed by window 29
	runKilledChild(t, "TestHelperSuppressChild", envSuppressChild, childArgs, 1, func() bool { return emitted() >= closedBefore && committedAll(t, b, appID, input) }, "fully committed")
	buffered := len(want) - emitted()
	t.Logf("child 1 killed with %d finals emitted and %d windows in the buffer", emitted(), buffered)
	if buffered <= 0 {
		t.Fatalf("no window in the buffer at the kill (%d finals of %d)", emitted(), len(want))
	}

	// Child 2 processes windows 30..59 and is killed at any point once some results came out.
	produceSuppressed(t, b, input, base, partitions, 30, 60, want)
	mark := emitted()
	runKilledChild(t, "TestHelperSuppressChild", envSuppressChild, childArgs, 2, func() bool { return emitted() > mark+20 }, "emitting")
	t.Logf("child 2 killed with %d finals emitted", emitted())

	// A final run, and records 100 s later (their own windows stay open) close every window.
	app, err := kstreams.New(suppressTopology(t, input, output), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		CommitInterval: 100 * time.Millisecond, StateDir: stateDir, Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := app.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	produceSuppressed(t, b, input, base, partitions, 160, 161, nil)
	out.waitFinal(t, want, 3*time.Minute, app.Err)
	checkEachOnce(t, out, want)
	t.Logf("%d windows, each emitted once", len(want))
}

func TestIntegrationSuppressCrashExactlyOnce(t *testing.T) { checkSuppressCrash(t, kafkatest.Real(t)) }

func TestEmbeddedSuppressCrashExactlyOnce(t *testing.T) {
	t.Parallel()
	checkSuppressCrash(t, kafkatest.Embedded(t))
}
