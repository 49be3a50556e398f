package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// Failures injected with kfake's control functions and faults. The broken-connection case
// also runs on Apache Kafka (checkBrokenConnection); the others need kfake to provoke them.

// TestEmbeddedConnectionDropped: kfake closes the connection on three fetch requests.
func TestEmbeddedConnectionDropped(t *testing.T) {
	b := kafkatest.Embedded(t)
	e := newEnv(t, b)
	topic := e.topic("drop", 2)
	tp0, tp1 := tpOf(topic, 0), tpOf(topic, 1)
	f, notify := e.fetcher(nil)
	f.Assign(map[kafka.TopicPartition]int64{tp0: 0, tp1: 0})
	c := newConsumer(t, f, notify)
	e.produceValues(tp0, "a0")
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 1})

	var dropped atomic.Int32
	b.Cluster.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		if dropped.Load() == 3 {
			b.Cluster.DropControl()
			return nil, nil, false
		}
		dropped.Add(1)
		b.Cluster.KeepControl()
		return nil, errors.New("injected: connection dropped"), true
	})
	e.produceValues(tp0, "a1", "a2")
	e.produceValues(tp1, "b0")
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 3, tp1: 1})
	if got := valuesOf(c.recs[tp0]); !slices.Equal(got, []string{"a0", "a1", "a2"}) {
		t.Errorf("%s: %q", tp0, got)
	}
	if st := f.Stats(); dropped.Load() != 3 || st.RequestErrors < 3 {
		t.Errorf("%d requests dropped, stats %+v: want 3 and as many request errors", dropped.Load(), st)
	}
}

// TestEmbeddedSessionErrors: the broker loses the session (FETCH_SESSION_ID_NOT_FOUND) or
// sees a wrong epoch (INVALID_FETCH_SESSION_EPOCH); each time the next request is full and a
// new session continues incrementally.
func TestEmbeddedSessionErrors(t *testing.T) {
	b := kafkatest.Embedded(t)
	e := newEnv(t, b)
	topic := e.topic("session", 1)
	tp := tpOf(topic, 0)
	f, notify := e.fetcher(func(c *Config) { c.MaxWait = 20 * time.Millisecond })
	f.Assign(map[kafka.TopicPartition]int64{tp: 0})
	c := newConsumer(t, f, notify)
	requests := func() int64 { st := f.Stats(); return st.FullRequests + st.IncrementalRequests }
	c.until("a few incremental requests", func() bool { return f.Stats().IncrementalRequests >= 3 })

	for i, k := range []*kerr.Error{kerr.FetchSessionIDNotFound, kerr.InvalidFetchSessionEpoch} {
		h := b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, TopLevel: true, Err: k})
		if err := waitFault(t, h, 1); err != nil {
			t.Fatal(err)
		}
		n := requests()
		c.until("requests after the session error", func() bool { return requests() >= n+3 })
		e.produceValues(tp, fmt.Sprint("v", i))
		c.untilPosition(map[kafka.TopicPartition]int64{tp: int64(i + 1)})
	}
	st := f.Stats()
	if st.SessionErrors != 2 || st.FullRequests != 3 {
		t.Errorf("stats %+v: want 2 session errors and 3 full requests (the first and one after each)", st)
	}
}

// TestEmbeddedNotLeader: NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH make the partition
// look up its leader again and retry after the backoff; the other partition is not held up.
func TestEmbeddedNotLeader(t *testing.T) {
	b := kafkatest.Embedded(t)
	e := newEnv(t, b)
	topic := e.topic("notleader", 2)
	tp0, tp1 := tpOf(topic, 0), tpOf(topic, 1)
	f, notify := e.fetcher(nil)
	f.Assign(map[kafka.TopicPartition]int64{tp0: 0, tp1: 0})
	c := newConsumer(t, f, notify)
	h := b.Cluster.Fault(
		kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: topic, Partitions: []int32{0}, Err: kerr.NotLeaderForPartition, Count: 2},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: topic, Partitions: []int32{0}, Err: kerr.FencedLeaderEpoch, Count: 2},
	)
	e.produceValues(tp0, "a0", "a1")
	e.produceValues(tp1, "b0")
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 2, tp1: 1})
	if err := waitFault(t, h, 4); err != nil {
		t.Fatal(err)
	}
	if got := valuesOf(c.recs[tp0]); !slices.Equal(got, []string{"a0", "a1"}) {
		t.Errorf("%s: %q", tp0, got)
	}
}

