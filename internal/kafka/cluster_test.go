package kafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// Interrupt ends a request the broker holds (a long-poll Fetch here) at once, where the
// connection's Close would wait for it. The embedded broker tells when the long poll arrived.
func TestInterrupt(t *testing.T) {
	br := kafkatest.Embedded(t)
	testInterrupt(t, br, func() <-chan struct{} {
		arrived := make(chan struct{})
		br.Cluster.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
			br.Cluster.DropControl() // observe this one Fetch only; the cluster handles it
			close(arrived)
			return nil, nil, false
		})
		return arrived
	})
}

// On a real broker nothing tells when the long poll arrived: the test gives it 200 ms, and an
// Interrupt before it arrived still fails the Fetch (the test then checks less, not wrongly).
func TestIntegrationInterrupt(t *testing.T) {
	testInterrupt(t, kafkatest.Real(t), func() <-chan struct{} {
		arrived := make(chan struct{})
		time.AfterFunc(200*time.Millisecond, func() { close(arrived) })
		return arrived
	})
}

// testInterrupt runs the test on br; arrival returns, just before the long poll is sent, a
// channel closed once the broker holds it.
func testInterrupt(t *testing.T, br kafkatest.Broker, arrival func() <-chan struct{}) {
	scfg := kafkatest.SaramaConfig()
	topic := kafkatest.Name(t, "interrupt")
	kafkatest.CreateTopicsWith(t, br.Addrs, scfg, 1, nil, topic)
	c, err := kafka.NewCluster(kafka.Config{Brokers: br.Addrs, Sarama: scfg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tp := kafka.TopicPartition{Topic: topic, Partition: 0}
	var leader kafka.Node
	kafkatest.EventuallyNoError(t, 30*time.Second, "the new partition's leader", func() error {
		var err error
		if leader, _, err = c.Leader(tp); err != nil {
			_ = c.RefreshMetadata(topic)
		}
		return err
	})
	deadline := time.Now().Add(30 * time.Second)
	p := kafka.Purpose{Name: "fetch", ReadTimeout: time.Minute}
	b, err := c.Conn(leader, p)
	if err != nil {
		t.Fatal(err)
	}
	// A just created topic's leader may answer NOT_LEADER_OR_FOLLOWER (at once) for a moment:
	// wait until a short Fetch reads the partition, so the long poll below is held.
	for {
		probe := &sarama.FetchRequest{Version: 11, MaxWaitTime: 10, MaxBytes: 1 << 20, SessionEpoch: -1}
		probe.AddBlock(topic, 0, 0, 1<<20, -1)
		resp, err := b.Fetch(probe)
		if err != nil {
			t.Fatal(err)
		}
		blk := resp.GetBlock(topic, 0)
		if blk != nil && blk.Err == sarama.ErrNoError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new partition is not readable: %v", blk)
		}
		_ = kafka.Sleep(context.Background(), 100*time.Millisecond)
	}
	req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 30_000, MinBytes: 1, MaxBytes: 1 << 20, SessionEpoch: -1}
	req.AddBlock(topic, 0, 0, 1<<20, -1)
	done := make(chan error, 1)
	arrived := arrival()
	started := time.Now()
	go func() {
		_, err := b.Fetch(req)
		done <- err
	}()
	// Wait until the broker holds the request: the long poll keeps it there for 30 s. Not with
	// b.Connected, which waits for the Broker's lock, held by Fetch for its whole round trip.
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("the long-poll Fetch returned before it was seen to arrive (error %v)", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the long-poll Fetch did not reach the broker")
	}
	select {
	case err := <-done:
		t.Fatalf("the long-poll Fetch returned before Interrupt (error %v)", err)
	default:
	}
	c.Interrupt(leader, p)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the interrupted Fetch succeeded")
		}
		if !kafka.Retriable(err) {
			t.Errorf("interrupted Fetch: %v is not a retriable (transport) error", err)
		}
		if d := time.Since(started); d > 10*time.Second {
			t.Errorf("interrupted Fetch returned after %v", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Interrupt did not end the Fetch")
	}
	// The next Conn dials a new connection, which works.
	b2, err := c.Conn(leader, p)
	if err != nil {
		t.Fatal(err)
	}
	if b2 == b {
		t.Fatal("Conn returned the interrupted connection")
	}
	req2 := &sarama.FetchRequest{Version: 11, MaxWaitTime: 10, MaxBytes: 1 << 20, SessionEpoch: -1}
	req2.AddBlock(topic, 0, 0, 1<<20, -1)
	if _, err := b2.Fetch(req2); err != nil {
		t.Fatalf("Fetch on a new connection: %v", err)
	}
}

// A connection that cannot authenticate (the broker now refuses our client certificate) fails
// FindCoordinator at once with an AuthError, instead of being retried until ctx ends.
func TestFindCoordinatorCertificateRefused(t *testing.T) {
	sb := kafkatest.EmbeddedMTLS(t)
	c, err := kafka.NewCluster(kafka.Config{Brokers: sb.SSL, Sarama: sb.MTLSSaramaConfig(t, "app")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.FindCoordinator(context.Background(), "g", sarama.CoordinatorGroup); err != nil {
		t.Fatalf("FindCoordinator before: %v", err)
	}
	c.Interrupt(mustAnyNode(t, c), kafka.Purpose{Name: "metadata"}) // the next lookup dials again
	sb.RefuseClientCertificates(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = c.FindCoordinator(ctx, "g", sarama.CoordinatorGroup)
	if err == nil || ctx.Err() != nil || !kafka.AuthError(err) {
		t.Fatalf("FindCoordinator after the certificate is refused: %v (ctx %v), want an AuthError at once", err, ctx.Err())
	}
}

func mustAnyNode(t *testing.T, c *kafka.Cluster) kafka.Node {
	t.Helper()
	n, err := c.AnyNode()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A sarama configuration whose own producer is idempotent or transactional (sarama allows
// those only with one request in flight) still gives connections with several requests in
// flight: the Cluster's connections do not run sarama's producer.
func TestConnIgnoresSaramaProducerIdempotence(t *testing.T) {
	br := kafkatest.Embedded(t)
	scfg := kafkatest.SaramaConfig()
	scfg.Producer.Idempotent = true
	scfg.Producer.Transaction.ID = "ignored"
	scfg.Net.MaxOpenRequests = 1
	c, err := kafka.NewCluster(kafka.Config{Brokers: br.Addrs, Sarama: scfg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := c.AnyNode()
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Conn(n, kafka.Purpose{Name: "produce", MaxOpenRequests: 5})
	if err != nil {
		t.Fatalf("a produce connection with 5 requests in flight: %v", err)
	}
	if _, err := b.ApiVersions(&sarama.ApiVersionsRequest{Version: 3, ClientSoftwareName: "t", ClientSoftwareVersion: "1"}); err != nil {
		t.Fatalf("a request on it: %v", err)
	}
}
