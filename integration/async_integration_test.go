package integration_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// Async steps on the real broker: exactly-once under SIGKILL and under a revocation with calls
// in flight, errors and timeouts to the handler and the dead-letter topic, and a slow service
// that holds up neither the group nor the thread's other tasks.

const envAsyncChild = "KSTREAMS_ASYNC_CHILD" // bootstrap|input|output|appID|stateDir

// asyncSum is an async step keeping a running sum per key: Start reads the key's sum from
// store "sums", the call (a service taking latency()) adds the record's value, Complete writes
// the new sum and forwards it. Each key's outputs are 1, 2, ..., n for n records of value 1
// exactly when no record is lost or applied twice and each Start saw its key's last write.
type asyncSum struct {
	ctx     processor.FixedKeyProcessorContext[string, int64]
	kv      store.KeyValueStore[string, int64]
	latency func() time.Duration
}

func (a *asyncSum) Init(ctx processor.FixedKeyProcessorContext[string, int64]) error {
	a.ctx = ctx
	var err error
	a.kv, err = processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "sums")
	return err
}

func (a *asyncSum) Start(rec processor.FixedKeyRecord[string, int64]) (func(context.Context) (int64, error), error) {
	cur, _, err := a.kv.Get(rec.Key())
	if err != nil {
		return nil, err
	}
	v, d := rec.Value(), a.latency()
	return func(ctx context.Context) (int64, error) {
		select {
		case <-time.After(d):
			return cur + v, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}, nil
}

func (a *asyncSum) Complete(rec processor.FixedKeyRecord[string, int64], sum int64) error {
	if err := a.kv.Put(rec.Key(), sum); err != nil {
		return err
	}
	return a.ctx.Forward(rec.WithValue(sum))
}

func (a *asyncSum) Close() error { return nil }

// asyncSumTopology is input -> asyncSum (random latencies up to maxLatency) -> output.
func asyncSumTopology(maxLatency time.Duration) func(t testing.TB, input, output string) *processor.Topology {
	return func(t testing.TB, input, output string) *processor.Topology {
		t.Helper()
		S, L := serde.String(), serde.Long()
		b := kstream.NewStreamsBuilder()
		b.AddStateStore(store.Stores.KeyValueStoreBuilder(store.Stores.PersistentKeyValueStore("sums"), S, L))
		sup := processor.NewAsyncFixedKeySupplier(processor.AsyncOptions{MaxInFlight: 16, MaxQueuedPerKey: 4},
			func() processor.AsyncFixedKeyProcessor[string, int64, int64, int64] {
				return &asyncSum{latency: func() time.Duration { return time.Duration(rand.Int64N(int64(maxLatency))) }}
			})
		kstream.Stream(b, input, kstream.ConsumedWith(S, L)).ProcessValues(sup, "sums").To(output, kstream.ProducedWith(S, L))
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return topo
	}
}

// TestHelperAsyncChild is not a test: run by the async crash test as a child process.
func TestHelperAsyncChild(t *testing.T) {
	runChildApp(t, envAsyncChild, asyncSumTopology(10*time.Millisecond))
}

// produceOnes writes n records of value 1 for each of keys a-0..a-(keys-1), interleaved, and
// returns each key's expected final sum.
func produceOnes(t testing.TB, b kafkatest.Broker, topic string, keys, n int) map[string]int64 {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Return.Successes = true
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	one, _ := serde.Long().Serialize(topic, nil, 1)
	want := map[string]int64{}
	var msgs []*sarama.ProducerMessage
	for i := range n {
		for k := range keys {
			key := fmt.Sprintf("a-%d", k)
			want[key]++
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(key), Value: sarama.ByteEncoder(one),
				Timestamp: time.UnixMilli(1_000_000 + int64(i))})
		}
	}
	for len(msgs) > 0 {
		n := min(len(msgs), 1000)
		if err := p.SendMessages(msgs[:n]); err != nil {
			t.Fatal(err)
		}
		msgs = msgs[n:]
	}
	return want
}

