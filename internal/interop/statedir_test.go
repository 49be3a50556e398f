package interop

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/conformance"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

const sharedStateApp = "io.kstreams.conformance.statedir.SharedStateApp"

// appTopics names one test application and its topics.
type appTopics struct {
	app, input, output, windowed string
}

func newAppTopics(t *testing.T, b kafkatest.Broker, prefix string) appTopics {
	t.Helper()
	a := appTopics{app: kafkatest.Name(t, prefix)}
	a.input, a.output, a.windowed = a.app+"-lines", a.app+"-counts", a.app+"-windowed"
	kafkatest.CreateTopics(t, b, 2, nil, a.input, a.output, a.windowed)
	return a
}

// splitWords splits a line as the Java app does (lower case, split on \W+) for the lines
// the tests write (lower-case words separated by single spaces).
func splitWords(line string) []string { return strings.Fields(strings.ToLower(line)) }

// goTopology is SharedStateApp's topology in Go: the same operators in the same order, so
// the same processor, store and topic names (the test checks describe() is identical).
func goTopology(t *testing.T, a appTopics) *processor.Topology {
	t.Helper()
	S := serde.String()
	b := kstream.NewStreamsBuilder()
	words := kstream.Stream(b, a.input, kstream.ConsumedWith(S, S)).FlatMapValues(splitWords)
	words.GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(S, S)).
		Count(kstream.MaterializedAs[string, int64]("counts-store")).
		ToStream().To(a.output, kstream.ProducedWith(S, serde.Long()))
	kstream.WindowedBy(words.GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(S, S)),
		kstream.TimeWindowsOfSizeAndGrace(time.Minute, 24*time.Hour)).
		Count(kstream.MaterializedAs[string, int64]("windowed-counts")).
		ToStream().
		SelectKey(func(wk kstream.Windowed[string], _ int64) string {
			return fmt.Sprintf("%s@%d", wk.Key, wk.Window.Start)
		}).
		To(a.windowed, kstream.ProducedWith(S, serde.Long()))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// expected holds the counts an independent count of the input gives.
type expected struct {
	words    map[string]int64
	windowed map[string]int64
	lines    int
	base     int64 // timestamp of the first line, ms
}

func newExpected() *expected {
	// Timestamps from two hours ago: the window store's changelog keeps records for its
	// retention (1 day + 1 min) + 24 h.
	return &expected{words: map[string]int64{}, windowed: map[string]int64{},
		base: time.Now().Add(-2*time.Hour).UnixMilli() / 60_000 * 60_000}
}

// produce writes n more lines of 1-4 words over 60 words, 250 ms of event time apart, and
// adds them to the expected counts.
func (e *expected) produce(t *testing.T, b kafkatest.Broker, topic string, n int) {
	t.Helper()
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewHashPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := rand.New(rand.NewPCG(uint64(e.lines), 14))
	var batch []*sarama.ProducerMessage
	for i := 0; i < n; i++ {
		ts := e.base + int64(e.lines)*250
		start := ts / 60_000 * 60_000
		var ws []string
		for range 1 + r.IntN(4) {
			w := fmt.Sprintf("w%02d", r.IntN(60))
			ws = append(ws, w)
			e.words[w]++
			e.windowed[fmt.Sprintf("%s@%d", w, start)]++
		}
		batch = append(batch, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprint(e.lines)),
			Value: sarama.StringEncoder(strings.Join(ws, " ")), Timestamp: time.UnixMilli(ts)})
		e.lines++
		if len(batch) == 500 || i == n-1 {
			if err := p.SendMessages(batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
}

// latest reads topics from the beginning and keeps the last value of every key.
type latest struct {
	mu   sync.Mutex
	last map[string]map[string]int64 // topic -> key -> last value
	stop func()
}

func readLatest(t *testing.T, b kafkatest.Broker, iso sarama.IsolationLevel, topics ...string) *latest {
	t.Helper()
	return readLatestFrom(t, b, iso, nil, topics...)
}

// readLatestFrom is readLatest starting at the offsets of from (topic -> partition -> offset;
// the beginning where it has none).
func readLatestFrom(t *testing.T, b kafkatest.Broker, iso sarama.IsolationLevel, from map[string]map[int32]int64, topics ...string) *latest {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Consumer.IsolationLevel = iso
	c, err := sarama.NewConsumer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := &latest{last: map[string]map[string]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, topic := range topics {
		l.last[topic] = map[string]int64{}
		ps, err := c.Partitions(topic)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			start := sarama.OffsetOldest
			if off, ok := from[topic][p]; ok {
				start = off
			}
			pc, err := c.ConsumePartition(topic, p, start)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer pc.Close()
				for {
					select {
					case m := <-pc.Messages():
						l.mu.Lock()
						l.last[topic][string(m.Key)] = int64(binary.BigEndian.Uint64(m.Value))
						l.mu.Unlock()
					case <-ctx.Done():
						return
					}
				}
			}()
		}
	}
	l.stop = func() { cancel(); wg.Wait(); c.Close() }
	t.Cleanup(l.stop)
	return l
}

