package integration_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// Environment of the crash child process.
const (
	envCrashChild = "KSTREAMS_CRASH_CHILD"
	envCrashArgs  = "KSTREAMS_CRASH_ARGS" // bootstrap|input|output|appID|stateDir|pebble or memory
)

// TestHelperCrashChild is not a test: run by checkCrashes as a child process, it runs the
// word count under exactly-once until it is killed.
func TestHelperCrashChild(t *testing.T) {
	if os.Getenv(envCrashChild) == "" {
		t.Skip("helper process for the crash tests")
	}
	a := strings.Split(os.Getenv(envCrashArgs), "|")
	app, err := kstreams.New(crashTopology(t, a[1], a[2], a[5] == "pebble"), kstreams.Config{
		ApplicationID: a[3], BootstrapServers: strings.Split(a[0], ","), ProcessingGuarantee: kstreams.ExactlyOnceV2,
		CommitInterval: 100 * time.Millisecond, StateDir: a[4], Sarama: fastSarama, Consumer: fastConsumer, NumStreamThreads: 2,
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

// crashLines is the number of input lines of the crash test (the issue asks for 200 000;
// KSTREAMS_CRASH_LINES overrides).
func crashLines() int {
	if v, err := strconv.Atoi(os.Getenv("KSTREAMS_CRASH_LINES")); err == nil && v > 0 {
		return v
	}
	return 200_000
}

func (o *outputReader) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, s := range o.seqs {
		n += len(s)
	}
	return n
}

// crashTopology is the word count with a Pebble or an in-memory store.
func crashTopology(t testing.TB, input, output string, pebble bool) *processor.Topology {
	if pebble {
		return wordCountTopologyWith(t, input, output, store.Stores.PersistentKeyValueStore("Counts"))
	}
	return wordCountTopology(t, input, output)
}

func checkCrashes(t *testing.T, b kafkatest.Broker, kills, lines int, pebble bool) {
	kind := "memory"
	if pebble {
		kind = "pebble"
	}
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts"), kafkatest.Name(t, "crash")
	stateDir := t.TempDir()
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, lines, 5)
	var total int64
	for _, n := range want {
		total += n
	}
	out := readOutput(t, b, output, sarama.ReadCommitted)
	for k := 1; k <= kills; k++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrashChild$", "-test.v")
		cmd.Env = append(os.Environ(), envCrashChild+"=1",
			envCrashArgs+"="+strings.Join([]string{strings.Join(b.Addrs, ","), input, output, appID, stateDir, kind}, "|"))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = nil
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		readDone := make(chan struct{})
		var running atomic.Bool // the child's last reported state is RUNNING
		go func() {
			defer close(readDone)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if l := sc.Text(); strings.HasPrefix(l, "ERROR") || strings.HasPrefix(l, "STATE") {
					t.Logf("child %d: %s", k, l)
					if strings.HasPrefix(l, "STATE") {
						running.Store(l == "STATE RUNNING")
					}
				}
			}
		}()
		// Kill once the child has moved the committed output forward: at k/(kills+1) of the work.
		// On kfake, only while the child runs, not in the middle of a rebalance: kfake (at
		// v0.0.0-20260918054303) arms a member's session timer only if handing it its JoinGroup
		// answer succeeds, which for a closed connection is a coin toss (the send races the
		// connection's done channel), and drops the pending-SyncGroup deadline once the leader
		// syncs. A member killed with a JoinGroup in flight can therefore stay in the group for
		// good, holding tasks no one processes: seen in CI (one repartition partition never
		// consumed) and reproduced with two bare sarama members (4 runs of 6). Apache Kafka
		// expires such a member after its session timeout, so the real-broker variants kill at
		// any point, rebalances included.
		target := int(total) * k / (kills + 1)
		waitRunning := b.Kind == kafkatest.Kfake
		deadline := time.Now().Add(3 * time.Minute)
		for out.total() < target || (waitRunning && !running.Load()) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				<-readDone
				cmd.Wait()
				t.Fatalf("child %d: committed output stuck at %d of %d", k, out.total(), target)
			}
			time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-readDone
		_ = cmd.Wait()
		t.Logf("killed child %d at %d of %d committed updates", k, out.total(), total)
	}
	// A final clean run finishes the work.
	t.Cleanup(func() {
		if t.Failed() {
			logTxnState(t, b.Addrs, appID, input, output)
			// Where the final run's stream threads are, should one have stalled (it ran
			// in this process): their goroutines.
			_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		}
	})
	reg := prometheus.NewRegistry()
	app, err := kstreams.New(crashTopology(t, input, output, pebble), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		CommitInterval: 100 * time.Millisecond, StateDir: stateDir, Sarama: fastSarama, Consumer: fastConsumer, NumStreamThreads: 2,
		Registry: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	out.waitFinal(t, want, 3*time.Minute, app.Err)
	out.checkExactSequences(t, want)
	t.Logf("final run restored %v changelog records (%s stores)", counterValue(t, reg, "kstreams_restored_records_total"), kind)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	closeStart := time.Now()
	if err := app.Close(ctx); err != nil {
		// Where the threads are stuck: their goroutines.
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		t.Fatalf("Close after %v: %v", time.Since(closeStart).Round(time.Millisecond), err)
	}
	t.Logf("final run closed in %v", time.Since(closeStart).Round(time.Millisecond))
	checkNothingToReprocess(t, b, appID, input)
}