// Exactly-once with an async step under SIGKILL: two children are killed while their calls
// are in flight (at a third and two thirds of the output); a final run finishes. Each key's
// sums read with read_committed are exactly 1..n: nothing lost, nothing twice, and every
// store write in the transaction of its input's offsets.
func TestIntegrationAsyncCrashExactlyOnce(t *testing.T) {
	b := kafkatest.Real(t)
	input, output, appID := kafkatest.Name(t, "orders"), kafkatest.Name(t, "sums"), kafkatest.Name(t, "async-crash")
	stateDir := t.TempDir()
	createTopics(t, b, 4, input)
	createTopics(t, b, 2, output)
	want := produceOnes(t, b, input, 40, 150)
	total := 40 * 150
	out := readOutput(t, b, output, sarama.ReadCommitted)
	args := strings.Join([]string{strings.Join(b.Addrs, ","), input, output, appID, stateDir}, "|")
	for k := 1; k <= 2; k++ {
		target := total * k / 3
		runKilledChild(t, "TestHelperAsyncChild", envAsyncChild, args, k, func() bool { return out.total() >= target }, "at its share of the output")
		t.Logf("killed child %d at %d of %d committed sums", k, out.total(), total)
	}
	app, err := kstreams.New(asyncSumTopology(10*time.Millisecond)(t, input, output), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		CommitInterval: 100 * time.Millisecond, StateDir: stateDir, Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	out.waitFinal(t, want, 3*time.Minute, app.Err)
	out.checkExactSequences(t, want)
	closeApp(t, app)
	checkNothingToReprocess(t, b, appID, input)
}

// Revocation with calls in flight: a second instance joins while the first has calls running
// (latencies up to 30 ms, 16 in flight per task); the first drains what it admitted before it
// hands the tasks over. Under exactly-once each key's sums are exactly 1..n.
func TestIntegrationAsyncRevocationExactlyOnce(t *testing.T) {
	b := kafkatest.Real(t)
	input, output, appID := kafkatest.Name(t, "orders"), kafkatest.Name(t, "sums"), kafkatest.Name(t, "async-revoke")
	createTopics(t, b, 4, input)
	createTopics(t, b, 2, output)
	want := produceOnes(t, b, input, 40, 100)
	out := readOutput(t, b, output, sarama.ReadCommitted)
	topo := asyncSumTopology(30 * time.Millisecond)
	first := newApp(t, b, topo(t, input, output), appID, kstreams.ExactlyOnceV2, 1)
	startApp(t, first)
	deadline := time.Now().Add(2 * time.Minute)
	for out.total() < 400 {
		if time.Now().After(deadline) {
			t.Fatalf("first instance: %d sums out", out.total())
		}
		time.Sleep(20 * time.Millisecond) // polling interval, bounded by the deadline
	}
	second := newApp(t, b, topo(t, input, output), appID, kstreams.ExactlyOnceV2, 1)
	startApp(t, second)
	t.Logf("second instance started at %d of %d sums", out.total(), 4000)
	out.waitFinal(t, want, 3*time.Minute, func() error { return errors.Join(first.Err(), second.Err()) })
	out.checkExactSequences(t, want)
}

// dlqReader collects the records of a topic (key, value and headers), from the beginning.
type dlqReader struct {
	mu   sync.Mutex
	recs []*sarama.ConsumerMessage
}

func readAll(t testing.TB, b kafkatest.Broker, topic string) *dlqReader {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Consumer.IsolationLevel = sarama.ReadCommitted
	c, err := sarama.NewConsumer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	r := &dlqReader{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, p := range ps {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer pc.Close()
			for {
				select {
				case m := <-pc.Messages():
					r.mu.Lock()
					r.recs = append(r.recs, m)
					r.mu.Unlock()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait(); c.Close() })
	return r
}

func (r *dlqReader) wait(t testing.TB, n int, timeout time.Duration) []*sarama.ConsumerMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r.mu.Lock()
		got := append([]*sarama.ConsumerMessage(nil), r.recs...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records within %v, want %d", len(got), timeout, n)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// A call's error and a call's timeout reach the processing handler as *processor.AsyncError
// (key, partition, offset) and their input records the dead-letter topic, with Java's error
// headers; the other records go on.
func TestIntegrationAsyncErrorsDeadLetter(t *testing.T) { checkAsyncErrors(t, kafkatest.Real(t)) }

func TestEmbeddedAsyncErrorsDeadLetter(t *testing.T) { checkAsyncErrors(t, kafkatest.Embedded(t)) }

func checkAsyncErrors(t *testing.T, b kafkatest.Broker) {
	input, output, dlq, appID := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "dlq"), kafkatest.Name(t, "async-dlq")
	createTopics(t, b, 1, input, output, dlq)
	S := serde.String()
	bld := kstream.NewStreamsBuilder()
	kstream.Stream(bld, input, kstream.ConsumedWith(S, S)).
		MapValuesAsync(func(ctx context.Context, k, v string) (string, error) {
			switch v {
			case "refuse":
				return "", errors.New("pricing service refused")
			case "hang":
				<-ctx.Done()
				return "", ctx.Err()
			}
			return strings.ToUpper(v), nil
		}, processor.AsyncOptions{Timeout: 300 * time.Millisecond}).
		To(output, kstream.ProducedWith(S, S))
	topo, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	handled := map[string]*processor.AsyncError{}
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		CommitInterval: 100 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
		DeadLetterQueueTopic: dlq,
		ProcessingHandler: func(node string, err error) kstreams.HandlerResponse {
			var ae *processor.AsyncError
			if errors.As(err, &ae) {
				mu.Lock()
				handled[fmt.Sprint(ae.Key)] = ae
				mu.Unlock()
			}
			return kstreams.Continue
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Return.Successes = true
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, kv := range [][2]string{{"a", "apple"}, {"b", "refuse"}, {"c", "hang"}, {"d", "date"}} {
		if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: input, Key: sarama.StringEncoder(kv[0]), Value: sarama.StringEncoder(kv[1]),
			Timestamp: time.UnixMilli(1_000_000 + int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	outs, letters := readAll(t, b, output), readAll(t, b, dlq)
	startApp(t, app)
	got := outs.wait(t, 2, 2*time.Minute)
	dead := letters.wait(t, 2, 2*time.Minute)
	var vals []string
	for _, m := range got {
		vals = append(vals, string(m.Key)+"="+string(m.Value))
	}
	slices.Sort(vals) // different keys: in the order their calls completed
	if strings.Join(vals, ",") != "a=APPLE,d=DATE" {
		t.Errorf("outputs %v", vals)
	}
	byKey := map[string]*sarama.ConsumerMessage{}
	for _, m := range dead {
		byKey[string(m.Key)] = m
	}
	for key, want := range map[string]struct {
		value, offset, cause string
	}{"b": {"refuse", "1", "pricing service refused"}, "c": {"hang", "2", "deadline exceeded"}} {
		m := byKey[key]
		if m == nil {
			t.Errorf("no dead letter for %s", key)
			continue
		}
		msg := header(m, "__streams.errors.message")
		if string(m.Value) != want.value || header(m, "__streams.errors.offset") != want.offset || header(m, "__streams.errors.partition") != "0" ||
			header(m, "__streams.errors.topic") != input || !strings.Contains(msg, want.cause) || !strings.Contains(msg, "offset="+want.offset) {
			t.Errorf("dead letter of %s: value %q headers offset %q partition %q topic %q message %q", key, m.Value,
				header(m, "__streams.errors.offset"), header(m, "__streams.errors.partition"), header(m, "__streams.errors.topic"), msg)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if e := handled["b"]; e == nil || e.Offset != 1 || e.Partition != 0 || e.Topic != input {
		t.Errorf("handler's error for b: %+v", e)
	}
	if e := handled["c"]; e == nil || e.Offset != 2 || !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("handler's error for c: %+v", e)
	}
}

// A service that slows to 500 ms per call for one key (partition 0), and whose first calls for
// it hang for longer than max.poll.interval.ms, holds up neither the group nor the thread's
// other task: with one stream thread, every record of partition 1 comes out while the slow
// key's calls are held, the instance never leaves RUNNING once running (no rebalance, no poll
// timeout), and the slow records then all come out in order.
func TestIntegrationAsyncSlowServiceKeepsGroup(t *testing.T) {
	b := kafkatest.Real(t)
	input, output, appID := kafkatest.Name(t, "in"), kafkatest.Name(t, "out"), kafkatest.Name(t, "async-slow")
	createTopics(t, b, 2, input)
	createTopics(t, b, 1, output)
	L, S := serde.Long(), serde.String()
	release := make(chan struct{})
	bld := kstream.NewStreamsBuilder()
	kstream.Stream(bld, input, kstream.ConsumedWith(S, L)).
		MapValuesAsync(func(ctx context.Context, k string, v int64) (int64, error) {
			d := time.Millisecond
			if k == "slow" {
				d = 500 * time.Millisecond
				select { // held until the test has seen every fast record
				case <-release:
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
			select {
			case <-time.After(d):
				return v, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}, processor.AsyncOptions{MaxQueuedPerKey: 2}).
		To(output, kstream.ProducedWith(S, L))
	topo, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	consumer := fastConsumer
	consumer.MaxPollInterval = 3 * time.Second
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, CommitInterval: 200 * time.Millisecond, StateDir: t.TempDir(),
		Sarama: fastSarama, Consumer: consumer, Registry: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	var states []kstreams.State
	var smu sync.Mutex
	app.SetStateListener(func(n, _ kstreams.State) { smu.Lock(); states = append(states, n); smu.Unlock() })

	const slow, fast = 8, 2000
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*sarama.ProducerMessage
	for i := range slow {
		v, _ := L.Serialize(input, nil, int64(i+1))
		msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Partition: 0, Key: sarama.StringEncoder("slow"), Value: sarama.ByteEncoder(v)})
	}
	for i := range fast {
		v, _ := L.Serialize(input, nil, int64(i/50+1))
		msgs = append(msgs, &sarama.ProducerMessage{Topic: input, Partition: 1, Key: sarama.StringEncoder(fmt.Sprintf("f%d", i%50)), Value: sarama.ByteEncoder(v)})
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	p.Close()

	out := readAll(t, b, output)
	startApp(t, app)
	out.wait(t, fast, 2*time.Minute)
	// The slow key's first call is still held: hold it past max.poll.interval.ms (3 s), with
	// the thread polling, committing and heartbeating meanwhile. (A wait for the group to
	// misbehave, not for a result.)
	time.Sleep(4 * time.Second)
	close(release)
	got := out.wait(t, slow+fast, 2*time.Minute)
	var slowSeq []int64
	for i, m := range got {
		if string(m.Key) == "slow" {
			if i < fast {
				t.Errorf("slow record %d out before the fast ones", i)
			}
			slowSeq = append(slowSeq, int64(binary.BigEndian.Uint64(m.Value)))
		}
	}
	for i, v := range slowSeq {
		if v != int64(i+1) {
			t.Fatalf("slow key's outputs %v, want 1..%d in order", slowSeq, slow)
		}
	}
	smu.Lock()
	running := false
	for _, s := range states {
		if s == kstreams.StateRunning {
			running = true
		} else if running {
			t.Errorf("state %v after RUNNING (states %v)", s, states)
		}
	}
	smu.Unlock()
	if n := counterValue(t, reg, "kstreams_poll_timeouts_total"); n != 0 {
		t.Errorf("%v poll timeouts", n)
	}
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
}
