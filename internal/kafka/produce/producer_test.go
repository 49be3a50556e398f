package produce

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// Each check runs on kfake (TestEmbedded...) and on Apache Kafka (TestIntegration..., under
// `make test`). The expected records are the ones the test sent; partitions of keyed records
// are Java's murmur2 partitions (kafka.KeyPartition, checked against Kafka's own vectors).

func TestEmbeddedProducer(t *testing.T)    { checkProducer(t, kafkatest.Embedded(t)) }
func TestIntegrationProducer(t *testing.T) { checkProducer(t, kafkatest.Real(t)) }

func checkProducer(t *testing.T, b kafkatest.Broker) {
	t.Run("IdempotentRecordsExact", func(t *testing.T) { checkIdempotent(t, b) })
	t.Run("LingerSendsWithoutFlush", func(t *testing.T) { checkLinger(t, b) })
	t.Run("BatchSizeBoundsBatches", func(t *testing.T) { checkBatchSize(t, b) })
	t.Run("TransactionCommitAndAbort", func(t *testing.T) { checkTransactions(t, b) })
	t.Run("FencedByNewerInstance", func(t *testing.T) { checkFencing(t, b) })
	t.Run("UnknownTopic", func(t *testing.T) { checkUnknownTopic(t, b) })
	t.Run("TopicsInterleaved", func(t *testing.T) { checkTopicsInterleaved(t, b) })
}

