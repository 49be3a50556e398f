package integration_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/testhooks"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// slowProcessor stands for a call to a slow service: each record takes delay, except the
// records of hold's keys, on which it stops until the test releases it (after telling the test,
// with the record's value already in the store). It writes (key, 3*value) to the store "Slow"
// and forwards it.
type slowProcessor struct {
	ctx   processor.ProcessorContext[string, int64]
	kv    store.KeyValueStore[string, int64]
	delay time.Duration
	hold  map[string]chan struct{} // key -> release
	at    chan<- string            // the test learns that the processor holds a key
}

func (p *slowProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	var err error
	p.kv, err = processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "Slow")
	return err
}

func (p *slowProcessor) Process(r processor.Record[string, int64]) error {
	v := 3 * r.Value
	if err := p.kv.Put(r.Key, v); err != nil {
		return err
	}
	if release, ok := p.hold[r.Key]; ok {
		p.at <- r.Key
		<-release
	} else {
		time.Sleep(p.delay) // the slow service
	}
	return p.ctx.Forward(processor.NewRecord(r.Key, v, r.Timestamp))
}

func (p *slowProcessor) Close() error { return nil }

// produceLongs writes n records (key k<i> with two digits, 8-byte value i) to partition 0.
func produceLongs(t testing.TB, b kafkatest.Broker, topic string, n int) {
	t.Helper()
	produceLongsTo(t, b, topic, 0, "k%02d", n)
}

// produceLongsTo writes n records (key fmt.Sprintf(keyFormat, i), 8-byte value i, timestamp
// 1 000 000 + i ms) to partition part of topic and returns their keys.
func produceLongsTo(t testing.TB, b kafkatest.Broker, topic string, part int32, keyFormat string, n int) []string {
	t.Helper()
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var msgs []*sarama.ProducerMessage
	var keys []string
	for i := range n {
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(i))
		k := fmt.Sprintf(keyFormat, i)
		keys = append(keys, k)
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Partition: part, Key: sarama.StringEncoder(k),
			Value: sarama.ByteEncoder(v), Timestamp: time.UnixMilli(int64(1_000_000 + i))})
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestIntegrationSlowProcessorExactlyOnce: a processor taking 200 ms per record, 60 records on
// one partition (12 s of processing), max.poll.interval.ms 10 s, exactly_once_v2. A stream
// thread that processed its tasks in passes of up to 100 records per task did not poll for the
// whole 12 s pass, was expelled, aborted and started over, for ever. Now: the input is
// committed (offset 60), every record's output is in the output exactly once (read
// read_committed, compared with 3*i computed here), and the member was never expelled
// (kstreams_poll_timeouts_total). An interactive query issued while the processor is held on
// record k10 answers while the processor is held on the next record, k11: it waited for one
// record, not for a pass.
func TestIntegrationSlowProcessorExactlyOnce(t *testing.T) {
	b := kafkatest.Real(t)
	input, output := kafkatest.Name(t, "in"), kafkatest.Name(t, "out")
	createTopics(t, b, 1, input, output)
	const n = 60
	produceLongs(t, b, input, n)

	at := make(chan string, 2)
	hold := map[string]chan struct{}{"k10": make(chan struct{}), "k11": make(chan struct{})}
	topo := processor.NewTopology()
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())),
		topo.AddProcessor("Slow", processor.ProcessorSupplierFunc[string, int64, string, int64](
			func() processor.Processor[string, int64, string, int64] {
				return &slowProcessor{delay: 200 * time.Millisecond, hold: hold, at: at}
			}), "Source"),
		topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Slow"), serde.String(), serde.Long()), "Slow"),
		topo.AddSink("Sink", output, []string{"Slow"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	appID := kafkatest.Name(t, "slow")
	reg := prometheus.NewRegistry()
	consumer := fastConsumer
	consumer.MaxPollInterval = 10 * time.Second
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		StateDir: t.TempDir(), Sarama: fastSarama, Consumer: consumer, Registry: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	out := readOutput(t, b, output, sarama.ReadCommitted)

	// The interactive query, issued while the processor is held on k10.
	waitKey := func(key string) {
		t.Helper()
		select {
		case got := <-at:
			if got != key {
				t.Fatalf("processor held on %s, want %s", got, key)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("processor never reached %s (app error: %v)", key, app.Err())
		}
	}
	waitKey("k10")
	kv, err := kstreams.KeyValueStore[string, int64](app, "Slow")
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		v   int64
		ok  bool
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		v, ok, err := kv.Get("k10")
		answered <- answer{v, ok, err}
	}()
	// The query waits for the store lock, held by the thread processing k10.
	for deadline := time.Now().Add(time.Minute); testhooks.StoreLockWaiters(app) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the interactive query never waited for the store lock")
		}
		time.Sleep(5 * time.Millisecond) // polling interval, bounded by the deadline
	}
	close(hold["k10"])
	waitKey("k11")
	// The processor is held on k11 until the query answered: a query waiting for the pass
	// would never answer.
	select {
	case a := <-answered:
		if a.err != nil || !a.ok || a.v != 30 {
			t.Fatalf("query of k10 while the processor is held on k11: %d, %v, %v; want 30", a.v, a.ok, a.err)
		}
	case <-time.After(time.Minute):
		close(hold["k11"])
		t.Fatal("the interactive query did not answer while the processor was held on the next record")
	}
	close(hold["k11"])

	want := map[string]int64{}
	for i := range n {
		want[fmt.Sprintf("k%02d", i)] = int64(3 * i)
	}
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	waitCommitted(t, b, appID, input, n, time.Minute)
	out.mu.Lock()
	for k, v := range want {
		if s := out.seqs[k]; len(s) != 1 || s[0] != v {
			t.Errorf("output of %s: %v, want exactly [%d]", k, s, v)
		}
	}
	if len(out.seqs) != n {
		t.Errorf("%d keys in the output, want %d", len(out.seqs), n)
	}
	out.mu.Unlock()
	if got := counterSum(t, reg, "kstreams_poll_timeouts_total"); got != 0 {
		t.Errorf("the member was expelled %v times (max.poll.interval.ms)", got)
	}
	closeApp(t, app)
}

