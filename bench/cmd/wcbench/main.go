// Command wcbench measures word count throughput of kstreams-go against Java Kafka Streams
// side by side, on the same broker and the same pre-loaded input (bench/run.sh runs it).
//
// It creates a 4-partition input topic, writes -lines lines of -words-per-line words drawn
// (Zipf-distributed, fixed seed) from a synthetic vocabulary, then for each guarantee
// (at_least_once, exactly_once_v2) runs the Java application (bench/java, WordCountDemo's
// topology) and ours (bench/cmd/wordcount) one after the other, each as its own process with
// a fresh application id and state directory, the same commit interval and cache size. Each
// application runs in every configuration asked for, each a contender: Java at every
// num.stream.threads of -java-threads, ours at every num.stream.threads[:num.task.executors]
// of -go-configs (default: one thread each, ours with its default executors). With -rounds N
// every contender runs N times, the order reversed in even rounds so contenders interleave,
// and the summary gives min / median / max of each figure and of the per-round ratios: ours
// against Java at equal configuration (one stream thread each) and each at its best
// configuration (highest median throughput), CPU seconds per million lines, peak RSS,
// exactly-once as a percentage of at-least-once, and each run as a percentage of the pipes
// of the same round and of the batch-level word pipe run beside it. A run's wall time is from
// starting the process until the group's committed offsets reach the end offsets of every input
// partition and of every partition of the repartition topic (under exactly-once the last offset
// of a partition is a commit marker, so one less is enough there). Peak RSS is the process's
// VmHWM and CPU its utime+stime, both read from /proc just before it is stopped. It prints each
// figure and the ratios ours/Java (when both ran). Unless -pipe=false, each round also measures
// ceilings in this process over the same input, each timed from start until the last record
// produced is acknowledged, and each run's throughput as a percentage of each; with bare sarama
// (no Kafka Streams):
//
//   - the pipe: consumes the 4 input partitions and produces every line once, unchanged, to
//     a 4-partition topic (one record out per line in). It is the one-hop ceiling: the word
//     count moves over ten times as many records, so it cannot come near it.
//   - the word pipe (only with -word-pipe: about 45 s per million lines on a 2-CPU machine):
//     the word count's broker traffic without state, cache or commits. It consumes the lines,
//     splits them as the word count does and produces every word (key and value the word, as
//     in the word count's repartition topic) to a 4-partition topic, partition murmur2(word)
//     as Java's default partitioner; concurrently it consumes that topic to its end and
//     produces one record per word (key the word, an 8-byte value as the count's Long) to a
//     4-partition output topic. It does not deduplicate the output as the word count's cache
//     does (it writes every word where the word count writes the last count of a word per
//     commit interval), so it does more output work than the word count:
//     a conservative ceiling on that leg, an upper bound on the rest.
//
// Both pipes use the same consumer (sarama's defaults) and producer configuration (acks=all,
// 1 MiB / 10 ms batches), one goroutine per partition and stage, one producer. The ceiling the
// targets use, the batch-level word pipe, moves the word pipe's records with the library's own
// fetch and produce layer (internal/kafka), configured as a stream thread's: the ceiling of our
// data path. Unless -pipe=false, it also runs beside every run of ours (go, gobase, goplain):
// just before it, unless the step before was already that pipe (a run of ours, or the previous
// round's end), and just after it; each run of ours is also reported as a percentage of the mean
// throughput of those two pipe runs: the machine's speed drifts within minutes, and the pipes at
// a round's end run minutes after its first runs.
// Before the first round, an untimed pass of the batch-level word pipe warms the broker up (the
// first run of a sweep, whichever it was, ran 10-45% slower than the same run later).
// An empty -impls runs only the pipes.
//
// With -latency-rates it then measures end-to-end latency at fixed input rates with default
// configurations (latency.go); -throughput=false skips the throughput part.
//
//	wcbench -bootstrap 127.0.0.1:9092 -go-bin /path/wordcount -java-cp 'bench/java/target/bench.jar:bench/java/target/lib/*'
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/wc"
)

const partitions = 4