// TestEmbeddedLeaderMove: with two brokers, partitions move between them; the fetcher follows
// each to its new leader's loop.
func TestEmbeddedLeaderMove(t *testing.T) {
	b := kafkatest.Embedded(t, kfake.NumBrokers(2))
	e := newEnv(t, b)
	topic := e.topic("move", 2)
	tp0, tp1 := tpOf(topic, 0), tpOf(topic, 1)
	f, notify := e.fetcher(nil)
	f.Assign(map[kafka.TopicPartition]int64{tp0: 0, tp1: 0})
	c := newConsumer(t, f, notify)
	want := map[kafka.TopicPartition]int64{}
	for round := range 4 {
		for _, tp := range []kafka.TopicPartition{tp0, tp1} {
			e.produceValues(tp, fmt.Sprint(tp.Partition, "-", round))
			want[tp]++
		}
		c.untilPosition(want)
		for _, tp := range []kafka.TopicPartition{tp0, tp1} {
			n := b.Cluster.LeaderFor(topic, tp.Partition)
			if err := b.Cluster.MoveTopicPartition(topic, tp.Partition, 1-n); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tp := range []kafka.TopicPartition{tp0, tp1} {
		var wantVals []string
		for round := range 4 {
			wantVals = append(wantVals, fmt.Sprint(tp.Partition, "-", round))
		}
		if got := valuesOf(c.recs[tp]); !slices.Equal(got, wantVals) {
			t.Errorf("%s: %q, want %q", tp, got, wantVals)
		}
	}
	f.mu.Lock()
	loops := len(f.loops)
	f.mu.Unlock()
	if loops != 2 {
		t.Errorf("%d fetch loops, want one per broker (2)", loops)
	}
}

// TestEmbeddedAuthorization: TOPIC_AUTHORIZATION_FAILED stops the partition with an error
// chunk; other partitions continue.
func TestEmbeddedAuthorization(t *testing.T) {
	b := kafkatest.Embedded(t)
	e := newEnv(t, b)
	denied, ok := e.topic("denied", 1), e.topic("ok", 1)
	f, notify := e.fetcher(nil)
	b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: denied, Err: kerr.TopicAuthorizationFailed, Count: -1})
	e.produceValues(tpOf(denied, 0), "secret")
	e.produceValues(tpOf(ok, 0), "public")
	f.Assign(map[kafka.TopicPartition]int64{tpOf(denied, 0): 0, tpOf(ok, 0): 0})
	c := newConsumer(t, f, notify)
	c.until("an error chunk", func() bool { return len(c.errs) > 0 })
	c.untilPosition(map[kafka.TopicPartition]int64{tpOf(ok, 0): 1})
	ch := c.errs[0]
	if ch.TP != tpOf(denied, 0) || !errors.Is(ch.Err, sarama.ErrTopicAuthorizationFailed) || len(c.recs[ch.TP]) != 0 {
		t.Errorf("error chunk %s %v, want %s with TOPIC_AUTHORIZATION_FAILED and no records", ch.TP, ch.Err, tpOf(denied, 0))
	}
	if got := valuesOf(c.recs[tpOf(ok, 0)]); !slices.Equal(got, []string{"public"}) {
		t.Errorf("%s: %q", tpOf(ok, 0), got)
	}
}

