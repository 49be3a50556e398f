// Command wordcount is Kafka's word count written with the kstreams DSL, runnable with nothing
// else installed: by default it starts an embedded in-process Kafka broker (kfake), writes a
// bundled public-domain text (Poe's "The Raven" and five of Shakespeare's sonnets) into the
// input topic, runs the application until every line and every word has been processed,
// reads the final counts back from the application's own state store (an interactive query),
// closes the application (which commits its output), prints the counts and exits.
//
//	export GOTOOLCHAIN=go1.27.3
//	go run ./examples/wordcount                        # embedded broker, bundled text
//	go run ./examples/wordcount -input book.txt        # your own text ('-' reads stdin)
//	go run ./examples/wordcount -bootstrap localhost:9092 -eos   # a real cluster, exactly-once
//	go run ./examples/wordcount -describe=mermaid      # print the topology and exit
//
// The topology is Java's WordCountDemo (org.apache.kafka.streams.examples.wordcount) except
// for the split: a word here is a maximal run of Unicode letters and digits (unicode.IsLetter,
// unicode.IsDigit), lower-cased, so "Night's" gives "night" and "s", "lamp-light" gives
// "lamp" and "light", and "Émile" stays one word; Java's demo splits on the regex \W+, whose
// \w is ASCII-only, so it would cut "Émile" apart. The counts table is materialized as
// "counts-store" (Java: Materialized.as("counts-store")), which also names the internal topics
// <application.id>-counts-store-repartition and <application.id>-counts-store-changelog; the
// output has String keys and Long values, as Java's demo.
//
// Counts go to stdout, one "word<TAB>count" line per word, by count descending then word
// ascending; progress goes to stderr. Flags:
//
//	-bootstrap host:port[,host:port...]  use this cluster instead of the embedded broker;
//	                       topics are created if missing (replication factor: broker default)
//	-input FILE            read lines from FILE ('-' for stdin) instead of the bundled text
//	-eos                   processing.guarantee=exactly_once_v2 (default at_least_once)
//	-describe[=text|mermaid|dot]  print the topology (Java's describe() text, a Mermaid
//	                       flowchart or a Graphviz DOT graph) to stdout and exit
//	-application-id, -input-topic, -output-topic, -partitions  names and the partition count
//	                       of the topics it creates (defaults: streams-wordcount,
//	                       streams-plaintext-input, streams-wordcount-output, 3)
//
// The run ends when the application has caught up with its input (KafkaStreams.WaitCaughtUp):
// every line in the input topic, and every word it repartitioned, is processed and committed.
// Against a cluster whose input topic already holds lines no application with this id has
// processed, those are processed and counted too.
// Counts accumulate across runs with the same application id on the same cluster, as in
// Kafka Streams; the embedded broker starts empty every time.
//
// Errors: an unreadable -input fails before anything starts; a -bootstrap address that does
// not answer fails within about 15 s with one line naming it. Exit status 1 on errors, 2 on
// bad flags.
package main

import (
	"bufio"
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

//go:embed texts/*.txt
var texts embed.FS

// storeName is the queryable name of the counts table.
const storeName = "counts-store"

// connectTimeout bounds how long the program waits for a -bootstrap cluster to answer.
const connectTimeout = 15 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.As(err, new(usageError)):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "wordcount: "+oneLine(err.Error()))
		os.Exit(1)
	}
}

// usageError is a bad command line (already reported by the flag set).
type usageError struct{ error }

// oneLine joins a multi-line message into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Words splits a line into words: maximal runs of Unicode letters and digits, lower-cased.
func Words(line string) []string {
	ws := strings.FieldsFunc(line, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	return ws
}

// Topology is the word count: lines from input, split into words, grouped by word (through
// a repartition topic), counted into the store "counts-store", and every count update
// written to output with String keys and Long values.
func Topology(input, output string) (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, input, kstream.ConsumedWith(serde.String(), serde.String())).
		FlatMapValues(Words).
		GroupBy(func(_, word string) string { return word }, kstream.GroupedWith(serde.String(), serde.String())).
		Count(kstream.MaterializedAs[string, int64](storeName)).
		ToStream().
		To(output, kstream.ProducedWith(serde.String(), serde.Long()))
	return b.Build()
}

// describeFlag is -describe, -describe=text, -describe=mermaid or -describe=dot.
type describeFlag struct{ format string }

func (d *describeFlag) String() string { return d.format }

