package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/fetch"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/metrics"
)

// A stream thread (Java: StreamThread) is one goroutine that owns a membership, a fetcher, a
// producer and a task manager, all on the batch-level client of internal/kafka. The thread
// keeps the loop, the fetching, the producer and the commit barrier. Its membership
// (membership.go: the classic group member with the "stream" assignor, or the KIP-1071 streams
// member; Java: the main consumer's group membership with StreamsPartitionAssignor) joins and
// rejoins, says when a rejoin is needed and reads the assignment; its task manager
// (taskmanager.go, Java: TaskManager) owns the tasks: it creates, closes (clean or dirty),
// revokes, promotes, checkpoints and enumerates them. The thread calls both between two
// passes of processing. Its loop (run, runOnce):
//
//   - rebalance.go: when the membership says the group needs it, commit (or close dirty) the
//     tasks and rejoin (JoinGroup/SyncGroup; during a cooperative rebalance beside the
//     processing, rejoin.go), then apply the membership's assignment through the task manager
//     (handleAssignment): tasks that stay are kept as they are (queues, positions, stores),
//     revoked ones are closed, new ones created and handed to the state updater, standbys kept
//     current; the thread then fetches the new inputs and tells the membership which
//     partitions it owns;
//   - updater.go, restoring.go: the task manager's state updater restores new, promoted and
//     standby tasks on a goroutine of its own; each loop takes the restored ones into
//     processing (handleRestored);
//   - input.go: the fetched chunks go into the tasks' partition queues; a full queue pauses
//     its partition; lags for max.task.idle.ms; the positions to commit;
//   - process.go: the tasks process their records and punctuate, in parallel on the thread's
//     task executors; everything else in the loop happens between two passes;
//   - output.go: every produced record goes to the producer at once;
//   - commit.go: every commit.interval.ms (and on demand) caches are flushed, the producer is
//     flushed, then offsets (or the transaction) are committed; the task manager's checkpoint
//     bookkeeping (checkpoint.go) says which tasks' stores are flushed and checkpointed.

// thread is a stream thread.
type thread struct {
	rt   *Runtime
	idx  int
	name string
	log  *slog.Logger

	// cluster is the thread's view of the cluster, shared by its member, fetcher and producer
	// (each on connections of its own).
	cluster *kafka.Cluster
	// membership is the group membership: the member (classic or KIP-1071 streams), the
	// assignor, the generation joined and whether a rejoin is due (membership.go).
	membership *membership
	// out is the producer side: producer, transaction, collectors, production failures.
	out *output
	// restoreClient serves restore and standby reads (Java: the restore consumer), on
	// connections of its own: a sarama Broker holds its lock for a whole fetch, so the thread's
	// fetches never wait for a restore's (the readers fetch on connections of their own too,
	// see changelog.SaramaReader; they are closed before it).
	restoreClient sarama.Client
	// tm owns the tasks: active, restoring (its state updater) and standby, with their
	// changelog state (taskmanager.go).
	tm *taskManager

	ctx  context.Context
	done chan struct{}

	// view is what interactive queries, the executors and the state updater see of the
	// tasks, with the locks that order them with the thread (taskview.go; shared with tm).
	view *taskView
	// passState is what the executors of the current pass share (process.go).
	passState pass
	// pace sizes the passes of processing to the deadlines (pace.go).
	pace pace
	// stuck tracks a failure that keeps the tasks from making progress (tasktimeout.go).
	stuck stuckState
	// awaiting holds the input partitions whose committed offsets are still to be read
	// (input.go: assignInputs, lookUpOffsets).
	awaiting awaitingOffsets

	// in is the input side: the fetcher and the assigned partitions (input.go).
	in         *input
	idle       idleState
	wake       chan struct{}
	lastCommit time.Time
	lastLags   time.Time
	// obs are the thread's sensors; lastPublish when its tasks' figures were last published
	// (observe.go).
	obs         *metrics.Thread
	lastPublish time.Time
}

