package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
)

// The thread's output: every record a task produces goes to the thread's batch-level producer
// the moment it is produced (the producer batches by linger.ms and batch.size), so output does
// not wait for a commit; a commit only flushes. Java: RecordCollectorImpl over the thread's
// KafkaProducer.

// output is a stream thread's producer side: its producer and transaction, what the tasks'
// collectors hand it (concurrently, from the task executors), the production handler and the
// dead letters of failed sends. The thread flushes it and commits through it between passes.
type output struct {
	rt   *Runtime
	name string
	idx  int
	log  *slog.Logger
	obs  *metrics.Thread
	ctx  context.Context
	// cluster is the thread's view of the cluster (shared with its member and fetcher).
	cluster  *kafka.Cluster
	producer *produce.Producer
	// txnOpen: under exactly-once, the producer's transaction is open. During a pass the
	// executors read it on every record and open it under txnMu (the first record after a
	// commit); between passes only the thread writes it.
	txnOpen atomic.Bool
	txnMu   sync.Mutex
	// discard drops what the tasks send (set by the thread while tasks close dirty, or after a
	// clean close's checkpoint).
	discard bool
	// sent counts the records handed to the producer; discarded those dropped because discard
	// was set; deadLettered the dead-letter records of failed sends (deadLetterSendFailure).
	sent, discarded, deadLettered atomic.Int64
}

// collector hands a task's records to the thread's producer.
type collector struct{ o *output }

// Send implements task.Collector. Under exactly-once the first record after a commit opens the
// thread's transaction. A record the producer refuses at once (unknown topic, the producer
// failed) goes through the production handler like one that fails later.
func (c collector) Send(rec task.OutRecord) error {
	o := c.o
	if o.discard {
		o.discarded.Add(1)
		return nil
	}
	if o.rt.cfg.ExactlyOnce {
		if err := o.beginTxn(); err != nil {
			return err
		}
	}
	r := produce.Record{Topic: rec.Topic, Partition: rec.Partition, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp}
	if rec.Source != nil {
		r.Source = rec.Source
	}
	if rec.Headers.Len() > 0 {
		for h := range rec.Headers.All() {
			r.Headers = append(r.Headers, produce.Header{Key: h.Key, Value: h.Value})
		}
	}
	if err := o.producer.Send(r); err != nil {
		return o.sendFailed(rec, err)
	}
	o.sent.Add(1)
	return nil
}

// beginTxn opens the producer's transaction unless it is open (the executors of a pass call it
// concurrently).
func (o *output) beginTxn() error {
	if o.txnOpen.Load() {
		return nil
	}
	o.txnMu.Lock()
	defer o.txnMu.Unlock()
	if o.txnOpen.Load() {
		return nil
	}
	if err := o.producer.Begin(); err != nil {
		return kafkaErr("begin transaction", err)
	}
	o.txnOpen.Store(true)
	return nil
}

// PartitionsFor implements task.Collector.
func (c collector) PartitionsFor(topic string) (int32, error) {
	return c.o.cluster.Partitions(topic)
}

// sendFailed decides about rec, which the producer could not send: under exactly-once, or
// when the error is the producer's own (fencing) or one a retry may cure, it is the thread's
// error (the tasks are closed dirty and reprocess from the last commit; a missing topic or
// partition, or one without leader, until task.timeout.ms); otherwise the production handler
// drops it (Continue) or fails the thread.
func (o *output) sendFailed(rec task.OutRecord, err error) error {
	if noProgress(err) {
		// Retried until task.timeout.ms (tasktimeout.go).
		return kafkaErr("send to topic "+rec.Topic, &noProgressError{topic: rec.Topic, partition: rec.Partition, err: err})
	}
	var fe *produce.FatalError
	if o.rt.cfg.ExactlyOnce || errors.As(err, &fe) || errors.Is(err, produce.ErrAbortable) || errors.Is(err, produce.ErrDeliveryTimeout) || kafka.Retriable(err) {
		return kafkaErr("send to topic "+rec.Topic, err)
	}
	if o.rt.cfg.Production != nil && o.rt.cfg.Production(rec, err) == task.Continue {
		o.log.Warn("dropping record the producer could not send", "topic", rec.Topic, "error", err)
		return o.deadLetterSendFailure(rec, err)
	}
	return fmt.Errorf("error sending record to topic %s: %w", rec.Topic, err)
}