func (d *describeFlag) Set(v string) error {
	switch v {
	case "true", "text":
		d.format = "text"
	case "mermaid", "dot":
		d.format = v
	case "false":
		d.format = ""
	default:
		return fmt.Errorf("want text, mermaid or dot, not %q", v)
	}
	return nil
}

// IsBoolFlag lets -describe stand alone (meaning text).
func (d *describeFlag) IsBoolFlag() bool { return true }

type options struct {
	bootstrap, input, appID, inputTopic, outputTopic string
	partitions                                       int
	eos                                              bool
	describe                                         describeFlag
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("wordcount", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bootstrap, "bootstrap", "", "`host:port[,...]` of a Kafka cluster to use instead of the embedded broker")
	fs.StringVar(&o.input, "input", "", "read lines from `FILE` ('-' for stdin) instead of the bundled text")
	fs.BoolVar(&o.eos, "eos", false, "use exactly-once processing (exactly_once_v2)")
	fs.Var(&o.describe, "describe", "print the topology and exit: -describe or -describe=text (Java's format), -describe=mermaid, -describe=dot")
	fs.StringVar(&o.appID, "application-id", "streams-wordcount", "application.id")
	fs.StringVar(&o.inputTopic, "input-topic", "streams-plaintext-input", "input topic")
	fs.StringVar(&o.outputTopic, "output-topic", "streams-wordcount-output", "output topic")
	fs.IntVar(&o.partitions, "partitions", 3, "partitions of the input and output topics when they are created")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{err}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wordcount: unexpected arguments %q\n", fs.Args())
		return o, usageError{errors.New("unexpected arguments")}
	}
	if o.partitions < 1 {
		fmt.Fprintln(stderr, "wordcount: -partitions must be at least 1")
		return o, usageError{errors.New("bad -partitions")}
	}
	return o, nil
}

// readLines returns the lines of the bundled text, of file, or of stdin for "-".
func readLines(file string, stdin io.Reader) ([]string, error) {
	var r io.Reader
	switch file {
	case "":
		names, err := fs.Glob(texts, "texts/*.txt")
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		var all []string
		for _, n := range names {
			b, err := texts.ReadFile(n)
			if err != nil {
				return nil, err
			}
			all = append(all, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
		}
		return all, nil
	case "-":
		r = stdin
		file = "stdin"
	default:
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("cannot read -input: %w", err)
		}
		defer f.Close()
		r = f
	}
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cannot read -input %s: %w", file, err)
	}
	return lines, nil
}

// run is the program; main only maps its error to an exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	topo, err := Topology(o.inputTopic, o.outputTopic)
	if err != nil {
		return err
	}
	switch o.describe.format {
	case "text":
		_, err = fmt.Fprint(stdout, topo.Describe().String())
		return err
	case "mermaid":
		_, err = fmt.Fprint(stdout, topo.Describe().Mermaid())
		return err
	case "dot":
		_, err = fmt.Fprint(stdout, topo.Describe().DOT())
		return err
	}
	lines, err := readLines(o.input, stdin)
	if err != nil {
		return err
	}
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "wordcount: "+format+"\n", a...) }

	var addrs []string
	stateDir := ""
	if o.bootstrap == "" {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			return fmt.Errorf("start the embedded broker: %w", err)
		}
		defer c.Close()
		addrs = c.ListenAddrs()
		progress("started an embedded Kafka broker (kfake) at %s", strings.Join(addrs, ","))
		// A fresh broker needs fresh state: the state directory goes away with it.
		if stateDir, err = os.MkdirTemp("", "wordcount-state-"); err != nil {
			return err
		}
		defer os.RemoveAll(stateDir)
	} else {
		for _, a := range strings.Split(o.bootstrap, ",") {
			if a = strings.TrimSpace(a); a != "" {
				if _, _, err := net.SplitHostPort(a); err != nil {
					return fmt.Errorf("-bootstrap %q: want host:port[,host:port...]", o.bootstrap)
				}
				addrs = append(addrs, a)
			}
		}
		if len(addrs) == 0 {
			return fmt.Errorf("-bootstrap %q: want host:port[,host:port...]", o.bootstrap)
		}
	}

	admin, err := connect(ctx, addrs)
	if err != nil {
		return err
	}
	defer admin.Close()
	for _, t := range []string{o.inputTopic, o.outputTopic} {
		err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: int32(o.partitions), ReplicationFactor: -1}, false)
		switch {
		case err == nil:
			progress("created topic %s (%d partitions)", t, o.partitions)
		case errors.Is(err, sarama.ErrTopicAlreadyExists):
		default:
			return fmt.Errorf("create topic %s: %w", t, err)
		}
	}

	guarantee := kstreams.AtLeastOnce
	if o.eos {
		guarantee = kstreams.ExactlyOnceV2
	}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID:       o.appID,
		BootstrapServers:    addrs,
		ProcessingGuarantee: guarantee,
		StateDir:            stateDir,
		// Records for the repartition and output topics are sent at each commit; a short
		// interval keeps the pipeline moving (Java's default is 30 s, 100 ms under -eos).
		CommitInterval: 100 * time.Millisecond,
		Logger:         slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	progress("starting application %s (%s)", o.appID, guarantee)
	if err := app.Start(context.Background()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	closeApp := func() error {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := app.Close(cctx); err != nil {
			return fmt.Errorf("close: %w", err)
		}
		return app.Err()
	}
	defer func() { _ = closeApp() }()

	words, err := produce(addrs, o.inputTopic, lines)
	if err != nil {
		return err
	}
	progress("wrote %d lines (%d words) to %s", len(lines), words, o.inputTopic)

	if err := app.WaitCaughtUp(ctx); err != nil {
		return err
	}
	progress("the application caught up with its input (every line and repartitioned word processed and committed)")
	counts, err := queryCounts(app)
	if err != nil {
		return err
	}
	if err := closeApp(); err != nil {
		return err
	}
	progress("closed the application (output committed); %d distinct words", len(counts))
	w := bufio.NewWriter(stdout)
	for _, c := range counts {
		fmt.Fprintf(w, "%s\t%d\n", c.word, c.n)
	}
	return w.Flush()
}

