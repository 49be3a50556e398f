package kafkatest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OwnBroker is an Apache Kafka broker of a test's own, started with scripts/kafka/kafka.sh in
// a KAFKA_RUN_DIR of its own (never the shared broker's), for tests that take the broker away
// and bring it back while an application runs. It is stopped when the test ends.
type OwnBroker struct {
	Broker
	runDir string
}

// StartOwnBroker starts an own broker (kafka.sh up: fresh data, free ports; about 10 s). When
// it cannot be started (no Java, no broker jars) the test is skipped with the reason if skip
// is true, else failed.
func StartOwnBroker(t testing.TB, skip bool) *OwnBroker {
	t.Helper()
	ob := &OwnBroker{runDir: t.TempDir()}
	out, err := ob.script("up")
	if err != nil {
		if skip {
			t.Skipf("cannot start a broker of the test's own with kafka.sh up (%v); the test needs Java and the broker jars", err)
		}
		t.Fatalf("starting a broker of the test's own with kafka.sh up: %v", err)
	}
	lines := strings.Fields(strings.TrimSpace(out))
	ob.Broker = Broker{Kind: ApacheKafka, Addrs: []string{lines[len(lines)-1]}}
	t.Cleanup(func() {
		if out, err := ob.script("down"); err != nil {
			t.Logf("kafka.sh down: %v: %s", err, out)
		}
	})
	return ob
}

// Stop stops the broker (kafka.sh down: SIGTERM, a controlled shutdown).
func (ob *OwnBroker) Stop(t testing.TB) {
	t.Helper()
	if out, err := ob.script("down"); err != nil {
		t.Fatalf("kafka.sh down: %v: %s", err, out)
	}
}

// Kill stops the broker as a crash does (SIGKILL: no controlled shutdown, nothing flushed) and
// returns once its process is gone.
//
// A test of an outage under exactly-once takes the broker away while no transaction is being
// committed. The partitions of a single-node KRaft cluster (Kafka 4.4) are left without a
// leader while it shuts down (a controlled shutdown) and while it starts up again (after a
// kill). The transaction coordinator completes a transaction that it commits or aborts in such
// a window without its markers, as though its partitions had been deleted: its log says
// PrepareCommit, then CompleteCommit, and the data partitions get no marker. The records then
// stay open on their partitions for good. read_committed readers, the changelog restore and
// require_stable offset fetches of the group wait forever, or a later abort marker drops
// committed records: a broken transaction that Java Kafka Streams cannot get past either. A
// cluster of several replicas moves the leadership instead and writes the markers.
func (ob *OwnBroker) Kill(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ob.runDir, "pid"))
	if err != nil {
		t.Fatalf("kill the broker: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("kill the broker: pid file: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the broker (pid %d): %v", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the broker (pid %d) is still running 30 s after SIGKILL", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling the process's exit, bounded by the deadline
	}
}

// running reports whether process pid exists and has not exited (a zombie, not reaped yet by
// its parent, has).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: signal 0 is all there is
	}
	// The state follows the command name, which is in parentheses and may hold any byte.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// Restart starts the stopped (or killed) broker again on the same config, ports and data (kafka.sh
// restart) and returns once it answers metadata requests.
func (ob *OwnBroker) Restart(t testing.TB) {
	t.Helper()
	if out, err := ob.script("restart"); err != nil {
		t.Fatalf("kafka.sh restart: %v: %s", err, out)
	}
}

// script runs kafka.sh with arg on the broker's run directory; it returns stdout, and stderr
// with the error.
func (ob *OwnBroker) script(arg string) (string, error) {
	_, self, _, _ := runtime.Caller(0)
	cmd := exec.Command("bash", filepath.Join(filepath.Dir(self), "..", "..", "scripts", "kafka", "kafka.sh"), arg)
	cmd.Env = append(os.Environ(), "KAFKA_RUN_DIR="+ob.runDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return stderr.String(), err
	}
	return string(out), nil
}
