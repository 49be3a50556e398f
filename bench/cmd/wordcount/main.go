// Command wordcount is the Go side of the word count benchmark (bench/run.sh): Kafka Streams'
// WordCountDemo topology on kstreams-go, run against a real broker until SIGTERM or SIGINT.
//
// Lines are split as Java's demo splits them (value.toLowerCase().split("\\W+"), \w being
// ASCII letters, digits and '_'), grouped by word through a repartition topic, counted into
// "counts-store" and every count update written to the output topic with String keys and Long
// values. One stream thread unless -threads says otherwise; -executors sets num.task.executors
// (0: the library's default). It prints "started" on stdout once the application runs.
//
//	wordcount -bootstrap 127.0.0.1:9092 -application-id wc -input in -output out \
//	    [-eos] [-threads 1] [-executors 0] [-commit-ms 1000] [-cache-bytes 10485760] [-state-dir DIR] [-cpuprofile FILE] [-memprofile FILE] \
//	    [-pprof 127.0.0.1:6060] [-p property=value]...
//
// -pprof serves net/http/pprof on that address (for example /debug/pprof/heap while it runs: the
// Go heap only; Pebble's memtables and block cache are allocated outside it when cgo is on).
//
// -p sets any other Kafka Streams property (buffered.records.per.partition, producer.batch.size,
// ...), as kstreams.ConfigFromProperties reads it.
//
// Exit status 1 when the application fails, 2 on bad flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // served by -pprof only
	"os"
	"os/signal"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"syscall"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/wc"
)

func main() {
	bootstrap := flag.String("bootstrap", "", "`host:port[,...]` of the cluster")
	appID := flag.String("application-id", "bench-wordcount", "application.id")
	input := flag.String("input", "bench-wordcount-input", "input topic")
	output := flag.String("output", "bench-wordcount-output", "output topic")
	eos := flag.Bool("eos", false, "processing.guarantee=exactly_once_v2 (default at_least_once)")
	commitMS := flag.Int("commit-ms", 1000, "commit.interval.ms")
	threads := flag.Int("threads", 1, "num.stream.threads")
	executors := flag.Int("executors", 0, "num.task.executors (0: the default, GOMAXPROCS/num.stream.threads)")
	cacheBytes := flag.Int64("cache-bytes", 10<<20, "statestore.cache.max.bytes")
	stateDir := flag.String("state-dir", "", "state.dir (default: a fresh temporary directory)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE`")
	traceFile := flag.String("trace", "", "write an execution trace of the whole run to `FILE` (go tool trace; where each goroutine waits)")
	memProfile := flag.String("memprofile", "", "write an allocation profile of the whole run to `FILE` at exit")
	pprofAddr := flag.String("pprof", "", "serve net/http/pprof on `ADDR` (host:port) while running")
	props := map[string]string{}
	flag.Func("p", "another Kafka Streams `property=value` (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("%q is not property=value", s)
		}
		props[k] = v
		return nil
	})
	flag.Parse()
	defer record("cpuprofile", *cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile)()
	defer record("trace", *traceFile, trace.Start, trace.Stop)()
	if *bootstrap == "" {
		fmt.Fprintln(os.Stderr, "wordcount: -bootstrap is required")
		os.Exit(2)
	}
	if *pprofAddr != "" {
		ln, err := net.Listen("tcp", *pprofAddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "wordcount: -pprof:", err)
			os.Exit(2)
		}
		go func() { _ = http.Serve(ln, nil) }()
	}
	if *memProfile != "" {
		defer func() {
			if f, err := os.Create(*memProfile); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if err := run(*bootstrap, *appID, *input, *output, *eos, *threads, *executors, *commitMS, *cacheBytes, *stateDir, props); err != nil {
		fmt.Fprintln(os.Stderr, "wordcount:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(bootstrap, appID, input, output string, eos bool, threads, executors, commitMS int, cacheBytes int64, stateDir string, props map[string]string) error {
	if stateDir == "" {
		d, err := os.MkdirTemp("", "bench-wordcount-state-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		stateDir = d
	}
	topo, err := wc.Topology(input, output)
	if err != nil {
		return err
	}
	guarantee := kstreams.AtLeastOnce
	if eos {
		guarantee = kstreams.ExactlyOnceV2
	}
	cfg, err := kstreams.ConfigFromProperties(props)
	if err != nil {
		return err
	}
	cfg.ApplicationID, cfg.BootstrapServers, cfg.NumStreamThreads = appID, strings.Split(bootstrap, ","), threads
	if executors > 0 {
		cfg.NumTaskExecutors = executors
	}
	cfg.ProcessingGuarantee, cfg.CommitInterval = guarantee, time.Duration(commitMS)*time.Millisecond
	cfg.StateStoreCacheMaxBytes, cfg.StateDir = kstreams.Int64(cacheBytes), stateDir
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	app, err := kstreams.New(topo, cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := app.Start(context.Background()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	fmt.Println("started")
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

// record starts a whole-run recording (a CPU profile, an execution trace) into the file at path
// and returns what stops it and closes the file; with no path it records nothing. A file that
// cannot be written ends the program (flag -name).
func record(name, path string, start func(io.Writer) error, stop func()) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = start(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "wordcount: -%s: %v\n", name, err)
		os.Exit(2)
	}
	return func() {
		stop()
		f.Close()
	}
}
