// Command asyncbench measures an async step against the synchronous call it replaces: records
// over -partitions partitions, each enriched by a call to a local HTTP service (or, with
// -service sleep, an in-process sleep) taking -latency. It runs, one after the other on fresh
// topics and application ids:
//
//   - async: MapValuesAsync with MaxInFlight -in-flight on one stream thread, -records records;
//   - sync: MapValuesWithKey making the same call on the stream thread, -sync-records records,
//     with one stream thread and with -partitions stream threads (one task each, the best a
//     synchronous topology can do).
//
// Each run's wall time goes from the instance's first RUNNING state (the group joined) until the
// group's committed offsets (commit.interval.ms 100) reach the end of the input
// (KafkaStreams.WaitCaughtUp); at-least-once commits no offset past a record an async
// step still holds, so caught up means every result is out. It prints records/s per run, the
// async bound (partitions x in-flight / latency), the async rate as a share of it, and the
// async rate over each sync rate.
//
// Usage: go run ./bench/cmd/asyncbench -bootstrap host:port [-records 200000] [-partitions 8]
// [-latency 20ms] [-in-flight 16] [-sync-records 1000] [-service http|sleep] [-eos]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
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
	syncRecords := flag.Int("sync-records", 1000, "records of each sync run")
	partitions := flag.Int("partitions", 8, "input partitions")
	latency := flag.Duration("latency", 20*time.Millisecond, "the service's time per call")
	inFlight := flag.Int("in-flight", 16, "MaxInFlight of the async step (per task)")
	service := flag.String("service", "http", "http (a local HTTP service) or sleep (in-process)")
	eos := flag.Bool("eos", false, "exactly_once_v2 (commit.interval.ms 100) instead of at_least_once")
	flag.Parse()
	if *bootstrap == "" {
		fail(fmt.Errorf("-bootstrap (or KAFKA_BOOTSTRAP_SERVERS) is required"))
	}
	addrs := strings.Split(*bootstrap, ",")
	call, stop, err := newService(*service, *latency, 4**partitions**inFlight)
	if err != nil {
		fail(err)
	}
	defer stop()
	run := fmt.Sprintf("asyncbench-%d", time.Now().UnixNano())
	if *eos {
		guarantee = kstreams.ExactlyOnceV2
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
	syncN := measure(addrs, run+"-syncN", *syncRecords, *partitions, *partitions, syncStep)
	bound := float64(*partitions**inFlight) / latency.Seconds()
	fmt.Printf("service %s, latency %v, %d partitions, MaxInFlight %d, %s\n", *service, *latency, *partitions, *inFlight, guarantee)
	fmt.Printf("async (1 thread):        %9.0f records/s over %d records; bound %0.f/s: %.0f%% of it\n", asyncRate, *records, bound, 100*asyncRate/bound)
	fmt.Printf("sync MapValues, 1 thread: %9.1f records/s over %d records; async/sync %.0fx\n", sync1, *syncRecords, asyncRate/sync1)
	fmt.Printf("sync MapValues, %d threads: %8.1f records/s over %d records; async/sync %.0fx\n", *partitions, syncN, *syncRecords, asyncRate/syncN)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "asyncbench:", err)
	os.Exit(1)
}

// newService returns the call: an HTTP GET to a local server answering after latency, or an
// in-process sleep.
func newService(kind string, latency time.Duration, conns int) (func(context.Context, string) (string, error), func(), error) {
	if kind == "sleep" {
		return func(ctx context.Context, v string) (string, error) {
			select {
			case <-time.After(latency):
				return v + "!", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}, func() {}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
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
	}, func() { _ = srv.Close() }, nil
}

// guarantee is the processing guarantee of every run.
var guarantee = kstreams.AtLeastOnce

// measure writes n records to a fresh topic, runs the topology step builds on threads stream
// threads until caught up, and returns records per second.
func measure(addrs []string, name string, n, partitions, threads int, step func(kstream.KStream[string, string]) kstream.KStream[string, string]) float64 {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V4_0_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewMurmur2Partitioner
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		fail(err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		fail(err)
	}
	in, out := name+"-in", name+"-out"
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
	b := kstream.NewStreamsBuilder()
	step(kstream.Stream(b, in, kstream.ConsumedWith(serde.String(), serde.String()))).To(out, kstream.ProducedWith(serde.String(), serde.String()))
	topo, err := b.Build()
	if err != nil {
		fail(err)
	}
	dir, _ := os.MkdirTemp("", "asyncbench-")
	defer os.RemoveAll(dir)
	app, err := kstreams.New(topo, kstreams.Config{ApplicationID: name, BootstrapServers: addrs, NumStreamThreads: threads, StateDir: dir, ProcessingGuarantee: guarantee,
		CommitInterval: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
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
