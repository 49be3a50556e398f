// Package fetch is a stream thread's batch-level fetcher: one goroutine per partition leader
// sends Fetch requests covering every fetchable partition that broker leads, in an
// incremental fetch session (KIP-227), and decodes each partition's record batches straight
// into one [Chunk]. The requests are its own (Fetch v11, internal/kafka/recordbatch) on a
// connection of its own (streamsgroup.Conn), and the records are decoded straight from the
// response, their keys, values and header values aliasing it; when the connection settings
// need sarama's connections (a proxy, a local address, SASL GSSAPI) or the broker does not
// answer Fetch v11, sarama's Fetch v12 is sent instead. The stream thread takes the chunks with
// [Fetcher.Poll]; a partition is fetched again only once its chunk was taken, so at most one
// undelivered chunk per partition is held (Java's consumer likewise leaves partitions with
// buffered records out of its fetches).
//
// It replaces sarama's Consumer, whose goroutines and channels per partition and per message
// cost more CPU than the processing. Java counterpart: the fetching half of
// KafkaConsumer (AbstractFetch, FetchSessionHandler, CompletedFetch, SubscriptionState's
// positions and offset resets).
package fetch

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// ResetPolicy is auto.offset.reset: where a partition without a valid position starts.
type ResetPolicy int8

const (
	// Earliest starts at the log start offset (Java: "earliest", Kafka Streams' default and
	// the zero value here).
	Earliest ResetPolicy = iota
	// Latest starts at the end: the high watermark, or under ReadCommitted the last stable
	// offset (Java: "latest", the plain consumer's default).
	Latest
	// None does not reset: the partition gets a [Chunk] whose Err wraps [ErrNoOffset] (no
	// start offset) or [ErrOffsetOutOfRange] (Java: "none", which throws
	// NoOffsetForPartitionException or OffsetOutOfRangeException from poll).
	None
)

// String returns the Java property value: "earliest", "latest" or "none".
func (r ResetPolicy) String() string {
	switch r {
	case Earliest:
		return "earliest"
	case Latest:
		return "latest"
	case None:
		return "none"
	}
	return fmt.Sprintf("ResetPolicy(%d)", int8(r))
}

// Defaults of the Config fields, the Java consumer's.
const (
	DefaultMaxWait           = 500 * time.Millisecond // fetch.max.wait.ms
	DefaultMinBytes          = 1                      // fetch.min.bytes
	DefaultMaxBytes          = 50 << 20               // fetch.max.bytes, 52428800
	DefaultPartitionMaxBytes = 1 << 20                // max.partition.fetch.bytes, 1048576
	DefaultRetryBackoff      = 100 * time.Millisecond // retry.backoff.ms
	DefaultRetryBackoffMax   = time.Second            // retry.backoff.max.ms
	DefaultName              = "fetch"
)

// Config configures a [Fetcher]. Zero values take the defaults given.
type Config struct {
	// Cluster gives metadata and connections. Required; the Fetcher does not close it.
	Cluster *kafka.Cluster
	// Name is the kafka.Purpose name of the fetch connections; default "fetch". A Cluster
	// keeps one connection per broker and name, and a long-polling fetch holds its
	// connection, so two Fetchers on one Cluster need different names.
	Name string
	// ClientID is the client.id of the fetch connections; "" keeps the cluster's. Java
	// names a stream thread's consumer <client.id>-StreamThread-<n>-consumer.
	ClientID string
	// Isolation is isolation.level: ReadCommitted (Kafka Streams under exactly-once) returns
	// only committed transactional records, up to the last stable offset. Default
	// ReadUncommitted.
	Isolation kafka.IsolationLevel
	// MaxWait is fetch.max.wait.ms: how long the broker may hold a fetch that has less than
	// MinBytes to return. Default 500 ms; the fetch connections' read timeout is MaxWait
	// plus the cluster's Net.ReadTimeout. Close may wait for one MaxWait.
	MaxWait time.Duration
	// MinBytes is fetch.min.bytes: the bytes a fetch waits for (up to MaxWait). Default 1.
	MinBytes int32
	// MaxBytes is fetch.max.bytes: the bytes of one fetch response, in bytes (the broker
	// still returns the first batch of the first partition with data if it is larger).
	// Default 50 MiB.
	MaxBytes int32
	// PartitionMaxBytes is max.partition.fetch.bytes: the bytes per partition of one fetch
	// response. Default 1 MiB. When a partition with data keeps coming back empty (its next
	// batch is larger), the Fetcher doubles it for that partition, up to MaxBytes, and logs.
	PartitionMaxBytes int32
	// Reset is auto.offset.reset for partitions assigned at kafka.OffsetUnknown and for
	// OFFSET_OUT_OF_RANGE. Default Earliest, Kafka Streams' default.
	Reset ResetPolicy
	// RetryBackoff is retry.backoff.ms: the first pause after a failed request or a
	// partition error, doubled per consecutive failure up to RetryBackoffMax. Default 100 ms.
	RetryBackoff time.Duration
	// RetryBackoffMax is retry.backoff.max.ms. Default 1 s.
	RetryBackoffMax time.Duration
	// Notify is called from a fetch goroutine when chunks became ready for Poll. It must
	// not block and must not call the Fetcher. Optional.
	Notify func()
	// Logger logs connection trouble, resets and leader moves; nil means slog.Default().
	Logger *slog.Logger
}

