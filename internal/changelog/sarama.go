package changelog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka/recordbatch"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
)

// SaramaReader reads changelogs with plain Fetch and ListOffsets requests to the partition
// leader, through a sarama.Client. It does not use sarama's partition consumer, because
// restore must know the fetch position after transaction markers (on a
// transactional changelog the last offset is a commit marker, so the last record offset + 1
// never reaches the end offset) and sarama's client.GetOffset cannot ask for the last stable
// offset. Fetches are restore's own (rawfetch.go: the records decoded straight from the
// response) on connections of the reader's own (streamsgroup.Conn, with the client's TLS and
// SASL settings), one per fetch in progress, kept for the next ones: restores that fetch at
// the same time do not take turns on the client's one connection to a broker, where a sarama
// Broker holds its lock from sending a request until its response is decoded. When the
// client's settings are beyond those connections (SASL GSSAPI, a proxy, a local address), or
// a partition holds message sets older than record batches, fetches go through sarama instead
// (on connections of the reader's own as well). Close closes the connections. Java
// counterpart: the restore consumer of StoreChangelogReader.
type SaramaReader struct {
	client        sarama.Client
	readCommitted bool
	// raw is the configuration of the reader's own Fetch connections; nil: sarama fetches.
	raw *streamsgroup.Config

	mu         sync.Mutex
	idleRaw    map[string][]*streamsgroup.Conn // fetch connections not in use, by broker address
	idleSarama map[string][]*sarama.Broker
	legacy     map[TopicPartition]bool // partitions of the old message formats: sarama fetches
	closed     bool

	// MaxWait is the broker wait of a Fetch with no data; default 100 ms.
	MaxWait time.Duration
	// MaxBytes is the fetch size per request, in bytes; default 1 MiB (Java's restore consumer
	// reads at most max.partition.fetch.bytes = 1 MiB per partition and fetch). Restore holds
	// at most four fetch responses (one applied, two queued, one being fetched).
	MaxBytes int32
}

var _ AppendReader = (*SaramaReader)(nil)

// NewSaramaReader returns a reader using client; with readCommitted (exactly-once) only
// committed records are returned. EndOffset is the high-water mark either way (see
// SaramaReader.EndOffset).
func NewSaramaReader(client sarama.Client, readCommitted bool) *SaramaReader {
	r := &SaramaReader{client: client, readCommitted: readCommitted, MaxWait: 100 * time.Millisecond, MaxBytes: 1 << 20,
		idleRaw: map[string][]*streamsgroup.Conn{}, idleSarama: map[string][]*sarama.Broker{}, legacy: map[TopicPartition]bool{}}
	// A proxy or a local address of the client's settings: streamsgroup.Dial knows neither.
	if sc := client.Config(); !sc.Net.Proxy.Enable && sc.Net.LocalAddr == nil {
		if cfg, err := streamsgroup.ConfigFromSarama(sc, ""); err == nil {
			r.raw = &cfg
		}
	}
	return r
}

// Close closes the reader's fetch connections (a fetch in progress closes its own when it
// ends); the client is the caller's. Later fetches fail.
func (r *SaramaReader) Close() error {
	r.mu.Lock()
	raw, srm := r.idleRaw, r.idleSarama
	r.idleRaw, r.idleSarama, r.closed = map[string][]*streamsgroup.Conn{}, map[string][]*sarama.Broker{}, true
	r.mu.Unlock()
	for _, cs := range raw {
		for _, c := range cs {
			_ = c.Close()
		}
	}
	for _, cs := range srm {
		for _, c := range cs {
			_ = c.Close()
		}
	}
	return nil
}

// errReaderClosed is returned by fetches after Close.
var errReaderClosed = errors.New("changelog: reader closed")

// takeIdle takes an idle connection to addr out of idle (ok false when there is none). Call
// with r.mu held.
func takeIdle[C any](idle map[string][]C, addr string) (c C, ok bool) {
	cs := idle[addr]
	if len(cs) == 0 {
		return c, false
	}
	c = cs[len(cs)-1]
	var zero C
	cs[len(cs)-1] = zero
	idle[addr] = cs[:len(cs)-1]
	return c, true
}

