package fetch

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
)

// The Fetcher's behaviour, each on kfake (TestEmbedded...) and on Apache Kafka
// (TestIntegration..., skipped unless KAFKA_BOOTSTRAP_SERVERS is set).

func TestEmbeddedFetcher(t *testing.T)    { checkFetcher(t, kafkatest.Embedded(t)) }
func TestIntegrationFetcher(t *testing.T) { checkFetcher(t, kafkatest.Real(t)) }

func checkFetcher(t *testing.T, b kafkatest.Broker) {
	t.Run("Offsets", func(t *testing.T) { checkOffsets(t, b) })
	t.Run("ResetLatest", func(t *testing.T) { checkResetLatest(t, b) })
	t.Run("PauseResume", func(t *testing.T) { checkPauseResume(t, b) })
	t.Run("OneChunkPerPartition", func(t *testing.T) { checkOneChunk(t, b) })
	t.Run("LargeBatches", func(t *testing.T) { checkLargeBatches(t, b) })
	t.Run("LateTopic", func(t *testing.T) { checkLateTopic(t, b) })
	t.Run("ReadCommitted", func(t *testing.T) { checkReadCommitted(t, b) })
	t.Run("OutOfRange", func(t *testing.T) { checkOutOfRange(t, b) })
	t.Run("UnassignSeek", func(t *testing.T) { checkUnassignSeek(t, b) })
	t.Run("Close", func(t *testing.T) { checkClose(t, b) })
	t.Run("IncrementalIdle", func(t *testing.T) { checkIncrementalIdle(t, b) })
	t.Run("IncrementalBusy", func(t *testing.T) { checkIncrementalBusy(t, b) })
	t.Run("ForgetHeld", func(t *testing.T) { checkForgetHeld(t, b) })
	t.Run("BrokenConnection", func(t *testing.T) { checkBrokenConnection(t, b) })
}

// checkOffsets fetches five partitions of two topics, from given offsets (one in the middle
// of a batch) and from OffsetUnknown with Earliest, and compares every field of every record.
func checkOffsets(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	ta, tb := e.topic("a", 3), e.topic("b", 2)
	base := time.Now().Add(-time.Hour).UnixMilli()
	written := map[kafka.TopicPartition][]rec{}
	write := func(tp kafka.TopicPartition, n int) {
		var recs []rec
		for i := range n {
			r := rec{ts: base + int64(len(written[tp])+i)*1000 + int64(tp.Partition)}
			switch i % 4 {
			case 0:
				r.key, r.value = []byte(fmt.Sprintf("key-%s-%d", tp, i)), []byte(fmt.Sprintf("value-%d", i))
			case 1: // null key, headers (one with a null value)
				r.value = []byte(fmt.Sprintf("v%d", i))
				r.headers = []Header{{Key: "h1", Value: []byte("x")}, {Key: "h2"}, {Key: "h1", Value: []byte{}}}
			case 2: // null value (a tombstone), empty key
				r.key = []byte{}
			case 3: // empty value
				r.key, r.value = []byte("k"), []byte{}
			}
			recs = append(recs, r)
		}
		if off := e.produceBatch(tp, recs); off != int64(len(written[tp])) {
			t.Fatalf("%s: batch written at %d, want %d", tp, off, len(written[tp]))
		}
		written[tp] = append(written[tp], recs...)
	}
	tps := []kafka.TopicPartition{tpOf(ta, 0), tpOf(ta, 1), tpOf(ta, 2), tpOf(tb, 0), tpOf(tb, 1)}
	for i, tp := range tps {
		e.codec = sarama.CompressionNone
		write(tp, 5+i)
		if tp.Topic == tb {
			e.codec = sarama.CompressionZSTD // decompressed records too
		}
		write(tp, 3)
	}
	start := map[kafka.TopicPartition]int64{
		tps[0]: 2,                   // in the middle of the first batch
		tps[1]: kafka.OffsetUnknown, // Earliest: 0
		tps[2]: 0,
		tps[3]: 7 + 1, // in the second batch
		tps[4]: kafka.OffsetUnknown,
	}
	f, notify := e.fetcher(nil)
	f.Assign(start)
	c := newConsumer(t, f, notify)
	end := map[kafka.TopicPartition]int64{}
	for _, tp := range tps {
		end[tp] = int64(len(written[tp]))
	}
	c.untilPosition(end)
	for _, tp := range tps {
		from := max(start[tp], 0)
		got := c.recs[tp]
		if !slices.Equal(offsetsOf(got), span(from, end[tp])) {
			t.Errorf("%s from %d: offsets %v, want %v", tp, start[tp], offsetsOf(got), span(from, end[tp]))
			continue
		}
		for i, r := range got {
			sameRecord(t, tp, r, written[tp][from+int64(i)], from+int64(i))
		}
		if lag := f.Lag(tp); lag != 0 {
			t.Errorf("%s: lag %d at the end, want 0", tp, lag)
		}
		last := c.chunks[tp][len(c.chunks[tp])-1]
		if last.HighWatermark != end[tp] || last.LogStartOffset != 0 {
			t.Errorf("%s: last chunk says high watermark %d, log start %d; want %d, 0", tp, last.HighWatermark, last.LogStartOffset, end[tp])
		}
	}
	// Assigning again keeps the positions.
	f.Assign(map[kafka.TopicPartition]int64{tps[0]: 0})
	if pos := f.Position(tps[0]); pos != end[tps[0]] {
		t.Errorf("%s: position %d after assigning it again, want %d", tps[0], pos, end[tps[0]])
	}
	if st := f.Stats(); st.Resets != 2 {
		t.Errorf("resets %d, want 2 (the two partitions assigned at OffsetUnknown)", st.Resets)
	}
}

