// Package kstreamstest helps test a kstreams application end to end from a Go test: it starts
// an embedded Kafka broker in the test process (no JVM, no Docker) or connects to an existing
// cluster, creates topics, produces and consumes typed records with the application's serdes,
// and waits until the application has processed every record of its input topics. Java users
// reach for EmbeddedKafkaCluster or Testcontainers for this; for a topology alone, without a
// broker, use package testdriver instead.
//
// A word count test:
//
//	func TestWordCount(t *testing.T) {
//		b := kstreamstest.NewBroker(t)
//		b.CreateTopics(t, 1, "lines", "counts")
//		app, _ := kstreams.New(wordCountTopology(), kstreams.Config{ApplicationID: "wc",
//			BootstrapServers: b.Addrs(), StateDir: t.TempDir()})
//		_ = app.Start(context.Background())
//		defer app.Close(context.Background())
//		kstreamstest.Produce(t, b, "lines", serde.String(), serde.String(), kstreamstest.KV("", "a b a"))
//		got := kstreamstest.Consume(t, b, "counts", serde.String(), serde.Long(), 3, time.Minute)
//		// got: a=1, b=1, a=2
//	}
//
// The embedded broker is kfake (github.com/twmb/franz-go/pkg/kfake), an in-process
// implementation of the Kafka protocol; it differs from Apache Kafka in corners (see
// docs/ARCHITECTURE.md), so run the same tests against a real broker too ([Connect]).
package kstreamstest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/caughtup"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/fetch"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/serde"
)

// Broker is a Kafka cluster for a test: embedded ([NewBroker]) or existing ([Connect]).
type Broker struct {
	addrs []string
	fake  *kfake.Cluster
}

// NewBroker starts an embedded single-broker Kafka (kfake) on a free loopback port and stops
// it when the test ends. A failure to start fails the test.
func NewBroker(t testing.TB) *Broker {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatalf("kstreamstest: starting the embedded broker: %v", err)
	}
	t.Cleanup(c.Close)
	return &Broker{addrs: c.ListenAddrs(), fake: c}
}

// Connect returns the existing cluster at addrs (host:port), e.g. a Kafka started by the CI.
// It does not check that the cluster is up; the first operation does.
func Connect(addrs ...string) *Broker { return &Broker{addrs: addrs} }

// Addrs returns the bootstrap addresses, for kstreams.Config.BootstrapServers.
func (b *Broker) Addrs() []string { return append([]string(nil), b.addrs...) }

// Embedded reports whether the broker is the in-process kfake broker.
func (b *Broker) Embedded() bool { return b.fake != nil }

func (b *Broker) saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kstreamstest"
	cfg.Version = kafka.MinVersion
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	return cfg
}

// admin runs f with a cluster admin client.
func (b *Broker) admin(t testing.TB, f func(sarama.ClusterAdmin) error) {
	t.Helper()
	a, err := sarama.NewClusterAdmin(b.addrs, b.saramaConfig())
	if err != nil {
		t.Fatalf("kstreamstest: connecting to %v: %v", b.addrs, err)
	}
	defer a.Close()
	if err := f(a); err != nil {
		t.Fatalf("kstreamstest: %v", err)
	}
}

// CreateTopics creates the topics with the given number of partitions (replication factor 1)
// and waits until their metadata is visible. A topic that exists already is an error (use
// unique names against a shared cluster). Fails the test on error.
func (b *Broker) CreateTopics(t testing.TB, partitions int32, topics ...string) {
	t.Helper()
	b.admin(t, func(a sarama.ClusterAdmin) error {
		for _, topic := range topics {
			if err := a.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
				return fmt.Errorf("create topic %s: %w", topic, err)
			}
		}
		return nil
	})
	c := b.cluster(t)
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for _, topic := range topics {
		for {
			_ = c.RefreshMetadata(topic)
			if n, err := c.Partitions(topic); err == nil && n == partitions {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("kstreamstest: topic %s has no metadata 30 s after its creation", topic)
			}
			time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
		}
	}
}