// rawConn returns a Fetch connection of the reader's own to the broker at addr: an idle one
// (idle true) unless fresh, or a new one. It returns errRawUnsupported (and fetches go through
// sarama from then on) when the broker does not answer Fetch v11.
func (r *SaramaReader) rawConn(ctx context.Context, addr string, fresh bool) (c *streamsgroup.Conn, idle bool, err error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, false, errReaderClosed
	}
	if !fresh {
		c, idle = takeIdle(r.idleRaw, addr)
	}
	cfg := r.raw
	r.mu.Unlock()
	if idle {
		return c, true, nil
	}
	if cfg == nil {
		return nil, false, errRawUnsupported
	}
	if c, err = streamsgroup.Dial(ctx, addr, *cfg); err != nil {
		return nil, false, err
	}
	if lo, hi, ok := c.Versions(apiFetch); !ok || lo > rawFetchVersion || hi < rawFetchVersion {
		_ = c.Close()
		r.mu.Lock()
		r.raw = nil
		r.mu.Unlock()
		return nil, false, errRawUnsupported
	}
	return c, false, nil
}

// errRawUnsupported says that the reader's own Fetch is not available: sarama fetches.
var errRawUnsupported = errors.New("changelog: the broker does not answer Fetch v11")

// saramaConn returns a sarama Broker of the reader's own connected to addr: an idle one (idle
// true) unless fresh, or a new one.
func (r *SaramaReader) saramaConn(addr string, fresh bool) (c *sarama.Broker, idle bool, err error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, false, errReaderClosed
	}
	if !fresh {
		c, idle = takeIdle(r.idleSarama, addr)
	}
	r.mu.Unlock()
	if idle {
		return c, true, nil
	}
	c = sarama.NewBroker(addr)
	if err := c.Open(r.client.Config()); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, false, err
	}
	return c, false, nil
}

// releaseIdle hands fetch connection c to addr back to r's pool *idle (r.idleRaw or
// r.idleSarama, read under r.mu as Close replaces them): kept for the next fetch when it worked
// (ok), closed when it failed or the reader was closed.
func releaseIdle[C interface{ Close() error }](r *SaramaReader, idle *map[string][]C, addr string, c C, ok bool) {
	r.mu.Lock()
	if ok && !r.closed {
		(*idle)[addr] = append((*idle)[addr], c)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	_ = c.Close()
}

func (r *SaramaReader) isolation() sarama.IsolationLevel {
	if r.readCommitted {
		return sarama.ReadCommitted
	}
	return sarama.ReadUncommitted
}

func (r *SaramaReader) listOffset(tp TopicPartition, ts int64, isolation sarama.IsolationLevel) (int64, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		b, err := r.client.Leader(tp.Topic, tp.Partition)
		if err != nil {
			lastErr = err
			_ = r.client.RefreshMetadata(tp.Topic)
			continue
		}
		req := sarama.NewOffsetRequest(r.client.Config().Version)
		if req.Version < 2 {
			req.Version = 2 // isolation level
		}
		req.IsolationLevel = isolation
		req.AddBlock(tp.Topic, tp.Partition, ts, 1)
		resp, err := b.GetAvailableOffsets(req)
		if err != nil {
			lastErr = err
			_ = r.client.RefreshMetadata(tp.Topic)
			continue
		}
		blk := resp.GetBlock(tp.Topic, tp.Partition)
		if blk == nil {
			return 0, fmt.Errorf("changelog: list offsets %s: %w", tp, sarama.ErrIncompleteResponse)
		}
		if blk.Err != sarama.ErrNoError {
			lastErr = blk.Err
			_ = r.client.RefreshMetadata(tp.Topic)
			continue
		}
		if len(blk.Offsets) > 0 && req.Version == 0 {
			return blk.Offsets[0], nil
		}
		return blk.Offset, nil
	}
	return 0, fmt.Errorf("changelog: list offsets %s: %w", tp, lastErr)
}

// EndOffset implements Reader: the high-water mark, also with readCommitted. A restore reads a
// changelog its task now owns, so an open transaction on it belongs to a previous owner, killed
// or fenced, and ends by an abort (the transaction coordinator's, after the producer's
// transaction.timeout.ms) or by a commit already decided. Reading read_committed up to the
// high-water mark waits for that end. The last stable offset would stop in front of the open
// transaction and miss what later owners committed after it: their input offsets, committed in
// the same transactions, are already past those records, so the task would go on from state
// that lacks them. (Seen when an instance without persistent stores, hence with a new process
// id and transactional ids, takes over within the transaction timeout of a killed one.) Java's
// StoreChangelogReader likewise lists the log end offset read_uncommitted.
func (r *SaramaReader) EndOffset(_ context.Context, tp TopicPartition) (int64, error) {
	return r.listOffset(tp, sarama.OffsetNewest, sarama.ReadUncommitted)
}

// BeginningOffset implements Reader.
func (r *SaramaReader) BeginningOffset(_ context.Context, tp TopicPartition) (int64, error) {
	return r.listOffset(tp, sarama.OffsetOldest, r.isolation())
}