// checkResetLatest assigns at OffsetUnknown with Latest: only records written after the
// reset come out.
func checkResetLatest(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("latest", 2)
	tp0, tp1 := tpOf(topic, 0), tpOf(topic, 1)
	e.produceValues(tp0, "old0", "old1", "old2")
	e.produceValues(tp1, "old0")
	f, notify := e.fetcher(func(c *Config) { c.Reset = Latest })
	f.Assign(map[kafka.TopicPartition]int64{tp0: kafka.OffsetUnknown, tp1: kafka.OffsetUnknown})
	c := newConsumer(t, f, notify)
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 3, tp1: 1})
	if len(c.recs[tp0])+len(c.recs[tp1]) != 0 {
		t.Fatalf("records before the reset came out: %v %v", valuesOf(c.recs[tp0]), valuesOf(c.recs[tp1]))
	}
	e.produceValues(tp0, "new3", "new4")
	e.produceValues(tp1, "new1")
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 5, tp1: 2})
	if got := valuesOf(c.recs[tp0]); !slices.Equal(got, []string{"new3", "new4"}) {
		t.Errorf("%s: %q, want [new3 new4]", tp0, got)
	}
	if got := valuesOf(c.recs[tp1]); !slices.Equal(got, []string{"new1"}) {
		t.Errorf("%s: %q, want [new1]", tp1, got)
	}
}

// checkPauseResume pauses one of two partitions while records keep arriving on both.
func checkPauseResume(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("pause", 2)
	tp0, tp1 := tpOf(topic, 0), tpOf(topic, 1)
	f, notify := e.fetcher(nil)
	f.Assign(map[kafka.TopicPartition]int64{tp0: 0, tp1: 0})
	c := newConsumer(t, f, notify)
	e.produceValues(tp0, "a0")
	e.produceValues(tp1, "b0")
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 1, tp1: 1})

	f.Pause(tp0)
	for i := 1; i <= 5; i++ {
		e.produceValues(tp0, fmt.Sprint("a", i))
		e.produceValues(tp1, fmt.Sprint("b", i))
		c.untilPosition(map[kafka.TopicPartition]int64{tp1: int64(i + 1)})
		if n := len(c.recs[tp0]); n != 1 {
			t.Fatalf("paused %s delivered records: %q", tp0, valuesOf(c.recs[tp0]))
		}
		if pos := f.Position(tp0); pos != 1 {
			t.Fatalf("paused %s moved to %d", tp0, pos)
		}
	}
	if lag := f.Lag(tp1); lag != 0 {
		t.Errorf("%s: lag %d, want 0", tp1, lag)
	}
	// The paused partition was fetched ahead (it is in every request until it holds a chunk):
	// a1 came with the response that brought b1, so the first Poll after Resume has it.
	f.Resume(tp0)
	held := false
	for _, ch := range c.poll() {
		held = held || (ch.TP == tp0 && len(ch.Records) > 0 && string(ch.Records[0].Value) == "a1")
	}
	if !held {
		t.Fatalf("the first Poll after Resume has no chunk of %s starting with a1 (fetched while paused)", tp0)
	}
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 6})
	if got, want := valuesOf(c.recs[tp0]), []string{"a0", "a1", "a2", "a3", "a4", "a5"}; !slices.Equal(got, want) {
		t.Errorf("%s after resume: %q, want %q", tp0, got, want)
	}
	if got := valuesOf(c.recs[tp1]); len(got) != 6 {
		t.Errorf("%s: %q, want b0..b5", tp1, got)
	}
}