func newThread(r *Runtime, idx int) (*thread, error) {
	th := &thread{rt: r, idx: idx, name: fmt.Sprintf("%s-StreamThread-%d", r.cfg.ClientID, idx+1),
		ctx: r.ctx, done: make(chan struct{}), view: newTaskView(),
		wake: make(chan struct{}, 1)}
	th.log = r.log.With("thread", th.name)
	th.obs = r.sensors().Thread(th.name)
	th.tm = newTaskManager(th)
	ok := false
	defer func() {
		if !ok {
			th.closeClients()
		}
	}()
	sc := r.cfg.Sarama()
	sc.ClientID = th.name
	cl, err := kafka.NewCluster(kafka.Config{Brokers: r.cfg.Brokers, Sarama: sc, Logger: th.log})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", th.name, err)
	}
	th.cluster = cl
	if th.membership, err = newMembership(r, idx, th.name, th.log, cl, th.tm); err != nil {
		return nil, err
	}
	fc := r.cfg.Fetch
	fc.Cluster, fc.ClientID, fc.Logger = cl, th.name+"-consumer", th.log
	fc.Notify = th.signal
	if r.cfg.ExactlyOnce {
		fc.Isolation = kafka.ReadCommitted
	}
	th.in = &input{parts: map[kafka.TopicPartition]*inputPartition{}, maxBuffered: r.cfg.MaxBufferedPerPartition,
		name: th.name, metrics: r.cfg.Metrics, log: th.log, poll: &th.obs.Poll}
	th.tm.in = th.in
	if th.in.fetcher, err = fetch.New(fc); err != nil {
		return nil, fmt.Errorf("%s: fetcher: %w", th.name, err)
	}
	rc := r.cfg.Sarama()
	rc.ClientID = th.name + "-restore-consumer"
	if th.restoreClient, err = sarama.NewClient(r.cfg.Brokers, rc); err != nil {
		return nil, fmt.Errorf("%s: restore consumer: %w", th.name, err)
	}
	th.tm.reader = changelog.NewSaramaReader(th.restoreClient, r.cfg.ExactlyOnce)
	sr := changelog.NewSaramaReader(th.restoreClient, r.cfg.ExactlyOnce)
	sr.MaxWait = 0
	th.tm.standbyReader = sr
	if r.cfg.CacheMaxBytes > 0 {
		th.tm.cache = cache.New(threadCacheBytes(r.cfg.CacheMaxBytes, r.cfg.Threads))
	}
	th.out = &output{rt: r, name: th.name, idx: idx, log: th.log, obs: th.obs, ctx: th.ctx, cluster: th.cluster}
	th.tm.out = th.out
	if err := th.out.newProducer(); err != nil {
		return nil, err
	}
	ok = true
	return th, nil
}

// threadCacheBytes is the record cache budget of each of threads stream threads: the
// instance's statestore.cache.max.bytes split evenly, so that the instance's caches together
// stay within it whatever num.stream.threads is. Java: KafkaStreams.getCacheSizePerThread,
// which also counts a global stream thread (this runtime has none).
func threadCacheBytes(total int64, threads int) int64 {
	return total / int64(max(threads, 1))
}

// signal wakes the thread's loop when it waits for records (from the fetch goroutines).
func (th *thread) signal() {
	select {
	case th.wake <- struct{}{}:
	default:
	}
}

func (th *thread) setState(st ThreadState) {
	th.obs.SetState(st.String())
	if th.rt.cfg.OnState != nil {
		th.rt.cfg.OnState(th.idx, st)
	}
}

