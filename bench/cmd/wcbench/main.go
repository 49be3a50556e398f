// Command wcbench measures word count throughput of kstreams-go against Java Kafka Streams
// side by side, on the same broker and the same pre-loaded input (bench/run.sh runs it).
//
// It creates a 4-partition input topic, writes -lines lines of -words-per-line words drawn
// (Zipf-distributed, fixed seed) from a synthetic vocabulary, then for each guarantee
// (at_least_once, exactly_once_v2) runs the Java application (bench/java, WordCountDemo's
// topology) and ours (bench/cmd/wordcount) one after the other, each as its own process with
// a fresh application id and state directory, one stream thread, the same commit interval and
// cache size. A run's wall time is from starting the process until the group's committed
// offsets reach the end offsets of every input partition and of every partition of the
// repartition topic (under exactly-once the last offset of a partition is a commit marker,
// so one less is enough there). Peak RSS is the process's VmHWM and CPU its utime+stime, both
// read from /proc just before it is stopped. It prints each figure and the ratio ours/Java,
// then (unless -pipe=false) the bare sarama consume-then-produce pipe over the same input,
// in this process, as the ceiling.
//
//	wcbench -bootstrap 127.0.0.1:9092 -go-bin /path/wordcount -java-cp 'bench/java/target/bench.jar:bench/java/target/lib/*'
package main