// checkOneChunk shows that a partition with an undelivered chunk is not fetched again: no
// requests while the only partition's chunk waits, and each polled chunk starts at the
// previous one's Next (a small PartitionMaxBytes makes many chunks).
func checkOneChunk(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("chunk", 1)
	tp := tpOf(topic, 0)
	var values []string
	for i := range 40 {
		vs := make([]string, 25)
		for j := range vs {
			vs[j] = fmt.Sprintf("value-%04d-%s", i*25+j, strings.Repeat("x", 40))
		}
		e.produceValues(tp, vs...)
		values = append(values, vs...)
	}
	f, notify := e.fetcher(func(c *Config) { c.PartitionMaxBytes = 4 << 10 })
	f.Assign(map[kafka.TopicPartition]int64{tp: 0})

	// The first chunk becomes ready; while it is not polled no request is sent.
	select {
	case <-notify:
	case <-time.After(30 * time.Second):
		t.Fatal("no chunk after 30 s")
	}
	before := f.Stats()
	time.Sleep(300 * time.Millisecond) // six MaxWaits: an unblocked loop would send requests
	after := f.Stats()
	if n := after.FullRequests + after.IncrementalRequests - before.FullRequests - before.IncrementalRequests; n != 0 {
		t.Errorf("%d fetch requests while the partition's chunk was not polled, want 0", n)
	}

	c := newConsumer(t, f, notify)
	c.untilPosition(map[kafka.TopicPartition]int64{tp: int64(len(values))})
	if got := valuesOf(c.recs[tp]); !slices.Equal(got, values) {
		t.Fatalf("%d records, want %d in order", len(got), len(values))
	}
	chunks := c.chunks[tp]
	if len(chunks) < 5 {
		t.Errorf("%d chunks for %d bytes with a 4 KiB partition limit, want many", len(chunks), len(values)*50)
	}
	next := int64(0)
	for i, ch := range chunks {
		if len(ch.Records) == 0 || ch.Records[0].Offset != next {
			t.Fatalf("chunk %d starts at %v, want the previous Next %d", i, offsetsOf(ch.Records)[:min(1, len(ch.Records))], next)
		}
		next = ch.Next
	}
}

// checkLargeBatches: batches larger than PartitionMaxBytes (and one larger than MaxBytes) on
// several partitions still come out: the broker returns the first batch of the first partition
// with data in full (KIP-74), and the Fetcher raises the fetch size of partitions that stay
// behind.
func checkLargeBatches(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("large", 3)
	want := map[kafka.TopicPartition]int64{}
	for p := range int32(3) {
		tp := tpOf(topic, p)
		for range 2 {
			vs := make([]string, 20)
			for i := range vs {
				vs[i] = fmt.Sprintf("%d-%d-%s", p, i, strings.Repeat("x", 1000))
			}
			e.produceValues(tp, vs...) // ~20 KiB
			want[tp] += 20
		}
	}
	f, notify := e.fetcher(func(c *Config) { c.PartitionMaxBytes, c.MaxBytes = 1<<10, 8<<10 })
	start := map[kafka.TopicPartition]int64{}
	for tp := range want {
		start[tp] = 0
	}
	f.Assign(start)
	c := newConsumer(t, f, notify)
	c.untilPosition(want)
	for tp, n := range want {
		if got := int64(len(c.recs[tp])); got != n {
			t.Errorf("%s: %d records, want %d", tp, got, n)
		}
	}
}