// TestEmbeddedCertificateRefused: the broker refuses our client certificate from some point
// on (connections made before stay open): the fetch connection, dialled after that, fails its
// TLS handshake, and every partition of the broker fails with an authentication error
// (kafka.AuthError) instead of the loop retrying the connection for ever.
func TestEmbeddedCertificateRefused(t *testing.T) {
	sb := kafkatest.EmbeddedMTLS(t)
	b := kafkatest.Broker{Kind: kafkatest.Kfake, Addrs: sb.SSL, Cluster: sb.Cluster}
	e := newEnvConfig(t, b, sb.MTLSSaramaConfig(t, "app"))
	topic := e.topic("refused", 2)
	e.produceValues(tpOf(topic, 0), "a")
	f, notify := e.fetcher(nil) // its Cluster connects (metadata) now
	sb.RefuseClientCertificates(t)
	f.Assign(map[kafka.TopicPartition]int64{tpOf(topic, 0): 0, tpOf(topic, 1): 0})
	c := newConsumer(t, f, notify)
	c.until("two error chunks", func() bool { return len(c.errs) == 2 })
	for _, ch := range c.errs {
		if !kafka.AuthError(ch.Err) || len(c.recs[ch.TP]) != 0 {
			t.Errorf("error chunk of %s: %v, want an authentication error and no records", ch.TP, ch.Err)
		}
	}
}

// TestEmbeddedMetadataAuthorization: the metadata of an assigned topic answers
// TOPIC_AUTHORIZATION_FAILED (the principal may not describe it): its partition fails with that
// error instead of waiting for a leader for ever; other topics go on.
func TestEmbeddedMetadataAuthorization(t *testing.T) {
	b := kafkatest.Embedded(t)
	e := newEnv(t, b)
	denied, ok := e.topic("denied", 1), e.topic("ok", 1)
	e.produceValues(tpOf(ok, 0), "public")
	b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Metadata}, Topic: denied, Err: kerr.TopicAuthorizationFailed, Count: -1})
	f, notify := e.fetcher(nil) // its Cluster loads the metadata now
	f.Assign(map[kafka.TopicPartition]int64{tpOf(denied, 0): 0, tpOf(ok, 0): 0})
	c := newConsumer(t, f, notify)
	c.until("an error chunk", func() bool { return len(c.errs) > 0 })
	c.untilPosition(map[kafka.TopicPartition]int64{tpOf(ok, 0): 1})
	if ch := c.errs[0]; ch.TP != tpOf(denied, 0) || !errors.Is(ch.Err, sarama.ErrTopicAuthorizationFailed) {
		t.Errorf("error chunk %s %v, want %s with TOPIC_AUTHORIZATION_FAILED", ch.TP, ch.Err, tpOf(denied, 0))
	}
}

// TestEmbeddedBrokerRestart: the broker goes away and comes back on the same port with its
// data; the Fetcher recovers by itself.
func TestEmbeddedBrokerRestart(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	start := func() *kfake.Cluster {
		var c *kfake.Cluster
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			c, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.DataDir(dir))
			if err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatalf("start kfake on port %d: %v", port, err)
		}
		return c
	}
	kc := start()
	defer func() { kc.Close() }()
	b := kafkatest.Broker{Kind: kafkatest.Kfake, Addrs: kc.ListenAddrs(), Cluster: kc}
	e := newEnv(t, b)
	topic := e.topic("restart", 1)
	tp := tpOf(topic, 0)
	f, notify := e.fetcher(func(c *Config) { c.RetryBackoffMax = 200 * time.Millisecond })
	f.Assign(map[kafka.TopicPartition]int64{tp: 0})
	c := newConsumer(t, f, notify)
	e.produceValues(tp, "before")
	c.untilPosition(map[kafka.TopicPartition]int64{tp: 1})

	kc.Close()
	c.until("failed requests while the broker is down", func() bool { return f.Stats().RequestErrors >= 5 })
	kc = start()
	e.produceValues(tp, "after")
	c.untilPosition(map[kafka.TopicPartition]int64{tp: 2})
	if got := valuesOf(c.recs[tp]); !slices.Equal(got, []string{"before", "after"}) {
		t.Errorf("records %q", got)
	}
}

func waitFault(t *testing.T, h *kfake.FaultHandle, n int) error {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	return h.Wait(ctx, n)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}
