// Command failbench is the fail-over benchmark of bench/run.sh: two instances of a count
// (Pebble store for ours, RocksDB for Java Kafka Streams; logged to a changelog; no standbys;
// one stream thread each) on a real broker, 8 partitions, a steady input rate, session timeout
// 10 s; one instance is SIGKILLed and the survivor takes over its tasks, restoring their
// changelogs. It measures, on the survivor, how long the partitions it KEPT go without output
// while it restores the moved ones, and how long the moved tasks take to restore and output
// again. Ours (bench/cmd/failbench -mode instance) and Java's (io.kstreams.bench.Failover)
// run one after the other on the same broker, with the same sizes.
//
// Two modes:
//
//	failbench -mode drive -bootstrap HOST:PORT -java-cp CP [-impls java,go] [-records 2000000]
//	    [-rate 2000] [-warmup 20s] [-after 5s] [-rounds 2] [-session-ms 10000] [-commit-ms 1000]
//
// runs, per round and per application (interleaved: Java then ours in odd rounds, ours then
// Java in even ones), with a fresh application id and fresh topics each time:
//
//  1. creates the 8-partition input and output topics and starts both instances (a fresh
//     state directory each), the changelogs empty, so the group balances at once (the
//     instances print their running tasks; the driver waits until the 8 partitions are split
//     between them and stay so for 2 s);
//  2. writes -records records straight into the changelog partitions of the instance that
//     will be killed (its tasks' state, as the count would have written it: String keys, Long
//     values), so the survivor restores exactly that many records when it takes them over;
//  3. produces -rate records/s (keys "p<partition>-k<n>", to partition <partition>, round
//     robin) and reads the output topic from the start, noting the arrival time of every
//     output record per input partition (the partition is in the key);
//  4. after -warmup, SIGKILLs the victim; waits until the survivor has restored every moved
//     partition (its restore listener prints the events) and each has output again, then
//     -after more; stops the survivor with SIGTERM.
//
// Per run it prints one line:
//
//	failover impl=go round=1 restored=2010000 restore_s=1.52 kill_to_restore_s=10.9 moved_back_s=1.61
//	    kill_to_moved_s=12.6 kept_gap_s=1.70 kept_silent_s=1.68 baseline_gap_s=0.12
//
// restored is the number of records the survivor's restore listener reports for the moved
// partitions (the -records written before the load and what the victim wrote during it);
// restore_s is from the survivor's first onRestoreStart of a moved partition after the kill to
// its last onRestoreEnd; kill_to_restore_s from the kill to that first start (session timeout and
// rebalance); moved_back_s from that first start until every moved partition has output again;
// kill_to_moved_s from the kill until then. kept_gap_s is the longest gap between consecutive
// output records of any single kept partition from the last record before the kill to the
// end of the run (end included); kept_silent_s the longest time in which no kept partition
// output anything at all; baseline_gap_s the longest per-partition gap (all 8) in the 10 s
// before the kill, for comparison. At the end it prints min / median / max of each figure
// per application and the ratios ours/Java.
//
//	failbench -mode instance -bootstrap HOST:PORT -application-id A -input IN -output OUT
//	    -state-dir DIR [-session-ms 10000] [-commit-ms 1000] [-p property=value]...
//
// runs our count until SIGTERM (the survivor) or SIGKILL, printing events on stdout, each
// "event <unix ms> <kind> ...": "tasks <state> <partitions, comma-separated or ->" whenever the
// state or set of running active tasks changes, "restore-start <partition> <from> <to>",
// "restore-end <partition> <total>". io.kstreams.bench.Failover prints the same.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// partitions of the input, output and changelog topics.
const partitions = 8

// storeName is the count's store; its changelog is <application.id>-Counts-changelog.
const storeName = "Counts"

