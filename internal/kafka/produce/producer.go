// Package produce is the producing half of the runtime's batch-level Kafka client: per-partition
// accumulators that build v2 record batches as records are handed over, a sender goroutine that
// ships them per broker with several requests in flight (linger.ms, batch.size), idempotence by
// default (producer id, epoch, per-partition sequence numbers) and, with a transactional.id, the
// transactional protocol of exactly-once v2 (KIP-447). Java counterpart: KafkaProducer with its
// RecordAccumulator, Sender and TransactionManager.
//
// A stream thread hands every record to [Producer.Send] the moment a task produces it; a commit
// calls [Producer.Flush] (at-least-once) or [Producer.Commit] (exactly-once), so output never
// waits for the commit interval.
package produce

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// Acks is acks: how many replicas must have a batch before the broker answers.
type Acks int16

const (
	// AcksAll waits for every in-sync replica (Java: acks=all, -1; the default, and required
	// for idempotence).
	AcksAll Acks = -1
	// AcksLeader waits for the leader only (Java: acks=1).
	AcksLeader Acks = 1
)

// Config configures a [Producer]. Zero values mean the default given per field.
type Config struct {
	// Cluster is the client's cluster view. Required.
	Cluster *kafka.Cluster
	// ClientID is client.id of the produce connections; "" keeps the cluster's.
	ClientID string
	// TransactionalID is transactional.id; "" makes a producer without transactions.
	// Kafka Streams: <application.id>-<process id>-<thread index> under exactly_once_v2.
	TransactionalID string
	// TransactionTimeout is transaction.timeout.ms; default 60 s (Kafka Streams sets 10 s under
	// exactly-once).
	TransactionTimeout time.Duration
	// NoIdempotence turns enable.idempotence off (default on, as Java since 3.0). A
	// transactional producer is always idempotent.
	NoIdempotence bool
	// Acks is acks; default AcksAll. Idempotence needs AcksAll.
	Acks Acks
	// Linger is linger.ms: how long a batch that is not full waits for more records; default
	// 5 ms (Java 4.x; Kafka Streams sets 100 ms). Negative: no wait.
	Linger time.Duration
	// BatchSize is batch.size in bytes: a partition's batch is sent once it holds about this
	// much; default 16384. A single larger record gets a batch of its own.
	BatchSize int
	// MaxInFlight is max.in.flight.requests.per.connection; default 5, at most 5 with
	// idempotence (the broker checks the sequence numbers of the last 5 batches only).
	MaxInFlight int
	// MaxRequestSize is max.request.size in bytes: the largest produce request; default 1 MiB.
	MaxRequestSize int
	// RequestTimeout is request.timeout.ms: the broker's produce timeout; default 30 s.
	RequestTimeout time.Duration
	// DeliveryTimeout is delivery.timeout.ms: a record not acknowledged this long after Send
	// fails with ErrDeliveryTimeout; default 120 s.
	DeliveryTimeout time.Duration
	// RetryBackoff is retry.backoff.ms, doubled per attempt up to RetryBackoffMax; default
	// 100 ms.
	RetryBackoff time.Duration
	// RetryBackoffMax is retry.backoff.max.ms; default 1 s.
	RetryBackoffMax time.Duration
	// Compression is compression.type; default none.
	Compression sarama.CompressionCodec
	// Logger logs retries and failures; nil means slog.Default().
	Logger *slog.Logger
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// Record is one record to send.
type Record struct {
	// Topic is the destination topic.
	Topic string
	// Partition is the destination partition, or -1 for Java's default partitioner: murmur2
	// of the key, or for a null key a partition kept until its batch is sent (KIP-794).
	Partition int32
	// Key and Value are the serialized key and value; nil is null. Send copies them.
	Key, Value []byte
	// Timestamp is the record timestamp in ms.
	Timestamp int64
	// Headers are the record headers; Send copies them.
	Headers []Header
	// Source is the caller's note about the record, kept (not copied, not sent) until the
	// record's outcome and handed back with it by Failures; nil for none.
	Source any
}

// Failure is a record the producer could not deliver, handed to [Producer.Failures]' caller.
type Failure struct {
	// Record is the record as sent (its bytes are the producer's copy).
	Record Record
	// Err is why: the broker's error code (a sarama.KError), ErrDeliveryTimeout, ...
	Err error
}

// Errors of the producer.
var (
	// ErrFenced: another producer with the same transactional.id initialised a newer epoch
	// (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH): this producer is a zombie. Java:
	// ProducerFencedException; Kafka Streams: TaskMigratedException.
	ErrFenced = errors.New("produce: producer fenced by a newer instance with the same transactional.id")
	// ErrAbortable: the open transaction cannot commit (a batch failed, a partition could not be
	// added); abort it. Java: the transaction manager's abortable error state.
	ErrAbortable = errors.New("produce: the transaction must be aborted")
	// ErrDeliveryTimeout: a record was not acknowledged within delivery.timeout.ms.
	ErrDeliveryTimeout = errors.New("produce: record not acknowledged within delivery.timeout.ms")
	// ErrNoTransaction: a transactional producer was asked to send outside a transaction.
	ErrNoTransaction = errors.New("produce: no open transaction (call Begin first)")
	// ErrAborted is the failure of records dropped because their transaction was aborted.
	ErrAborted = errors.New("produce: transaction aborted")
)

// FatalError is an error after which the producer can do nothing but be closed: fencing,
// authorization of the transactional id or cluster, an invalid configuration the broker
// rejects. Unwrap gives the cause (errors.Is(err, ErrFenced) for fencing).
type FatalError struct {
	// Op is what failed.
	Op  string
	Err error
}

// Error implements error.
func (e *FatalError) Error() string { return "produce: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *FatalError) Unwrap() error { return e.Err }

// Producer sends records in batches. Send, Flush, Begin, SendOffsets, Commit, Abort and
// Failures are called by one goroutine (the stream thread); the sender goroutine and the
// connections' response goroutines run beside it.
type Producer struct {
	cfg  Config
	cl   *kafka.Cluster
	log  *slog.Logger
	conn kafka.Purpose
	txnP kafka.Purpose

	mu sync.Mutex
	// topics are the accumulators by topic; a topic's entry is never replaced or removed.
	topics map[string]*topicState
	// lastTopic is the topic Send routed last: runs of records to one topic (a sub-topology's
	// sink) find it without hashing the topic's name.
	lastTopic *topicState
	// pid and epoch identify the producer (-1 without idempotence).
	pid   int64
	epoch int16
	// fatal is set by fencing and other errors after which nothing works.
	fatal error
	// failures are failed records not yet taken by Failures.
	failures []Failure
	// unfinished counts batches that hold records and have no final outcome yet.
	unfinished int
	// flushing counts Flush calls in progress: open batches are sent without lingering.
	flushing int
	drained  []chan struct{}
	// nodes are the per-broker request counts.
	nodes map[int32]*nodeState
	// reset is set when the sequence numbers must start over under a new producer id
	// (idempotent producer after a failed batch or an OUT_OF_ORDER_SEQUENCE the producer did
	// not cause; KIP-360).
	reset bool
	// stale are topics whose metadata the sender refreshes before routing them again.
	stale map[string]bool
	// broken are connections whose request failed on the wire; the sender discards them.
	broken []brokenConn
	// needLeaders: a partition with records has no known leader; the sender looks it up.
	needLeaders bool

	txn txnState

	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	closed  bool
	// free are emptied batches for reuse; encFree the record buffers of batches whose
	// request was written (sender goroutine only).
	free    []*batch
	encFree []*encBuf
}

type brokenConn struct {
	node kafka.Node
	b    *sarama.Broker
}

type nodeState struct {
	node     kafka.Node
	inflight int
}

type topicState struct {
	name  string
	parts []*partState
	// sticky is the partition records with null keys go to until its batch is closed.
	sticky int32
}

type partState struct {
	tp kafka.TopicPartition
	// open is the batch being filled; queue the closed batches not sent yet (retried batches
	// go back to their place by sequence number); inflight the batches sent, by sequence.
	open     *batch
	queue    []*batch
	inflight []*batch
	// nextSeq is the next sequence number (wrapping after Integer.MAX_VALUE); nextOrder counts
	// the batches sent, which orders them where sequence numbers may wrap.
	nextSeq   int32
	nextOrder int64
	// retrying: a batch failed and waits to be resent: the partition sends one batch at a time
	// until it went through, so that the broker sees the sequence numbers in order.
	retrying bool
	retryAt  time.Time
	// confirmed: a batch under the current producer id and epoch was acknowledged. Until then
	// the partition sends one batch at a time: a broker with no state for the producer accepts
	// any first sequence number, so a later batch could be written first while the first one
	// is being retried, and the first would then be out of order (KAFKA-15591).
	confirmed bool
	acked     int64
	// inTxn: added to the open transaction (AddPartitionsToTxn answered).
	inTxn bool
	// leader is the partition's leader when leaderOK; the sender looks it up outside p.mu
	// and forgets it after a metadata refresh of the topic.
	leader   kafka.Node
	leaderOK bool
}

// New creates a producer and, when it is idempotent or transactional, initialises its producer
// id (InitProducerId; with a transactional.id this fences any older producer with the same id
// and aborts its open transaction). Errors: an invalid Config, ctx's, the broker's (a
// *FatalError for authorization and fencing).
func New(ctx context.Context, cfg Config) (*Producer, error) {
	if cfg.Cluster == nil {
		return nil, errors.New("produce: Config.Cluster is required")
	}
	if cfg.TransactionalID != "" {
		cfg.NoIdempotence = false
	}
	if cfg.Acks == 0 {
		cfg.Acks = AcksAll
	}
	if !cfg.NoIdempotence && cfg.Acks != AcksAll {
		return nil, errors.New("produce: idempotence needs acks=all")
	}
	if cfg.TransactionTimeout <= 0 {
		cfg.TransactionTimeout = 60 * time.Second
	}
	if cfg.Linger == 0 {
		cfg.Linger = 5 * time.Millisecond
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 16384
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 5
	}
	if !cfg.NoIdempotence && cfg.MaxInFlight > 5 {
		return nil, fmt.Errorf("produce: max.in.flight.requests.per.connection %d: at most 5 with idempotence", cfg.MaxInFlight)
	}
	if cfg.MaxRequestSize <= 0 {
		cfg.MaxRequestSize = 1 << 20
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.DeliveryTimeout <= 0 {
		cfg.DeliveryTimeout = 120 * time.Second
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 100 * time.Millisecond
	}
	if cfg.RetryBackoffMax <= 0 {
		cfg.RetryBackoffMax = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	base := cfg.Cluster.Config().Net.ReadTimeout
	p := &Producer{cfg: cfg, cl: cfg.Cluster, log: cfg.Logger, pid: -1, epoch: -1,
		conn:   kafka.Purpose{Name: "produce", ClientID: cfg.ClientID, MaxOpenRequests: cfg.MaxInFlight, ReadTimeout: max(base, cfg.RequestTimeout+5*time.Second)},
		txnP:   kafka.Purpose{Name: "txn", ClientID: cfg.ClientID},
		topics: map[string]*topicState{}, nodes: map[int32]*nodeState{}, stale: map[string]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	if !cfg.NoIdempotence {
		if err := p.initProducerID(ctx); err != nil {
			return nil, err
		}
	}
	go p.sender()
	return p, nil
}

// Transactional reports whether the producer has a transactional.id.
func (p *Producer) Transactional() bool { return p.cfg.TransactionalID != "" }

// ProducerID returns the producer id and epoch (-1, -1 without idempotence).
func (p *Producer) ProducerID() (int64, int16) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid, p.epoch
}

// Send appends r to its partition's batch; the sender ships the batch once it is full, its
// linger time passed, or a Flush asks. It copies r's bytes. Errors: the producer's fatal error,
// ErrNoTransaction, a topic that does not exist (wrapped sarama.ErrUnknownTopicOrPartition),
// a partition out of range. A record that fails later is reported by Failures (and by Flush).
func (p *Producer) Send(r Record) error {
	p.mu.Lock()
	if p.fatal != nil {
		err := p.fatal
		p.mu.Unlock()
		return err
	}
	if p.closed {
		p.mu.Unlock()
		return kafka.ErrClosed
	}
	if p.Transactional() {
		switch p.txn.state {
		case txnOpen:
		case txnAbortable:
			err := p.txn.err
			p.mu.Unlock()
			return err
		default:
			p.mu.Unlock()
			return ErrNoTransaction
		}
	}
	ts := p.lastTopic
	if ts == nil || ts.name != r.Topic {
		ts = p.topics[r.Topic]
	}
	if ts == nil {
		p.mu.Unlock()
		n, err := p.cl.Partitions(r.Topic)
		if err != nil {
			return err
		}
		if n <= 0 {
			return fmt.Errorf("produce: topic %s has no partitions: %w", r.Topic, sarama.ErrUnknownTopicOrPartition)
		}
		p.mu.Lock()
		if ts = p.topics[r.Topic]; ts == nil {
			ts = &topicState{name: r.Topic, parts: make([]*partState, n), sticky: -1}
			for i := range ts.parts {
				ts.parts[i] = &partState{tp: kafka.TopicPartition{Topic: r.Topic, Partition: int32(i)}, acked: -1}
			}
			p.topics[r.Topic] = ts
		}
	}
	p.lastTopic = ts
	n := int32(len(ts.parts))
	part := r.Partition
	switch {
	case part >= n:
		p.mu.Unlock()
		return fmt.Errorf("produce: partition %d of topic %s does not exist (%d partitions): %w", part, r.Topic, n, sarama.ErrUnknownTopicOrPartition)
	case part >= 0:
	case r.Key != nil:
		part = kafka.KeyPartition(r.Key, n)
	default:
		if ts.sticky < 0 {
			ts.sticky = rand.Int32N(n)
		}
		part = ts.sticky
	}
	ps := ts.parts[part]
	size := recordSize(&r)
	b := ps.open
	if b != nil && b.n > 0 && b.bytes+size > p.cfg.BatchSize {
		p.closeOpen(ts, ps)
		b = nil
	}
	wakeSender := false
	if b == nil {
		b = p.newBatch(ps.tp, size)
		ps.open = b
		p.unfinished++
		wakeSender = true // the sender sets its linger timer
	}
	b.add(&r, size)
	if b.bytes >= p.cfg.BatchSize {
		p.closeOpen(ts, ps)
		wakeSender = true
	}
	p.mu.Unlock()
	if wakeSender {
		p.signal()
	}
	return nil
}

// closeOpen moves ps's open batch to its queue; a null-key topic's sticky partition moves on.
// p.mu held.
func (p *Producer) closeOpen(ts *topicState, ps *partState) {
	if b := ps.open; b != nil {
		ps.open = nil
		ps.queue = append(ps.queue, b)
		if ts.sticky == ps.tp.Partition && len(ts.parts) > 1 {
			next := rand.Int32N(int32(len(ts.parts)) - 1)
			if next >= ts.sticky {
				next++
			}
			ts.sticky = next
		}
	}
}

func (p *Producer) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Flush sends every record handed to Send and waits until each has its outcome. It returns the
// producer's fatal error, the transaction's abortable error, ctx's error, or nil: the failed
// records (if any) are then reported by Failures. Java: KafkaProducer.flush.
func (p *Producer) Flush(ctx context.Context) error {
	p.mu.Lock()
	if p.unfinished == 0 {
		err := p.stateErr()
		p.mu.Unlock()
		return err
	}
	p.flushing++
	done := make(chan struct{})
	p.drained = append(p.drained, done)
	p.mu.Unlock()
	p.signal()
	var err error
	select {
	case <-done:
	case <-p.stopped:
		err = kafka.ErrClosed
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.mu.Lock()
	p.flushing--
	if err == nil {
		err = p.stateErr()
	}
	p.mu.Unlock()
	return err
}

// stateErr is the fatal or abortable error; p.mu held.
func (p *Producer) stateErr() error {
	if p.fatal != nil {
		return p.fatal
	}
	if p.txn.state == txnAbortable {
		return p.txn.err
	}
	return nil
}

// Failures returns the records that failed since the last call, in the order their batches
// failed, and forgets them.
func (p *Producer) Failures() []Failure {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.failures
	p.failures = nil
	return f
}

// Acked returns the offset of the last acknowledged record of tp, -1 when none was.
func (p *Producer) Acked(tp kafka.TopicPartition) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ts := p.topics[tp.Topic]; ts != nil && int(tp.Partition) < len(ts.parts) {
		return ts.parts[tp.Partition].acked
	}
	return -1
}

// Pending returns the number of batches that hold records without an outcome yet.
func (p *Producer) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unfinished
}

// Close stops the sender. Records without an outcome are dropped (Flush first to keep them);
// an open transaction is left to the broker to abort at its timeout (Abort first to end it).
func (p *Producer) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.stopped
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	<-p.stopped
	return nil
}

// recordSize estimates the encoded size of r in a v2 batch (Java: DefaultRecord.sizeInBytes
// plus a margin for the varints).
func recordSize(r *Record) int {
	n := len(r.Key) + len(r.Value) + 21
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value) + 10
	}
	return n
}

