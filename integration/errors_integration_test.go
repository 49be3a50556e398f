package integration_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// doubleProcessor forwards (key, 2*value).
type doubleProcessor struct {
	ctx processor.ProcessorContext[string, int64]
}

func (p *doubleProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	return nil
}
func (p *doubleProcessor) Process(r processor.Record[string, int64]) error {
	return p.ctx.Forward(processor.NewRecord(r.Key, 2*r.Value, r.Timestamp))
}
func (p *doubleProcessor) Close() error { return nil }

func doubleTopology(t testing.TB, input, output string) *processor.Topology {
	topo := processor.NewTopology()
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())),
		topo.AddProcessor("Double", processor.ProcessorSupplierFunc[string, int64, string, int64](
			func() processor.Processor[string, int64, string, int64] { return &doubleProcessor{} }), "Source"),
		topo.AddSink("Sink", output, []string{"Double"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return topo
}

// producePoisoned writes n good records (key k<i>, 8-byte value i) to partition 0 with a
// 3-byte value (not a Long) at position poisonAt.
func producePoisoned(t testing.TB, b kafkatest.Broker, topic string, n, poisonAt int) {
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var msgs []*sarama.ProducerMessage
	for i := 0; i < n; i++ {
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(i))
		if i == poisonAt {
			v = []byte{1, 2, 3}
		}
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)),
			Value: sarama.ByteEncoder(v), Timestamp: time.UnixMilli(int64(1000 + i))})
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
}

