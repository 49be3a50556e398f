package fetch

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/recordbatch"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// Allocation benchmarks against kfake (in process, so the end-to-end ones count kfake's own
// allocations too; compare Fetcher with RawFetch, which reads the same data with bare sarama
// Fetch requests). Run:
//
//	go test -run '^$' -bench 'DecodeBlock|DecodeRaw' ./internal/kafka/fetch/
//	go test -run '^$' -bench 'Fetcher|RawFetch' -benchtime 200000x ./internal/kafka/fetch/
//
// The figures to read are allocs/record and cpu-ns/record (the process's CPU time, kfake's
// included, per record).

const (
	benchPartitions = 4
	benchBatches    = 25   // per partition
	benchBatchSize  = 1000 // records per batch
)

// benchTopic loads a topic with benchPartitions x benchBatches batches of benchBatchSize
// word-sized records and returns it with its end offsets.
func benchTopic(b *testing.B) (*env, string, map[kafka.TopicPartition]int64) {
	b.Helper()
	e := newEnv(b, kafkatest.Embedded(b))
	topic := e.topic("bench", benchPartitions)
	ends := map[kafka.TopicPartition]int64{}
	for p := range int32(benchPartitions) {
		tp := tpOf(topic, p)
		for range benchBatches {
			recs := make([]rec, benchBatchSize)
			now := time.Now().UnixMilli()
			for i := range recs {
				w := []byte(fmt.Sprintf("word%05d", i))
				recs[i] = rec{key: w, value: w, ts: now}
			}
			e.produceBatch(tp, recs)
		}
		ends[tp] = benchBatches * benchBatchSize
	}
	return e, topic, ends
}

// mallocs returns the process's heap allocations so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// cpuTime returns the CPU time the process used so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecodeRaw decodes one partition's record batches of a real response (25 batches of
// 1000 records) with decodeRaw again and again: the whole decoding, which for the sarama
// path is sarama's decode plus decodeBlock.
func BenchmarkDecodeRaw(b *testing.B) {
	e, topic, _ := benchTopic(b)
	tp := tpOf(topic, 0)
	n, _, err := e.cluster.Leader(tp)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := streamsgroup.ConfigFromSarama(e.cluster.Config(), "")
	if err != nil {
		b.Fatal(err)
	}
	conn, err := streamsgroup.Dial(context.Background(), n.Addr, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	q := recordbatch.FetchRequest{MaxWaitMs: 10, MinBytes: 1, MaxBytes: 50 << 20, SessionEpoch: -1,
		Partitions: []recordbatch.FetchPartition{{TopicPartition: recordbatch.TopicPartition{Topic: tp.Topic, Partition: tp.Partition},
			MaxBytes: 50 << 20, LeaderEpoch: -1}}}
	body, err := conn.RoundTrip(context.Background(), recordbatch.APIKeyFetch, recordbatch.FetchVersion, false, q.AppendTo(nil))
	if err != nil {
		b.Fatal(err)
	}
	resp, err := recordbatch.ParseFetch(body, nil)
	if err != nil || len(resp.Partitions) != 1 {
		b.Fatalf("response: %v, %d partitions", err, len(resp.Partitions))
	}
	raw := resp.Partitions[0].Records
	var dec recordbatch.Decoder
	none := func() []Record { return nil }
	records := len(decodeRaw(&dec, raw, nil, 0, false, none).records)
	if records != benchBatches*benchBatchSize {
		b.Fatalf("%d records in the block, want %d", records, benchBatches*benchBatchSize)
	}
	b.ReportAllocs()
	b.ResetTimer()
	m0 := mallocs()
	for b.Loop() {
		decodeRaw(&dec, raw, nil, 0, true, none)
	}
	b.StopTimer()
	b.ReportMetric(float64(mallocs()-m0)/float64(b.N)/float64(records), "allocs/record")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records), "ns/record")
}

