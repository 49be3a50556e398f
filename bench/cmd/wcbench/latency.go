package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

// End-to-end latency of the word count at a fixed input rate, with default configurations
// (at least once: commit.interval.ms 30 s, statestore.cache.max.bytes 10 MiB, Kafka Streams'
// linger.ms 100 ms), ours and Java's one after the other on fresh topics.
//
// Every input line starts with a word of its own ("9<n>": the vocabulary has no digits), and the line's record timestamp is
// the wall-clock time it was sent. The word count counts that word once, and its output record
// (the count 1) carries the line's timestamp, so the line's latency is the time the output
// record is read minus its timestamp: from producing the line to reading its count, through
// the repartition topic, the count store and its record cache. The load runs for
// -latency-seconds at -latency-rates lines per second; the other nine words of each line come
// from the throughput benchmark's Zipf vocabulary. With the default configuration the record
// cache holds most counts until a commit (every 30 s) or an eviction forwards them, in Java
// Kafka Streams as in ours, so the figures are dominated by the commit interval.

// latencyResult is one latency run.
type latencyResult struct {
	lines             int
	p50, p99, maxLat  time.Duration
	missing           int
	producedPerSecond float64
}

func runLatency(o options, client sarama.Client, admin sarama.ClusterAdmin) error {
	fmt.Printf("\nend-to-end latency, default configuration (at_least_once, commit.interval.ms 30000, cache 10 MiB), %v of load per run\n", o.latencyDuration)
	results := map[int]map[string]latencyResult{}
	for _, rate := range o.latencyRates {
		results[rate] = map[string]latencyResult{}
		for _, impl := range o.impls {
			r, err := latencyOnce(o, client, admin, impl, rate)
			if err != nil {
				return fmt.Errorf("latency %s at %d lines/s: %w", impl, rate, err)
			}
			results[rate][impl] = r
			fmt.Printf("%-4s %6d lines/s  %7d lines  p50 %8.3f s  p99 %8.3f s  max %8.3f s  (sent at %.0f lines/s; %d not seen)\n",
				impl, rate, r.lines, r.p50.Seconds(), r.p99.Seconds(), r.maxLat.Seconds(), r.producedPerSecond, r.missing)
		}
	}
	if slices.Contains(o.impls, "java") && slices.Contains(o.impls, "go") {
		fmt.Println("latency ratios ours/Java (<1 is faster)")
		for _, rate := range o.latencyRates {
			j, g := results[rate]["java"], results[rate]["go"]
			fmt.Printf("  %6d lines/s  p50 %.2f  p99 %.2f\n", rate, g.p50.Seconds()/j.p50.Seconds(), g.p99.Seconds()/j.p99.Seconds())
		}
	}
	return nil
}

