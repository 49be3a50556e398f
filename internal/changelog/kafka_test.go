package changelog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/internal/kafkatest"
	"github.com/kstreams-go/kstreams/store"
)

// kafkaLog writes changelog records to Kafka with a synchronous producer and reads them back
// with a SaramaReader.
type kafkaLog struct {
	*SaramaReader
	t       *testing.T
	addrs   []string
	client  sarama.Client
	admin   sarama.ClusterAdmin
	prod    sarama.SyncProducer
	mu      sync.Mutex
	created map[string]bool
}

func newKafkaLog(t *testing.T, b kafkatest.Broker, readCommitted bool) *kafkaLog {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	client, err := sarama.NewClient(b.Addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	// The producer has connections of its own: idempotent, it allows one request in flight,
	// which the reader under test, on client, does not have to share.
	pcfg := *cfg
	prod, err := sarama.NewSyncProducer(b.Addrs, kafkatest.Idempotent(&pcfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prod.Close() })
	r := NewSaramaReader(client, readCommitted)
	t.Cleanup(func() { _ = r.Close() }) // before the client: cleanups run last in, first out
	return &kafkaLog{SaramaReader: r, t: t, addrs: b.Addrs, client: client, admin: admin, prod: prod, created: map[string]bool{}}
}

func (k *kafkaLog) ensureTopic(topic string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.created[topic] {
		return
	}
	compact := "compact"
	err := k.admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1,
		ConfigEntries: map[string]*string{"cleanup.policy": &compact}}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		k.t.Fatalf("create topic %s: %v", topic, err)
	}
	// A leader in the metadata may still refuse requests for a moment: wait until it answers.
	kafkatest.WaitTopicsReady(k.t, k.addrs, nil, topic)
	k.created[topic] = true
}

func kafkaMessage(tp TopicPartition, r Record) *sarama.ProducerMessage {
	m := &sarama.ProducerMessage{Topic: tp.Topic, Partition: tp.Partition, Timestamp: time.UnixMilli(max(r.Timestamp, 0))}
	if r.Key != nil {
		m.Key = sarama.ByteEncoder(r.Key)
	}
	if r.Value != nil {
		m.Value = sarama.ByteEncoder(r.Value)
	}
	return m
}

// Append produces r to tp and returns its offset.
func (k *kafkaLog) Append(tp TopicPartition, r Record) int64 {
	k.ensureTopic(tp.Topic)
	_, off, err := k.prod.SendMessage(kafkaMessage(tp, r))
	if err != nil {
		k.t.Fatalf("produce to %s: %v", tp, err)
	}
	return off
}

func TestRestoreKfake(t *testing.T) {
	b := kafkatest.Embedded(t)
	restoreScenario(t, newKafkaLog(t, b, false), kafkatest.Name(t, "app"))
}

func TestIntegrationRestore(t *testing.T) {
	b := kafkatest.Real(t)
	restoreScenario(t, newKafkaLog(t, b, false), kafkatest.Name(t, "app"))
}

func TestIntegrationBulkRestore(t *testing.T) {
	b := kafkatest.Real(t)
	restoreScenarioBulk(t, newKafkaLog(t, b, false), kafkatest.Name(t, "app"), 1)
}

func TestTransactionalRestoreKfake(t *testing.T) {
	transactionalRestore(t, kafkatest.Embedded(t))
}

func TestIntegrationTransactionalRestore(t *testing.T) {
	transactionalRestore(t, kafkatest.Real(t))
}

// transactionalRestore writes a changelog in transactions (committed, aborted, committed) and
// restores it read_committed: the aborted records are skipped and restore ends although the
// last offset of the log is a commit marker.
func transactionalRestore(t *testing.T, b kafkatest.Broker) {
	app := kafkatest.Name(t, "app")
	log := newKafkaLog(t, b, true)
	tp := TopicPartition{Topic: app + "-kv-changelog", Partition: 0}
	log.ensureTopic(tp.Topic)

	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = kafkatest.Name(t, "txn")
	cfg.Net.MaxOpenRequests = 1
	prod, err := sarama.NewAsyncProducer(b.Addrs, cfg)
	must(t, err)
	defer prod.Close()
	go func() {
		for range prod.Successes() {
		}
	}()
	go func() {
		for range prod.Errors() {
		}
	}()
	want := map[string]string{}
	committed := 0
	txn := func(commit bool, from, n int) {
		t.Helper()
		must(t, prod.BeginTxn())
		pending := map[string]string{}
		for i := from; i < from+n; i++ {
			k, v := fmt.Sprintf("k%02d", i%8), fmt.Sprint("v", i)
			prod.Input() <- kafkaMessage(tp, Record{Key: []byte(k), Value: []byte(v)})
			pending[k] = v
		}
		if commit {
			must(t, prod.CommitTxn())
			maps.Copy(want, pending)
			committed += n
		} else {
			must(t, prod.AbortTxn())
		}
	}
	txn(true, 0, 10)
	txn(false, 10, 5)
	txn(true, 15, 3)

	for _, s := range []string{"mem", "ts", "win", "sess"} {
		log.ensureTopic(app + "-" + s + "-changelog")
	}
	h := &harness{t: t, dir: t.TempDir(), log: log, app: app, eos: true}
	h.open() // restores read_committed up to the high-water mark
	got := map[string]string{}
	for k, v := range store.All(h.kv().All()) {
		got[k] = v
	}
	if !maps.Equal(got, want) {
		t.Fatalf("restored %v, want the committed records only %v", got, want)
	}
	// The changelog is compacted: on Apache Kafka the cleaner may already have removed puts that
	// later committed puts of the same key superseded (our broker runs it every second), so
	// between one record per key and every committed record is restored. That no aborted record
	// was applied is shown by the contents above (aborted values would have replaced k02..k06).
	if n := h.lis.restored["kv"]; n < int64(len(want)) || n > int64(committed) {
		t.Fatalf("restored %d records, want between %d (compacted) and %d (aborted ones skipped)", n, len(want), committed)
	}
	end, err := log.EndOffset(context.Background(), tp)
	must(t, err)
	if end != 10+1+5+1+3+1 {
		t.Fatalf("end offset %d, want 21 (18 records and 3 markers)", end)
	}
	must(t, h.task.Close())
}

