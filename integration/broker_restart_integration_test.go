package integration_test

import (
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// ownBroker starts a broker of our own with scripts/kafka/kafka.sh in its own KAFKA_RUN_DIR
// (never the shared one) and stops it when the test ends.
type ownBroker struct {
	runDir string
	addr   string
}

func startOwnBroker(t *testing.T) *ownBroker {
	t.Helper()
	ob := &ownBroker{runDir: t.TempDir()}
	cmd := exec.Command("bash", "../scripts/kafka/kafka.sh", "up")
	cmd.Env = append(os.Environ(), "KAFKA_RUN_DIR="+ob.runDir)
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("cannot start an own broker (%v); the test needs Java and the broker jars", err)
	}
	lines := strings.Fields(strings.TrimSpace(string(out)))
	ob.addr = lines[len(lines)-1]
	t.Cleanup(func() { ob.script(t, "down") })
	return ob
}

func (ob *ownBroker) script(t *testing.T, arg string) {
	cmd := exec.Command("bash", "../scripts/kafka/kafka.sh", arg)
	cmd.Env = append(os.Environ(), "KAFKA_RUN_DIR="+ob.runDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("kafka.sh %s: %v: %s", arg, err, out)
	}
}

// restart starts the stopped broker again on the same config, ports and data (kafka.sh up
// would format a fresh log dir) and waits until it answers metadata requests.
func (ob *ownBroker) restart(t *testing.T) {
	t.Helper()
	cache := os.Getenv("KSTREAMS_CACHE_DIR")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "kstreams-go")
	}
	version := os.Getenv("KAFKA_VERSION")
	if version == "" {
		version = "4.4.0"
	}
	logf, err := os.Create(filepath.Join(ob.runDir, "logs", "stdout-restart.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("java", "-Xms256m", "-Xmx1g", "-XX:+UseG1GC", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile="+filepath.Join(ob.runDir, "log4j2.properties"), "-Dkafka.logs.dir="+filepath.Join(ob.runDir, "logs"),
		"-cp", filepath.Join(cache, "kafka-"+version, "libs", "*"), "kafka.Kafka", filepath.Join(ob.runDir, "server.properties"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	// kafka.sh down (in Cleanup) stops the process named by the pid file.
	if err := os.WriteFile(filepath.Join(ob.runDir, "pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ob.runDir, "bootstrap"), []byte(ob.addr+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cfg := kafkatest.SaramaConfig()
		cfg.Metadata.Retry.Max = 0
		if c, err := sarama.NewClient([]string{ob.addr}, cfg); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("restarted broker did not come back within 2 minutes")
		}
		time.Sleep(200 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// TestIntegrationBrokerStopped stops the broker for 20 s while the word count runs under
// exactly-once; the application recovers by itself and the output is exact.
func TestIntegrationBrokerStopped(t *testing.T) {
	kafkatest.Real(t) // runs with the integration tests only
	ob := startOwnBroker(t)
	if path := os.Getenv("KSTREAMS_SARAMA_LOG"); path != "" {
		// sarama's own log (retries, metadata refreshes) for diagnosis.
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		prev := sarama.Logger
		sarama.Logger = log.New(f, "", log.LstdFlags|log.Lmicroseconds)
		t.Cleanup(func() { sarama.Logger = prev; f.Close() })
	}
	b := kafkatest.Broker{Kind: kafkatest.ApacheKafka, Addrs: []string{ob.addr}}
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "outage")
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, 20_000, 8)
	var total int64
	for _, n := range want {
		total += n
	}
	app := newApp(t, b, wordCountTopology(t, input, output), appID, kstreams.ExactlyOnceV2, 2)
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	out := readOutput(t, b, output, sarama.ReadCommitted)
	deadline := time.Now().Add(2 * time.Minute)
	for out.total() < int(total)/3 {
		if time.Now().After(deadline) || app.Err() != nil {
			t.Fatalf("no progress before the outage: %d updates, err %v", out.total(), app.Err())
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	ob.script(t, "down")
	stopped := time.Now()
	t.Logf("broker stopped at %d of %d committed updates; state %s", out.total(), total, app.State())
	time.Sleep(20 * time.Second) // the outage itself
	ob.restart(t)
	restarted := time.Now()
	t.Logf("broker restarted %v after the stop; state %s", restarted.Sub(stopped).Round(time.Millisecond), app.State())
	merge(want, produceLines(t, b, input, 5_000, 9))
	deadline = time.Now().Add(2 * time.Minute)
	for !out.reached(want) && time.Now().Before(deadline) && app.Err() == nil {
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
	if !out.reached(want) {
		// Tell a stuck application from a stuck reader: a fresh reader, and the group's offsets.
		fresh := readOutput(t, b, output, sarama.ReadCommitted)
		d2 := time.Now().Add(30 * time.Second)
		for !fresh.reached(want) && time.Now().Before(d2) {
			time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
		}
		t.Logf("fresh reader reached the final counts: %v (first reader has %d updates, fresh %d); state %s err %v",
			fresh.reached(want), out.total(), fresh.total(), app.State(), app.Err())
		checkNothingToReprocess(t, b, appID, input)
		logTxnState(t, b.Addrs, appID, input, output)
		if os.Getenv("KSTREAMS_DEBUG_STACKS") != "" {
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		}
		t.FailNow()
	}
	t.Logf("final counts %v after the restart", time.Since(restarted).Round(time.Millisecond))
	out.checkExactSequences(t, want)
	closeApp(t, app)
}
