package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// The group leader's lookups for task lags (Java: StreamsPartitionAssignor's
// fetchEndOffsetsResult through the admin client and fetchCommittedOffsets through the main
// consumer). They run inside the leader's Join, on a connection of their own.

// assignorLookupTimeout bounds one lookup; past it the leader keeps the previous assignment
// and probes again later (Java: default.api.timeout.ms, then FallbackPriorTaskAssignor).
const assignorLookupTimeout = 15 * time.Second

var assignorConn = kafka.Purpose{Name: "assignor"}

// listEndOffsets returns the end offsets (high-water marks: Java's admin listOffsets with
// OffsetSpec.latest and read_uncommitted) of tps, one ListOffsets request per leader broker,
// retrying stale metadata and retriable errors until the lookup timeout.
func listEndOffsets(ctx context.Context, cl *kafka.Cluster, tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, assignorLookupTimeout)
	defer cancel()
	out := make(map[kafka.TopicPartition]int64, len(tps))
	pending := append([]kafka.TopicPartition(nil), tps...)
	var last error
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 0 {
			if err := kafka.Sleep(ctx, kafka.Backoff(attempt, 100*time.Millisecond, time.Second)); err != nil {
				return nil, fmt.Errorf("list offsets of %d partitions: %w (last error: %v)", len(pending), err, last)
			}
		}
		byLeader := map[kafka.Node][]kafka.TopicPartition{}
		var retry []kafka.TopicPartition
		for _, tp := range pending {
			n, _, err := cl.Leader(tp)
			if err != nil {
				last = err
				retry = append(retry, tp)
				continue
			}
			byLeader[n] = append(byLeader[n], tp)
		}
		for n, ps := range byLeader {
			failed, err := listOffsetsAt(cl, n, ps, out)
			if err != nil {
				if !kafka.Retriable(err) && !errors.Is(err, kafka.ErrClosed) {
					return nil, err
				}
				last = err
			}
			retry = append(retry, failed...)
		}
		if len(retry) > 0 {
			topics := map[string]bool{}
			for _, tp := range retry {
				topics[tp.Topic] = true
			}
			names := make([]string, 0, len(topics))
			for t := range topics {
				names = append(names, t)
			}
			_ = cl.RefreshMetadata(names...)
		}
		pending = retry
	}
	return out, nil
}

// listOffsetsAt sends one ListOffsets for ps to n and records what it answered in out; it
// returns the partitions to retry.
func listOffsetsAt(cl *kafka.Cluster, n kafka.Node, ps []kafka.TopicPartition, out map[kafka.TopicPartition]int64) ([]kafka.TopicPartition, error) {
	b, err := cl.Conn(n, assignorConn)
	if err != nil {
		return ps, err
	}
	req := sarama.NewOffsetRequest(cl.Config().Version)
	if req.Version < 1 {
		req.Version = 1
	}
	for _, tp := range ps {
		req.AddBlock(tp.Topic, tp.Partition, sarama.OffsetNewest, 1)
	}
	resp, err := b.GetAvailableOffsets(req)
	if err != nil {
		cl.Discard(n, assignorConn, b)
		return ps, err
	}
	var retry []kafka.TopicPartition
	for _, tp := range ps {
		blk := resp.GetBlock(tp.Topic, tp.Partition)
		switch {
		case blk == nil:
			retry = append(retry, tp)
		case blk.Err == sarama.ErrNoError:
			off := blk.Offset
			if req.Version == 0 && len(blk.Offsets) > 0 {
				off = blk.Offsets[0]
			}
			out[tp] = off
		case kafka.StaleMetadata(blk.Err) || kafka.RetriableCode(blk.Err) || blk.Err == sarama.ErrOffsetNotAvailable:
			retry = append(retry, tp)
		default:
			return retry, fmt.Errorf("list offsets of %s: %w", tp, blk.Err)
		}
	}
	return retry, nil
}

// committedOffsets returns the group's committed offsets of tps (-1 for none) with an
// OffsetFetch to the group's coordinator (stable offsets, as Java's read_committed main
// consumer asks), retrying until the lookup timeout.
func committedOffsets(ctx context.Context, cl *kafka.Cluster, groupID string, tps []kafka.TopicPartition) (map[kafka.TopicPartition]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, assignorLookupTimeout)
	defer cancel()
	parts := map[string][]int32{}
	for _, tp := range tps {
		parts[tp.Topic] = append(parts[tp.Topic], tp.Partition)
	}
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := kafka.Sleep(ctx, kafka.Backoff(attempt, 100*time.Millisecond, time.Second)); err != nil {
				return nil, fmt.Errorf("committed offsets of group %q: %w (last error: %v)", groupID, err, last)
			}
		}
		coord, err := cl.FindCoordinator(ctx, groupID, sarama.CoordinatorGroup)
		if err != nil {
			last = err
			continue
		}
		b, err := cl.Conn(coord, assignorConn)
		if err != nil {
			last = err
			continue
		}
		resp, err := b.FetchOffset(&sarama.OffsetFetchRequest{Version: 8, RequireStable: true,
			Groups: []sarama.OffsetFetchRequestGroup{{GroupId: groupID, Partitions: parts}}})
		if err != nil {
			cl.Discard(coord, assignorConn, b)
			last = err
			continue
		}
		switch k := resp.GroupError(); {
		case k == sarama.ErrNoError:
		case k == sarama.ErrGroupIDNotFound:
			out := make(map[kafka.TopicPartition]int64, len(tps))
			for _, tp := range tps {
				out[tp] = kafka.OffsetUnknown
			}
			return out, nil
		case kafka.RetriableCode(k) || k == sarama.ErrNotCoordinatorForConsumer:
			last = k
			continue
		default:
			return nil, fmt.Errorf("committed offsets of group %q: %w", groupID, k)
		}
		out := make(map[kafka.TopicPartition]int64, len(tps))
		retry := false
		for _, tp := range tps {
			blk := resp.GetBlock(tp.Topic, tp.Partition)
			switch {
			case blk == nil:
				out[tp] = kafka.OffsetUnknown
			case blk.Err == sarama.ErrNoError:
				out[tp] = blk.Offset
			case blk.Err == sarama.ErrUnstableOffsetCommit || kafka.RetriableCode(blk.Err):
				retry, last = true, blk.Err
			default:
				return nil, fmt.Errorf("committed offset of %s: %w", tp, blk.Err)
			}
		}
		if !retry {
			return out, nil
		}
	}
}