func checkPoisonRecord(t *testing.T, b kafkatest.Broker, guarantee kstreams.ProcessingGuarantee) {
	input, output, dlq := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "dlq")
	createTopics(t, b, 1, input, output, dlq)
	const n, poison = 200, 77
	producePoisoned(t, b, input, n, poison)

	// Continue + dead-letter topic: every good record is processed, the poison one lands in
	// the dead-letter topic with KIP-1034 headers.
	app, err := kstreams.New(doubleTopology(t, input, output), kstreams.Config{
		ApplicationID: kafkatest.Name(t, "poison"), BootstrapServers: b.Addrs, CommitInterval: 100 * time.Millisecond,
		StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer, DeadLetterQueueTopic: dlq,
		ProcessingGuarantee: guarantee,
		DeserializationHandler: func(topic string, partition int32, offset int64, err error) kstreams.HandlerResponse {
			return kstreams.Continue
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	isolation := sarama.ReadUncommitted
	if guarantee == kstreams.ExactlyOnceV2 {
		isolation = sarama.ReadCommitted
	}
	out := readOutput(t, b, output, isolation)
	want := map[string]int64{}
	for i := 0; i < n; i++ {
		if i != poison {
			want[fmt.Sprintf("k%d", i)] = int64(2 * i)
		}
	}
	out.waitFinal(t, want, time.Minute, app.Err)
	dl := readRaw(t, b, dlq, 1, time.Minute)
	m := dl[0]
	if string(m.Key) != fmt.Sprintf("k%d", poison) || string(m.Value) != "\x01\x02\x03" {
		t.Fatalf("dead letter %q=%q", m.Key, m.Value)
	}
	hdr := map[string]string{}
	for _, h := range m.Headers {
		hdr[string(h.Key)] = string(h.Value)
	}
	if hdr["__streams.errors.topic"] != input || hdr["__streams.errors.partition"] != "0" ||
		hdr["__streams.errors.offset"] != fmt.Sprint(poison) || hdr["__streams.errors.message"] == "" {
		t.Fatalf("dead-letter headers %v", hdr)
	}
	// The error is named by its own type, not by the fmt wrapper around it, and its chain
	// stands in for Java's stack trace.
	if got := hdr["__streams.errors.exception"]; got != "*serde.Error" {
		t.Errorf("exception header %q, want *serde.Error", got)
	}
	const msg = `serde Long: deserialize 3 bytes from topic "` + "%s" + `": corrupt data: wrong length, want 8 bytes`
	wantChain := strings.Join([]string{"*fmt.wrapError: value: " + msg, "*serde.Error: " + msg,
		"*fmt.wrapError: corrupt data: wrong length, want 8 bytes", "*errors.errorString: corrupt data"}, "\n")
	if got := hdr["__streams.errors.stacktrace"]; got != strings.ReplaceAll(wantChain, "%s", input) {
		t.Errorf("stacktrace header\n%s\nwant\n%s", got, strings.ReplaceAll(wantChain, "%s", input))
	}
	closeApp(t, app)

	// Default handler (fail): the instance moves to ERROR with the deserialization error.
	app, err = kstreams.New(doubleTopology(t, input, output+"-x"), kstreams.Config{
		ApplicationID: kafkatest.Name(t, "poison-fail"), BootstrapServers: b.Addrs, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	createTopics(t, b, 1, output+"-x")
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-app.Done():
	case <-time.After(time.Minute):
		t.Fatal("instance did not stop on the poison record")
	}
	var de *task.DeserializationError
	if app.State() != kstreams.StateError || !errors.As(app.Err(), &de) || de.Offset != poison {
		t.Fatalf("state %s, err %v", app.State(), app.Err())
	}
}

// readRaw reads n records of a topic (all partitions) or fails at the deadline.
func readRaw(t testing.TB, b kafkatest.Broker, topic string, n int, timeout time.Duration) []*sarama.ConsumerMessage {
	c, err := sarama.NewConsumer(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ps, err := c.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *sarama.ConsumerMessage, 100)
	for _, p := range ps {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		go func() {
			for m := range pc.Messages() {
				ch <- m
			}
		}()
	}
	var out []*sarama.ConsumerMessage
	deadline := time.After(timeout)
	for len(out) < n {
		select {
		case m := <-ch:
			out = append(out, m)
		case <-deadline:
			t.Fatalf("read %d of %d records from %s", len(out), n, topic)
		}
	}
	return out
}

func TestIntegrationPoisonRecord(t *testing.T) {
	checkPoisonRecord(t, kafkatest.Real(t), kstreams.AtLeastOnce)
}
func TestEmbeddedPoisonRecord(t *testing.T) {
	t.Parallel()
	checkPoisonRecord(t, kafkatest.Embedded(t), kstreams.AtLeastOnce)
}

// Under exactly-once the dead-letter record is written by the task's transactional producer,
// with the output and the offsets that skip the poison record.
func TestIntegrationPoisonRecordExactlyOnce(t *testing.T) {
	checkPoisonRecord(t, kafkatest.Real(t), kstreams.ExactlyOnceV2)
}

// failOnceProcessor doubles values but fails the first time it sees failAt (a global flag),
// and always fails on dropAt.
type failOnceProcessor struct {
	ctx    processor.ProcessorContext[string, int64]
	failed *atomic.Bool
}

func (p *failOnceProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	return nil
}
func (p *failOnceProcessor) Process(r processor.Record[string, int64]) error {
	if r.Value == 50 && p.failed.CompareAndSwap(false, true) {
		return errors.New("transient failure at 50")
	}
	if r.Value == 120 {
		panic("poison value 120")
	}
	return p.ctx.Forward(processor.NewRecord(r.Key, 2*r.Value, r.Timestamp))
}
func (p *failOnceProcessor) Close() error { return nil }

// checkHandlers: the uncaught-error handler replaces the thread after a processing error (the
// record is reprocessed and succeeds), and the processing handler drops a record whose
// processor panics; everything else is processed exactly once (exactly-once).
func checkHandlers(t *testing.T, b kafkatest.Broker) {
	input, output := kafkatest.Name(t, "in"), kafkatest.Name(t, "out")
	createTopics(t, b, 1, input, output)
	const n = 200
	producePoisoned(t, b, input, n, -1)
	var failed atomic.Bool
	topo := processor.NewTopology()
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())),
		topo.AddProcessor("P", processor.ProcessorSupplierFunc[string, int64, string, int64](
			func() processor.Processor[string, int64, string, int64] { return &failOnceProcessor{failed: &failed} }), "Source"),
		topo.AddSink("Sink", output, []string{"P"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var dropped atomic.Int64
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: kafkatest.Name(t, "handlers"), BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
		ProcessingHandler: func(node string, err error) kstreams.HandlerResponse {
			if strings.Contains(err.Error(), "poison") {
				dropped.Add(1)
				return kstreams.Continue
			}
			return kstreams.Fail
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var replaced atomic.Int64
	app.SetUncaughtExceptionHandler(func(err error) kstreams.ThreadResponse {
		replaced.Add(1)
		return kstreams.ReplaceThread
	})
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := readOutput(t, b, output, sarama.ReadCommitted)
	want := map[string]int64{}
	for i := 0; i < n; i++ {
		if i != 120 {
			want[fmt.Sprintf("k%d", i)] = int64(2 * i)
		}
	}
	out.waitFinal(t, want, time.Minute, app.Err)
	out.mu.Lock()
	for k, s := range out.seqs {
		if len(s) != 1 {
			t.Errorf("%s: %d outputs %v, want exactly one", k, len(s), s)
		}
	}
	if _, ok := out.seqs["k120"]; ok {
		t.Errorf("the dropped record was output")
	}
	out.mu.Unlock()
	if replaced.Load() != 1 || dropped.Load() < 1 || app.State() != kstreams.StateRunning {
		t.Fatalf("replaced %d, dropped %d, state %s", replaced.Load(), dropped.Load(), app.State())
	}
	closeApp(t, app)
}

func TestIntegrationExceptionHandlers(t *testing.T) { checkHandlers(t, kafkatest.Real(t)) }
func TestEmbeddedExceptionHandlers(t *testing.T) {
	t.Parallel()
	checkHandlers(t, kafkatest.Embedded(t))
}

// A record that fails to deserialize as it becomes the head of an empty partition queue (the
// first record of a chunk fetched into an empty queue: a caught-up input, or offset 0) stops
// the instance with the DeserializationError under the default (fail) handler, as one in the
// middle of a chunk does; it is not skipped.
func checkPoisonFirstRecord(t *testing.T, b kafkatest.Broker) {
	input, output := kafkatest.Name(t, "in"), kafkatest.Name(t, "out")
	createTopics(t, b, 1, input, output)
	const n = 50
	producePoisoned(t, b, input, n, 0) // the poison record is at offset 0
	app, err := kstreams.New(doubleTopology(t, input, output), kstreams.Config{
		ApplicationID: kafkatest.Name(t, "poison-first"), BootstrapServers: b.Addrs, StateDir: t.TempDir(),
		CommitInterval: 100 * time.Millisecond, Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer closeApp(t, app)
	select {
	case <-app.Done():
	case <-time.After(30 * time.Second):
		out := readRaw(t, b, output, 1, 10*time.Second)
		t.Fatalf("instance did not stop on the poison record at offset 0 (default handler: fail); state %s; it produced output, first %q",
			app.State(), out[0].Key)
	}
	var de *task.DeserializationError
	if app.State() != kstreams.StateError || !errors.As(app.Err(), &de) || de.Offset != 0 {
		t.Fatalf("state %s, err %v", app.State(), app.Err())
	}
}

func TestEmbeddedPoisonFirstRecord(t *testing.T) {
	t.Parallel()
	checkPoisonFirstRecord(t, kafkatest.Embedded(t))
}
func TestIntegrationPoisonFirstRecord(t *testing.T) {
	checkPoisonFirstRecord(t, kafkatest.Real(t))
}