type options struct {
	bootstrap    []string
	lines        int
	wordsPerLine int
	commitMS     int
	cacheBytes   int64
	goBin        string
	goBaseBin    string
	goPlainBin   string
	// brokerPID is the broker's process on this machine (0: not measured).
	brokerPID  int
	javaCP     string
	javaOpts   string
	goArgs     string
	impls      []string
	guarantees []string
	pipe       bool
	// wordPipe also runs the bare sarama word pipe each round (-word-pipe).
	wordPipe   bool
	throughput bool
	timeout    time.Duration
	// javaThreads are the num.stream.threads Java runs at; goConfigs ours' configurations;
	// rounds how often every contender runs (interleaved).
	javaThreads []int
	goConfigs   []contender
	rounds      int
	// latencyRates are the input rates (lines/s) of the latency runs (none: no latency runs);
	// latencyDuration how long each run's load lasts.
	latencyRates    []int
	latencyDuration time.Duration
}

func main() {
	var o options
	bootstrap := flag.String("bootstrap", "", "`host:port` of the broker")
	flag.IntVar(&o.lines, "lines", 2_000_000, "input lines")
	flag.IntVar(&o.wordsPerLine, "words-per-line", 10, "words per line")
	flag.IntVar(&o.commitMS, "commit-ms", 1000, "commit.interval.ms of both applications")
	flag.Int64Var(&o.cacheBytes, "cache-bytes", 10<<20, "statestore.cache.max.bytes of both applications")
	flag.StringVar(&o.goBin, "go-bin", "", "path of the built bench/cmd/wordcount")
	flag.StringVar(&o.goBaseBin, "go-base-bin", "", "path of another build of bench/cmd/wordcount, run as impl \"gobase\" (before/after comparisons on the same input)")
	flag.StringVar(&o.goPlainBin, "go-plain-bin", "", "path of bench/cmd/wordcount built with -tags kstreams_nometrics (records no metrics), run as impl \"goplain\": the baseline of the recording cost")
	flag.StringVar(&o.javaCP, "java-cp", "", "class path of the Java application (bench/java/target)")
	flag.StringVar(&o.javaOpts, "java-opts", "", "extra JVM options, space-separated")
	flag.IntVar(&o.brokerPID, "broker-pid", 0, "process id of the broker, when it runs on this machine: its CPU during each run is reported per line, with the CPU-bound ceiling of each contender on this machine (a broker other clients use meanwhile counts their load too)")
	flag.StringVar(&o.goArgs, "go-args", "", "extra flags of bench/cmd/wordcount, space-separated (e.g. -cpuprofile FILE)")
	impls := flag.String("impls", "java,go", "comma-separated applications to run: java, go, gobase, goplain, or none (ratios need java and go; -pipe's fractions name those that ran)")
	guarantees := flag.String("guarantees", "at_least_once,exactly_once_v2", "comma-separated processing guarantees")
	flag.BoolVar(&o.pipe, "pipe", true, "also measure the pipes: each round's line pipe and batch-level word pipe, and the batch-level word pipe beside every run of ours")
	flag.BoolVar(&o.wordPipe, "word-pipe", false, "with -pipe, also run the bare sarama word pipe each round (about 45 s per million lines on a 2-CPU machine)")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "longest a single run may take")
	linesFile := flag.String("lines-file", "", "only write the input lines to `FILE` (for the test-driver benchmarks) and exit")
	latencyRates := flag.String("latency-rates", "", "comma-separated input rates in lines/s of end-to-end latency runs with default configurations (e.g. 1000,10000); empty: none")
	flag.DurationVar(&o.latencyDuration, "latency-seconds", 60*time.Second, "load duration of each latency run")
	throughput := flag.Bool("throughput", true, "run the throughput comparison")
	javaThreads := flag.String("java-threads", "1", "comma-separated num.stream.threads Java's word count runs at, each a contender")
	goConfigs := flag.String("go-configs", "1", "comma-separated configurations of ours, each a contender: `threads[:executors]` (num.stream.threads, num.task.executors; no executors: the library's default)")
	flag.IntVar(&o.rounds, "rounds", 1, "throughput runs of every contender, interleaved (even rounds in reverse order); min / median / max reported")
	flag.Parse()
	if *linesFile != "" {
		if err := writeLines(o, *linesFile); err != nil {
			fmt.Fprintln(os.Stderr, "wcbench:", err)
			os.Exit(1)
		}
		return
	}
	if *bootstrap == "" || o.goBin == "" || o.javaCP == "" {
		fmt.Fprintln(os.Stderr, "wcbench: -bootstrap, -go-bin and -java-cp are required")
		os.Exit(2)
	}
	o.bootstrap = strings.Split(*bootstrap, ",")
	for _, r := range strings.Split(*latencyRates, ",") {
		if r = strings.TrimSpace(r); r != "" {
			n, err := strconv.Atoi(r)
			if err != nil || n <= 0 {
				fmt.Fprintln(os.Stderr, "wcbench: -latency-rates: not a positive integer:", r)
				os.Exit(2)
			}
			o.latencyRates = append(o.latencyRates, n)
		}
	}
	o.throughput = *throughput
	for _, t := range strings.Split(*javaThreads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "wcbench: -java-threads: not a positive integer:", t)
			os.Exit(2)
		}
		if slices.Contains(o.javaThreads, n) {
			fmt.Fprintln(os.Stderr, "wcbench: -java-threads: listed twice:", n)
			os.Exit(2)
		}
		o.javaThreads = append(o.javaThreads, n)
	}
	var err error
	if o.goConfigs, err = parseGoConfigs(*goConfigs); err != nil {
		fmt.Fprintln(os.Stderr, "wcbench:", err)
		os.Exit(2)
	}
	if o.rounds < 1 {
		fmt.Fprintln(os.Stderr, "wcbench: -rounds must be at least 1")
		os.Exit(2)
	}
	o.guarantees = strings.Split(*guarantees, ",")
	for _, impl := range strings.Split(*impls, ",") {
		switch impl {
		case "", "none": // -impls none (or '') measures only the pipes
			continue
		case "java", "go", "gobase", "goplain":
			o.impls = append(o.impls, impl)
		default:
			fmt.Fprintf(os.Stderr, "wcbench: -impls: unknown application %q (java, go, gobase, goplain or none)\n", impl)
			os.Exit(2)
		}
		bin := map[string]string{"gobase": o.goBaseBin, "goplain": o.goPlainBin}
		if b, ok := bin[impl]; ok && b == "" {
			fmt.Fprintf(os.Stderr, "wcbench: -impls %s needs -go-%s-bin\n", impl, strings.TrimPrefix(impl, "go"))
			os.Exit(2)
		}
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "wcbench:", err)
		os.Exit(1)
	}
}