// Record is one record of a chunk.
type Record struct {
	// Offset is the record's offset.
	Offset int64
	// Timestamp is in ms since the epoch: the record's CreateTime, or the batch's max
	// timestamp for LogAppendTime batches (-1 when the producer sent none).
	Timestamp int64
	// Key and Value are nil for null. They point into the fetch response's buffer (or a
	// compressed batch's decompressed records), which is not reused: they may be kept after
	// Recycle, and must not be modified. Header values likewise.
	Key, Value []byte
	// Headers are the record headers in order; nil when there are none.
	Headers []Header
	// LeaderEpoch is the partition leader epoch of the record's batch (-1 unknown).
	LeaderEpoch int32
}

// Header is a record header. Value is nil for null.
type Header struct {
	Key   string
	Value []byte
}

// Chunk is what one fetch response brought for one partition.
type Chunk struct {
	// TP is the partition.
	TP kafka.TopicPartition
	// Records are the deliverable records at offsets >= the fetch position, in offset
	// order: no control batches (transaction markers); under ReadCommitted no records of
	// aborted transactions. May be empty when the response held only markers or aborted
	// records: Next still moves.
	Records []Record
	// Next is the position after this chunk: the next offset to fetch, past control
	// batches and aborted records. For an error chunk, the position at the failure.
	Next int64
	// HighWatermark, LastStableOffset and LogStartOffset are the partition's, as the
	// response reported them (-1 unknown).
	HighWatermark, LastStableOffset, LogStartOffset int64
	// Err is non-nil when the partition can no longer be fetched: a *PartitionError
	// wrapping ErrNoOffset or ErrOffsetOutOfRange (Reset None), ErrInvalidOffset, an
	// authorization error (sarama.ErrTopicAuthorizationFailed, ...) or another error the
	// broker gave. Its fetching stops until Seek. An error chunk has no Records.
	Err error
}

// Sentinel errors of error chunks (wrapped in a *PartitionError).
var (
	// ErrNoOffset: the partition was assigned (or sought) at kafka.OffsetUnknown and
	// Config.Reset is None. Java: NoOffsetForPartitionException.
	ErrNoOffset = errors.New("fetch: no offset to start from and auto.offset.reset is none")
	// ErrOffsetOutOfRange: the broker answered OFFSET_OUT_OF_RANGE (the position is before
	// the log start or after the end) and Config.Reset is None. Java:
	// OffsetOutOfRangeException.
	ErrOffsetOutOfRange = errors.New("fetch: offset out of range and auto.offset.reset is none")
	// ErrInvalidOffset: Assign or Seek was given a negative offset other than
	// kafka.OffsetUnknown.
	ErrInvalidOffset = errors.New("fetch: invalid offset")
	// ErrUnsupportedFormat: the partition holds messages in the legacy formats v0/v1, which
	// Kafka 4 no longer writes and this fetcher does not decode.
	ErrUnsupportedFormat = errors.New("fetch: legacy message format (v0/v1) not supported")
)

