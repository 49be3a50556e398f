// Package caughtup waits until a Kafka Streams application has processed what its input topics
// held: its consumer group (the application id) has committed the end offsets of the inputs,
// then of its repartition topics. It serves kstreams.KafkaStreams.WaitCaughtUp and
// kstreamstest.Broker.WaitProcessed.
package caughtup

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// pollInterval is how often the committed offsets are read while waiting.
const pollInterval = 20 * time.Millisecond

// BehindError is Wait's error when ctx ends first: the partitions still behind, as
// "topic-partition committed C of E", and ctx's error (Unwrap).
type BehindError struct {
	ApplicationID string
	Behind        []string
	Err           error
}

func (e *BehindError) Error() string {
	return fmt.Sprintf("application %s has not caught up: %s (%v)", e.ApplicationID, strings.Join(e.Behind, ", "), e.Err)
}

func (e *BehindError) Unwrap() error { return e.Err }

// Wait waits until the group applicationID has committed offsets at the end (read when the wait
// for a topic starts) of every non-empty partition of inputTopics, and then of its repartition
// topics ("<applicationID>-...-repartition"), round by round until a round finds nothing new, so
// every record in the inputs when Wait was called has gone through the whole topology and a
// commit has followed its results. Errors: *BehindError when ctx ends first; connection errors.
func Wait(ctx context.Context, client sarama.Client, admin sarama.ClusterAdmin, applicationID string, inputTopics []string) error {
	if err := waitCommitted(ctx, client, admin, applicationID, inputTopics); err != nil {
		return err
	}
	done := map[string]map[int32]int64{}
	for {
		if err := client.RefreshMetadata(); err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
		all, err := client.Topics()
		if err != nil {
			return fmt.Errorf("topics: %w", err)
		}
		var repartition []string
		for _, t := range all {
			if strings.HasPrefix(t, applicationID+"-") && strings.HasSuffix(t, "-repartition") {
				repartition = append(repartition, t)
			}
		}
		ends, err := endOffsets(client, repartition)
		if err != nil {
			return err
		}
		if fmt.Sprint(ends) == fmt.Sprint(done) {
			return nil
		}
		if err := waitCommitted(ctx, client, admin, applicationID, repartition); err != nil {
			return err
		}
		done = ends
	}
}

// endOffsets returns the end offset of every non-empty partition of topics.
func endOffsets(client sarama.Client, topics []string) (map[string]map[int32]int64, error) {
	ends := map[string]map[int32]int64{}
	for _, topic := range topics {
		parts, err := client.Partitions(topic)
		if err != nil {
			return nil, fmt.Errorf("topic %s: %w", topic, err)
		}
		ends[topic] = map[int32]int64{}
		for _, p := range parts {
			end, err := client.GetOffset(topic, p, sarama.OffsetNewest)
			if err != nil {
				return nil, fmt.Errorf("end offset of %s-%d: %w", topic, p, err)
			}
			first, err := client.GetOffset(topic, p, sarama.OffsetOldest)
			if err != nil {
				return nil, fmt.Errorf("start offset of %s-%d: %w", topic, p, err)
			}
			if end > first { // an empty partition has nothing to process
				ends[topic][p] = end
			}
		}
	}
	return ends, nil
}

// waitCommitted waits until the group has committed the end offsets (read now) of every
// non-empty partition of topics, or ctx ends (*BehindError).
func waitCommitted(ctx context.Context, client sarama.Client, admin sarama.ClusterAdmin, applicationID string, topics []string) error {
	ends, err := endOffsets(client, topics)
	if err != nil {
		return err
	}
	topicParts := map[string][]int32{}
	for topic, ps := range ends {
		for p := range ps {
			topicParts[topic] = append(topicParts[topic], p)
		}
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		resp, err := admin.ListConsumerGroupOffsets(applicationID, topicParts)
		if errors.Is(err, sarama.ErrGroupIDNotFound) { // a group that never committed (kfake)
			resp, err = &sarama.OffsetFetchResponse{}, nil
		}
		var behind []string
		if err == nil {
			for topic, ps := range ends {
				for p, end := range ps {
					committed := int64(-1)
					if blk := resp.GetBlock(topic, p); blk != nil && blk.Err == sarama.ErrNoError {
						committed = blk.Offset
					}
					if committed < end {
						behind = append(behind, fmt.Sprintf("%s-%d committed %d of %d", topic, p, committed, end))
					}
				}
			}
			if len(behind) == 0 {
				return nil
			}
			sort.Strings(behind)
		} else {
			behind = []string{err.Error()}
		}
		select {
		case <-ctx.Done():
			return &BehindError{ApplicationID: applicationID, Behind: behind, Err: ctx.Err()}
		case <-tick.C:
		}
	}
}
