package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
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
	th.storeMu.Lock() // caches and stores flush: no interactive query meanwhile
	needed := th.out.txnOpen || th.out.producer.Pending() > 0
	for _, t := range th.tasks {
		if final || t.CommitNeeded() {
			needed = needed || t.CommitNeeded()
			commit := t.CommitCaches
			if final {
				commit = t.CommitFinal
			}
			if err := commit(); err != nil {
				th.storeMu.Unlock()
				return err
			}
		}
	}
	// At-least-once: the stores are flushed (and the checkpoint written after the send) only
	// when enough changelog offsets accumulated, as Java's postCommit(false).
	var checkpoint []processor.TaskID
	if !th.rt.cfg.ExactlyOnce {
		for id := range th.tasks {
			if th.checkpointDue(id) {
				if err := th.flushStores(id); err != nil {
					th.storeMu.Unlock()
					return err
				}
				checkpoint = append(checkpoint, id)
				needed = true
			}
		}
	}
	th.storeMu.Unlock()
	if !needed {
		return nil
	}
	offsets := map[kafka.TopicPartition]produce.Offset{}
	for _, t := range th.tasks {
		for topic, ps := range t.ConsumedOffsets() {
			for p, off := range ps {
				tp := kafka.TopicPartition{Topic: topic, Partition: p}
				offsets[tp] = produce.Offset{Offset: th.commitPosition(t, tp, off), LeaderEpoch: -1}
			}
		}
	}
	if !th.rt.cfg.ExactlyOnce {
		if err := th.flushOutput(); err != nil {
			return err
		}
		th.storeMu.Lock()
		for _, id := range checkpoint {
			th.writeCheckpoint(id)
		}
		th.storeMu.Unlock()
		if len(offsets) == 0 {
			return nil
		}
		commit := make(map[kafka.TopicPartition]group.Offset, len(offsets))
		for tp, o := range offsets {
			commit[tp] = group.Offset{Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata}
		}
		ctx, cancel := context.WithTimeout(context.Background(), th.rt.cfg.PrepareTimeout)
		defer cancel()
		if err := th.member.Commit(ctx, commit); err != nil {
			if errors.Is(err, group.ErrRebalanceInProgress) || errors.Is(err, group.ErrMemberLost) {
				return err
			}
			return kafkaErr("commit offsets", err)
		}
		th.madeProgress()
		return nil
	}
	if !th.out.txnOpen {
		if len(offsets) == 0 {
			return nil
		}
		if err := th.out.beginTxn(); err != nil {
			return err
		}
	}
	if len(offsets) > 0 {
		meta := th.member.Metadata()
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

// commitTxn commits the open transaction and then applies the tasks' exactly-once store
// batches with the changelog offsets the transaction wrote.
func (th *thread) commitTxn() error {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := th.out.producer.Commit(ctx); err != nil {
		return kafkaErr("commit transaction", err)
	}
	th.out.txnOpen = false
	if err := th.out.checkSendFailures(); err != nil {
		return err
	}
	th.recordChangelogOffsets()
	// The Kafka transaction is committed: the stores' pending batches land with their offsets.
	th.storeMu.Lock()
	defer th.storeMu.Unlock()
	for id, ts := range th.states {
		if err := ts.CommitTransaction(); err != nil {
			return fmt.Errorf("task %s: commit store transaction: %w", id, err)
		}
	}
	return nil
}
