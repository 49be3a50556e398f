package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/processor"
)

// endOffset returns the end of a partition: the last stable offset under read_committed (the
// first offset of a still open transaction, or the high-water mark), else the high-water mark.
// sarama's client.GetOffset never sets the isolation level, so the request is built here.
func endOffset(client sarama.Client, topic string, partition int32, readCommitted bool) (int64, error) {
	if !readCommitted {
		return client.GetOffset(topic, partition, sarama.OffsetNewest)
	}
	b, err := client.Leader(topic, partition)
	if err != nil {
		return 0, err
	}
	req := &sarama.OffsetRequest{Version: 4, IsolationLevel: sarama.ReadCommitted}
	req.AddBlock(topic, partition, sarama.OffsetNewest, 1)
	resp, err := b.GetAvailableOffsets(req)
	if err != nil {
		return 0, err
	}
	blk := resp.GetBlock(topic, partition)
	if blk == nil {
		return 0, fmt.Errorf("list offsets %s-%d: no block in response", topic, partition)
	}
	if !errors.Is(blk.Err, sarama.ErrNoError) {
		return 0, blk.Err
	}
	return blk.Offset, nil
}

// restorePartition reads topic/partition from its log start to its end offset (the last
// stable offset under read_committed, skipping aborted transactions and control records) and
// hands the records to apply in batches. It never holds more than one fetch in memory. The end
// is reached when the fetch position (after the last batch, markers included) reaches the end
// offset, which also works when the log ends with a transaction marker. It returns the number
// of records applied.
func restorePartition(ctx context.Context, client sarama.Client, topic string, partition int32, readCommitted bool,
	apply func([]processor.RestoreRecord) error) (int64, error) {
	end, err := endOffset(client, topic, partition, readCommitted)
	if err != nil {
		return 0, fmt.Errorf("restore %s-%d: end offset: %w", topic, partition, err)
	}
	pos, err := client.GetOffset(topic, partition, sarama.OffsetOldest)
	if err != nil {
		return 0, fmt.Errorf("restore %s-%d: start offset: %w", topic, partition, err)
	}
	var n int64
	iso := sarama.ReadUncommitted
	if readCommitted {
		iso = sarama.ReadCommitted
	}
	for pos < end {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		b, err := client.Leader(topic, partition)
		if err != nil {
			return n, fmt.Errorf("restore %s-%d: leader: %w", topic, partition, err)
		}
		req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 100, MinBytes: 1, MaxBytes: 16 << 20, Isolation: iso}
		req.AddBlock(topic, partition, pos, 4<<20, -1)
		resp, err := b.Fetch(req)
		if err != nil {
			return n, fmt.Errorf("restore %s-%d: fetch: %w", topic, partition, err)
		}
		blk := resp.GetBlock(topic, partition)
		if blk == nil {
			return n, fmt.Errorf("restore %s-%d: empty fetch response", topic, partition)
		}
		if !errors.Is(blk.Err, sarama.ErrNoError) {
			if errors.Is(blk.Err, sarama.ErrOffsetOutOfRange) {
				if pos, err = client.GetOffset(topic, partition, sarama.OffsetOldest); err != nil {
					return n, err
				}
				continue
			}
			return n, fmt.Errorf("restore %s-%d: fetch: %w", topic, partition, blk.Err)
		}
		aborted := append([]*sarama.AbortedTransaction(nil), blk.AbortedTransactions...)
		sort.Slice(aborted, func(i, j int) bool { return aborted[i].FirstOffset < aborted[j].FirstOffset })
		abortedProducers := map[int64]bool{}
		var batch []processor.RestoreRecord
		for _, rs := range blk.RecordsSet {
			rb := rs.RecordBatch
			if rb == nil {
				continue
			}
			if rb.PartialTrailingRecord && len(rb.Records) == 0 {
				continue
			}
			for len(aborted) > 0 && aborted[0].FirstOffset <= rb.FirstOffset+int64(rb.LastOffsetDelta) {
				abortedProducers[aborted[0].ProducerID] = true
				aborted = aborted[1:]
			}
			next := rb.FirstOffset + int64(rb.LastOffsetDelta) + 1
			if rb.Control {
				if readCommitted {
					delete(abortedProducers, rb.ProducerID)
				}
				pos = max(pos, next)
				continue
			}
			skip := readCommitted && rb.IsTransactional && abortedProducers[rb.ProducerID]
			for _, r := range rb.Records {
				off := rb.FirstOffset + r.OffsetDelta
				if off < pos || off >= end {
					continue
				}
				if !skip {
					batch = append(batch, processor.RestoreRecord{Key: r.Key, Value: r.Value, Partition: partition, Offset: off,
						Timestamp: rb.FirstTimestamp.Add(r.TimestampDelta).UnixMilli()})
				}
			}
			if !rb.PartialTrailingRecord {
				pos = max(pos, next)
			} else if len(rb.Records) > 0 {
				pos = max(pos, rb.FirstOffset+rb.Records[len(rb.Records)-1].OffsetDelta+1)
			}
		}
		if len(batch) > 0 {
			if err := apply(batch); err != nil {
				return n, err
			}
			n += int64(len(batch))
		}
	}
	return n, nil
}
