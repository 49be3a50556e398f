package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/wc"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

const javaWordCount = "io.kstreams.conformance.migration.WordCountApp"

// windowSizeMs is the size of the windowed count's tumbling windows (the Java side's
// TimeWindows.ofSizeAndGrace(10 s, 1 h)): a run of a few minutes spans many windows, and every
// window's count is checked.
const windowSizeMs = 10_000

// Settings both sides share: one standby replica, a short commit interval (the output of a
// cached count appears at commits) and a short session timeout.
const (
	commitIntervalMs = 500
	sessionTimeoutMs = 6000
	heartbeatMs      = 500
)

// TestIntegrationJavaRollingMigration runs the word count, with a windowed count of the same
// words beside it (10 s tumbling windows, so the tasks carry a window store and its
// changelog too), on two Java instances, then
// replaces them one at a time by Go instances, then one Go instance by a Java one again, while
// the input keeps flowing; every step waits until the group has processed everything produced
// before it (no stalled partition anywhere in the mixed group). The final counts must equal an
// independent count of the input (the windowed ones too, window by window, from the record
// timestamps the producer set); under exactly-once every word's updates must also be
// strictly increasing (no update processed twice). Along the way a Java leader assigns a Go
// member, a Go leader assigns a Go member, and a Go leader assigns a Java member.
func TestIntegrationJavaRollingMigration(t *testing.T) {
	cp := os.Getenv("KSTREAMS_CONFORMANCE_CP")
	if cp == "" {
		t.Skip("KSTREAMS_CONFORMANCE_CP is not set: the Java side of the mixed group needs the conformance/java harness " +
			"(mvn -B -q -f conformance/java/pom.xml package; make test sets it)")
	}
	b := kafkatest.Real(t)
	for _, g := range []kstreams.ProcessingGuarantee{kstreams.AtLeastOnce, kstreams.ExactlyOnceV2} {
		t.Run(string(g), func(t *testing.T) { rollingMigration(t, b, cp, g, kstreams.GroupProtocolClassic) })
	}
}

// TestIntegrationJavaRollingMigrationStreamsProtocol is TestIntegrationJavaRollingMigration
// with every instance, Java and Go, on group.protocol=streams (KIP-1071): the group
// coordinator assigns the tasks (so no member leads), and the group's standby replica is the
// group config streams.num.standby.replicas=1 (num.standby.replicas is the classic
// protocol's).
func TestIntegrationJavaRollingMigrationStreamsProtocol(t *testing.T) {
	cp := os.Getenv("KSTREAMS_CONFORMANCE_CP")
	if cp == "" {
		t.Skip("KSTREAMS_CONFORMANCE_CP is not set: the Java side of the mixed group needs the conformance/java harness " +
			"(mvn -B -q -f conformance/java/pom.xml package; make test sets it)")
	}
	b := kafkatest.Real(t)
	for _, g := range []kstreams.ProcessingGuarantee{kstreams.AtLeastOnce, kstreams.ExactlyOnceV2} {
		t.Run(string(g), func(t *testing.T) { rollingMigration(t, b, cp, g, kstreams.GroupProtocolStreams) })
	}
}

// groupResource is the GROUP config resource type of IncrementalAlterConfigs (KIP-848), which
// sarama does not name.
const groupResource sarama.ConfigResourceType = 32

// setGroupConfigs sets group configs (streams.num.standby.replicas, ...) of group.
func setGroupConfigs(t *testing.T, b kafkatest.Broker, groupID string, configs map[string]string) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	entries := map[string]sarama.IncrementalAlterConfigsEntry{}
	for k, v := range configs {
		entries[k] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}
	}
	if err := admin.IncrementalAlterConfig(groupResource, groupID, entries, false); err != nil {
		t.Fatalf("group %s: set configs %v: %v", groupID, configs, err)
	}
}