func main() {
	mode := flag.String("mode", "", "`drive` or `instance`")
	bootstrap := flag.String("bootstrap", "", "`host:port[,...]` of the cluster")
	sessionMS := flag.Int("session-ms", 10000, "session.timeout.ms of both instances")
	commitMS := flag.Int("commit-ms", 1000, "commit.interval.ms of both instances")
	// drive
	var d driver
	flag.StringVar(&d.javaCP, "java-cp", "", "drive: class path of io.kstreams.bench.Failover")
	flag.StringVar(&d.javaOpts, "java-opts", "", "drive: extra JVM options, space-separated")
	impls := flag.String("impls", "java,go", "drive: comma-separated applications: java, go")
	flag.IntVar(&d.records, "records", 2_000_000, "drive: changelog records of the killed instance's tasks (what the survivor restores)")
	flag.IntVar(&d.rate, "rate", 2000, "drive: input records/s")
	flag.DurationVar(&d.warmup, "warmup", 20*time.Second, "drive: load before the kill")
	flag.DurationVar(&d.after, "after", 5*time.Second, "drive: load after the moved partitions output again")
	flag.DurationVar(&d.timeout, "timeout", 5*time.Minute, "drive: longest wait for any one step")
	flag.IntVar(&d.rounds, "rounds", 2, "drive: runs per application")
	// instance
	appID := flag.String("application-id", "", "instance: application.id")
	input := flag.String("input", "", "instance: input topic")
	output := flag.String("output", "", "instance: output topic")
	stateDir := flag.String("state-dir", "", "instance: state.dir")
	props := map[string]string{}
	flag.Func("p", "instance: another Kafka Streams `property=value` (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("%q is not property=value", s)
		}
		props[k] = v
		return nil
	})
	flag.Parse()
	if *bootstrap == "" {
		fmt.Fprintln(os.Stderr, "failbench: -bootstrap is required")
		os.Exit(2)
	}
	addrs := strings.Split(*bootstrap, ",")
	var err error
	switch *mode {
	case "drive":
		d.addrs, d.sessionMS, d.commitMS = addrs, *sessionMS, *commitMS
		for _, i := range strings.Split(*impls, ",") {
			if i != "java" && i != "go" {
				fmt.Fprintln(os.Stderr, "failbench: -impls: unknown application", i)
				os.Exit(2)
			}
			d.impls = append(d.impls, i)
		}
		if slices.Contains(d.impls, "java") && d.javaCP == "" {
			fmt.Fprintln(os.Stderr, "failbench: -java-cp is required for java")
			os.Exit(2)
		}
		if d.self, err = os.Executable(); err == nil {
			err = d.run()
		}
	case "instance":
		if *appID == "" || *input == "" || *output == "" || *stateDir == "" {
			fmt.Fprintln(os.Stderr, "failbench: -application-id, -input, -output and -state-dir are required with -mode instance")
			os.Exit(2)
		}
		props["session.timeout.ms"] = strconv.Itoa(*sessionMS)
		props["commit.interval.ms"] = strconv.Itoa(*commitMS)
		err = instance(addrs, *appID, *input, *output, *stateDir, props)
	default:
		fmt.Fprintln(os.Stderr, "failbench: -mode must be drive or instance")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "failbench:", err)
		os.Exit(1)
	}
}

// --- instance ---

// eventOut prints the instance's events, one a line, from any goroutine.
var eventOut = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriter(os.Stdout)}

func event(format string, args ...any) {
	eventOut.Lock()
	defer eventOut.Unlock()
	fmt.Fprintf(eventOut.w, "event %d "+format+"\n", append([]any{time.Now().UnixMilli()}, args...)...)
	eventOut.w.Flush()
}

// countProcessor counts the records of every key in the store "Counts" and forwards each
// new count with the input record's timestamp.
type countProcessor struct {
	ctx processor.ProcessorContext[string, int64]
	kv  store.KeyValueStore[string, int64]
}

func (p *countProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	kv, err := processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, storeName)
	p.kv = kv
	return err
}

func (p *countProcessor) Process(r processor.Record[string, string]) error {
	old, _, err := p.kv.Get(r.Key)
	if err != nil {
		return err
	}
	if err := p.kv.Put(r.Key, old+1); err != nil {
		return err
	}
	return p.ctx.Forward(processor.NewRecord(r.Key, old+1, r.Timestamp))
}

func (p *countProcessor) Close() error { return nil }

