package integration_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// splitProcessor forwards every word of a line as (word, word).
type splitProcessor struct {
	ctx processor.ProcessorContext[string, string]
}

func (p *splitProcessor) Init(ctx processor.ProcessorContext[string, string]) error {
	p.ctx = ctx
	return nil
}
func (p *splitProcessor) Process(r processor.Record[string, string]) error {
	for _, w := range strings.Fields(r.Value) {
		if err := p.ctx.Forward(processor.NewRecord(w, w, r.Timestamp)); err != nil {
			return err
		}
	}
	return nil
}
func (p *splitProcessor) Close() error { return nil }

// countProcessor counts words in the "Counts" store and forwards (word, count) per update.
type countProcessor struct {
	ctx processor.ProcessorContext[string, int64]
	kv  store.KeyValueStore[string, int64]
}

func (p *countProcessor) Init(ctx processor.ProcessorContext[string, int64]) error {
	p.ctx = ctx
	kv, err := processor.GetStateStore[store.KeyValueStore[string, int64]](ctx, "Counts")
	p.kv = kv
	return err
}
func (p *countProcessor) Process(r processor.Record[string, string]) error {
	old, _, err := p.kv.Get(r.Key)
	if err != nil {
		return err
	}
	if err := p.kv.Put(r.Key, old+1); err != nil {
		return err
	}
	return p.ctx.Forward(processor.NewRecord(r.Key, old+1, r.Timestamp))
}
func (p *countProcessor) Close() error { return nil }

// wordCountTopology is a Processor API word count in two sub-topologies joined by the
// internal topic "words-repartition" (so the run creates a repartition and a changelog topic).
func wordCountTopology(t testing.TB, input, output string) *processor.Topology {
	return wordCountTopologyWith(t, input, output, store.Stores.InMemoryKeyValueStore("Counts"))
}

