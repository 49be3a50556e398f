package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/task"
)

// The thread's output: every record a task produces goes to the thread's batch-level producer
// the moment it is produced (the producer batches by linger.ms and batch.size), so output does
// not wait for a commit; a commit only flushes. Java: RecordCollectorImpl over the thread's
// KafkaProducer.

// collector hands a task's records to the thread's producer.
type collector struct{ th *thread }

// Send implements task.Collector. Under exactly-once the first record after a commit opens the
// thread's transaction. A record the producer refuses at once (unknown topic, the producer
// failed) goes through the production handler like one that fails later.
func (c collector) Send(rec task.OutRecord) error {
	th := c.th
	if th.discard {
		th.discarded.Add(1)
		return nil
	}
	if th.rt.cfg.ExactlyOnce {
		if err := th.beginTxn(); err != nil {
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
	if err := th.producer.Send(r); err != nil {
		return th.sendFailed(rec, err)
	}
	th.sent.Add(1)
	return nil
}

// beginTxn opens the producer's transaction unless it is open (the executors of a pass call it
// concurrently).
func (th *thread) beginTxn() error {
	th.txnMu.Lock()
	defer th.txnMu.Unlock()
	if th.txnOpen {
		return nil
	}
	if err := th.producer.Begin(); err != nil {
		return kafkaErr("begin transaction", err)
	}
	th.txnOpen = true
	return nil
}

// PartitionsFor implements task.Collector.
func (c collector) PartitionsFor(topic string) (int32, error) {
	return c.th.cluster.Partitions(topic)
}

// sendFailed decides about rec, which the producer could not send: under exactly-once, or
// when the error is the producer's own (fencing) or one a retry may cure, it is the thread's
// error (the tasks are closed dirty and reprocess from the last commit; a missing topic or
// partition, or one without leader, until task.timeout.ms); otherwise the production handler
// drops it (Continue) or fails the thread.
func (th *thread) sendFailed(rec task.OutRecord, err error) error {
	if noProgress(err) {
		// Retried until task.timeout.ms (tasktimeout.go).
		return kafkaErr("send to topic "+rec.Topic, &noProgressError{topic: rec.Topic, partition: rec.Partition, err: err})
	}
	var fe *produce.FatalError
	if th.rt.cfg.ExactlyOnce || errors.As(err, &fe) || errors.Is(err, produce.ErrAbortable) || errors.Is(err, produce.ErrDeliveryTimeout) || kafka.Retriable(err) {
		return kafkaErr("send to topic "+rec.Topic, err)
	}
	if th.rt.cfg.Production != nil && th.rt.cfg.Production(rec, err) == task.Continue {
		th.log.Warn("dropping record the producer could not send", "topic", rec.Topic, "error", err)
		return th.deadLetterSendFailure(rec, err)
	}
	return fmt.Errorf("error sending record to topic %s: %w", rec.Topic, err)
}

// checkSendFailures hands the records that failed since the last check to sendFailed; the
// first error it returns is the thread's.
func (th *thread) checkSendFailures() error {
	var first error
	for _, f := range th.producer.Failures() {
		rec := task.OutRecord{Topic: f.Record.Topic, Partition: f.Record.Partition, Key: f.Record.Key, Value: f.Record.Value, Timestamp: f.Record.Timestamp}
		rec.Source, _ = f.Record.Source.(*task.RawRecord)
		for _, h := range f.Record.Headers {
			rec.Headers.Add(h.Key, h.Value)
		}
		if err := th.sendFailed(rec, f.Err); err != nil && first == nil {
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
		if err := th.producer.Flush(ctx); err != nil {
			return kafkaErr("flush the producer", err)
		}
		before := th.deadLettered.Load()
		if err := th.checkSendFailures(); err != nil {
			return err
		}
		if th.deadLettered.Load() == before {
			break
		}
	}
	th.recordChangelogOffsets()
	return nil
}

// recordChangelogOffsets tells every task the offset of the last record of each of its
// changelog partitions that the producer acknowledged.
func (th *thread) recordChangelogOffsets() {
	for tp, id := range th.changelogOwner {
		if off := th.producer.Acked(kafka.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}); off >= 0 {
			if ts := th.states[id]; ts != nil {
				ts.RecordWritten(changelog.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, off)
			}
		}
	}
}

// newProducer creates the thread's producer (and the cluster view it uses): idempotent,
// acks=all, Java's partitioner; under exactly-once transactional with transactional.id
// <application.id>-<process id>-<thread index> and transaction.timeout.ms 10 s (Kafka
// Streams' default under exactly-once), which fences a predecessor with the same id.
func (th *thread) newProducer() error {
	r := th.rt
	if th.cluster == nil {
		sc := r.cfg.Sarama()
		sc.ClientID = th.name + "-producer"
		cl, err := kafka.NewCluster(kafka.Config{Brokers: r.cfg.Brokers, Sarama: sc, Logger: th.log})
		if err != nil {
			return fmt.Errorf("%s: producer: %w", th.name, err)
		}
		th.cluster = cl
	}
	pc := r.cfg.Producer
	pc.Cluster = th.cluster
	pc.ClientID = th.name + "-producer"
	pc.Logger = th.log
	if r.cfg.ExactlyOnce {
		pc.TransactionalID = fmt.Sprintf("%s-%s-%d", r.cfg.ApplicationID, r.cfg.ProcessID, th.idx+1)
		if pc.TransactionTimeout <= 0 {
			pc.TransactionTimeout = 10 * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(th.ctx, r.cfg.PrepareTimeout)
	defer cancel()
	p, err := produce.New(ctx, pc)
	if err != nil {
		return fmt.Errorf("%s: producer: %w", th.name, err)
	}
	th.producer = p
	th.txnOpen = false
	return nil
}

// abortTransaction aborts the thread's open transaction, if any (its records and offsets are
// dropped). When the abort fails (a fenced producer cannot abort: its successor did; or the
// coordinator did not answer in time) the producer is replaced, so that no transaction is left
// open in it for the next Begin to trip on.
func (th *thread) abortTransaction() {
	if th.producer == nil || !th.txnOpen {
		return
	}
	th.txnOpen = false
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := th.producer.Abort(ctx); err != nil {
		th.log.Debug("aborting the transaction failed; replacing the producer", "error", err)
		th.resetProducer()
	}
}

// closeProducer aborts an open transaction and closes the producer.
func (th *thread) closeProducer() {
	if th.producer == nil {
		return
	}
	if th.txnOpen {
		th.txnOpen = false
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := th.producer.Abort(ctx); err != nil {
			th.log.Debug("aborting the transaction before closing the producer", "error", err)
		}
		cancel()
	}
	_ = th.producer.Close()
	th.producer = nil
}

// resetProducer replaces the producer (after a failure: fencing, an aborted transaction),
// retrying every second until the runtime stops (then it returns nil, without a producer). An
// authorization or authentication failure (kafka.AuthError), which no retry cures, is
// returned at once.
func (th *thread) resetProducer() error {
	th.closeProducer()
	for th.ctx.Err() == nil {
		err := th.newProducer()
		if err == nil {
			return nil
		}
		if kafka.AuthError(err) {
			return err
		}
		th.log.Warn("cannot create producer; retrying", "error", err)
		select {
		case <-th.ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}