// restoreEvents prints the restore listener's start and end events.
type restoreEvents struct{}

func (restoreEvents) OnRestoreStart(tp changelog.TopicPartition, _ string, from, to int64) {
	event("restore-start %d %d %d", tp.Partition, from, to)
}
func (restoreEvents) OnBatchRestored(changelog.TopicPartition, string, int64, int64) {}
func (restoreEvents) OnRestoreEnd(tp changelog.TopicPartition, _ string, total int64) {
	event("restore-end %d %d", tp.Partition, total)
}

func instance(addrs []string, appID, input, output, stateDir string, props map[string]string) error {
	topo := processor.NewTopology()
	if err := topo.AddSource("Source", []string{input},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())); err != nil {
		return err
	}
	if err := topo.AddProcessor("Count", processor.ProcessorSupplierFunc[string, string, string, int64](
		func() processor.Processor[string, string, string, int64] { return &countProcessor{} }), "Source"); err != nil {
		return err
	}
	kv := store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore(storeName), serde.String(), serde.Long())
	if err := topo.AddStateStore(kv, "Count"); err != nil {
		return err
	}
	if err := topo.AddSink("Sink", output, []string{"Count"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())); err != nil {
		return err
	}
	cfg, err := kstreams.ConfigFromProperties(props)
	if err != nil {
		return err
	}
	cfg.ApplicationID, cfg.BootstrapServers, cfg.StateDir, cfg.NumStreamThreads = appID, addrs, stateDir, 1
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	app, err := kstreams.New(topo, cfg)
	if err != nil {
		return err
	}
	app.SetGlobalStateRestoreListener(restoreEvents{})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := app.Start(context.Background()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	go func() { // the running tasks, on every change
		last := ""
		for {
			var ps []int
			for _, th := range app.MetadataForLocalThreads() {
				for _, tk := range th.ActiveTasks {
					ps = append(ps, tk.TaskID.Partition)
				}
			}
			now := app.State().String() + " " + joinInts(ps)
			if now != last {
				event("tasks %s", now)
				last = now
			}
			select {
			case <-app.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	select {
	case <-ctx.Done():
	case <-app.Done():
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Close(cctx); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return app.Err()
}

// joinInts gives the sorted numbers comma-separated, "-" for none.
func joinInts(ns []int) string {
	if len(ns) == 0 {
		return "-"
	}
	sort.Ints(ns)
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// --- driver ---

type driver struct {
	addrs     []string
	impls     []string
	javaCP    string
	javaOpts  string
	self      string
	records   int
	rate      int
	warmup    time.Duration
	after     time.Duration
	timeout   time.Duration
	rounds    int
	sessionMS int
	commitMS  int
}

// figures is one run's result (seconds).
type figures struct {
	// restored is the records the survivor restored (the fill and the victim's own writes).
	restored int64
	// The figures, in seconds.
	restore, killToRestore, movedBack, killToMoved, keptGap, keptSilent, baselineGap float64
}

func (f figures) values() []float64 {
	return []float64{f.restore, f.killToRestore, f.movedBack, f.killToMoved, f.keptGap, f.keptSilent, f.baselineGap}
}

var figureNames = []string{"restore_s", "kill_to_restore_s", "moved_back_s", "kill_to_moved_s", "kept_gap_s", "kept_silent_s", "baseline_gap_s"}

func saramaConfig() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = "failbench"
	c.Version = sarama.V4_0_0_0
	return c
}

func (d *driver) run() error {
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	results := map[string][]figures{}
	for round := 1; round <= d.rounds; round++ {
		order := slices.Clone(d.impls)
		if round%2 == 0 {
			slices.Reverse(order)
		}
		for _, impl := range order {
			f, err := d.once(impl, fmt.Sprintf("failbench-%s-%s-r%d", impl, stamp, round))
			if err != nil {
				return fmt.Errorf("%s round %d: %w", impl, round, err)
			}
			fmt.Printf("failover impl=%s round=%d restored=%d", impl, round, f.restored)
			for i, v := range f.values() {
				fmt.Printf(" %s=%.3f", figureNames[i], v)
			}
			fmt.Printf("  (load average %s)\n", loadAverage())
			results[impl] = append(results[impl], f)
		}
	}
	fmt.Println()
	fmt.Println("fail-over, min / median / max over the rounds (seconds):")
	for _, impl := range d.impls {
		fmt.Printf("  %-4s", impl)
		for i, name := range figureNames {
			var vs []float64
			for _, f := range results[impl] {
				vs = append(vs, f.values()[i])
			}
			fmt.Printf("  %s %s", name, spread(vs))
		}
		fmt.Println()
	}
	if len(results["go"]) > 0 && len(results["java"]) > 0 {
		med := func(impl string, i int) float64 {
			var vs []float64
			for _, f := range results[impl] {
				vs = append(vs, f.values()[i])
			}
			return median(vs)
		}
		fmt.Println("  ratios ours/Java of the medians (<1: ours shorter):")
		fmt.Printf("    kept partitions' longest gap %.2f (%.2f s vs %.2f s); no kept output at all %.2f (%.2f s vs %.2f s)\n",
			med("go", 4)/med("java", 4), med("go", 4), med("java", 4), med("go", 5)/med("java", 5), med("go", 5), med("java", 5))
		fmt.Printf("    restore of the moved tasks %.2f (ours %.2fx faster); restore start to moved partitions' output %.2f (%.2fx sooner); kill to moved output %.2f\n",
			med("go", 0)/med("java", 0), med("java", 0)/med("go", 0), med("go", 2)/med("java", 2), med("java", 2)/med("go", 2), med("go", 3)/med("java", 3))
	}
	return nil
}

// proc is a running instance and the events it printed.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan error
	mu     sync.Mutex
	state  string
	tasks  []int32
	since  time.Time             // when tasks last changed
	starts map[int32][]time.Time // every restore start of each partition
	ends   map[int32]time.Time
	totals map[int32]int64 // records restored, by the last restore-end of each partition
}

func (d *driver) start(impl, name, appID, input, output, stateDir string) (*proc, error) {
	var cmd *exec.Cmd
	if impl == "java" {
		args := strings.Fields(d.javaOpts)
		args = append(args, "-cp", d.javaCP, "io.kstreams.bench.Failover", strings.Join(d.addrs, ","), appID, input, output, stateDir,
			strconv.Itoa(d.sessionMS), strconv.Itoa(d.commitMS))
		cmd = exec.Command("java", args...)
	} else {
		cmd = exec.Command(d.self, "-mode", "instance", "-bootstrap", strings.Join(d.addrs, ","), "-application-id", appID,
			"-input", input, "-output", output, "-state-dir", stateDir, "-session-ms", strconv.Itoa(d.sessionMS), "-commit-ms", strconv.Itoa(d.commitMS))
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan error, 1), starts: map[int32][]time.Time{}, ends: map[int32]time.Time{}, totals: map[int32]int64{}}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.parse(sc.Text())
		}
		p.exited <- cmd.Wait()
	}()
	return p, nil
}