// batch is one partition's batch of records. Records are kept compactly: their bytes in one
// arena, and per record its place there and its timestamp (recMeta, 24 bytes). The sarama
// records the request encoding needs (112 bytes each, plus a pointer) exist only while a
// request is built and written (Producer.encodeRecords to Producer.written): a batch waiting
// for its turn or for the broker's answer costs about its encoded size, as a batch in Java's
// RecordAccumulator does, not four to five times that.
type batch struct {
	tp    kafka.TopicPartition
	meta  []recMeta
	hdrs  []hdrMeta
	arena []byte
	// srcs are the records' Source notes, allocated at the first record that has one.
	srcs  []any
	n     int
	bytes int
	// first and maxTS are the first record's and the largest timestamp (ms).
	firstTS, maxTS int64
	created        time.Time
	// rb is built by prepare for a send and dropped once the request is written (enc holds
	// its records, given by encodeRecords, meanwhile); seq is the batch's first sequence number (-1 before its first
	// send) and order its place among the partition's batches sent.
	rb       *sarama.RecordBatch
	enc      *encBuf
	seq      int32
	order    int64
	epoch    int16
	attempts int
	lastErr  error
	// txnGen is the transaction the batch belongs to.
	txnGen uint64
}

// recMeta is one record of a batch: its key at arena[off:off+keyLen], its value right after the
// key, its headers hdrs[h:hdrEnd] where h is the previous record's hdrEnd (0 for the first).
type recMeta struct {
	// tsDelta is the timestamp in ms after the batch's first record's.
	tsDelta int64
	off     int32
	// keyLen and valLen are -1 for null.
	keyLen, valLen int32
	hdrEnd         int32
}

