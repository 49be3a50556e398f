package group

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
)

// Talking to the group coordinator: finding it, one retry loop around it, the errors it answers.

// opContext returns ctx, also ended (with cause kafka.ErrClosed) by Close.
func (m *Member) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(m.ctx, func() { cancel(kafka.ErrClosed) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// ctxError is the error of an operation whose context ended.
func (m *Member) ctxError(ctx context.Context, op string, last error) error {
	cause := context.Cause(ctx)
	if last == nil {
		return fmt.Errorf("group %q: %s: %w", m.cfg.GroupID, op, cause)
	}
	return fmt.Errorf("group %q: %s: %w (last error: %w)", m.cfg.GroupID, op, cause, last)
}

// withCoordinator runs try against the group coordinator until it succeeds or fails for good:
// it looks the coordinator up (retrying a connection failure), backs off between attempts
// (RetryBackoff doubled up to 1 s) and, when ctx ends, returns ctx's error wrapping the last
// failure. try returns its error and whether another attempt may cure it.
func (m *Member) withCoordinator(ctx context.Context, op string, try func(coord kafka.Node) (retry bool, err error)) error {
	var last error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := kafka.Sleep(ctx, kafka.Backoff(attempt, m.cfg.RetryBackoff, maxRetryBackoff)); err != nil {
				return m.ctxError(ctx, op, last)
			}
		}
		coord, err := m.coordinator(ctx)
		if err != nil {
			if m.classifyTransport(ctx, err) == retryLater {
				last = err
				continue
			}
			if ctx.Err() != nil {
				return m.ctxError(ctx, op, err)
			}
			return err
		}
		retry, err := try(coord)
		if err == nil || !retry {
			return err
		}
		last = err
	}
}

// coordinator returns the group coordinator, looking it up when not known.
func (m *Member) coordinator(ctx context.Context) (kafka.Node, error) {
	m.mu.Lock()
	if m.coordKnown {
		n := m.coord
		m.mu.Unlock()
		return n, nil
	}
	m.mu.Unlock()
	n, err := m.cl.FindCoordinator(ctx, m.cfg.GroupID, sarama.CoordinatorGroup)
	if err != nil {
		if ctx.Err() == nil && kafka.AuthError(err) {
			return kafka.Node{}, m.fatalf(err, "find coordinator")
		}
		return kafka.Node{}, err
	}
	m.mu.Lock()
	m.coord, m.coordKnown = n, true
	m.nodes[n] = true
	m.mu.Unlock()
	return n, nil
}

// forgetCoordinator makes the next request look the coordinator up again (it moved, or its
// connection failed).
func (m *Member) forgetCoordinator(n kafka.Node) {
	m.mu.Lock()
	if m.coordKnown && m.coord == n {
		m.coordKnown = false
	}
	m.mu.Unlock()
}

// classifyTransport says what to do after err, a failure that is not a Kafka error code of
// a response: give up when ctx ended or err is fatal, else retry with backoff.
func (m *Member) classifyTransport(ctx context.Context, err error) outcome {
	if ctx.Err() != nil || errors.Is(err, ErrFatal) || errors.Is(err, kafka.ErrClosed) || !kafka.Retriable(err) {
		return failed
	}
	return retryLater
}

// call runs fn on the connection to n for purpose p, cutting the connection (so that fn fails
// at once) when ctx ends. A connection a request failed on is discarded.
func (m *Member) call(ctx context.Context, n kafka.Node, p kafka.Purpose, fn func(*sarama.Broker) error) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	b, err := m.cl.Conn(n, p)
	if err != nil {
		return err
	}
	cut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		m.cl.Interrupt(n, p)
		close(cut)
	})
	err = fn(b)
	if !stop() {
		// ctx ended during the request and its connection is being cut: wait for that, so
		// that it cannot cut the next request's connection.
		<-cut
		if err == nil {
			err = context.Cause(ctx)
		} else {
			err = fmt.Errorf("%w (%v)", context.Cause(ctx), err)
		}
		return err
	}
	if err != nil {
		m.cl.Discard(n, p, b)
	}
	return err
}

// kerr wraps a retriable Kafka error code of op's response.
func (m *Member) kerr(op string, k sarama.KError) error {
	return fmt.Errorf("group %q: %s: %w", m.cfg.GroupID, op, k)
}

// fatalf wraps err, a failure no retry cures, with ErrFatal.
func (m *Member) fatalf(err error, format string, args ...any) error {
	if errors.Is(err, ErrFatal) {
		return err
	}
	return fmt.Errorf("group %q: %s: %w: %w", m.cfg.GroupID, fmt.Sprintf(format, args...), ErrFatal, err)
}

// fenced records that another instance took this member's group.instance.id.
func (m *Member) fenced(op string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fencedLocked(op)
}

func (m *Member) fencedLocked(op string) error {
	err := fmt.Errorf("group %q: %s: instance id %q: %w: %w", m.cfg.GroupID, op, m.cfg.InstanceID, ErrFencedInstanceID, sarama.ErrFencedInstancedId)
	if m.fatal == nil {
		m.fatal = err
		m.log.Error("group: fenced by another instance with the same group.instance.id", "op", op)
	}
	m.st, m.generation = unjoined, -1
	m.setRejoinLocked(err, true)
	return err
}

func truncate(s string) string {
	if len(s) > maxReasonLen {
		return s[:maxReasonLen]
	}
	return s
}
