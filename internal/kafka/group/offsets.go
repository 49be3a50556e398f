package group

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// Commit commits offsets for this member's generation (OffsetCommit v8 with the generation,
// member id and group.instance.id) and checks every partition's result. Coordinator errors
// (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT,
// UNKNOWN_TOPIC_OR_PARTITION, connection errors) are retried with backoff until ctx ends.
// Commit works in a stable generation, also while RejoinNeeded reports a mild reason (a
// rebalance in progress: commit before rejoining).
//
// Errors (wrapped with the group, generation and Kafka error code, test with errors.Is):
// ErrRebalanceInProgress (REBALANCE_IN_PROGRESS, or a Join is under way; the member still owns
// its partitions and a rejoin is requested); ErrMemberLost (UNKNOWN_MEMBER_ID,
// ILLEGAL_GENERATION: the generation is gone, the member is unjoined; Kafka Streams: task
// migrated); what RejoinNeeded says when the member is not in a generation (ErrNotJoined, a
// lost one); ErrFencedInstanceID; ErrFatal for GROUP_AUTHORIZATION_FAILED and
// TOPIC_AUTHORIZATION_FAILED; OFFSET_METADATA_TOO_LARGE and INVALID_COMMIT_OFFSET_SIZE
// (sarama.KError); ctx's; kafka.ErrClosed; a negative offset or empty topic (bad input).
func (m *Member) Commit(ctx context.Context, offsets map[kafka.TopicPartition]Offset) error {
	for tp, o := range offsets {
		if tp.Topic == "" || tp.Partition < 0 {
			return fmt.Errorf("group %q: commit: invalid partition %s", m.cfg.GroupID, tp)
		}
		if o.Offset < 0 {
			return fmt.Errorf("group %q: commit: invalid offset %d for %s", m.cfg.GroupID, o.Offset, tp)
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	m.opMu.Lock()
	defer m.opMu.Unlock()
	ctx, done := m.opContext(ctx)
	defer done()
	if err := m.usable(); err != nil {
		return err
	}
	m.mu.Lock()
	st, gen, memberID, cause := m.st, m.generation, m.memberID, m.rejoin
	m.mu.Unlock()
	switch st {
	case joining, syncing:
		return fmt.Errorf("group %q: commit: %w", m.cfg.GroupID, ErrRebalanceInProgress)
	case unjoined:
		if cause == nil {
			cause = ErrNotJoined
		}
		return fmt.Errorf("group %q: commit: %w", m.cfg.GroupID, cause)
	}
	return m.withCoordinator(ctx, "commit", func(coord kafka.Node) (bool, error) {
		req := &sarama.OffsetCommitRequest{
			Version:                 8,
			ConsumerGroup:           m.cfg.GroupID,
			ConsumerGroupGeneration: gen,
			ConsumerID:              memberID,
			GroupInstanceId:         m.instance,
		}
		for tp, o := range offsets {
			req.AddBlockWithLeaderEpoch(tp.Topic, tp.Partition, o.Offset, o.LeaderEpoch, 0, o.Metadata)
		}
		var resp *sarama.OffsetCommitResponse
		err := m.call(ctx, coord, m.groupP, func(b *sarama.Broker) (err error) {
			resp, err = b.CommitOffset(req)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return false, m.ctxError(ctx, "commit", err)
			}
			if !kafka.Retriable(err) {
				return false, fmt.Errorf("group %q: OffsetCommit: %w", m.cfg.GroupID, err)
			}
			m.forgetCoordinator(coord)
			return true, err
		}
		return m.commitResult(resp, offsets, coord, gen)
	})
}

// commitResult checks every partition of an OffsetCommit response; it returns nil when all
// committed, else the error and whether a retry may cure it.
func (m *Member) commitResult(resp *sarama.OffsetCommitResponse, offsets map[kafka.TopicPartition]Offset, coord kafka.Node, gen int32) (bool, error) {
	var retriable, fatal error
	for tp := range offsets {
		k, ok := resp.Errors[tp.Topic][tp.Partition]
		if !ok {
			return false, fmt.Errorf("group %q: OffsetCommit: no result for %s", m.cfg.GroupID, tp)
		}
		wrap := func(sentinel error) error {
			if sentinel == nil {
				return fmt.Errorf("group %q: commit of generation %d: %s: %w", m.cfg.GroupID, gen, tp, k)
			}
			return fmt.Errorf("group %q: commit of generation %d: %s: %w: %w", m.cfg.GroupID, gen, tp, sentinel, k)
		}
		switch k {
		case sarama.ErrNoError:
		case sarama.ErrGroupAuthorizationFailed, sarama.ErrTopicAuthorizationFailed:
			fatal = wrap(ErrFatal)
		case sarama.ErrOffsetMetadataTooLarge, sarama.ErrInvalidCommitOffsetSize:
			if fatal == nil {
				fatal = wrap(nil)
			}
		case sarama.ErrFencedInstancedId:
			m.mu.Lock()
			fatal = m.fencedLocked("OffsetCommit")
			m.mu.Unlock()
		case sarama.ErrRebalanceInProgress:
			m.mu.Lock()
			m.setRejoinLocked(fmt.Errorf("group %q: generation %d: %w", m.cfg.GroupID, gen, ErrRebalanceInProgress), false)
			m.mu.Unlock()
			if fatal == nil {
				fatal = wrap(ErrRebalanceInProgress)
			}
		case sarama.ErrUnknownMemberId, sarama.ErrIllegalGeneration:
			err := wrap(ErrMemberLost)
			m.mu.Lock()
			if m.generation == gen && m.st == stable {
				m.loseLocked(err, k == sarama.ErrUnknownMemberId)
			}
			m.mu.Unlock()
			if fatal == nil || errors.Is(fatal, ErrRebalanceInProgress) {
				fatal = err
			}
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable, sarama.ErrRequestTimedOut:
			m.forgetCoordinator(coord)
			retriable = wrap(nil)
		case sarama.ErrOffsetsLoadInProgress, sarama.ErrUnknownTopicOrPartition:
			retriable = wrap(nil)
		default:
			if kafka.RetriableCode(k) {
				retriable = wrap(nil)
			} else if fatal == nil {
				fatal = wrap(nil)
			}
		}
	}
	switch {
	case fatal != nil:
		return false, fatal
	case retriable != nil:
		return true, retriable
	}
	return false, nil
}

// Committed returns the committed offsets of tps (OffsetFetch v8 with require_stable,
// KIP-447): every partition of tps is in the result, Offset{Offset: -1, LeaderEpoch: -1} where
// none is committed. While a transaction that commits offsets for one of tps is open, the
// coordinator answers UNSTABLE_OFFSET_COMMIT; Committed retries with backoff until the
// transaction ends or ctx does. GROUP_ID_NOT_FOUND (kfake's answer for a group without
// offsets, where Kafka answers -1) counts as none committed. Committed does not need a
// generation. Errors: ctx's (wrapping the last failure, e.g. sarama.ErrUnstableOffsetCommit);
// kafka.ErrClosed; ErrFatal for GROUP_AUTHORIZATION_FAILED and TOPIC_AUTHORIZATION_FAILED;
// UNKNOWN_TOPIC_OR_PARTITION and other partition errors (wrapped with the partition).
func (m *Member) Committed(ctx context.Context, tps []kafka.TopicPartition) (map[kafka.TopicPartition]Offset, error) {
	out, _, err := m.committed(ctx, tps, true)
	return out, err
}

// CommittedStable is Committed without waiting for open transactions: the partitions whose
// committed offset is unstable (UNSTABLE_OFFSET_COMMIT: a transaction that commits offsets for
// them is open) are returned in unstable at once, without an entry in the result, instead of
// being asked again until the transaction ends. Coordinator and transport failures are retried
// as by Committed. Errors: as Committed's.
func (m *Member) CommittedStable(ctx context.Context, tps []kafka.TopicPartition) (stable map[kafka.TopicPartition]Offset,
	unstable []kafka.TopicPartition, err error) {
	return m.committed(ctx, tps, false)
}

// committed is Committed (waitStable) and CommittedStable.
func (m *Member) committed(ctx context.Context, tps []kafka.TopicPartition, waitStable bool) (map[kafka.TopicPartition]Offset,
	[]kafka.TopicPartition, error) {
	out := make(map[kafka.TopicPartition]Offset, len(tps))
	var unstableTPs []kafka.TopicPartition
	if len(tps) == 0 {
		return out, nil, nil
	}
	m.opMu.Lock()
	defer m.opMu.Unlock()
	ctx, done := m.opContext(ctx)
	defer done()
	if err := m.usable(); err != nil {
		return nil, nil, err
	}
	parts := map[string][]int32{}
	for _, tp := range tps {
		if !slices.Contains(parts[tp.Topic], tp.Partition) {
			parts[tp.Topic] = append(parts[tp.Topic], tp.Partition)
		}
	}
	err := m.withCoordinator(ctx, "fetch committed offsets", func(coord kafka.Node) (bool, error) {
		clear(out) // nothing from an earlier attempt
		req := &sarama.OffsetFetchRequest{
			Version:       8,
			RequireStable: true,
			Groups:        []sarama.OffsetFetchRequestGroup{{GroupId: m.cfg.GroupID, Partitions: parts}},
		}
		var resp *sarama.OffsetFetchResponse
		err := m.call(ctx, coord, m.groupP, func(b *sarama.Broker) (err error) {
			resp, err = b.FetchOffset(req)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return false, m.ctxError(ctx, "fetch committed offsets", err)
			}
			if !kafka.Retriable(err) {
				return false, fmt.Errorf("group %q: OffsetFetch: %w", m.cfg.GroupID, err)
			}
			m.forgetCoordinator(coord)
			return true, err
		}
		switch k := resp.GroupError(); k {
		case sarama.ErrNoError:
		case sarama.ErrGroupIDNotFound:
			for _, tp := range tps {
				out[tp] = Offset{Offset: kafka.OffsetUnknown, LeaderEpoch: -1}
			}
			return false, nil
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable:
			m.forgetCoordinator(coord)
			return true, m.kerr("OffsetFetch", k)
		case sarama.ErrGroupAuthorizationFailed:
			return false, m.fatalf(k, "OffsetFetch")
		default:
			return kafka.RetriableCode(k), m.kerr("OffsetFetch", k)
		}
		var unstable error
		unstableTPs = unstableTPs[:0]
		for _, tp := range tps {
			b := resp.GetBlock(tp.Topic, tp.Partition)
			if b == nil {
				out[tp] = Offset{Offset: kafka.OffsetUnknown, LeaderEpoch: -1}
				continue
			}
			switch b.Err {
			case sarama.ErrNoError:
			case sarama.ErrUnstableOffsetCommit:
				unstable = fmt.Errorf("group %q: committed offset of %s: %w", m.cfg.GroupID, tp, b.Err)
				unstableTPs = append(unstableTPs, tp)
				continue
			case sarama.ErrTopicAuthorizationFailed:
				return false, m.fatalf(b.Err, "committed offset of %s", tp)
			default:
				return false, fmt.Errorf("group %q: committed offset of %s: %w", m.cfg.GroupID, tp, b.Err)
			}
			if b.Offset < 0 {
				out[tp] = Offset{Offset: kafka.OffsetUnknown, LeaderEpoch: -1}
			} else {
				out[tp] = Offset{Offset: b.Offset, LeaderEpoch: b.LeaderEpoch, Metadata: b.Metadata}
			}
		}
		if unstable != nil && waitStable {
			m.log.Debug("group: committed offsets are unstable (a transaction is open); retrying", "error", unstable)
			m.unstable.Add(1)
			return true, unstable
		}
		return false, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, unstableTPs, nil
}
