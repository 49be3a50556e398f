package produce

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// The transactional protocol (KIP-98, with KIP-447's consumer group metadata in
// TxnOffsetCommit): InitProducerId with the transactional.id fences older producers (New);
// Begin opens a transaction locally; the sender adds each partition to it (AddPartitionsToTxn)
// before its first batch; SendOffsets adds the consumed offsets (AddOffsetsToTxn, then
// TxnOffsetCommit to the group coordinator); Commit flushes and ends the transaction
// (EndTxn); Abort drops what was not sent, waits for what was, and ends it aborted.

type txnKind int

const (
	// txnReady: no transaction open.
	txnReady txnKind = iota
	// txnOpen: Begin was called.
	txnOpen
	// txnAbortable: the open transaction failed; only Abort helps.
	txnAbortable
)

type txnState struct {
	state txnKind
	// gen counts transactions: batches remember theirs.
	gen uint64
	err error
	// failed: a batch of the transaction failed, leaving a gap in the sequence numbers: the
	// epoch is bumped after the abort.
	failed bool
	// added: partitions or offsets were added, so EndTxn is needed.
	added bool
	coord kafka.Node
	// coordOK: coord is known.
	coordOK bool
}

// Offset is a consumed position sent in a transaction: the next offset to read, the leader
// epoch of the last record read (-1 unknown), and the metadata string Kafka keeps with it.
type Offset struct {
	Offset      int64
	LeaderEpoch int32
	Metadata    string
}

// GroupMetadata identifies the consumer-group member whose offsets a transaction commits, so
// the group coordinator can fence a zombie (KIP-447). Java: ConsumerGroupMetadata.
type GroupMetadata struct {
	GroupID    string
	Generation int32
	MemberID   string
	InstanceID string
}

// ErrGroupMember is wrapped by SendOffsets when the group coordinator rejects the member
// (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID): its tasks moved to another
// member. Java: CommitFailedException; Kafka Streams: TaskMigratedException.
var ErrGroupMember = errors.New("produce: the group coordinator rejected the member's generation")