func saramaConfig() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "wcbench"
	c.Version = sarama.V4_0_0_0
	return c
}

// result is one application run.
type result struct {
	wall    time.Duration
	peakRSS int64 // bytes
	cpu     time.Duration
	// brokerCPU is the broker's utime+stime during the run (-broker-pid; 0 without).
	brokerCPU time.Duration
	// pipeBefore and pipeAfter are the walls of the batch-level word pipe run just before and
	// just after this run (ours, with -pipe); 0 when it did not run beside it.
	pipeBefore, pipeAfter time.Duration
}

// besidePipe returns the run's throughput as a fraction of the batch-level word pipe run beside
// it: its throughput over the mean throughput of the pipe just before and just after it; ok is
// false when the pipe did not run on both sides (or the run has no wall).
func (r result) besidePipe() (frac float64, ok bool) {
	if r.pipeBefore <= 0 || r.pipeAfter <= 0 || r.wall <= 0 {
		return 0, false
	}
	pipe := (1/r.pipeBefore.Seconds() + 1/r.pipeAfter.Seconds()) / 2 // runs per second
	return (1 / r.wall.Seconds()) / pipe, true
}

func run(o options) error {
	client, err := sarama.NewClient(o.bootstrap, saramaConfig())
	if err != nil {
		return err
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return err
	}
	if o.throughput {
		if err := runThroughput(o, client, admin); err != nil {
			return err
		}
	}
	if len(o.latencyRates) > 0 && len(o.impls) > 0 {
		return runLatency(o, client, admin)
	}
	return nil
}