// PartitionError is the Err of an error chunk: which partition failed at which position, and
// why. errors.Is(err, ErrOffsetOutOfRange), errors.Is(err, sarama.ErrTopicAuthorizationFailed)
// and errors.As(err, &*PartitionError) work on it.
type PartitionError struct {
	// TP is the partition.
	TP kafka.TopicPartition
	// Offset is the fetch position when it failed (kafka.OffsetUnknown if none).
	Offset int64
	// Err is the cause.
	Err error
}

func (e *PartitionError) Error() string {
	return fmt.Sprintf("fetch %s at offset %d: %v", e.TP, e.Offset, e.Err)
}

func (e *PartitionError) Unwrap() error { return e.Err }

// Stats counts what the Fetcher did since New. All counts are totals over every broker.
type Stats struct {
	// FullRequests are Fetch requests that listed every partition: the first of a session,
	// one after an error, or (through sarama's Fetch, which cannot name forgotten
	// partitions) a session restarted because a partition had to leave it (paused with a
	// chunk held, unassigned, moved).
	FullRequests int64
	// IncrementalRequests are Fetch requests in an incremental session (KIP-227), listing
	// only partitions added or changed since the last request, and those leaving it.
	IncrementalRequests int64
	// SessionErrors are responses with FETCH_SESSION_ID_NOT_FOUND or
	// INVALID_FETCH_SESSION_EPOCH (the next request is full).
	SessionErrors int64
	// RequestErrors are Fetch and ListOffsets requests that failed without a response
	// (connection refused, EOF, timeout): the connection is discarded and retried.
	RequestErrors int64
	// Chunks and Records are what the responses brought (chunks made, records in them).
	Chunks, Records int64
	// Resets are partition positions set by auto.offset.reset (ListOffsets).
	Resets int64
}

type counters struct {
	full, incremental, sessionErrors, requestErrors, chunks, records, resets atomic.Int64
}

// Fetcher fetches the assigned partitions from their leaders. Poll, Assign, Unassign, Seek,
// Pause, Resume and Position are for one goroutine (the stream thread); Lag and Stats are safe
// from any goroutine; the fetch goroutines run beside them: one per leader broker (its fetch
// loop, with its own connection and fetch session) and one router that looks up leaders in
// the metadata.
//
// A loop sends its next request once every partition it could fetch is fetchable: while a
// chunk of a partition that is not paused waits for Poll, the loop waits for that Poll
// rather than send a long poll without the partition (which would hold the partition back up
// to MaxWait after the stream thread took its chunk, and make the session leave and rejoin
// it). Partitions with a chunk held back by Pause, partitions in a retry backoff and failed
// ones are simply left out.
type Fetcher struct {
	cfg     Config
	log     *slog.Logger
	purpose kafka.Purpose
	stats   counters

	mu       sync.Mutex
	parts    map[kafka.TopicPartition]*part
	unrouted map[kafka.TopicPartition]*part // assigned, leader not known
	checks   map[*loop]bool                 // loops whose leaders the router should re-check
	loops    map[kafka.Node]*loop
	ready    []*part // parts with a chunk (or a withheld one); may hold stale entries
	started  bool
	closed   bool
	pollBuf  []Chunk

	routeWake chan struct{}
	done      chan struct{}
	wg        sync.WaitGroup

	// free are record slices handed back by Recycle, for the next chunks.
	freeMu sync.Mutex
	free   [][]Record
}

// maxFreeRecords bounds the record slices Recycle keeps.
const maxFreeRecords = 16

// Recycle hands back the records of a polled chunk once the caller is done with them (it has
// copied what it needs): the next chunks are decoded into that memory instead of a new slice.
// Optional; the records must not be used afterwards. Safe from any goroutine.
func (f *Fetcher) Recycle(recs []Record) {
	if cap(recs) == 0 {
		return
	}
	clear(recs) // let the response buffers the records point into go
	f.freeMu.Lock()
	if len(f.free) < maxFreeRecords {
		f.free = append(f.free, recs[:0])
	}
	f.freeMu.Unlock()
}

// takeRecords returns a recycled record slice, or nil.
func (f *Fetcher) takeRecords() []Record {
	f.freeMu.Lock()
	defer f.freeMu.Unlock()
	if n := len(f.free); n > 0 {
		r := f.free[n-1]
		f.free[n-1] = nil
		f.free = f.free[:n-1]
		return r
	}
	return nil
}