// hdrMeta is a record header: its key at arena[off:off+keyLen], its value right after it
// (valLen -1 for a null value).
type hdrMeta struct {
	off, keyLen, valLen int32
}

// encBuf holds the sarama records of a batch while its request is encoded.
type encBuf struct {
	recs []sarama.Record
	ptrs []*sarama.Record
}

// newBatch returns an empty batch for tp with room for at least size bytes; p.mu held.
func (p *Producer) newBatch(tp kafka.TopicPartition, size int) *batch {
	var b *batch
	if n := len(p.free); n > 0 && cap(p.free[n-1].arena) >= size {
		b = p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	} else {
		b = &batch{arena: make([]byte, 0, max(p.cfg.BatchSize, size)), meta: make([]recMeta, 0, 64)}
	}
	b.tp, b.created, b.seq, b.txnGen = tp, time.Now(), -1, p.txn.gen
	return b
}

// add appends r (size its estimate) to b, copying its bytes into b's arena.
func (b *batch) add(r *Record, size int) {
	if b.n == 0 {
		b.firstTS, b.maxTS = r.Timestamp, r.Timestamp
	} else if r.Timestamp > b.maxTS {
		b.maxTS = r.Timestamp
	}
	m := recMeta{tsDelta: r.Timestamp - b.firstTS, off: int32(len(b.arena)), keyLen: -1, valLen: -1}
	if r.Key != nil {
		m.keyLen = int32(len(r.Key))
		b.arena = append(b.arena, r.Key...)
	}
	if r.Value != nil {
		m.valLen = int32(len(r.Value))
		b.arena = append(b.arena, r.Value...)
	}
	for _, h := range r.Headers {
		hm := hdrMeta{off: int32(len(b.arena)), keyLen: int32(len(h.Key)), valLen: -1}
		b.arena = append(b.arena, h.Key...)
		if h.Value != nil { // a null header value stays null
			hm.valLen = int32(len(h.Value))
			b.arena = append(b.arena, h.Value...)
		}
		b.hdrs = append(b.hdrs, hm)
	}
	m.hdrEnd = int32(len(b.hdrs))
	b.meta = append(b.meta, m)
	if r.Source != nil || b.srcs != nil {
		if b.srcs == nil {
			b.srcs = make([]any, b.n, b.n+1)
		}
		b.srcs = append(b.srcs, r.Source)
	}
	b.n++
	b.bytes += size
}

