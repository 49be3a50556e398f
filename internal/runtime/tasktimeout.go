package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// task.timeout.ms: a failure that keeps the tasks from making progress but that time may cure
// (an output topic that does not exist yet, a partition without leader, a record not
// acknowledged in time) is retried: the thread closes its tasks without commit, waits a
// backoff and rejoins, and its tasks reprocess from the last commit. When no commit succeeded
// for task.timeout.ms since the first such failure, the thread fails with a *TaskTimeoutError
// and the uncaught-exception handler decides (Java: Task.maybeInitTaskTimeoutOrThrow, the
// StreamsException "Task ... did not make progress within ... ms").

// DefaultTaskTimeout is task.timeout.ms's default (300 000 ms, as Java's).
const DefaultTaskTimeout = 5 * time.Minute

// ErrTaskTimeout is wrapped by every *TaskTimeoutError.
var ErrTaskTimeout = errors.New("task made no progress within task.timeout.ms")

// TaskTimeoutError is the error of a stream thread whose tasks could not make progress for
// task.timeout.ms because of a failure that is retried (a missing output topic, a partition
// without leader, records not acknowledged within delivery.timeout.ms). errors.Is(err,
// ErrTaskTimeout) holds, and errors.As reaches the last failure (Err, e.g. a
// sarama.ErrUnknownTopicOrPartition). Java: the StreamsException wrapping a TimeoutException,
// "Task <id> did not make progress within <task.timeout.ms> ms".
type TaskTimeoutError struct {
	// Task is the task that failed last, when known (TaskKnown): a record the producer refused
	// at once is the task's; one that failed later in the producer is not traced to a task.
	Task      processor.TaskID
	TaskKnown bool
	// Topic is the topic the failing record was sent to; Partition its partition (-1: chosen
	// by the partitioner). When Op is set, they name the input partition whose committed
	// offset could not be read.
	Topic     string
	Partition int32
	// Op says what failed when it was not sending a record (empty for a send): "reading the
	// committed offset of <topic>-<partition>" when a transaction that commits offsets for the
	// input partition stayed open for task.timeout.ms (a hanging transaction), or the group
	// coordinator did not answer.
	Op string
	// Timeout is task.timeout.ms; Elapsed how long the failure lasted (since its first
	// occurrence without a successful commit; with Op, since the partition's committed offset
	// was first found unreadable).
	Timeout, Elapsed time.Duration
	// Err is the last failure.
	Err error
}

// Error implements error.
func (e *TaskTimeoutError) Error() string {
	who := "stream thread's tasks"
	if e.TaskKnown {
		who = "task " + e.Task.String()
	}
	what := e.Op
	if what == "" {
		what = fmt.Sprintf("sending to topic %q", e.Topic)
	}
	return fmt.Sprintf("%s made no progress within task.timeout.ms (%d ms): %s failed for %s: %v",
		who, e.Timeout.Milliseconds(), what, e.Elapsed.Round(time.Millisecond), e.Err)
}

// Unwrap returns ErrTaskTimeout and the last failure.
func (e *TaskTimeoutError) Unwrap() []error { return []error{ErrTaskTimeout, e.Err} }

// noProgressError marks a send failure that is retried until task.timeout.ms.
type noProgressError struct {
	topic     string
	partition int32
	err       error
}

func (e *noProgressError) Error() string { return e.err.Error() }
func (e *noProgressError) Unwrap() error { return e.err }

// noProgress reports send failures that time may cure: the topic or partition does not exist
// (yet), has no leader, or the records were not acknowledged in time. Java: the
// TimeoutException and retriable errors that task.timeout.ms governs.
func noProgress(err error) bool {
	var fe *produce.FatalError
	if errors.As(err, &fe) || kafka.AuthError(err) {
		return false
	}
	for _, k := range []sarama.KError{sarama.ErrUnknownTopicOrPartition, sarama.ErrLeaderNotAvailable, sarama.ErrNotLeaderForPartition,
		sarama.ErrRequestTimedOut, sarama.ErrNotEnoughReplicas, sarama.ErrNotEnoughReplicasAfterAppend} {
		if errors.Is(err, k) {
			return true
		}
	}
	return errors.Is(err, produce.ErrDeliveryTimeout)
}

// stuckState is the thread's running no-progress failure.
type stuckState struct {
	// since is the first failure since the last successful commit (zero: none).
	since   time.Time
	backoff time.Duration
}

// taskTimeout returns the task.timeout.ms to apply (0: fail at the first failure).
func (th *thread) taskTimeout() time.Duration {
	switch d := th.rt.cfg.TaskTimeout; {
	case d == 0:
		return DefaultTaskTimeout
	case d < 0:
		return 0
	default:
		return d
	}
}

// checkStuck looks at err, a failure after which the tasks are closed without commit: stuck
// is true when it is a failure task.timeout.ms governs; timedOut is the thread's fatal error
// once that failure (with no successful commit in between) has lasted task.timeout.ms.
func (th *thread) checkStuck(err error) (stuck bool, timedOut error) {
	var np *noProgressError
	if !errors.As(err, &np) {
		return false, nil
	}
	now := time.Now()
	if th.stuck.since.IsZero() {
		th.stuck.since = now
	}
	elapsed, timeout := now.Sub(th.stuck.since), th.taskTimeout()
	if elapsed >= timeout {
		te := &TaskTimeoutError{Topic: np.topic, Partition: np.partition, Timeout: timeout, Elapsed: elapsed, Err: np.err}
		var pe *task.ProcessingError
		if errors.As(err, &pe) {
			te.Task, te.TaskKnown = pe.Task, true
		}
		th.stuck = stuckState{} // a replacing thread starts afresh
		return true, te
	}
	th.log.Warn("the tasks cannot make progress; closing them without commit and retrying until task.timeout.ms",
		"topic", np.topic, "error", err, "failing_for", elapsed.Round(time.Millisecond), "task.timeout.ms", timeout.Milliseconds())
	return true, nil
}

// stuckBackoff waits before the retry of a failure task.timeout.ms governs: 100 ms, doubling up
// to 5 s, never past the timeout nor beyond a quarter of max.poll.interval.ms.
func (th *thread) stuckBackoff() {
	b := max(th.stuck.backoff, 50*time.Millisecond) * 2
	b = min(b, 5*time.Second, th.maxPollInterval()/4)
	th.stuck.backoff = b
	if left := th.taskTimeout() - time.Since(th.stuck.since); left < b {
		b = max(left, 0)
	}
	_ = kafka.Sleep(th.ctx, b)
}

// madeProgress is called after a commit of processed offsets: a failure that stopped the tasks
// before is cured.
func (th *thread) madeProgress() {
	if !th.stuck.since.IsZero() {
		th.log.Info("the tasks make progress again", "after", time.Since(th.stuck.since).Round(time.Millisecond))
	}
	th.stuck = stuckState{}
}
