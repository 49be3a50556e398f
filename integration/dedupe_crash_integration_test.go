package integration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Deduplication across SIGKILLs under exactly-once: ids repeated inside the
// window, before and after kills, come out once per window.

const envDedupeChild = "KSTREAMS_DEDUPE_CHILD" // bootstrap|input|output|appID|stateDir

// dedupeTopology forwards each id (the key) once per 10 s window; the value is the round.
func dedupeTopology(t testing.TB, input, output string) *processor.Topology {
	t.Helper()
	S, L := serde.String(), serde.Long()
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, input, kstream.ConsumedWith(S, L)).DeduplicateByKey(10*time.Second).To(output, kstream.ProducedWith(S, L))
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// TestHelperDedupeChild is not a test: run by checkDedupeCrash as a child process.
func TestHelperDedupeChild(t *testing.T) { runChildApp(t, envDedupeChild, dedupeTopology) }

// produceIDs writes ids id-0..id-(n-1), each `repeat` times 200 ms apart from start, value round.
func produceIDs(t testing.TB, b kafkatest.Broker, topic string, n, repeat int, start int64, round int64) {
	t.Helper()
	cfg := kafkatest.ProducerConfig()
	cfg.Producer.Return.Successes = true
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	val, err := serde.Long().Serialize(topic, nil, round)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*sarama.ProducerMessage
	for r := range repeat {
		for i := range n {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprintf("id-%d", i)),
				Value: sarama.ByteEncoder(val), Timestamp: time.UnixMilli(start + int64(r)*200)})
		}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
}

// committedSum returns the sum of the group's committed offsets of topic (0 for none).
func committedSum(t testing.TB, b kafkatest.Broker, appID, topic string) int64 {
	t.Helper()
	var sum int64
	for _, o := range groupOffsets(t, b, appID, topic) {
		sum += max(o.committed, 0)
	}
	return sum
}

func checkDedupeCrash(t *testing.T, b kafkatest.Broker) {
	input, output, appID := kafkatest.Name(t, "ids"), kafkatest.Name(t, "unique"), kafkatest.Name(t, "dedupe")
	stateDir := t.TempDir()
	createTopics(t, b, 2, input)
	createTopics(t, b, 1, output) // one partition: a duplicate would come before the last result
	const ids = 200
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixMilli()
	out := readOutput(t, b, output, sarama.ReadCommitted)
	args := strings.Join([]string{strings.Join(b.Addrs, ","), input, output, appID, stateDir}, "|")

	// Round 1: every id 5 times within 1 s; child 1 is killed once every input record is
	// committed, so the seen ids live only in the store's changelog.
	produceIDs(t, b, input, ids, 5, base, 1)
	runKilledChild(t, "TestHelperDedupeChild", envDedupeChild, args, 1, func() bool {
		return out.total() >= ids && committedAll(t, b, appID, input)
	}, "fully committed")
	// More repeats inside the same window: child 2 is killed once it committed some of them
	// (at whatever point of its work that is).
	produceIDs(t, b, input, ids, 5, base+1000, 1)
	runKilledChild(t, "TestHelperDedupeChild", envDedupeChild, args, 2, func() bool {
		return committedSum(t, b, appID, input) > 5*ids
	}, "committing the repeats")
	produceIDs(t, b, input, ids, 5, base+2000, 1)
	// Round 2, 30 s later: each id once more, repeated; a final run processes everything.
	produceIDs(t, b, input, ids, 3, base+30_000, 2)
	app, err := kstreams.New(dedupeTopology(t, input, output), kstreams.Config{
		ApplicationID: appID, BootstrapServers: b.Addrs, ProcessingGuarantee: kstreams.ExactlyOnceV2,
		CommitInterval: 100 * time.Millisecond, StateDir: stateDir, Sarama: fastSarama, Consumer: fastConsumer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer closeApp(t, app)
	want := map[string]int64{}
	for i := range ids {
		want[fmt.Sprintf("id-%d", i)] = 2
	}
	out.waitFinal(t, want, 3*time.Minute, app.Err)
	out.mu.Lock()
	defer out.mu.Unlock()
	for k, seq := range out.seqs {
		if len(seq) != 2 || seq[0] != 1 || seq[1] != 2 {
			t.Errorf("%s: emitted %v, want [1 2] (once per window)", k, seq)
		}
	}
	if len(out.seqs) != ids {
		t.Errorf("%d ids emitted, want %d", len(out.seqs), ids)
	}
}

func TestIntegrationDeduplicateCrashExactlyOnce(t *testing.T) { checkDedupeCrash(t, kafkatest.Real(t)) }

func TestEmbeddedDeduplicateCrashExactlyOnce(t *testing.T) {
	t.Parallel()
	checkDedupeCrash(t, kafkatest.Embedded(t))
}
