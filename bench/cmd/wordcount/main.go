// Command wordcount is the Go side of the word count benchmark (bench/run.sh): Kafka Streams'
// WordCountDemo topology on kstreams-go, run against a real broker until SIGTERM or SIGINT.
//
// Lines are split as Java's demo splits them (value.toLowerCase().split("\\W+"), \w being
// ASCII letters, digits and '_'), grouped by word through a repartition topic, counted into
// "counts-store" and every count update written to the output topic with String keys and Long
// values. One stream thread. It prints "started" on stdout once the application runs.
//
//	wordcount -bootstrap 127.0.0.1:9092 -application-id wc -input in -output out \
//	    [-eos] [-commit-ms 1000] [-cache-bytes 10485760] [-state-dir DIR]
//
// Exit status 1 when the application fails, 2 on bad flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// SplitWords splits a line as Java's line.toLowerCase().split("\\W+") does for ASCII text:
// maximal runs of [A-Za-z0-9_], lower-cased, with a leading empty string when the line
// starts with a non-word character (Java's split keeps a leading empty match, drops
// trailing ones).
func SplitWords(line string) []string {
	line = strings.ToLower(line)
	var out []string
	start := -1
	for i := 0; i < len(line); i++ {
		c := line[i]
		word := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z'
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, line[start:i])
			start = -1
		case !word && i == 0:
			out = append(out, "")
		}
	}
	if start >= 0 {
		out = append(out, line[start:])
	}
	if len(out) == 0 {
		// Java: "".split("\\W+") is [""]; a line of only separators gives [].
		if line == "" {
			return []string{""}
		}
		return nil
	}
	return out
}

// Topology is the WordCountDemo topology from input to output.
func Topology(input, output string) (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, input, kstream.ConsumedWith(serde.String(), serde.String())).
		FlatMapValues(SplitWords).
		GroupBy(func(_, word string) string { return word }, kstream.GroupedWith(serde.String(), serde.String())).
		Count(kstream.MaterializedAs[string, int64]("counts-store")).
		ToStream().
		To(output, kstream.ProducedWith(serde.String(), serde.Long()))
	return b.Build()
}

func main() {
	bootstrap := flag.String("bootstrap", "", "`host:port[,...]` of the cluster")
	appID := flag.String("application-id", "bench-wordcount", "application.id")
	input := flag.String("input", "bench-wordcount-input", "input topic")
	output := flag.String("output", "bench-wordcount-output", "output topic")
	eos := flag.Bool("eos", false, "processing.guarantee=exactly_once_v2 (default at_least_once)")
	commitMS := flag.Int("commit-ms", 1000, "commit.interval.ms")
	cacheBytes := flag.Int64("cache-bytes", 10<<20, "statestore.cache.max.bytes")
	stateDir := flag.String("state-dir", "", "state.dir (default: a fresh temporary directory)")
	flag.Parse()
	if *bootstrap == "" {
		fmt.Fprintln(os.Stderr, "wordcount: -bootstrap is required")
		os.Exit(2)
	}
	if err := run(*bootstrap, *appID, *input, *output, *eos, *commitMS, *cacheBytes, *stateDir); err != nil {
		fmt.Fprintln(os.Stderr, "wordcount:", err)
		os.Exit(1)
	}
}

func run(bootstrap, appID, input, output string, eos bool, commitMS int, cacheBytes int64, stateDir string) error {
	if stateDir == "" {
		d, err := os.MkdirTemp("", "bench-wordcount-state-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		stateDir = d
	}
	topo, err := Topology(input, output)
	if err != nil {
		return err
	}
	guarantee := kstreams.AtLeastOnce
	if eos {
		guarantee = kstreams.ExactlyOnceV2
	}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID:           appID,
		BootstrapServers:        strings.Split(bootstrap, ","),
		NumStreamThreads:        1,
		ProcessingGuarantee:     guarantee,
		CommitInterval:          time.Duration(commitMS) * time.Millisecond,
		StateStoreCacheMaxBytes: kstreams.Int64(cacheBytes),
		StateDir:                stateDir,
		Logger:                  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := app.Start(); err != nil {
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