// diff returns the first difference between the last values of topic and want, or "".
func (l *latest) diff(topic string, want map[string]int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.last[topic]
	for k, n := range want {
		if got[k] != n {
			return fmt.Sprintf("%s: key %s: last %d, want %d", topic, k, got[k], n)
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			return fmt.Sprintf("%s: unexpected key %s (last %d)", topic, k, n)
		}
	}
	return ""
}

// waitExact polls until both outputs' last values equal the expected counts; alive reports a
// failure of the running instance.
func (l *latest) waitExact(t *testing.T, a appTopics, e *expected, who string, alive func() error) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		d := l.diff(a.output, e.words)
		if d == "" {
			d = l.diff(a.windowed, e.windowed)
		}
		if d == "" {
			return
		}
		if err := alive(); err != nil {
			t.Fatalf("%s failed: %v", who, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: counts not exact after %d lines within 3 min: %s", who, e.lines, d)
		}
		time.Sleep(100 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// javaApp is a running SharedStateApp.
type javaApp struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	err   error // the process's exit, once done is closed
}

func startJava(t *testing.T, b kafkatest.Broker, a appTopics, stateDir string, guarantee kstreams.ProcessingGuarantee, extra ...string) *javaApp {
	t.Helper()
	j := conformance.JavaFromEnv(t)
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	args := append([]string{"-cp", j.Classpath, sharedStateApp, "run", "--bootstrap", b.Addrs[0], "--app-id", a.app,
		"--input", a.input, "--output", a.output, "--windowed", a.windowed, "--state-dir", stateDir,
		"--guarantee", string(guarantee)}, extra...)
	cmd := exec.Command(java, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	ja := &javaApp{t: t, cmd: cmd, stdin: stdin, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			ja.mu.Lock()
			ja.lines = append(ja.lines, sc.Text())
			ja.mu.Unlock()
		}
		ja.err = cmd.Wait()
		close(ja.done)
	}()
	t.Cleanup(func() {
		select {
		case <-ja.done:
		default:
			_ = cmd.Process.Kill()
			<-ja.done
		}
	})
	return ja
}

// output returns the Java app's output so far.
func (j *javaApp) output() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.lines, "\n")
}