// Fetch implements Reader with one Fetch request (version 11) to the leader.
func (r *SaramaReader) Fetch(ctx context.Context, tp TopicPartition, from int64) ([]Record, int64, error) {
	return r.FetchAppend(ctx, tp, from, nil)
}

// FetchAppend implements AppendReader: Fetch, decoding into buf.
func (r *SaramaReader) FetchAppend(ctx context.Context, tp TopicPartition, from int64, buf []Record) ([]Record, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, from, err
	}
	leader, err := r.client.Leader(tp.Topic, tp.Partition)
	if err != nil {
		_ = r.client.RefreshMetadata(tp.Topic)
		return nil, from, fmt.Errorf("changelog: fetch %s: %w", tp, err)
	}
	r.mu.Lock()
	raw := r.raw != nil && !r.legacy[tp]
	r.mu.Unlock()
	if raw {
		recs, next, err := r.fetchRaw(ctx, leader.Addr(), tp, from, buf)
		switch {
		case errors.Is(err, errLegacyFormat):
			r.mu.Lock()
			r.legacy[tp] = true
			r.mu.Unlock()
		case !errors.Is(err, errRawUnsupported):
			return recs, next, err
		}
	}
	return r.fetchSarama(leader.Addr(), tp, from, buf)
}

// fetchRaw fetches with restore's own Fetch (rawfetch.go) on a connection of the reader's own.
// A connection that failed after waiting idle in the pool (the broker closes idle ones after
// connections.max.idle.ms) is replaced by a new one at once.
func (r *SaramaReader) fetchRaw(ctx context.Context, addr string, tp TopicPartition, from int64, buf []Record) ([]Record, int64, error) {
	req := encodeFetch(tp, from, r.MaxWait, r.MaxBytes, r.readCommitted)
	var body []byte
	var err error
	for fresh := false; ; fresh = true {
		var c *streamsgroup.Conn
		var idle bool
		c, idle, err = r.rawConn(ctx, addr, fresh)
		if errors.Is(err, errRawUnsupported) {
			return nil, from, err
		}
		if err != nil {
			return nil, from, fmt.Errorf("changelog: fetch %s: %w", tp, err)
		}
		body, err = c.RoundTrip(ctx, apiFetch, rawFetchVersion, false, req)
		releaseIdle(r, &r.idleRaw, addr, c, err == nil)
		if err == nil || !idle || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		_ = r.client.RefreshMetadata(tp.Topic)
		return nil, from, fmt.Errorf("changelog: fetch %s: %w", tp, err)
	}
	p, found, err := parseFetch(body, tp)
	if err != nil || !found {
		return nil, from, err
	}
	if err := r.partitionError(tp, from, sarama.KError(p.ErrorCode)); err != nil || p.ErrorCode != 0 {
		return nil, from, err
	}
	return decodeBatches(p.Records, from, r.readCommitted, p.Aborted, buf)
}

// partitionError turns a fetched partition's error code into Fetch's error: nil for none
// and, after a metadata refresh, for the leader having moved (the caller fetches again).
func (r *SaramaReader) partitionError(tp TopicPartition, from int64, code sarama.KError) error {
	switch code {
	case sarama.ErrNoError:
		return nil
	case sarama.ErrOffsetOutOfRange:
		return fmt.Errorf("%w: %s offset %d", ErrOffsetOutOfRange, tp, from)
	case sarama.ErrNotLeaderForPartition, sarama.ErrLeaderNotAvailable, sarama.ErrUnknownTopicOrPartition:
		_ = r.client.RefreshMetadata(tp.Topic)
		return nil
	}
	return fmt.Errorf("changelog: fetch %s: %w", tp, code)
}

// fetchSarama fetches with sarama's Fetch (version 11) on a connection of the reader's own.
// A connection that failed after waiting idle is replaced by a new one at once, as fetchRaw's.
func (r *SaramaReader) fetchSarama(addr string, tp TopicPartition, from int64, buf []Record) ([]Record, int64, error) {
	req := &sarama.FetchRequest{Version: 11, MaxWaitTime: int32(r.MaxWait.Milliseconds()), MinBytes: 1,
		MaxBytes: r.MaxBytes, Isolation: r.isolation()}
	req.AddBlock(tp.Topic, tp.Partition, from, r.MaxBytes, -1)
	var resp *sarama.FetchResponse
	var err error
	for fresh := false; ; fresh = true {
		var b *sarama.Broker
		var idle bool
		if b, idle, err = r.saramaConn(addr, fresh); err != nil {
			return nil, from, fmt.Errorf("changelog: fetch %s: %w", tp, err)
		}
		resp, err = b.Fetch(req)
		releaseIdle(r, &r.idleSarama, addr, b, err == nil)
		if err == nil || !idle {
			break
		}
	}
	if err != nil {
		_ = r.client.RefreshMetadata(tp.Topic)
		return nil, from, fmt.Errorf("changelog: fetch %s: %w", tp, err)
	}
	blk := resp.GetBlock(tp.Topic, tp.Partition)
	if blk == nil {
		return nil, from, nil
	}
	if err := r.partitionError(tp, from, blk.Err); err != nil || blk.Err != sarama.ErrNoError {
		return nil, from, err
	}
	return decodeBlock(blk, from, r.readCommitted, buf)
}