// checkSendFailures hands the records that failed since the last check to sendFailed; the
// first error it returns is the thread's.
func (o *output) checkSendFailures() error {
	var first error
	for _, f := range o.producer.Failures() {
		rec := task.OutRecord{Topic: f.Record.Topic, Partition: f.Record.Partition, Key: f.Record.Key, Value: f.Record.Value, Timestamp: f.Record.Timestamp}
		rec.Source, _ = f.Record.Source.(*task.RawRecord)
		for _, h := range f.Record.Headers {
			rec.Headers.Add(h.Key, h.Value)
		}
		if err := o.sendFailed(rec, f.Err); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// flushTimeout bounds a flush of the producer: records fail by themselves after
// delivery.timeout.ms, so this only guards against a producer that stopped answering.
const flushTimeout = 10 * time.Minute

// flushOutput sends everything produced so far and waits for the acknowledgements, handles
// the records that failed, and records the changelog offsets written (for checkpoints and
// exactly-once store batches). Java: RecordCollectorImpl.flush.
func (th *thread) flushOutput() error {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	// Dead-letter records of failed records are sent while the failures are handled; a second
	// round flushes them (their own failures are not dead-lettered again: they have no Source).
	for round := 0; round < 2; round++ {
		if err := th.out.producer.Flush(ctx); err != nil {
			return kafkaErr("flush the producer", err)
		}
		before := th.out.deadLettered.Load()
		if err := th.out.checkSendFailures(); err != nil {
			return err
		}
		if th.out.deadLettered.Load() == before {
			break
		}
	}
	th.tm.recordChangelogOffsets()
	return nil
}

// newProducer creates the thread's producer (and the cluster view it uses): idempotent,
// acks=all, Java's partitioner; under exactly-once transactional with transactional.id
// <application.id>-<process id>-<thread index> and transaction.timeout.ms 10 s (Kafka
// Streams' default under exactly-once), which fences a predecessor with the same id.
func (o *output) newProducer() error {
	r := o.rt
	if o.cluster == nil {
		sc := r.cfg.Sarama()
		sc.ClientID = o.name + "-producer"
		cl, err := kafka.NewCluster(kafka.Config{Brokers: r.cfg.Brokers, Sarama: sc, Logger: o.log})
		if err != nil {
			return fmt.Errorf("%s: producer: %w", o.name, err)
		}
		o.cluster = cl
	}
	pc := r.cfg.Producer
	pc.Cluster = o.cluster
	pc.ClientID = o.name + "-producer"
	pc.Logger = o.log
	if r.cfg.ExactlyOnce {
		pc.TransactionalID = fmt.Sprintf("%s-%s-%d", r.cfg.ApplicationID, r.cfg.ProcessID, o.idx+1)
		if pc.TransactionTimeout <= 0 {
			pc.TransactionTimeout = 10 * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(o.ctx, r.cfg.PrepareTimeout)
	defer cancel()
	p, err := produce.New(ctx, pc)
	if err != nil {
		return fmt.Errorf("%s: producer: %w", o.name, err)
	}
	o.producer = p
	o.txnOpen.Store(false)
	return nil
}

// abortTransaction aborts the thread's open transaction, if any (its records and offsets are
// dropped). When the abort fails (a fenced producer cannot abort: its successor did; or the
// coordinator did not answer in time) the producer is replaced, so that no transaction is left
// open in it for the next Begin to trip on.
func (o *output) abortTransaction() {
	if o.producer == nil || !o.txnOpen.Load() {
		return
	}
	o.txnOpen.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := o.producer.Abort(ctx); err != nil {
		o.log.Debug("aborting the transaction failed; replacing the producer", "error", err)
		o.reset()
	}
}

// closeProducer aborts an open transaction and closes the producer.
func (o *output) close() {
	if o.producer == nil {
		return
	}
	if o.txnOpen.Load() {
		o.txnOpen.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := o.producer.Abort(ctx); err != nil {
			o.log.Debug("aborting the transaction before closing the producer", "error", err)
		}
		cancel()
	}
	_ = o.producer.Close()
	o.producer = nil
}

// resetProducer replaces the producer (after a failure: fencing, an aborted transaction),
// retrying every second until the runtime stops (then it returns nil, without a producer). An
// authorization or authentication failure (kafka.AuthError), which no retry cures, is
// returned at once.
func (o *output) reset() error {
	o.close()
	for o.ctx.Err() == nil {
		err := o.newProducer()
		if err == nil {
			return nil
		}
		if kafka.AuthError(err) {
			return err
		}
		o.log.Warn("cannot create producer; retrying", "error", err)
		select {
		case <-o.ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}