// wordCountTopologyWith is wordCountTopology with the given store supplier (e.g. Pebble).
func wordCountTopologyWith(t testing.TB, input, output string, supplier store.KeyValueBytesStoreSupplier) *processor.Topology {
	t.Helper()
	topo := processor.NewTopology()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(topo.AddSource("Source", []string{input},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(topo.AddProcessor("Split", processor.ProcessorSupplierFunc[string, string, string, string](
		func() processor.Processor[string, string, string, string] { return &splitProcessor{} }), "Source"))
	topology.Of(topo).AddInternalTopic("words-repartition", topology.InternalTopicProperties{})
	must(topo.AddSink("RepartitionSink", "words-repartition", []string{"Split"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.String())))
	must(topo.AddSource("RepartitionSource", []string{"words-repartition"},
		processor.WithKeyDeserializer(serde.String()), processor.WithValueDeserializer(serde.String())))
	must(topo.AddProcessor("Count", processor.ProcessorSupplierFunc[string, string, string, int64](
		func() processor.Processor[string, string, string, int64] { return &countProcessor{} }), "RepartitionSource"))
	must(topo.AddStateStore(store.Stores.KeyValueStoreBuilder(supplier, serde.String(), serde.Long()), "Count"))
	must(topo.AddSink("Sink", output, []string{"Count"},
		processor.WithKeySerializer(serde.String()), processor.WithValueSerializer(serde.Long())))
	return topo
}

// fastConsumer shortens group and fetch timings for tests (the broker's
// group.min.session.timeout.ms is 6 s).
var fastConsumer = kstreams.ConsumerConfig{SessionTimeout: 6 * time.Second, HeartbeatInterval: 300 * time.Millisecond,
	MaxPollInterval: 10 * time.Second, FetchMaxWait: 20 * time.Millisecond}

// fastSarama shortens the metadata retry backoff for tests.
func fastSarama(sc *sarama.Config) {
	sc.Metadata.Retry.Backoff = 100 * time.Millisecond
}

// createTopics creates topics with time-based retention off (retention.ms=-1): the tests'
// records carry timestamps from 1970 (deterministic, see produceLines), which the broker's
// periodic retention check (log.retention.check.interval.ms, 5 min; first run 30 s after a
// broker start) would otherwise delete, input lines included, before the application read them.
func createTopics(t testing.TB, b kafkatest.Broker, partitions int32, topics ...string) {
	t.Helper()
	createTopicsWith(t, b.Addrs, kafkatest.SaramaConfig(), partitions, topics...)
}

// createTopicsWith is createTopics on the brokers addrs with the client configuration cfg.
func createTopicsWith(t testing.TB, addrs []string, cfg *sarama.Config, partitions int32, topics ...string) {
	t.Helper()
	kafkatest.CreateTopicsWith(t, addrs, cfg, partitions, kafkatest.KeepForever(), topics...)
}

// lineHeader names the header produceLines gives every line: "<call>/<line number>", unique in
// the test process, so that a line the producer wrote twice is told from two lines alike
// (kafkatest.TopicDuplicates). produceCalls numbers the calls.
const lineHeader = "kstreams-test-line"

var produceCalls atomic.Int64

// produceLines writes n random lines over a vocabulary and returns the expected counts: line i
// has key i and timestamp 1 000 000 + i ms, and the header lineHeader.
func produceLines(t testing.TB, b kafkatest.Broker, topic string, n int, seed uint64) map[string]int64 {
	t.Helper()
	return produceLinesWith(t, b.Addrs, kafkatest.SaramaConfig(), topic, n, seed)
}

// produceLinesWith is produceLines on the brokers addrs with the client configuration cfg.
func produceLinesWith(t testing.TB, addrs []string, cfg *sarama.Config, topic string, n int, seed uint64) map[string]int64 {
	t.Helper()
	noteInput(t, addrs, cfg, topic)
	pcfg := *cfg
	p, err := sarama.NewSyncProducer(addrs, kafkatest.Idempotent(&pcfg))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	call := produceCalls.Add(1)
	r := rand.New(rand.NewPCG(seed, 7))
	want := map[string]int64{}
	var batch []*sarama.ProducerMessage
	for i := 0; i < n; i++ {
		var words []string
		for j := 0; j < 1+r.IntN(5); j++ {
			w := fmt.Sprintf("w%02d", r.IntN(40))
			words = append(words, w)
			want[w]++
		}
		batch = append(batch, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprint(i)),
			Value: sarama.StringEncoder(strings.Join(words, " ")), Timestamp: time.UnixMilli(int64(1_000_000 + i)),
			Headers: []sarama.RecordHeader{{Key: []byte(lineHeader), Value: fmt.Appendf(nil, "%d/%d", call, i)}}})
		if len(batch) == 500 || i == n-1 {
			if err := p.SendMessages(batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	return want
}

// outputReader reads every partition of a topic from the beginning.
type outputReader struct {
	mu   sync.Mutex
	seqs map[string][]int64
	stop func()
	wg   sync.WaitGroup
}

func readOutput(t testing.TB, b kafkatest.Broker, topic string, iso sarama.IsolationLevel) *outputReader {
	t.Helper()
	return readOutputWith(t, b.Addrs, kafkatest.SaramaConfig(), topic, iso)
}

// readOutputWith is readOutput on the brokers addrs with the client configuration cfg (which
// it modifies).
func readOutputWith(t testing.TB, addrs []string, cfg *sarama.Config, topic string, iso sarama.IsolationLevel) *outputReader {
	t.Helper()
	cfg.Consumer.IsolationLevel = iso
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	c, err := sarama.NewConsumer(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Partitions(topic)
	if err != nil {
		t.Fatal(err)
	}
	o := &outputReader{seqs: map[string][]int64{}}
	ctx, cancel := context.WithCancel(context.Background())
	for _, p := range ps {
		pc, err := c.ConsumePartition(topic, p, sarama.OffsetOldest)
		if err != nil {
			t.Fatal(err)
		}
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			defer pc.Close()
			for {
				select {
				case m := <-pc.Messages():
					o.mu.Lock()
					o.seqs[string(m.Key)] = append(o.seqs[string(m.Key)], int64(binary.BigEndian.Uint64(m.Value)))
					o.mu.Unlock()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	o.stop = func() { cancel(); o.wg.Wait(); c.Close() }
	t.Cleanup(o.stop)
	return o
}

// reached reports whether the last value of every word equals want.
func (o *outputReader) reached(want map[string]int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for w, n := range want {
		s := o.seqs[w]
		if len(s) == 0 || s[len(s)-1] != n {
			return false
		}
	}
	return true
}

// inputTopic is a topic produceLines wrote, with the client configuration it used.
type inputTopic struct {
	addrs []string
	cfg   *sarama.Config
	topic string
}

// inputs are the topics produceLines wrote, by test name, for waitFinal's failure message.
var inputs struct {
	mu     sync.Mutex
	byTest map[string][]inputTopic
}

// noteInput records that test t writes input lines to topic, until t ends.
func noteInput(t testing.TB, addrs []string, cfg *sarama.Config, topic string) {
	inputs.mu.Lock()
	defer inputs.mu.Unlock()
	if inputs.byTest == nil {
		inputs.byTest = map[string][]inputTopic{}
	}
	name := t.Name()
	for _, in := range inputs.byTest[name] {
		if in.topic == topic {
			return
		}
	}
	if len(inputs.byTest[name]) == 0 {
		t.Cleanup(func() {
			inputs.mu.Lock()
			delete(inputs.byTest, name)
			inputs.mu.Unlock()
		})
	}
	inputs.byTest[name] = append(inputs.byTest[name], inputTopic{addrs, cfg, topic})
}

// inputsOf returns the input topics written by t or by a test t is a subtest of.
func inputsOf(t testing.TB) []inputTopic {
	inputs.mu.Lock()
	defer inputs.mu.Unlock()
	var out []inputTopic
	for name, ins := range inputs.byTest {
		if name == t.Name() || strings.HasPrefix(t.Name(), name+"/") {
			out = append(out, ins...)
		}
	}
	return out
}

// finalDiff describes every word whose last value is not want's: "" when all are.
func (o *outputReader) finalDiff(want map[string]int64) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var over, under []string
	for w, n := range want {
		s := o.seqs[w]
		switch {
		case len(s) == 0:
			under = append(under, fmt.Sprintf("%s: no update, want %d", w, n))
		case s[len(s)-1] > n:
			over = append(over, fmt.Sprintf("%s: last %d, want %d", w, s[len(s)-1], n))
		case s[len(s)-1] < n:
			under = append(under, fmt.Sprintf("%s: last %d, want %d", w, s[len(s)-1], n))
		}
	}
	if len(over) == 0 && len(under) == 0 {
		return ""
	}
	slices.Sort(over)
	slices.Sort(under)
	var b strings.Builder
	if len(over) > 0 {
		fmt.Fprintf(&b, "%d words counted too often (%s)", len(over), strings.Join(over, "; "))
	}
	if len(under) > 0 {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d words short of their count (%s)", len(under), strings.Join(under, "; "))
	}
	return b.String()
}

// waitFinal polls until the last value of every word equals want, or fails at the deadline.
// The failure names every word off, and for each input topic the test wrote with produceLines
// whether it holds a line written twice: an over-count with a duplicated input line is the test
// producer's, one without is the application's.
func (o *outputReader) waitFinal(t testing.TB, want map[string]int64, timeout time.Duration, alive func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		diff := o.finalDiff(want)
		if diff == "" {
			return
		}
		if alive != nil {
			if err := alive(); err != nil {
				t.Fatalf("application failed: %v", err)
			}
		}
		if time.Now().After(deadline) {
			if os.Getenv("KSTREAMS_DEBUG_STACKS") != "" {
				_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			}
			var report []string
			for _, in := range inputsOf(t) {
				report = append(report, kafkatest.ReportDuplicates(in.addrs, in.cfg, in.topic))
			}
			t.Fatalf("final counts not reached within %v: %s\n%s", timeout, diff, strings.Join(report, "\n"))
		}
		time.Sleep(50 * time.Millisecond) // polling interval, bounded by the deadline
	}
}

// checkExactSequences checks that every word's updates are exactly 1, 2, ..., n (no
// duplicates, no gaps): what exactly-once promises to a read_committed reader.
func (o *outputReader) checkExactSequences(t testing.TB, want map[string]int64) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for w, n := range want {
		s := o.seqs[w]
		if int64(len(s)) != n {
			t.Errorf("word %s: %d updates, want %d", w, len(s), n)
			continue
		}
		for i, v := range s {
			if v != int64(i+1) {
				t.Errorf("word %s: update %d is %d, want %d", w, i, v, i+1)
				break
			}
		}
	}
}

func newApp(t testing.TB, b kafkatest.Broker, topo *processor.Topology, appID string, guarantee kstreams.ProcessingGuarantee, threads int) *kstreams.KafkaStreams {
	t.Helper()
	return newAppOn(t, b, topo, appID, guarantee, threads, "")
}

// newAppOn is newApp on group.protocol protocol ("": the default, classic).
func newAppOn(t testing.TB, b kafkatest.Broker, topo *processor.Topology, appID string, guarantee kstreams.ProcessingGuarantee, threads int,
	protocol kstreams.GroupProtocol) *kstreams.KafkaStreams {
	t.Helper()
	app, err := kstreams.New(topo, kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, NumStreamThreads: threads,
		ProcessingGuarantee: guarantee, CommitInterval: 200 * time.Millisecond, StateDir: t.TempDir(), Sarama: fastSarama, Consumer: fastConsumer,
		GroupProtocol: protocol,
	})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

// startApp starts app and has the test close it (within 30 s) when it ends.
func startApp(t testing.TB, app *kstreams.KafkaStreams) {
	t.Helper()
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = app.Close(ctx)
	})
}

// closeApp closes app within 30 s; an error fails the test.
func closeApp(t testing.TB, app *kstreams.KafkaStreams) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func runWordCount(t *testing.T, b kafkatest.Broker, guarantee kstreams.ProcessingGuarantee) {
	input, output := kafkatest.Name(t, "lines"), kafkatest.Name(t, "counts")
	appID := kafkatest.Name(t, "wc")
	createTopics(t, b, 3, input, output)
	want := produceLines(t, b, input, 3000, 1)
	app := newApp(t, b, wordCountTopology(t, input, output), appID, guarantee, 2)
	var states []string
	var smu sync.Mutex
	app.SetStateListener(func(n, o kstreams.State) { smu.Lock(); states = append(states, n.String()); smu.Unlock() })
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	iso := sarama.ReadUncommitted
	if guarantee == kstreams.ExactlyOnceV2 {
		iso = sarama.ReadCommitted
	}
	out := readOutput(t, b, output, iso)
	out.waitFinal(t, want, 2*time.Minute, app.Err)
	if guarantee == kstreams.ExactlyOnceV2 {
		out.checkExactSequences(t, want)
	}
	closeApp(t, app)
	if app.State() != kstreams.StateNotRunning {
		t.Fatalf("state after Close: %s", app.State())
	}
	smu.Lock()
	defer smu.Unlock()
	if len(states) < 3 || states[0] != "REBALANCING" || states[len(states)-1] != "NOT_RUNNING" {
		t.Fatalf("state transitions %v", states)
	}
	// Internal topics were created with Java's names and the input's partition count.
	admin, err := sarama.NewClusterAdmin(b.Addrs, kafkatest.SaramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	md, err := admin.DescribeTopics([]string{appID + "-words-repartition", appID + "-Counts-changelog"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range md {
		if !errors.Is(m.Err, sarama.ErrNoError) || len(m.Partitions) != 3 {
			t.Errorf("internal topic %s: err %v, %d partitions, want 3", m.Name, m.Err, len(m.Partitions))
		}
	}
}

func TestIntegrationWordCountAtLeastOnce(t *testing.T) {
	runWordCount(t, kafkatest.Real(t), kstreams.AtLeastOnce)
}

func TestIntegrationWordCountExactlyOnce(t *testing.T) {
	runWordCount(t, kafkatest.Real(t), kstreams.ExactlyOnceV2)
}

func TestEmbeddedWordCountAtLeastOnce(t *testing.T) {
	t.Parallel()
	runWordCount(t, kafkatest.Embedded(t), kstreams.AtLeastOnce)
}

func TestEmbeddedWordCountExactlyOnce(t *testing.T) {
	t.Parallel()
	runWordCount(t, kafkatest.Embedded(t), kstreams.ExactlyOnceV2)
}