// vocabulary is n distinct lower-case words of 3 to 10 letters, from a fixed seed.
func vocabulary(r *rand.Rand, n int) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	b := make([]byte, 10)
	for len(out) < n {
		l := 3 + r.Intn(8)
		for i := 0; i < l; i++ {
			b[i] = byte('a' + r.Intn(26))
		}
		w := string(b[:l])
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// genLines calls emit with each input line: o.wordsPerLine words drawn from a Zipf
// distribution over a synthetic vocabulary of 100 000 words, fixed seed.
func genLines(o options, emit func(string)) {
	r := rand.New(rand.NewSource(1))
	vocab := vocabulary(r, 100_000)
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	var sb strings.Builder
	for i := 0; i < o.lines; i++ {
		sb.Reset()
		for j := 0; j < o.wordsPerLine; j++ {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(vocab[zipf.Uint64()])
		}
		emit(sb.String())
	}
}

// writeLines writes the input lines to file, one a line.
func writeLines(o options, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	genLines(o, func(l string) {
		w.WriteString(l)
		w.WriteByte('\n')
	})
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// load writes the lines (null keys, round robin over the partitions) and returns the number
// of words and of value bytes written.
func load(o options, topic string) (int64, int64, error) {
	cfg := saramaConfig()
	cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = false
	cfg.Producer.Return.Errors = true
	cfg.Producer.Flush.Bytes = 1 << 20
	cfg.Producer.Flush.Frequency = 10 * time.Millisecond
	p, err := sarama.NewAsyncProducer(o.bootstrap, cfg)
	if err != nil {
		return 0, 0, err
	}
	var firstErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := range p.Errors() {
			if firstErr == nil {
				firstErr = e
			}
		}
	}()
	var words, bytes int64
	genLines(o, func(l string) {
		words += int64(o.wordsPerLine)
		bytes += int64(len(l))
		p.Input() <- &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(l)}
	})
	p.AsyncClose()
	wg.Wait()
	return words, bytes, firstErr
}

func endOffsets(client sarama.Client, topic string) (map[int32]int64, error) {
	if err := client.RefreshMetadata(topic); err != nil {
		return nil, err
	}
	ps, err := client.Partitions(topic)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]int64, len(ps))
	for _, p := range ps {
		off, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, fmt.Errorf("end offset of %s-%d: %w", topic, p, err)
		}
		out[p] = off
	}
	return out, nil
}

