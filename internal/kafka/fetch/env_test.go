package fetch

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// env is one test's view of a broker: a Cluster for the Fetcher, an admin client and helpers
// to create topics and write records.
type env struct {
	t       testing.TB
	b       kafkatest.Broker
	sc      *sarama.Config // of every client
	cluster *kafka.Cluster
	admin   sarama.ClusterAdmin
	codec   sarama.CompressionCodec // of the batches produceBatch writes
}

func newEnv(t testing.TB, b kafkatest.Broker) *env {
	t.Helper()
	return newEnvConfig(t, b, kafkatest.SaramaConfig())
}

// newEnvConfig is newEnv with the client configuration sc (TLS, SASL).
func newEnvConfig(t testing.TB, b kafkatest.Broker, sc *sarama.Config) *env {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(b.Addrs, sc)
	if err != nil {
		t.Fatalf("admin client for %s %v: %v", b.Kind, b.Addrs, err)
	}
	t.Cleanup(func() { admin.Close() })
	return &env{t: t, b: b, sc: sc, cluster: newClusterConfig(t, b, sc), admin: admin}
}

func newCluster(t testing.TB, b kafkatest.Broker) *kafka.Cluster {
	t.Helper()
	return newClusterConfig(t, b, kafkatest.SaramaConfig())
}

