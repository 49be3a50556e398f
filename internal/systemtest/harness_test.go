package systemtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// The harness of the system tests: Kafka's drivers (java, from systemtest/java) and our clients
// (systemtest/cmd, built once per test binary) as child processes whose stdout is kept line
// by line, waited on with deadlines, and killed (SIGKILL) or stopped (SIGTERM) by their pid.

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// clientBinary builds (once) and returns the path of systemtest/cmd/<name>.
func clientBinary(t *testing.T, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "kstreams-systemtest-bin-")
		if buildErr != nil {
			return
		}
		for _, c := range []string{"eosclient", "smokeclient"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, c), "./cmd/"+c)
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build ./cmd/%s: %v\n%s", c, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, name)
}

// proc is a child process with its stdout (and stderr) kept.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File

	mu     sync.Mutex
	lines  []string
	more   chan struct{} // closed and replaced when a line arrives or the process exits
	exited bool
	err    error
	stdin  io.WriteCloser
}

// start runs name (a label) as argv with its output kept in dir/<name>.log too; the process
// is killed when the test ends if it still runs.
func start(t *testing.T, dir, name string, withStdin bool, argv ...string) *proc {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, log: logf, more: make(chan struct{})}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stderr = logf
	if withStdin {
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Logf("started %s (pid %d): %s", name, p.cmd.Process.Pid, strings.Join(argv, " "))
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			p.mu.Lock()
			p.lines = append(p.lines, line)
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
		err := p.cmd.Wait()
		p.mu.Lock()
		p.exited, p.err = true, err
		close(p.more)
		p.more = make(chan struct{})
		p.mu.Unlock()
	}()
	t.Cleanup(func() {
		if !p.done() {
			_ = p.cmd.Process.Kill()
			p.waitExit(t, time.Minute)
		}
		logf.Close()
	})
	return p
}

func (p *proc) done() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// mark returns the number of lines seen so far, for waitFor's from.
func (p *proc) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lines)
}

// waitFor waits until a line at index from or later matches re and returns it; it fails the
// test after timeout or when the process exits first.
func (p *proc) waitFor(t *testing.T, from int, re string, timeout time.Duration) string {
	t.Helper()
	line, err := p.find(from, regexp.MustCompile(re), timeout)
	if err != nil {
		t.Fatalf("%s: %v; its last lines:\n%s", p.name, err, p.tail(30))
	}
	return line
}

func (p *proc) find(from int, re *regexp.Regexp, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		for ; from < len(p.lines); from++ {
			if re.MatchString(p.lines[from]) {
				line := p.lines[from]
				p.mu.Unlock()
				return line, nil
			}
		}
		exited, more := p.exited, p.more
		p.mu.Unlock()
		if exited {
			return "", fmt.Errorf("exited (%v) before printing a line matching %q", p.err, re)
		}
		select {
		case <-more:
		case <-deadline.C:
			return "", fmt.Errorf("no line matching %q within %s", re, timeout)
		}
	}
}

func (p *proc) tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := p.lines[max(0, len(p.lines)-n):]
	return "\t" + strings.Join(lines, "\n\t")
}

// signal sends sig to the process (by its pid).
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("%s: signal %v: %v", p.name, sig, err)
	}
}

// waitExit waits for the process to end and returns its error (nil: exit status 0).
func (p *proc) waitExit(t *testing.T, timeout time.Duration) error {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		exited, err, more := p.exited, p.err, p.more
		p.mu.Unlock()
		if exited {
			return err
		}
		select {
		case <-more:
		case <-deadline.C:
			t.Fatalf("%s did not exit within %s; its last lines:\n%s", p.name, timeout, p.tail(30))
		}
	}
}

// kill SIGKILLs the process and waits for it to be gone.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	p.signal(t, syscall.SIGKILL)
	_ = p.waitExit(t, time.Minute)
	t.Logf("killed %s (SIGKILL)", p.name)
}

// stop SIGTERMs the process and waits until it prints a line matching closed and exits.
func (p *proc) stop(t *testing.T, closed string, timeout time.Duration) {
	t.Helper()
	from := p.mark()
	p.signal(t, syscall.SIGTERM)
	p.waitFor(t, from, closed, timeout)
	if err := p.waitExit(t, timeout); err != nil {
		t.Fatalf("%s exited with %v after SIGTERM; its last lines:\n%s", p.name, err, p.tail(30))
	}
	t.Logf("stopped %s (SIGTERM)", p.name)
}

// verdict returns the last line of the process's output that matches re ("" if none).
func (p *proc) verdict(re string) string {
	rx := regexp.MustCompile(re)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.lines) - 1; i >= 0; i-- {
		if rx.MatchString(p.lines[i]) {
			return p.lines[i]
		}
	}
	return ""
}