// runApp starts one application process and waits until its group has committed everything.
func runApp(o options, client sarama.Client, admin sarama.ClusterAdmin, c contender, guarantee, appID, input string, inputEnds map[int32]int64) (result, error) {
	stateDir, err := os.MkdirTemp("", "wcbench-state-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(stateDir)
	output := appID + "-output"
	defer deleteTopics(admin, appID+"-")
	if err := admin.CreateTopic(output, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		return result{}, fmt.Errorf("create %s: %w", output, err)
	}
	var cmd *exec.Cmd
	switch c.impl {
	case "java":
		args := strings.Fields(o.javaOpts)
		args = append(args, "-cp", o.javaCP, "io.kstreams.bench.WordCount", strings.Join(o.bootstrap, ","), appID, input, output,
			guarantee, strconv.Itoa(o.commitMS), strconv.FormatInt(o.cacheBytes, 10), stateDir, strconv.Itoa(c.threads))
		cmd = exec.Command("java", args...)
	default:
		args := []string{"-bootstrap", strings.Join(o.bootstrap, ","), "-application-id", appID, "-input", input, "-output", output,
			"-commit-ms", strconv.Itoa(o.commitMS), "-cache-bytes", strconv.FormatInt(o.cacheBytes, 10), "-state-dir", stateDir}
		if c.threads != 1 || c.executors > 0 { // only then: a -go-base-bin built before these flags still runs
			args = append(args, "-threads", strconv.Itoa(c.threads), "-executors", strconv.Itoa(c.executors))
		}
		if guarantee == "exactly_once_v2" {
			args = append(args, "-eos")
		}
		args = append(args, strings.Fields(o.goArgs)...)
		bin := o.goBin
		switch c.impl {
		case "gobase":
			bin = o.goBaseBin
		case "goplain":
			bin = o.goPlainBin
		}
		cmd = exec.Command(bin, args...)
	}
	cmd.Stderr = os.Stderr
	var broker0 time.Duration
	if o.brokerPID > 0 {
		if _, broker0, err = procStats(o.brokerPID); err != nil {
			return result{}, fmt.Errorf("broker process %d: %w", o.brokerPID, err)
		}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	repartition := appID + "-counts-store-repartition"
	slack := int64(0)
	if guarantee == "exactly_once_v2" {
		slack = 1 // the commit marker after the last record
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(o.timeout)
	for {
		select {
		case err := <-exited:
			return result{}, fmt.Errorf("the process ended before committing its input: %v", err)
		case <-deadline:
			stop()
			return result{}, fmt.Errorf("not done within %v", o.timeout)
		case <-tick.C:
		}
		done, err := committed(client, admin, appID, input, inputEnds, repartition, slack)
		if err != nil {
			stop()
			return result{}, err
		}
		if done {
			break
		}
	}
	r := result{wall: time.Since(start)}
	r.peakRSS, r.cpu, err = procStats(cmd.Process.Pid)
	if o.brokerPID > 0 && err == nil {
		var broker1 time.Duration
		if _, broker1, err = procStats(o.brokerPID); err == nil {
			r.brokerCPU = broker1 - broker0
		}
	}
	stop()
	return r, err
}

// committed reports whether group appID has committed every input offset and every
// repartition offset (less slack).
func committed(client sarama.Client, admin sarama.ClusterAdmin, appID, input string, inputEnds map[int32]int64, repartition string, slack int64) (bool, error) {
	ps := make([]int32, 0, partitions)
	for p := range inputEnds {
		ps = append(ps, p)
	}
	offs, err := admin.ListConsumerGroupOffsets(appID, map[string][]int32{input: ps, repartition: ps})
	if err != nil {
		return false, nil // the group may not exist yet
	}
	for p, end := range inputEnds {
		b := offs.GetBlock(input, p)
		if end > 0 && (b == nil || b.Offset < end) {
			return false, nil
		}
	}
	repEnds, err := endOffsets(client, repartition)
	if err != nil {
		return false, nil // not created yet
	}
	for p, end := range repEnds {
		b := offs.GetBlock(repartition, p)
		if end > 0 && (b == nil || b.Offset < end-slack) {
			return false, nil
		}
	}
	return true, nil
}

// procStats reads peak RSS (VmHWM) and utime+stime of a live process.
func procStats(pid int) (int64, time.Duration, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	var hwm int64
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			hwm = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields after the command: state is f[0]; utime and stime are fields 14 and 15 of the
	// line, f[11] and f[12] here; in clock ticks of 1/100 s (CLK_TCK on Linux).
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return hwm, time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// pipeConsumerConfig is the consumer configuration of both pipes: sarama's defaults.
func pipeConsumerConfig() *sarama.Config { return saramaConfig() }

// pipeProducerConfig is the producer configuration of both pipes: partitions chosen by the
// caller (sarama's manual partitioner), acks=all, errors only (no per-record success
// reports), batches flushed at 1 MiB or every 10 ms.
func pipeProducerConfig() *sarama.Config {
	c := saramaConfig()
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = false
	c.Producer.Return.Errors = true
	c.Producer.Flush.Bytes = 1 << 20
	c.Producer.Flush.Frequency = 10 * time.Millisecond
	return c
}

// pipe consumes the input with bare sarama partition consumers and produces every value to a
// fresh topic, returning the time until everything read was acknowledged.
func pipe(o options, client sarama.Client, input string, ends map[int32]int64, stamp string) (time.Duration, error) {
	out := "wcbench-pipe-" + stamp
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return 0, err
	}
	defer deleteTopics(admin, out)
	if err := admin.CreateTopic(out, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		return 0, err
	}
	start := time.Now()
	consumer, err := sarama.NewConsumer(o.bootstrap, pipeConsumerConfig())
	if err != nil {
		return 0, err
	}
	defer consumer.Close()
	prod, err := sarama.NewAsyncProducer(o.bootstrap, pipeProducerConfig())
	if err != nil {
		return 0, err
	}
	var perr atomic.Value
	var ew sync.WaitGroup
	ew.Add(1)
	go func() {
		defer ew.Done()
		for e := range prod.Errors() {
			perr.CompareAndSwap(nil, e)
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, partitions)
	for p, end := range ends {
		if end == 0 {
			continue
		}
		pc, err := consumer.ConsumePartition(input, p, sarama.OffsetOldest)
		if err != nil {
			return 0, err
		}
		wg.Add(1)
		go func(p int32, end int64, pc sarama.PartitionConsumer) {
			defer wg.Done()
			defer pc.Close()
			for m := range pc.Messages() {
				prod.Input() <- &sarama.ProducerMessage{Topic: out, Partition: p, Key: sarama.ByteEncoder(m.Key), Value: sarama.ByteEncoder(m.Value)}
				if m.Offset >= end-1 {
					return
				}
			}
			errs <- fmt.Errorf("partition %d ended early", p)
		}(p, end, pc)
	}
	wg.Wait()
	prod.AsyncClose()
	ew.Wait()
	wall := time.Since(start)
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	if e, ok := perr.Load().(error); ok {
		return 0, e
	}
	return wall, nil
}

// wordPipe is the word count's broker traffic without Kafka Streams: bare sarama, no state,
// no cache, no commits. Stage one consumes the input lines, splits each with wc.SplitWords
// and produces every word (key and value the word's bytes, as the word count's repartition
// topic holds them) to a fresh 4-partition topic, the partition murmur2(key) as Java's
// default partitioner picks it; stage two consumes that topic from the start, concurrently,
// up to the last word stage one wrote, and produces one record per word (key the word, value
// 8 bytes, the size of the word count's Long count) to a fresh 4-partition output topic, same
// partition. Both stages run one goroutine per partition and share one producer with the
// pipe's configuration. It returns the time from start until every record produced was
// acknowledged, and the number of words.
//
// The output leg is not deduplicated: where the word count's cache lets through only the
// last count of each word per commit interval, this writes every word, so it does more
// output work than the word count does and the ceiling is conservative on that leg.
func wordPipe(o options, client sarama.Client, input string, ends map[int32]int64, stamp string) (time.Duration, int64, error) {
	mid := "wcbench-wordpipe-repartition-" + stamp
	out := "wcbench-wordpipe-output-" + stamp
	if err := createTopics(client, mid, out); err != nil {
		return 0, 0, err
	}
	defer deleteCreated(client, mid, out)
	start := time.Now()
	consumer, err := sarama.NewConsumer(o.bootstrap, pipeConsumerConfig())
	if err != nil {
		return 0, 0, err
	}
	defer consumer.Close()
	prod, err := sarama.NewAsyncProducer(o.bootstrap, pipeProducerConfig())
	if err != nil {
		return 0, 0, err
	}
	var perr atomic.Value
	var ew sync.WaitGroup
	ew.Add(1)
	go func() {
		defer ew.Done()
		for e := range prod.Errors() {
			perr.CompareAndSwap(nil, e)
		}
	}()
	errs := make(chan error, 2*partitions)

	// Stage two: one goroutine per partition of the repartition topic, started first so it
	// reads while stage one writes. want[p] (words stage one sent to p) is known once
	// wantKnown is closed; the topic is fresh and the producer not idempotent, so offsets
	// run 0..want[p]-1.
	var want [partitions]int64
	wantKnown := make(chan struct{})
	count := make([]byte, 8)
	var wg2 sync.WaitGroup
	for p := int32(0); p < partitions; p++ {
		pc, err := consumer.ConsumePartition(mid, p, sarama.OffsetOldest)
		if err != nil {
			return 0, 0, err
		}
		wg2.Add(1)
		go func(p int32, pc sarama.PartitionConsumer) {
			defer wg2.Done()
			defer pc.Close()
			var n int64
			known := wantKnown
			for {
				if known == nil && n >= want[p] {
					return
				}
				select {
				case m, ok := <-pc.Messages():
					if !ok {
						errs <- fmt.Errorf("%s-%d ended early", mid, p)
						return
					}
					n++
					prod.Input() <- &sarama.ProducerMessage{Topic: out, Partition: p, Key: sarama.ByteEncoder(m.Key), Value: sarama.ByteEncoder(count)}
				case <-known:
					known = nil
				}
			}
		}(p, pc)
	}

	// Stage one: one goroutine per input partition.
	var sent [partitions]atomic.Int64
	part := sarama.NewMurmur2Partitioner(mid)
	var wg1 sync.WaitGroup
	for p, end := range ends {
		if end == 0 {
			continue
		}
		pc, err := consumer.ConsumePartition(input, p, sarama.OffsetOldest)
		if err != nil {
			return 0, 0, err
		}
		wg1.Add(1)
		go func(p int32, end int64, pc sarama.PartitionConsumer) {
			defer wg1.Done()
			defer pc.Close()
			for m := range pc.Messages() {
				for _, w := range wc.SplitWords(string(m.Value)) {
					msg := &sarama.ProducerMessage{Topic: mid, Key: sarama.StringEncoder(w), Value: sarama.StringEncoder(w)}
					wp, err := part.Partition(msg, partitions)
					if err != nil {
						errs <- err
						return
					}
					msg.Partition = wp
					sent[wp].Add(1)
					prod.Input() <- msg
				}
				if m.Offset >= end-1 {
					return
				}
			}
			errs <- fmt.Errorf("partition %d ended early", p)
		}(p, end, pc)
	}
	wg1.Wait()
	var words int64
	var failed error
	select {
	case failed = <-errs:
	default:
	}
	for p := range want {
		want[p] = sent[p].Load()
		if failed != nil {
			want[p] = 0 // stage two stops instead of waiting for words that may never come
		}
		words += want[p]
	}
	close(wantKnown)
	wg2.Wait()
	if failed != nil {
		prod.AsyncClose()
		ew.Wait()
		return 0, 0, failed
	}
	prod.AsyncClose()
	ew.Wait()
	wall := time.Since(start)
	select {
	case err := <-errs:
		return 0, 0, err
	default:
	}
	if e, ok := perr.Load().(error); ok {
		return 0, 0, e
	}
	return wall, words, nil
}

// createTopics creates fresh 4-partition topics and waits for their leaders.
func createTopics(client sarama.Client, topics ...string) error {
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return err
	}
	for _, t := range topics {
		if err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
			return fmt.Errorf("create %s: %w", t, err)
		}
		if err := awaitLeaders(client, t); err != nil {
			return err
		}
	}
	return nil
}

// deleteTopics deletes every topic whose name is or starts with one of prefixes (an
// application's output, changelog and repartition topics all start with its application.id
// and a dash), so that rounds of a benchmark do not fill the broker's disk: a run of
// several rounds wrote tens of GB. A failure is printed, not returned; the run goes on.
func deleteTopics(admin sarama.ClusterAdmin, prefixes ...string) {
	topics, err := admin.ListTopics()
	if err != nil {
		fmt.Fprintf(os.Stderr, "wcbench: list topics to delete: %v\n", err)
		return
	}
	for t := range topics {
		for _, p := range prefixes {
			if strings.HasPrefix(t, p) {
				if err := admin.DeleteTopic(t); err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
					fmt.Fprintf(os.Stderr, "wcbench: delete topic %s: %v\n", t, err)
				}
				break
			}
		}
	}
}

// deleteCreated is deleteTopics for callers that hold a client rather than an admin.
func deleteCreated(client sarama.Client, topics ...string) {
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wcbench: delete topics: %v\n", err)
		return
	}
	deleteTopics(admin, topics...)
}

// awaitLeaders waits (up to 30 s) until every partition of a freshly created topic has a
// leader that answers offset requests, so consumers started on it right away do not fail
// with NOT_LEADER_OR_FOLLOWER.
func awaitLeaders(client sarama.Client, topic string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := client.RefreshMetadata(topic)
		if err == nil {
			for p := int32(0); p < partitions && err == nil; p++ {
				_, err = client.GetOffset(topic, p, sarama.OffsetOldest)
			}
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("partitions of %s without a leader after 30 s: %w", topic, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
