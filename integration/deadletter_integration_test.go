package integration_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// dlqTestError is the error of the test's processor and serializer, so that the dead-letter
// exception header names a type of the test's own.
type dlqTestError struct{ what string }

func (e *dlqTestError) Error() string { return e.what }

// dlqProcessor doubles values to "Sink"; it fails on procPoison (the handler continues), on
// crashAt once (the handler fails: the thread is replaced and the open transaction aborted),
// and also sends bigAt to "BigSink".
type dlqProcessor struct {
	ctx                      processor.ProcessorContext[string, int64]
	procPoison, crashAt, big int64
	crashed                  *atomic.Bool
	// beforeCrash runs before the crash (nil: nothing).
	beforeCrash func()
}

func (p *dlqProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	return nil
}

func (p *dlqProcessor) Process(r processor.Record[string, int64]) error {
	switch {
	case r.Value == p.procPoison:
		return &dlqTestError{"poison in processing"}
	case r.Value == p.crashAt && p.crashed.CompareAndSwap(false, true):
		if p.beforeCrash != nil {
			p.beforeCrash()
		}
		return errors.New("transient crash")
	}
	if r.Value == p.big {
		if err := p.ctx.ForwardTo(r, "BigSink"); err != nil {
			return err
		}
	}
	return p.ctx.ForwardTo(processor.NewRecord(r.Key, 2*r.Value, r.Timestamp), "Sink")
}

func (p *dlqProcessor) Close() error { return nil }