// checkLateTopic assigns partitions of a topic that does not exist yet beside one that
// does: the existing one flows, and the others once the topic is created.
func checkLateTopic(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	there := e.topic("there", 1)
	late := kafkatest.Name(t, "late")
	f, notify := e.fetcher(func(c *Config) { c.RetryBackoffMax = 200 * time.Millisecond })
	f.Assign(map[kafka.TopicPartition]int64{tpOf(there, 0): 0, tpOf(late, 0): 0, tpOf(late, 1): 0, tpOf(late, 2): kafka.OffsetUnknown})
	c := newConsumer(t, f, notify)
	e.produceValues(tpOf(there, 0), "x")
	c.untilPosition(map[kafka.TopicPartition]int64{tpOf(there, 0): 1})
	kafkatest.CreateTopicsWith(t, e.b.Addrs, e.sc, 3, nil, late)
	want := map[kafka.TopicPartition]int64{}
	for p := range int32(3) {
		e.produceValues(tpOf(late, p), fmt.Sprint("late", p))
		want[tpOf(late, p)] = 1
	}
	c.untilPosition(want)
	for tp := range want {
		if got := valuesOf(c.recs[tp]); !slices.Equal(got, []string{fmt.Sprint("late", tp.Partition)}) {
			t.Errorf("%s: %q", tp, got)
		}
	}
}

// checkReadCommitted reads a topic written by two transactional producers whose committed
// and aborted transactions interleave, plus plain records, under read_committed and
// read_uncommitted.
func checkReadCommitted(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("txn", 1)
	tp := tpOf(topic, 0)
	p1, p2 := txnProducer(t, b, kafkatest.Name(t, "p1")), txnProducer(t, b, kafkatest.Name(t, "p2"))
	plain := plainProducer(t, b)
	send := func(p sarama.SyncProducer, v string) {
		t.Helper()
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.StringEncoder("k"), Value: sarama.StringEncoder(v)}); err != nil {
			t.Fatalf("send %q: %v", v, err)
		}
	}
	begin := func(p sarama.SyncProducer) {
		t.Helper()
		if err := p.BeginTxn(); err != nil {
			t.Fatalf("begin: %v", err)
		}
	}
	end := func(p sarama.SyncProducer, commit bool) {
		t.Helper()
		var err error
		if commit {
			err = p.CommitTxn()
		} else {
			err = p.AbortTxn()
		}
		if err != nil {
			t.Fatalf("end transaction (commit %v): %v", commit, err)
		}
	}
	begin(p1)
	send(p1, "c1")
	begin(p2)
	send(p2, "x1")
	send(p1, "c2")
	send(plain, "plain1")
	send(p2, "x2")
	end(p1, true)
	send(p2, "x3")
	end(p2, false)
	begin(p2)
	send(p2, "c3")
	end(p2, true)
	begin(p1)
	send(p1, "x4")
	end(p1, false)
	send(plain, "plain2")
	begin(p1)
	send(p1, "c4")
	send(p1, "c5")
	end(p1, true) // the last offset is a commit marker

	// The coordinator writes the markers after EndTxn returns: wait for the last one (16
	// offsets: 11 records and 5 markers).
	var hw, lso int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		hw, lso = e.endOffset(tp, kafka.ReadUncommitted), e.endOffset(tp, kafka.ReadCommitted)
		if hw == 16 && lso == hw {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("high watermark %d, last stable offset %d; want both 16 once every marker is written", hw, lso)
		}
	}
	for _, iso := range []kafka.IsolationLevel{kafka.ReadCommitted, kafka.ReadUncommitted} {
		f, notify := e.fetcher(func(c *Config) { c.Isolation = iso })
		f.Assign(map[kafka.TopicPartition]int64{tp: kafka.OffsetUnknown})
		c := newConsumer(t, f, notify)
		c.untilPosition(map[kafka.TopicPartition]int64{tp: hw})
		want := []string{"c1", "c2", "plain1", "c3", "plain2", "c4", "c5"}
		if iso == kafka.ReadUncommitted {
			want = []string{"c1", "x1", "c2", "plain1", "x2", "x3", "c3", "x4", "plain2", "c4", "c5"}
		}
		if got := valuesOf(c.recs[tp]); !slices.Equal(got, want) {
			t.Errorf("isolation %d: %q, want %q", iso, got, want)
		}
		if pos, lag := f.Position(tp), f.Lag(tp); pos != hw || lag != 0 {
			t.Errorf("isolation %d: position %d lag %d at the end, want %d and 0", iso, pos, lag, hw)
		}
		f.Close()
	}
}

