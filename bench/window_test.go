package bench

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

var windowRecords = flag.Int("window.records", 10_000_000,
	"records streamed by BenchmarkWindowedCountMemory (env KSTREAMS_BENCH_WINDOW_RECORDS overrides)")

// BenchmarkWindowedCountMemory streams window.records records (default 10 000 000) over 100 000
// keys through a 5-minute tumbling window count with 1-minute grace in the test driver
// (in-memory window store, changelog off, output drained every 10 000 records). Event time
// advances 1 ms per record, so each key gets a record every 100 s (3 per window) and the run
// crosses records/300 000 windows; closed windows are dropped by the store's retention
// (size + grace = 6 min). It reports the peak Go heap (MB, sampled every 50 000 records after a
// GC) over the first quarter of the records and over all of them, their ratio, and the number
// of windows the run closed: flat peak heap with many more closed windows means memory does not
// grow with closed windows.
//
// Run: go test -run '^$' -bench WindowedCountMemory -benchtime 1x ./bench/ [-args -window.records 1000000]
func BenchmarkWindowedCountMemory(b *testing.B) {
	n := *windowRecords
	if v := os.Getenv("KSTREAMS_BENCH_WINDOW_RECORDS"); v != "" {
		if x, err := strconv.Atoi(v); err == nil {
			n = x
		}
	}
	const keys = 100_000
	keyNames := make([]string, keys)
	for i := range keyNames {
		keyNames[i] = fmt.Sprintf("key-%06d", i)
	}
	for range b.N {
		sb := kstream.NewStreamsBuilder()
		g := kstream.Stream(sb, "in", kstream.ConsumedWith(serde.String(), serde.String())).
			GroupByKey(kstream.GroupedWith(serde.String(), serde.String()))
		kstream.WindowedBy(g, kstream.TimeWindowsOfSizeAndGrace(5*time.Minute, time.Minute)).
			Count(kstream.MaterializedAs[string, int64]("counts").WithLoggingDisabled().WithCachingDisabled()).
			ToStream().To("out")
		topo, err := sb.Build()
		if err != nil {
			b.Fatal(err)
		}
		d, err := testdriver.New(topo, map[string]string{"application.id": "bench-window"}, 0)
		if err != nil {
			b.Fatal(err)
		}
		in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String())
		out := testdriver.CreateOutputTopic(d, "out", serde.ByteArray(), serde.ByteArray())
		var ms runtime.MemStats
		var peakQuarter, peakAll uint64
		sample := func(i int) {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peakAll = max(peakAll, ms.HeapAlloc)
			if i <= n/4 {
				peakQuarter = max(peakQuarter, ms.HeapAlloc)
			}
		}
		start := time.Now()
		for i := range n {
			if err := in.PipeKeyValueAt(keyNames[i%keys], "v", int64(i)); err != nil {
				b.Fatal(err)
			}
			if i%10_000 == 9_999 {
				if _, err := out.ReadRecordsToList(); err != nil {
					b.Fatal(err)
				}
			}
			if i%50_000 == 49_999 {
				sample(i + 1)
			}
		}
		elapsed := time.Since(start)
		sample(n)
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
		const windowMs = 300_000
		closed := int64(0)
		if n > 0 {
			// Windows before the one holding stream time - grace are closed, for every key.
			lastClosedEnd := (int64(n-1) - 60_000) / windowMs
			closed = max(0, lastClosedEnd) * int64(min(n, keys))
		}
		b.ReportMetric(float64(peakQuarter)/(1<<20), "peak-heap-quarter-MB")
		b.ReportMetric(float64(peakAll)/(1<<20), "peak-heap-MB")
		if peakQuarter > 0 {
			b.ReportMetric(float64(peakAll)/float64(peakQuarter), "peak-ratio")
		}
		b.ReportMetric(float64(closed), "closed-windows")
		b.ReportMetric(float64(n)/elapsed.Seconds(), "records/s")
	}
}