// checkDeadLetters: a processing failure, a serialization failure and (at least once) a
// record the broker refuses, each continued past by its handler, land in the dead-letter
// topic as the input record (key, value, timestamp) with the headers Java 4.x writes
// (KIP-1034); under exactly-once a transaction holding a dead letter is aborted (the thread
// fails and is replaced) and the reprocessing writes it again: a read_committed reader sees
// each dead letter exactly once.
func checkDeadLetters(t *testing.T, b kafkatest.Broker, guarantee kstreams.ProcessingGuarantee) {
	eos := guarantee == kstreams.ExactlyOnceV2
	input, output, big, dlq := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "big"), kafkatest.Name(t, "dlq")
	createTopics(t, b, 1, input, output, dlq)
	kafkatest.CreateTopics(t, b, 1, map[string]string{"max.message.bytes": "1000"}, big)
	const n, procPoison, serPoison, crashAt = 200, 40, 90, 150
	bigAt := int64(60) // the broker refuses its 5000-byte output record: only at least once
	if eos {
		bigAt = -1 // (under exactly-once a failed send aborts the transaction, every time)
	}
	producePoisoned(t, b, input, n, -1)

	var crashed atomic.Bool
	var beforeCrash func()
	if !eos {
		crashed.Store(true) // no crash: at least once would reprocess, legitimately, twice
	} else {
		// The crash waits until the open transaction's dead letters are on the broker, so that
		// the abort has them to abort (a read_uncommitted reader sees them).
		seen := countRecords(t, b, dlq)
		beforeCrash = func() {
			for deadline := time.Now().Add(20 * time.Second); seen.Load() < 2 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	topo := processor.NewTopology()
	failing := serde.SerializerFunc[int64](func(topic string, h *serde.Headers, v int64) ([]byte, error) {
		if v == 2*serPoison {
			return nil, &dlqTestError{"poison in serialization"}
		}
		return serde.Long().Serialize(topic, h, v)
	})
	huge := serde.SerializerFunc[int64](func(string, *serde.Headers, int64) ([]byte, error) { return make([]byte, 5000), nil })
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())),
		topo.AddProcessor("P", processor.ProcessorSupplierFunc[string, int64, string, int64](
			func() processor.Processor[string, int64, string, int64] {
				return &dlqProcessor{procPoison: procPoison, crashAt: crashAt, big: bigAt, crashed: &crashed, beforeCrash: beforeCrash}
			}), "Source"),
		topo.AddSink("Sink", output, []string{"P"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(failing)),
		topo.AddSink("BigSink", big, []string{"P"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(huge)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var processingCalls, productionCalls atomic.Int64
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: kafkatest.Name(t, "dlq"), BootstrapServers: b.Addrs, ProcessingGuarantee: guarantee,
		// One transaction for the whole input (processed in far less than 5 s): the crash aborts
		// the one holding the dead letters.
		CommitInterval: 5 * time.Second,
		StateDir:       t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer, DeadLetterQueueTopic: dlq,
		ProcessingHandler: func(node string, err error) kstreams.HandlerResponse {
			processingCalls.Add(1)
			if strings.Contains(err.Error(), "poison") {
				return kstreams.Continue
			}
			return kstreams.Fail
		},
		ProductionHandler: func(topic string, err error) kstreams.HandlerResponse {
			productionCalls.Add(1)
			return kstreams.Continue
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
	iso := sarama.ReadUncommitted
	if eos {
		iso = sarama.ReadCommitted
	}
	out := readOutput(t, b, output, iso)
	want := map[string]int64{}
	for i := 0; i < n; i++ {
		if i != procPoison && i != serPoison {
			want[fmt.Sprintf("k%d", i)] = int64(2 * i)
		}
	}
	out.waitFinal(t, want, time.Minute, app.Err)
	closeApp(t, app)
	out.stop()
	out.mu.Lock()
	for k, s := range out.seqs {
		if len(s) != 1 {
			t.Errorf("output %s: %v, want one record", k, s)
		}
	}
	out.mu.Unlock()

	// Everything the application wrote to the dead-letter topic is settled (closed: its last
	// transaction committed); a marker written now ends what a reader has to read.
	dls := readUntilMarker(t, b, dlq, iso)
	// (At least once, the refused record's dead letter is written when the failure is seen, at
	// the flush of a commit: after the others.)
	slices.SortFunc(dls, func(a, b *sarama.ConsumerMessage) int {
		return strings.Compare(fmt.Sprintf("%09s", header(a, "__streams.errors.offset")), fmt.Sprintf("%09s", header(b, "__streams.errors.offset")))
	})
	wantDL := []int64{procPoison, serPoison}
	if !eos {
		wantDL = []int64{procPoison, bigAt, serPoison}
	}
	if len(dls) != len(wantDL) {
		for _, m := range dls {
			t.Logf("dead letter %q offset header %q", m.Key, header(m, "__streams.errors.offset"))
		}
		t.Fatalf("%d dead letters, want %d (inputs %v)", len(dls), len(wantDL), wantDL)
	}
	for i, m := range dls {
		at := wantDL[i]
		if string(m.Key) != fmt.Sprintf("k%d", at) || len(m.Value) != 8 || int64(binary.BigEndian.Uint64(m.Value)) != at ||
			m.Timestamp.UnixMilli() != 1000+at {
			t.Errorf("dead letter %d: %q=%x at %d, want the input record k%d=%d at %d", i, m.Key, m.Value, m.Timestamp.UnixMilli(), at, at, 1000+at)
		}
		if header(m, "__streams.errors.topic") != input || header(m, "__streams.errors.partition") != "0" ||
			header(m, "__streams.errors.offset") != fmt.Sprint(at) {
			t.Errorf("dead letter of %d: source headers %s", at, headers(m))
		}
		wantExc, wantMsg := "*integration_test.dlqTestError", "poison in processing"
		switch at {
		case serPoison:
			wantMsg = "sink Sink: serialize value for topic " + output + ": poison in serialization"
		case bigAt:
			wantExc, wantMsg = "sarama.KError", "produce to "+big+"-0: kafka server: Message was too large, server rejected it to avoid allocation error"
		}
		if header(m, "__streams.errors.exception") != wantExc || header(m, "__streams.errors.message") != wantMsg ||
			!strings.Contains(header(m, "__streams.errors.stacktrace"), wantExc+": ") {
			t.Errorf("dead letter of %d: error headers %s, want exception %q message %q", at, headers(m), wantExc, wantMsg)
		}
	}
	if eos {
		if replaced.Load() != 1 {
			t.Errorf("%d threads replaced, want 1 (the crash)", replaced.Load())
		}
		// The aborted transaction held the first copies: a read_uncommitted reader sees them.
		if all := readUntilMarker(t, b, dlq, sarama.ReadUncommitted); len(all) < 2*len(wantDL) {
			t.Errorf("read_uncommitted saw %d dead letters, want the aborted copies too (>= %d)", len(all), 2*len(wantDL))
		}
	}
	if processingCalls.Load() < 1 || productionCalls.Load() < 1 {
		t.Errorf("handlers called: processing %d, production %d", processingCalls.Load(), productionCalls.Load())
	}
}

func header(m *sarama.ConsumerMessage, key string) string {
	for _, h := range m.Headers {
		if string(h.Key) == key {
			return string(h.Value)
		}
	}
	return "<absent>"
}

func headers(m *sarama.ConsumerMessage) string {
	var b strings.Builder
	for _, h := range m.Headers {
		if !strings.HasSuffix(string(h.Key), "stacktrace") {
			fmt.Fprintf(&b, "%s=%q ", h.Key, h.Value)
		}
	}
	return b.String()
}

// readUntilMarker writes a marker record to partition 0 of topic and returns the records
// before it, read with isolation iso.
func readUntilMarker(t *testing.T, b kafkatest.Broker, topic string, iso sarama.IsolationLevel) []*sarama.ConsumerMessage {
	t.Helper()
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("marker-%d", time.Now().UnixNano())
	_, _, err = p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.StringEncoder(marker)})
	p.Close()
	if err != nil {
		t.Fatal(err)
	}
	cfg = kafkatest.SaramaConfig()
	cfg.Consumer.IsolationLevel = iso
	c, err := sarama.NewConsumer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var out []*sarama.ConsumerMessage
	deadline := time.After(time.Minute)
	for {
		select {
		case m := <-pc.Messages():
			if string(m.Key) == marker {
				return out
			}
			if !strings.HasPrefix(string(m.Key), "marker-") {
				out = append(out, m)
			}
		case <-deadline:
			t.Fatalf("no marker in %s after a minute (%d records read)", topic, len(out))
		}
	}
}

// countRecords counts the records of partition 0 of topic (read_uncommitted) as they arrive,
// until the test ends.
func countRecords(t *testing.T, b kafkatest.Broker, topic string) *atomic.Int64 {
	c, err := sarama.NewConsumer(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range pc.Messages() {
			n.Add(1)
		}
	}()
	t.Cleanup(func() { pc.AsyncClose(); <-done; c.Close() })
	return &n
}

func TestIntegrationDeadLettersAtLeastOnce(t *testing.T) {
	checkDeadLetters(t, kafkatest.Real(t), kstreams.AtLeastOnce)
}

func TestIntegrationDeadLettersExactlyOnce(t *testing.T) {
	checkDeadLetters(t, kafkatest.Real(t), kstreams.ExactlyOnceV2)
}