// parse takes one line of the instance's stdout.
func (p *proc) parse(line string) {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "event" {
		return
	}
	ms, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return
	}
	t := time.UnixMilli(ms)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case f[2] == "tasks" && len(f) == 5:
		p.state = f[3]
		var ts []int32
		if f[4] != "-" {
			for _, s := range strings.Split(f[4], ",") {
				n, _ := strconv.Atoi(s)
				ts = append(ts, int32(n))
			}
		}
		if !slices.Equal(ts, p.tasks) {
			p.tasks, p.since = ts, time.Now()
		}
	case f[2] == "restore-start" && len(f) >= 4:
		n, _ := strconv.Atoi(f[3])
		p.starts[int32(n)] = append(p.starts[int32(n)], t)
	case f[2] == "restore-end" && len(f) >= 4:
		n, _ := strconv.Atoi(f[3])
		p.ends[int32(n)] = t
		if len(f) >= 5 {
			p.totals[int32(n)], _ = strconv.ParseInt(f[4], 10, 64)
		}
	}
}

func (p *proc) snapshot() (state string, tasks []int32, since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, slices.Clone(p.tasks), p.since
}

// stop ends the process: SIGTERM, then SIGKILL after 30 s.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// arrivals records, per input partition, when each output record was read.
type arrivals struct {
	mu sync.Mutex
	at [partitions][]time.Time
}

