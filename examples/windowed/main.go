// Command windowed counts page views per page per 1-minute tumbling window with a 30-second
// grace period, emitting each window's count once, when the window closes (KIP-825's
// EmitStrategy.onWindowClose), and sending a view that arrives after its window closed to a
// late-record topic instead of dropping it silently.
//
// By default it starts an embedded in-process Kafka broker (kfake), writes the page views of
// Views (event times from 00:00:05 to 00:04:00 on 2026-01-01 UTC, one of them late), runs the
// application until it has processed them, closes it, reads the output and late-record topics
// and prints, to stdout,
//
//	window<TAB>page<TAB>views          one line per closed window and page, by window then page
//	late<TAB>page<TAB>event time<TAB>window<TAB>reason   one line per late view
//
// (times as HH:MM:SS UTC). Progress goes to stderr. Flag -bootstrap host:port[,...] uses a real
// cluster (topics created if missing); -application-id and -topic-prefix rename what it
// creates.
//
// How windows close: a window [start, end) accepts views until stream time (the largest event
// time seen by the task) reaches end + 30 s; then its count is emitted once, and later views
// for it are late. Stream time is per task, that is per input partition, so the input topic
// has one partition here. The last view (00:04:00) moves stream time far enough to close the
// windows up to [00:02:00, 00:03:00); the windows from 00:03:00 on stay open, as they would in
// any run whose input has not moved past them yet.
//
// Java has no late-record topic (it counts late records in the dropped-records metric and logs
// them); LateRecordsTo adds it. The on-window-close check normally runs at most once
// per second of wall-clock time (Java's internal emit.interval.ms.kstreams.windowed.aggregation);
// the example sets it to 0 so a short run emits without waiting.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

const (
	// WindowSize is the tumbling window size.
	WindowSize = time.Minute
	// Grace is how long after its end a window still accepts out-of-order views.
	Grace = 30 * time.Second
	// StoreName is the window store of the counts.
	StoreName = "pageviews-per-minute"
	// Retention is how long the store keeps a window. The default, size + grace (90 s), is not
	// enough here: when stream time jumps past a window's close time by more than the window
	// is retained (03:10 -> 04:00 for [00:02:00, 00:03:00)), the window has left the store by
	// the time the close check looks for it, and its count is never emitted. Java's
	// on-window-close store does the same: it reads only windows starting at or after
	// stream time - retention.
	Retention = 10 * time.Minute
)

// Base is the time the example's event times count from: 2026-01-01T00:00:00Z in ms.
var Base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// View is one page view: the record key is Page, the value User, the timestamp At (ms).
type View struct {
	Page, User string
	At         int64
}

// at is Base plus minutes and seconds.
func at(min, sec int) int64 { return Base + int64(min)*60_000 + int64(sec)*1000 }

// Views are the page views the example writes, in this order. The view of /pricing at
// 00:00:45 comes after stream time reached 00:02:10, past 00:01:30, when [00:00:00, 00:01:00)
// closed: it is late. The view of /docs at 00:01:50 comes at the same point but its window
// [00:01:00, 00:02:00) closes only at 00:02:30: it is counted.
var Views = []View{
	{"/home", "alice", at(0, 5)}, {"/docs", "bob", at(0, 12)}, {"/home", "carol", at(0, 20)},
	{"/pricing", "alice", at(0, 41)}, {"/home", "dave", at(0, 58)},
	{"/home", "bob", at(1, 3)}, {"/docs", "alice", at(1, 15)}, {"/docs", "erin", at(1, 22)},
	{"/home", "carol", at(0, 50)}, // out of order, its window still open (closes at 00:01:30)
	{"/docs", "dave", at(1, 40)}, {"/pricing", "bob", at(2, 2)}, {"/home", "erin", at(2, 10)},
	{"/pricing", "frank", at(0, 45)}, // late: [00:00:00, 00:01:00) closed at stream time 00:01:30
	{"/docs", "frank", at(1, 50)},    // out of order, [00:01:00, 00:02:00) open until 00:02:30
	{"/home", "alice", at(2, 31)}, {"/home", "bob", at(2, 59)}, {"/docs", "carol", at(3, 10)},
	{"/home", "grace", at(4, 0)},
}

// Topology is the windowed count: views keyed by page, grouped by page, counted per 1-minute
// window with 30 s grace (kept for Retention), emitted on window close to output (keys: Java's time-windowed
// String serde, values: Long); late views go to late unchanged, with headers naming the window.
func Topology(input, output, late string) (*processor.Topology, error) {
	b := kstream.NewStreamsBuilder()
	views := kstream.Stream(b, input, kstream.ConsumedWith(serde.String(), serde.String()))
	kstream.WindowedBy(views.GroupByKey(kstream.GroupedWith(serde.String(), serde.String())),
		kstream.TimeWindowsOfSizeAndGrace(WindowSize, Grace)).
		EmitStrategy(kstream.EmitOnWindowClose()).
		LateRecordsTo(late).
		Count(kstream.MaterializedAs[string, int64](StoreName).WithRetention(Retention)).
		ToStream().
		To(output, kstream.ProducedWith(serde.TimeWindowed(serde.String(), WindowSize), serde.Long()))
	return b.Build()
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "windowed: "+strings.Join(strings.Fields(err.Error()), " "))
		os.Exit(1)
	}
}