// checkTopicsInterleaved sends to two topics of 1 and 3 partitions in runs and alternately:
// every record lands in its own topic and partition, and a partition that only the other
// topic has is refused.
func checkTopicsInterleaved(t *testing.T, b kafkatest.Broker) {
	one, three := createTopic(t, b, 1), kafkatest.Name(t, "produce3")
	kafkatest.CreateTopics(t, b, 3, kafkatest.KeepForever(), three)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{Linger: 5 * time.Millisecond})
	want := map[kafka.TopicPartition][]string{}
	for i, dst := range []struct {
		topic string
		part  int32
	}{{one, 0}, {one, 0}, {three, 2}, {one, 0}, {three, 1}, {three, 2}, {three, 0}, {one, 0}} {
		v := fmt.Sprintf("v%d", i)
		if err := p.Send(Record{Topic: dst.topic, Partition: dst.part, Value: []byte(v), Timestamp: 1_700_000_000_000}); err != nil {
			t.Fatal(err)
		}
		tp := kafka.TopicPartition{Topic: dst.topic, Partition: dst.part}
		want[tp] = append(want[tp], v)
		if i == 5 {
			// Right after a record to partition 2 of the three-partition topic.
			if err := p.Send(Record{Topic: one, Partition: 2, Value: []byte("x")}); !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				t.Fatalf("partition 2 of a one-partition topic: %v", err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tp := range []kafka.TopicPartition{{Topic: one, Partition: 0}, {Topic: three, Partition: 0}, {Topic: three, Partition: 1}, {Topic: three, Partition: 2}} {
		recs, _ := readAll(t, b, tp, false)
		var vals []string
		for _, r := range recs {
			vals = append(vals, r.value)
		}
		if fmt.Sprint(vals) != fmt.Sprint(want[tp]) {
			t.Errorf("%s/%d holds %v, want %v", tp.Topic, tp.Partition, vals, want[tp])
		}
	}
}

func saramaConf() *sarama.Config {
	c := kafkatest.SaramaConfig()
	c.Net.ReadTimeout = 10 * time.Second
	return c
}

func newCluster(t *testing.T, b kafkatest.Broker) *kafka.Cluster {
	t.Helper()
	cl, err := kafka.NewCluster(kafka.Config{Brokers: b.Addrs, Sarama: saramaConf()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func createTopic(t *testing.T, b kafkatest.Broker, partitions int32) string {
	t.Helper()
	topic := kafkatest.Name(t, "produce")
	kafkatest.CreateTopics(t, b, partitions, kafkatest.KeepForever(), topic)
	return topic
}

func newProducer(t *testing.T, cl *kafka.Cluster, cfg Config) *Producer {
	t.Helper()
	cfg.Cluster = cl
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// got is a record read back.
type got struct {
	offset     int64
	key, value string
	nullKey    bool
	ts         int64
	headers    string
}

// readAll reads every record of tp from offset 0 up to its end (the last stable offset when
// committed) with raw fetches, as the broker stores them, and the number of batches seen.
func readAll(t *testing.T, b kafkatest.Broker, tp kafka.TopicPartition, committed bool) ([]got, int) {
	t.Helper()
	client, err := sarama.NewClient(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	leader, err := client.Leader(tp.Topic, tp.Partition)
	if err != nil {
		t.Fatal(err)
	}
	iso := sarama.ReadUncommitted
	if committed {
		iso = sarama.ReadCommitted
	}
	// The end: the high watermark, or once every transaction has its marker (EndTxn returns
	// before the coordinator wrote them) the last stable offset.
	endOf := func(iso sarama.IsolationLevel) int64 {
		off := sarama.NewOffsetRequest(sarama.V4_0_0_0)
		off.Version = 4
		off.IsolationLevel = iso
		off.AddBlock(tp.Topic, tp.Partition, sarama.OffsetNewest, 1)
		or, err := leader.GetAvailableOffsets(off)
		if err != nil {
			t.Fatal(err)
		}
		return or.GetBlock(tp.Topic, tp.Partition).Offset
	}
	end := endOf(iso)
	for deadline := time.Now().Add(20 * time.Second); committed && end != endOf(sarama.ReadUncommitted); end = endOf(iso) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: a transaction stays open", tp)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var out []got
	batches := 0
	aborted := map[int64]bool{}
	for pos := int64(0); pos < end; {
		req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 10, MinBytes: 1, MaxBytes: 1 << 20, Isolation: iso}
		req.AddBlock(tp.Topic, tp.Partition, pos, 1<<20, -1)
		resp, err := leader.Fetch(req)
		if err != nil {
			t.Fatal(err)
		}
		blk := resp.GetBlock(tp.Topic, tp.Partition)
		if blk.Err != sarama.ErrNoError {
			t.Fatalf("fetch %s at %d: %v", tp, pos, blk.Err)
		}
		abortAt := map[int64]int64{}
		for _, a := range blk.AbortedTransactions {
			abortAt[a.ProducerID] = a.FirstOffset
		}
		for _, rs := range blk.RecordsSet {
			rb := rs.RecordBatch
			if rb == nil || rb.PartialTrailingRecord {
				continue
			}
			if first, ok := abortAt[rb.ProducerID]; committed && ok && first <= rb.LastOffset() {
				aborted[rb.ProducerID] = true
				delete(abortAt, rb.ProducerID) // one aborted transaction, ended by the next abort marker
			}
			if rb.Control {
				delete(aborted, rb.ProducerID)
				pos = rb.LastOffset() + 1
				continue
			}
			if rb.LastOffset() >= pos {
				batches++
			}
			for _, r := range rb.Records {
				o := rb.FirstOffset + r.OffsetDelta
				if o < pos || (committed && rb.IsTransactional && aborted[rb.ProducerID]) {
					continue
				}
				g := got{offset: o, key: string(r.Key), nullKey: r.Key == nil, value: string(r.Value),
					ts: rb.FirstTimestamp.Add(r.TimestampDelta).UnixMilli()}
				for _, h := range r.Headers {
					g.headers += string(h.Key) + "=" + string(h.Value) + ";"
				}
				out = append(out, g)
			}
			pos = rb.LastOffset() + 1
		}
	}
	return out, batches
}

func checkIdempotent(t *testing.T, b kafkatest.Broker) {
	topic := createTopic(t, b, 3)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{Linger: 20 * time.Millisecond, BatchSize: 2048})
	if pid, _ := p.ProducerID(); pid < 0 {
		t.Fatalf("an idempotent producer has producer id %d", pid)
	}
	want := map[int32][]got{}
	const n = 3000
	for i := 0; i < n; i++ {
		r := Record{Topic: topic, Partition: -1, Value: []byte(fmt.Sprintf("v%d", i)), Timestamp: int64(1_700_000_000_000 + i)}
		switch i % 5 {
		case 0:
			r.Partition = int32(i % 3) // explicit
			r.Key = []byte(fmt.Sprintf("k%d", i))
		case 1:
			r.Key = nil // null key: sticky partition, checked below by content
		case 2:
			r.Headers = []Header{{Key: "h", Value: []byte(fmt.Sprint(i))}, {Key: "e", Value: nil}}
			r.Key = []byte(fmt.Sprintf("k%d", i))
		default:
			r.Key = []byte(fmt.Sprintf("k%d", i))
		}
		if i == 7 {
			r.Value = nil // tombstone
		}
		part := r.Partition
		if part < 0 && r.Key != nil {
			part = kafka.KeyPartition(r.Key, 3)
		}
		g := got{key: string(r.Key), nullKey: r.Key == nil, value: string(r.Value), ts: r.Timestamp}
		for _, h := range r.Headers {
			g.headers += h.Key + "=" + string(h.Value) + ";"
		}
		if part >= 0 {
			want[part] = append(want[part], g)
		} else {
			want[-1] = append(want[-1], g)
		}
		if err := p.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f := p.Failures(); len(f) > 0 {
		t.Fatalf("%d failures, first %v", len(f), f[0].Err)
	}
	var nullKeyed []got
	total := 0
	for part := int32(0); part < 3; part++ {
		tp := kafka.TopicPartition{Topic: topic, Partition: part}
		recs, _ := readAll(t, b, tp, false)
		total += len(recs)
		var keyed []got
		for i, r := range recs {
			if r.offset != int64(i) {
				t.Fatalf("%s: record %d at offset %d", tp, i, r.offset)
			}
			r.offset = 0
			if r.nullKey {
				nullKeyed = append(nullKeyed, r)
			} else {
				keyed = append(keyed, r)
			}
		}
		if !slices.Equal(keyed, want[part]) {
			t.Errorf("%s: %d keyed records, want %d; first got %+v want %+v", tp, len(keyed), len(want[part]), first(keyed), first(want[part]))
		}
		if a := p.Acked(tp); a != int64(len(recs)-1) {
			t.Errorf("Acked(%s) = %d, want %d", tp, a, len(recs)-1)
		}
	}
	if total != n {
		t.Errorf("%d records on the broker, want %d (no duplicates, none lost)", total, n)
	}
	slices.SortFunc(nullKeyed, func(a, b got) int { return int(a.ts - b.ts) })
	if !slices.Equal(nullKeyed, want[-1]) {
		t.Errorf("null-key records differ: %d, want %d", len(nullKeyed), len(want[-1]))
	}
}

func first(g []got) any {
	if len(g) == 0 {
		return nil
	}
	return g[0]
}

// A record arrives by itself, without Flush, once its linger time passed.
func checkLinger(t *testing.T, b kafkatest.Broker) {
	topic := createTopic(t, b, 1)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{Linger: 30 * time.Millisecond})
	if err := p.Send(Record{Topic: topic, Partition: 0, Key: []byte("k"), Value: []byte("v"), Timestamp: 42}); err != nil {
		t.Fatal(err)
	}
	tp := kafka.TopicPartition{Topic: topic}
	deadline := time.Now().Add(20 * time.Second)
	for p.Acked(tp) < 0 {
		if time.Now().After(deadline) {
			t.Fatal("the record was not sent without a Flush")
		}
		time.Sleep(5 * time.Millisecond)
	}
	recs, _ := readAll(t, b, tp, false)
	if len(recs) != 1 || recs[0].key != "k" || recs[0].value != "v" || recs[0].ts != 42 {
		t.Fatalf("read back %+v", recs)
	}
}

// Batches hold about batch.size bytes: 1000 records of ~100 bytes with a 4 KiB batch size make
// at least 25 batches, each under the limit (a raw fetch counts them).
func checkBatchSize(t *testing.T, b kafkatest.Broker) {
	topic := createTopic(t, b, 1)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{Linger: time.Second, BatchSize: 4096})
	val := make([]byte, 90)
	for i := 0; i < 1000; i++ {
		if err := p.Send(Record{Topic: topic, Partition: 0, Key: []byte(fmt.Sprintf("%08d", i)), Value: val, Timestamp: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	recs, batches := readAll(t, b, kafka.TopicPartition{Topic: topic}, false)
	if len(recs) != 1000 {
		t.Fatalf("%d records, want 1000", len(recs))
	}
	// 1000 records of ~119 estimated bytes in 4096-byte batches: 34 records a batch.
	if batches < 25 || batches > 40 {
		t.Errorf("%d batches, want about 30 (batch.size 4096)", batches)
	}
}

func checkTransactions(t *testing.T, b kafkatest.Broker) {
	topic := createTopic(t, b, 2)
	cl := newCluster(t, b)
	group := kafkatest.Name(t, "group")
	p := newProducer(t, cl, Config{TransactionalID: kafkatest.Name(t, "txn"), TransactionTimeout: 10 * time.Second, Linger: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.Send(Record{Topic: topic, Partition: 0, Value: []byte("x")}); !errors.Is(err, ErrNoTransaction) {
		t.Fatalf("Send outside a transaction: %v, want ErrNoTransaction", err)
	}
	send := func(prefix string, n int) {
		for i := 0; i < n; i++ {
			if err := p.Send(Record{Topic: topic, Partition: int32(i % 2), Key: []byte(fmt.Sprintf("%s%d", prefix, i)), Value: []byte("v"), Timestamp: int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	meta := GroupMetadata{GroupID: group, Generation: -1}
	in := kafka.TopicPartition{Topic: createTopic(t, b, 1), Partition: 0}
	// Transaction 1 commits, 2 aborts, 3 commits.
	for i, commit := range []bool{true, false, true} {
		if err := p.Begin(); err != nil {
			t.Fatal(err)
		}
		send(fmt.Sprintf("t%d-", i+1), 10)
		if commit {
			if err := p.SendOffsets(ctx, map[kafka.TopicPartition]Offset{in: {Offset: int64(100 * (i + 1)), LeaderEpoch: -1, Metadata: "m"}}, meta); err != nil {
				t.Fatal(err)
			}
			if err := p.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := p.Flush(ctx); err != nil { // the records reach the log, then are aborted
				t.Fatal(err)
			}
			if err := p.SendOffsets(ctx, map[kafka.TopicPartition]Offset{in: {Offset: 999, LeaderEpoch: -1}}, meta); err != nil {
				t.Fatal(err)
			}
			if err := p.Abort(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for part := int32(0); part < 2; part++ {
		tp := kafka.TopicPartition{Topic: topic, Partition: part}
		recs, _ := readAll(t, b, tp, true)
		var keys []string
		for _, r := range recs {
			keys = append(keys, r.key)
		}
		var want []string
		for _, tx := range []int{1, 3} {
			for i := int(part); i < 10; i += 2 {
				want = append(want, fmt.Sprintf("t%d-%d", tx, i))
			}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("%s read_committed: %v, want %v", tp, keys, want)
		}
		all, _ := readAll(t, b, tp, false)
		if len(all) != 15 {
			t.Errorf("%s read_uncommitted: %d records, want 15 (the aborted ones too)", tp, len(all))
		}
	}
	// The committed offset is the one of the last committed transaction.
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{in.Topic: {0}})
		if err == nil {
			if blk := resp.GetBlock(in.Topic, 0); blk != nil && blk.Offset == 300 {
				if blk.Metadata != "m" {
					t.Errorf("committed metadata %q, want m", blk.Metadata)
				}
				break
			} else if blk != nil && blk.Offset != -1 && blk.Offset != 300 {
				t.Fatalf("committed offset %d, want 300", blk.Offset)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed offset never became 300: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkFencing(t *testing.T, b kafkatest.Broker) {
	topic := createTopic(t, b, 1)
	cl := newCluster(t, b)
	id := kafkatest.Name(t, "txn")
	old := newProducer(t, cl, Config{TransactionalID: id, TransactionTimeout: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := old.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := old.Send(Record{Topic: topic, Partition: 0, Value: []byte("zombie")}); err != nil {
		t.Fatal(err)
	}
	if err := old.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cl2 := newCluster(t, b)
	newer := newProducer(t, cl2, Config{TransactionalID: id, TransactionTimeout: 10 * time.Second})
	if err := newer.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := newer.Send(Record{Topic: topic, Partition: 0, Value: []byte("live")}); err != nil {
		t.Fatal(err)
	}
	if err := newer.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	_ = old.Send(Record{Topic: topic, Partition: 0, Value: []byte("zombie2")})
	err := old.Commit(ctx)
	// kfake answers a fenced producer's produce INVALID_TXN_STATE first (Java's layout).
	if !errors.Is(err, ErrFenced) && !(b.Kind == kafkatest.Kfake && errors.Is(err, sarama.ErrInvalidTxnState)) {
		t.Fatalf("the older producer's commit: %v, want ErrFenced", err)
	}
	var fe *FatalError
	if !errors.As(err, &fe) {
		t.Errorf("fencing is not a *FatalError: %T", err)
	}
	recs, _ := readAll(t, b, kafka.TopicPartition{Topic: topic}, true)
	if len(recs) != 1 || recs[0].value != "live" {
		t.Fatalf("read_committed after fencing: %+v, want only the live record", recs)
	}
}

func checkUnknownTopic(t *testing.T, b kafkatest.Broker) {
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{})
	err := p.Send(Record{Topic: kafkatest.Name(t, "missing"), Partition: -1, Value: []byte("x")})
	if !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
		t.Fatalf("Send to a missing topic: %v, want ErrUnknownTopicOrPartition", err)
	}
}

// Retries keep the order and, with idempotence, write nothing twice: kfake answers produce
// requests NOT_LEADER_OR_FOLLOWER and NOT_ENOUGH_REPLICAS_AFTER_APPEND (which it answers after
// writing the batch, as Kafka does), several times, while 5 requests are in flight.
func TestEmbeddedProducerRetriesKeepOrderWithoutDuplicates(t *testing.T) {
	t.Parallel()
	b := kafkatest.Embedded(t)
	topic := createTopic(t, b, 2)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{Linger: time.Millisecond, BatchSize: 512, RetryBackoff: 5 * time.Millisecond})
	h1 := b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Partitions: []int32{0}, Err: kerr.NotLeaderForPartition, Count: 3})
	h2 := b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Partitions: []int32{1}, Err: kerr.NotEnoughReplicasAfterAppend, Count: 3})
	const n = 2000
	for i := 0; i < n; i++ {
		if err := p.Send(Record{Topic: topic, Partition: int32(i % 2), Key: []byte(fmt.Sprintf("%06d", i)), Value: []byte("v"), Timestamp: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f := p.Failures(); len(f) > 0 {
		t.Fatalf("%d failures: %v", len(f), f[0].Err)
	}
	if h1.Hits() != 3 || h2.Hits() != 3 {
		t.Fatalf("faults hit %d and %d times, want 3 each", h1.Hits(), h2.Hits())
	}
	for part := int32(0); part < 2; part++ {
		recs, _ := readAll(t, b, kafka.TopicPartition{Topic: topic, Partition: part}, false)
		if len(recs) != n/2 {
			t.Fatalf("partition %d: %d records, want %d", part, len(recs), n/2)
		}
		for i, r := range recs {
			if want := fmt.Sprintf("%06d", 2*i+int(part)); r.key != want {
				t.Fatalf("partition %d record %d: key %s, want %s (order lost or duplicated)", part, i, r.key, want)
			}
		}
	}
}

// A record the broker refuses for good (a value over the topic's max.message.bytes) is reported
// by Failures with the broker's error, and the producer goes on: its later records arrive.
func TestEmbeddedProducerRecordTooLarge(t *testing.T) {
	t.Parallel()
	checkTooLarge(t, kafkatest.Embedded(t))
}

func TestIntegrationProducerRecordTooLarge(t *testing.T) {
	checkTooLarge(t, kafkatest.Real(t))
}

func checkTooLarge(t *testing.T, b kafkatest.Broker) {
	topic := kafkatest.Name(t, "small")
	kafkatest.CreateTopics(t, b, 1, map[string]string{"max.message.bytes": "1000"}, topic)
	cl := newCluster(t, b)
	p := newProducer(t, cl, Config{Linger: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Send(Record{Topic: topic, Partition: 0, Value: make([]byte, 5000)}); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	f := p.Failures()
	if len(f) != 1 || !errors.Is(f[0].Err, sarama.ErrMessageSizeTooLarge) || len(f[0].Record.Value) != 5000 {
		t.Fatalf("failures %+v, want the one record with MESSAGE_TOO_LARGE", f)
	}
	if err := p.Send(Record{Topic: topic, Partition: 0, Value: []byte("small")}); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f := p.Failures(); len(f) > 0 {
		t.Fatalf("after the failure: %v", f[0].Err)
	}
	recs, _ := readAll(t, b, kafka.TopicPartition{Topic: topic}, false)
	if len(recs) != 1 || recs[0].value != "small" {
		t.Fatalf("records %+v, want only the small one", recs)
	}
}

// TestEmbeddedCertificateRefused: the broker refuses our client certificate from some point on:
// making a producer (InitProducerId on a new connection) fails at once with a *FatalError
// that is an authentication error, idempotent or transactional, instead of retrying the
// connection until ctx ends.
func TestEmbeddedCertificateRefused(t *testing.T) {
	t.Parallel()
	sb := kafkatest.EmbeddedMTLS(t)
	sc := sb.MTLSSaramaConfig(t, "app")
	ids := []string{"", kafkatest.Name(t, "txn")}
	clusters := map[string]*kafka.Cluster{}
	for _, id := range ids {
		cl, err := kafka.NewCluster(kafka.Config{Brokers: sb.SSL, Sarama: sc}) // connects (metadata) now
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		clusters[id] = cl
	}
	sb.RefuseClientCertificates(t)
	for _, id := range ids {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		p, err := New(ctx, Config{Cluster: clusters[id], TransactionalID: id})
		if err == nil {
			p.Close()
		}
		var fe *FatalError
		if err == nil || ctx.Err() != nil || !kafka.AuthError(err) || id == "" && !errors.As(err, &fe) {
			t.Errorf("transactional id %q: New: %v (ctx %v), want an authentication error at once", id, err, ctx.Err())
		}
		cancel()
	}
}

// A broker with no state for a producer id accepts any first sequence number (KIP-360; kfake
// models KAFKA-15591's exception for a never-written log, so the partition here holds a record
// first; Apache Kafka 4.4 took a later batch first even into a just created topic). So
// while the first batch of a producer id to a partition waits to be retried, no later batch of
// the partition may be in flight: written first, it would leave the first out of order. Apache
// Kafka 4.4 answers the first produce to a just created topic NOT_LEADER_OR_FOLLOWER now and then
// and the next one a few ms later normally, which made the records of IdempotentRecordsExact
// come out of order about one run in ten.
func TestEmbeddedProducerFirstBatchRetriedAlone(t *testing.T) {
	t.Parallel()
	b := kafkatest.Embedded(t)
	topic := createTopic(t, b, 1)
	cl := newCluster(t, b)
	tp := kafka.TopicPartition{Topic: topic, Partition: 0}
	// The partition holds a record of another producer: its log is not "never written".
	other := newProducer(t, cl, Config{NoIdempotence: true})
	if err := other.Send(Record{Topic: topic, Partition: 0, Key: []byte("other"), Value: []byte("v")}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := other.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	p := newProducer(t, cl, Config{Linger: -1, BatchSize: 64, RetryBackoff: 50 * time.Millisecond})
	h := b.Cluster.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: topic, Partitions: []int32{0}, Err: kerr.NotLeaderForPartition})
	const n = 200
	for i := 0; i < n; i++ {
		if err := p.Send(Record{Topic: topic, Partition: 0, Key: []byte(fmt.Sprintf("%04d", i)), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if f := p.Failures(); len(f) > 0 {
		t.Fatalf("%d failures: %v", len(f), f[0].Err)
	}
	if h.Hits() != 1 {
		t.Fatalf("the fault hit %d times, want 1", h.Hits())
	}
	recs, _ := readAll(t, b, tp, false)
	if len(recs) != n+1 {
		t.Fatalf("%d records, want %d", len(recs), n+1)
	}
	for i, r := range recs[1:] {
		if want := fmt.Sprintf("%04d", i); r.key != want {
			t.Fatalf("record %d: key %s, want %s (a later batch was written before the retried first one)", i, r.key, want)
		}
	}
}