// waitCommitted polls until the group's committed offset of partition 0 of topic is want, or
// fails at the deadline.
func waitCommitted(t testing.TB, b kafkatest.Broker, group, topic string, want int64, timeout time.Duration) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{topic: {0}})
		got := int64(-2)
		if err == nil {
			if blk := resp.GetBlock(topic, 0); blk != nil {
				got = blk.Offset
			}
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed offset of %s-0: %d (%v), want %d", topic, got, err, want)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// counterSum sums the samples of the counter name in reg.
func counterSum(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// countingHandler counts the log records whose message starts with prefix.
type countingHandler struct {
	slog.Handler
	prefix string
	n      *atomic.Int64
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, h.prefix) {
		h.n.Add(1)
	}
	return h.Handler.Handle(ctx, r)
}
func (h countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return countingHandler{h.Handler.WithAttrs(as), h.prefix, h.n}
}
func (h countingHandler) WithGroup(g string) slog.Handler {
	return countingHandler{h.Handler.WithGroup(g), h.prefix, h.n}
}

// TestIntegrationMissingOutputTopicTaskTimeout: the sink's topic does not exist. The thread
// retries (closing its tasks without commit and rejoining) until task.timeout.ms (2 s here),
// then fails through the uncaught-exception handler, once, with a *TaskTimeoutError naming the
// topic and the task; the instance ends in Error with that error.
func TestIntegrationMissingOutputTopicTaskTimeout(t *testing.T) {
	b := kafkatest.Real(t)
	for _, guarantee := range []kstreams.ProcessingGuarantee{kstreams.AtLeastOnce, kstreams.ExactlyOnceV2} {
		t.Run(string(guarantee), func(t *testing.T) {
			input, missing := kafkatest.Name(t, "in"), kafkatest.Name(t, "missing")
			createTopics(t, b, 1, input)
			produceLongs(t, b, input, 5)
			retries := &atomic.Int64{}
			logger := slog.New(countingHandler{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}),
				"the tasks cannot make progress", retries})
			const timeout = 2 * time.Second
			app, err := kstreams.New(doubleTopology(t, input, missing), kstreams.Config{
				ApplicationID: kafkatest.Name(t, "tto"), BootstrapServers: b.Addrs, ProcessingGuarantee: guarantee,
				StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer, TaskTimeout: new(timeout), Logger: logger,
			})
			if err != nil {
				t.Fatal(err)
			}
			err = failsOnce(t, app)
			var te *kstreams.TaskTimeoutError
			if !errors.As(err, &te) || !errors.Is(err, kstreams.ErrTaskTimeout) || !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
				t.Fatalf("handled error %v (%T), want a *TaskTimeoutError wrapping UNKNOWN_TOPIC_OR_PARTITION", err, err)
			}
			if te.Topic != missing || !te.TaskKnown || te.Task != (processor.TaskID{Subtopology: 0, Partition: 0}) ||
				te.Timeout != timeout || te.Elapsed < timeout || !strings.Contains(err.Error(), missing) {
				t.Fatalf("task timeout error %+v: %v", te, err)
			}
			if app.State() != kstreams.StateError || !errors.Is(app.Err(), kstreams.ErrTaskTimeout) {
				t.Fatalf("state %s, Err %v", app.State(), app.Err())
			}
			if retries.Load() < 1 {
				t.Fatal("the failure was not retried before the timeout")
			}
		})
	}
}