import (
	"bufio"
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
	javaCP       string
	javaOpts     string
	goArgs       string
	impls        []string
	guarantees   []string
	pipe         bool
	timeout      time.Duration
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
	flag.StringVar(&o.javaCP, "java-cp", "", "class path of the Java application (bench/java/target)")
	flag.StringVar(&o.javaOpts, "java-opts", "", "extra JVM options, space-separated")
	flag.StringVar(&o.goArgs, "go-args", "", "extra flags of bench/cmd/wordcount, space-separated (e.g. -cpuprofile FILE)")
	impls := flag.String("impls", "java,go", "comma-separated applications to run: java, go, gobase (ratios need java and go)")
	guarantees := flag.String("guarantees", "at_least_once,exactly_once_v2", "comma-separated processing guarantees")
	flag.BoolVar(&o.pipe, "pipe", true, "also measure the bare sarama consume-then-produce pipe")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "longest a single run may take")
	linesFile := flag.String("lines-file", "", "only write the input lines to `FILE` (for the test-driver benchmarks) and exit")
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
	o.guarantees = strings.Split(*guarantees, ",")
	o.impls = strings.Split(*impls, ",")
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
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	input := "wcbench-input-" + stamp
	if err := admin.CreateTopic(input, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		return fmt.Errorf("create %s: %w", input, err)
	}
	t0 := time.Now()
	words, bytes, err := load(o, input)
	if err != nil {
		return err
	}
	fmt.Printf("loaded %d lines (%d words, %.1f MiB) into %s (%d partitions) in %v\n",
		o.lines, words, float64(bytes)/(1<<20), input, partitions, time.Since(t0).Round(time.Millisecond))
	ends, err := endOffsets(client, input)
	if err != nil {
		return err
	}

	type pair struct{ java, ours result }
	results := map[string]pair{}
	for _, g := range o.guarantees {
		var p pair
		for _, impl := range o.impls {
			appID := fmt.Sprintf("wcbench-%s-%s-%s", impl, strings.ReplaceAll(g, "_", ""), stamp)
			r, err := runApp(o, client, admin, impl, g, appID, input, ends)
			if err != nil {
				return fmt.Errorf("%s %s: %w", impl, g, err)
			}
			fmt.Printf("%-4s %-16s wall %8.2f s  %10.0f lines/s  %11.0f words/s  peak RSS %7.1f MiB  CPU %7.2f s\n",
				impl, g, r.wall.Seconds(), float64(o.lines)/r.wall.Seconds(), float64(words)/r.wall.Seconds(),
				float64(r.peakRSS)/(1<<20), r.cpu.Seconds())
			switch impl {
			case "java":
				p.java = r
			case "go":
				p.ours = r
			}
		}
		results[g] = p
	}
	if !slices.Contains(o.impls, "java") || !slices.Contains(o.impls, "go") {
		return nil
	}
	fmt.Println()
	fmt.Println("ratios ours/Java (throughput: >1 is faster; RSS and CPU: <1 is leaner)")
	for _, g := range o.guarantees {
		p := results[g]
		fmt.Printf("  %-16s throughput %.2fx  peak RSS %.2f  CPU %.2f\n", g,
			p.java.wall.Seconds()/p.ours.wall.Seconds(),
			float64(p.ours.peakRSS)/float64(p.java.peakRSS),
			p.ours.cpu.Seconds()/p.java.cpu.Seconds())
	}
	if a, okA := results["at_least_once"]; okA {
		if e, okE := results["exactly_once_v2"]; okE {
			fmt.Printf("  ours exactly_once_v2 / at_least_once throughput %.2f (Java %.2f)\n",
				a.ours.wall.Seconds()/e.ours.wall.Seconds(), a.java.wall.Seconds()/e.java.wall.Seconds())
		}
	}
	if o.pipe {
		wall, err := pipe(o, client, input, ends, stamp)
		if err != nil {
			return fmt.Errorf("pipe: %w", err)
		}
		fmt.Printf("\nbare sarama consume-then-produce pipe: wall %.2f s  %.0f lines/s\n", wall.Seconds(), float64(o.lines)/wall.Seconds())
		for _, g := range o.guarantees {
			p := results[g]
			fmt.Printf("  %-16s ours at %.0f%% of the pipe, Java at %.0f%%\n", g,
				100*wall.Seconds()/p.ours.wall.Seconds(), 100*wall.Seconds()/p.java.wall.Seconds())
		}
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
func runApp(o options, client sarama.Client, admin sarama.ClusterAdmin, impl, guarantee, appID, input string, inputEnds map[int32]int64) (result, error) {
	stateDir, err := os.MkdirTemp("", "wcbench-state-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(stateDir)
	output := appID + "-output"
	if err := admin.CreateTopic(output, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		return result{}, fmt.Errorf("create %s: %w", output, err)
	}
	var cmd *exec.Cmd
	switch impl {
	case "java":
		args := strings.Fields(o.javaOpts)
		args = append(args, "-cp", o.javaCP, "io.kstreams.bench.WordCount", strings.Join(o.bootstrap, ","), appID, input, output,
			guarantee, strconv.Itoa(o.commitMS), strconv.FormatInt(o.cacheBytes, 10), stateDir)
		cmd = exec.Command("java", args...)
	default:
		args := []string{"-bootstrap", strings.Join(o.bootstrap, ","), "-application-id", appID, "-input", input, "-output", output,
			"-commit-ms", strconv.Itoa(o.commitMS), "-cache-bytes", strconv.FormatInt(o.cacheBytes, 10), "-state-dir", stateDir}
		if guarantee == "exactly_once_v2" {
			args = append(args, "-eos")
		}
		args = append(args, strings.Fields(o.goArgs)...)
		bin := o.goBin
		if impl == "gobase" {
			bin = o.goBaseBin
		}
		cmd = exec.Command(bin, args...)
	}
	cmd.Stderr = os.Stderr
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

// pipe consumes the input with bare sarama partition consumers and produces every value to a
// fresh topic, returning the time until everything read was acknowledged.
func pipe(o options, client sarama.Client, input string, ends map[int32]int64, stamp string) (time.Duration, error) {
	out := "wcbench-pipe-" + stamp
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return 0, err
	}
	if err := admin.CreateTopic(out, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		return 0, err
	}
	start := time.Now()
	ccfg := saramaConfig()
	consumer, err := sarama.NewConsumer(o.bootstrap, ccfg)
	if err != nil {
		return 0, err
	}
	defer consumer.Close()
	pcfg := saramaConfig()
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	pcfg.Producer.RequiredAcks = sarama.WaitForAll
	pcfg.Producer.Return.Successes = false
	pcfg.Producer.Return.Errors = true
	pcfg.Producer.Flush.Bytes = 1 << 20
	pcfg.Producer.Flush.Frequency = 10 * time.Millisecond
	prod, err := sarama.NewAsyncProducer(o.bootstrap, pcfg)
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
