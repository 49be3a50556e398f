package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
)

// Records flow as they are produced: with the default configuration (at least once, a 30 s
// commit interval) an order's join result reaches the output topic while the application has
// committed nothing yet. The assertion is that it arrives before the first commit, not how
// fast: the committed offsets of the input are read when the result is seen, and must still be
// absent. (Before the batch-level data path, output waited in the thread's buffer for a commit
// and took about 60 s here.)
func checkOutputBeforeCommit(t *testing.T, b kafkatest.Broker) {
	orders, customers, output := kafkatest.Name(t, "orders"), kafkatest.Name(t, "customers"), kafkatest.Name(t, "enriched")
	appID := kafkatest.Name(t, "latency")
	createTopics(t, b, 1, orders, customers, output)

	bld := kstream.NewStreamsBuilder()
	table := kstream.Table(bld, customers, kstream.ConsumedWith(serde.String(), serde.String()))
	kstream.Stream(bld, orders, kstream.ConsumedWith(serde.String(), serde.String())).
		Join(table, func(order, customer string) string { return order + " for " + customer }).
		To(output, kstream.ProducedWith(serde.String(), serde.String()))
	topo, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	app, err := kstreams.New(topo, kstreams.Config{ApplicationID: appID, BootstrapServers: b.Addrs, StateDir: t.TempDir(),
		Consumer: fastConsumer})
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)

	p, err := sarama.NewSyncProducer(b.Addrs, kafkatest.ProducerConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: customers, Key: sarama.StringEncoder("c1"),
		Value: sarama.StringEncoder("Ada"), Timestamp: time.UnixMilli(1000)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: orders, Key: sarama.StringEncoder("c1"),
		Value: sarama.StringEncoder("order-1"), Timestamp: time.UnixMilli(2000)}); err != nil {
		t.Fatal(err)
	}
	got := readRaw(t, b, output, 1, 60*time.Second)
	if string(got[0].Key) != "c1" || string(got[0].Value) != "order-1 for Ada" {
		t.Fatalf("output %s=%s, want c1=order-1 for Ada", got[0].Key, got[0].Value)
	}
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	resp, err := admin.ListConsumerGroupOffsets(appID, map[string][]int32{orders: {0}, customers: {0}})
	if err != nil && !strings.Contains(err.Error(), "GroupIDNotFound") && !strings.Contains(err.Error(), "group id not found") {
		t.Fatal(err)
	}
	if err == nil {
		for _, topic := range []string{orders, customers} {
			if blk := resp.GetBlock(topic, 0); blk != nil && blk.Offset >= 0 {
				t.Fatalf("%s has committed offset %d: the result came with a commit, not as it was produced", topic, blk.Offset)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestIntegrationOutputBeforeCommit(t *testing.T) { checkOutputBeforeCommit(t, kafkatest.Real(t)) }
func TestEmbeddedOutputBeforeCommit(t *testing.T) {
	t.Parallel()
	checkOutputBeforeCommit(t, kafkatest.Embedded(t))
}