func latencyOnce(o options, client sarama.Client, admin sarama.ClusterAdmin, impl string, rate int) (latencyResult, error) {
	var res latencyResult
	stamp := strconv.FormatInt(time.Now().UnixNano(), 36)
	appID := fmt.Sprintf("wcbench-latency-%s-%d-%s", impl, rate, stamp)
	input, output := appID+"-input", appID+"-output"
	if err := createTopics(client, input, output); err != nil {
		return res, err
	}
	defer deleteTopics(admin, appID+"-")
	stateDir, err := os.MkdirTemp("", "wcbench-latency-state-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(stateDir)
	const defaultCommitMS, defaultCacheBytes = "30000", "10485760"
	var cmd *exec.Cmd
	if impl == "java" {
		args := append(strings.Fields(o.javaOpts), "-cp", o.javaCP, "io.kstreams.bench.WordCount", strings.Join(o.bootstrap, ","),
			appID, input, output, "at_least_once", defaultCommitMS, defaultCacheBytes, stateDir)
		cmd = exec.Command("java", args...)
	} else {
		bin := o.goBin
		if impl == "gobase" {
			bin = o.goBaseBin
		}
		cmd = exec.Command(bin, "-bootstrap", strings.Join(o.bootstrap, ","), "-application-id", appID, "-input", input,
			"-output", output, "-commit-ms", defaultCommitMS, "-cache-bytes", defaultCacheBytes, "-state-dir", stateDir)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return res, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	if err := awaitAssigned(admin, appID, input, 120*time.Second, exited); err != nil {
		return res, err
	}

	// The reader: every partition of the output topic, from the start.
	consumer, err := sarama.NewConsumer(o.bootstrap, saramaConfig())
	if err != nil {
		return res, err
	}
	defer consumer.Close()
	var mu sync.Mutex
	seen := map[string]time.Duration{}
	for p := int32(0); p < partitions; p++ {
		pc, err := consumer.ConsumePartition(output, p, sarama.OffsetOldest)
		if err != nil {
			return res, err
		}
		defer pc.Close()
		go func() {
			for m := range pc.Messages() {
				if len(m.Key) > 1 && m.Key[0] == '9' {
					lat := time.Since(m.Timestamp)
					mu.Lock()
					if _, dup := seen[string(m.Key)]; !dup {
						seen[string(m.Key)] = lat
					}
					mu.Unlock()
				}
			}
		}()
	}

	// The load: lines at the given rate, sent in 10 ms ticks, each stamped with its send time.
	pc := saramaConfig()
	pc.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	pc.Producer.RequiredAcks = sarama.WaitForAll
	pc.Producer.Return.Successes = false
	pc.Producer.Return.Errors = true
	pc.Producer.Flush.Frequency = time.Millisecond
	prod, err := sarama.NewAsyncProducer(o.bootstrap, pc)
	if err != nil {
		return res, err
	}
	var perr error
	var ew sync.WaitGroup
	ew.Add(1)
	go func() {
		defer ew.Done()
		for e := range prod.Errors() {
			if perr == nil {
				perr = e
			}
		}
	}()
	r := rand.New(rand.NewSource(int64(rate)))
	vocab := vocabulary(r, 100_000)
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	n := 0
	var sb strings.Builder
	for now := range tick.C {
		elapsed := now.Sub(start)
		if elapsed >= o.latencyDuration {
			break
		}
		for due := int(elapsed.Seconds() * float64(rate)); n < due; n++ {
			sb.Reset()
			sb.WriteString("9" + strconv.Itoa(n))
			for j := 1; j < o.wordsPerLine; j++ {
				sb.WriteByte(' ')
				sb.WriteString(vocab[zipf.Uint64()])
			}
			prod.Input() <- &sarama.ProducerMessage{Topic: input, Value: sarama.StringEncoder(sb.String()), Timestamp: time.Now()}
		}
	}
	tick.Stop()
	res.producedPerSecond = float64(n) / time.Since(start).Seconds()
	prod.AsyncClose()
	ew.Wait()
	if perr != nil {
		return res, perr
	}
	// Wait for every line's count (with the default commit interval, up to one interval after
	// the last line), at most 90 s.
	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		got := len(seen)
		mu.Unlock()
		if got >= n || time.Now().After(deadline) {
			break
		}
		select {
		case err := <-exited:
			return res, fmt.Errorf("the application ended: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	mu.Lock()
	lats := make([]time.Duration, 0, len(seen))
	for _, l := range seen {
		lats = append(lats, l)
	}
	mu.Unlock()
	slices.Sort(lats)
	res.lines, res.missing = n, n-len(lats)
	if len(lats) > 0 {
		res.p50 = lats[len(lats)/2]
		res.p99 = lats[min(len(lats)-1, len(lats)*99/100)]
		res.maxLat = lats[len(lats)-1]
	}
	return res, nil
}

// awaitAssigned waits until group appID is stable with every partition of input assigned to
// a member (the application runs and will process what comes).
func awaitAssigned(admin sarama.ClusterAdmin, appID, input string, timeout time.Duration, exited <-chan error) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("the application ended before joining its group: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		gs, err := admin.DescribeConsumerGroups([]string{appID})
		if err != nil || len(gs) != 1 || gs[0].State != "Stable" {
			continue
		}
		assigned := 0
		for _, m := range gs[0].Members {
			a, err := m.GetMemberAssignment()
			if err != nil || a == nil {
				continue
			}
			assigned += len(a.Topics[input])
		}
		if assigned == partitions {
			return nil
		}
	}
	return fmt.Errorf("group %s did not get %s assigned within %v", appID, input, timeout)
}