// bytesAt returns arena[off:off+n] (nil for n -1, not nil for 0), capped so that an append
// to it cannot write into the arena.
func (b *batch) bytesAt(off, n int32) []byte {
	if n < 0 {
		return nil
	}
	return b.arena[off : off+n : off+n]
}

// key, value and headers of the i-th record (views of the arena).
func (b *batch) key(m *recMeta) []byte { return b.bytesAt(m.off, m.keyLen) }
func (b *batch) value(m *recMeta) []byte {
	return b.bytesAt(m.off+max(m.keyLen, 0), m.valLen)
}
func (b *batch) headers(i int) []hdrMeta {
	from := int32(0)
	if i > 0 {
		from = b.meta[i-1].hdrEnd
	}
	return b.hdrs[from:b.meta[i].hdrEnd]
}

// record returns the i-th record as a Record of the producer's copy.
func (b *batch) record(i int) Record {
	m := &b.meta[i]
	out := Record{Topic: b.tp.Topic, Partition: b.tp.Partition, Key: b.key(m), Value: b.value(m),
		Timestamp: b.firstTS + m.tsDelta}
	if b.srcs != nil {
		out.Source = b.srcs[i]
	}
	for _, h := range b.headers(i) {
		out.Headers = append(out.Headers, Header{Key: string(b.bytesAt(h.off, h.keyLen)), Value: b.bytesAt(h.off+h.keyLen, h.valLen)})
	}
	return out
}