// checkNothingToReprocess checks that the committed offsets of the input topic are its end
// offsets: a restart would reprocess nothing.
func checkNothingToReprocess(t *testing.T, b kafkatest.Broker, appID, input string) {
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
	ps, err := client.Partitions(input)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		end, err := client.GetOffset(input, p, sarama.OffsetNewest)
		if err != nil {
			t.Fatal(err)
		}
		pom, err := om.ManagePartition(input, p)
		if err != nil {
			t.Fatal(err)
		}
		committed, _ := pom.NextOffset()
		pom.AsyncClose()
		if committed != end {
			t.Errorf("%s-%d: committed offset %d, end offset %d", input, p, committed, end)
		}
	}
}

// TestIntegrationExactlyOnceCrashes is the crash test: 200 000 lines, the child
// SIGKILLed 4 times, Pebble stores, Apache Kafka. (Its final run used to stall short of the
// final counts once in a few runs: the broker's retention check deleted input lines carrying
// 1970 timestamps before they were read; test topics keep their records now.)
func TestIntegrationExactlyOnceCrashes(t *testing.T) {
	checkCrashes(t, kafkatest.Real(t), 4, crashLines(), true)
}

func TestEmbeddedExactlyOnceCrashes(t *testing.T) {
	t.Parallel()
	checkCrashes(t, kafkatest.Embedded(t), 3, 20_000, false)
}

// TestEmbeddedExactlyOnceCrashesPebble is the crash test with Pebble stores on kfake.
func TestEmbeddedExactlyOnceCrashesPebble(t *testing.T) {
	t.Parallel()
	checkCrashes(t, kafkatest.Embedded(t), 3, 20_000, true)
}

// TestIntegrationExactlyOnceCrashesInMemory is the crash test with in-memory stores (full
// restores) on the real broker.
func TestIntegrationExactlyOnceCrashesInMemory(t *testing.T) {
	checkCrashes(t, kafkatest.Real(t), 2, 20_000, false)
}

// counterValue sums the samples of a counter family in reg.
func counterValue(t testing.TB, reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				v += m.GetCounter().GetValue()
			}
		}
	}
	return v
}

