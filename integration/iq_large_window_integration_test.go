package integration_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Window layout of the large window store test: entry i of a task is key "<partition>-<i/10>"
// (6 digits) in the window starting at base + (i%10) minutes, with a 40-byte value.
const (
	bigWindowsPerKey = 10
	bigWindowStep    = int64(time.Minute / time.Millisecond)
	bigWindowSegment = int64(30 * time.Minute / time.Millisecond) // retention 1 h: max(1 h / 2, 1 min)
)

// fillWindowProcessor writes, for a record of value "n,base", n windows (see bigWindowsPerKey)
// into its timestamped window store (stamped with the window start), then the marker
// "~done-<partition>" in the window at base.
type fillWindowProcessor struct {
	ctx processor.ProcessorContext[string, string]
	ws  store.TimestampedWindowStore[string, string]
}

func (p *fillWindowProcessor) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	ws, err := processor.GetStateStore[store.TimestampedWindowStore[string, string]](ctx, "BigW")
	p.ws = ws
	return err
}

func (p *fillWindowProcessor) Process(r processor.Record[string, string]) error {
	ns, bs, _ := strings.Cut(r.Value, ",")
	n, err := strconv.Atoi(ns)
	if err != nil {
		return err
	}
	base, err := strconv.ParseInt(bs, 10, 64)
	if err != nil {
		return err
	}
	part := p.ctx.TaskID().Partition
	for i := range n {
		start := base + int64(i%bigWindowsPerKey)*bigWindowStep
		if err := p.ws.Put(fmt.Sprintf("%d-%06d", part, i/bigWindowsPerKey),
			&store.ValueAndTimestamp[string]{Value: fmt.Sprintf("value-%034d", i), Timestamp: start}, start); err != nil {
			return err
		}
	}
	return p.ws.Put(fmt.Sprintf("~done-%d", part), &store.ValueAndTimestamp[string]{Value: "done", Timestamp: base}, base)
}

func (p *fillWindowProcessor) Close() error { return nil }