func (a *arrivals) add(p int, t time.Time) {
	a.mu.Lock()
	a.at[p] = append(a.at[p], t)
	a.mu.Unlock()
}

func (a *arrivals) get(p int32) []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.at[p])
}

// firstAfter returns the first arrival of p after t (zero if none).
func (a *arrivals) firstAfter(p int32, t time.Time) time.Time {
	for _, x := range a.get(p) {
		if x.After(t) {
			return x
		}
	}
	return time.Time{}
}

// once runs one fail-over of impl under application id appID.
func (d *driver) once(impl, appID string) (figures, error) {
	client, err := sarama.NewClient(d.addrs, saramaConfig())
	if err != nil {
		return figures{}, err
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return figures{}, err
	}
	input, output, changelogTopic := appID+"-input", appID+"-output", appID+"-"+storeName+"-changelog"
	for _, t := range []string{input, output} {
		if err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
			return figures{}, fmt.Errorf("create %s: %w", t, err)
		}
	}
	defer func() {
		for _, t := range []string{input, output, changelogTopic} {
			_ = admin.DeleteTopic(t)
		}
	}()

	// The output reader, from the start.
	arr := &arrivals{}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return figures{}, err
	}
	defer consumer.Close()
	for p := int32(0); p < partitions; p++ {
		pc, err := consumePartition(consumer, output, p)
		if err != nil {
			return figures{}, err
		}
		defer pc.AsyncClose()
		go func() {
			for m := range pc.Messages() {
				now := time.Now()
				k := string(m.Key)
				if rest, ok := strings.CutPrefix(k, "p"); ok {
					if n, _, ok := strings.Cut(rest, "-"); ok {
						if ip, err := strconv.Atoi(n); err == nil && ip >= 0 && ip < partitions {
							arr.add(ip, now)
						}
					}
				}
			}
		}()
	}

	// Both instances, at once, on empty changelogs.
	var ps []*proc
	for _, name := range []string{"survivor", "victim"} {
		dir, err := os.MkdirTemp("", "failbench-state-")
		if err != nil {
			return figures{}, err
		}
		defer os.RemoveAll(dir)
		p, err := d.start(impl, name, appID, input, output, dir)
		if err != nil {
			return figures{}, err
		}
		defer func() { _ = p.cmd.Process.Kill() }() // after a failure; a no-op once it exited
		ps = append(ps, p)
	}
	survivor, victim := ps[0], ps[1]
	kept, moved, err := d.awaitSplit(survivor, victim)
	if err != nil {
		return figures{}, err
	}

	// The victim's tasks' state, straight into their changelog partitions.
	if err := d.fill(client, changelogTopic, moved); err != nil {
		return figures{}, err
	}

	load := newLoad(d.addrs, input, d.rate)
	if err := load.start(); err != nil {
		return figures{}, err
	}
	defer load.stop()
	deadline := time.Now().Add(d.timeout)
	for p := int32(0); p < partitions; p++ { // every partition outputs before the warm-up counts
		for len(arr.get(p)) == 0 {
			if time.Now().After(deadline) {
				return figures{}, fmt.Errorf("no output from partition %d within %v", p, d.timeout)
			}
			if err := d.alive(ps...); err != nil {
				return figures{}, err
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(d.warmup)
	if err := d.alive(ps...); err != nil {
		return figures{}, err
	}
	if err := load.err(); err != nil {
		return figures{}, err
	}

	kill := time.Now()
	_ = victim.cmd.Process.Kill()
	<-victim.exited

	// Until the survivor restored every moved partition and each output again.
	var restoreStart, restoreEnd, movedOut time.Time
	var restored int64
	deadline = time.Now().Add(d.timeout)
	for {
		if err := d.alive(survivor); err != nil {
			return figures{}, err
		}
		if time.Now().After(deadline) {
			return figures{}, fmt.Errorf("moved partitions %v not restored and output again within %v of the kill", moved, d.timeout)
		}
		time.Sleep(100 * time.Millisecond)
		survivor.mu.Lock()
		restoreStart, restoreEnd, restored = time.Time{}, time.Time{}, 0
		done := true
		for _, p := range moved {
			var s time.Time // the first start after the kill
			for _, t := range survivor.starts[p] {
				if !t.Before(kill) {
					s = t
					break
				}
			}
			e := survivor.ends[p]
			if s.IsZero() || e.Before(s) {
				done = false
				break
			}
			if restoreStart.IsZero() || s.Before(restoreStart) {
				restoreStart = s
			}
			if e.After(restoreEnd) {
				restoreEnd = e
			}
			restored += survivor.totals[p]
		}
		survivor.mu.Unlock()
		if !done {
			continue
		}
		movedOut = time.Time{}
		for _, p := range moved {
			t := arr.firstAfter(p, restoreStart)
			if t.IsZero() {
				done = false
				break
			}
			if t.After(movedOut) {
				movedOut = t
			}
		}
		if done {
			break
		}
	}
	time.Sleep(d.after)
	end := time.Now()
	if err := d.alive(survivor); err != nil {
		return figures{}, err
	}
	if err := load.err(); err != nil {
		return figures{}, err
	}
	load.stop()
	survivor.stop()

	f := figures{
		restored:      restored,
		restore:       restoreEnd.Sub(restoreStart).Seconds(),
		killToRestore: restoreStart.Sub(kill).Seconds(),
		movedBack:     movedOut.Sub(restoreStart).Seconds(),
		killToMoved:   movedOut.Sub(kill).Seconds(),
	}
	var keptAll []time.Time
	for _, p := range kept {
		ts := window(arr.get(p), kill, end)
		f.keptGap = max(f.keptGap, longestGap(ts, end))
		keptAll = append(keptAll, ts...)
	}
	slices.SortFunc(keptAll, func(a, b time.Time) int { return a.Compare(b) })
	f.keptSilent = longestGap(keptAll, end)
	for p := int32(0); p < partitions; p++ {
		ts := window(arr.get(p), kill.Add(-10*time.Second), kill)
		f.baselineGap = max(f.baselineGap, longestGap(ts, kill))
	}
	return f, nil
}

// window returns the arrivals from the last one at or before from up to to.
func window(ts []time.Time, from, to time.Time) []time.Time {
	i := sort.Search(len(ts), func(i int) bool { return ts[i].After(from) })
	if i > 0 {
		i--
	}
	j := sort.Search(len(ts), func(j int) bool { return ts[j].After(to) })
	return ts[i:j]
}

// longestGap is the longest interval between consecutive times, and between the last and end.
func longestGap(ts []time.Time, end time.Time) float64 {
	if len(ts) == 0 {
		return 0
	}
	var g time.Duration
	for i := 1; i < len(ts); i++ {
		g = max(g, ts[i].Sub(ts[i-1]))
	}
	return max(g, end.Sub(ts[len(ts)-1])).Seconds()
}

// alive fails when one of the processes has exited.
func (d *driver) alive(ps ...*proc) error {
	for _, p := range ps {
		select {
		case err := <-p.exited:
			p.exited <- err
			return fmt.Errorf("the %s instance exited: %v", p.name, err)
		default:
		}
	}
	return nil
}

// awaitSplit waits until both instances run and the 8 partitions are split between them,
// unchanged for 2 s, and returns the survivor's and the victim's partitions.
func (d *driver) awaitSplit(survivor, victim *proc) ([]int32, []int32, error) {
	deadline := time.Now().Add(d.timeout)
	for {
		if err := d.alive(survivor, victim); err != nil {
			return nil, nil, err
		}
		ss, st, sSince := survivor.snapshot()
		vs, vt, vSince := victim.snapshot()
		all := append(slices.Clone(st), vt...)
		slices.Sort(all)
		if ss == "RUNNING" && vs == "RUNNING" && len(st) > 0 && len(vt) > 0 && len(all) == partitions &&
			len(slices.Compact(all)) == partitions && time.Since(sSince) > 2*time.Second && time.Since(vSince) > 2*time.Second {
			return st, vt, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("the instances did not split the %d partitions within %v (survivor %s %v, victim %s %v)",
				partitions, d.timeout, ss, st, vs, vt)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fill writes d.records records, spread evenly, into the given partitions of the changelog:
// keys "fill-<partition>-<n>" (String), values 8-byte big-endian counts (Long), as the
// count writes its state.
func (d *driver) fill(client sarama.Client, topic string, ps []int32) error {
	deadline := time.Now().Add(d.timeout)
	for { // the applications create their changelog at start
		if err := client.RefreshMetadata(topic); err == nil {
			if got, err := client.Partitions(topic); err == nil && len(got) == partitions {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("changelog %s not created within %v", topic, d.timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cfg := saramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	cfg.Producer.Return.Successes = false
	cfg.Producer.Flush.Bytes = 512 << 10
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	p, err := sarama.NewAsyncProducer(d.addrs, cfg)
	if err != nil {
		return err
	}
	var first error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := range p.Errors() {
			if first == nil {
				first = e
			}
		}
	}()
	now := time.Now()
	for i := 0; i < d.records; i++ {
		part := ps[i%len(ps)]
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(i%1000+1))
		p.Input() <- &sarama.ProducerMessage{Topic: topic, Partition: part, Timestamp: now,
			Key: sarama.StringEncoder(fmt.Sprintf("fill-%d-%09d", part, i)), Value: sarama.ByteEncoder(v)}
	}
	p.AsyncClose()
	wg.Wait()
	if first != nil {
		return fmt.Errorf("fill %s: %w", topic, first)
	}
	return nil
}

// consumePartition starts reading topic-p from its start, retrying while the fresh topic's
// leader is not known yet.
func consumePartition(c sarama.Consumer, topic string, p int32) (sarama.PartitionConsumer, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err == nil || time.Now().After(deadline) {
			return pc, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// load produces rate records/s, round robin over the partitions, key "p<partition>-k<n>"
// (500 keys per partition), value "x", timestamp the time of sending.
type load struct {
	addrs []string
	topic string
	rate  int
	prod  sarama.AsyncProducer
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	mu    sync.Mutex
	first error
}

func newLoad(addrs []string, topic string, rate int) *load {
	return &load{addrs: addrs, topic: topic, rate: rate, done: make(chan struct{})}
}

func (l *load) start() error {
	cfg := saramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	cfg.Producer.Return.Successes = false
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	p, err := sarama.NewAsyncProducer(l.addrs, cfg)
	if err != nil {
		return err
	}
	l.prod = p
	l.wg.Add(2)
	go func() {
		defer l.wg.Done()
		for e := range p.Errors() {
			l.mu.Lock()
			if l.first == nil {
				l.first = e
			}
			l.mu.Unlock()
		}
	}()
	go func() {
		defer l.wg.Done()
		t0 := time.Now()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		sent := 0
		for {
			select {
			case <-l.done:
				p.AsyncClose()
				return
			case now := <-tick.C:
				for due := int(now.Sub(t0).Seconds() * float64(l.rate)); sent < due; sent++ {
					part := int32(sent % partitions)
					p.Input() <- &sarama.ProducerMessage{Topic: l.topic, Partition: part, Timestamp: now,
						Key: sarama.StringEncoder(fmt.Sprintf("p%d-k%d", part, (sent/partitions)%500)), Value: sarama.StringEncoder("x")}
				}
			}
		}
	}()
	return nil
}

func (l *load) stop() {
	l.once.Do(func() {
		close(l.done)
		l.wg.Wait()
	})
}

func (l *load) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first
}

// --- figures ---

func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread gives "min/median/max" of the values, or the value alone when there is one.
func spread(vs []float64) string {
	if len(vs) == 1 {
		return fmt.Sprintf("%.3f", vs[0])
	}
	return fmt.Sprintf("%.3f/%.3f/%.3f", slices.Min(vs), median(vs), slices.Max(vs))
}

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
