package integration_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// joinGraceTopology left-joins the stream of ids with the versioned table of prices (history
// retention 60 s) with grace 10 s; the output is id*1000 + the price as of the id's timestamp.
func joinGraceTopology(t testing.TB, table, stream, output string) *processor.Topology {
	t.Helper()
	sup, err := store.Stores.InMemoryVersionedKeyValueStore("prices", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b := kstream.NewStreamsBuilder()
	prices := kstream.Table(b, table, kstream.ConsumedWith(serde.String(), serde.Long()), kstream.MaterializedAsVersioned[string, int64](sup))
	kstream.Stream(b, stream, kstream.ConsumedWith(serde.String(), serde.Long())).
		LeftJoin(prices, func(id, price int64) int64 { return id*1000 + price },
			kstream.JoinedAs[string, int64, int64]("priced").WithGracePeriod(10*time.Second)).
		To(output, kstream.ProducedWith(serde.String(), serde.Long()))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// checkJoinGraceRestart leaves two stream records in the join's grace buffer, closes the
// application, and starts a second instance on a new state directory: it restores the buffer
// ("priced-Buffer") from its changelog and joins the two records, each exactly once, with the
// table version as of their timestamps, when a later record advances stream time.
func checkJoinGraceRestart(t *testing.T, b kafkatest.Broker, guarantee kstreams.ProcessingGuarantee) {
	table, stream, output, appID := kafkatest.Name(t, "prices"), kafkatest.Name(t, "ids"), kafkatest.Name(t, "priced"), kafkatest.Name(t, "joingrace")
	createTopics(t, b, 1, table, stream, output)
	iso := sarama.ReadUncommitted
	if guarantee == kstreams.ExactlyOnceV2 {
		iso = sarama.ReadCommitted
	}
	out := readOutput(t, b, output, iso)
	base := time.Now().Add(-time.Hour).UnixMilli()
	var msgs []*sarama.ProducerMessage
	send := func(topic, key string, v, at int64) {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(key), Value: sarama.ByteEncoder(longBytes(v)),
			Timestamp: time.UnixMilli(base + at)})
	}
	produce := func() {
		p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.SendMessages(msgs); err != nil {
			t.Fatal(err)
		}
		msgs = nil
	}
	run := func(want map[string]int64) map[string]int64 {
		t.Helper()
		app, err := kstreams.New(joinGraceTopology(t, table, stream, output), kstreams.Config{
			ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: guarantee, MaxTaskIdle: 5 * time.Second,
			CommitInterval: 100 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
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
	for _, k := range []string{"k0", "k1", "k2", "k3"} {
		send(table, k, 1, 0)
		send(table, k, 2, 5000)
	}
	send(stream, "k0", 10, 6000)  // buffered, then joined with price 2
	send(stream, "k1", 11, 3000)  // buffered (out of order), then joined with price 1
	send(stream, "k2", 12, 20000) // evicts k1 and k0 (<= 10 000); stays buffered
	send(stream, "k3", 13, 25000) // stays buffered
	produce()
	run(map[string]int64{"k0": 10002, "k1": 11001})
	send(stream, "k0", 14, 60000) // evicts k2 and k3 after the restore
	produce()
	n := run(map[string]int64{"k2": 12002, "k3": 13002})
	if n["priced-Buffer"] == 0 {
		t.Fatalf("second run restored %v: nothing into priced-Buffer", n)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	for k, want := range map[string][]int64{"k0": {10002}, "k1": {11001}, "k2": {12002}, "k3": {13002}} {
		if got := out.seqs[k]; !slices.Equal(got, want) {
			t.Errorf("%s: outputs %v, want %v (each buffered record joined exactly once)", k, got, want)
		}
	}
}

func TestJoinGraceBufferRestart(t *testing.T) {
	b := kafkatest.Embedded(t)
	t.Run("alos", func(t *testing.T) { checkJoinGraceRestart(t, b, kstreams.AtLeastOnce) })
	t.Run("eos", func(t *testing.T) { checkJoinGraceRestart(t, b, kstreams.ExactlyOnceV2) })
}

func TestIntegrationJoinGraceBufferRestart(t *testing.T) {
	b := kafkatest.Real(t)
	t.Run("alos", func(t *testing.T) { checkJoinGraceRestart(t, b, kstreams.AtLeastOnce) })
	t.Run("eos", func(t *testing.T) { checkJoinGraceRestart(t, b, kstreams.ExactlyOnceV2) })
}
