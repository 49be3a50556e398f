package main

import (
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// contender is one application in one configuration: impl (java, go, gobase, goplain), its
// num.stream.threads and, for ours, num.task.executors (0: the library's default,
// GOMAXPROCS/num.stream.threads).
type contender struct {
	impl      string
	threads   int
	executors int
}

// label names the contender in the output: "java t2", "go t1", "go t1e1".
func (c contender) label() string {
	s := fmt.Sprintf("%s t%d", c.impl, c.threads)
	if c.executors > 0 {
		s += "e" + strconv.Itoa(c.executors)
	}
	return s
}

// parseGoConfigs reads -go-configs: comma-separated "threads" or "threads:executors". A
// configuration listed twice is refused: its second run would find its output already made,
// finish at once and spoil the medians.
func parseGoConfigs(s string) ([]contender, error) {
	var out []contender
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		t, e, hasE := strings.Cut(f, ":")
		c := contender{impl: "go"}
		var err error
		if c.threads, err = strconv.Atoi(t); err != nil || c.threads < 1 {
			return nil, fmt.Errorf("-go-configs: bad thread count in %q", f)
		}
		if hasE {
			if c.executors, err = strconv.Atoi(e); err != nil || c.executors < 1 {
				return nil, fmt.Errorf("-go-configs: bad executor count in %q", f)
			}
		}
		if seen[c.label()] {
			return nil, fmt.Errorf("-go-configs: %q is listed twice (a list of threads[:executors], one per contender)", f)
		}
		seen[c.label()] = true
		out = append(out, c)
	}
	return out, nil
}

// contenders lists the configurations to run: Java at each of o.javaThreads, ours at each
// of o.goConfigs, gobase at one thread and its default executors.
func contenders(o options) []contender {
	var out []contender
	for _, impl := range o.impls {
		switch impl {
		case "java":
			for _, t := range o.javaThreads {
				out = append(out, contender{impl: "java", threads: t})
			}
		case "go":
			out = append(out, o.goConfigs...)
		default:
			out = append(out, contender{impl: impl, threads: 1})
		}
	}
	return out
}