func rollingMigration(t *testing.T, b kafkatest.Broker, cp string, guarantee kstreams.ProcessingGuarantee, protocol kstreams.GroupProtocol) {
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "wc-mixed")
	windowed := kafkatest.Name(t, "windowed-counts")
	kafkatest.CreateTopics(t, b, 4, nil, input, output, windowed)
	streams := protocol == kstreams.GroupProtocolStreams
	if streams {
		setGroupConfigs(t, b, appID, map[string]string{"streams.num.standby.replicas": "1"})
	}
	p := startProducer(t, b, input)
	out := readOutput(t, b, output, guarantee == kstreams.ExactlyOnceV2)
	wout := readOutput(t, b, windowed, guarantee == kstreams.ExactlyOnceV2)
	env := &mixed{t: t, b: b, cp: cp, appID: appID, input: input, output: output, windowed: windowed, guarantee: guarantee,
		protocol: protocol}

	j1 := env.startJava("java-1")
	j2 := env.startJava("java-2")
	j1.waitRunning(t)
	j2.waitRunning(t)
	want, err := env.topology()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(j1.describe()); got != strings.TrimSpace(want.Describe().String()) {
		t.Fatalf("Java's and Go's word count topologies differ:\njava:\n%s\ngo:\n%s", got, want.Describe().String())
	}
	env.waitCaughtUp(out, p, "two Java instances")

	// Java -> Go, one instance at a time.
	j1.stop(t)
	g1 := env.startGo("go-1")
	env.waitTasks(g1)
	env.waitCaughtUp(out, p, env.pair("java-2", "go-1"))
	// Four stateless tasks (the source sub-topology) and eight stateful ones (the count's and
	// the windowed count's), one standby each for the stateful ones: both
	// sides hold actives, and standbys of the other's stateful tasks.
	j2.waitTasks(t, "java-2 with go-1")
	env.waitStandbys(g1)
	if n := g1.leaderRounds(); n != 0 && !streams {
		t.Errorf("go-1 led %d rebalances while java-2, the older member, was in the group", n)
	}
	j2.stop(t)
	g2 := env.startGo("go-2")
	env.waitTasks(g2)
	env.waitTasks(g1)
	env.waitCaughtUp(out, p, "two Go instances")
	env.waitStandbys(g2)

	// One Go instance goes back to Java; the remaining Go instance leads.
	g1.stop(t)
	j3 := env.startJava("java-3")
	j3.waitRunning(t)
	env.waitTasks(g2)
	env.waitCaughtUp(out, p, env.pair("go-2", "java-3"))
	j3.waitTasks(t, "java-3 with go-2")
	env.waitStandbys(g2)
	if n := g2.leaderRounds(); n == 0 && !streams {
		t.Errorf("go-2 never led the group, though it was its oldest member once go-1 left")
	}

	total := p.stop(t)
	counts, wcounts := p.counts(), p.windowedCounts()
	out.waitFinal(t, counts, 2*time.Minute, env.alive(g2, j3))
	wout.waitFinal(t, wcounts, 2*time.Minute, env.alive(g2, j3))
	t.Logf("%s: %d lines, %d words, %d output records, %d word windows, %d windowed output records; final counts exact",
		guarantee, total, len(counts), out.records(), len(wcounts), wout.records())
	if guarantee == kstreams.ExactlyOnceV2 {
		out.checkIncreasing(t)
		wout.checkIncreasing(t)
	}
	for _, g := range []*goInstance{g1, g2} {
		if n := g.errors(); n != "" {
			t.Errorf("%s logged errors:\n%s", g.name, n)
		}
	}
	g2.stop(t)
	j3.stop(t)
}

type mixed struct {
	t                    *testing.T
	b                    kafkatest.Broker
	cp                   string
	appID, input, output string
	windowed             string // the windowed count's output topic
	guarantee            kstreams.ProcessingGuarantee
	// protocol is group.protocol of every instance.
	protocol kstreams.GroupProtocol
	javas    []*javaInstance
	gos      []*goInstance
}

// pair names a step with two instances: on the classic protocol the older one leads.
func (m *mixed) pair(older, younger string) string {
	if m.protocol == kstreams.GroupProtocolStreams {
		return older + " and " + younger + " (the coordinator assigns)"
	}
	return older + " leading, " + younger + " following"
}