// encode fills e with b's records as sarama records (pointing into b's arena) for the request
// encoding.
func (b *batch) encode(e *encBuf) {
	e.recs = slices.Grow(e.recs[:0], b.n)[:b.n]
	e.ptrs = slices.Grow(e.ptrs[:0], b.n)[:b.n]
	for i := range b.meta {
		m := &b.meta[i]
		rec := &e.recs[i]
		*rec = sarama.Record{OffsetDelta: int64(i), TimestampDelta: time.Duration(m.tsDelta) * time.Millisecond,
			Key: b.key(m), Value: b.value(m)}
		if hs := b.headers(i); len(hs) > 0 {
			rec.Headers = make([]*sarama.RecordHeader, len(hs))
			for j, h := range hs {
				rec.Headers[j] = &sarama.RecordHeader{Key: b.bytesAt(h.off, h.keyLen), Value: b.bytesAt(h.off+h.keyLen, h.valLen)}
			}
		}
		e.ptrs[i] = rec
	}
}

// recycle keeps b's memory for a later batch; p.mu held.
func (p *Producer) recycle(b *batch) {
	if len(p.free) >= 64 || cap(b.arena) > 4*p.cfg.BatchSize {
		return
	}
	*b = batch{arena: b.arena[:0], meta: b.meta[:0], hdrs: b.hdrs[:0]}
	p.free = append(p.free, b)
}