// runThroughput loads the input, then in each of o.rounds rounds runs every contender under
// every guarantee (contenders rotated each round and reversed in even rounds, so each is
// interleaved with the others and takes every position) and, unless -pipe=false, the pipes:
// each round's line pipe and batch-level word pipe (and the bare sarama word pipe with
// -word-pipe), and the batch-level word pipe beside every run of ours; then prints the summary.
func runThroughput(o options, client sarama.Client, admin sarama.ClusterAdmin) error {
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	input := "wcbench-input-" + stamp
	if err := admin.CreateTopic(input, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		return fmt.Errorf("create %s: %w", input, err)
	}
	defer deleteTopics(admin, input)
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

	cs := contenders(o)
	s := summary{o: o, words: words, runs: map[string]map[string][]result{}}
	for _, g := range o.guarantees {
		s.runs[g] = map[string][]result{}
	}
	// The first run of a sweep ran 10-45% slower than the same run later (the first pipe: 55 000,
	// 79 000 and 98 000 lines/s against 81 000-134 000 next; Java t1, always first in round 1:
	// 13 400 against 15 700-16 900), whatever it was: the broker's first reads of the input and
	// first topics of the sweep. An untimed pass of the batch-level word pipe takes that cost.
	if _, _, err := batchWordPipe(o, client, input, ends, stamp+"-warmup"); err != nil {
		return fmt.Errorf("warm-up pass of the batch-level word pipe: %w", err)
	}
	// With -pipe, each run of ours is bracketed by runs of the batch-level word pipe (one before
	// it unless the step before it was that pipe, one after it): the machine's speed drifts
	// within minutes, and the pipe of the round's end ran minutes after the first runs. A pipe
	// that fails beside a run is reported and leaves that run without its fraction.
	var lastPipe time.Duration // wall of the batch-level pipe run just now; 0 when something else ran since
	for round := 1; round <= o.rounds; round++ {
		// Rotated by one each round and reversed in even rounds, so that over the rounds
		// every contender runs first, in the middle and last: a run's position in its round
		// (what ran before it on the broker) showed as a bias of several percent.
		k := 0
		if len(cs) > 0 {
			k = (round - 1) % len(cs)
		}
		order := append(slices.Clone(cs[k:]), cs[:k]...)
		if round%2 == 0 {
			slices.Reverse(order)
		}
		if o.rounds > 1 {
			fmt.Printf("round %d of %d (load average %s)\n", round, o.rounds, loadAverage())
		}
		pipes := 0
		runBesidePipe := func(where string, c contender, g string) time.Duration {
			pipes++
			wall, _, err := batchWordPipe(o, client, input, ends, stamp+"-r"+strconv.Itoa(round)+"-b"+strconv.Itoa(pipes))
			if err != nil {
				fmt.Fprintf(os.Stderr, "wcbench: round %d, batch-level word pipe %s %s %s: %v (that run gets no fraction of it)\n",
					round, where, c.label(), g, err)
				return 0
			}
			return wall
		}
		for _, g := range o.guarantees {
			for _, c := range order {
				ours := o.pipe && c.impl != "java"
				var before time.Duration
				if ours {
					if lastPipe == 0 {
						lastPipe = runBesidePipe("before", c, g)
					}
					before = lastPipe
				}
				appID := fmt.Sprintf("wcbench-%s-t%de%d-%s-r%d-%s", c.impl, c.threads, c.executors, strings.ReplaceAll(g, "_", ""), round, stamp)
				r, err := runApp(o, client, admin, c, g, appID, input, ends)
				if err != nil {
					return fmt.Errorf("%s %s: %w", c.label(), g, err)
				}
				lastPipe = 0
				if ours {
					lastPipe = runBesidePipe("after", c, g)
					r.pipeBefore, r.pipeAfter = before, lastPipe
				}
				broker := ""
				if o.brokerPID > 0 {
					broker = fmt.Sprintf("  broker %6.2f CPU s/M lines", r.brokerCPU.Seconds()*1e6/float64(o.lines))
				}
				beside := ""
				if f, ok := r.besidePipe(); ok {
					beside = fmt.Sprintf("  %3.0f%% of the batch-level word pipe beside it (%.0f / %.0f lines/s before / after)",
						100*f, float64(o.lines)/r.pipeBefore.Seconds(), float64(o.lines)/r.pipeAfter.Seconds())
				}
				fmt.Printf("%-8s %-16s wall %8.2f s  %10.0f lines/s  %11.0f words/s  peak RSS %7.1f MiB  CPU %7.2f s  %6.2f CPU s/M lines%s%s\n",
					c.label(), g, r.wall.Seconds(), float64(o.lines)/r.wall.Seconds(), float64(words)/r.wall.Seconds(),
					float64(r.peakRSS)/(1<<20), r.cpu.Seconds(), r.cpu.Seconds()*1e6/float64(o.lines), broker, beside)
				s.runs[g][c.label()] = append(s.runs[g][c.label()], r)
			}
		}
		if o.pipe {
			suffix := stamp + "-r" + strconv.Itoa(round)
			wall, err := pipe(o, client, input, ends, suffix)
			if err != nil {
				return fmt.Errorf("pipe: %w", err)
			}
			fmt.Printf("bare sarama consume-then-produce pipe: wall %.2f s  %.0f lines/s\n", wall.Seconds(), float64(o.lines)/wall.Seconds())
			var wwall time.Duration // 0: not run
			if o.wordPipe {
				var wwords int64
				wwall, wwords, err = wordPipe(o, client, input, ends, suffix)
				if err != nil {
					return fmt.Errorf("word pipe: %w", err)
				}
				fmt.Printf("bare sarama word pipe (lines -> words by murmur2(word) -> one record per word; no state, cache or commits): wall %.2f s  %.0f lines/s  %.0f words/s\n",
					wwall.Seconds(), float64(o.lines)/wwall.Seconds(), float64(wwords)/wwall.Seconds())
			}
			bwall, bwords, err := batchWordPipe(o, client, input, ends, suffix)
			if err != nil {
				return fmt.Errorf("batch-level word pipe: %w", err)
			}
			fmt.Printf("batch-level word pipe (the same on kstreams-go's own fetch/produce layer, configured as a stream thread's): wall %.2f s  %.0f lines/s  %.0f words/s\n",
				bwall.Seconds(), float64(o.lines)/bwall.Seconds(), float64(bwords)/bwall.Seconds())
			s.pipes = append(s.pipes, [3]time.Duration{wall, wwall, bwall})
			lastPipe = bwall // the next round's first run of ours follows this pipe
		}
	}
	fmt.Print(s.String(cs))
	return nil
}

// summary holds every run: runs[guarantee][contender label], one result per round; pipes
// the walls of the line pipe, word pipe (0 without -word-pipe) and batch-level word pipe per
// round.
type summary struct {
	o     options
	words int64
	runs  map[string]map[string][]result
	pipes [][3]time.Duration
}

