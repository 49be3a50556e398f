package fetch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/recordbatch"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
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
	conn *sarama.Broker // for ListOffsets, and Fetch when noRaw
	// raw is the Fetch connection of our own: the request encoded and the response decoded
	// by recordbatch, the records aliasing the response instead of being decoded into
	// sarama's structs and copied. Written under Fetcher.mu (setRaw).
	raw *streamsgroup.Conn
	// noRaw: the connection settings or the broker rule out raw (see connectRaw), so Fetch
	// goes through sarama.
	noRaw    bool
	sess     session
	failures int // consecutive failed requests
	ws       []want
	results  []result
	resets   []*part
	timer    *time.Timer

	// Buffers of the raw Fetch, reused from request to request.
	req     []byte
	fparts  []recordbatch.FetchPartition
	fforgot []recordbatch.TopicPartition
	rparts  []recordbatch.FetchedPartition
	index   map[kafka.TopicPartition]int
	dec     recordbatch.Decoder
}

// result is what a response brought one partition of a request, for apply.
type result struct {
	found             bool // the response named it (an incremental one leaves out partitions without news)
	err               sarama.KError
	hw, lso, logStart int64
	d                 decoded
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

// connectRaw returns the loop's own Fetch connection, dialling it when there is none (with
// the cluster's TLS, SASL and timeouts, the Fetcher's client id and read timeout); nil
// without an error when Fetch goes through sarama (noRaw): the settings ask for what a
// streamsgroup.Conn does not do (a proxy, a local address, SASL GSSAPI), or the broker does
// not answer Fetch v11.
func (l *loop) connectRaw() (*streamsgroup.Conn, error) {
	if l.raw != nil || l.noRaw {
		return l.raw, nil
	}
	f := l.f
	sc := f.cfg.Cluster.Config()
	cfg, err := streamsgroup.ConfigFromSarama(sc, f.purpose.ClientID)
	if err != nil || sc.Net.Proxy.Enable || sc.Net.LocalAddr != nil {
		l.noRaw = true
		f.log.Info("fetch: fetching through sarama: the connection settings need its connections", "broker", l.node.ID, "error", err)
		return nil, nil
	}
	cfg.ReadTimeout = f.purpose.ReadTimeout
	c, err := streamsgroup.Dial(context.Background(), l.node.Addr, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to broker %d (%s): %w", l.node.ID, l.node.Addr, err)
	}
	if lo, hi, ok := c.Versions(recordbatch.APIKeyFetch); !ok || lo > recordbatch.FetchVersion || hi < recordbatch.FetchVersion {
		_ = c.Close()
		l.noRaw = true
		f.log.Info("fetch: fetching through sarama: the broker does not answer Fetch v11", "broker", l.node.ID, "versions", fmt.Sprintf("%d-%d", lo, hi))
		return nil, nil
	}
	l.setRaw(c)
	return c, nil
}

// setRaw sets the loop's own connection (nil: none), closing the one it replaces. l.raw is
// written under Fetcher.mu (so that tests can reach it) and read by the loop's goroutine
// without.
func (l *loop) setRaw(c *streamsgroup.Conn) {
	l.f.mu.Lock()
	old := l.raw
	l.raw = c
	l.f.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
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
	l.setRaw(nil)
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
// its response: on the loop's own connection (fetchRaw), or through sarama when noRaw.
func (l *loop) fetch(ws []want, maxWait time.Duration) {
	raw, err := l.connectRaw()
	if err != nil {
		l.requestFailed("connect", err)
		return
	}
	l.sess.forget = !l.noRaw
	if raw != nil {
		l.fetchRaw(raw, ws, maxWait)
		return
	}
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
	l.countRequest(full)
	resp, err := conn.Fetch(req)
	if err != nil {
		l.requestFailed("fetch", err)
		return
	}
	l.requestOK()
	if resp.ErrorCode != 0 {
		l.responseFailed(sarama.KError(resp.ErrorCode), id, epoch)
		return
	}
	l.sess.answered(full, resp.SessionID, ws)
	l.applySarama(resp, ws)
}

func (l *loop) countRequest(full bool) {
	if full {
		l.f.stats.full.Add(1)
	} else {
		l.f.stats.incremental.Add(1)
	}
}

// responseFailed handles a response's top-level error k to a request of session id at epoch:
// a lost session starts a new one at once, other errors back off.
func (l *loop) responseFailed(k sarama.KError, id, epoch int32) {
	f := l.f
	l.sess.failed(k)
	if k == sarama.ErrFetchSessionIDNotFound || k == sarama.ErrInvalidFetchSessionEpoch {
		f.stats.sessionErrors.Add(1)
		f.log.Info("fetch: fetch session lost; starting a new one", "broker", l.node.ID, "session", id, "epoch", epoch, "error", k)
		return
	}
	f.log.Warn("fetch: fetch request failed", "broker", l.node.ID, "error", k)
	l.failures++
	l.sleep(kafka.Backoff(l.failures, f.cfg.RetryBackoff, f.cfg.RetryBackoffMax))
}

// fetchRaw is fetch on the loop's own connection: a Fetch v11 request encoded by
// recordbatch (with the session's forgotten partitions), its response's record batches
// decoded straight into the chunks' records, which alias the response.
func (l *loop) fetchRaw(conn *streamsgroup.Conn, ws []want, maxWait time.Duration) {
	f := l.f
	id, epoch, full, send := l.sess.build(ws)
	q := recordbatch.FetchRequest{MaxWaitMs: int32(maxWait.Milliseconds()), MinBytes: f.cfg.MinBytes, MaxBytes: f.cfg.MaxBytes,
		ReadCommitted: f.cfg.Isolation == kafka.ReadCommitted, SessionID: id, SessionEpoch: epoch}
	l.fparts = l.fparts[:0]
	for i := range send {
		w := &send[i]
		l.fparts = append(l.fparts, recordbatch.FetchPartition{TopicPartition: recordbatch.TopicPartition{Topic: w.tp.Topic, Partition: w.tp.Partition},
			Offset: w.offset, MaxBytes: w.maxBytes, LeaderEpoch: w.leaderEpoch})
	}
	slices.SortFunc(l.fparts, func(a, b recordbatch.FetchPartition) int { return compareTP(a.TopicPartition, b.TopicPartition) })
	l.fforgot = l.fforgot[:0]
	for _, tp := range l.sess.forgot {
		l.fforgot = append(l.fforgot, recordbatch.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
	}
	slices.SortFunc(l.fforgot, compareTP)
	q.Partitions, q.Forgotten = l.fparts, l.fforgot
	l.req = q.AppendTo(l.req[:0])
	l.countRequest(full)
	body, err := conn.RoundTrip(context.Background(), recordbatch.APIKeyFetch, recordbatch.FetchVersion, false, l.req)
	if err != nil {
		l.requestFailed("fetch", err)
		return
	}
	resp, err := recordbatch.ParseFetch(body, l.rparts)
	if err != nil {
		l.requestFailed("fetch", fmt.Errorf("broker %d (%s): %w", l.node.ID, l.node.Addr, err))
		return
	}
	l.requestOK()
	if resp.ErrorCode != 0 {
		l.responseFailed(sarama.KError(resp.ErrorCode), id, epoch)
		return
	}
	l.sess.answered(full, resp.SessionID, ws)

	rc := f.cfg.Isolation == kafka.ReadCommitted
	l.results = slices.Grow(l.results[:0], len(ws))[:len(ws)]
	clear(l.results)
	if len(ws) > 8 {
		if l.index == nil {
			l.index = make(map[kafka.TopicPartition]int, len(ws))
		}
		clear(l.index)
		for i := range ws {
			l.index[ws[i].tp] = i
		}
	}
	for j := range resp.Partitions {
		fp := &resp.Partitions[j]
		tp := kafka.TopicPartition{Topic: fp.Topic, Partition: fp.Partition}
		i := -1
		if len(ws) > 8 {
			if k, ok := l.index[tp]; ok {
				i = k
			}
		} else {
			for k := range ws {
				if ws[k].tp == tp {
					i = k
					break
				}
			}
		}
		if i < 0 {
			continue // not asked for
		}
		r := &l.results[i]
		*r = result{found: true, err: sarama.KError(fp.ErrorCode), hw: fp.HighWatermark, lso: fp.LastStableOffset, logStart: fp.LogStartOffset}
		if r.err == sarama.ErrNoError {
			r.d = decodeRaw(&l.dec, fp.Records, fp.Aborted, ws[i].offset, rc, f.takeRecords)
		}
	}
	clear(resp.Partitions) // drop the response
	l.rparts = resp.Partitions[:0]
	l.apply(ws)
}

// compareTP orders partitions by topic, then partition.
func compareTP(a, b recordbatch.TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// applySarama is apply for a response sarama decoded.
func (l *loop) applySarama(resp *sarama.FetchResponse, ws []want) {
	rc := l.f.cfg.Isolation == kafka.ReadCommitted
	l.results = l.results[:0]
	for i := range ws {
		var r result
		if blk := resp.GetBlock(ws[i].tp.Topic, ws[i].tp.Partition); blk != nil {
			r = result{found: true, err: blk.Err, hw: blk.HighWaterMarkOffset, lso: blk.LastStableOffset, logStart: blk.LogStartOffset}
			if blk.Err == sarama.ErrNoError {
				r.d = decodeBlock(blk, ws[i].offset, rc, l.f.takeRecords())
			}
		}
		l.results = append(l.results, r)
	}
	l.apply(ws)
}

// apply turns l.results, the outcome of a response for ws (one result each), into chunks,
// position resets and leader moves, under the lock, for the partitions still fetched from the
// offsets asked for. The records were decoded without the lock.
func (l *loop) apply(ws []want) {
	f := l.f
	chunks, reroute := false, false
	f.mu.Lock()
	for i := range ws {
		w, r := &ws[i], &l.results[i]
		d := &r.d
		p := w.p
		if f.parts[p.tp] != p || p.loop != l || p.ready || p.failed || p.pos != w.offset {
			continue // unassigned, moved, sought or reset meanwhile
		}
		if !r.found {
			// Not in an incremental response: nothing new.
			l.noProgressLocked(p, false)
			continue
		}
		switch k := r.err; {
		case k == sarama.ErrNoError:
			p.hw, p.lso, p.logStart = r.hw, r.lso, r.logStart
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
			if r.hw >= 0 {
				p.hw, p.lso, p.logStart = r.hw, r.lso, r.logStart
			}
			if f.cfg.Reset == None {
				f.failLocked(p, ErrOffsetOutOfRange)
				chunks = true
				continue
			}
			f.log.Info("fetch: offset out of range; resetting", "partition", p.tp.String(), "offset", p.pos,
				"reset", f.cfg.Reset.String(), "log_start", r.logStart, "high_watermark", r.hw)
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
// unless the last request failed, and the connections.
func (l *loop) shutdown() {
	f := l.f
	if l.sess.id != 0 && l.failures == 0 {
		switch {
		case l.raw != nil:
			q := recordbatch.FetchRequest{MaxBytes: f.cfg.MaxBytes, ReadCommitted: f.cfg.Isolation == kafka.ReadCommitted,
				SessionID: l.sess.id, SessionEpoch: -1}
			if _, err := l.raw.RoundTrip(context.Background(), recordbatch.APIKeyFetch, recordbatch.FetchVersion, false, q.AppendTo(nil)); err != nil {
				f.log.Debug("fetch: closing the fetch session failed", "broker", l.node.ID, "error", err)
			}
		case l.conn != nil:
			req := &sarama.FetchRequest{Version: fetchVersion, MaxWaitTime: 0, MinBytes: 0, MaxBytes: f.cfg.MaxBytes,
				Isolation: sarama.IsolationLevel(f.cfg.Isolation), SessionID: l.sess.id, SessionEpoch: -1}
			if _, err := l.conn.Fetch(req); err != nil && !errors.Is(err, sarama.ErrNotConnected) {
				f.log.Debug("fetch: closing the fetch session failed", "broker", l.node.ID, "error", err)
			}
		}
		l.sess.reset()
	}
	l.setRaw(nil)
	if l.conn != nil {
		f.cfg.Cluster.Discard(l.node, f.purpose, l.conn)
		l.conn = nil
	}
}
