// Command asyncbench measures an async step against the synchronous call it replaces: records
// over -partitions partitions, each enriched by a call to a local HTTP service (or, with
// -service sleep, an in-process sleep) taking -latency. It runs, one after the other on fresh
// topics and application ids:
//
//   - async: MapValuesAsync with MaxInFlight -in-flight on one stream thread, -records records;
//   - sync: MapValuesWithKey making the same call on the stream thread, -sync-records records,
//     with one stream thread and with -partitions stream threads (one task each, the best a
//     synchronous topology can do);
//   - with -java-cp, Java Kafka Streams (io.kstreams.bench.SyncCall in bench/java) running the
//     sync topology (mapValues making the same call: a sleep, or a GET to this process's HTTP
//     service) at each num.stream.threads of -java-threads, -sync-records records each, with
//     the same guarantee and commit interval; its runs alternate with ours.
//
// Each run's wall time goes from the instance's first RUNNING state (the group joined) until the
// group's committed offsets (commit.interval.ms -commit, 100 ms by default) reach the end of the input
// (KafkaStreams.WaitCaughtUp); at-least-once commits no offset past a record an async
// step still holds, so caught up means every result is out. It prints records/s per run, the
// async bound (partitions x in-flight / latency), the async rate as a share of it, and the
// async rate over each sync rate (ours and Java's), then a summary line with the ratios against
// our sync runs and Java's best. The sync runs read fewer records than the async run, so every
// ratio compares rates, not times for the same input.
//
// Usage: go run ./bench/cmd/asyncbench -bootstrap host:port [-records 200000] [-partitions 8]
// [-latency 20ms] [-in-flight 16] [-sync-records 1000] [-service http|sleep] [-eos] [-commit 100ms]
// [-java-cp bench/java/target/bench.jar:bench/java/target/lib/*] [-java-threads 1,2,4,8] [-java-opts ...]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