// failsOnce starts app with an uncaught-exception handler that shuts the instance down, waits
// (at most 2 minutes) until the instance stopped, and returns the error the handler was given,
// failing the test unless it was called exactly once.
func failsOnce(t *testing.T, app *kstreams.KafkaStreams) error {
	t.Helper()
	handled := make(chan error, 10)
	app.SetUncaughtExceptionHandler(func(err error) kstreams.ThreadResponse {
		handled <- err
		return kstreams.ShutdownClient
	})
	startApp(t, app)
	select {
	case <-app.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("the instance did not stop; state %s", app.State())
	}
	if len(handled) != 1 {
		t.Fatalf("the uncaught-exception handler was called %d times, want once", len(handled))
	}
	return <-handled
}

// countingSlowProcessor forwards (key, 3*value) after delay, counting the records, and tells
// the test (once) when it begins record signalAt.
type countingSlowProcessor struct {
	ctx      processor.ProcessorContext[string, int64]
	delay    time.Duration
	n        *atomic.Int64
	signalAt string
	at       chan<- string
}

func (p *countingSlowProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	return nil
}

func (p *countingSlowProcessor) Process(r processor.Record[string, int64]) error {
	if r.Key == p.signalAt {
		p.at <- r.Key
	}
	time.Sleep(p.delay) // the slow service
	p.n.Add(1)
	return p.ctx.Forward(processor.NewRecord(r.Key, 3*r.Value, r.Timestamp))
}

func (p *countingSlowProcessor) Close() error { return nil }

