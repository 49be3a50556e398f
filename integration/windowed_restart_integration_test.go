package integration_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/cockroachdb/pebble/v2"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// windowedCountTopology counts words per one-minute window (grace one day) into the default
// DSL window store "windowed-counts" and writes every update as "word@windowStart" -> count.
func windowedCountTopology(t testing.TB, input, output string) *processor.Topology {
	t.Helper()
	S := serde.String()
	b := kstream.NewStreamsBuilder()
	words := kstream.Stream(b, input, kstream.ConsumedWith(S, S)).FlatMapValues(func(v string) []string { return strings.Fields(v) })
	kstream.WindowedBy(words.GroupBy(func(_, w string) string { return w }, kstream.GroupedWith(S, S)),
		kstream.TimeWindowsOfSizeAndGrace(time.Minute, 24*time.Hour)).
		Count(kstream.MaterializedAs[string, int64]("windowed-counts")).
		ToStream().
		SelectKey(func(wk kstream.Windowed[string], _ int64) string {
			return fmt.Sprintf("%s@%d", wk.Key, wk.Window.Start)
		}).
		To(output, kstream.ProducedWith(S, serde.Long()))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// produceWindowedLines writes lines from..from+n-1 (1-3 words over 30, 200 ms of event time
// apart from base) and adds them to want ("word@windowStart" -> count). Event times are recent:
// the window store's changelog keeps records for its retention (1 day + 1 min) + 24 h.
func produceWindowedLines(t testing.TB, b kafkatest.Broker, topic string, base int64, from, n int, want map[string]int64) {
	t.Helper()
	p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := rand.New(rand.NewPCG(uint64(from), 4))
	var batch []*sarama.ProducerMessage
	for i := from; i < from+n; i++ {
		ts := base + int64(i)*200
		var ws []string
		for range 1 + r.IntN(3) {
			w := fmt.Sprintf("w%02d", r.IntN(30))
			ws = append(ws, w)
			want[fmt.Sprintf("%s@%d", w, ts/60_000*60_000)]++
		}
		batch = append(batch, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprint(i)),
			Value: sarama.StringEncoder(strings.Join(ws, " ")), Timestamp: time.UnixMilli(ts)})
		if len(batch) == 500 || i == from+n-1 {
			if err := p.SendMessages(batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
}

// restoredCounter sums the records restored into each store.
type restoredCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

func (c *restoredCounter) OnRestoreStart(changelog.TopicPartition, string, int64, int64)  {}
func (c *restoredCounter) OnBatchRestored(changelog.TopicPartition, string, int64, int64) {}
func (c *restoredCounter) OnRestoreEnd(_ changelog.TopicPartition, s string, total int64) {
	c.mu.Lock()
	c.n[s] += total
	c.mu.Unlock()
}

// checkWindowedRestart runs a DSL windowed count (default stores: the window store persists
// in Pebble) until its output is exact and closes it; more input; a second instance on the
// same state directory restores nothing (the checkpoint is trusted, the store kept its data)
// and its output is exact again. Then the window store's Pebble databases hold Java's bytes
// (Java's layout): under the segment prefix, key ‖ int64 windowStart ‖ int32 seqnum (0),
// and the timestamped value int64 timestamp ‖ int64 count, one entry per word and window with
// its final count.
func checkWindowedRestart(t *testing.T, b kafkatest.Broker, guarantee kstreams.ProcessingGuarantee) {
	input, output, appID := kafkatest.Name(t, "lines"), kafkatest.Name(t, "wcounts"), kafkatest.Name(t, "winrestart")
	createTopics(t, b, 2, input, output)
	iso := sarama.ReadUncommitted
	if guarantee == kstreams.ExactlyOnceV2 {
		iso = sarama.ReadCommitted
	}
	out := readOutput(t, b, output, iso)
	base := time.Now().Add(-time.Hour).UnixMilli() / 60_000 * 60_000
	want := map[string]int64{}
	stateDir := t.TempDir()
	run := func() map[string]int64 {
		t.Helper()
		app, err := kstreams.New(windowedCountTopology(t, input, output), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: guarantee,
			CommitInterval: 100 * time.Millisecond, StateDir: stateDir, Sarama: fastSarama, Consumer: fastConsumer,
		})
		if err != nil {
			t.Fatal(err)
		}
		rc := &restoredCounter{n: map[string]int64{}}
		app.SetGlobalStateRestoreListener(rc)
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		out.waitFinal(t, want, 2*time.Minute, app.Err)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := app.Close(ctx); err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return rc.n
	}
	produceWindowedLines(t, b, input, base, 0, 1500, want)
	if n := run(); n["windowed-counts"] != 0 {
		t.Fatalf("first run restored %v from empty changelogs", n)
	}
	produceWindowedLines(t, b, input, base, 1500, 700, want)
	// (Under exactly-once the restore may read up to the commit marker after the last record:
	// no record.)
	if n := run(); n["windowed-counts"] != 0 {
		t.Errorf("second run on the same state directory restored %v records, want none (checkpoint trusted)", n)
	}

	// The store's bytes in Pebble.
	dirs, err := filepath.Glob(filepath.Join(stateDir, appID, "*", storeapi.PebbleDirName, "windowed-counts"))
	if err != nil || len(dirs) != 2 {
		t.Fatalf("Pebble window store directories %v (%v), want one per task of the 2 partitions", dirs, err)
	}
	got := map[string]int64{}
	for _, dir := range dirs {
		db, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{0x02}, UpperBound: []byte{0x03}})
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			k, v := it.Key(), it.Value()
			// 0x02 ‖ segment id (sign bit flipped) ‖ Java's window store key.
			if len(k) < 1+8+12+1 || len(v) != 16 {
				t.Fatalf("window store entry %x = %x: want 0x02 ‖ segment ‖ key ‖ start ‖ seqnum and a 16-byte value", k, v)
			}
			seg := int64(binary.BigEndian.Uint64(k[1:9]) ^ (1 << 63))
			wk := k[9:]
			key, start, seq := wk[:len(wk)-12], int64(binary.BigEndian.Uint64(wk[len(wk)-12:])), binary.BigEndian.Uint32(wk[len(wk)-4:])
			if !bytes.Equal(wk, storeapi.WindowStoreKey(key, start, 0)) || seq != 0 {
				t.Fatalf("window store key %x: not key ‖ int64 start ‖ int32 seqnum 0", wk)
			}
			if want := storeapi.SegmentID(start, storeapi.DefaultSegmentInterval(24*3_600_000+60_000)); seg != want {
				t.Errorf("window %s@%d in segment %d, want %d", key, start, seg, want)
			}
			ts, count := int64(binary.BigEndian.Uint64(v[:8])), int64(binary.BigEndian.Uint64(v[8:]))
			if ts < start || ts >= start+60_000 {
				t.Errorf("%s@%d: value timestamp %d outside the window", key, start, ts)
			}
			got[fmt.Sprintf("%s@%d", key, start)] = count
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d windows in Pebble, want %d", len(got), len(want))
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("Pebble %s = %d, want %d", k, got[k], n)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(dirs[0])), changelog.CheckpointFileName)); err != nil && guarantee == kstreams.AtLeastOnce {
		t.Errorf("no checkpoint beside the store: %v", err)
	}
}

func TestWindowedRestartRestoresNothing(t *testing.T) {
	for _, g := range []kstreams.ProcessingGuarantee{kstreams.AtLeastOnce, kstreams.ExactlyOnceV2} {
		t.Run(string(g), func(t *testing.T) { checkWindowedRestart(t, kafkatest.Embedded(t), g) })
	}
}

func TestIntegrationWindowedRestartRestoresNothing(t *testing.T) {
	b := kafkatest.Real(t)
	for _, g := range []kstreams.ProcessingGuarantee{kstreams.AtLeastOnce, kstreams.ExactlyOnceV2} {
		t.Run(string(g), func(t *testing.T) { checkWindowedRestart(t, b, g) })
	}
}