func main() {
	bootstrap := flag.String("bootstrap", os.Getenv("KAFKA_BOOTSTRAP_SERVERS"), "Kafka `host:port[,...]`")
	records := flag.Int("records", 200_000, "records of the async run")
	syncRecords := flag.Int("sync-records", 1000, "records of each sync run (ours and Java's)")
	partitions := flag.Int("partitions", 8, "input partitions")
	latency := flag.Duration("latency", 20*time.Millisecond, "the service's time per call")
	inFlight := flag.Int("in-flight", 16, "MaxInFlight of the async step (per task)")
	service := flag.String("service", "http", "http (a local HTTP service) or sleep (in-process)")
	eos := flag.Bool("eos", false, "exactly_once_v2 instead of at_least_once")
	flag.DurationVar(&commitInterval, "commit", 100*time.Millisecond, "commit.interval.ms of every run, ours and Java's (Java's exactly-once default; under exactly-once each commit waits for the calls in flight)")
	javaCP := flag.String("java-cp", "", "class path of io.kstreams.bench.SyncCall (bench/java); empty: no Java runs")
	javaThreads := flag.String("java-threads", "1,2,4,8", "comma-separated num.stream.threads of Java's sync runs")
	javaOpts := flag.String("java-opts", "", "extra JVM options of Java's runs")
	flag.Parse()
	if *bootstrap == "" {
		fail(fmt.Errorf("-bootstrap (or KAFKA_BOOTSTRAP_SERVERS) is required"))
	}
	var jthreads []int
	if *javaCP != "" {
		for _, f := range strings.Split(*javaThreads, ",") {
			t, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || t < 1 {
				fail(fmt.Errorf("-java-threads: bad thread count %q", f))
			}
			jthreads = append(jthreads, t)
		}
	}
	addrs := strings.Split(*bootstrap, ",")
	call, url, stop, err := newService(*service, *latency, 4**partitions**inFlight)
	if err != nil {
		fail(err)
	}
	defer stop()
	run := fmt.Sprintf("asyncbench-%d", time.Now().UnixNano())
	if *eos {
		guarantee = kstreams.ExactlyOnceV2
	}
	java := func(threads int) float64 {
		return measureJava(*javaCP, *javaOpts, addrs, fmt.Sprintf("%s-java%d", run, threads), *syncRecords, *partitions, threads, *latency, *service, url)
	}
	// The runs alternate between ours and Java's so that a change in the machine's load
	// during the run touches both.
	javaRates := map[int]float64{}
	if len(jthreads) > 0 {
		javaRates[jthreads[0]] = java(jthreads[0])
	}
	asyncRate := measure(addrs, run+"-async", *records, *partitions, 1, func(s kstream.KStream[string, string]) kstream.KStream[string, string] {
		return s.MapValuesAsync(func(ctx context.Context, k, v string) (string, error) { return call(ctx, v) },
			processor.AsyncOptions{MaxInFlight: *inFlight})
	})
	syncStep := func(s kstream.KStream[string, string]) kstream.KStream[string, string] {
		return s.MapValuesWithKey(func(k, v string) string {
			r, err := call(context.Background(), v)
			if err != nil {
				return "error: " + err.Error()
			}
			return r
		})
	}
	sync1 := measure(addrs, run+"-sync1", *syncRecords, *partitions, 1, syncStep)
	for i, t := range jthreads {
		if i > 0 && i < len(jthreads)-1 {
			javaRates[t] = java(t)
		}
	}
	syncN := measure(addrs, run+"-syncN", *syncRecords, *partitions, *partitions, syncStep)
	if len(jthreads) > 1 {
		t := jthreads[len(jthreads)-1]
		javaRates[t] = java(t)
	}
	bound := float64(*partitions**inFlight) / latency.Seconds()
	fmt.Printf("service %s, latency %v, %d partitions, MaxInFlight %d, %s, commit.interval.ms %d\n", *service, *latency, *partitions, *inFlight, guarantee, commitInterval.Milliseconds())
	fmt.Printf("async (1 thread):        %9.0f records/s over %d records; bound %0.f/s: %.0f%% of it\n", asyncRate, *records, bound, 100*asyncRate/bound)
	fmt.Printf("sync MapValues, 1 thread: %9.1f records/s over %d records; async/sync %.0fx\n", sync1, *syncRecords, asyncRate/sync1)
	fmt.Printf("sync MapValues, %d threads: %8.1f records/s over %d records; async/sync %.0fx\n", *partitions, syncN, *syncRecords, asyncRate/syncN)
	bestT, best := 0, 0.0
	for _, t := range jthreads {
		fmt.Printf("Java sync mapValues, num.stream.threads %d: %8.1f records/s over %d records; async/Java %.0fx\n", t, javaRates[t], *syncRecords, asyncRate/javaRates[t])
		if javaRates[t] > best {
			bestT, best = t, javaRates[t]
		}
	}
	fmt.Printf("summary (%s, %s service, %v per call): async %.0f records/s = %.0f%% of the bound %.0f/s (target >= 80%%); "+
		"%.0fx our sync MapValues on 1 thread (target >= 50x), %.0fx on %d threads",
		guarantee, *service, *latency, asyncRate, 100*asyncRate/bound, bound, asyncRate/sync1, asyncRate/syncN, *partitions)
	if best > 0 {
		fmt.Printf("; %.0fx Java's best (num.stream.threads %d, %.1f records/s); our sync/Java's best: %.2fx (1 thread), %.2fx (%d threads)",
			asyncRate/best, bestT, best, sync1/best, syncN/best, *partitions)
	}
	fmt.Printf(".\nThe ratios compare rates: the sync runs (ours and Java's) read %d records each, the async run %d (a %v call per record on a stream thread cannot do the async run's input in reasonable time).\n",
		*syncRecords, *records, *latency)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "asyncbench:", err)
	os.Exit(1)
}

// newService returns the call: an HTTP GET to a local server answering after latency, or an
// in-process sleep.
func newService(kind string, latency time.Duration, conns int) (call func(context.Context, string) (string, error), url string, stop func(), err error) {
	if kind == "sleep" {
		return func(ctx context.Context, v string) (string, error) {
			select {
			case <-time.After(latency):
				return v + "!", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}, "", func() {}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(latency)
		_ = json.NewEncoder(w).Encode(map[string]string{"v": r.URL.Query().Get("v") + "!"})
	})}
	go func() { _ = srv.Serve(ln) }()
	base := "http://" + ln.Addr().String() + "/?v="
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxIdleConns: conns}}
	return func(ctx context.Context, v string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+v, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var out map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return "", err
		}
		return out["v"], nil
	}, base, func() { _ = srv.Close() }, nil
}

// guarantee is the processing guarantee of every run.
var guarantee = kstreams.AtLeastOnce

// commitInterval is commit.interval.ms of every run (-commit).
var commitInterval = 100 * time.Millisecond

// newClient connects a sarama client (and admin) to the broker.
func newClient(addrs []string) (sarama.Client, sarama.ClusterAdmin) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewMurmur2Partitioner
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		fail(err)
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		fail(err)
	}
	return client, admin
}

// fill creates the topics name-in and name-out with partitions partitions and writes n records
// (keys k0.., values 0..) to name-in.
func fill(addrs []string, name string, n, partitions int) (in, out string) {
	client, admin := newClient(addrs)
	defer client.Close()
	in, out = name+"-in", name+"-out"
	for _, t := range []string{in, out} {
		if err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: int32(partitions), ReplicationFactor: 1}, false); err != nil {
			fail(err)
		}
	}
	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		fail(err)
	}
	var batch []*sarama.ProducerMessage
	for i := range n {
		batch = append(batch, &sarama.ProducerMessage{Topic: in, Key: sarama.StringEncoder("k" + strconv.Itoa(i)), Value: sarama.StringEncoder(strconv.Itoa(i))})
		if len(batch) == 5000 || i == n-1 {
			if err := p.SendMessages(batch); err != nil {
				fail(err)
			}
			batch = batch[:0]
		}
	}
	p.Close()
	return in, out
}