// BenchmarkDecodeBlock decodes one partition's block of a real response (25 batches of 1000
// records) again and again: the fetcher's own cost per record, sarama's decode aside.
func BenchmarkDecodeBlock(b *testing.B) {
	e, topic, _ := benchTopic(b)
	tp := tpOf(topic, 0)
	n, _, err := e.cluster.Leader(tp)
	if err != nil {
		b.Fatal(err)
	}
	conn, err := e.cluster.Conn(n, kafka.Purpose{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	req := &sarama.FetchRequest{Version: fetchVersion, MaxWaitTime: 10, MinBytes: 1, MaxBytes: 50 << 20, SessionEpoch: -1}
	req.AddBlock(tp.Topic, tp.Partition, 0, 50<<20, -1)
	resp, err := conn.Fetch(req)
	if err != nil {
		b.Fatal(err)
	}
	blk := resp.GetBlock(tp.Topic, tp.Partition)
	records := len(decodeBlock(blk, 0, false, nil).records)
	if records != benchBatches*benchBatchSize {
		b.Fatalf("%d records in the block, want %d", records, benchBatches*benchBatchSize)
	}
	b.ReportAllocs()
	b.ResetTimer()
	m0 := mallocs()
	for b.Loop() {
		decodeBlock(blk, 0, true, nil)
	}
	b.StopTimer()
	b.ReportMetric(float64(mallocs()-m0)/float64(b.N)/float64(records), "allocs/record")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records), "ns/record")
}

// BenchmarkFetcher reads the loaded topic through a Fetcher (the loop, its decoding, Poll),
// seeking back to 0 at the end; one op is one record.
func BenchmarkFetcher(b *testing.B) {
	e, _, ends := benchTopic(b)
	notify := make(chan struct{}, 1)
	f, err := New(Config{Cluster: e.cluster, MaxWait: 10 * time.Millisecond, Notify: func() { signal(notify) }})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	start := map[kafka.TopicPartition]int64{}
	for tp := range ends {
		start[tp] = 0
	}
	f.Assign(start)
	b.ReportAllocs()
	b.ResetTimer()
	m0, c0 := mallocs(), cpuTime()
	got := 0
	for got < b.N {
		for _, ch := range f.Poll() {
			got += len(ch.Records)
			if ch.Next >= ends[ch.TP] {
				f.Seek(ch.TP, 0)
			}
		}
		if got < b.N {
			<-notify
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(mallocs()-m0)/float64(got), "allocs/record")
	b.ReportMetric(float64(cpuTime()-c0)/float64(got), "cpu-ns/record")
	st := f.Stats()
	b.ReportMetric(float64(st.Records)/float64(st.Chunks), "records/chunk")
	b.ReportMetric(100*float64(st.IncrementalRequests)/float64(st.IncrementalRequests+st.FullRequests), "%incremental")
}

// BenchmarkRawFetch reads the same data with bare sessionless sarama Fetch requests of all
// partitions, walking the decoded records: the floor the Fetcher is compared with.
func BenchmarkRawFetch(b *testing.B) {
	e, topic, ends := benchTopic(b)
	n, _, err := e.cluster.Leader(tpOf(topic, 0))
	if err != nil {
		b.Fatal(err)
	}
	conn, err := e.cluster.Conn(n, kafka.Purpose{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	next := map[int32]int64{}
	b.ReportAllocs()
	b.ResetTimer()
	m0, c0 := mallocs(), cpuTime()
	got := 0
	var sink int
	for got < b.N {
		req := &sarama.FetchRequest{Version: fetchVersion, MaxWaitTime: 10, MinBytes: 1, MaxBytes: 50 << 20, SessionEpoch: -1}
		for p := range int32(benchPartitions) {
			req.AddBlock(topic, p, next[p], 1<<20, -1)
		}
		resp, err := conn.Fetch(req)
		if err != nil {
			b.Fatal(err)
		}
		for p, blk := range resp.Blocks[topic] {
			for _, rs := range blk.RecordsSet {
				rb := rs.RecordBatch
				if rb == nil || rb.PartialTrailingRecord {
					break
				}
				for _, r := range rb.Records {
					if rb.FirstOffset+r.OffsetDelta >= next[p] {
						sink += len(r.Value)
						got++
					}
				}
				next[p] = rb.LastOffset() + 1
			}
			if next[p] >= ends[tpOf(topic, p)] {
				next[p] = 0
			}
		}
	}
	b.StopTimer()
	_ = sink
	b.ReportMetric(float64(mallocs()-m0)/float64(got), "allocs/record")
	b.ReportMetric(float64(cpuTime()-c0)/float64(got), "cpu-ns/record")
}
