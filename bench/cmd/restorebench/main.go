// Command restorebench is the Go side of the restore benchmark of bench/run.sh:
// a changelog of N records restored into a fresh state directory, ours against Java Kafka
// Streams (io.kstreams.bench.Restore, RocksDB), on the same broker and the same bytes.
//
// Two modes:
//
//	restorebench -mode produce -bootstrap HOST:PORT -records N -apps goApp,javaApp
//	    [-partitions P] [-value-bytes V]
//
// creates, for every application id A, the input topic A-input and the compacted changelog
// A-kv-changelog, with P partitions each (default 1), and writes the same N records to every
// changelog, record i to partition i mod P: key = "key-" ‖ 4 zero bytes ‖ int64 i big-endian
// (16 bytes, all distinct, so compaction never changes what is restored), value = V xorshift
// bytes seeded by i (default 100), timestamp = a fixed base + i ms. That is the changelog of a
// plain key-value store (Java's Stores.persistentKeyValueStore with Bytes/byte[] serdes writes
// exactly key and value). -partitions 4 -value-bytes 8 with 2 000 000 records is close to
// what the survivor of the fail-over benchmark (bench/cmd/failbench) restores: four tasks of
// ~500 000 small records each.
//
//	restorebench -mode delete -bootstrap HOST:PORT -apps goApp,javaApp
//
// deletes those topics again (after a run on a shared broker).
//
//	restorebench -mode restore -bootstrap HOST:PORT -application-id A -records N [-partitions P]
//	    [-state-dir DIR]
//
// runs a kstreams.New application (one stream thread) whose topology is source A-input ->
// processor "proc" with the persistent (Pebble) key-value store "kv" (ByteArray serdes,
// logging on), in a fresh state directory, with a restore listener; when the listener
// reports the end of the restore of all P partitions (P tasks) it prints one line and exits:
//
//	restore impl=go records=N restore_s=S end_ms=E peak_rss_mib=R cpu_s=C
//
// restore_s runs from the listener's first restore start to its last restore end; end_ms is the Unix
// time in ms at the end (the caller subtracts its own start time to get the time from process
// start); peak_rss_mib is VmHWM of /proc/self/status; cpu_s the process's user+system CPU.
// With -cpuprofile FILE, a CPU profile of the process from start to the restore end is written
// to FILE. Exit status 1 on failure (including fewer records restored than -records), 2 on bad flags.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// StoreName is the name of the restored store; its changelog is <application.id>-kv-changelog.
const StoreName = "kv"

// baseTimestamp is the timestamp (ms) of record 0; record i has baseTimestamp + i.
const baseTimestamp int64 = 1_767_225_600_000 // 2026-01-01T00:00:00Z

func main() {
	mode := flag.String("mode", "", "`produce`, `restore` or `delete`")
	bootstrap := flag.String("bootstrap", "", "`host:port[,...]` of the cluster")
	records := flag.Int("records", 5_000_000, "changelog records (of all partitions)")
	parts := flag.Int("partitions", 1, "produce, restore: partitions of the input and changelog topics (tasks restored)")
	valueBytes := flag.Int("value-bytes", 100, "produce: bytes of every value")
	apps := flag.String("apps", "", "produce: comma-separated application ids to fill changelogs for")
	appID := flag.String("application-id", "", "restore: application.id")
	stateDir := flag.String("state-dir", "", "restore: state.dir (default: a fresh temporary directory)")
	timeout := flag.Duration("timeout", 30*time.Minute, "restore: give up after this long")
	cpuProfile := flag.String("cpuprofile", "", "restore: write a CPU profile of the process, from start to the restore end, to this `file`")
	flag.Parse()
	if *bootstrap == "" || *records <= 0 || *parts <= 0 || *valueBytes < 0 {
		fmt.Fprintln(os.Stderr, "restorebench: -bootstrap, a positive -records and -partitions and -value-bytes >= 0 are required")
		os.Exit(2)
	}
	addrs := strings.Split(*bootstrap, ",")
	var err error
	switch *mode {
	case "produce":
		if *apps == "" {
			fmt.Fprintln(os.Stderr, "restorebench: -apps is required with -mode produce")
			os.Exit(2)
		}
		err = produce(addrs, strings.Split(*apps, ","), *records, *parts, *valueBytes)
	case "restore":
		if *appID == "" {
			fmt.Fprintln(os.Stderr, "restorebench: -application-id is required with -mode restore")
			os.Exit(2)
		}
		err = restore(addrs, *appID, *records, *parts, *stateDir, *timeout, *cpuProfile)
	case "delete":
		err = deleteTopics(addrs, strings.Split(*apps, ","))
	default:
		fmt.Fprintln(os.Stderr, "restorebench: -mode must be produce, restore or delete")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "restorebench:", err)
		os.Exit(1)
	}
}

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "restorebench"
	cfg.Version = sarama.V4_0_0_0
	return cfg
}