func TestIntegrationRestoreWaitsForAPreviousOwnersTransaction(t *testing.T) {
	restoreBehindOpenTransaction(t, kafkatest.Real(t))
}

// txnSyncProducer is a transactional producer with the given transactional id.
func txnSyncProducer(t *testing.T, b kafkatest.Broker, id string) sarama.SyncProducer {
	t.Helper()
	cfg := kafkatest.SaramaConfig()
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Transaction.ID = id
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(b.Addrs, cfg)
	must(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// endHook is a testLog whose EndOffset, for one partition, runs a function once after
// answering.
type endHook struct {
	*kafkaLog
	tp   TopicPartition
	once sync.Once
	f    func()
}

func (e *endHook) EndOffset(ctx context.Context, tp TopicPartition) (int64, error) {
	end, err := e.kafkaLog.EndOffset(ctx, tp)
	if tp == e.tp {
		e.once.Do(e.f)
	}
	return end, err
}

// restoreBehindOpenTransaction is a take-over under exactly-once: the changelog holds an open
// transaction of a killed owner (never ended: the coordinator aborts it after the producer's
// transaction timeout), then records a later owner wrote and committed. The restore, started
// while that transaction is still open, must apply the committed records behind it: the
// later owner's input offsets were committed with them. The open transaction is aborted only
// once the restore has asked for its end offset, so a restore that stopped at the last stable
// offset (in front of the open transaction) would miss them.
func restoreBehindOpenTransaction(t *testing.T, b kafkatest.Broker) {
	app := kafkatest.Name(t, "app")
	log := newKafkaLog(t, b, true)
	tp := TopicPartition{Topic: app + "-kv-changelog", Partition: 0}
	for _, s := range []string{"kv", "mem", "ts", "win", "sess"} {
		log.ensureTopic(app + "-" + s + "-changelog")
	}
	send := func(p sarama.SyncProducer, k, v string) {
		t.Helper()
		if _, _, err := p.SendMessage(kafkaMessage(tp, Record{Key: []byte(k), Value: []byte(v)})); err != nil {
			t.Fatal(err)
		}
	}
	killed := txnSyncProducer(t, b, kafkatest.Name(t, "killed"))
	must(t, killed.BeginTxn())
	send(killed, "k0", "uncommitted")
	later := txnSyncProducer(t, b, kafkatest.Name(t, "later"))
	must(t, later.BeginTxn())
	want := map[string]string{}
	for i := range 3 {
		k, v := fmt.Sprint("k", i), fmt.Sprint("later", i)
		send(later, k, v)
		want[k] = v
	}
	must(t, later.CommitTxn())

	var abortErr error
	h := &harness{t: t, dir: t.TempDir(), app: app, eos: true,
		log: &endHook{kafkaLog: log, tp: tp, f: func() { abortErr = killed.AbortTxn() }}}
	h.open()
	must(t, abortErr)
	got := map[string]string{}
	for k, v := range store.All(h.kv().All()) {
		got[k] = v
	}
	if !maps.Equal(got, want) {
		t.Fatalf("restored %v, want the later owner's committed records %v", got, want)
	}
	must(t, h.task.Close())
}

func TestRestoreWaitsForAPreviousOwnersTransactionKfake(t *testing.T) {
	restoreBehindOpenTransaction(t, kafkatest.Embedded(t))
}

// threeRecordLog is a changelog on b whose partition tp holds the records k0, k1 and k2.
func threeRecordLog(t *testing.T, b kafkatest.Broker) (*kafkaLog, TopicPartition) {
	t.Helper()
	log := newKafkaLog(t, b, false)
	tp := TopicPartition{Topic: kafkatest.Name(t, "app") + "-kv-changelog", Partition: 0}
	for i := range 3 {
		log.Append(tp, Record{Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")})
	}
	return log, tp
}

// The reader fetches on connections of its own, one per fetch in progress: a fetch leaves its
// connection idle for the next one, fetches at the same time get one each, and Close closes
// them; fetches after Close fail.
func TestSaramaReaderConnectionsKfake(t *testing.T) {
	b := kafkatest.Embedded(t)
	log, tp := threeRecordLog(t, b)
	r := log.SaramaReader
	if r.raw == nil {
		t.Fatal("the reader does not fetch on connections of its own")
	}
	leader, err := log.client.Leader(tp.Topic, tp.Partition)
	must(t, err)
	addr := leader.Addr()
	idle := func() []*streamsgroup.Conn {
		r.mu.Lock()
		defer r.mu.Unlock()
		return slices.Clone(r.idleRaw[addr])
	}
	recs, next, err := r.FetchAppend(context.Background(), tp, 0, nil)
	if err != nil || len(recs) != 3 || next != 3 {
		t.Fatalf("fetch: %d records, next %d, error %v; want 3, 3", len(recs), next, err)
	}
	first := idle()
	if len(first) != 1 {
		t.Fatalf("after a fetch the reader holds %d idle connections, want 1", len(first))
	}
	if _, _, err := r.FetchAppend(context.Background(), tp, 1, nil); err != nil {
		t.Fatal(err)
	}
	if again := idle(); len(again) != 1 || again[0] != first[0] {
		t.Fatal("a second fetch did not reuse the idle connection")
	}
	c1, idle1, err := r.rawConn(context.Background(), addr, false)
	must(t, err)
	c2, idle2, err := r.rawConn(context.Background(), addr, false)
	must(t, err)
	if c1 != first[0] || !idle1 || c2 == c1 || idle2 {
		t.Fatal("two fetches at once do not get a connection each")
	}
	releaseIdle(r, &r.idleRaw, addr, c1, true)
	releaseIdle(r, &r.idleRaw, addr, c2, true)
	if n := len(idle()); n != 2 {
		t.Fatalf("%d idle connections after two fetches at once, want 2", n)
	}
	// An idle connection the broker closed (connections.max.idle.ms): the fetch goes on a new
	// one.
	_ = c2.Close()
	if recs, _, err := r.FetchAppend(context.Background(), tp, 0, nil); err != nil || len(recs) != 3 {
		t.Fatalf("fetch on a closed idle connection: %d records, error %v; want 3 on a new connection", len(recs), err)
	}
	cs := idle()
	if len(cs) != 2 || slices.Contains(cs, c2) {
		t.Fatal("the closed connection was not replaced")
	}
	c1, c2 = cs[0], cs[1]
	must(t, r.Close())
	for _, c := range []*streamsgroup.Conn{c1, c2} {
		if _, err := c.RoundTrip(context.Background(), apiFetch, rawFetchVersion, false,
			encodeFetch(tp, 0, 0, 1<<20, false)); err == nil {
			t.Fatal("Close left a fetch connection open")
		}
	}
	if _, _, err := r.FetchAppend(context.Background(), tp, 0, nil); !errors.Is(err, errReaderClosed) {
		t.Fatalf("fetch after Close: %v, want errReaderClosed", err)
	}
}

// A client whose settings the reader's own connections do not know (a proxy, a local
// address, SASL GSSAPI) keeps the reader on sarama's fetches, which restore as well.
func TestSaramaReaderFallsBackToSaramaKfake(t *testing.T) {
	b := kafkatest.Embedded(t)
	_, tp := threeRecordLog(t, b)
	cfg := kafkatest.SaramaConfig()
	cfg.Net.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	client, err := sarama.NewClient(b.Addrs, cfg)
	must(t, err)
	defer client.Close()
	r := NewSaramaReader(client, false)
	defer r.Close()
	if r.raw != nil {
		t.Fatal("a client with a local address fetches on the reader's own connections")
	}
	recs, next, err := r.FetchAppend(context.Background(), tp, 0, nil)
	if err != nil || len(recs) != 3 || next != 3 || string(recs[2].Key) != "k2" {
		t.Fatalf("sarama fetch: %d records, next %d, error %v", len(recs), next, err)
	}
	// Its idle connection closed: the next fetch goes on a new one.
	r.mu.Lock()
	var idle []*sarama.Broker
	for _, cs := range r.idleSarama {
		idle = append(idle, cs...)
	}
	r.mu.Unlock()
	if len(idle) != 1 {
		t.Fatalf("%d idle sarama connections after a fetch, want 1", len(idle))
	}
	must(t, idle[0].Close())
	if recs, _, err := r.FetchAppend(context.Background(), tp, 1, nil); err != nil || len(recs) != 2 {
		t.Fatalf("fetch on a closed idle connection: %d records, error %v; want 2 on a new connection", len(recs), err)
	}
}