func txnProducer(t *testing.T, b kafkatest.Broker, id string) sarama.SyncProducer {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = id
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatalf("transactional producer %s: %v", id, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func plainProducer(t *testing.T, b kafkatest.Broker) sarama.SyncProducer {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// checkOutOfRange fetches from an offset DeleteRecords removed: Earliest resets to the new
// log start; None gives an error chunk naming the partition, and Seek restarts it.
func checkOutOfRange(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("range", 1)
	tp := tpOf(topic, 0)
	var values []string
	for i := range 10 {
		values = append(values, fmt.Sprint("v", i))
	}
	e.produceValues(tp, values[:5]...)
	e.produceValues(tp, values[5:]...)
	if err := e.admin.DeleteRecords(topic, map[int32]int64{0: 6}); err != nil {
		t.Fatalf("delete records: %v", err)
	}
	if start := e.listOffset(tp, kafka.ReadUncommitted, sarama.OffsetOldest); start != 6 {
		t.Fatalf("log start %d after deleting records before 6", start)
	}

	f, notify := e.fetcher(nil) // Earliest
	f.Assign(map[kafka.TopicPartition]int64{tp: 2})
	c := newConsumer(t, f, notify)
	c.untilPosition(map[kafka.TopicPartition]int64{tp: 10})
	if got := valuesOf(c.recs[tp]); !slices.Equal(got, values[6:]) {
		t.Errorf("earliest after out of range: %q, want %q", got, values[6:])
	}
	if st := f.Stats(); st.Resets != 1 {
		t.Errorf("resets %d, want 1", st.Resets)
	}

	f, notify = e.fetcher(func(c *Config) { c.Reset = None })
	f.Assign(map[kafka.TopicPartition]int64{tp: 2})
	c = newConsumer(t, f, notify)
	c.until("an error chunk", func() bool { return len(c.errs) > 0 })
	ch := c.errs[0]
	var pe *PartitionError
	if ch.TP != tp || !errors.Is(ch.Err, ErrOffsetOutOfRange) || !errors.As(ch.Err, &pe) || pe.TP != tp || pe.Offset != 2 {
		t.Fatalf("error chunk %+v (err %v), want ErrOffsetOutOfRange for %s at 2", ch, ch.Err, tp)
	}
	if !strings.Contains(ch.Err.Error(), tp.String()) || ch.Next != 2 || len(ch.Records) != 0 {
		t.Errorf("error chunk: %q next %d, %d records; want the partition named, next 2, no records", ch.Err, ch.Next, len(ch.Records))
	}
	if pos := f.Position(tp); pos != 2 {
		t.Errorf("position %d after the error chunk, want 2", pos)
	}
	f.Seek(tp, 7)
	c.untilPosition(map[kafka.TopicPartition]int64{tp: 10})
	if got := valuesOf(c.recs[tp]); !slices.Equal(got, values[7:]) {
		t.Errorf("after seek to 7: %q, want %q", got, values[7:])
	}
	if len(c.errs) != 1 {
		t.Errorf("%d error chunks, want 1", len(c.errs))
	}

	// No start offset with None: ErrNoOffset.
	f.Unassign(tp)
	f.Assign(map[kafka.TopicPartition]int64{tp: kafka.OffsetUnknown})
	c.until("a second error chunk", func() bool { return len(c.errs) > 1 })
	if err := c.errs[1].Err; !errors.Is(err, ErrNoOffset) {
		t.Errorf("error chunk %v, want ErrNoOffset", err)
	}
}

// checkUnassignSeek unassigns one of two partitions and seeks, also over a chunk not polled.
func checkUnassignSeek(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("seek", 2)
	tp0, tp1 := tpOf(topic, 0), tpOf(topic, 1)
	e.produceValues(tp0, "a0", "a1", "a2", "a3", "a4")
	e.produceValues(tp1, "b0", "b1")
	f, notify := e.fetcher(nil)
	f.Assign(map[kafka.TopicPartition]int64{tp0: 0, tp1: 0})
	c := newConsumer(t, f, notify)
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 5, tp1: 2})

	f.Unassign(tp1)
	if pos, lag := f.Position(tp1), f.Lag(tp1); pos != kafka.OffsetUnknown || lag != -1 {
		t.Errorf("unassigned %s: position %d lag %d, want -1 -1", tp1, pos, lag)
	}
	e.produceValues(tp1, "b2")
	e.produceValues(tp0, "a5")
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 6})
	if got := valuesOf(c.recs[tp1]); len(got) != 2 {
		t.Errorf("unassigned %s delivered %q", tp1, got)
	}

	// Seek back over polled records.
	f.Seek(tp0, 1)
	if pos := f.Position(tp0); pos != 1 {
		t.Errorf("position %d after seek to 1", pos)
	}
	c.recs[tp0], c.next[tp0] = nil, 1
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 6})
	if got := valuesOf(c.recs[tp0]); !slices.Equal(got, []string{"a1", "a2", "a3", "a4", "a5"}) {
		t.Errorf("after seek to 1: %q", got)
	}

	// Seek drops a chunk that is ready but not polled.
	drain(notify)
	f.Seek(tp0, 0)
	select {
	case <-notify:
	case <-time.After(30 * time.Second):
		t.Fatal("no chunk after seeking to 0")
	}
	f.Seek(tp0, 4)
	c.recs[tp0], c.next[tp0] = nil, 4
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 6})
	if got := valuesOf(c.recs[tp0]); !slices.Equal(got, []string{"a4", "a5"}) {
		t.Errorf("after seeking over a ready chunk: %q, want [a4 a5]", got)
	}

	// Assigning the unassigned partition again starts where told.
	f.Assign(map[kafka.TopicPartition]int64{tp1: 1})
	c.recs[tp1], c.next[tp1] = nil, 1
	c.untilPosition(map[kafka.TopicPartition]int64{tp1: 3})
	if got := valuesOf(c.recs[tp1]); !slices.Equal(got, []string{"b1", "b2"}) {
		t.Errorf("%s assigned again at 1: %q", tp1, got)
	}
}