// alive returns a check failing when one of the running instances failed.
func (m *mixed) alive(apps ...any) func() error {
	return func() error {
		for _, a := range apps {
			switch a := a.(type) {
			case *goInstance:
				if err := a.app.Err(); err != nil {
					return fmt.Errorf("%s: %w", a.name, err)
				}
			case *javaInstance:
				if err := a.failed(); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// waitCaughtUp waits until the output reflects every line produced before the call: all the
// group's tasks are being processed.
func (m *mixed) waitCaughtUp(out *outputReader, p *producer, step string) {
	m.t.Helper()
	snapshot := p.counts()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		behind := out.behind(snapshot)
		if behind == "" {
			m.t.Logf("%s: caught up with %d words", step, len(snapshot))
			return
		}
		for _, j := range m.javas {
			if j.stopped {
				continue
			}
			if err := j.failed(); err != nil {
				m.t.Fatalf("%s: %v", step, err)
			}
		}
		for _, g := range m.gos {
			if err := g.app.Err(); err != nil && !g.stopped {
				m.t.Fatalf("%s: %s failed: %v", step, g.name, err)
			}
		}
		if time.Now().After(deadline) {
			for _, g := range m.gos {
				if !g.stopped {
					m.t.Logf("%s: %s %v", g.name, g.app.State(), g.app.MetadataForLocalThreads())
				}
			}
			m.t.Fatalf("%s: the output did not catch up with the input within 2 min: %s", step, behind)
		}
		time.Sleep(100 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// waitTasks waits until the Go instance runs with at least one active task.
func (m *mixed) waitTasks(g *goInstance) {
	m.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if err := g.app.Err(); err != nil {
			m.t.Fatalf("%s failed: %v", g.name, err)
		}
		n := 0
		for _, th := range g.app.MetadataForLocalThreads() {
			n += len(th.ActiveTasks)
		}
		if g.app.State() == kstreams.StateRunning && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("%s: no active task within 1 min (state %s)", g.name, g.app.State())
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// waitStandbys waits until the Go instance keeps at least one standby task.
func (m *mixed) waitStandbys(g *goInstance) {
	m.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for gaugeSum(m.t, g.reg, "kstreams_standby_tasks") < 1 {
		if err := g.app.Err(); err != nil {
			m.t.Fatalf("%s failed: %v", g.name, err)
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("%s: no standby task within 1 min", g.name)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

func gaugeSum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

// goInstance is a Go instance with its log and metrics.
type goInstance struct {
	name    string
	app     *kstreams.KafkaStreams
	log     *lockedBuffer
	reg     *prometheus.Registry
	stopped bool
}

// topology is the Go side of WordCountApp with windowed.output: bench/wc's word count and,
// from the same grouped stream, a count per word and 10 s window (grace 1 h) keyed
// "word@windowStartMs".
func (m *mixed) topology() (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()
	words := kstream.Stream(b, m.input, kstream.ConsumedWith(serde.String(), serde.String())).
		FlatMapValues(wc.SplitWords).
		GroupBy(func(_, word string) string { return word }, kstream.GroupedWith(serde.String(), serde.String()))
	words.Count(kstream.MaterializedAs[string, int64]("counts-store")).
		ToStream().
		To(m.output, kstream.ProducedWith(serde.String(), serde.Long()))
	kstream.WindowedBy(words, kstream.TimeWindowsOfSizeAndGrace(windowSizeMs*time.Millisecond, time.Hour)).
		Count(kstream.MaterializedAs[string, int64]("windowed-counts-store")).
		ToStreamMapper(func(wk kstream.Windowed[string], _ int64) string {
			return wk.Key + "@" + strconv.FormatInt(wk.Window.Start, 10)
		}).
		To(m.windowed, kstream.ProducedWith(serde.String(), serde.Long()))
	return b.Build()
}

func (m *mixed) startGo(name string) *goInstance {
	m.t.Helper()
	topo, err := m.topology()
	if err != nil {
		m.t.Fatal(err)
	}
	buf, reg := &lockedBuffer{}, prometheus.NewRegistry()
	lg := slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: m.appID, BootstrapServers: m.b.Addrs, ProcessingGuarantee: m.guarantee,
		CommitInterval: commitIntervalMs * time.Millisecond, StateDir: m.t.TempDir(), NumStandbyReplicas: 1,
		Consumer: kstreams.ConsumerConfig{SessionTimeout: sessionTimeoutMs * time.Millisecond, HeartbeatInterval: heartbeatMs * time.Millisecond},
		Logger:   lg.With("instance", name), Registry: reg, GroupProtocol: m.protocol,
	})
	if err != nil {
		m.t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		m.t.Fatal(err)
	}
	g := &goInstance{name: name, app: app, log: buf, reg: reg}
	m.gos = append(m.gos, g)
	m.t.Cleanup(func() {
		if !g.stopped {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = app.Close(ctx)
		}
		if m.t.Failed() {
			m.t.Logf("%s's log:\n%s", name, tail(buf.String(), 60))
		} else if os.Getenv("KSTREAMS_INTEROP_LOGS") != "" {
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, "group leader") || strings.Contains(l, "follow-up") || strings.Contains(l, "rejoin") {
					m.t.Logf("%s: %s", name, l)
				}
			}
		}
	})
	return g
}

func (g *goInstance) stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.app.Close(ctx); err != nil {
		t.Fatalf("closing %s: %v", g.name, err)
	}
	g.stopped = true
	if err := g.app.Err(); err != nil {
		t.Fatalf("%s ended with %v", g.name, err)
	}
}

// leaderRounds counts the rebalances this instance's threads led.
func (g *goInstance) leaderRounds() int {
	return strings.Count(g.log.String(), "group leader: assigned tasks")
}

// errors returns the ERROR lines of the instance's log.
func (g *goInstance) errors() string {
	var out []string
	for _, l := range strings.Split(g.log.String(), "\n") {
		if strings.Contains(l, "level=ERROR") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// javaInstance is a Java instance (a child JVM).
type javaInstance struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []string
	state string
	done  chan struct{}
	err   error
	out   *lockedBuffer
	// stopped is set once stop closed the instance.
	stopped bool
}

func (m *mixed) startJava(name string) *javaInstance {
	m.t.Helper()
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	// The JIT's C1 compiler only and a serial collector: the JVMs start and run on a loaded
	// 2-core machine next to the other tests' JVMs without taking much CPU.
	args := []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m", "-cp", m.cp, javaWordCount, strings.Join(m.b.Addrs, ","), m.appID, m.input, m.output, m.t.TempDir(),
		"processing.guarantee=" + string(m.guarantee), "num.standby.replicas=1",
		fmt.Sprintf("commit.interval.ms=%d", commitIntervalMs), fmt.Sprintf("session.timeout.ms=%d", sessionTimeoutMs),
		fmt.Sprintf("heartbeat.interval.ms=%d", heartbeatMs), "windowed.output=" + m.windowed}
	if m.protocol == kstreams.GroupProtocolStreams {
		args = append(args, "group.protocol=streams")
	}
	cmd := exec.Command(java, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		m.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		m.t.Fatal(err)
	}
	j := &javaInstance{name: name, cmd: cmd, stdin: stdin, done: make(chan struct{}), out: &lockedBuffer{}}
	cmd.Stderr = j.out
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			j.mu.Lock()
			j.lines = append(j.lines, l)
			if s, ok := strings.CutPrefix(l, "STATE "); ok {
				j.state = s
			}
			j.mu.Unlock()
			fmt.Fprintln(j.out, l)
		}
		j.err = cmd.Wait()
		close(j.done)
	}()
	m.javas = append(m.javas, j)
	m.t.Cleanup(func() {
		select {
		case <-j.done:
		default:
			_ = j.cmd.Process.Kill()
			<-j.done
		}
		if m.t.Failed() {
			m.t.Logf("%s's output:\n%s", name, tail(j.out.String(), 60))
		}
	})
	return j
}

func (j *javaInstance) currentState() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state
}

// failed reports a Java instance that died or went to ERROR.
func (j *javaInstance) failed() error {
	select {
	case <-j.done:
		return fmt.Errorf("%s exited: %v", j.name, j.err)
	default:
	}
	if s := j.currentState(); s == "ERROR" || strings.HasPrefix(s, "FAILED") || s == "PENDING_ERROR" {
		return fmt.Errorf("%s: state %s", j.name, s)
	}
	return nil
}

func (j *javaInstance) waitRunning(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for j.currentState() != "RUNNING" {
		if err := j.failed(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not RUNNING within 2 min (state %q)", j.name, j.currentState())
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// tasks returns the instance's last reported active and standby task counts.
func (j *javaInstance) tasks() (active, standby int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := len(j.lines) - 1; i >= 0; i-- {
		if _, err := fmt.Sscanf(j.lines[i], "TASKS active=%d standby=%d", &active, &standby); err == nil {
			return active, standby
		}
	}
	return 0, 0
}

// waitTasks waits until the Java instance runs at least one active and one standby task.
func (j *javaInstance) waitTasks(t *testing.T, step string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		a, s := j.tasks()
		if a > 0 && s > 0 && j.currentState() == "RUNNING" {
			return
		}
		if err := j.failed(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s has %d active and %d standby tasks after 1 min, want both", step, j.name, a, s)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// describe returns the topology description the Java instance printed.
func (j *javaInstance) describe() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	in := false
	for _, l := range j.lines {
		switch {
		case l == "DESCRIBE":
			in = true
		case l == "END DESCRIBE":
			return strings.Join(out, "\n")
		case in:
			out = append(out, l)
		}
	}
	return ""
}

// stop closes the instance's stdin: it closes Kafka Streams (leaving the group) and exits 0.
func (j *javaInstance) stop(t *testing.T) {
	t.Helper()
	j.stopped = true
	_ = j.stdin.Close()
	select {
	case <-j.done:
	case <-time.After(90 * time.Second):
		_ = j.cmd.Process.Kill()
		<-j.done
		t.Fatalf("%s did not exit within 90 s of being closed", j.name)
	}
	if j.err != nil {
		t.Fatalf("%s exited with %v", j.name, j.err)
	}
	if s := j.currentState(); s != "NOT_RUNNING" {
		t.Fatalf("%s ended in state %s, want NOT_RUNNING", j.name, s)
	}
}

// producer writes lines of words from a small vocabulary until stopped, counting the words
// as Java's WordCountDemo does (lower-cased, split on non-word characters).
type producer struct {
	mu     sync.Mutex
	count  map[string]int64
	wcount map[string]int64 // "word@windowStartMs" -> count
	lines  int
	stopC  chan struct{}
	done   chan error
}

func startProducer(t *testing.T, b kafkatest.Broker, topic string) *producer {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Retry.Max = 20 // leader changes and a loaded broker: retry, the lines stay in order per partition
	cfg.Producer.Retry.Backoff = 200 * time.Millisecond
	cfg.Net.MaxOpenRequests = 1
	cfg.Producer.Idempotent = true
	sp, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &producer{count: map[string]int64{}, wcount: map[string]int64{}, stopC: make(chan struct{}), done: make(chan error, 1)}
	r := rand.New(rand.NewPCG(14, uint64(time.Now().UnixNano())))
	go func() {
		defer sp.Close()
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stopC:
				p.done <- nil
				return
			case <-tick.C:
			}
			var msgs []*sarama.ProducerMessage
			batch := map[string]int64{}
			// One timestamp per batch, never decreasing: each input partition's records are
			// in timestamp order (the repartition topics mix them; the grace absorbs that).
			ts := time.Now().UnixMilli()
			window := strconv.FormatInt(ts-ts%windowSizeMs, 10)
			for i := 0; i < 10; i++ {
				n := 2 + r.IntN(4)
				words := make([]string, n)
				for k := range words {
					words[k] = fmt.Sprintf("Word%03d", r.IntN(300))
				}
				line := strings.Join(words, " ")
				for _, w := range wc.SplitWords(line) {
					batch[w]++
				}
				msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprintf("k%d", r.IntN(1000))),
					Value: sarama.StringEncoder(line), Timestamp: time.UnixMilli(ts)})
			}
			if err := sp.SendMessages(msgs); err != nil {
				p.done <- err
				return
			}
			p.mu.Lock()
			for w, n := range batch {
				p.count[w] += n
				p.wcount[w+"@"+window] += n
			}
			p.lines += len(msgs)
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		select {
		case <-p.stopC:
		default:
			close(p.stopC)
			<-p.done
		}
	})
	return p
}

// counts returns the words counted so far (only acknowledged lines).
func (p *producer) counts() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int64, len(p.count))
	for w, n := range p.count {
		out[w] = n
	}
	return out
}