// part is one assigned partition. Every field is guarded by Fetcher.mu.
type part struct {
	tp  kafka.TopicPartition
	pos int64 // fetch position (= Position): kafka.OffsetUnknown while a reset is pending

	loop        *loop // the leader's loop; nil while unrouted
	leaderEpoch int32
	refresh     bool // refresh the metadata before routing
	attempts    int  // consecutive failures, for the backoff
	retryAt     time.Time

	paused bool
	failed bool // an error chunk was made: not fetched until Seek
	ready  bool // chunk holds an undelivered chunk
	listed bool // p is in Fetcher.ready
	chunk  Chunk

	maxBytes          int32
	hw, lso, logStart int64
	stalls            int  // responses in a row without progress while the end was ahead
	stallLogged       bool // the no-progress error was logged
}

// New validates cfg and returns a Fetcher with nothing assigned. It starts no goroutine
// before the first Assign. Errors: a missing Cluster, a negative duration or size, an unknown
// Isolation or Reset.
func New(cfg Config) (*Fetcher, error) {
	if cfg.Cluster == nil {
		return nil, errors.New("fetch: Config.Cluster is required")
	}
	switch {
	case cfg.MaxWait < 0:
		return nil, fmt.Errorf("fetch: MaxWait (fetch.max.wait.ms) %v is negative", cfg.MaxWait)
	case cfg.MinBytes < 0:
		return nil, fmt.Errorf("fetch: MinBytes (fetch.min.bytes) %d is negative", cfg.MinBytes)
	case cfg.MaxBytes < 0:
		return nil, fmt.Errorf("fetch: MaxBytes (fetch.max.bytes) %d is negative", cfg.MaxBytes)
	case cfg.PartitionMaxBytes < 0:
		return nil, fmt.Errorf("fetch: PartitionMaxBytes (max.partition.fetch.bytes) %d is negative", cfg.PartitionMaxBytes)
	case cfg.RetryBackoff < 0 || cfg.RetryBackoffMax < 0:
		return nil, fmt.Errorf("fetch: RetryBackoff %v / RetryBackoffMax %v is negative", cfg.RetryBackoff, cfg.RetryBackoffMax)
	case cfg.Isolation != kafka.ReadUncommitted && cfg.Isolation != kafka.ReadCommitted:
		return nil, fmt.Errorf("fetch: unknown Isolation %d", cfg.Isolation)
	case cfg.Reset != Earliest && cfg.Reset != Latest && cfg.Reset != None:
		return nil, fmt.Errorf("fetch: unknown Reset %d", cfg.Reset)
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.MinBytes == 0 {
		cfg.MinBytes = DefaultMinBytes
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.PartitionMaxBytes == 0 {
		cfg.PartitionMaxBytes = DefaultPartitionMaxBytes
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = DefaultRetryBackoff
	}
	if cfg.RetryBackoffMax == 0 {
		cfg.RetryBackoffMax = DefaultRetryBackoffMax
	}
	cfg.RetryBackoffMax = max(cfg.RetryBackoffMax, cfg.RetryBackoff)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	f := &Fetcher{
		cfg: cfg,
		log: cfg.Logger,
		purpose: kafka.Purpose{
			Name:        cfg.Name,
			ClientID:    cfg.ClientID,
			ReadTimeout: cfg.MaxWait + cfg.Cluster.Config().Net.ReadTimeout,
		},
		parts:     map[kafka.TopicPartition]*part{},
		unrouted:  map[kafka.TopicPartition]*part{},
		checks:    map[*loop]bool{},
		loops:     map[kafka.Node]*loop{},
		routeWake: make(chan struct{}, 1),
		done:      make(chan struct{}),
	}
	return f, nil
}

// Assign adds partitions, each starting at its offset. kafka.OffsetUnknown (-1) means "no
// committed offset": the position is reset by Config.Reset (ListOffsets earliest or latest,
// the last stable offset under ReadCommitted); with None the partition gets an error chunk
// wrapping ErrNoOffset. Another negative offset gives an error chunk wrapping
// ErrInvalidOffset (ready at the next Poll; Notify is not called from Assign). Partitions
// already assigned keep their position. Java: KafkaConsumer.assign (incrementally) plus seek.
func (f *Fetcher) Assign(start map[kafka.TopicPartition]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	added := false
	for tp, off := range start {
		if f.parts[tp] != nil {
			continue
		}
		p := &part{tp: tp, pos: off, leaderEpoch: -1, maxBytes: f.cfg.PartitionMaxBytes, hw: -1, lso: -1, logStart: -1}
		f.parts[tp] = p
		f.unrouted[tp] = p
		if off < kafka.OffsetUnknown {
			p.pos = kafka.OffsetUnknown
			f.failLocked(p, fmt.Errorf("%w: start offset %d", ErrInvalidOffset, off))
		}
		added = true
	}
	if !added {
		return
	}
	if !f.started {
		f.started = true
		f.wg.Add(1)
		go f.route()
	}
	signal(f.routeWake)
}

// Unassign stops fetching tps and drops their undelivered chunks; a response in flight for
// them is discarded. Unknown partitions are ignored. Java: KafkaConsumer.assign without them.
func (f *Fetcher) Unassign(tps ...kafka.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, tp := range tps {
		p := f.parts[tp]
		if p == nil {
			continue
		}
		delete(f.parts, tp)
		delete(f.unrouted, tp)
		p.ready, p.chunk = false, Chunk{}
		if p.loop != nil {
			delete(p.loop.parts, tp)
			signal(p.loop.wake)
			p.loop = nil
		}
	}
}

// Seek drops tp's undelivered chunk (and any response in flight for it) and makes offset
// its position: the next fetch starts there. kafka.OffsetUnknown resets the position by
// Config.Reset. Seek also restarts a partition stopped by an error chunk. A partition not
// assigned is ignored (logged). Java: KafkaConsumer.seek.
func (f *Fetcher) Seek(tp kafka.TopicPartition, offset int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.parts[tp]
	if p == nil {
		f.log.Warn("fetch: seek on a partition not assigned", "partition", tp.String(), "offset", offset)
		return
	}
	p.ready, p.chunk = false, Chunk{}
	p.failed = false
	p.pos = offset
	p.attempts, p.retryAt = 0, time.Time{}
	p.stalls, p.stallLogged = 0, false
	if offset < kafka.OffsetUnknown {
		p.pos = kafka.OffsetUnknown
		f.failLocked(p, fmt.Errorf("%w: seek to %d", ErrInvalidOffset, offset))
	}
	f.wakeLocked(p)
}

// Pause holds tp's chunks back from Poll until Resume (Java: KafkaConsumer.pause, whose poll
// returns no records of paused partitions). Unlike Java's consumer, which stops fetching a
// paused partition, the Fetcher still fetches it until it holds one chunk: so a partition
// paused because its queue is full has its next chunk ready the moment it is resumed, instead
// of waiting for a fetch that may queue behind a long poll of the other partitions (up to
// MaxWait). That bounds what a paused partition holds to one chunk (PartitionMaxBytes).
// Pausing an unknown partition does nothing.
func (f *Fetcher) Pause(tp kafka.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.parts[tp]; p != nil && !p.paused {
		p.paused = true
		f.wakeLocked(p)
	}
}

// Resume undoes Pause: a chunk held back is returned by the next Poll, and tp is fetched as
// before. Java: KafkaConsumer.resume.
func (f *Fetcher) Resume(tp kafka.TopicPartition) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.parts[tp]; p != nil && p.paused {
		p.paused = false
		f.wakeLocked(p)
	}
}

// Poll returns the chunks ready now, at most one per partition, without blocking; none of
// paused partitions. Taking a chunk moves the partition's position to its Next and lets the
// partition be fetched again. The returned slice is reused by the next Poll; the chunks and
// their records may be kept.
func (f *Fetcher) Poll() []Chunk {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.pollBuf[:0]
	keep := f.ready[:0]
	for _, p := range f.ready {
		if !p.ready || f.parts[p.tp] != p {
			p.listed = false
			continue
		}
		if p.paused {
			keep = append(keep, p)
			continue
		}
		out = append(out, p.chunk)
		if p.chunk.Err == nil {
			p.pos = p.chunk.Next
		}
		p.ready, p.listed, p.chunk = false, false, Chunk{}
		if p.loop != nil {
			signal(p.loop.wake)
		}
	}
	clear(f.ready[len(keep):])
	f.ready = keep
	f.pollBuf = out
	return out
}

// Position returns tp's position: the Next of its last polled chunk, or the offset it was
// assigned or sought to. kafka.OffsetUnknown while a reset is pending and for partitions not
// assigned. Java: KafkaConsumer.position.
func (f *Fetcher) Position(tp kafka.TopicPartition) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.parts[tp]; p != nil {
		return p.pos
	}
	return kafka.OffsetUnknown
}