func newClusterConfig(t testing.TB, b kafkatest.Broker, sc *sarama.Config) *kafka.Cluster {
	t.Helper()
	c, err := kafka.NewCluster(kafka.Config{Brokers: b.Addrs, Sarama: sc, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("cluster %v: %v", b.Addrs, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testLogger logs to the test at debug level when FETCH_TEST_LOG is set, else warnings only.
func testLogger(t testing.TB) *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("FETCH_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// topic creates a topic with partitions partitions and waits until each has a leader that
// answers ListOffsets.
func (e *env) topic(prefix string, partitions int32) string {
	e.t.Helper()
	name := kafkatest.Name(e.t, prefix)
	kafkatest.CreateTopicsWith(e.t, e.b.Addrs, e.sc, partitions, nil, name)
	return name
}

// endOffset returns tp's end offset at the isolation level (the last stable offset under
// ReadCommitted), asking the leader with ListOffsets, retrying until the partition is ready.
func (e *env) endOffset(tp kafka.TopicPartition, iso kafka.IsolationLevel) int64 {
	return e.listOffset(tp, iso, sarama.OffsetNewest)
}

func (e *env) listOffset(tp kafka.TopicPartition, iso kafka.IsolationLevel, ts int64) int64 {
	e.t.Helper()
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_ = e.cluster.RefreshMetadata(tp.Topic)
		n, _, err := e.cluster.Leader(tp)
		if err != nil {
			last = err
			continue
		}
		conn, err := e.cluster.Conn(n, kafka.Purpose{Name: "test-admin"})
		if err != nil {
			last = err
			continue
		}
		req := sarama.NewOffsetRequest(sarama.V4_0_0_0)
		req.IsolationLevel = sarama.IsolationLevel(iso)
		req.AddBlock(tp.Topic, tp.Partition, ts, 1)
		resp, err := conn.GetAvailableOffsets(req)
		if err != nil {
			e.cluster.Discard(n, kafka.Purpose{Name: "test-admin"}, conn)
			last = err
			continue
		}
		blk := resp.GetBlock(tp.Topic, tp.Partition)
		if blk == nil {
			last = errors.New("no block")
			continue
		}
		if blk.Err != sarama.ErrNoError {
			last = blk.Err
			continue
		}
		return blk.Offset
	}
	e.t.Fatalf("list offsets of %s: %v", tp, last)
	return 0
}

// rec is a record to write and to expect.
type rec struct {
	key, value []byte
	ts         int64
	headers    []Header
}

// produceBatch writes recs as one record batch (Produce v10, acks=all) and returns the
// offset of its first record.
func (e *env) produceBatch(tp kafka.TopicPartition, recs []rec) int64 {
	e.t.Helper()
	base := recs[0].ts
	maxTS := base
	rs := make([]*sarama.Record, len(recs))
	for i, r := range recs {
		var hs []*sarama.RecordHeader
		for _, h := range r.headers {
			hs = append(hs, &sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
		}
		rs[i] = &sarama.Record{Key: r.key, Value: r.value, Headers: hs, OffsetDelta: int64(i),
			TimestampDelta: time.Duration(r.ts-base) * time.Millisecond}
		maxTS = max(maxTS, r.ts)
	}
	p := kafka.Purpose{Name: "test-produce"}
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		n, _, err := e.cluster.Leader(tp)
		if err != nil {
			last = err
			_ = e.cluster.RefreshMetadata(tp.Topic)
			continue
		}
		conn, err := e.cluster.Conn(n, p)
		if err != nil {
			last = err
			continue
		}
		// A fresh batch per attempt: sarama caches a batch's encoding.
		batch := &sarama.RecordBatch{Version: 2, Codec: e.codec, FirstTimestamp: time.UnixMilli(base), MaxTimestamp: time.UnixMilli(maxTS),
			ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, LastOffsetDelta: int32(len(rs) - 1), Records: rs}
		req := &sarama.ProduceRequest{RequiredAcks: sarama.WaitForAll, Timeout: 10_000, Version: 10}
		req.AddBatch(tp.Topic, tp.Partition, batch)
		resp, err := conn.Produce(req)
		if err != nil {
			e.cluster.Discard(n, p, conn)
			last = err
			continue
		}
		blk := resp.GetBlock(tp.Topic, tp.Partition)
		switch {
		case blk == nil:
			last = errors.New("no block in the produce response")
		case blk.Err == sarama.ErrNoError:
			return blk.Offset
		case kafka.RetriableCode(blk.Err):
			last = blk.Err
			_ = e.cluster.RefreshMetadata(tp.Topic)
		default:
			e.t.Fatalf("produce to %s: %v", tp, blk.Err)
		}
	}
	e.t.Fatalf("produce to %s: %v", tp, last)
	return 0
}

// produceValues writes one batch of records with the given values (keys k<i>, timestamps now).
func (e *env) produceValues(tp kafka.TopicPartition, values ...string) int64 {
	e.t.Helper()
	now := time.Now().UnixMilli()
	recs := make([]rec, len(values))
	for i, v := range values {
		recs[i] = rec{key: []byte(fmt.Sprint("k", i)), value: []byte(v), ts: now}
	}
	return e.produceBatch(tp, recs)
}

// fetcher returns a Fetcher on a new Cluster of its own, with a short MaxWait, closed at the
// end of the test; mod adjusts the config. The channel receives (without blocking) on Notify.
func (e *env) fetcher(mod func(*Config)) (*Fetcher, chan struct{}) {
	e.t.Helper()
	notify := make(chan struct{}, 1)
	cfg := Config{
		MaxWait:      50 * time.Millisecond,
		RetryBackoff: 20 * time.Millisecond,
		Notify:       func() { signal(notify) },
		Logger:       testLogger(e.t),
	}
	if mod != nil {
		mod(&cfg)
	}
	if cfg.Cluster == nil {
		cfg.Cluster = newClusterConfig(e.t, e.b, e.sc)
	}
	f, err := New(cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { f.Close() })
	return f, notify
}

// consumer polls a Fetcher and keeps what it got per partition, checking the chunk rules
// (one chunk per partition per Poll, each chunk starting where the previous one ended).
type consumer struct {
	t      *testing.T
	f      *Fetcher
	notify chan struct{}
	recs   map[kafka.TopicPartition][]Record
	chunks map[kafka.TopicPartition][]Chunk
	errs   []Chunk
	next   map[kafka.TopicPartition]int64 // Next of the last chunk
}

func newConsumer(t *testing.T, f *Fetcher, notify chan struct{}) *consumer {
	return &consumer{t: t, f: f, notify: notify, recs: map[kafka.TopicPartition][]Record{},
		chunks: map[kafka.TopicPartition][]Chunk{}, next: map[kafka.TopicPartition]int64{}}
}

// poll takes the chunks ready now and checks them.
func (c *consumer) poll() []Chunk {
	c.t.Helper()
	chunks := c.f.Poll()
	seen := map[kafka.TopicPartition]bool{}
	for _, ch := range chunks {
		if seen[ch.TP] {
			c.t.Fatalf("two chunks of %s in one Poll", ch.TP)
		}
		seen[ch.TP] = true
		if ch.Err != nil {
			c.errs = append(c.errs, ch)
			continue
		}
		if prev, ok := c.next[ch.TP]; ok && len(ch.Records) > 0 && ch.Records[0].Offset < prev {
			c.t.Fatalf("%s: chunk starts at offset %d, before the previous chunk's Next %d", ch.TP, ch.Records[0].Offset, prev)
		}
		for i, r := range ch.Records {
			if r.Offset >= ch.Next {
				c.t.Fatalf("%s: record offset %d not below the chunk's Next %d", ch.TP, r.Offset, ch.Next)
			}
			if i > 0 && r.Offset <= ch.Records[i-1].Offset {
				c.t.Fatalf("%s: offsets out of order: %d after %d", ch.TP, r.Offset, ch.Records[i-1].Offset)
			}
		}
		if pos := c.f.Position(ch.TP); pos != ch.Next {
			c.t.Fatalf("%s: Position %d after polling a chunk with Next %d", ch.TP, pos, ch.Next)
		}
		c.next[ch.TP] = ch.Next
		c.recs[ch.TP] = append(c.recs[ch.TP], ch.Records...)
		c.chunks[ch.TP] = append(c.chunks[ch.TP], ch)
	}
	return chunks
}

// until polls until done returns true, waiting for Notify between polls, for at most 30 s.
func (c *consumer) until(what string, done func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		c.poll()
		if done() {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting for %s: still not there after 30 s (stats %+v)", what, c.f.Stats())
		}
		select {
		case <-c.notify:
		case <-tick.C:
		}
	}
}

// untilPosition polls until each partition's position is at least its offset in want.
func (c *consumer) untilPosition(want map[kafka.TopicPartition]int64) {
	c.t.Helper()
	c.until(fmt.Sprintf("positions %v", want), func() bool {
		for tp, off := range want {
			if c.f.Position(tp) < off {
				return false
			}
		}
		return true
	})
}

func offsetsOf(rs []Record) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.Offset
	}
	return out
}

func valuesOf(rs []Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Value)
	}
	return out
}