// decodeBlock turns a fetch response block into records at offsets >= from, dropping control
// batches and, with readCommitted, batches of aborted transactions (the algorithm of Kafka's
// consumer: aborted producer ids become active at their first offset and end at their abort
// marker). The records are appended to buf[:0].
func decodeBlock(blk *sarama.FetchResponseBlock, from int64, readCommitted bool, buf []Record) ([]Record, int64, error) {
	aborted := slices.Clone(blk.AbortedTransactions)
	slices.SortFunc(aborted, func(a, b *sarama.AbortedTransaction) int {
		switch {
		case a.FirstOffset < b.FirstOffset:
			return -1
		case a.FirstOffset > b.FirstOffset:
			return 1
		}
		return 0
	})
	var active map[int64]bool
	if readCommitted {
		active = map[int64]bool{}
	}
	next := from
	n := 0
	for _, rs := range blk.RecordsSet {
		switch {
		case rs == nil:
		case rs.MsgSet != nil:
			n += len(rs.MsgSet.Messages)
		case rs.RecordBatch != nil && !rs.RecordBatch.Control:
			n += len(rs.RecordBatch.Records)
		}
	}
	out := slices.Grow(buf[:0], n) // at most one allocation for the whole response
	for _, rs := range blk.RecordsSet {
		if rs == nil {
			continue
		}
		if rs.MsgSet != nil {
			for _, mb := range rs.MsgSet.Messages {
				if mb.Offset < from {
					continue
				}
				var v []byte
				if mb.Msg != nil {
					v = mb.Msg.Value
				}
				rec := Record{Offset: mb.Offset, Value: v}
				if mb.Msg != nil {
					rec.Key, rec.Timestamp = mb.Msg.Key, mb.Msg.Timestamp.UnixMilli()
				}
				out = append(out, rec)
				next = mb.Offset + 1
			}
			continue
		}
		batch := rs.RecordBatch
		if batch == nil {
			continue
		}
		last := batch.FirstOffset + int64(batch.LastOffsetDelta)
		if batch.PartialTrailingRecord {
			// Only whole records are used; the next fetch starts after the last complete one.
			if n := len(batch.Records); n > 0 {
				last = batch.FirstOffset + batch.Records[n-1].OffsetDelta
			} else {
				continue
			}
		}
		if readCommitted {
			for len(aborted) > 0 && aborted[0].FirstOffset <= last {
				active[aborted[0].ProducerID] = true
				aborted = aborted[1:]
			}
		}
		if batch.Control {
			if readCommitted && len(batch.Records) > 0 && recordbatch.IsAbortMarker(batch.Records[0].Key) {
				delete(active, batch.ProducerID)
			}
			next = max(next, last+1)
			continue
		}
		if readCommitted && batch.IsTransactional && active[batch.ProducerID] {
			next = max(next, last+1)
			continue
		}
		// Timestamps in ms: the batch's first timestamp plus each record's delta, or the
		// batch's max timestamp (log append time), without a time.Time per record.
		base, logAppend := batch.FirstTimestamp.UnixMilli(), batch.LogAppendTime
		if logAppend {
			base = batch.MaxTimestamp.UnixMilli()
		}
		for _, rec := range batch.Records {
			off := batch.FirstOffset + rec.OffsetDelta
			if off < from {
				continue
			}
			ts := base
			if !logAppend {
				ts += int64(rec.TimestampDelta / time.Millisecond)
			}
			r := Record{Offset: off, Key: rec.Key, Value: rec.Value, Timestamp: ts}
			if len(rec.Headers) > 0 {
				for _, h := range rec.Headers {
					r.Headers.Add(string(h.Key), h.Value)
				}
			}
			out = append(out, r)
		}
		next = max(next, last+1)
	}
	return out, next, nil
}