func (b *Broker) cluster(t testing.TB) *kafka.Cluster {
	t.Helper()
	c, err := kafka.NewCluster(kafka.Config{Brokers: b.addrs, Sarama: b.saramaConfig(), Logger: quiet})
	if err != nil {
		t.Fatalf("kstreamstest: connecting to %v: %v", b.addrs, err)
	}
	return c
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Record is a typed record to produce or a consumed one.
type Record[K, V any] struct {
	Key   K
	Value V
	// Timestamp is the record timestamp in ms since the epoch; 0 when producing means now.
	Timestamp int64
	// Partition is the partition a consumed record came from. Produce writes to it only when
	// PartitionSet is true; otherwise it partitions by key with Java's default partitioner
	// (murmur2 of the serialized key), as a Java producer does.
	Partition int32
	// PartitionSet makes Produce write to Partition instead of partitioning by key.
	PartitionSet bool
	// Offset is a consumed record's offset.
	Offset int64
}

// KV returns a record of key and value, timestamped now when produced.
func KV[K, V any](key K, value V) Record[K, V] { return Record[K, V]{Key: key, Value: value} }

// KVAt returns a record of key and value with timestamp ts (ms).
func KVAt[K, V any](key K, value V, ts int64) Record[K, V] {
	return Record[K, V]{Key: key, Value: value, Timestamp: ts}
}

// Produce writes the records to topic, serialized with keySerde and valueSerde (a nil pointer,
// slice or map, or a nil interface, is null), and waits until the broker acknowledged them all
// (acks=all, idempotent). Records keep their order within a partition. Fails the test on
// error.
func Produce[K, V any](t testing.TB, b *Broker, topic string, keySerde serde.Serializer[K], valueSerde serde.Serializer[V], records ...Record[K, V]) {
	t.Helper()
	c := b.cluster(t)
	defer c.Close()
	ctx := context.Background()
	p, err := produce.New(ctx, produce.Config{Cluster: c, ClientID: "kstreamstest-producer", Linger: -1, Logger: quiet})
	if err != nil {
		t.Fatalf("kstreamstest: producer: %v", err)
	}
	defer p.Close()
	now := time.Now().UnixMilli()
	for i, r := range records {
		k, err := keySerde.Serialize(topic, nil, r.Key)
		if err != nil {
			t.Fatalf("kstreamstest: record %d: serialize key: %v", i, err)
		}
		v, err := valueSerde.Serialize(topic, nil, r.Value)
		if err != nil {
			t.Fatalf("kstreamstest: record %d: serialize value: %v", i, err)
		}
		ts := r.Timestamp
		if ts == 0 {
			ts = now
		}
		part := int32(-1)
		if r.PartitionSet {
			part = r.Partition
		}
		if err := p.Send(produce.Record{Topic: topic, Partition: part, Key: k, Value: v, Timestamp: ts}); err != nil {
			t.Fatalf("kstreamstest: record %d to %s: %v", i, topic, err)
		}
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := p.Flush(fctx); err != nil {
		t.Fatalf("kstreamstest: produce to %s: %v", topic, err)
	}
	if f := p.Failures(); len(f) > 0 {
		t.Fatalf("kstreamstest: produce to %s: %d records failed, the first: %v", topic, len(f), f[0].Err)
	}
}

// Consume reads topic from the start of every partition until it has n records (or more, if
// the last fetch brought more) or timeout passes, and returns them deserialized with keySerde
// and valueSerde, in offset order per partition and partitions in order of arrival. Only
// committed records of transactions are read (read_committed, as a downstream consumer of an
// exactly-once application reads). Fails the test when fewer than n arrive in time or a
// record does not deserialize.
func Consume[K, V any](t testing.TB, b *Broker, topic string, keySerde serde.Deserializer[K], valueSerde serde.Deserializer[V], n int, timeout time.Duration) []Record[K, V] {
	t.Helper()
	c := b.cluster(t)
	defer c.Close()
	parts, err := c.Partitions(topic)
	if err != nil {
		t.Fatalf("kstreamstest: topic %s: %v", topic, err)
	}
	f, err := fetch.New(fetch.Config{Cluster: c, ClientID: "kstreamstest-consumer", Isolation: kafka.ReadCommitted,
		MaxWait: 50 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatalf("kstreamstest: consumer: %v", err)
	}
	defer f.Close()
	start := map[kafka.TopicPartition]int64{}
	for p := range parts {
		start[kafka.TopicPartition{Topic: topic, Partition: p}] = kafka.OffsetUnknown
	}
	f.Assign(start)
	var out []Record[K, V]
	deadline := time.Now().Add(timeout)
	for len(out) < n {
		for _, ch := range f.Poll() {
			if ch.Err != nil {
				t.Fatalf("kstreamstest: consume %s: %v", topic, ch.Err)
			}
			for _, r := range ch.Records {
				k, err := keySerde.Deserialize(topic, nil, r.Key)
				if err != nil {
					t.Fatalf("kstreamstest: %s-%d@%d: deserialize key: %v", topic, ch.TP.Partition, r.Offset, err)
				}
				v, err := valueSerde.Deserialize(topic, nil, r.Value)
				if err != nil {
					t.Fatalf("kstreamstest: %s-%d@%d: deserialize value: %v", topic, ch.TP.Partition, r.Offset, err)
				}
				out = append(out, Record[K, V]{Key: k, Value: v, Timestamp: r.Timestamp, Partition: ch.TP.Partition, Offset: r.Offset})
			}
		}
		if len(out) >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kstreamstest: %d of %d records from %s within %v", len(out), n, topic, timeout)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, bounded by the deadline
	}
	return out
}

// ErrNotProcessed is wrapped by WaitProcessed's error when the application has not committed
// past the end of its input topics in time.
var ErrNotProcessed = errors.New("kstreamstest: input not processed in time")

// WaitProcessed waits until the application applicationID has committed offsets at the end of
// every non-empty partition of its input topics and then of its repartition topics
// ("<applicationID>-...-repartition", where a key-changing topology hands records from one
// sub-topology to the next), so every record produced to the inputs before the call has gone
// through the whole topology and its results (output, changelogs) are flushed: a commit
// follows them. The application commits every commit.interval.ms (Config.CommitInterval), so
// a short interval makes the wait short. It returns an error wrapping ErrNotProcessed naming
// the partitions behind, with their committed and end offsets, when timeout passes; other
// errors are connection errors.
func (b *Broker) WaitProcessed(applicationID string, timeout time.Duration, inputTopics ...string) error {
	client, err := sarama.NewClient(b.addrs, b.saramaConfig())
	if err != nil {
		return fmt.Errorf("kstreamstest: connecting to %v: %w", b.addrs, err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return fmt.Errorf("kstreamstest: admin client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err = caughtup.Wait(ctx, client, admin, applicationID, inputTopics)
	var behind *caughtup.BehindError
	if errors.As(err, &behind) {
		return fmt.Errorf("%w: application %s after %v: %s", ErrNotProcessed, applicationID, timeout, strings.Join(behind.Behind, ", "))
	}
	if err != nil {
		return fmt.Errorf("kstreamstest: %w", err)
	}
	return nil
}