func drain(c chan struct{}) {
	select {
	case <-c:
	default:
	}
}

// checkClose closes a Fetcher in the middle of long polls: it returns within a MaxWait or so,
// and leaves no goroutine behind.
func checkClose(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("close", 3)
	e.produceValues(tpOf(topic, 0), "a")
	cl := newCluster(t, b)
	if err := cl.RefreshMetadata(topic); err != nil { // the router's refresh may open a connection
		t.Fatal(err)
	}
	for p := range int32(3) {
		if _, _, err := cl.Leader(tpOf(topic, p)); err != nil { // opens the metadata connection
			t.Fatal(err)
		}
	}
	before := runtime.NumGoroutine()
	f, notify := e.fetcher(func(c *Config) { c.Cluster, c.MaxWait = cl, 500*time.Millisecond })
	f.Assign(map[kafka.TopicPartition]int64{tpOf(topic, 0): 0, tpOf(topic, 1): 0, tpOf(topic, 2): 0})
	c := newConsumer(t, f, notify)
	c.untilPosition(map[kafka.TopicPartition]int64{tpOf(topic, 0): 1})
	c.until("an idle request", func() bool { st := f.Stats(); return st.FullRequests+st.IncrementalRequests >= 2 })
	t0 := time.Now()
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if took := time.Since(t0); took > 3*time.Second {
		t.Errorf("Close took %v with MaxWait 500 ms", took)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before New\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	if got := f.Poll(); len(got) != 0 {
		t.Errorf("Poll after Close: %d chunks", len(got))
	}
}

// checkIncrementalIdle: after the first full request, an idle fetcher's requests are
// incremental (empty: nothing changed); pausing and resuming a partition that holds no chunk
// leaves the session as it is (a paused partition is fetched until it holds one chunk).
func checkIncrementalIdle(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	ta, tb := e.topic("idle-a", 2), e.topic("idle-b", 1)
	f, notify := e.fetcher(func(c *Config) { c.MaxWait = 20 * time.Millisecond })
	all := map[kafka.TopicPartition]int64{tpOf(ta, 0): 0, tpOf(ta, 1): 0, tpOf(tb, 0): 0}
	f.Assign(all)
	c := newConsumer(t, f, notify)
	requests := func() int64 { st := f.Stats(); return st.FullRequests + st.IncrementalRequests }
	c.until("20 requests", func() bool { return requests() >= 20 })
	st := f.Stats()
	t.Logf("idle: %+v", st)
	if st.FullRequests != 1 || st.IncrementalRequests < 19 || st.SessionErrors != 0 {
		t.Errorf("idle fetcher: %d full, %d incremental, %d session errors; want 1 full, the rest incremental", st.FullRequests, st.IncrementalRequests, st.SessionErrors)
	}
	f.Pause(tpOf(ta, 1))
	n := requests()
	c.until("more requests", func() bool { return requests() >= n+5 })
	f.Resume(tpOf(ta, 1))
	n = requests()
	c.until("more requests", func() bool { return requests() >= n+5 })
	if st2 := f.Stats(); st2.FullRequests != 1 {
		t.Errorf("after a pause and a resume of an idle partition: %d full requests, want 1 (the session goes on)", st2.FullRequests)
	}
	// Data still flows through the session.
	e.produceValues(tpOf(tb, 0), "x")
	e.produceValues(tpOf(ta, 1), "y")
	c.untilPosition(map[kafka.TopicPartition]int64{tpOf(tb, 0): 1, tpOf(ta, 1): 1})
}

// checkForgetHeld: a paused partition holding a chunk leaves the fetch session as a
// forgotten partition of an incremental request, and comes back into it when resumed: the
// session goes on throughout (one full request), and both partitions' records come out.
func checkForgetHeld(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("forget", 2)
	tp0, tp1 := tpOf(topic, 0), tpOf(topic, 1)
	f, notify := e.fetcher(func(c *Config) { c.MaxWait = 20 * time.Millisecond })
	f.Assign(map[kafka.TopicPartition]int64{tp0: 0, tp1: 0})
	c := newConsumer(t, f, notify)
	c.until("incremental requests", func() bool { return f.Stats().IncrementalRequests >= 2 })
	f.Pause(tp1)
	e.produceValues(tp1, "held")
	c.until("tp1's chunk held", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.parts[tp1].ready
	})
	e.produceValues(tp0, "a0")
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 1})
	e.produceValues(tp0, "a1")
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 2})
	f.Resume(tp1)
	c.untilPosition(map[kafka.TopicPartition]int64{tp1: 1})
	e.produceValues(tp1, "after")
	c.untilPosition(map[kafka.TopicPartition]int64{tp1: 2})
	if got := valuesOf(c.recs[tp0]); !slices.Equal(got, []string{"a0", "a1"}) {
		t.Errorf("%s: %q", tp0, got)
	}
	if got := valuesOf(c.recs[tp1]); !slices.Equal(got, []string{"held", "after"}) {
		t.Errorf("%s: %q", tp1, got)
	}
	if st := f.Stats(); st.FullRequests != 1 || st.SessionErrors != 0 {
		t.Errorf("stats %+v: want one full request and no session error (tp1 forgotten and added back incrementally)", st)
	}
}