// measure writes n records to a fresh topic, runs the topology step builds on threads stream
// threads until caught up, and returns records per second.
func measure(addrs []string, name string, n, partitions, threads int, step func(kstream.KStream[string, string]) kstream.KStream[string, string]) float64 {
	in, out := fill(addrs, name, n, partitions)
	b := kstream.NewStreamsBuilder()
	step(kstream.Stream(b, in, kstream.ConsumedWith(serde.String(), serde.String()))).To(out, kstream.ProducedWith(serde.String(), serde.String()))
	topo, err := b.Build()
	if err != nil {
		fail(err)
	}
	dir, _ := os.MkdirTemp("", "asyncbench-")
	defer os.RemoveAll(dir)
	app, err := kstreams.New(topo, kstreams.Config{ApplicationID: name, BootstrapServers: addrs, NumStreamThreads: threads, StateDir: dir, ProcessingGuarantee: guarantee,
		CommitInterval: commitInterval, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fail(err)
	}
	running := make(chan time.Time, 1)
	app.SetStateListener(func(n, _ kstreams.State) {
		if n == kstreams.StateRunning {
			select {
			case running <- time.Now():
			default:
			}
		}
	})
	if err := app.Start(context.Background()); err != nil {
		fail(err)
	}
	start := <-running
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	err = app.WaitCaughtUp(ctx)
	took := time.Since(start)
	cancel()
	cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
	_ = app.Close(cctx)
	ccancel()
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "asyncbench: %s: %d records in %v\n", name, n, took.Round(time.Millisecond))
	return float64(n) / took.Seconds()
}

// measureJava writes n records to a fresh topic and runs io.kstreams.bench.SyncCall (Java Kafka
// Streams, mapValues making the same call synchronously) on threads stream threads, with the
// guarantee and commit.interval.ms 100 of ours. The wall time goes from the instance's first
// RUNNING (the line it prints) until the group's committed offsets reach the end of the input,
// polled every 20 ms here: the end measured as ours is. Returns records per second.
func measureJava(cp, opts string, addrs []string, name string, n, partitions, threads int, latency time.Duration, service, url string) float64 {
	in, out := fill(addrs, name, n, partitions)
	dir, _ := os.MkdirTemp("", "asyncbench-java-")
	defer os.RemoveAll(dir)
	args := strings.Fields(opts)
	args = append(args, "-cp", cp, "io.kstreams.bench.SyncCall", strings.Join(addrs, ","), name, in, out, string(guarantee), strconv.FormatInt(commitInterval.Milliseconds(), 10),
		strconv.Itoa(threads), dir, strconv.FormatInt(latency.Milliseconds(), 10), service)
	if service == "http" {
		args = append(args, url)
	}
	cmd := exec.Command("java", args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	running := make(chan time.Time, 1)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == "running" {
				if ms, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					select {
					case running <- time.UnixMilli(ms):
					default:
					}
				}
			}
		}
		exited <- cmd.Wait()
	}()
	var start time.Time
	select {
	case start = <-running:
	case err := <-exited:
		fail(fmt.Errorf("%s: java exited before RUNNING: %v", name, err))
	case <-time.After(5 * time.Minute):
		_ = cmd.Process.Kill()
		fail(fmt.Errorf("%s: java not RUNNING after 5 minutes", name))
	}
	client, admin := newClient(addrs)
	defer client.Close()
	parts := make([]int32, partitions)
	for i := range parts {
		parts[i] = int32(i)
	}
	deadline := time.Now().Add(30 * time.Minute)
	var end time.Time
	for {
		resp, err := admin.ListConsumerGroupOffsets(name, map[string][]int32{in: parts})
		if err == nil {
			var sum int64
			for _, b := range resp.Blocks[in] {
				if b.Err == sarama.ErrNoError && b.Offset > 0 {
					sum += b.Offset
				}
			}
			if sum >= int64(n) {
				end = time.Now()
				break
			}
		}
		select {
		case err := <-exited:
			fail(fmt.Errorf("%s: java exited before caught up: %v", name, err))
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			fail(fmt.Errorf("%s: not caught up after 30 minutes", name))
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := end.Sub(start)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	fmt.Fprintf(os.Stderr, "asyncbench: %s: %d records in %v\n", name, n, took.Round(time.Millisecond))
	return float64(n) / took.Seconds()
}