// Lag returns the end of tp (the last stable offset under ReadCommitted, else the high
// watermark) from the latest response for it, minus its Position, in records (offsets);
// never negative; -1 while either is unknown or tp is not assigned. A caught-up partition of
// a transactionally written topic shows 0: the position moves past the final commit marker.
// Safe from any goroutine. Java: the consumer's records-lag metric.
func (f *Fetcher) Lag(tp kafka.TopicPartition) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.parts[tp]
	if p == nil || p.pos < 0 {
		return -1
	}
	end := p.end(f.cfg.Isolation)
	if end < 0 {
		return -1
	}
	return max(end-p.pos, 0)
}

// Stats returns the counts so far. Safe from any goroutine.
func (f *Fetcher) Stats() Stats {
	c := &f.stats
	return Stats{
		FullRequests:        c.full.Load(),
		IncrementalRequests: c.incremental.Load(),
		SessionErrors:       c.sessionErrors.Load(),
		RequestErrors:       c.requestErrors.Load(),
		Chunks:              c.chunks.Load(),
		Records:             c.records.Load(),
		Resets:              c.resets.Load(),
	}
}

// Close stops the fetch goroutines and waits for them: a fetch in flight ends within
// MaxWait. Each goroutine closes its fetch session (a sessionless request with epoch -1,
// KIP-227) and its connection. Later calls do nothing; it returns nil.
func (f *Fetcher) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	close(f.done)
	f.mu.Unlock()
	f.wg.Wait()
	return nil
}

