package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// commit commits the session's tasks: caches flushed (their records go to the producer), the
// producer flushed, then the consumed offsets committed (at-least-once) or sent in the
// transaction, which is committed (exactly-once v2). A final commit (the session ends: the
// tasks are suspended, then kept or closed) flushes every task's record caches until none is
// dirty (Task.CommitFinal), so closing a task cleanly forwards nothing more; a regular commit
// flushes the caches of the tasks that processed since the last one. Java:
// TaskManager.commitTasksAndMaybeUpdateCommittableOffsets.
func (th *thread) commit(final bool) error {
	th.view.storeMu.Lock() // caches and stores flush: no interactive query meanwhile
	// Async steps: under exactly-once, and at a final commit (revocation, close), the commit
	// waits for every record its tasks admitted to an async step and applies it (outputs,
	// store writes) before the caches flush, so the offsets committed (the transaction) cover
	// exactly the records whose results are in. A regular commit under at-least-once does not
	// wait: it commits no offset past a record an async step still holds (asyncBound below).
	if final || th.rt.cfg.ExactlyOnce {
		if err := th.drainAsync(); err != nil {
			th.view.storeMu.Unlock()
			return err
		}
	}
	needed := th.out.txnOpen.Load() || th.out.producer.Pending() > 0
	flushed, checkpoint, err := th.flushTasks(final)
	if err != nil {
		th.view.storeMu.Unlock()
		return err
	}
	needed = needed || flushed
	th.view.storeMu.Unlock()
	if !needed {
		return nil
	}
	offsets := map[kafka.TopicPartition]produce.Offset{}
	for _, t := range th.tm.tasks {
		for topic, ps := range t.ConsumedOffsets() {
			for p, off := range ps {
				tp := kafka.TopicPartition{Topic: topic, Partition: p}
				offsets[tp] = produce.Offset{Offset: asyncBound(t, tp, th.in.commitPosition(t, tp, off)), LeaderEpoch: -1}
			}
		}
	}
	if !th.rt.cfg.ExactlyOnce {
		if err := th.flushOutput(); err != nil {
			return err
		}
		th.view.storeMu.Lock()
		for _, id := range checkpoint {
			th.tm.writeCheckpoint(id)
		}
		th.view.storeMu.Unlock()
		if len(offsets) == 0 {
			return nil
		}
		commit := make(map[kafka.TopicPartition]group.Offset, len(offsets))
		for tp, o := range offsets {
			commit[tp] = group.Offset{Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata}
		}
		ctx, cancel := context.WithTimeout(context.Background(), th.rt.cfg.PrepareTimeout)
		defer cancel()
		if err := th.membership.member.Commit(ctx, commit); err != nil {
			if errors.Is(err, group.ErrRebalanceInProgress) || errors.Is(err, group.ErrMemberLost) {
				return err
			}
			return kafkaErr("commit offsets", err)
		}
		th.madeProgress()
		return nil
	}
	if !th.out.txnOpen.Load() {
		if len(offsets) == 0 {
			return nil
		}
		if err := th.out.beginTxn(); err != nil {
			return err
		}
	}
	if len(offsets) > 0 {
		meta := th.membership.member.Metadata()
		g := produce.GroupMetadata{GroupID: meta.GroupID, Generation: meta.Generation, MemberID: meta.MemberID, InstanceID: meta.InstanceID}
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		err := th.out.producer.SendOffsets(ctx, offsets, g)
		cancel()
		if err != nil {
			return kafkaErr("send offsets to transaction", err)
		}
	}
	if err := th.commitTxn(); err != nil {
		return err
	}
	if len(offsets) > 0 {
		th.madeProgress()
	}
	return nil
}

