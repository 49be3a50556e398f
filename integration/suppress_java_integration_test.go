package integration_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// A Java application's suppress buffer restores into ours and back: the Java
// side is ChangelogApp's "suppress" mode (conformance/java/.../changelog/ChangelogApp.java), the
// same topology as suppressJavaTopology. One side processes windows 0..29 and closes with
// windows in its buffer; the other restores the buffer from the changelog and, given records
// 130 s later, emits every remaining window. Every window comes out once, with its count.

// suppressJavaTopology is ChangelogApp.suppressTopology in Go (same node and store names).
func suppressJavaTopology(t testing.TB, input, output string) *processor.Topology {
	t.Helper()
	S := serde.String()
	b := kstream.NewStreamsBuilder()
	kstream.WindowedBy(kstream.Stream(b, input, kstream.ConsumedWith(S, S)).Peek(func(string, string) {}).GroupByKey(),
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

func runJavaSuppressApp(t *testing.T, b kafkatest.Broker, appID, input, output string, expect int) {
	t.Helper()
	j := conformance.JavaFromEnv(t)
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-cp", j.Classpath, "io.kstreams.conformance.changelog.ChangelogApp", "suppress",
		"--bootstrap", b.Addrs[0], "--app-id", appID, "--input", input, "--output", output,
		"--state-dir", t.TempDir(), "--expect", strconv.Itoa(expect))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ChangelogApp suppress: %v\n%s", err, out)
	}
}

func startSuppressGo(t *testing.T, b kafkatest.Broker, appID, input, output string) *kstreams.KafkaStreams {
	t.Helper()
	app, err := kstreams.New(suppressJavaTopology(t, input, output), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 100 * time.Millisecond, StateDir: t.TempDir(),
		Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return app
}

func checkEachOnce(t *testing.T, out *outputReader, want map[string]int64) {
	t.Helper()
	out.mu.Lock()
	defer out.mu.Unlock()
	for k, seq := range out.seqs {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected final %s = %v", k, seq)
		} else if len(seq) != 1 {
			t.Errorf("window %s emitted %d times: %v (want once, %d)", k, len(seq), seq, want[k])
		}
	}
}

func TestIntegrationSuppressBufferJavaToGo(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	input, output, appID := kafkatest.Name(t, "events"), kafkatest.Name(t, "finals"), kafkatest.Name(t, "suppress-j2g")
	createTopics(t, b, 2, input)
	createTopics(t, b, 1, output)
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	want := map[string]int64{}
	produceSuppressed(t, b, input, base, 2, 0, 30, want)
	out := readOutput(t, b, output, sarama.ReadCommitted)
	runJavaSuppressApp(t, b, appID, input, output, 2*30*9)
	javaFinals := out.total()
	if javaFinals == 0 || javaFinals >= len(want) {
		t.Fatalf("Java emitted %d finals of %d: the test needs some windows left in the buffer", javaFinals, len(want))
	}
	app := startSuppressGo(t, b, appID, input, output)
	produceSuppressed(t, b, input, base, 2, 160, 161, nil)
	out.waitFinal(t, want, 3*time.Minute, app.Err)
	closeApp(t, app)
	checkEachOnce(t, out, want)
	t.Logf("Java emitted %d finals, Go restored Java's buffer and emitted the other %d", javaFinals, len(want)-javaFinals)
}

func TestIntegrationSuppressBufferGoToJava(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	input, output, appID := kafkatest.Name(t, "events"), kafkatest.Name(t, "finals"), kafkatest.Name(t, "suppress-g2j")
	createTopics(t, b, 2, input)
	createTopics(t, b, 1, output)
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	want := map[string]int64{}
	produceSuppressed(t, b, input, base, 2, 0, 30, want)
	out := readOutput(t, b, output, sarama.ReadCommitted)
	app := startSuppressGo(t, b, appID, input, output)
	deadline := time.Now().Add(3 * time.Minute)
	for !committedAll(t, b, appID, input) {
		if err := app.Err(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the Go application did not commit its input in time")
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
	closeApp(t, app)
	goFinals := out.total()
	if goFinals == 0 || goFinals >= len(want) {
		t.Fatalf("Go emitted %d finals of %d: the test needs some windows left in the buffer", goFinals, len(want))
	}
	produceSuppressed(t, b, input, base, 2, 160, 161, nil)
	runJavaSuppressApp(t, b, appID, input, output, 2*9)
	out.waitFinal(t, want, time.Minute, func() error { return nil })
	checkEachOnce(t, out, want)
	t.Logf("Go emitted %d finals, Java restored Go's buffer and emitted the other %d", goFinals, len(want)-goFinals)
}