// checkIncrementalBusy consumes while records arrive and logs how many requests were
// incremental; a consumer that keeps polling keeps the session incremental.
func checkIncrementalBusy(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("busy", 4)
	f, notify := e.fetcher(nil)
	start := map[kafka.TopicPartition]int64{}
	for p := range int32(4) {
		start[tpOf(topic, p)] = 0
	}
	f.Assign(start)
	c := newConsumer(t, f, notify)
	want := map[kafka.TopicPartition]int64{}
	for round := range 30 {
		for p := range int32(4) {
			tp := tpOf(topic, p)
			e.produceValues(tp, fmt.Sprint(round, "a"), fmt.Sprint(round, "b"))
			want[tp] += 2
			c.poll()
		}
	}
	c.untilPosition(want)
	st := f.Stats()
	total := st.FullRequests + st.IncrementalRequests
	t.Logf("busy: %+v: %.0f%% of %d requests incremental", st, 100*float64(st.IncrementalRequests)/float64(total), total)
	if st.IncrementalRequests*2 < total {
		t.Errorf("busy fetcher: %d of %d requests incremental, want most", st.IncrementalRequests, total)
	}
	for tp, n := range want {
		if got := len(c.recs[tp]); int64(got) != n {
			t.Errorf("%s: %d records, want %d", tp, got, n)
		}
	}
}