func span(from, to int64) []int64 {
	var out []int64
	for o := from; o < to; o++ {
		out = append(out, o)
	}
	return out
}

// sameRecord compares a fetched record with what was written at offset off.
func sameRecord(t *testing.T, tp kafka.TopicPartition, got Record, want rec, off int64) {
	t.Helper()
	if got.Offset != off {
		t.Errorf("%s: offset %d, want %d", tp, got.Offset, off)
	}
	if got.Timestamp != want.ts {
		t.Errorf("%s@%d: timestamp %d, want %d", tp, off, got.Timestamp, want.ts)
	}
	if !sameBytes(got.Key, want.key) || !sameBytes(got.Value, want.value) {
		t.Errorf("%s@%d: key %s value %s, want key %s value %s", tp, off, show(got.Key), show(got.Value), show(want.key), show(want.value))
	}
	if len(got.Headers) != len(want.headers) {
		t.Errorf("%s@%d: headers %v, want %v", tp, off, got.Headers, want.headers)
	} else {
		for i := range got.Headers {
			if got.Headers[i].Key != want.headers[i].Key || !sameBytes(got.Headers[i].Value, want.headers[i].Value) {
				t.Errorf("%s@%d: header %d is %q=%s, want %q=%s", tp, off, i, got.Headers[i].Key, show(got.Headers[i].Value),
					want.headers[i].Key, show(want.headers[i].Value))
			}
		}
	}
	if got.LeaderEpoch < 0 {
		t.Errorf("%s@%d: leader epoch %d, want the batch's (>= 0)", tp, off, got.LeaderEpoch)
	}
}

// sameBytes tells null from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func show(b []byte) string {
	if b == nil {
		return "null"
	}
	return fmt.Sprintf("%q", b)
}

func tpOf(topic string, p int32) kafka.TopicPartition {
	return kafka.TopicPartition{Topic: topic, Partition: p}
}