// logTxnState logs, for diagnosis of a stalled read_committed reader, every partition of the
// given topics and of the application's internal topics (<appID>-...) where the group's
// committed offset trails the end: high watermark, last stable offset, the producers with an
// open transaction, and what a read_committed fetch at the committed offset returns; then the
// coordinator's view of the application's transactional ids.
func logTxnState(t testing.TB, addrs []string, appID string, topics ...string) {
	t.Helper()
	client, err := sarama.NewClient(addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Logf("txn state: %v", err)
		return
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Logf("txn state: %v", err)
		return
	}
	all, err := client.Topics()
	if err != nil {
		t.Logf("txn state: %v", err)
		return
	}
	for _, tp := range all {
		if strings.HasPrefix(tp, appID+"-") {
			topics = append(topics, tp)
		}
	}
	om, err := sarama.NewOffsetManagerFromClient(appID, client)
	if err != nil {
		t.Logf("txn state: %v", err)
		return
	}
	defer om.Close()
	req := map[string][]int32{}
	for _, tp := range topics {
		ps, err := client.Partitions(tp)
		if err != nil {
			t.Logf("txn state: %s: %v", tp, err)
			continue
		}
		for _, p := range ps {
			req[tp] = append(req[tp], p)
			hw, lso, err := endOffsets(client, tp, p)
			if err != nil {
				t.Logf("txn state: %s-%d: %v", tp, p, err)
				continue
			}
			committed := int64(-1)
			if pom, err := om.ManagePartition(tp, p); err == nil {
				committed, _ = pom.NextOffset()
				pom.AsyncClose()
			}
			if hw == lso && (committed < 0 || committed == hw) {
				continue
			}
			t.Logf("txn state: %s-%d high watermark %d, last stable offset %d, committed %d", tp, p, hw, lso, committed)
			if committed >= 0 && committed < hw {
				logFetch(t, client, tp, p, committed)
			}
		}
	}
	ta, ok := admin.(sarama.TransactionClusterAdmin)
	if !ok {
		return
	}
	prods, err := ta.DescribeProducers(req)
	if err != nil {
		t.Logf("txn state: describe producers: %v", err)
	}
	for tp, ps := range prods {
		for p, st := range ps {
			if st.ErrorCode != sarama.ErrNoError {
				t.Logf("txn state: %s-%d describe producers: %v", tp, p, st.ErrorCode)
			}
			for _, ap := range st.ActiveProducers {
				if ap.CurrentTxnStartOffset >= 0 {
					t.Logf("txn state: %s-%d open transaction of producer %d epoch %d from offset %d (last seq %d, last ts %d, coordinator epoch %d)",
						tp, p, ap.ProducerID, ap.ProducerEpoch, ap.CurrentTxnStartOffset, ap.LastSequence, ap.LastTimestamp, ap.CoordinatorEpoch)
				}
			}
		}
	}
	txns, err := ta.ListTransactions(nil, nil, -1)
	if err != nil {
		t.Logf("txn state: list transactions: %v", err)
		return
	}
	var ids []string
	for _, tx := range txns {
		if strings.HasPrefix(tx.TransactionalID, appID+"-") {
			ids = append(ids, tx.TransactionalID)
		}
	}
	if len(ids) == 0 {
		return
	}
	descs, err := ta.DescribeTransactions(ids)
	if err != nil {
		t.Logf("txn state: describe transactions: %v", err)
		return
	}
	for id, d := range descs {
		t.Logf("txn state: %s: %s producer %d epoch %d timeout %v started %d partitions %+v",
			id, d.TransactionState, d.ProducerID, d.ProducerEpoch, d.TransactionTimeout, d.TransactionStartTime, d.Topics)
	}
}

// endOffsets returns a partition's high watermark and last stable offset.
func endOffsets(client sarama.Client, topic string, p int32) (hw, lso int64, err error) {
	leader, err := client.Leader(topic, p)
	if err != nil {
		return 0, 0, err
	}
	for i, iso := range []sarama.IsolationLevel{sarama.ReadUncommitted, sarama.ReadCommitted} {
		req := sarama.NewOffsetRequest(sarama.V4_0_0_0)
		req.IsolationLevel = iso
		req.AddBlock(topic, p, sarama.OffsetNewest, 1)
		resp, err := leader.GetAvailableOffsets(req)
		if err != nil {
			return 0, 0, err
		}
		b := resp.GetBlock(topic, p)
		if b == nil || b.Err != sarama.ErrNoError {
			return 0, 0, fmt.Errorf("list offsets: %v", b)
		}
		if i == 0 {
			hw = b.Offset
		} else {
			lso = b.Offset
		}
	}
	return hw, lso, nil
}

// logFetch logs what a read_committed fetch of a partition at offset returns: the batches'
// offsets, producers and kinds, and the aborted transactions.
func logFetch(t testing.TB, client sarama.Client, topic string, p int32, offset int64) {
	leader, err := client.Leader(topic, p)
	if err != nil {
		t.Logf("fetch %s-%d: %v", topic, p, err)
		return
	}
	req := &sarama.FetchRequest{Version: 12, MaxWaitTime: 10, MinBytes: 1, MaxBytes: 1 << 20, Isolation: sarama.ReadCommitted}
	req.AddBlock(topic, p, offset, 1<<20, -1)
	resp, err := leader.Fetch(req)
	if err != nil {
		t.Logf("fetch %s-%d: %v", topic, p, err)
		return
	}
	b := resp.GetBlock(topic, p)
	if b == nil {
		t.Logf("fetch %s-%d: no block", topic, p)
		return
	}
	var aborted []string
	for _, a := range b.AbortedTransactions {
		aborted = append(aborted, fmt.Sprintf("%d@%d", a.ProducerID, a.FirstOffset))
	}
	t.Logf("fetch %s-%d at %d: err %v hw %d lso %d aborted %v, %d record sets", topic, p, offset, b.Err,
		b.HighWaterMarkOffset, b.LastStableOffset, aborted, len(b.RecordsSet))
	for i, rs := range b.RecordsSet {
		if i >= 12 {
			break
		}
		if rb := rs.RecordBatch; rb != nil {
			t.Logf("  batch %d..%d producer %d epoch %d seq %d txn %v control %v records %d partial %v",
				rb.FirstOffset, rb.LastOffset(), rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence, rb.IsTransactional,
				rb.Control, len(rb.Records), rb.PartialTrailingRecord)
		}
	}
}