// produce creates the topics of every app (parts partitions each) and writes the same n
// records, of valueBytes-byte values, to every changelog.
func produce(addrs, apps []string, n, parts, valueBytes int) error {
	cfg := saramaConfig()
	admin, err := sarama.NewClusterAdmin(addrs, cfg)
	if err != nil {
		return err
	}
	compact := "compact"
	for _, app := range apps {
		for topic, conf := range map[string]map[string]*string{
			app + "-input":                       nil,
			app + "-" + StoreName + "-changelog": {"cleanup.policy": &compact},
		} {
			err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: int32(parts), ReplicationFactor: 1, ConfigEntries: conf}, false)
			if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
				_ = admin.Close()
				return fmt.Errorf("create %s: %w", topic, err)
			}
		}
	}
	_ = admin.Close()

	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.RequiredAcks = sarama.WaitForLocal
	cfg.Producer.Return.Successes = false
	cfg.Producer.Compression = sarama.CompressionNone
	cfg.Producer.Flush.Bytes = 512 << 10
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	p, err := sarama.NewAsyncProducer(addrs, cfg)
	if err != nil {
		return err
	}
	var failed atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := range p.Errors() {
			failed.Store(e.Err)
		}
	}()
	for i := 0; i < n; i++ {
		k := make([]byte, 16)
		copy(k, "key-")
		binary.BigEndian.PutUint64(k[8:], uint64(i))
		v := make([]byte, valueBytes) // xorshift bytes seeded by i: distinct, incompressible values
		x := uint64(i)*0x9E3779B97F4A7C15 + 1
		for j := range v {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			v[j] = byte(x)
		}
		ts := time.UnixMilli(baseTimestamp + int64(i))
		for _, app := range apps {
			p.Input() <- &sarama.ProducerMessage{Topic: app + "-" + StoreName + "-changelog", Partition: int32(i % parts),
				Key: sarama.ByteEncoder(k), Value: sarama.ByteEncoder(v), Timestamp: ts}
		}
	}
	_ = p.Close()
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	return nil
}

// deleteTopics deletes the input and changelog topics of every app (missing ones are fine).
func deleteTopics(addrs, apps []string) error {
	admin, err := sarama.NewClusterAdmin(addrs, saramaConfig())
	if err != nil {
		return err
	}
	defer admin.Close()
	for _, app := range apps {
		for _, topic := range []string{app + "-input", app + "-" + StoreName + "-changelog"} {
			if err := admin.DeleteTopic(topic); err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				return fmt.Errorf("delete %s: %w", topic, err)
			}
		}
	}
	return nil
}

// listener reports the end of the restore of the store's parts partitions.
type listener struct {
	parts int
	start atomic.Int64 // Unix ns of the first OnRestoreStart
	total atomic.Int64
	ended atomic.Int64
	end   chan time.Time
}

func (l *listener) OnRestoreStart(changelog.TopicPartition, string, int64, int64) {
	l.start.CompareAndSwap(0, time.Now().UnixNano())
}
func (l *listener) OnBatchRestored(changelog.TopicPartition, string, int64, int64) {}
func (l *listener) OnRestoreEnd(_ changelog.TopicPartition, _ string, total int64) {
	l.total.Add(total)
	if l.ended.Add(1) == int64(l.parts) {
		l.end <- time.Now()
	}
}

// noop is the processor the store is connected to; the input topic stays empty.
type noop struct{}

func (noop) Init(processor.ProcessorContext[any, any]) error { return nil }
func (noop) Process(processor.Record[any, any]) error        { return nil }
func (noop) Close() error                                    { return nil }

func restore(addrs []string, appID string, n, parts int, stateDir string, timeout time.Duration, cpuProfile string) error {
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile() // a no-op after the stop at the restore end
	}
	if stateDir == "" {
		d, err := os.MkdirTemp("", "bench-restore-state-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		stateDir = d
	}
	topo := processor.NewTopology()
	if err := topo.AddSource("src", []string{appID + "-input"},
		processor.WithKeyDeserializer[[]byte](serde.ByteArray()), processor.WithValueDeserializer[[]byte](serde.ByteArray())); err != nil {
		return err
	}
	if err := topo.AddProcessor("proc", processor.ProcessorSupplierFunc[any, any, any, any](
		func() processor.Processor[any, any, any, any] { return noop{} }), "src"); err != nil {
		return err
	}
	kv := store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore(StoreName), serde.ByteArray(), serde.ByteArray())
	if err := topo.AddStateStore(kv, "proc"); err != nil {
		return err
	}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID:    appID,
		BootstrapServers: addrs,
		NumStreamThreads: 1,
		StateDir:         stateDir,
		Logger:           slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	l := &listener{parts: parts, end: make(chan time.Time, 1)}
	app.SetGlobalStateRestoreListener(l)
	if err := app.Start(context.Background()); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = app.Close(ctx)
	}()
	var end time.Time
	select {
	case end = <-l.end:
	case <-app.Done():
		return fmt.Errorf("application stopped before the restore ended: %v", app.Err())
	case <-time.After(timeout):
		return fmt.Errorf("restore did not end within %s", timeout)
	}
	rss, cpu := peakRSSMiB(), cpuSeconds()
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if got := l.total.Load(); got != int64(n) {
		return fmt.Errorf("restored %d records, want %d", got, n)
	}
	restoreS := end.Sub(time.Unix(0, l.start.Load())).Seconds()
	fmt.Printf("restore impl=go records=%d restore_s=%.3f end_ms=%d peak_rss_mib=%.1f cpu_s=%.2f\n",
		n, restoreS, end.UnixMilli(), rss, cpu)
	return nil
}

// peakRSSMiB returns VmHWM of /proc/self/status in MiB (0 when unreadable).
func peakRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseFloat(f[0], 64)
				return kb / 1024
			}
		}
	}
	return 0
}

// cpuSeconds returns the user+system CPU time of the process.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