func (p *part) end(iso kafka.IsolationLevel) int64 {
	if iso == kafka.ReadCommitted {
		return p.lso
	}
	return p.hw
}

// failLocked makes p's error chunk: p is not fetched again until Seek.
func (f *Fetcher) failLocked(p *part, err error) {
	p.failed = true
	f.readyLocked(p, Chunk{TP: p.tp, Next: p.pos, HighWatermark: p.hw, LastStableOffset: p.lso, LogStartOffset: p.logStart,
		Err: &PartitionError{TP: p.tp, Offset: p.pos, Err: err}})
	f.log.Warn("fetch: partition stopped until seek", "partition", p.tp.String(), "offset", p.pos, "error", err)
}

func (f *Fetcher) readyLocked(p *part, c Chunk) {
	p.ready, p.chunk = true, c
	if !p.listed {
		p.listed = true
		f.ready = append(f.ready, p)
	}
	f.stats.chunks.Add(1)
	f.stats.records.Add(int64(len(c.Records)))
}

// wakeLocked tells whoever handles p that its state changed.
func (f *Fetcher) wakeLocked(p *part) {
	if p.loop != nil {
		signal(p.loop.wake)
	} else {
		signal(f.routeWake)
	}
}

// unrouteLocked takes p from its loop for the router to find its leader again after the
// backoff, refreshing the metadata first.
func (f *Fetcher) unrouteLocked(p *part, why error) {
	if p.loop != nil {
		delete(p.loop.parts, p.tp)
		p.loop = nil
	}
	p.refresh = true
	f.backoffLocked(p)
	f.unrouted[p.tp] = p
	signal(f.routeWake)
	f.log.Info("fetch: leader changed or not available; refreshing metadata", "partition", p.tp.String(), "error", why)
}

func (f *Fetcher) backoffLocked(p *part) {
	p.attempts++
	p.retryAt = time.Now().Add(kafka.Backoff(p.attempts, f.cfg.RetryBackoff, f.cfg.RetryBackoffMax))
}

func (f *Fetcher) notify() {
	if f.cfg.Notify != nil {
		f.cfg.Notify()
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