// TestIntegrationCloseMidPass: Close during a pass of slow records (200 ms each, 100 records,
// no commit due) returns after the record being processed, not after the pass: it returns with
// records left, and its final commit covers exactly the records processed (at-least-once: the
// committed offset equals the processor's count, and each of them is in the output).
func TestIntegrationCloseMidPass(t *testing.T) {
	b := kafkatest.Real(t)
	input, output := kafkatest.Name(t, "in"), kafkatest.Name(t, "out")
	createTopics(t, b, 1, input, output)
	const total = 100
	produceLongs(t, b, input, total)
	var processed atomic.Int64
	at := make(chan string, 1)
	topo := processor.NewTopology()
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())),
		topo.AddProcessor("Slow", processor.ProcessorSupplierFunc[string, int64, string, int64](
			func() processor.Processor[string, int64, string, int64] {
				return &countingSlowProcessor{delay: 200 * time.Millisecond, n: &processed, signalAt: "k05", at: at}
			}), "Source"),
		topo.AddSink("Sink", output, []string{"Slow"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	appID := kafkatest.Name(t, "closemid")
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: time.Hour,
		StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	startApp(t, app)
	select {
	case <-at:
	case <-time.After(2 * time.Minute):
		t.Fatalf("processor never reached k05 (app error: %v)", app.Err())
	}
	closeApp(t, app)
	n := processed.Load()
	if n < 6 || n >= total {
		t.Fatalf("Close returned after %d of %d records; want it to stop the pass after the record in progress", n, total)
	}
	waitCommitted(t, b, appID, input, n, time.Minute)
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	want := map[string]int64{}
	for i := range int(n) {
		want[fmt.Sprintf("k%02d", i)] = int64(3 * i)
	}
	out.waitFinal(t, want, time.Minute, nil)
}

// TestIntegrationExpelledThreadWarns: a record that takes longer than max.poll.interval.ms (2 s
// here) gets the member expelled whatever the pass size. The thread says so: a WARN naming
// max.poll.interval.ms, kstreams_poll_timeouts_total counts it, and the instance goes through
// Rebalancing; then it rejoins and processes everything (at-least-once: again from the last
// commit).
func TestIntegrationExpelledThreadWarns(t *testing.T) {
	b := kafkatest.Real(t)
	input, output := kafkatest.Name(t, "in"), kafkatest.Name(t, "out")
	createTopics(t, b, 1, input, output)
	const n = 5
	produceLongs(t, b, input, n)
	at := make(chan string, 1)
	hold := map[string]chan struct{}{"k02": make(chan struct{})}
	topo := processor.NewTopology()
	for _, err := range []error{
		topo.AddSource("Source", []string{input}, processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.Long())),
		topo.AddProcessor("Slow", processor.ProcessorSupplierFunc[string, int64, string, int64](
			func() processor.Processor[string, int64, string, int64] {
				return &slowProcessor{hold: hold, at: at}
			}), "Source"),
		topo.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Slow"), serde.String(), serde.Long()), "Slow"),
		topo.AddSink("Sink", output, []string{"Slow"}, processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	appID := kafkatest.Name(t, "expelled")
	reg := prometheus.NewRegistry()
	warned := &atomic.Int64{}
	logger := slog.New(countingHandler{slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}),
		"stream thread expelled from the group", warned})
	consumer := fastConsumer
	consumer.MaxPollInterval = 2 * time.Second
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 100 * time.Millisecond,
		StateDir: t.TempDir(), Sarama: fastSarama, Consumer: consumer, Registry: reg, Logger: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	var rebalancedAfterRunning atomic.Bool
	app.SetStateListener(func(s, old kstreams.State) {
		if old == kstreams.StateRunning && s == kstreams.StateRebalancing {
			rebalancedAfterRunning.Store(true)
		}
	})
	startApp(t, app)
	select {
	case <-at:
	case <-time.After(2 * time.Minute):
		t.Fatalf("processor never reached k02 (app error: %v)", app.Err())
	}
	// Hold k02 until the member has left the group (its poll timeout).
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for deadline := time.Now().Add(time.Minute); ; {
		gs, err := admin.DescribeConsumerGroups([]string{appID})
		if err == nil && len(gs) == 1 && len(gs[0].Members) == 0 {
			break
		}
		if time.Now().After(deadline) {
			close(hold["k02"])
			t.Fatalf("the member did not leave the group: %v %+v", err, gs)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
	close(hold["k02"])
	want := map[string]int64{}
	for i := range n {
		want[fmt.Sprintf("k%02d", i)] = int64(3 * i)
	}
	out := readOutput(t, b, output, sarama.ReadUncommitted)
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	if got := counterSum(t, reg, "kstreams_poll_timeouts_total"); got != 1 {
		t.Errorf("kstreams_poll_timeouts_total %v, want 1", got)
	}
	if warned.Load() != 1 {
		t.Errorf("%d expulsion warnings, want 1", warned.Load())
	}
	if !rebalancedAfterRunning.Load() {
		t.Error("the instance did not go from Running to Rebalancing")
	}
	closeApp(t, app)
}