// line returns the first output line starting with prefix, or "".
func (j *javaApp) line(prefix string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, l := range j.lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// alive returns an error once the app exited or printed a failure.
func (j *javaApp) alive() error {
	select {
	case <-j.done:
		return fmt.Errorf("java exited (%v):\n%s", j.err, j.output())
	default:
	}
	if l := j.line("failed: "); l != "" {
		return fmt.Errorf("java: %s\n%s", l, j.output())
	}
	return nil
}

// waitLine waits until the app prints a line starting with prefix (or exits).
func (j *javaApp) waitLine(prefix string, timeout time.Duration) string {
	j.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if l := j.line(prefix); l != "" {
			return l
		}
		select {
		case <-j.done:
			if l := j.line(prefix); l != "" {
				return l
			}
			j.t.Fatalf("java exited (%v) before printing %q:\n%s", j.err, prefix, j.output())
		default:
		}
		if time.Now().After(deadline) {
			j.t.Fatalf("java printed no %q within %v:\n%s", prefix, timeout, j.output())
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// stop closes the app's standard input (it closes, leaving the group) and waits for its exit.
func (j *javaApp) stop() {
	j.t.Helper()
	_ = j.stdin.Close()
	select {
	case <-j.done:
	case <-time.After(90 * time.Second):
		_ = j.cmd.Process.Kill()
		<-j.done
		j.t.Fatalf("java did not close within 90 s:\n%s", j.output())
	}
	if j.err != nil {
		j.t.Fatalf("java exit: %v\n%s", j.err, j.output())
	}
}

// restored sums the "restored STORE PARTITION N" lines of store.
func (j *javaApp) restored(store string) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	var n int64
	for _, l := range j.lines {
		var s string
		var p int
		var k int64
		if _, err := fmt.Sscanf(l, "restored %s %d %d", &s, &p, &k); err == nil && s == store {
			n += k
		}
	}
	return n
}

// goRestored counts the records the Go instance restored, by store.
type goRestored struct {
	mu sync.Mutex
	n  map[string]int64
}

func (g *goRestored) OnRestoreStart(changelog.TopicPartition, string, int64, int64)  {}
func (g *goRestored) OnBatchRestored(changelog.TopicPartition, string, int64, int64) {}
func (g *goRestored) OnRestoreEnd(_ changelog.TopicPartition, store string, total int64) {
	g.mu.Lock()
	g.n[store] += total
	g.mu.Unlock()
}

func goConfig(b kafkatest.Broker, a appTopics, stateDir string, guarantee kstreams.ProcessingGuarantee) kstreams.Config {
	return kstreams.Config{ApplicationID: a.app, BootstrapServers: b.Addrs, StateDir: stateDir,
		ProcessingGuarantee: guarantee, CommitInterval: 200 * time.Millisecond, ReplicationFactor: 1,
		Consumer: kstreams.ConsumerConfig{SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond,
			MaxPollInterval: 20 * time.Second, FetchMaxWait: 50 * time.Millisecond}}
}

// runGo runs a Go instance on stateDir until the outputs hold the expected counts, closes it
// and returns what it restored, by store.
func runGo(t *testing.T, b kafkatest.Broker, a appTopics, stateDir string, guarantee kstreams.ProcessingGuarantee, out *latest, e *expected) map[string]int64 {
	t.Helper()
	app, err := kstreams.New(goTopology(t, a), goConfig(b, a, stateDir, guarantee))
	if err != nil {
		t.Fatal(err)
	}
	rl := &goRestored{n: map[string]int64{}}
	app.SetGlobalStateRestoreListener(rl)
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	out.waitExact(t, a, e, "go", app.Err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := app.Close(ctx); err != nil {
		t.Fatalf("go close: %v", err)
	}
	if err := app.Err(); err != nil {
		t.Fatalf("go: %v", err)
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.n
}

// runJava runs the Java app on stateDir until the outputs hold the expected counts and stops
// it; it returns the records Java restored into the two stores.
func runJava(t *testing.T, b kafkatest.Broker, a appTopics, stateDir string, guarantee kstreams.ProcessingGuarantee, out *latest, e *expected) map[string]int64 {
	t.Helper()
	j := startJava(t, b, a, stateDir, guarantee)
	out.waitExact(t, a, e, "java", j.alive)
	j.stop()
	return map[string]int64{"counts-store": j.restored("counts-store"), "windowed-counts": j.restored("windowed-counts")}
}

// The Java app's topology and ours are the same, describe() text included, so both name the
// same internal topics, stores and task directories.
func TestIntegrationSharedStateDirSameTopology(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	a := newAppTopics(t, b, "sdtopo")
	desc := filepath.Join(t.TempDir(), "describe.txt")
	// A state directory held by a Go instance: the Java app writes describe() and stops at
	// the constructor, without running.
	dir := t.TempDir()
	holder, err := kstreams.New(goTopology(t, a), goConfig(b, a, dir, kstreams.AtLeastOnce))
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	j := startJava(t, b, a, dir, kstreams.AtLeastOnce, "--describe", desc)
	j.waitLine("locked: ", time.Minute)
	want, err := os.ReadFile(desc)
	if err != nil {
		t.Fatal(err)
	}
	if got := goTopology(t, a).Describe().String(); got != string(want) {
		t.Fatalf("Go topology differs from the Java app's\n got:\n%s\nwant:\n%s", got, want)
	}
}

// Go -> Java -> Go and Java -> Go -> Java on one shared state directory, under at-least-once
// and exactly-once v2: each instance runs until a word count and a windowed word count are
// exact for all input so far (more input before each start), then closes cleanly, and the
// next one starts on the same directory. Neither side may take the other's checkpoint for
// its own stores (Java once took ours and restored nothing into its empty RocksDB stores);
// the counts stay exact through every handover.
func TestIntegrationSharedStateDir(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	for _, g := range []kstreams.ProcessingGuarantee{kstreams.AtLeastOnce, kstreams.ExactlyOnceV2} {
		for _, order := range []string{"go-java-go", "java-go-java"} {
			t.Run(string(g)+"/"+order, func(t *testing.T) {
				a := newAppTopics(t, b, "sd")
				dir := t.TempDir()
				iso := sarama.ReadUncommitted
				if g == kstreams.ExactlyOnceV2 {
					iso = sarama.ReadCommitted
				}
				out := readLatest(t, b, iso, a.output, a.windowed)
				e := newExpected()
				for i, side := range strings.Split(order, "-") {
					e.produce(t, b, a.input, 1500)
					var restored map[string]int64
					if side == "go" {
						restored = runGo(t, b, a, dir, g, out, e)
					} else {
						restored = runJava(t, b, a, dir, g, out, e)
					}
					t.Logf("step %d (%s): exact after %d lines; restored %v", i+1, side, e.lines, restored)
					if i > 0 && side == "java" && (restored["counts-store"] == 0 || restored["windowed-counts"] == 0) {
						// The Go instance before it left data in the changelogs that Java's own
						// stores have not got: Java must restore it, not trust our offsets.
						t.Errorf("step %d: java restored %v, want records of both stores", i+1, restored)
					}
				}
			})
		}
	}
}

// A Go and a Java instance started on the same state directory at once: the second refuses to
// start, with an error naming the directory, in both orders; once the first is gone, the
// other starts.
func TestIntegrationSharedStateDirLocked(t *testing.T) {
	b := kafkatest.Real(t)
	conformance.JavaFromEnv(t)
	a := newAppTopics(t, b, "sdlock")
	dir := t.TempDir()
	appDir := filepath.Join(dir, a.app)

	t.Run("go-then-java", func(t *testing.T) {
		g, err := kstreams.New(goTopology(t, a), goConfig(b, a, dir, kstreams.AtLeastOnce))
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		j := startJava(t, b, a, dir, kstreams.AtLeastOnce)
		l := j.waitLine("locked: ", 2*time.Minute)
		if !strings.Contains(l, "multiple instances of Kafka Streams are running in the same state directory") ||
			!strings.Contains(l, "["+appDir+"]") {
			t.Errorf("Java on a state directory a Go instance holds: %q, want Java's lock error naming [%s]", l, appDir)
		}
		<-j.done
		var ee *exec.ExitError
		if !errors.As(j.err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("java exit %v, want status 3 (constructor failed)\n%s", j.err, j.output())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := g.Close(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("java-then-go", func(t *testing.T) {
		j := startJava(t, b, a, dir, kstreams.AtLeastOnce)
		j.waitLine("state RUNNING", 2*time.Minute)
		_, err := kstreams.New(goTopology(t, a), goConfig(b, a, dir, kstreams.AtLeastOnce))
		var sde *kstreams.StateDirError
		if !errors.Is(err, kstreams.ErrStateDirLocked) || !errors.As(err, &sde) || sde.Path != appDir ||
			!strings.Contains(err.Error(), appDir) {
			t.Errorf("Go on a state directory a Java instance holds: %v, want ErrStateDirLocked naming %s", err, appDir)
		}
		j.stop()
		g, err := kstreams.New(goTopology(t, a), goConfig(b, a, dir, kstreams.AtLeastOnce))
		if err != nil {
			t.Fatalf("Go after the Java instance closed: %v", err)
		}
		g.Close(context.Background())
	})
}
