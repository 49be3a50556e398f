package fetch

import (
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// stallLimit is how many responses in a row may bring nothing for a partition whose end is
// ahead of its position before its PartitionMaxBytes is raised (its next batch is taken to
// be larger than the limit).
const stallLimit = 5

// loop fetches the partitions one broker leads, on its own connection, in one goroutine.
type loop struct {
	f    *Fetcher
	node kafka.Node
	wake chan struct{}
	// parts are the partitions routed to this loop; guarded by Fetcher.mu.
	parts map[kafka.TopicPartition]*part

	// Owned by the loop's goroutine.
	conn     *sarama.Broker
	sess     session
	failures int // consecutive failed requests
	ws       []want
	results  []decoded
	blocks   []*sarama.FetchResponseBlock
	resets   []*part
	timer    *time.Timer
}

// loopLocked returns the loop of node n, starting it if there is none.
func (f *Fetcher) loopLocked(n kafka.Node) *loop {
	if l := f.loops[n]; l != nil {
		return l
	}
	l := &loop{f: f, node: n, wake: make(chan struct{}, 1), parts: map[kafka.TopicPartition]*part{}}
	f.loops[n] = l
	f.wg.Add(1)
	go l.run()
	return l
}

// plan is what the loop does next.
type plan struct {
	ws       []want  // partitions to fetch
	resets   []*part // partitions whose position must be reset first
	waitPoll bool    // a partition will be fetchable once its chunk is polled
	// held: a paused partition holds a chunk, so it is left out of the request although it
	// will be fetchable again soon (once resumed and polled).
	held bool
	next time.Time
}

// heldMaxWait bounds the broker wait of a request sent while a paused partition holds a
// chunk: a long poll of the other (caught-up) partitions would hold that partition's next
// fetch back for up to MaxWait once the stream thread took its chunk, leaving the thread idle
// with a backlog on the broker (seen with the word count: a repartition topic's partitions
// waiting behind 500 ms polls of the exhausted input).
const heldMaxWait = 10 * time.Millisecond

func (l *loop) run() {
	kafka.LabelGoroutine("fetch")
	defer l.f.wg.Done()
	defer l.shutdown()
	for {
		select {
		case <-l.f.done:
			return
		default:
		}
		pl := l.plan()
		switch {
		case len(pl.resets) > 0:
			l.resetOffsets(pl.resets)
		case pl.waitPoll || len(pl.ws) == 0:
			// Waiting for the stream thread to poll keeps the partitions it is consuming in
			// the next request (and the session incremental), instead of a long poll of the
			// others that would hold them back for up to MaxWait.
			if !l.wait(pl.next) {
				return
			}
		default:
			wait := l.f.cfg.MaxWait
			if pl.held {
				wait = min(wait, heldMaxWait)
			}
			l.fetch(pl.ws, wait)
		}
	}
}

func (l *loop) plan() plan {
	f := l.f
	now := time.Now()
	var pl plan
	l.ws = l.ws[:0]
	l.resets = l.resets[:0]
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range l.parts {
		switch {
		case p.failed:
		case p.ready:
			pl.waitPoll = pl.waitPoll || !p.paused
			pl.held = pl.held || p.paused
		case p.retryAt.After(now):
			if pl.next.IsZero() || p.retryAt.Before(pl.next) {
				pl.next = p.retryAt
			}
		case p.pos == kafka.OffsetUnknown:
			l.resets = append(l.resets, p)
		default:
			l.ws = append(l.ws, want{p: p, tp: p.tp, sessPart: sessPart{offset: p.pos, maxBytes: p.maxBytes, leaderEpoch: p.leaderEpoch}})
		}
	}
	pl.ws, pl.resets = l.ws, l.resets
	return pl
}

// wait blocks until the loop is woken, until next (when set), or until Close; false means
// Close.
func (l *loop) wait(next time.Time) bool {
	var tc <-chan time.Time
	if !next.IsZero() {
		d := max(time.Until(next), time.Millisecond)
		if l.timer == nil {
			l.timer = time.NewTimer(d)
		} else {
			l.timer.Reset(d)
		}
		tc = l.timer.C
		defer l.timer.Stop()
	}
	select {
	case <-l.wake:
		return true
	case <-tc:
		return true
	case <-l.f.done:
		return false
	}
}

// sleep pauses d unless Close comes first (false).
func (l *loop) sleep(d time.Duration) bool {
	if l.timer == nil {
		l.timer = time.NewTimer(d)
	} else {
		l.timer.Reset(d)
	}
	defer l.timer.Stop()
	select {
	case <-l.timer.C:
		return true
	case <-l.f.done:
		return false
	}
}

func (l *loop) connect() (*sarama.Broker, error) {
	if l.conn != nil {
		return l.conn, nil
	}
	b, err := l.f.cfg.Cluster.Conn(l.node, l.f.purpose)
	if err != nil {
		return nil, err
	}
	l.conn = b
	return b, nil
}

// requestFailed handles a request that got no response: the connection is discarded, the
// router re-checks the leaders of this loop's partitions, and the loop backs off. An
// authentication failure (SASL, or a certificate refused in the TLS handshake: kafka.AuthError),
// which no retry cures, fails every partition of the loop instead, so that the stream thread
// learns of it (Java: the consumer's poll throws the AuthenticationException).
func (l *loop) requestFailed(what string, err error) {
	f := l.f
	f.stats.requestErrors.Add(1)
	if l.conn != nil {
		f.cfg.Cluster.Discard(l.node, f.purpose, l.conn)
		l.conn = nil
	}
	l.sess.failed(sarama.ErrNoError)
	if kafka.AuthError(err) {
		f.mu.Lock()
		for _, p := range l.parts {
			if !p.failed {
				f.failLocked(p, fmt.Errorf("%s (broker %d, %s): %w", what, l.node.ID, l.node.Addr, err))
			}
		}
		f.mu.Unlock()
		f.notify()
		return
	}
	l.failures++
	if l.failures == 1 {
		f.log.Warn("fetch: request failed; retrying", "request", what, "broker", l.node.ID, "addr", l.node.Addr, "error", err)
	} else {
		f.log.Debug("fetch: request failed again", "request", what, "broker", l.node.ID, "failures", l.failures, "error", err)
	}
	f.mu.Lock()
	f.checks[l] = true
	f.mu.Unlock()
	signal(f.routeWake)
	l.sleep(kafka.Backoff(l.failures, f.cfg.RetryBackoff, f.cfg.RetryBackoffMax))
}

func (l *loop) requestOK() {
	if l.failures > 0 {
		l.f.log.Info("fetch: broker reachable again", "broker", l.node.ID, "addr", l.node.Addr, "failures", l.failures)
	}
	l.failures = 0
}

// fetch sends one Fetch request for ws, which the broker may hold up to maxWait, and applies
// its response.
func (l *loop) fetch(ws []want, maxWait time.Duration) {
	f := l.f
	conn, err := l.connect()
	if err != nil {
		l.requestFailed("connect", err)
		return
	}
	id, epoch, full, send := l.sess.build(ws)
	req := &sarama.FetchRequest{
		Version:      fetchVersion,
		MaxWaitTime:  int32(maxWait.Milliseconds()),
		MinBytes:     f.cfg.MinBytes,
		MaxBytes:     f.cfg.MaxBytes,
		Isolation:    sarama.IsolationLevel(f.cfg.Isolation),
		SessionID:    id,
		SessionEpoch: epoch,
	}
	for i := range send {
		w := &send[i]
		req.AddBlock(w.tp.Topic, w.tp.Partition, w.offset, w.maxBytes, w.leaderEpoch)
	}
	if full {
		f.stats.full.Add(1)
	} else {
		f.stats.incremental.Add(1)
	}
	resp, err := conn.Fetch(req)
	if err != nil {
		l.requestFailed("fetch", err)
		return
	}
	l.requestOK()
	if resp.ErrorCode != 0 {
		k := sarama.KError(resp.ErrorCode)
		l.sess.failed(k)
		if k == sarama.ErrFetchSessionIDNotFound || k == sarama.ErrInvalidFetchSessionEpoch {
			f.stats.sessionErrors.Add(1)
			f.log.Info("fetch: fetch session lost; starting a new one", "broker", l.node.ID, "session", req.SessionID, "epoch", req.SessionEpoch, "error", k)
			return
		}
		f.log.Warn("fetch: fetch request failed", "broker", l.node.ID, "error", k)
		l.failures++
		l.sleep(kafka.Backoff(l.failures, f.cfg.RetryBackoff, f.cfg.RetryBackoffMax))
		return
	}
	l.sess.answered(full, resp.SessionID, ws)
	l.apply(resp, ws)
}

// apply turns a response into chunks, position resets and leader moves. Records are decoded
// without the lock; the outcome is applied under it, to the partitions still fetched from
// the offsets asked for.
func (l *loop) apply(resp *sarama.FetchResponse, ws []want) {
	f := l.f
	rc := f.cfg.Isolation == kafka.ReadCommitted
	l.results, l.blocks = l.results[:0], l.blocks[:0]
	for i := range ws {
		blk := resp.GetBlock(ws[i].tp.Topic, ws[i].tp.Partition)
		l.blocks = append(l.blocks, blk)
		var d decoded
		if blk != nil && blk.Err == sarama.ErrNoError {
			d = decodeBlock(blk, ws[i].offset, rc, f.takeRecords())
		}
		l.results = append(l.results, d)
	}

	chunks, reroute := false, false
	f.mu.Lock()
	for i := range ws {
		w, blk, d := &ws[i], l.blocks[i], &l.results[i]
		p := w.p
		if f.parts[p.tp] != p || p.loop != l || p.ready || p.failed || p.pos != w.offset {
			continue // unassigned, moved, sought or reset meanwhile
		}
		if blk == nil {
			// Not in an incremental response: nothing new.
			l.noProgressLocked(p, false)
			continue
		}
		switch k := blk.Err; {
		case k == sarama.ErrNoError:
			p.hw, p.lso, p.logStart = blk.HighWaterMarkOffset, blk.LastStableOffset, blk.LogStartOffset
			p.attempts = 0
			if d.err != nil {
				f.failLocked(p, d.err)
				chunks = true
				continue
			}
			if d.next == w.offset && len(d.records) == 0 {
				l.noProgressLocked(p, d.partialOnly)
				continue
			}
			p.stalls, p.stallLogged = 0, false
			f.readyLocked(p, Chunk{TP: p.tp, Records: d.records, Next: d.next,
				HighWatermark: p.hw, LastStableOffset: p.lso, LogStartOffset: p.logStart})
			chunks = true
		case k == sarama.ErrOffsetOutOfRange:
			if blk.HighWaterMarkOffset >= 0 {
				p.hw, p.lso, p.logStart = blk.HighWaterMarkOffset, blk.LastStableOffset, blk.LogStartOffset
			}
			if f.cfg.Reset == None {
				f.failLocked(p, ErrOffsetOutOfRange)
				chunks = true
				continue
			}
			f.log.Info("fetch: offset out of range; resetting", "partition", p.tp.String(), "offset", p.pos,
				"reset", f.cfg.Reset.String(), "log_start", blk.LogStartOffset, "high_watermark", blk.HighWaterMarkOffset)
			p.pos = kafka.OffsetUnknown
		case kafka.StaleMetadata(k) || k == sarama.ErrReplicaNotAvailable || k == sarama.ErrOffsetNotAvailable:
			f.unrouteLocked(p, k)
			reroute = true
		case kafka.AuthError(k):
			f.failLocked(p, k)
			chunks = true
		case k == sarama.ErrUnknown || kafka.RetriableCode(k):
			f.log.Warn("fetch: partition error; retrying", "partition", p.tp.String(), "offset", p.pos, "error", k)
			f.backoffLocked(p)
		default:
			f.failLocked(p, k)
			chunks = true
		}
	}
	f.mu.Unlock()
	clear(l.results) // drop the record slices and the response
	clear(l.blocks)
	if chunks {
		f.notify()
	}
	if reroute {
		signal(f.routeWake)
	}
}

// noProgressLocked counts a response that brought p nothing. When p's end is ahead of its
// position for stallLimit responses in a row (or the response held only a cut-off batch), its
// next batch is taken to be larger than its PartitionMaxBytes, which is doubled up to
// MaxBytes. Kafka returns one batch beyond the limits for the first partition with data in a
// response (KIP-74), so a partition is delayed, not stuck, but at MaxBytes this is logged as
// an error.
func (l *loop) noProgressLocked(p *part, partialOnly bool) {
	f := l.f
	if end := p.end(f.cfg.Isolation); !partialOnly && (end < 0 || end <= p.pos) {
		p.stalls = 0
		return
	}
	p.stalls++
	if !partialOnly && p.stalls < stallLimit {
		return
	}
	p.stalls = 0
	if p.maxBytes < f.cfg.MaxBytes {
		p.maxBytes = int32(min(int64(p.maxBytes)*2, int64(f.cfg.MaxBytes)))
		f.log.Warn("fetch: no progress on a partition with data; raising its fetch size", "partition", p.tp.String(),
			"offset", p.pos, "end", p.end(f.cfg.Isolation), "partition_max_bytes", p.maxBytes)
		return
	}
	if !p.stallLogged {
		p.stallLogged = true
		f.log.Error("fetch: no progress on a partition with data at fetch.max.bytes: its next record batch may be larger than fetch.max.bytes",
			"partition", p.tp.String(), "offset", p.pos, "end", p.end(f.cfg.Isolation), "max_bytes", f.cfg.MaxBytes)
	}
}

// resetOffsets sets the positions of ps by auto.offset.reset: ListOffsets (earliest, or latest
// at the isolation level) to this loop's broker.
func (l *loop) resetOffsets(ps []*part) {
	f := l.f
	if f.cfg.Reset == None {
		f.mu.Lock()
		for _, p := range ps {
			if f.parts[p.tp] == p && p.loop == l && p.pos == kafka.OffsetUnknown && !p.failed && !p.ready {
				f.failLocked(p, ErrNoOffset)
			}
		}
		f.mu.Unlock()
		f.notify()
		return
	}
	conn, err := l.connect()
	if err != nil {
		l.requestFailed("connect", err)
		return
	}
	ts := sarama.OffsetOldest
	if f.cfg.Reset == Latest {
		ts = sarama.OffsetNewest
	}
	req := sarama.NewOffsetRequest(f.cfg.Cluster.Config().Version)
	if req.Version < 2 {
		req.Version = 2 // the isolation level
	}
	req.IsolationLevel = sarama.IsolationLevel(f.cfg.Isolation)
	for _, p := range ps {
		req.AddBlock(p.tp.Topic, p.tp.Partition, ts, 1)
	}
	resp, err := conn.GetAvailableOffsets(req)
	if err != nil {
		l.requestFailed("list offsets", err)
		return
	}
	l.requestOK()
	chunks, reroute := false, false
	f.mu.Lock()
	for _, p := range ps {
		if f.parts[p.tp] != p || p.loop != l || p.pos != kafka.OffsetUnknown || p.failed || p.ready {
			continue
		}
		blk := resp.GetBlock(p.tp.Topic, p.tp.Partition)
		if blk == nil {
			f.log.Warn("fetch: list offsets answer without the partition; retrying", "partition", p.tp.String())
			f.backoffLocked(p)
			continue
		}
		switch k := blk.Err; {
		case k == sarama.ErrNoError:
			off := blk.Offset
			if req.Version == 0 && len(blk.Offsets) > 0 {
				off = blk.Offsets[0]
			}
			if off < 0 {
				f.log.Warn("fetch: list offsets gave no offset; retrying", "partition", p.tp.String(), "offset", off)
				f.backoffLocked(p)
				continue
			}
			p.pos, p.attempts = off, 0
			f.stats.resets.Add(1)
			f.log.Info("fetch: position reset", "partition", p.tp.String(), "reset", f.cfg.Reset.String(), "offset", off)
		case kafka.StaleMetadata(k) || k == sarama.ErrReplicaNotAvailable || k == sarama.ErrOffsetNotAvailable:
			f.unrouteLocked(p, k)
			reroute = true
		case kafka.RetriableCode(k) || k == sarama.ErrUnknown:
			f.log.Warn("fetch: list offsets failed; retrying", "partition", p.tp.String(), "error", k)
			f.backoffLocked(p)
		default:
			f.failLocked(p, fmt.Errorf("list offsets (auto.offset.reset=%s): %w", f.cfg.Reset, k))
			chunks = true
		}
	}
	f.mu.Unlock()
	if chunks {
		f.notify()
	}
	if reroute {
		signal(f.routeWake)
	}
}

// shutdown closes the fetch session (epoch -1, no partitions: the broker answers at once),
// unless the last request failed, and the connection.
func (l *loop) shutdown() {
	f := l.f
	if l.conn == nil {
		return
	}
	if l.sess.id != 0 && l.failures == 0 {
		req := &sarama.FetchRequest{Version: fetchVersion, MaxWaitTime: 0, MinBytes: 0, MaxBytes: f.cfg.MaxBytes,
			Isolation: sarama.IsolationLevel(f.cfg.Isolation), SessionID: l.sess.id, SessionEpoch: -1}
		if _, err := l.conn.Fetch(req); err != nil && !errors.Is(err, sarama.ErrNotConnected) {
			f.log.Debug("fetch: closing the fetch session failed", "broker", l.node.ID, "error", err)
		}
		l.sess.reset()
	}
	f.cfg.Cluster.Discard(l.node, f.purpose, l.conn)
	l.conn = nil
}