// An iteration of the window view over 1 000 000 windows (two tasks of 500 000, a Pebble
// timestamped window store with a record cache, windows of the current hour, viewed with plain
// values) walks every window in the store's
// order (segment, key, start) while the live heap grows by far less than the entries' size:
// the view streams each task's store in chunks and holds one chunk (before,
// each task's windows were collected at once).
func checkLargeWindowRangeBoundedMemory(t *testing.T, b kafkatest.Broker) {
	const perTask, parts = 500_000, 2
	input := kafkatest.Name(t, "fillw")
	createTopics(t, b, parts, input)
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("Source", []string{input},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(topo.AddProcessor("Fill", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &fillWindowProcessor{} }), "Source"))
	sup, err := store.Stores.PersistentWindowStore("BigW", time.Hour, time.Minute, false)
	must(err)
	must(topo.AddStateStore(store.Stores.TimestampedWindowStoreBuilder(sup, serde.String(), serde.String()).
		WithLoggingDisabled().WithCachingEnabled(), "Fill"))
	appID := kafkatest.Name(t, "iq-large-window")
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs,
		CommitInterval: 100 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	// Windows of the current time: the store keeps an hour behind the latest window start.
	base := time.Now().Add(-15*time.Minute).UnixMilli() / bigWindowStep * bigWindowStep
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for part := range int32(parts) {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: input, Partition: part, Key: sarama.StringEncoder("fill"),
			Value: sarama.StringEncoder(fmt.Sprintf("%d,%d", perTask, base))}); err != nil {
			t.Fatal(err)
		}
	}
	_ = p.Close()

	var ws store.ReadOnlyWindowStore[string, string]
	deadline := time.Now().Add(3 * time.Minute)
	for done := 0; done < parts; {
		if time.Now().After(deadline) {
			t.Fatalf("the stores were not filled within 3 minutes (%d of %d tasks; last error %v)", done, parts, err)
		}
		if ws, err = kstreams.WindowStore[string, string](app, "BigW"); err != nil {
			if !errors.Is(err, kstreams.ErrStoreNotAvailable) {
				t.Fatal(err)
			}
		} else {
			done = 0
			for part := range parts {
				if _, ok, _ := ws.Fetch(fmt.Sprintf("~done-%d", part), base); ok {
					done++
				}
			}
			// Measure once the fill is committed: the commit's cache flush (a batch the size of
			// the record cache) then does not overlap the iteration.
			if done == parts && committedSum(t, b, appID, input) < parts {
				done = 0
			}
		}
		if done < parts {
			time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
		}
	}

	// order is a window's place in the store's order: segment, key, start.
	type order struct {
		seg   int64
		key   string
		start int64
	}
	less := func(a, b order) bool {
		if a.seg != b.seg {
			return a.seg < b.seg
		}
		if a.key != b.key {
			return a.key < b.key
		}
		return a.start < b.start
	}
	// iterate walks the view's windows once, checking each; an ErrStoreNotAvailable error (a
	// rebalance moved the tasks meanwhile) is returned for a retry.
	iterate := func() (n int, peak uint64, err error) {
		heapBase := heapNow()
		it := ws.All()
		defer it.Close()
		part := -1
		var prev order
		for it.Next() {
			w, v := it.Key(), it.Value()
			cur := order{w.Window.Start / bigWindowSegment, w.Key, w.Window.Start}
			kp, idx, _ := strings.Cut(strings.TrimPrefix(w.Key, "~done-"), "-")
			p, err := strconv.Atoi(kp)
			if err != nil {
				t.Fatalf("entry %d: key %q", n, w.Key)
			}
			switch {
			case p != part:
				if p < part {
					t.Fatalf("entry %d: task %d after task %d", n, p, part)
				}
				part = p // the next task's store starts again from its first window
			case !less(prev, cur):
				t.Fatalf("entry %d: %+v after %+v: out of order", n, cur, prev)
			}
			prev = cur
			if strings.HasPrefix(w.Key, "~done-") {
				if v != "done" || w.Window.Start != base {
					t.Fatalf("entry %d: marker %q@%d = %q", n, w.Key, w.Window.Start, v)
				}
			} else {
				k, _ := strconv.Atoi(idx)
				i := k*bigWindowsPerKey + int((w.Window.Start-base)/bigWindowStep)
				if v != fmt.Sprintf("value-%034d", i) || w.Window.End != w.Window.Start+bigWindowStep {
					t.Fatalf("entry %d: %q@%d-%d = %q, want value %d", n, w.Key, w.Window.Start, w.Window.End, v, i)
				}
			}
			n++
			if n%100_000 == 0 {
				if h := heapNow(); h > heapBase && h-heapBase > peak {
					peak = h - heapBase
				}
			}
		}
		return n, peak, it.Err()
	}
	deadline = time.Now().Add(time.Minute)
	start := time.Now()
	n, peak, err := iterate()
	for errors.Is(err, kstreams.ErrStoreNotAvailable) && time.Now().Before(deadline) {
		t.Logf("iteration interrupted after %d windows (%v); again", n, err)
		if ws, err = kstreams.WindowStore[string, string](app, "BigW"); err == nil {
			start = time.Now()
			n, peak, err = iterate()
		} else {
			time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if n != parts*(perTask+1) {
		t.Fatalf("iterated %d windows, want %d", n, parts*(perTask+1))
	}
	// The windows as Go values take about 1 000 000 x (2 string headers + a window + 8 + 40
	// bytes) ~ 100 MiB; a task's share collected at once ~ 50 MiB (seen: 56 MiB before the
	// views read in chunks). One chunk is a few tens of KiB; the growth seen now (about 3 MiB)
	// is the record cache's bookkeeping, bounded by the cache size (10 MiB by default), not by
	// the store's.
	checkHeapGrowth(t, "windows", n, elapsed, peak)
	closeApp(t, app)
}

func TestIntegrationLargeWindowRangeBoundedMemory(t *testing.T) {
	checkLargeWindowRangeBoundedMemory(t, kafkatest.Real(t))
}