// clock formats t (ms) as HH:MM:SS UTC.
func clock(t int64) string { return time.UnixMilli(t).UTC().Format("15:04:05") }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("windowed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap", "", "`host:port[,...]` of a Kafka cluster to use instead of the embedded broker")
	appID := fs.String("application-id", "pageviews-windowed", "application.id")
	prefix := fs.String("topic-prefix", "pageviews", "prefix of the topics: <prefix>, <prefix>-per-minute, <prefix>-late")
	if err := fs.Parse(args); err != nil {
		return err
	}
	input, output, late := *prefix, *prefix+"-per-minute", *prefix+"-late"
	progress := func(format string, a ...any) { fmt.Fprintf(stderr, "windowed: "+format+"\n", a...) }

	var addrs []string
	stateDir, err := os.MkdirTemp("", "windowed-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stateDir)
	if *bootstrap == "" {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			return fmt.Errorf("start the embedded broker: %w", err)
		}
		defer c.Close()
		addrs = c.ListenAddrs()
		progress("started an embedded Kafka broker (kfake) at %s", strings.Join(addrs, ","))
	} else {
		addrs = strings.Split(*bootstrap, ",")
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Metadata.Retry.Max = 1
	cfg.Producer.Partitioner = sarama.NewMurmur2Partitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		return fmt.Errorf("cannot reach Kafka at %s: %v", strings.Join(addrs, ","), err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return err
	}
	for _, t := range []string{input, output, late} {
		if err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: -1}, false); err != nil &&
			!errors.Is(err, sarama.ErrTopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", t, err)
		}
	}

	topo, err := Topology(input, output, late)
	if err != nil {
		return err
	}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: *appID, BootstrapServers: addrs, StateDir: stateDir,
		CommitInterval: 100 * time.Millisecond,
		Properties:     map[string]string{kstream.EmitIntervalWindowedAggregationConfig: "0"},
		Logger:         slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	if err := app.Start(context.Background()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_ = app.Close(cctx)
			cancel()
		}
	}()

	p, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return err
	}
	// One at a time, in order: the order of the views is the point of the example.
	for _, v := range Views {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: input, Key: sarama.StringEncoder(v.Page),
			Value: sarama.StringEncoder(v.User), Timestamp: time.UnixMilli(v.At)}); err != nil {
			p.Close()
			return fmt.Errorf("write %s: %w", input, err)
		}
	}
	p.Close()
	progress("wrote %d page views to %s", len(Views), input)

	if err := app.WaitCaughtUp(ctx); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = app.Close(cctx)
	cancel()
	closed = true
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if err := app.Err(); err != nil {
		return err
	}
	progress("processed %d views and closed the application (output committed)", len(Views))

	windowed := serde.TimeWindowed(serde.String(), WindowSize)
	var lines []string
	outs, err := readAll(client, output)
	if err != nil {
		return err
	}
	for _, m := range outs {
		wk, err := windowed.Deserialize(output, nil, m.Key)
		if err != nil {
			return fmt.Errorf("%s: key: %w", output, err)
		}
		if len(m.Value) != 8 {
			return fmt.Errorf("%s: value of %d bytes, want a Long", output, len(m.Value))
		}
		lines = append(lines, fmt.Sprintf("%s-%s\t%s\t%d", clock(wk.Window.Start), clock(wk.Window.End), wk.Key,
			int64(binary.BigEndian.Uint64(m.Value))))
	}
	sort.Strings(lines) // window start first (fixed-width times), then page
	lates, err := readAll(client, late)
	if err != nil {
		return err
	}
	for _, m := range lates {
		h := map[string]string{}
		for _, rh := range m.Headers {
			h[string(rh.Key)] = string(rh.Value)
		}
		lines = append(lines, fmt.Sprintf("late\t%s\t%s\t%s\t%s", m.Key, clock(m.Timestamp.UnixMilli()),
			h[kstream.LateHeaderWindow], h[kstream.LateHeaderReason]))
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return nil
}

// readAll reads partition 0 of topic from the start to its current end.
func readAll(client sarama.Client, topic string) ([]*sarama.ConsumerMessage, error) {
	end, err := client.GetOffset(topic, 0, sarama.OffsetNewest)
	if err != nil {
		return nil, fmt.Errorf("%s: end offset: %w", topic, err)
	}
	start, err := client.GetOffset(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return nil, fmt.Errorf("%s: start offset: %w", topic, err)
	}
	if start >= end {
		return nil, nil
	}
	c, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, 0, start)
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	var out []*sarama.ConsumerMessage
	timeout := time.After(30 * time.Second)
	for next := start; next < end; {
		select {
		case m := <-pc.Messages():
			out = append(out, m)
			next = m.Offset + 1
		case <-timeout:
			return nil, fmt.Errorf("%s: not read to offset %d within 30 s", topic, end)
		}
	}
	return out, nil
}