// Begin opens a transaction. Errors: the fatal error; an open transaction; a producer without
// transactional.id. Java: KafkaProducer.beginTransaction.
func (p *Producer) Begin() error {
	if !p.Transactional() {
		return errors.New("produce: Begin on a producer without transactional.id")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fatal != nil {
		return p.fatal
	}
	if p.txn.state != txnReady {
		return errors.New("produce: Begin with a transaction open")
	}
	p.txn.state, p.txn.err, p.txn.added, p.txn.failed = txnOpen, nil, false, false
	p.txn.gen++
	return nil
}

// SendOffsets adds consumed offsets to the open transaction: they are committed for group
// g.GroupID if and only if the transaction commits. Errors: the fatal error (fencing),
// the abortable error, ErrGroupMember (wrapped), ctx's. Java:
// KafkaProducer.sendOffsetsToTransaction(offsets, groupMetadata).
func (p *Producer) SendOffsets(ctx context.Context, offsets map[kafka.TopicPartition]Offset, g GroupMetadata) error {
	p.mu.Lock()
	err := p.stateErr()
	if err == nil && p.txn.state != txnOpen {
		err = ErrNoTransaction
	}
	pid, epoch := p.pid, p.epoch
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if len(offsets) == 0 {
		return nil
	}
	add := &sarama.AddOffsetsToTxnRequest{Version: 3, TransactionalID: p.cfg.TransactionalID, ProducerID: pid, ProducerEpoch: epoch, GroupID: g.GroupID}
	if err := p.txnCall(ctx, "add offsets to the transaction", func(b *sarama.Broker) (sarama.KError, error) {
		resp, err := b.AddOffsetsToTxn(add)
		if err != nil {
			return 0, err
		}
		return resp.Err, nil
	}); err != nil {
		return p.txnFailed(err)
	}
	p.mu.Lock()
	p.txn.added = true
	p.mu.Unlock()
	req := &sarama.TxnOffsetCommitRequest{Version: 3, TransactionalID: p.cfg.TransactionalID, GroupID: g.GroupID,
		ProducerID: pid, ProducerEpoch: epoch, GenerationID: g.Generation, MemberID: g.MemberID,
		Topics: map[string][]*sarama.PartitionOffsetMetadata{}}
	if g.InstanceID != "" {
		id := g.InstanceID
		req.GroupInstanceID = &id
	}
	for tp, o := range offsets {
		md := o.Metadata
		req.Topics[tp.Topic] = append(req.Topics[tp.Topic], &sarama.PartitionOffsetMetadata{Partition: tp.Partition,
			Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: &md})
	}
	var coord kafka.Node
	var known bool
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := kafka.Sleep(ctx, kafka.Backoff(attempt, p.cfg.RetryBackoff, p.cfg.RetryBackoffMax)); err != nil {
				return fmt.Errorf("produce: commit offsets in the transaction: %w (last error: %v)", err, last)
			}
		}
		if !known {
			n, err := p.cl.FindCoordinator(ctx, g.GroupID, sarama.CoordinatorGroup)
			if err != nil {
				if !kafka.Retriable(err) {
					return p.txnFailed(err)
				}
				last = err
				continue
			}
			coord, known = n, true
		}
		b, err := p.cl.Conn(coord, p.txnP)
		if err != nil {
			if kafka.AuthError(err) { // the connection cannot authenticate: no retry cures it
				return p.txnFailed(err)
			}
			last, known = err, false
			continue
		}
		resp, err := b.TxnOffsetCommit(req)
		if err != nil {
			p.cl.Discard(coord, p.txnP, b)
			last, known = err, false
			continue
		}
		var retry, perr error
		for topic, errs := range resp.Topics {
			for _, pe := range errs {
				switch k := pe.Err; {
				case k == sarama.ErrNoError:
				case k == sarama.ErrProducerFenced || k == sarama.ErrInvalidProducerEpoch:
					perr = &FatalError{Op: "commit offsets in the transaction", Err: fmt.Errorf("%w: %w", ErrFenced, k)}
				case k == sarama.ErrIllegalGeneration || k == sarama.ErrUnknownMemberId || k == sarama.ErrFencedInstancedId:
					if perr == nil {
						perr = fmt.Errorf("%w: %s-%d: %w", ErrGroupMember, topic, pe.Partition, k)
					}
				case kafka.RetriableCode(k):
					retry = k
					if k == sarama.ErrNotCoordinatorForConsumer || k == sarama.ErrConsumerCoordinatorNotAvailable {
						known = false
					}
				default:
					if perr == nil {
						perr = fmt.Errorf("produce: commit offset of %s-%d in the transaction: %w", topic, pe.Partition, k)
					}
				}
			}
		}
		if perr != nil {
			return p.txnFailed(perr)
		}
		if retry == nil {
			return nil
		}
		p.log.Debug("produce: retrying the transactional offset commit", "group", g.GroupID, "attempt", attempt+1, "error", retry)
		last = retry
	}
}

