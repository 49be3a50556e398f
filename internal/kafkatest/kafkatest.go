// Package kafkatest gives tests a Kafka broker to talk to: the real single-node Apache Kafka
// broker that `make test` starts (its address comes from the KAFKA_BOOTSTRAP_SERVERS
// environment variable), or an in-process kfake cluster that speaks the Kafka wire protocol on
// loopback and needs no JVM.
//
// Tests that need the real broker are named TestIntegration... and call [Real], which skips
// them with a clear message when no broker is configured, so `go test ./...` passes anywhere
// and `make test` runs them against Apache Kafka. Fast tests call [Embedded]. A feature is never
// tested on kfake alone: kfake differs from Kafka in places (see internal/kafka's package doc).
package kafkatest

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
)

// EnvBootstrap names the environment variable that holds the real broker's bootstrap address
// as a comma-separated list of host:port pairs. `make test` sets it after starting the broker.
const EnvBootstrap = "KAFKA_BOOTSTRAP_SERVERS"

// Kind says which broker a [Broker] is.
type Kind int

const (
	// ApacheKafka is the real Apache Kafka broker started by `make test`.
	ApacheKafka Kind = iota
	// Kfake is an in-process github.com/twmb/franz-go/pkg/kfake cluster.
	Kfake
)

// String returns "kafka" or "kfake".
func (k Kind) String() string {
	if k == Kfake {
		return "kfake"
	}
	return "kafka"
}

// Broker is a broker a test may use.
type Broker struct {
	// Kind says whether this is the real broker or kfake.
	Kind Kind
	// Addrs are the bootstrap addresses (host:port).
	Addrs []string
	// Cluster is the kfake cluster when Kind is Kfake, else nil. Tests may use it to
	// compact logs or inspect state.
	Cluster *kfake.Cluster
}

// Real returns the real Apache Kafka broker named by KAFKA_BOOTSTRAP_SERVERS. When the variable
// is unset or empty it skips the test, saying how to run it.
func Real(t testing.TB) Broker {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(EnvBootstrap))
	if v == "" {
		t.Skipf("integration test: %s is not set; run `make test` (it starts Apache Kafka on loopback), "+
			"or `make kafka-up` and export %s=$(scripts/kafka/kafka.sh addr)", EnvBootstrap, EnvBootstrap)
	}
	var addrs []string
	for _, a := range strings.Split(v, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return Broker{Kind: ApacheKafka, Addrs: addrs}
}

// Embedded starts an in-process kfake cluster with one broker listening on a free loopback
// port and closes it when the test ends. Options are added after the defaults (one broker,
// a 100 ms minimum group session timeout for fast group tests); a failure to start fails the
// test.
func Embedded(t testing.TB, opts ...kfake.Opt) Broker {
	t.Helper()
	all := append([]kfake.Opt{
		kfake.NumBrokers(1),
		kfake.GroupMinSessionTimeout(100 * time.Millisecond),
	}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatalf("kafkatest: starting kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return Broker{Kind: Kfake, Addrs: c.ListenAddrs(), Cluster: c}
}

// SaramaConfig returns a sarama configuration suited to tests against either broker kind:
// protocol version 4.0, Java's murmur2 partitioner, short group session and heartbeat times,
// and a 20 ms fetch wait so tests do not idle. The client id is kstreams-test. Producers of test
// data take [ProducerConfig] instead.
func SaramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "kstreams-test"
	cfg.Version = sarama.V4_0_0_0
	cfg.Producer.Partitioner = sarama.NewMurmur2Partitioner
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.MaxWaitTime = 20 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	cfg.Consumer.Group.Rebalance.Timeout = 10 * time.Second
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	return cfg
}

// ProducerConfig is [SaramaConfig] with an idempotent producer ([Idempotent]): the
// configuration of the producers that write a test's data.
func ProducerConfig() *sarama.Config { return Idempotent(SaramaConfig()) }

// Idempotent makes cfg's producer idempotent, with one request in flight per connection (which
// sarama requires for it), and returns cfg. Without idempotence sarama's retries write records
// twice when a produce request reached the log but its answer was lost or came after the read
// timeout (a dropped connection, a loaded machine): a test's input line counted twice looks
// exactly like a duplicate made by the code under test. A broker that gives a retried batch the
// same producer id and sequence number keeps it once. Only for producers: one request in flight
// would change how the clients under test use their connections.
func Idempotent(cfg *sarama.Config) *sarama.Config {
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Net.MaxOpenRequests = 1
	return cfg
}

var seq atomic.Int64

// Name returns a topic, group or transactional id unique within this test process and across
// runs against the same broker: prefix, the test name, the process id and a counter.
func Name(t testing.TB, prefix string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, t.Name())
	return fmt.Sprintf("%s-%s-%d-%d", prefix, clean, os.Getpid(), seq.Add(1))
}