// run is the thread's main loop: it joins the group, processes its tasks and rejoins when the
// group asks, until the runtime stops or the thread fails.
func (th *thread) run() {
	kafka.LabelGoroutine("stream-thread")
	defer close(th.done)
	th.setState(ThreadStarting)
	backoff := 100 * time.Millisecond
	for th.ctx.Err() == nil {
		err := th.runOnce()
		if err != nil {
			th.membership.awaitJoin() // a background join (rejoin.go) ends before the thread rejoins
		}
		if err == nil {
			backoff = 100 * time.Millisecond
			continue
		}
		if th.ctx.Err() != nil {
			break
		}
		// An authorization or authentication failure is no task migration and no passing
		// trouble of the group: rejoining or retrying would fail alike for ever. It is the
		// thread's fatal error (Java: an AuthorizationException or AuthenticationException
		// kills the StreamThread).
		auth := kafka.AuthError(err)
		var je *joinError
		switch {
		case !auth && migrated(err):
			th.noteExpelledOnError(err)
			stuck, timedOut := th.checkStuck(err)
			if timedOut != nil {
				err = timedOut // fails the thread below
				break
			}
			if !stuck {
				th.log.Warn("tasks corrupted or migrated; closing them dirty and rejoining", "error", err)
			}
			th.closeTasks(false)
			th.membership.needJoin = true
			if err = th.out.reset(); err == nil {
				if stuck {
					th.stuckBackoff()
				}
				continue
			}
			// The producer cannot be made again (its transactional id is not authorized).
		case !auth && errors.As(err, &je) && !errors.Is(err, group.ErrFatal):
			th.log.Warn("joining the group failed; retrying", "error", err, "backoff", backoff)
			_ = kafka.Sleep(th.ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		th.closeTasks(false)
		th.out.close()
		th.membership.needJoin = true
		if !th.rt.threadFailed(th.idx, err) {
			break
		}
		// Replaced (or rejoining to carry the application's shutdown request): runOnce makes
		// a new producer first. One that keeps failing its authorization waits in between.
		if auth {
			_ = kafka.Sleep(th.ctx, backoff)
			backoff = min(backoff*2, 5*time.Second)
		}
	}
	th.setState(ThreadPendingShutdown)
	th.shutdown()
	th.setState(ThreadDead)
}

// runOnce joins the group when needed, then processes until the group asks for a rejoin, the
// runtime stops (after a final commit) or an error.
func (th *thread) runOnce() error {
	if ok, err := th.ensureProducer(); !ok {
		return err
	}
	if th.membership.needJoin {
		if err := th.rebalance(); err != nil {
			return err
		}
	}
	interval := th.rt.cfg.CommitInterval
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	th.lastCommit = time.Now()
	for {
		if ok, err := th.ensureProducer(); !ok {
			return err
		}
		if th.ctx.Err() != nil {
			if th.membership.joining() {
				// Closing in the middle of a background join: the member left the group, so
				// what was processed since the last commit cannot be committed.
				th.membership.awaitJoin()
				th.out.abortTransaction()
				th.closeTasks(false)
				return nil
			}
			// Closing: commit what was processed (the tasks are closed clean in shutdown).
			return th.commit(true)
		}
		gap := th.polled()
		if th.membership.joining() {
			if err := th.pollJoin(); err != nil {
				return err
			}
		} else if err := th.membership.rejoinNeeded(); err != nil {
			th.noteExpelled(err, gap)
			if !th.membership.joinsInBackground(err) {
				return th.prepareRejoin(err)
			}
			th.startJoin(err) // rejoin.go: the tasks process on meanwhile
		}
		if !th.membership.joining() {
			if th.membership.maybeSendShutdown() {
				return th.prepareRejoin(errShutdownRequest)
			}
			if err := th.tm.retryHeld(); err != nil {
				return err
			}
			if err := th.handleRestored(); err != nil {
				return err
			}
			if err := th.lookUpOffsets(); err != nil {
				return err
			}
		}
		got, err := th.in.pollInput(th.tm.tasks)
		if err != nil {
			return err
		}
		n, err := th.processOnce()
		if err == nil {
			th.in.resume(th.tm.tasks)
		}
		if err == nil {
			err = th.out.checkSendFailures()
		}
		if time.Since(th.lastLags) >= lagReportEvery {
			th.publishMetrics(false)
			th.in.reportLags()
			th.lastLags = time.Now()
		}
		committed := false
		if err == nil && !th.membership.joining() && (time.Since(th.lastCommit) >= interval || th.commitRequested()) {
			start := time.Now()
			err = th.commit(false)
			th.lastCommit = time.Now()
			th.pace.lastCommit, committed = th.lastCommit.Sub(start), true
			if err == nil {
				th.obs.Commit.Record(1, time.Since(start))
			}
			if m := th.rt.cfg.Metrics; m != nil && err == nil {
				m.commitLatency.WithLabelValues(th.name).Observe(time.Since(start).Seconds())
				var dropped int64
				for _, t := range th.tm.tasks {
					dropped += t.DroppedRecords()
				}
				m.dropped.WithLabelValues(th.name).Set(float64(dropped))
			}
		}
		if errors.Is(err, group.ErrRebalanceInProgress) {
			// At least once: the coordinator refused the commit because the group is
			// rebalancing: rejoin (the offsets are committed later, if the tasks stay).
			if !th.membership.joinsInBackground(err) {
				return th.prepareRejoin(err)
			}
			th.startJoin(err)
			err = nil
		}
		if err != nil {
			return err
		}
		th.adaptPace(n, committed)
		th.tm.maybeUpdateStandbys()
		if n == 0 && got == 0 {
			// Nothing to do: wait for records, the next commit, or at most idleWait (the
			// group's state and wall-clock punctuation are looked at again then).
			wait := interval - time.Since(th.lastCommit)
			wait = max(min(wait, idleWait), time.Millisecond)
			timer.Reset(wait)
			select {
			case <-th.ctx.Done():
			case <-th.wake:
			case <-timer.C:
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
	}
}

// ensureProducer makes the thread's producer when it has none: a replaced thread's, or one
// whose replacement after a failed abort failed. It returns false with the error when that
// fails its authorization (kafka.AuthError), false without one when the runtime stops.
func (th *thread) ensureProducer() (bool, error) {
	if th.out.producer != nil {
		return true, nil
	}
	if err := th.out.reset(); err != nil {
		return false, err
	}
	return th.out.producer != nil, nil
}

// idleWait is the longest an idle thread sleeps before it looks at the group's state,
// punctuation and standbys again.
const idleWait = 50 * time.Millisecond

// errShutdownRequest ends a processing round so that the thread rejoins with this instance's
// request for the application's shutdown (shutdown.go).
var errShutdownRequest = errors.New("rejoining to announce the application's shutdown request")

// shutdown closes the tasks (committed by the last round), leaves the group and closes the
// clients.
func (th *thread) shutdown() {
	th.tm.close()
	th.membership.setOwned(nil)
	th.tm.reportTasks()
	th.out.close()
	th.closeClients()
}

// closeClients closes the member (which leaves the group), the fetcher and the connections.
func (th *thread) closeClients() {
	if th.membership != nil {
		th.membership.leave()
	}
	if th.in != nil && th.in.fetcher != nil {
		_ = th.in.fetcher.Close()
	}
	if th.out != nil && th.out.producer != nil {
		_ = th.out.producer.Close()
		th.out.producer = nil
	}
	if th.cluster != nil {
		_ = th.cluster.Close()
	}
	if th.tm != nil {
		for _, r := range []changelog.Reader{th.tm.reader, th.tm.standbyReader} {
			if c, ok := r.(*changelog.SaramaReader); ok {
				_ = c.Close()
			}
		}
	}
	if th.restoreClient != nil {
		_ = th.restoreClient.Close()
	}
}

// migrated reports errors after which the thread's tasks are closed dirty and the thread
// rejoins: its tasks moved to another member (or its producer was fenced), or talking to Kafka
// failed after the client's retries. Java: TaskMigratedException / TaskCorruptedException.
//
// A group.instance.id fenced by another instance is not one: rejoining would fence that one in
// turn, so it is fatal, as in Java (FencedInstanceIdException).
func migrated(err error) bool {
	if errors.Is(err, sarama.ErrFencedInstancedId) || errors.Is(err, group.ErrFatal) {
		return false
	}
	var ke *KafkaError
	return isMigration(err) || errors.As(err, &ke) || errors.Is(err, group.ErrMemberLost) || errors.Is(err, produce.ErrFenced) ||
		errors.Is(err, produce.ErrGroupMember) || errors.Is(err, produce.ErrAbortable)
}

// KafkaError is a failure talking to Kafka (producer, transaction, restore) after the
// client's own retries. The thread does not die of it: its tasks are closed dirty (under
// exactly-once the transaction is aborted) and it rejoins the group, reprocessing from the
// last commit. Java: TaskCorruptedException / TaskMigratedException handling.
type KafkaError struct {
	// Op is what failed.
	Op string
	// Err is the client's error.
	Err error
}

// Error implements error.
func (e *KafkaError) Error() string { return e.Op + ": " + e.Err.Error() }

// Unwrap returns the client's error.
func (e *KafkaError) Unwrap() error { return e.Err }

func kafkaErr(op string, err error) error { return &KafkaError{Op: op, Err: err} }

// joinError is a failed join; retried unless it wraps group.ErrFatal.
type joinError struct{ err error }

func (e *joinError) Error() string { return "join the group: " + e.err.Error() }
func (e *joinError) Unwrap() error { return e.err }
