package produce

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// The sender goroutine: it closes batches whose linger time passed (or all of them during a
// Flush), groups the partitions' oldest batches by leader into one ProduceRequest per broker
// (one batch per partition, at most MaxInFlight requests per broker, at most MaxRequestSize
// bytes), and sends them with AsyncProduce; the response callbacks, on the connections'
// response goroutines, settle each batch. Network calls the sender needs besides produce
// (metadata, AddPartitionsToTxn, InitProducerId after a sequence reset) run on it too, outside
// p.mu.

func (p *Producer) sender() {
	kafka.LabelGoroutine("produce")
	defer close(p.stopped)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.stop
		cancel()
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := p.work(ctx)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
		select {
		case <-p.stop:
			p.shutdown()
			return
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// produceRequest is one request being built for a broker.
type produceRequest struct {
	node    kafka.Node
	batches []*batch
	size    int
}

// work does what is due and returns how long the sender may sleep before something else is.
func (p *Producer) work(ctx context.Context) time.Duration {
	for ctx.Err() == nil {
		p.housekeeping(ctx)
		reqs, wait := p.collect()
		if len(reqs) == 0 {
			return wait
		}
		for _, r := range reqs {
			p.send(r)
		}
	}
	return time.Hour
}

// housekeeping discards broken connections, refreshes stale metadata, resolves the leaders of
// partitions that need one, adds partitions to the open transaction and resets the sequence
// numbers when that is due: the network calls, outside p.mu.
func (p *Producer) housekeeping(ctx context.Context) {
	p.mu.Lock()
	broken := p.broken
	p.broken = nil
	var stale []string
	for t := range p.stale {
		stale = append(stale, t)
	}
	clear(p.stale)
	reset := p.reset && p.inflightTotal() == 0
	var need []*partState
	if p.needLeaders || len(stale) > 0 {
		p.needLeaders = false
		for _, ts := range p.topics {
			refreshed := slices.Contains(stale, ts.name)
			for _, ps := range ts.parts {
				if refreshed {
					ps.leaderOK = false
				}
				if !ps.leaderOK && (len(ps.queue) > 0 || ps.open != nil) {
					need = append(need, ps)
				}
			}
		}
	}
	var add []*partState
	if p.Transactional() && p.txn.state == txnOpen && p.fatal == nil {
		for _, ts := range p.topics {
			for _, ps := range ts.parts {
				if !ps.inTxn && (len(ps.queue) > 0 || (ps.open != nil && ps.open.n > 0)) {
					add = append(add, ps)
				}
			}
		}
	}
	p.mu.Unlock()
	for _, bc := range broken {
		p.cl.Discard(bc.node, p.conn, bc.b)
	}
	if len(stale) > 0 {
		if err := p.cl.RefreshMetadata(stale...); err != nil {
			p.log.Debug("produce: refreshing metadata", "topics", stale, "error", err)
		}
	}
	if len(need) > 0 {
		found := make([]kafka.Node, len(need))
		ok := make([]bool, len(need))
		for i, ps := range need {
			if n, _, err := p.cl.Leader(ps.tp); err == nil {
				found[i], ok[i] = n, true
			} else {
				p.log.Debug("produce: no leader", "partition", ps.tp.String(), "error", err)
			}
		}
		p.mu.Lock()
		for i, ps := range need {
			if ok[i] {
				ps.leader, ps.leaderOK = found[i], true
			} else {
				p.stale[ps.tp.Topic] = true
			}
		}
		p.mu.Unlock()
	}
	if reset {
		p.resetSequences(ctx)
	}
	if len(add) > 0 {
		p.addPartitions(ctx, add)
	}
}

// inflightTotal is the number of requests in flight; p.mu held.
func (p *Producer) inflightTotal() int {
	n := 0
	for _, ns := range p.nodes {
		n += ns.inflight
	}
	return n
}

// collect closes the batches that are due and takes, per broker with room for a request, the
// oldest sendable batch of each of its partitions. It returns the requests and, when there are
// none, how long to wait for the next due batch or retry.
func (p *Producer) collect() ([]*produceRequest, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	wait := time.Hour
	reqs := map[int32]*produceRequest{}
	var out []*produceRequest
	for _, ts := range p.topics {
		for _, ps := range ts.parts {
			if b := ps.open; b != nil && b.n > 0 {
				due := b.created.Add(max(p.cfg.Linger, 0))
				if p.flushing > 0 || !now.Before(due) {
					p.closeOpen(ts, ps)
				} else {
					wait = min(wait, due.Sub(now))
				}
			}
			if len(ps.queue) == 0 || p.fatal != nil {
				continue
			}
			b := ps.queue[0]
			if now.Sub(b.created) > p.cfg.DeliveryTimeout {
				ps.queue = ps.queue[1:]
				p.fail(ps, b, fmt.Errorf("%w: %d records for %s (%s since the batch was created; last error: %v)",
					ErrDeliveryTimeout, b.n, ps.tp, now.Sub(b.created).Round(time.Millisecond), b.lastErr))
				continue
			}
			if p.reset || (p.Transactional() && (!ps.inTxn || p.txn.state != txnOpen)) {
				continue
			}
			if ps.retrying {
				if len(ps.inflight) > 0 {
					continue
				}
				if now.Before(ps.retryAt) {
					wait = min(wait, ps.retryAt.Sub(now))
					continue
				}
			}
			if !p.cfg.NoIdempotence && (len(ps.inflight) >= 5 || (!ps.confirmed && len(ps.inflight) > 0)) {
				continue
			}
			if !ps.leaderOK {
				p.needLeaders = true
				wait = min(wait, p.cfg.RetryBackoff)
				continue
			}
			leader := ps.leader
			ns := p.nodes[leader.ID]
			if ns == nil || ns.node != leader {
				if ns != nil && ns.inflight > 0 {
					continue // the broker's address changed while requests are in flight
				}
				ns = &nodeState{node: leader}
				p.nodes[leader.ID] = ns
			}
			r := reqs[leader.ID]
			if r == nil {
				if ns.inflight >= p.cfg.MaxInFlight {
					continue
				}
				r = &produceRequest{node: leader}
				reqs[leader.ID] = r
				out = append(out, r)
				ns.inflight++
			}
			if len(r.batches) > 0 && r.size+b.bytes > p.cfg.MaxRequestSize {
				continue
			}
			ps.queue = ps.queue[1:]
			p.prepare(ps, b)
			ps.inflight = append(ps.inflight, b)
			r.batches = append(r.batches, b)
			r.size += b.bytes
		}
	}
	p.notifyDrained()
	return out, wait
}

// prepare builds b's RecordBatch for a send (the first or a retry; see written), without its
// records (send encodes them, outside p.mu), and stamps the producer id, epoch and sequence
// numbers, given at the first send; p.mu held.
func (p *Producer) prepare(ps *partState, b *batch) {
	if b.rb == nil {
		b.rb = &sarama.RecordBatch{Version: 2, Codec: p.cfg.Compression, FirstTimestamp: time.UnixMilli(b.firstTS),
			MaxTimestamp: time.UnixMilli(b.maxTS), LastOffsetDelta: int32(b.n - 1),
			ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, IsTransactional: p.Transactional()}
	}
	if p.cfg.NoIdempotence {
		return
	}
	if b.seq < 0 {
		b.seq, b.epoch, b.order = ps.nextSeq, p.epoch, ps.nextOrder
		ps.nextSeq = nextSequence(ps.nextSeq, b.n)
		ps.nextOrder++
	}
	b.rb.ProducerID, b.rb.ProducerEpoch, b.rb.FirstSequence = p.pid, b.epoch, b.seq
}

// encodeRecords gives b's RecordBatch its sarama records, in a reused buffer, unless it has
// them (a batch whose request could not be written keeps them). Sender goroutine, without
// p.mu: a batch being sent is closed (its records do not change) and no answer can settle it
// before its request is written, so Send is not held up while a request's records are built.
func (p *Producer) encodeRecords(b *batch) {
	if b.enc != nil {
		return
	}
	var e *encBuf
	if n := len(p.encFree); n > 0 {
		e = p.encFree[n-1]
		p.encFree[n-1] = nil
		p.encFree = p.encFree[:n-1]
	} else {
		e = &encBuf{}
	}
	b.encode(e)
	b.enc, b.rb.Records = e, e.ptrs
}

// maxEncFree bounds the record buffers kept for the next requests: a request of
// max.request.size holds at most 64 batches of the default batch.size.
const maxEncFree = 64

// written drops the sarama records of the batches of a request that was written (or failed to
// be): AsyncProduce encodes the request before it returns, and sarama keeps the request (and
// the encoded records it caches in each RecordBatch) only to decode the answer, which needs
// none of them. A batch sent again (a retry) is prepared and encoded again. The batches may
// have been settled meanwhile by the answer, on the connection's goroutine: only a batch still
// holding the RecordBatch of this request gives it up. Sender goroutine.
func (p *Producer) written(batches []*batch, rbs []*sarama.RecordBatch, encs []*encBuf) {
	for _, rb := range rbs {
		*rb = sarama.RecordBatch{}
	}
	for _, e := range encs {
		if len(p.encFree) >= maxEncFree {
			break
		}
		clear(e.recs) // the arena's views: they must not keep a recycled batch's arena alive
		e.recs = e.recs[:0]
		clear(e.ptrs)
		e.ptrs = e.ptrs[:0]
		p.encFree = append(p.encFree, e)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, b := range batches {
		if b.rb == rbs[i] {
			b.rb, b.enc = nil, nil
		}
	}
}

// nextSequence is the sequence number after n records from seq: sequence numbers wrap to 0
// after Integer.MAX_VALUE, as Kafka's brokers expect (Java: DefaultRecordBatch.incrementSequence).
func nextSequence(seq int32, n int) int32 {
	if int64(seq)+int64(n) > math.MaxInt32 {
		return int32(int64(seq) + int64(n) - math.MaxInt32 - 1)
	}
	return seq + int32(n)
}

// send writes request r; its callback (or, when the write fails, send itself) settles it.
func (p *Producer) send(r *produceRequest) {
	conn, err := p.cl.Conn(r.node, p.conn)
	if err != nil {
		p.settle(r, nil, nil, err)
		return
	}
	req := &sarama.ProduceRequest{Version: 10, RequiredAcks: sarama.RequiredAcks(p.cfg.Acks), Timeout: int32(p.cfg.RequestTimeout.Milliseconds())}
	if p.Transactional() {
		id := p.cfg.TransactionalID
		req.TransactionalID = &id
	}
	rbs := make([]*sarama.RecordBatch, len(r.batches))
	encs := make([]*encBuf, len(r.batches))
	for i, b := range r.batches {
		p.encodeRecords(b)
		req.AddBatch(b.tp.Topic, b.tp.Partition, b.rb)
		rbs[i], encs[i] = b.rb, b.enc
	}
	if err := conn.AsyncProduce(req, func(resp *sarama.ProduceResponse, err error) {
		p.settle(r, conn, resp, err) // on the connection's response goroutine: no Broker calls
	}); err != nil {
		p.settle(r, conn, nil, err)
	}
	p.written(r.batches, rbs, encs) // settle only reads r.batches
}

// settle handles the outcome of request r sent on conn: resp, or the request's error err.
func (p *Producer) settle(r *produceRequest, conn *sarama.Broker, resp *sarama.ProduceResponse, err error) {
	p.mu.Lock()
	if ns := p.nodes[r.node.ID]; ns != nil && ns.inflight > 0 {
		ns.inflight--
	}
	if err != nil && conn != nil {
		p.broken = append(p.broken, brokenConn{node: r.node, b: conn})
	}
	for _, b := range r.batches {
		ps := p.part(b.tp)
		if err != nil {
			if kafka.Retriable(err) {
				p.retry(ps, b, err)
			} else {
				p.fail(ps, b, fmt.Errorf("produce to %s: %w", b.tp, err))
			}
			continue
		}
		blk := resp.GetBlock(b.tp.Topic, b.tp.Partition)
		if blk == nil {
			p.retry(ps, b, fmt.Errorf("produce to %s: no answer for the partition: %w", b.tp, sarama.ErrIncompleteResponse))
			continue
		}
		p.outcome(ps, b, blk)
	}
	p.notifyDrained()
	p.mu.Unlock()
	p.signal()
}

// outcome settles batch b by its partition's block of the response; p.mu held.
func (p *Producer) outcome(ps *partState, b *batch, blk *sarama.ProduceResponseBlock) {
	switch k := blk.Err; {
	case k == sarama.ErrNoError, k == sarama.ErrDuplicateSequenceNumber:
		p.succeed(ps, b, blk.Offset)
	case k == sarama.ErrOutOfOrderSequenceNumber || k == sarama.ErrUnknownProducerID:
		if p.earlierPending(ps, b) {
			// An earlier batch of the partition failed and is to be resent: this one follows it.
			p.retry(ps, b, k)
			return
		}
		if p.Transactional() {
			p.fail(ps, b, fmt.Errorf("produce to %s: %w", b.tp, k))
			return
		}
		// The broker has no (matching) state for this producer: start the sequence numbers over
		// under a new producer id and resend (Java: the idempotent producer's epoch bump).
		p.log.Warn("produce: the broker lost this producer's sequence; resending under a new producer id", "partition", b.tp.String(), "error", k)
		p.reset = true
		p.retry(ps, b, k)
	case k == sarama.ErrProducerFenced || k == sarama.ErrInvalidProducerEpoch || k == sarama.ErrTransactionCoordinatorFenced:
		p.setFatal("produce to "+b.tp.String(), fmt.Errorf("%w: %w", ErrFenced, k))
		p.fail(ps, b, k)
	case k == sarama.ErrTransactionalIDAuthorizationFailed || k == sarama.ErrClusterAuthorizationFailed ||
		(k == sarama.ErrInvalidTxnState && p.Transactional()):
		// INVALID_TXN_STATE: the coordinator no longer knows this producer's transaction (kfake
		// answers so a producer fenced meanwhile).
		p.setFatal("produce to "+b.tp.String(), k)
		p.fail(ps, b, k)
	case kafka.RetriableCode(k):
		if kafka.StaleMetadata(k) {
			p.stale[b.tp.Topic] = true
		}
		p.retry(ps, b, k)
	default:
		msg := ""
		if blk.ErrorMessage != nil {
			msg = ": " + *blk.ErrorMessage
		}
		p.fail(ps, b, fmt.Errorf("produce to %s%s: %w", b.tp, msg, k))
	}
}

// earlierPending reports whether a batch of ps with a lower sequence number than b has no
// outcome yet; p.mu held.
func (p *Producer) earlierPending(ps *partState, b *batch) bool {
	for _, o := range ps.inflight {
		if o != b && o.seq >= 0 && o.order < b.order && o.epoch == b.epoch {
			return true
		}
	}
	for _, o := range ps.queue {
		if o.seq >= 0 && o.order < b.order && o.epoch == b.epoch {
			return true
		}
	}
	return false
}

// succeed records b as written at offset base; p.mu held.
func (p *Producer) succeed(ps *partState, b *batch, base int64) {
	ps.inflight = removeBatch(ps.inflight, b)
	if base >= 0 {
		ps.acked = max(ps.acked, base+int64(b.n)-1)
	}
	if ps.retrying && len(ps.inflight) == 0 && !slices.ContainsFunc(ps.queue, func(o *batch) bool { return o.seq >= 0 }) {
		ps.retrying = false
	}
	ps.confirmed = true
	p.unfinished--
	p.recycle(b)
}

// retry puts b back into ps's queue by its sequence number, to be resent after a backoff; a
// batch past its delivery timeout fails instead; p.mu held.
func (p *Producer) retry(ps *partState, b *batch, err error) {
	ps.inflight = removeBatch(ps.inflight, b)
	b.attempts++
	b.lastErr = err
	if p.Transactional() && (p.txn.state != txnOpen || b.txnGen != p.txn.gen) {
		// Its transaction can only be aborted: the batch is never to be sent again (and,
		// holding sequence numbers, makes the epoch be bumped after the abort).
		p.txn.failed = true
		p.unfinished--
		p.notifyDrained()
		return
	}
	if time.Since(b.created) > p.cfg.DeliveryTimeout {
		p.fail(ps, b, fmt.Errorf("%w: %d records for %s (last error: %v)", ErrDeliveryTimeout, b.n, ps.tp, err))
		return
	}
	if b.attempts == 1 || b.attempts%10 == 0 {
		p.log.Debug("produce: retrying a batch", "partition", ps.tp.String(), "records", b.n, "attempt", b.attempts, "error", err)
	}
	i := 0
	for i < len(ps.queue) && ps.queue[i].seq >= 0 && (b.seq < 0 || ps.queue[i].order < b.order) {
		i++
	}
	ps.queue = slices.Insert(ps.queue, i, b)
	ps.retrying = true
	ps.retryAt = time.Now().Add(kafka.Backoff(b.attempts, p.cfg.RetryBackoff, p.cfg.RetryBackoffMax))
}

// fail gives b's records up with err: they are reported by Failures; a transaction becomes
// abortable; an idempotent producer starts its sequence numbers over (the broker would see a
// gap). p.mu held.
func (p *Producer) fail(ps *partState, b *batch, err error) {
	ps.inflight = removeBatch(ps.inflight, b)
	if b.txnGen == p.txn.gen || !p.Transactional() {
		for i := 0; i < b.n; i++ {
			p.failures = append(p.failures, Failure{Record: b.record(i), Err: err})
		}
	}
	if p.Transactional() {
		if b.txnGen == p.txn.gen {
			p.setAbortable(err)
		}
		p.txn.failed = true
	} else if !p.cfg.NoIdempotence && b.seq >= 0 {
		p.reset = true
	}
	p.unfinished--
	// The failure records point into b's arena: b is not recycled.
}

func removeBatch(bs []*batch, b *batch) []*batch {
	if i := slices.Index(bs, b); i >= 0 {
		return slices.Delete(bs, i, i+1)
	}
	return bs
}

// part returns the state of tp, which exists for every batch; p.mu held.
func (p *Producer) part(tp kafka.TopicPartition) *partState {
	return p.topics[tp.Topic].parts[tp.Partition]
}

// setFatal records the producer's fatal error (the first one wins); p.mu held.
func (p *Producer) setFatal(op string, err error) {
	if p.fatal == nil {
		p.fatal = &FatalError{Op: op, Err: err}
		p.log.Error("produce: fatal error", "op", op, "error", err)
	}
}

// notifyDrained releases the Flush calls waiting when no batch is left without an outcome (or
// nothing can progress any more); p.mu held.
func (p *Producer) notifyDrained() {
	if p.unfinished > 0 && p.fatal == nil {
		return
	}
	for _, ch := range p.drained {
		close(ch)
	}
	p.drained = nil
}

// resetSequences gets a new producer id (or, for a transactional producer, a bumped epoch) and
// starts every partition's sequence numbers over; batches sent under the old id are resent
// under the new one. Called by the sender with nothing in flight.
func (p *Producer) resetSequences(ctx context.Context) {
	if err := p.initProducerID(ctx); err != nil {
		if ctx.Err() == nil {
			p.mu.Lock()
			p.setFatal("reset the producer id", err)
			p.notifyDrained()
			p.mu.Unlock()
		}
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset = false
	for _, ts := range p.topics {
		for _, ps := range ts.parts {
			ps.nextSeq = 0
			ps.retrying = false
			ps.confirmed = false
			for _, b := range ps.queue {
				b.seq = -1
			}
		}
	}
}

// initProducerID sends InitProducerId (to the transaction coordinator with a transactional.id,
// else to any broker) until it succeeds, a fatal error comes back, or ctx ends; it sets pid and
// epoch. With a known producer id it asks for that id's next epoch (KIP-360).
func (p *Producer) initProducerID(ctx context.Context) error {
	p.mu.Lock()
	pid, epoch := p.pid, p.epoch
	p.mu.Unlock()
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := kafka.Sleep(ctx, kafka.Backoff(attempt, p.cfg.RetryBackoff, p.cfg.RetryBackoffMax)); err != nil {
				return fmt.Errorf("produce: init producer id: %w (last error: %v)", err, last)
			}
		}
		var node kafka.Node
		var err error
		if p.Transactional() {
			node, err = p.txnCoordinator(ctx, attempt > 0 && errors.Is(last, sarama.ErrNotCoordinatorForConsumer))
		} else {
			node, err = p.cl.AnyNode()
		}
		if err != nil {
			if !kafka.Retriable(err) {
				return err
			}
			last = err
			continue
		}
		b, err := p.cl.Conn(node, p.txnP)
		if err != nil {
			if kafka.AuthError(err) { // the connection cannot authenticate: no retry cures it
				return &FatalError{Op: "init producer id", Err: err}
			}
			last = err
			continue
		}
		req := &sarama.InitProducerIDRequest{Version: 4, TransactionTimeout: p.cfg.TransactionTimeout, ProducerID: -1, ProducerEpoch: -1}
		if p.Transactional() {
			id := p.cfg.TransactionalID
			req.TransactionalID = &id
			req.ProducerID, req.ProducerEpoch = pid, epoch
		}
		resp, err := b.InitProducerID(req)
		if err != nil {
			p.cl.Discard(node, p.txnP, b)
			last = err
			continue
		}
		switch k := resp.Err; {
		case k == sarama.ErrNoError:
			p.mu.Lock()
			p.pid, p.epoch = resp.ProducerID, resp.ProducerEpoch
			p.mu.Unlock()
			return nil
		case k == sarama.ErrProducerFenced || k == sarama.ErrInvalidProducerEpoch:
			return &FatalError{Op: "init producer id", Err: fmt.Errorf("%w: %w", ErrFenced, k)}
		case kafka.RetriableCode(k):
			if k == sarama.ErrNotCoordinatorForConsumer || k == sarama.ErrConsumerCoordinatorNotAvailable {
				p.forgetTxnCoordinator()
			}
			last = k
		default:
			return &FatalError{Op: "init producer id", Err: k}
		}
	}
}

// shutdown settles what is left when the producer closes.
func (p *Producer) shutdown() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ts := range p.topics {
		for _, ps := range ts.parts {
			if ps.open != nil {
				p.unfinished--
				ps.open = nil
			}
			p.unfinished -= len(ps.queue)
			ps.queue = nil
		}
	}
	for _, ch := range p.drained {
		close(ch)
	}
	p.drained = nil
}
