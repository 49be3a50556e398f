package kstreams

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/caughtup"
	"github.com/kstreams-go/kstreams/internal/kafka"
)

// WaitCaughtUp blocks until the application has processed every record its input topics held
// when WaitCaughtUp was called: its consumer group (application.id, shared by all its
// instances) has committed offsets at the end of every non-empty partition of the source
// topics, and then of its repartition topics, sub-topology after sub-topology. Their results
// (output, changelogs, and under exactly-once the transaction) are committed with them. The
// wait polls the group's committed offsets (every 20 ms); instances commit every
// commit.interval.ms, so the wait lasts at least until the next commit. Records produced to
// the inputs after the call may or may not be included.
//
// Errors: ErrIllegalState before Start; the instance's fatal error (Err), or ErrIllegalState
// after Close, when the instance stops first; ctx's error when it ends first (wrapped with the
// partitions still behind, "topic-partition committed C of E"); connection errors. No Java
// counterpart (Java tests poll the consumer group's lag with an admin client).
func (k *KafkaStreams) WaitCaughtUp(ctx context.Context) error {
	rt := k.runtime()
	if rt == nil || rt.Layout() == nil {
		return fmt.Errorf("%w: WaitCaughtUp before Start", ErrIllegalState)
	}
	internal := map[string]bool{}
	for _, t := range rt.Layout().Internal {
		internal[t.Name] = true
	}
	var inputs []string
	seen := map[string]bool{}
	for _, s := range rt.Layout().Subtopologies {
		for _, t := range s.Topics {
			if !internal[t] && !seen[t] {
				seen[t] = true
				inputs = append(inputs, t)
			}
		}
	}
	client, err := sarama.NewClient(k.cfg.BootstrapServers, k.cfg.saramaConfig())
	if err != nil {
		return kafka.ConnectError(k.cfg.BootstrapServers, err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return fmt.Errorf("kstreams: admin client: %w", err)
	}
	// The wait ends too when the instance stops (a fatal error, Close).
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-k.done:
			cancel()
		case <-wctx.Done():
		}
	}()
	err = caughtup.Wait(wctx, client, admin, k.cfg.ApplicationID, inputs)
	var behind *caughtup.BehindError
	if errors.As(err, &behind) && ctx.Err() == nil {
		stopErr := k.Err()
		if stopErr == nil {
			stopErr = ErrIllegalState
		}
		return fmt.Errorf("kstreams: the instance stopped in state %s before the application caught up (%s): %w",
			k.State(), strings.Join(behind.Behind, ", "), stopErr)
	}
	if errors.As(err, &behind) {
		return fmt.Errorf("kstreams: application %s has not caught up: %s: %w", k.cfg.ApplicationID, strings.Join(behind.Behind, ", "), behind.Err)
	}
	if err != nil {
		return fmt.Errorf("kstreams: %w", err)
	}
	return nil
}