// checkBrokenConnection closes the Fetcher's connection under it: the next request fails, the
// connection is dialled again and the session starts over.
func checkBrokenConnection(t *testing.T, b kafkatest.Broker) {
	e := newEnv(t, b)
	topic := e.topic("broken", 1)
	tp := tpOf(topic, 0)
	f, notify := e.fetcher(nil)
	f.Assign(map[kafka.TopicPartition]int64{tp: 0})
	c := newConsumer(t, f, notify)
	e.produceValues(tp, "a")
	c.untilPosition(map[kafka.TopicPartition]int64{tp: 1})
	n, _, err := f.cfg.Cluster.Leader(tp)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		f.mu.Lock()
		conn := f.loops[n].raw // the Fetcher's own connection
		f.mu.Unlock()
		if conn == nil {
			t.Fatal("no fetch connection of the Fetcher's own")
		}
		conn.Close() // waits for the fetch in flight
		e.produceValues(tp, fmt.Sprint("b", i))
		c.untilPosition(map[kafka.TopicPartition]int64{tp: int64(i + 2)})
	}
	if got := valuesOf(c.recs[tp]); !slices.Equal(got, []string{"a", "b0", "b1", "b2"}) {
		t.Errorf("records %q", got)
	}
	if st := f.Stats(); st.RequestErrors < 1 || st.FullRequests < 2 {
		t.Errorf("stats %+v: want request errors and a new session after them", st)
	}
}

// TestEmbeddedSaramaFallback: with a proxy dialer in the client settings, which a
// streamsgroup.Conn cannot use, the loops fetch through sarama: records, headers and
// timestamps come out as on the loop's own connection, and a partition leaving the session
// (paused with a chunk held) restarts it with a full request instead of being forgotten.
func TestEmbeddedSaramaFallback(t *testing.T) {
	b := kafkatest.Embedded(t)
	sc := kafkatest.SaramaConfig()
	sc.Net.Proxy.Enable, sc.Net.Proxy.Dialer = true, &net.Dialer{}
	e := newEnvConfig(t, b, sc)
	topic := e.topic("fallback", 2)
	tp0, tp1 := tpOf(topic, 0), tpOf(topic, 1)
	want := []rec{{key: []byte("k"), value: []byte("v"), ts: 1_700_000_000_000, headers: []Header{{Key: "h", Value: []byte("x")}, {Key: "n"}}}}
	e.produceBatch(tp0, want)
	f, notify := e.fetcher(func(c *Config) { c.MaxWait = 20 * time.Millisecond })
	f.Assign(map[kafka.TopicPartition]int64{tp0: 0, tp1: 0})
	c := newConsumer(t, f, notify)
	c.untilPosition(map[kafka.TopicPartition]int64{tp0: 1})
	sameRecord(t, tp0, c.recs[tp0][0], want[0], 0)

	full := f.Stats().FullRequests
	f.Pause(tp1)
	e.produceValues(tp1, "held")
	c.until("a full request after tp1 left the session", func() bool { return f.Stats().FullRequests > full })
	f.Resume(tp1)
	c.untilPosition(map[kafka.TopicPartition]int64{tp1: 1})
	if got := valuesOf(c.recs[tp1]); !slices.Equal(got, []string{"held"}) {
		t.Errorf("%s: %q", tp1, got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.loops {
		if !l.noRaw || l.raw != nil {
			t.Errorf("loop of broker %d: noRaw %v, own connection %v; want sarama's Fetch", l.node.ID, l.noRaw, l.raw != nil)
		}
	}
}