// windowedCounts returns the counts per word and window so far (only acknowledged lines),
// keyed as the windowed output: "word@windowStartMs".
func (p *producer) windowedCounts() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int64, len(p.wcount))
	for w, n := range p.wcount {
		out[w] = n
	}
	return out
}

// stop stops producing and returns the number of lines written.
func (p *producer) stop(t *testing.T) int {
	t.Helper()
	close(p.stopC)
	if err := <-p.done; err != nil {
		t.Fatalf("producing input: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lines
}

// outputReader reads the counts topic (read_committed under exactly-once), keeping every
// word's updates in order.
type outputReader struct {
	mu   sync.Mutex
	seqs map[string][]int64
	n    int
}

func readOutput(t *testing.T, b kafkatest.Broker, topic string, committed bool) *outputReader {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	if committed {
		cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	c, err := sarama.NewConsumer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	o := &outputReader{seqs: map[string][]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, p := range ps {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
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
					if len(m.Value) != 8 {
						continue
					}
					o.mu.Lock()
					o.seqs[string(m.Key)] = append(o.seqs[string(m.Key)], int64(binary.BigEndian.Uint64(m.Value)))
					o.n++
					o.mu.Unlock()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait(); c.Close() })
	return o
}

func (o *outputReader) records() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

// behind describes a word whose latest count is below want's ("" when none is).
func (o *outputReader) behind(want map[string]int64) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, example := 0, ""
	for w, c := range want {
		s := o.seqs[w]
		if len(s) == 0 || s[len(s)-1] < c {
			n++
			if example == "" {
				got := int64(0)
				if len(s) > 0 {
					got = s[len(s)-1]
				}
				example = fmt.Sprintf("%q at %d, want at least %d", w, got, c)
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d words behind, e.g. %s", n, example)
}

// waitFinal waits until every word's latest count equals want's, and no other word appeared.
func (o *outputReader) waitFinal(t *testing.T, want map[string]int64, timeout time.Duration, alive func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		o.mu.Lock()
		diff := ""
		for w, c := range want {
			s := o.seqs[w]
			if len(s) == 0 || s[len(s)-1] != c {
				got := int64(0)
				if len(s) > 0 {
					got = s[len(s)-1]
				}
				diff = fmt.Sprintf("%q: %d, want %d", w, got, c)
				break
			}
		}
		for w := range o.seqs {
			if _, ok := want[w]; !ok && diff == "" {
				diff = fmt.Sprintf("unexpected word %q", w)
			}
		}
		o.mu.Unlock()
		if diff == "" {
			return
		}
		if err := alive(); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("final counts not reached within %v: %s", timeout, diff)
		}
		time.Sleep(100 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// checkIncreasing checks that every word's updates strictly increase: no update was applied
// twice (exactly-once).
func (o *outputReader) checkIncreasing(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for w, s := range o.seqs {
		for i := 1; i < len(s); i++ {
			if s[i] <= s[i-1] {
				t.Errorf("word %q: update %d after %d (updates %v): a duplicate under exactly-once", w, s[i], s[i-1], s)
				break
			}
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