// txnFailed records err as the open transaction's failure (or the producer's, when fatal)
// and returns it.
func (p *Producer) txnFailed(err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var fe *FatalError
	if errors.As(err, &fe) {
		p.setFatal(fe.Op, fe.Err)
		return p.fatal
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	p.setAbortable(err)
	return p.txn.err
}

// Commit sends every record of the open transaction, waits for their acknowledgements and
// commits the transaction. Errors: the abortable error (abort next), the fatal error, ctx's.
// Java: KafkaProducer.commitTransaction.
func (p *Producer) Commit(ctx context.Context) error {
	p.mu.Lock()
	if p.txn.state == txnReady {
		p.mu.Unlock()
		return ErrNoTransaction
	}
	p.mu.Unlock()
	if err := p.Flush(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	if err := p.stateErr(); err != nil {
		p.mu.Unlock()
		return err
	}
	added := p.txn.added
	p.mu.Unlock()
	if added {
		if err := p.endTxn(ctx, true); err != nil {
			return p.txnFailed(err)
		}
	}
	p.mu.Lock()
	p.endLocal()
	p.mu.Unlock()
	return nil
}

// Abort drops the open transaction's records not sent yet, waits for those in flight, and
// aborts the transaction, so read_committed consumers never see its records and its offsets
// are not committed. Errors: the fatal error (a fenced producer cannot abort: the newer one
// did), ctx's. Java: KafkaProducer.abortTransaction.
func (p *Producer) Abort(ctx context.Context) error {
	p.mu.Lock()
	if p.fatal != nil {
		err := p.fatal
		p.mu.Unlock()
		return err
	}
	if p.txn.state == txnReady {
		p.mu.Unlock()
		return nil
	}
	p.dropUnsent()
	p.notifyDrained()
	p.mu.Unlock()
	// Wait for the batches in flight: the transaction can only end once they are settled.
	if err := p.Flush(ctx); err != nil && !errors.Is(err, ErrAbortable) {
		return err
	}
	p.mu.Lock()
	added := p.txn.added
	p.mu.Unlock()
	if added {
		if err := p.endTxn(ctx, false); err != nil {
			var fe *FatalError
			if errors.As(err, &fe) {
				p.mu.Lock()
				p.setFatal(fe.Op, fe.Err)
				err = p.fatal
				p.mu.Unlock()
			}
			return err
		}
	}
	p.mu.Lock()
	if p.txn.failed {
		p.reset = true // a failed batch left a gap in the sequence numbers: bump the epoch
	}
	p.endLocal()
	p.mu.Unlock()
	p.signal()
	return nil
}

// setAbortable makes the open transaction abortable with err and drops the batches that were
// not sent yet: they can never be (the transaction can only be aborted), and Flush and Commit
// must not wait for them (Java: the accumulator's abortUndrainedBatches). Batches in flight
// still settle. p.mu held.
func (p *Producer) setAbortable(err error) {
	if p.txn.state != txnOpen {
		return
	}
	p.txn.state = txnAbortable
	p.txn.err = fmt.Errorf("%w: %w", ErrAbortable, err)
	p.dropUnsent()
	p.notifyDrained()
}

// dropUnsent drops every batch not sent yet (open or queued). A dropped batch that was sent
// before (it waited to be resent) holds sequence numbers the broker never saw, so the epoch is
// bumped after the abort (txn.failed), as Java does. p.mu held.
func (p *Producer) dropUnsent() {
	for _, ts := range p.topics {
		for _, ps := range ts.parts {
			if ps.open != nil {
				p.unfinished--
				ps.open = nil
			}
			for _, b := range ps.queue {
				if b.seq >= 0 {
					p.txn.failed = true
				}
			}
			p.unfinished -= len(ps.queue)
			ps.queue = nil
			ps.retrying = false
		}
	}
}

// endLocal forgets the ended transaction; p.mu held.
func (p *Producer) endLocal() {
	p.txn.state, p.txn.err, p.txn.added = txnReady, nil, false
	for _, ts := range p.topics {
		for _, ps := range ts.parts {
			ps.inTxn = false
		}
	}
}

// endTxn sends EndTxn (commit or abort) until it is answered.
func (p *Producer) endTxn(ctx context.Context, commit bool) error {
	p.mu.Lock()
	pid, epoch := p.pid, p.epoch
	p.mu.Unlock()
	op := "abort the transaction"
	if commit {
		op = "commit the transaction"
	}
	req := &sarama.EndTxnRequest{Version: 3, TransactionalID: p.cfg.TransactionalID, ProducerID: pid, ProducerEpoch: epoch, TransactionResult: commit}
	return p.txnCall(ctx, op, func(b *sarama.Broker) (sarama.KError, error) {
		resp, err := b.EndTxn(req)
		if err != nil {
			return 0, err
		}
		return resp.Err, nil
	})
}

// addPartitions adds the partitions to the open transaction (the sender, before their first
// batch). A failure makes the transaction abortable, or the producer fatal.
func (p *Producer) addPartitions(ctx context.Context, parts []*partState) {
	p.mu.Lock()
	pid, epoch, gen := p.pid, p.epoch, p.txn.gen
	p.mu.Unlock()
	req := &sarama.AddPartitionsToTxnRequest{Version: 3, TransactionalID: p.cfg.TransactionalID, ProducerID: pid, ProducerEpoch: epoch,
		TopicPartitions: map[string][]int32{}}
	for _, ps := range parts {
		req.TopicPartitions[ps.tp.Topic] = append(req.TopicPartitions[ps.tp.Topic], ps.tp.Partition)
	}
	var failed error
	err := p.txnCall(ctx, "add partitions to the transaction", func(b *sarama.Broker) (sarama.KError, error) {
		resp, err := b.AddPartitionsToTxn(req)
		if err != nil {
			return 0, err
		}
		// One code decides: fatal and retriable ones first, then a partition's own failure.
		var worst sarama.KError
		for topic, errs := range resp.Errors {
			for _, pe := range errs {
				switch k := pe.Err; {
				case k == sarama.ErrNoError:
				case k == sarama.ErrOperationNotAttempted:
				case k == sarama.ErrProducerFenced || k == sarama.ErrInvalidProducerEpoch || k == sarama.ErrTransactionalIDAuthorizationFailed ||
					k == sarama.ErrInvalidProducerIDMapping || k == sarama.ErrInvalidTxnState:
					return k, nil
				case kafka.RetriableCode(k):
					worst = k
				default:
					if failed == nil {
						failed = fmt.Errorf("add %s-%d to the transaction: %w", topic, pe.Partition, k)
					}
				}
			}
		}
		if worst != 0 {
			return worst, nil
		}
		return sarama.ErrNoError, nil
	})
	if err == nil && failed != nil {
		err = failed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.txn.gen != gen || p.txn.state != txnOpen {
		return // aborted meanwhile
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		var fe *FatalError
		if errors.As(err, &fe) {
			p.setFatal(fe.Op, fe.Err)
		} else {
			p.setAbortable(err)
		}
		p.notifyDrained()
		return
	}
	p.txn.added = true
	for _, ps := range parts {
		ps.inTxn = true
	}
}

// txnCall sends one request to the transaction coordinator until it is answered without a
// retriable error: call returns the response's error code (or the request's error).
// CONCURRENT_TRANSACTIONS is retried after a short pause (the coordinator is still ending the
// previous transaction); a moved coordinator is looked up again. Fencing, authorization and
// invalid transaction states come back as a *FatalError; other codes as an error wrapping them.
func (p *Producer) txnCall(ctx context.Context, op string, call func(*sarama.Broker) (sarama.KError, error)) error {
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			d := kafka.Backoff(attempt, p.cfg.RetryBackoff, p.cfg.RetryBackoffMax)
			if errors.Is(last, sarama.ErrConcurrentTransactions) {
				d = min(d, 20*time.Millisecond)
			}
			if err := kafka.Sleep(ctx, d); err != nil {
				return fmt.Errorf("produce: %s: %w (last error: %v)", op, err, last)
			}
		}
		node, err := p.txnCoordinator(ctx, false)
		if err != nil {
			if !kafka.Retriable(err) {
				return &FatalError{Op: op, Err: err}
			}
			last = err
			continue
		}
		b, err := p.cl.Conn(node, p.txnP)
		if err != nil {
			if kafka.AuthError(err) { // the connection cannot authenticate: no retry cures it
				return &FatalError{Op: op, Err: err}
			}
			p.forgetTxnCoordinator()
			last = err
			continue
		}
		k, err := call(b)
		if err != nil {
			p.cl.Discard(node, p.txnP, b)
			p.forgetTxnCoordinator()
			last = err
			continue
		}
		switch {
		case k == sarama.ErrNoError:
			return nil
		case k == sarama.ErrProducerFenced || k == sarama.ErrInvalidProducerEpoch || k == sarama.ErrTransactionCoordinatorFenced:
			return &FatalError{Op: op, Err: fmt.Errorf("%w: %w", ErrFenced, k)}
		case k == sarama.ErrTransactionalIDAuthorizationFailed || k == sarama.ErrClusterAuthorizationFailed ||
			k == sarama.ErrInvalidProducerIDMapping || k == sarama.ErrInvalidTxnState || k == sarama.ErrUnsupportedForMessageFormat:
			return &FatalError{Op: op, Err: k}
		case kafka.RetriableCode(k):
			if k == sarama.ErrNotCoordinatorForConsumer || k == sarama.ErrConsumerCoordinatorNotAvailable {
				p.forgetTxnCoordinator()
			}
			if k != sarama.ErrConcurrentTransactions || attempt%50 == 49 {
				p.log.Debug("produce: retrying", "op", op, "attempt", attempt+1, "error", k)
			}
			last = k
		default:
			return fmt.Errorf("produce: %s: %w", op, k)
		}
	}
}

// txnCoordinator returns the transaction coordinator of the transactional.id, looking it up
// when not known (or when forget).
func (p *Producer) txnCoordinator(ctx context.Context, forget bool) (kafka.Node, error) {
	p.mu.Lock()
	if forget {
		p.txn.coordOK = false
	}
	if p.txn.coordOK {
		n := p.txn.coord
		p.mu.Unlock()
		return n, nil
	}
	p.mu.Unlock()
	n, err := p.cl.FindCoordinator(ctx, p.cfg.TransactionalID, sarama.CoordinatorTransaction)
	if err != nil {
		return kafka.Node{}, err
	}
	p.mu.Lock()
	p.txn.coord, p.txn.coordOK = n, true
	p.mu.Unlock()
	return n, nil
}

func (p *Producer) forgetTxnCoordinator() {
	p.mu.Lock()
	p.txn.coordOK = false
	p.mu.Unlock()
}