// flushTasks is the part of a commit under the store lock: the record caches of the tasks that
// processed since the last commit (every task's, until none is dirty, when final) flush, and
// under at-least-once the stores of the tasks whose checkpoint is due. It runs on the
// executors, one task per goroutine at a time as in a pass: a flush forwards the cached
// records through the task's downstream processors to the producer, the same work as
// processing, which is safe across tasks. It reports whether anything is to commit and the
// tasks whose checkpoint is to be written once the producer is flushed.
func (th *thread) flushTasks(final bool) (needed bool, checkpoint []processor.TaskID, err error) {
	var flush []*task.Task
	for _, t := range th.tm.tasks {
		if final || t.CommitNeeded() {
			needed = needed || t.CommitNeeded()
			flush = append(flush, t)
		}
	}
	err = th.eachTask(flush, func(t *task.Task) error {
		if final {
			return t.CommitFinal()
		}
		return t.CommitCaches()
	})
	if err != nil || th.rt.cfg.ExactlyOnce {
		return needed, nil, err
	}
	// At-least-once: the stores are flushed (and the checkpoint written after the send) only
	// when enough changelog offsets accumulated, as Java's postCommit(false).
	flush = flush[:0]
	for id, t := range th.tm.tasks {
		if th.tm.checkpointDue(id) {
			flush = append(flush, t)
			checkpoint = append(checkpoint, id)
			needed = true
		}
	}
	err = th.eachTask(flush, func(t *task.Task) error { return th.tm.flushStores(t.ID()) })
	return needed, checkpoint, err
}

// commitTxn commits the open transaction and then applies the tasks' exactly-once store
// batches with the changelog offsets the transaction wrote.
func (th *thread) commitTxn() error {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := th.out.producer.Commit(ctx); err != nil {
		return kafkaErr("commit transaction", err)
	}
	th.out.txnOpen.Store(false)
	if err := th.out.checkSendFailures(); err != nil {
		return err
	}
	th.tm.recordChangelogOffsets()
	// The Kafka transaction is committed: the stores' pending batches land with their offsets.
	return th.tm.commitStoreTransactions()
}

// drainAsync waits for the async steps of every task and applies what they hold, at most half
// of max.poll.interval.ms in all (each call is bounded by its own timeout). The tasks are
// drained side by side: each completion wakes the thread (Config.AsyncNotify), which applies
// the completions of every task, so that one task's chain of calls for a key does not wait for
// another's. A drain that does not finish fails the commit: the tasks are closed dirty and
// their records processed again.
func (th *thread) drainAsync() error {
	var deadline <-chan time.Time
	for {
		pending := 0
		for _, t := range th.tm.tasks {
			if _, err := t.ApplyAsync(); err != nil {
				return err
			}
			pending += t.AsyncPending()
		}
		if pending == 0 {
			return nil
		}
		if deadline == nil {
			timer := time.NewTimer(th.maxPollInterval() / 2)
			defer timer.Stop()
			deadline = timer.C
		}
		select {
		case <-th.wake:
		case <-time.After(idleWait): // a wake-up taken by another waiter
		case <-deadline:
			return fmt.Errorf("commit: %d records of async steps still pending after %v", pending, th.maxPollInterval()/2)
		}
	}
}

// asyncBound lowers the offset to commit for tp to the oldest record of tp an async step of t
// still holds (at-least-once commits without waiting for the calls).
func asyncBound(t *task.Task, tp kafka.TopicPartition, next int64) int64 {
	if b, ok := t.AsyncCommitBound(tp.Topic, tp.Partition); ok && b < next {
		return b
	}
	return next
}

// sendClosing waits for the acknowledgements of the n records that closing task id cleanly
// forwarded (its store flush); under exactly-once it commits them in a transaction of their own
// and applies the task's store transaction, so the checkpoint written next covers them.
// Records produced before (none after a final commit) go along.
func (th *thread) sendClosing(id processor.TaskID, n int64) error {
	if n == 0 {
		return nil
	}
	th.log.Debug("sending records forwarded while closing the task", "task", id.String(), "records", n)
	if err := th.flushOutput(); err != nil {
		return err
	}
	if !th.rt.cfg.ExactlyOnce || !th.out.txnOpen.Load() {
		return nil
	}
	return th.commitTxn()
}