// throughputs returns the lines/s of each round of a contender.
func (s summary) throughputs(g, label string) []float64 {
	var out []float64
	for _, r := range s.runs[g][label] {
		out = append(out, float64(s.o.lines)/r.wall.Seconds())
	}
	return out
}

// best returns the label of impl's contender with the highest median throughput under g.
func (s summary) best(cs []contender, g, impl string) string {
	bestLabel, bestTP := "", 0.0
	for _, c := range cs {
		if c.impl != impl {
			continue
		}
		if tp := median(s.throughputs(g, c.label())); tp > bestTP {
			bestLabel, bestTP = c.label(), tp
		}
	}
	return bestLabel
}

// perRound applies f to the two contenders' results of the same round and gives the values.
func (s summary) perRound(g, a, b string, f func(a, b result) float64) []float64 {
	ra, rb := s.runs[g][a], s.runs[g][b]
	var out []float64
	for i := 0; i < len(ra) && i < len(rb); i++ {
		out = append(out, f(ra[i], rb[i]))
	}
	return out
}

func (s summary) String(cs []contender) string {
	var sb strings.Builder
	lines := float64(s.o.lines)
	rounds := ""
	if s.o.rounds > 1 {
		rounds = fmt.Sprintf(", min / median / max of %d rounds", s.o.rounds)
	}
	fmt.Fprintf(&sb, "\nthroughput (lines/s%s), CPU s per million lines, peak RSS MiB (median);\n", rounds)
	fmt.Fprintf(&sb, "go tN is ours at num.stream.threads N with num.task.executors at its default, GOMAXPROCS/N and at least 1 (GOMAXPROCS %d here); go tNeE with E executors:\n", goruntime.GOMAXPROCS(0))
	for _, g := range s.o.guarantees {
		for _, c := range cs {
			rs := s.runs[g][c.label()]
			var cpu, rss []float64
			for _, r := range rs {
				cpu = append(cpu, r.cpu.Seconds()*1e6/lines)
				rss = append(rss, float64(r.peakRSS)/(1<<20))
			}
			fmt.Fprintf(&sb, "  %-8s %-16s %s lines/s  %s CPU s/M lines  %.1f MiB\n", c.label(), g,
				spread(s.throughputs(g, c.label()), "%.0f"), spread(cpu, "%.2f"), median(rss))
		}
	}
	if s.o.brokerPID > 0 {
		// The application and the broker share this machine's CPUs: a run cannot go faster
		// than all of them spent on its CPU per line plus the broker's for the same lines.
		fmt.Fprintf(&sb, "\nthe broker's CPU per line during each contender's runs, and the CPU-bound ceiling of the contender on this machine\n"+
			"(%d CPUs / (its CPU per line + the broker's), median of the rounds; the throughput it would reach with every CPU busy):\n", goruntime.NumCPU())
		for _, g := range s.o.guarantees {
			for _, c := range cs {
				var broker, ceiling []float64
				for _, r := range s.runs[g][c.label()] {
					broker = append(broker, r.brokerCPU.Seconds()*1e6/lines)
					if perLine := (r.cpu + r.brokerCPU).Seconds() / lines; perLine > 0 {
						ceiling = append(ceiling, float64(goruntime.NumCPU())/perLine)
					}
				}
				fmt.Fprintf(&sb, "  %-8s %-16s broker %s CPU s/M lines  ceiling %.0f lines/s\n", c.label(), g, spread(broker, "%.2f"), median(ceiling))
			}
		}
	}
	hasJava, hasGo := false, false
	for _, c := range cs {
		hasJava = hasJava || c.impl == "java"
		hasGo = hasGo || c.impl == "go"
	}
	equalGo, equalJava := contender{impl: "go", threads: 1}.label(), contender{impl: "java", threads: 1}.label()
	if hasJava && hasGo {
		fmt.Fprintf(&sb, "\nratios ours/Java (throughput: >1 is faster; CPU per line and peak RSS: <1 is leaner); per-round ratios%s:\n", rounds)
		for _, g := range s.o.guarantees {
			pairs := [][3]string{{"equal configuration", equalGo, equalJava}, {"each at its best", s.best(cs, g, "go"), s.best(cs, g, "java")}}
			for _, p := range pairs {
				if len(s.runs[g][p[1]]) == 0 || len(s.runs[g][p[2]]) == 0 {
					continue
				}
				tp := s.perRound(g, p[1], p[2], func(a, b result) float64 { return b.wall.Seconds() / a.wall.Seconds() })
				cpu := s.perRound(g, p[1], p[2], func(a, b result) float64 { return a.cpu.Seconds() / b.cpu.Seconds() })
				rss := s.perRound(g, p[1], p[2], func(a, b result) float64 { return float64(a.peakRSS) / float64(b.peakRSS) })
				fmt.Fprintf(&sb, "  %-16s %-19s (%s vs %s): throughput %sx  CPU per line %s  peak RSS %s\n",
					g, p[0], p[1], p[2], spread(tp, "%.2f"), spread(cpu, "%.2f"), spread(rss, "%.2f"))
			}
		}
	}
	plain := contender{impl: "goplain", threads: 1}.label()
	for _, g := range s.o.guarantees {
		if len(s.runs[g][plain]) == 0 {
			continue
		}
		for _, other := range []string{equalGo, contender{impl: "gobase", threads: 1}.label()} {
			if len(s.runs[g][other]) == 0 {
				continue
			}
			cost := s.perRound(g, plain, other, func(a, b result) float64 { return 100 * (1 - a.wall.Seconds()/b.wall.Seconds()) })
			cpu := s.perRound(g, plain, other, func(a, b result) float64 { return 100 * (b.cpu.Seconds()/a.cpu.Seconds() - 1) })
			fmt.Fprintf(&sb, "recording cost, %s vs %s, %s (per round%s): throughput lost %s%%, CPU per line added %s%%\n",
				other, plain, g, rounds, spread(cost, "%.1f"), spread(cpu, "%.1f"))
		}
	}
	if slices.Contains(s.o.guarantees, "at_least_once") && slices.Contains(s.o.guarantees, "exactly_once_v2") {
		fmt.Fprintf(&sb, "exactly_once_v2 throughput as %% of at_least_once (per round%s):\n", rounds)
		for _, impl := range []string{"go", "java", "gobase", "goplain"} {
			for _, c := range cs {
				if c.impl != impl {
					continue
				}
				l := c.label()
				a, e := s.runs["at_least_once"][l], s.runs["exactly_once_v2"][l]
				var pct []float64
				for i := 0; i < len(a) && i < len(e); i++ {
					pct = append(pct, 100*a[i].wall.Seconds()/e[i].wall.Seconds())
				}
				if len(pct) > 0 {
					fmt.Fprintf(&sb, "  %-8s %s%%\n", l, spread(pct, "%.0f"))
				}
			}
		}
	}
	if len(s.pipes) > 0 {
		names := []string{"the line pipe", "the word pipe", "the batch-level word pipe"}
		fmt.Fprintf(&sb, "throughput as %% of the pipes (same round%s):\n", rounds)
		for _, g := range s.o.guarantees {
			for _, c := range cs {
				rs := s.runs[g][c.label()]
				var parts []string
				for k, name := range names {
					var pct []float64
					for i := 0; i < len(rs) && i < len(s.pipes); i++ {
						if s.pipes[i][k] > 0 {
							pct = append(pct, 100*s.pipes[i][k].Seconds()/rs[i].wall.Seconds())
						}
					}
					if len(pct) > 0 {
						parts = append(parts, fmt.Sprintf("%s%% of %s", spread(pct, "%.0f"), name))
					}
				}
				fmt.Fprintf(&sb, "  %-8s %-16s %s\n", c.label(), g, strings.Join(parts, ", "))
			}
		}
		var beside strings.Builder
		for _, g := range s.o.guarantees {
			for _, c := range cs {
				var pct []float64
				for _, r := range s.runs[g][c.label()] {
					if f, ok := r.besidePipe(); ok {
						pct = append(pct, 100*f)
					}
				}
				if len(pct) > 0 {
					fmt.Fprintf(&beside, "  %-8s %-16s %s%%\n", c.label(), g, spread(pct, "%.0f"))
				}
			}
		}
		if beside.Len() > 0 {
			fmt.Fprintf(&sb, "throughput as %% of the batch-level word pipe run beside it (the mean of the pipe just before and just after each run%s):\n%s", rounds, beside.String())
		}
	}
	return sb.String()
}

// median of the values (0 for none).
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

// spread gives "min / median / max" of the values in format f, or the one value alone.
func spread(vs []float64, f string) string {
	switch len(vs) {
	case 0:
		return "-"
	case 1:
		return fmt.Sprintf(f, vs[0])
	}
	return fmt.Sprintf(f+" / "+f+" / "+f, slices.Min(vs), median(vs), slices.Max(vs))
}
