package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// TestNoProgressErrors: what task.timeout.ms governs, and what it does not.
func TestNoProgressErrors(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("partitions of out: %w", sarama.ErrUnknownTopicOrPartition),
		sarama.ErrLeaderNotAvailable, sarama.ErrNotLeaderForPartition, sarama.ErrRequestTimedOut,
		fmt.Errorf("%w: 3 records for out-0 (last error: x)", produce.ErrDeliveryTimeout),
	} {
		if !noProgress(err) {
			t.Errorf("%v: not governed by task.timeout.ms", err)
		}
	}
	for _, err := range []error{
		sarama.ErrMessageSizeTooLarge, sarama.ErrTopicAuthorizationFailed, produce.ErrFenced,
		&produce.FatalError{Err: sarama.ErrUnknownTopicOrPartition},
	} {
		if noProgress(err) {
			t.Errorf("%v: governed by task.timeout.ms", err)
		}
	}
}

// TestCheckStuck: a no-progress failure is retried until task.timeout.ms has passed since its
// first occurrence, then becomes a *TaskTimeoutError naming task and topic; a commit in between
// starts the time afresh; other failures are not counted.
func TestCheckStuck(t *testing.T) {
	th := paceThread(Config{TaskTimeout: time.Minute})
	th.log = slog.Default()
	cause := fmt.Errorf("partitions of out: %w", sarama.ErrUnknownTopicOrPartition)
	failure := &task.ProcessingError{Task: processor.TaskID{Subtopology: 1, Partition: 2}, Node: "Sink", Topic: "in",
		Err: kafkaErr("send to topic out", &noProgressError{topic: "out", partition: -1, err: cause})}
	if !migrated(failure) {
		t.Fatal("a no-progress failure must close the tasks dirty and rejoin")
	}
	if stuck, fatal := th.checkStuck(kafkaErr("commit offsets", sarama.ErrRequestTimedOut)); stuck || fatal != nil {
		t.Fatalf("another failure: stuck %v, %v", stuck, fatal)
	}
	if stuck, fatal := th.checkStuck(failure); !stuck || fatal != nil {
		t.Fatalf("first failure: stuck %v, %v", stuck, fatal)
	}
	first := th.stuck.since
	if stuck, fatal := th.checkStuck(failure); !stuck || fatal != nil || th.stuck.since != first {
		t.Fatalf("second failure: stuck %v, %v", stuck, fatal)
	}
	th.madeProgress()
	if !th.stuck.since.IsZero() {
		t.Fatal("a commit did not reset the failure's time")
	}
	th.checkStuck(failure)
	th.stuck.since = time.Now().Add(-time.Minute) // the failure began task.timeout.ms ago
	stuck, fatal := th.checkStuck(failure)
	var te *TaskTimeoutError
	if !stuck || !errors.As(fatal, &te) || !errors.Is(fatal, ErrTaskTimeout) || !errors.Is(fatal, sarama.ErrUnknownTopicOrPartition) {
		t.Fatalf("timed out: stuck %v, %v", stuck, fatal)
	}
	if !te.TaskKnown || te.Task != (processor.TaskID{Subtopology: 1, Partition: 2}) || te.Topic != "out" || te.Timeout != time.Minute ||
		te.Elapsed < time.Minute || !strings.Contains(te.Error(), `topic "out"`) || !strings.Contains(te.Error(), "task 1_2") {
		t.Fatalf("error %+v: %v", te, te)
	}
	if !th.stuck.since.IsZero() {
		t.Fatal("the failure's time is kept after the thread failed")
	}

	// task.timeout.ms 0 (the runtime's negative value) fails at the first failure.
	th.rt.cfg.TaskTimeout = -1
	if _, fatal := th.checkStuck(failure); !errors.Is(fatal, ErrTaskTimeout) {
		t.Fatalf("task.timeout.ms 0: %v", fatal)
	}
}