// connect opens an admin client, failing within connectTimeout with one line naming the
// addresses when the cluster does not answer.
func connect(ctx context.Context, addrs []string) (sarama.ClusterAdmin, error) {
	cfg := saramaConfig()
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = 5 * time.Second
	cfg.Net.WriteTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 1
	cfg.Metadata.Retry.Backoff = 250 * time.Millisecond
	type result struct {
		admin sarama.ClusterAdmin
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		a, err := sarama.NewClusterAdmin(addrs, cfg)
		ch <- result{a, err}
	}()
	where := strings.Join(addrs, ",")
	timer := time.NewTimer(connectTimeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("cannot reach Kafka at %s: %v", where, r.err)
		}
		return r.admin, nil
	case <-timer.C:
		return nil, fmt.Errorf("cannot reach Kafka at %s: no answer within %v", where, connectTimeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("connecting to Kafka at %s: %w", where, ctx.Err())
	}
}

// saramaConfig is the clients' base configuration: Kafka 4.0 protocol and Java's murmur2
// partitioner.
func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "wordcount-example"
	cfg.Version = sarama.V4_0_0_0
	cfg.Producer.Partitioner = sarama.NewMurmur2Partitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	return cfg
}

// produce writes the lines (null keys, as Java's demo input) and returns how many words they hold.
func produce(addrs []string, topic string, lines []string) (int64, error) {
	p, err := sarama.NewSyncProducer(addrs, saramaConfig())
	if err != nil {
		return 0, fmt.Errorf("producer: %w", err)
	}
	defer p.Close()
	var words int64
	batch := make([]*sarama.ProducerMessage, 0, 1000)
	now := time.Now()
	for i, l := range lines {
		words += int64(len(Words(l)))
		batch = append(batch, &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(l), Timestamp: now})
		if len(batch) == cap(batch) || i == len(lines)-1 {
			if err := p.SendMessages(batch); err != nil {
				return 0, fmt.Errorf("write %s: %w", topic, err)
			}
			batch = batch[:0]
		}
	}
	return words, nil
}

type wordCount struct {
	word string
	n    int64
}

// queryCounts reads every count from the application's store (interactive query) and sorts
// them by count descending, then word ascending. The store is viewed with the types of the
// Count's Materialized: string words, int64 counts (the plain values of the DSL's timestamped
// store; kstreams.TimestampedKeyValueStore[string, int64] would give their timestamps too).
func queryCounts(app *kstreams.KafkaStreams) ([]wordCount, error) {
	kv, err := kstreams.KeyValueStore[string, int64](app, storeName)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", storeName, err)
	}
	it := kv.All()
	defer it.Close()
	var out []wordCount
	for it.Next() {
		out = append(out, wordCount{it.Key(), it.Value()})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("query %s: %w", storeName, err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].word < out[j].word
	})
	return out, nil
}