// writeProps writes a properties file of the form Kafka's system tests render.
func writeProps(t *testing.T, path string, props map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newAdmin(t *testing.T, addr string) sarama.ClusterAdmin {
	t.Helper()
	admin, err := sarama.NewClusterAdmin([]string{addr}, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin
}

// resetTopics deletes the drivers' fixed topics and the application's internal topics
// (prefix "<appID>-") and its group, left by an earlier run on the same broker, then creates
// the topics with 5 partitions each as Kafka's system tests do (replication factor 1: one
// broker).
func resetTopics(t *testing.T, addr, appID string, topics []string) {
	t.Helper()
	admin := newAdmin(t, addr)
	existing, err := admin.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, tp := range topics {
		want[tp] = true
	}
	var gone []string
	for name := range existing {
		if want[name] || strings.HasPrefix(name, appID+"-") {
			if err := admin.DeleteTopic(name); err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				t.Fatalf("delete topic %s: %v", name, err)
			}
			gone = append(gone, name)
		}
	}
	if err := admin.DeleteConsumerGroup(appID); err != nil && !errors.Is(err, sarama.ErrGroupIDNotFound) {
		t.Logf("delete group %s: %v", appID, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(gone) > 0 {
		existing, err := admin.ListTopics()
		if err != nil {
			t.Fatal(err)
		}
		var still []string
		for _, name := range gone {
			if _, ok := existing[name]; ok {
				still = append(still, name)
			}
		}
		if gone = still; len(gone) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topics %v not deleted within 2 minutes", gone)
		}
		time.Sleep(200 * time.Millisecond) // polling interval, bounded by the deadline
	}
	for _, tp := range topics {
		for {
			err := admin.CreateTopic(tp, &sarama.TopicDetail{NumPartitions: 5, ReplicationFactor: 1}, false)
			if err == nil {
				break
			}
			if !errors.Is(err, sarama.ErrTopicAlreadyExists) || time.Now().After(deadline) {
				t.Fatalf("create topic %s: %v", tp, err)
			}
			time.Sleep(200 * time.Millisecond) // still being deleted; bounded by the deadline
		}
	}
	kafkatest.WaitTopicsReady(t, []string{addr}, nil, topics...)
}

// waitCaughtUp waits until group's committed offsets equal the end offsets on every partition
// of topics and of the application's repartition topics ("<group>-...-repartition"): the
// application has processed everything, also what its own sub-topologies wrote for each other
// (a partition with nothing committed counts as committed 0). Under exactly-once the last
// offset of a topic the application wrote is a commit marker; the committed offset passes it
// once the marker was read.
func waitCaughtUp(t *testing.T, addr, group string, topics []string, timeout time.Duration) {
	t.Helper()
	client, err := sarama.NewClient([]string{addr}, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	all, err := admin.ListTopics()
	if err != nil {
		t.Fatal(err)
	}
	topics = append([]string(nil), topics...)
	for name := range all {
		if strings.HasPrefix(name, group+"-") && strings.HasSuffix(name, "-repartition") {
			topics = append(topics, name)
		}
	}
	sort.Strings(topics)
	parts := map[string][]int32{}
	for _, tp := range topics {
		if parts[tp], err = client.Partitions(tp); err != nil {
			t.Fatalf("partitions of %s: %v", tp, err)
		}
	}
	deadline := time.Now().Add(timeout)
	var behind string
	for {
		resp, err := admin.ListConsumerGroupOffsets(group, parts)
		if err == nil {
			behind = ""
			for _, tp := range topics {
				for _, p := range parts[tp] {
					end, err := client.GetOffset(tp, p, sarama.OffsetNewest)
					if err != nil {
						t.Fatal(err)
					}
					var committed int64
					if b := resp.GetBlock(tp, p); b != nil && b.Offset >= 0 {
						committed = b.Offset
					}
					if committed != end {
						behind += fmt.Sprintf(" %s-%d: committed %d, end %d;", tp, p, committed, end)
					}
				}
			}
			if behind == "" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s has not caught up within %s:%s (%v)", group, timeout, behind, err)
		}
		time.Sleep(500 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// brokerAddr returns the broker the system tests run on (KAFKA_BOOTSTRAP_SERVERS; skips
// without it) and the classpath directory of systemtest/java (KSTREAMS_SYSTEMTEST_CP; skips
// without it).
func systemEnv(t *testing.T) (addr string) {
	t.Helper()
	b := kafkatest.Real(t)
	if os.Getenv(classpathEnv) == "" {
		t.Skipf("system test: %s is not set (systemtest/java/target, built by scripts/systemtest.sh or make test)", classpathEnv)
	}
	return b.Addrs[0]
}

// javaCmd is the command line of a Java main class on the classpath of test-jar version.
func javaCmd(version, class string, args ...string) []string {
	return append([]string{"java", "-Xmx512m", "-cp", javaClasspath(version), class}, args...)
}

// bounceBroker stops the broker (SIGTERM, as kafka.sh down), keeps it down for downFor, and
// starts it again on the same config, ports and data. Kafka's StreamsBrokerDownResilienceTest
// does the same to its brokers while the clients run. A transaction the clients commit while
// this single-node broker shuts down or starts up can lose its markers (see
// kafkatest.OwnBroker.Kill); the drivers then fail at their verification.
func bounceBroker(t *testing.T, ob *kafkatest.OwnBroker, downFor time.Duration) {
	t.Helper()
	ob.Stop(t)
	t.Logf("broker stopped; starting it again in %s", downFor)
	time.Sleep(downFor) // the outage itself, not a wait for a result
	ob.Restart(t)
	t.Logf("broker restarted")
}
