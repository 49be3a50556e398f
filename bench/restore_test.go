package bench

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

var restoreRecords = flag.Int("restore.records", 200_000, "changelog records restored by BenchmarkRestore")

// benchBroker returns the real broker when KAFKA_BOOTSTRAP_SERVERS is set, else kfake.
func benchBroker(b *testing.B) (addrs []string, kind string) {
	if v := strings.TrimSpace(os.Getenv(kafkatest.EnvBootstrap)); v != "" {
		return strings.Split(v, ","), "kafka"
	}
	return kafkatest.Embedded(b).Addrs, "kfake"
}

// produceChangelog writes n records (16-byte keys over n/2 distinct keys, 100-byte values) to
// a new single-partition topic.
func produceChangelog(b *testing.B, addrs []string, topic string, n int) {
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Return.Successes = false
	cfg.Producer.Flush.Bytes = 1 << 20
	cfg.Producer.Flush.Frequency = 5 * time.Millisecond
	cfg.Producer.Compression = sarama.CompressionNone
	kafkatest.CreateTopicsWith(b, addrs, cfg, 1, nil, topic)
	p, err := sarama.NewAsyncProducer(addrs, cfg)
	if err != nil {
		b.Fatal(err)
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
	val := make([]byte, 100)
	for i := 0; i < n; i++ {
		k := make([]byte, 16)
		copy(k, "key-")
		binary.BigEndian.PutUint64(k[8:], uint64(i%max(1, n/2)))
		p.Input() <- &sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.ByteEncoder(k), Value: sarama.ByteEncoder(val)}
	}
	_ = p.Close()
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// memSampler records the peak Go heap and RSS above the level at start.
type memSampler struct {
	stop               chan struct{}
	done               chan struct{}
	baseHeap, peakHeap uint64
	baseRSS, peakRSS   uint64
	sample             []metrics.Sample
}

func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func startSampler() *memSampler {
	runtime.GC()
	m := &memSampler{stop: make(chan struct{}), done: make(chan struct{}),
		sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
	metrics.Read(m.sample)
	m.baseHeap, m.peakHeap = m.sample[0].Value.Uint64(), m.sample[0].Value.Uint64()
	m.baseRSS, m.peakRSS = rss(), rss()
	go func() {
		defer close(m.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				metrics.Read(m.sample)
				m.peakHeap = max(m.peakHeap, m.sample[0].Value.Uint64())
				m.peakRSS = max(m.peakRSS, rss())
			}
		}
	}()
	return m
}

func (m *memSampler) finish() (heapMiB, rssMiB float64) {
	close(m.stop)
	<-m.done
	return float64(m.peakHeap-m.baseHeap) / (1 << 20), float64(m.peakRSS-m.baseRSS) / (1 << 20)
}

// rawRead reads topic partition 0 from the beginning to its n-th record with a bare sarama
// partition consumer and returns the elapsed time.
func rawRead(b *testing.B, addrs []string, topic string, n int) time.Duration {
	cfg := kafkatest.SaramaConfig()
	c, err := sarama.NewConsumer(addrs, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		b.Fatal(err)
	}
	var sink int
	for m := range pc.Messages() {
		sink += len(m.Key) + len(m.Value)
		if m.Offset == int64(n-1) {
			break
		}
	}
	d := time.Since(start)
	_ = pc.Close()
	_ = sink
	return d
}

// restoreOnce restores app's "kv" store (Pebble) from its changelog into a fresh state dir.
func restoreOnce(b *testing.B, addrs []string, app string, env storeapi.PebbleEnv) (time.Duration, int64) {
	client, err := sarama.NewClient(addrs, kafkatest.SaramaConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	builder := store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore("kv"), serde.ByteArray(), serde.ByteArray())
	tk, err := task.New(processor.TaskID{}, task.Spec{Stores: []task.StoreSpec{{Builder: builder}}},
		task.Config{ApplicationID: app, StateDir: b.TempDir(), Collector: nopCollector{}, PebbleEnv: env})
	if err != nil {
		b.Fatal(err)
	}
	if err := tk.Init(); err != nil {
		b.Fatal(err)
	}
	defer tk.Close()
	var restored int64
	reader := changelog.NewSaramaReader(client, false)
	defer reader.Close()
	ts := changelog.NewTaskState(changelog.TaskStateConfig{Reader: reader, Listener: restoreCounter{&restored}}, tk)
	start := time.Now()
	if err := ts.Restore(context.Background()); err != nil {
		b.Fatal(err)
	}
	return time.Since(start), restored
}

// cpuTime returns the user+system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadAvg returns the first three fields of /proc/loadavg ("?" when unreadable).
func loadAvg() string {
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

type nopCollector struct{}

func (nopCollector) Send(task.OutRecord) error           { return nil }
func (nopCollector) PartitionsFor(string) (int32, error) { return 1, nil }

type restoreCounter struct{ n *int64 }

func (restoreCounter) OnRestoreStart(changelog.TopicPartition, string, int64, int64) {}
func (r restoreCounter) OnBatchRestored(_ changelog.TopicPartition, _ string, _, n int64) {
	*r.n += n
}
func (restoreCounter) OnRestoreEnd(changelog.TopicPartition, string, int64) {}

func BenchmarkRestore(b *testing.B) {
	addrs, kind := benchBroker(b)
	n := *restoreRecords
	prefix := fmt.Sprintf("bench-restore-%d-%d", os.Getpid(), time.Now().UnixNano())
	full, quarter := prefix+"-full", prefix+"-quarter"
	produceChangelog(b, addrs, full+"-kv-changelog", n)
	produceChangelog(b, addrs, quarter+"-kv-changelog", n/4)
	env, err := storeapi.NewPebbleEnv(store.PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// pprof labels (inherited by the goroutines each phase starts: sarama's broker
		// goroutines, Pebble's flushes and compactions) let a -cpuprofile be split by phase:
		// go tool pprof -tagfocus phase=restore ...
		var rawD, oursD time.Duration
		var rq, rf int64
		var heapQ, rssQ, heapF, rssF float64
		cpu0 := cpuTime()
		pprof.Do(context.Background(), pprof.Labels("phase", "raw"), func(context.Context) {
			rawD = rawRead(b, addrs, full+"-kv-changelog", n)
		})
		cpu1 := cpuTime()
		pprof.Do(context.Background(), pprof.Labels("phase", "restore-quarter"), func(context.Context) {
			m := startSampler()
			_, rq = restoreOnce(b, addrs, quarter, env)
			heapQ, rssQ = m.finish()
		})
		cpu2 := cpuTime()
		pprof.Do(context.Background(), pprof.Labels("phase", "restore"), func(context.Context) {
			m := startSampler()
			oursD, rf = restoreOnce(b, addrs, full, env)
			heapF, rssF = m.finish()
		})
		cpu3 := cpuTime()
		b.ReportMetric((cpu1 - cpu0).Seconds(), "raw-cpu-s")
		b.ReportMetric((cpu3 - cpu2).Seconds(), "ours-cpu-s")
		if rf != int64(n) || rq != int64(n/4) {
			b.Fatalf("restored %d and %d records, want %d and %d", rf, rq, n, n/4)
		}
		rawRate := float64(n) / rawD.Seconds()
		oursRate := float64(n) / oursD.Seconds()
		b.ReportMetric(rawRate, "raw-rec/s")
		b.ReportMetric(oursRate, "ours-rec/s")
		b.ReportMetric(oursRate/rawRate, "rate-ratio")
		b.ReportMetric(heapQ, "peak-heap-MiB-n/4")
		b.ReportMetric(heapF, "peak-heap-MiB-n")
		b.ReportMetric(rssQ, "rss-growth-MiB-n/4")
		b.ReportMetric(rssF, "rss-growth-MiB-n")
		b.Logf("%s broker, %d records: raw sarama %.0f rec/s (%.2f CPU s), restore %.0f rec/s (%.2f CPU s, store close included) (ratio %.2f); peak heap growth %.1f MiB for %d records, %.1f MiB for %d; load average %s",
			kind, n, rawRate, (cpu1 - cpu0).Seconds(), oursRate, (cpu3 - cpu2).Seconds(), oursRate/rawRate, heapQ, n/4, heapF, n, loadAvg())
	}
}
