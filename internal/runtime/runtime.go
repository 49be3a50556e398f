// Package runtime runs a topology against Kafka: stream threads (each a sarama consumer-group
// member with the "stream" assignor and a producer), their tasks (internal/task engines), the
// internal topic manager, restore from changelogs, and the at-least-once and exactly-once (v2)
// commit protocols. The root package kstreams configures and drives it.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/changelog"
	"github.com/kstreams-go/kstreams/internal/kafka"
	"github.com/kstreams-go/kstreams/internal/kafka/fetch"
	"github.com/kstreams-go/kstreams/internal/kafka/group"
	"github.com/kstreams-go/kstreams/internal/kafka/produce"
	"github.com/kstreams-go/kstreams/internal/kafka/streamsgroup"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// ThreadState is the state of a stream thread. Java: StreamThread.State.
type ThreadState int

const (
	// ThreadCreated is a thread not started yet (Java: CREATED).
	ThreadCreated ThreadState = iota
	// ThreadStarting is a thread joining the group for the first time (Java: STARTING).
	ThreadStarting
	// ThreadRebalancing is a thread between sessions: tasks suspended, rejoining the group
	// (Java: PARTITIONS_REVOKED / PARTITIONS_ASSIGNED).
	ThreadRebalancing
	// ThreadRunning is a thread processing its assigned tasks (Java: RUNNING).
	ThreadRunning
	// ThreadPendingShutdown is a thread asked to stop (Java: PENDING_SHUTDOWN).
	ThreadPendingShutdown
	// ThreadDead is a stopped thread (Java: DEAD).
	ThreadDead
)

// ThreadAction is what the uncaught-error handler decides for a thread that failed.
// Java: StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.
type ThreadAction int

const (
	// ShutdownClient stops every thread of this instance (Java: SHUTDOWN_CLIENT).
	ShutdownClient ThreadAction = iota
	// ReplaceThread restarts the failed thread: its tasks are closed dirty and rejoin
	// (Java: REPLACE_THREAD).
	ReplaceThread
	// ShutdownApplication shuts down every instance of the application: the failed thread
	// (its tasks closed dirty) rejoins the group without processing, and every thread of this
	// instance announces the request in its subscription; the group leader answers every
	// member with the error code SHUTDOWN_REQUESTED, and each instance then shuts down
	// (Config.OnApplicationShutdown). Java: SHUTDOWN_APPLICATION (KIP-671).
	ShutdownApplication
)

// ProductionHandler decides about a record the producer could not send: Continue drops it,
// Fail fails the thread. Java: ProductionExceptionHandler.
type ProductionHandler func(rec task.OutRecord, err error) task.HandlerResponse

// Config is the resolved configuration of a Runtime.
type Config struct {
	// ApplicationID is application.id: the consumer group and the prefix of internal topics.
	ApplicationID string
	// ProcessID identifies this instance (a random UUID).
	ProcessID string
	// ClientID prefixes the client ids of the threads' clients.
	ClientID string
	// Topology is the untyped graph.
	Topology *topology.Builder
	// Brokers are the bootstrap servers.
	Brokers []string
	// Sarama returns a fresh base sarama configuration (version, security, timeouts).
	Sarama func() *sarama.Config
	// Threads is num.stream.threads.
	Threads int
	// Executors is how many goroutines of each thread process its tasks in a pass
	// (process.go); 0 or 1: the thread's own goroutine only.
	Executors int
	// ExactlyOnce is processing.guarantee=exactly_once_v2.
	ExactlyOnce bool
	// CommitInterval is commit.interval.ms.
	CommitInterval time.Duration
	// MaxBufferedPerPartition is buffered.records.per.partition (fetching a partition pauses
	// when this many records are buffered).
	MaxBufferedPerPartition int
	// ApplicationServer is application.server (host:port) or "".
	ApplicationServer string
	// StateDir is state.dir.
	StateDir string
	// ReplicationFactor is replication.factor of internal topics (-1: broker default).
	ReplicationFactor int16
	// WindowChangelogAdditionalRetentionMs is windowstore.changelog.additional.retention.ms,
	// added to window and session stores' retention for their changelogs' retention.ms.
	WindowChangelogAdditionalRetentionMs int64
	// NumStandbyReplicas is num.standby.replicas: standby copies of each task kept on other
	// instances.
	NumStandbyReplicas int
	// Assignment holds acceptable.recovery.lag, max.warmup.replicas and
	// probing.rebalance.interval.ms, used when a thread of this instance leads the group
	// (NumStandbyReplicas is taken from above). The zero value means Java's defaults.
	Assignment assignment.Config
	// ClientTags are the client.tag.* properties, sent in every subscription.
	ClientTags map[string]string
	// CacheMaxBytes is statestore.cache.max.bytes, split evenly over the threads; 0 turns
	// the record caches off.
	CacheMaxBytes int64
	// Pebble configures the instance's shared Pebble environment.
	Pebble store.PebbleOptions
	// Task is the template of every task's engine configuration (serdes, extractor, handlers,
	// app configs); Collector, StateDir and Logger are set per task.
	Task task.Config
	// Producer is the template of every thread's producer configuration (linger.ms, batch.size,
	// acks, ...); Cluster, ClientID, TransactionalID and Logger are set per thread.
	Producer produce.Config
	// Fetch is the template of every thread's fetcher configuration (fetch.max.wait.ms, sizes,
	// auto.offset.reset); Cluster, ClientID, Isolation, Notify and Logger are set per thread.
	Fetch fetch.Config
	// Group is the template of every thread's group member configuration (session.timeout.ms,
	// heartbeat.interval.ms, max.poll.interval.ms, group.instance.id, client.rack); Cluster,
	// GroupID, ClientID, Topics, Assignor and Logger are set per thread, and InstanceID gets the
	// thread index appended.
	Group group.Config
	// Production decides about records that cannot be sent; nil fails.
	Production ProductionHandler
	// DeadLetterTopic, when set, receives the raw records dropped by a deserialization handler
	// that continues (Task.DeadLetter is set from it: see DeadLetterRecord).
	DeadLetterTopic string
	// Logger logs; nil means slog.Default().
	Logger *slog.Logger
	// Metrics records metrics; nil records none.
	Metrics *Metrics
	// Observe is the metrics registry the threads record into (internal/metrics); nil: one
	// at INFO of the runtime's own.
	Observe *metrics.Registry
	// OnState is called on every thread state change.
	OnState func(thread int, st ThreadState)
	// RestoreListener, when set, is told about every store restore (from the threads).
	RestoreListener changelog.RestoreListener
	// OnError is called with a thread's fatal error and returns what to do; nil means
	// ShutdownClient.
	OnError func(thread int, err error) ThreadAction
	// OnApplicationShutdown is called once, from a stream thread, when this instance received
	// the group's answer to a ShutdownApplication request (of any instance): the error code
	// SHUTDOWN_REQUESTED in its assignment. err wraps ErrApplicationShutdown. The callee shuts
	// the instance down (Close) without blocking the thread; nil: the runtime stops its threads
	// itself. Java: StreamThread.shutdownToError -> KafkaStreams.closeToError.
	OnApplicationShutdown func(err error)
	// TaskTimeout is task.timeout.ms: how long a failure that keeps the tasks from making
	// progress (a missing output topic, a partition without leader) is retried before the
	// thread fails with a *TaskTimeoutError; 0 means DefaultTaskTimeout, a negative value fails
	// at the first such failure (Java's 0).
	TaskTimeout time.Duration
	// PrepareTimeout bounds internal topic preparation in Start; 0 means 60 s.
	PrepareTimeout time.Duration
	// StreamsProtocol is group.protocol=streams (KIP-1071): each thread is a member of a
	// streams group (streamsmember.go) and the group coordinator assigns the tasks; false is
	// the classic protocol with the streams assignor.
	StreamsProtocol bool
}

// Runtime is a running application instance: its stream threads.
type Runtime struct {
	cfg    Config
	log    *slog.Logger
	layout *Layout
	subOf  map[string]int

	ctx    context.Context
	cancel context.CancelFunc

	// streamsTopo is the topology description of the streams protocol's members (nil on the
	// classic protocol).
	streamsTopo *streamsgroup.Topology

	mu      sync.Mutex
	threads []*thread
	hosts   map[string][]processor.TaskID
	// standbyHosts are the standby tasks per application.server.
	standbyHosts map[string][]processor.TaskID
	fatal        error
	closed       bool
	// taskLocks names the thread holding each task's state directory (Java: StateDirectory
	// locks); a thread taking over a task waits until the previous owner closed it.
	taskLocks map[processor.TaskID]int
	pebble    storeapi.PebbleEnv
	// shutdown is the application-wide shutdown state (shutdown.go).
	shutdown appShutdown
}

// New returns a Runtime for cfg; nothing connects before Start.
func New(cfg Config) *Runtime {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxBufferedPerPartition <= 0 {
		cfg.MaxBufferedPerPartition = 1000
	}
	if cfg.Observe == nil {
		cfg.Observe = metrics.New(cfg.ApplicationID, metrics.Info)
	}
	cfg.Task.Metrics = cfg.Observe
	if cfg.DeadLetterTopic != "" && cfg.Task.DeadLetter == nil {
		cfg.Task.DeadLetter = DeadLetterRecord(cfg.DeadLetterTopic)
	}
	if cfg.PrepareTimeout <= 0 {
		cfg.PrepareTimeout = 60 * time.Second
	}
	if cfg.Assignment == (assignment.Config{}) {
		cfg.Assignment = assignment.Config{AcceptableRecoveryLag: assignment.DefaultAcceptableRecoveryLag,
			MaxWarmupReplicas: assignment.DefaultMaxWarmupReplicas, ProbingRebalanceInterval: assignment.DefaultProbingRebalanceInterval}
	}
	return &Runtime{cfg: cfg, log: cfg.Logger}
}

// Start prepares the internal topics (on the streams protocol the group coordinator creates
// the missing ones) and starts the stream threads. Errors: those of
// PrepareTopics (missing source topics, wrong partition counts), connection errors.
func (r *Runtime) Start(ctx context.Context) error {
	client, err := connect(ctx, r.cfg.Brokers, r.cfg.Sarama())
	if err != nil {
		return err
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, r.cfg.PrepareTimeout)
	defer cancel()
	l, err := PrepareTopics(pctx, admin, client, r.cfg.Topology, r.cfg.ApplicationID, r.cfg.ReplicationFactor, r.cfg.WindowChangelogAdditionalRetentionMs,
		!r.cfg.StreamsProtocol)
	if err != nil {
		return err
	}
	r.layout = l
	if r.cfg.StreamsProtocol {
		r.streamsTopo = streamsTopology(r.cfg.Topology, r.cfg.ApplicationID, l, r.cfg.ReplicationFactor)
	}
	r.subOf = map[string]int{}
	for _, s := range l.Subtopologies {
		for _, t := range s.Topics {
			r.subOf[t] = s.ID
		}
	}
	if r.cfg.Pebble.Logger == nil {
		r.cfg.Pebble.Logger = r.log
	}
	if r.pebble, err = storeapi.NewPebbleEnv(r.cfg.Pebble); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	for i := 0; i < r.cfg.Threads; i++ {
		th, err := newThread(r, i)
		if err != nil {
			r.cancel()
			for _, t := range r.threads {
				t.shutdown()
			}
			return err
		}
		r.threads = append(r.threads, th)
	}
	for _, th := range r.threads {
		go th.run()
	}
	return nil
}

// connect makes the client Start prepares the topics with. sarama's NewClient takes no
// context, so when ctx ends first connect returns ctx's error at once and closes the client
// the abandoned attempt makes, if any.
func connect(ctx context.Context, brokers []string, sc *sarama.Config) (sarama.Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		c   sarama.Client
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := sarama.NewClient(brokers, sc)
		ch <- result{c, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return nil, kafka.ConnectError(brokers, res.err)
		}
		return res.c, nil
	case <-ctx.Done():
		go func() {
			if res := <-ch; res.c != nil {
				_ = res.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// Layout returns the topic layout computed by Start (nil before).
func (r *Runtime) Layout() *Layout { return r.layout }

// Close stops the threads: each commits, closes its tasks and leaves the group. It returns
// when all threads are done or ctx ends (then with ctx's error; threads finish in the
// background).
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	threads := slices.Clone(r.threads)
	r.mu.Unlock()
	if r.cancel != nil {
		r.cancel() // a thread joining the group abandons the join (and leaves the group)
	}
	for _, th := range threads {
		select {
		case <-th.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.mu.Lock()
	if r.pebble != nil {
		if err := r.pebble.Close(); err != nil {
			r.log.Warn("closing the Pebble environment", "error", err)
		}
		r.pebble = nil
	}
	r.mu.Unlock()
	return nil
}

// Fatal returns the error that stopped the instance, if any.
func (r *Runtime) Fatal() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fatal
}

// threadFailed applies the uncaught-error handler to a thread's fatal error. It returns true
// when the thread should restart (ReplaceThread; ShutdownApplication, to carry the request).
func (r *Runtime) threadFailed(idx int, err error) bool {
	action := ShutdownClient
	if r.cfg.OnError != nil {
		action = r.cfg.OnError(idx, err)
	}
	if action == ReplaceThread {
		r.log.Warn("replacing stream thread after error", "thread", idx, "error", err)
		return true
	}
	if action == ShutdownApplication {
		// The thread rejoins, without tasks, to carry the request (Java adds a thread for
		// that when the failed one was the last).
		r.requestApplicationShutdown(idx, err)
		return true
	}
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
	}
	r.mu.Unlock()
	r.log.Error("stream thread failed; shutting down", "thread", idx, "error", err)
	if r.cancel != nil {
		r.cancel()
	}
	return false
}

func (r *Runtime) setHosts(info assignmentInfo) {
	if info.errorCode != 0 {
		return // an error assignment carries no hosts; keep the last known ones
	}
	r.mu.Lock()
	r.hosts, r.standbyHosts = info.hosts, info.standbyHosts
	r.mu.Unlock()
}

// Hosts returns, per application.server, the active tasks it holds (from the last
// assignment this instance received).
func (r *Runtime) Hosts() map[string][]processor.TaskID {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]processor.TaskID{}
	for h, ids := range r.hosts {
		out[h] = slices.Clone(ids)
	}
	return out
}

// StandbyHosts returns, per application.server, the standby tasks it holds (from the last
// assignment this instance received; KIP-535).
func (r *Runtime) StandbyHosts() map[string][]processor.TaskID {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]processor.TaskID{}
	for h, ids := range r.standbyHosts {
		out[h] = slices.Clone(ids)
	}
	return out
}

// SubtopologyOf returns the sub-topology reading topic.
func (r *Runtime) SubtopologyOf(topic string) (int, bool) {
	id, ok := r.subOf[topic]
	return id, ok
}

// QueryableStore is a store of a running active task (or, from StandbyStores, of a standby
// task; from RestoringStores, of an active task still restoring), for interactive queries.
type QueryableStore struct {
	// Store is the task's store (its outermost layer). Read it only inside Read.
	Store processor.StateStore
	// Standby says the store is a standby task's (its data may lag the active's).
	Standby bool
	// Restoring says the store is an active task's that is restoring from its changelog (or
	// catching up after a standby's promotion) and does not process yet: its data lags.
	Restoring bool
	view      *taskView
	id        processor.TaskID
	t         *task.Task
	// lock is what Read holds: the thread's store lock, or the lock of the state updater's
	// job restoring the task.
	lock sync.Locker
}

// Read calls f while the stream thread owning the task leaves its stores and record cache
// alone (it waits for the record the thread is processing, or its punctuation or cache flush,
// not for the rest of its pass; for a task the state updater restores, for the batch being
// restored), and reports true; it reports false without calling f when the task no longer runs
// there as Stores found it (closed, migrated, restored or promoted since).
func (q QueryableStore) Read(f func()) bool {
	kind := viewRunning
	switch {
	case q.Standby:
		kind = viewStandby
	case q.Restoring:
		kind = viewRestoring
	}
	return q.view.read(kind, q.id, q.t, q.lock, f)
}

// Position returns what the task has processed of each input partition, the offset of the
// last record (topic -> partition -> offset), read as Read reads the store; ok is false when the
// task no longer runs there. A standby task has processed nothing (empty). Interactive queries
// check position bounds against it (KIP-796): every store of a task reflects each record the
// task processed.
func (q QueryableStore) Position() (pos map[string]map[int32]int64, ok bool) {
	ok = q.Read(func() { pos = q.t.ConsumedOffsets() })
	return pos, ok
}

// Stores returns the store named name of every local active task that is running, by task.
func (r *Runtime) Stores(name string) map[processor.TaskID]QueryableStore {
	return r.stores(name, viewRunning)
}

// StandbyStores returns the store named name of every local standby task, by task (KIP-535:
// interactive queries that allow stale data read them).
func (r *Runtime) StandbyStores(name string) map[processor.TaskID]QueryableStore {
	return r.stores(name, viewStandby)
}

// RestoringStores returns the store named name of every local active task that is restoring
// (from a fresh assignment, or a standby's promotion) and does not run yet, by task (KIP-535:
// interactive queries that allow stale data read them, between restore batches).
func (r *Runtime) RestoringStores(name string) map[processor.TaskID]QueryableStore {
	return r.stores(name, viewRestoring)
}

// stores returns the store named name of the tasks of kind in each thread's view.
func (r *Runtime) stores(name string, kind viewKind) map[processor.TaskID]QueryableStore {
	out := map[processor.TaskID]QueryableStore{}
	r.mu.Lock()
	threads := slices.Clone(r.threads)
	r.mu.Unlock()
	for _, th := range threads {
		v := th.view
		v.mu.Lock()
		for id, t := range v.set(kind) {
			if s := t.Store(name); s != nil {
				out[id] = QueryableStore{Store: s, Standby: kind == viewStandby, Restoring: kind == viewRestoring,
					view: v, id: id, t: t, lock: v.lockOfLocked(id)}
			}
		}
		v.mu.Unlock()
	}
	return out
}

// taskDir is <state.dir>/<application.id>/<task id>.
func (r *Runtime) taskDir(id processor.TaskID) string {
	if r.cfg.StateDir == "" {
		return ""
	}
	return filepath.Join(r.cfg.StateDir, r.cfg.ApplicationID, id.String())
}

// isMigration reports errors that mean this thread lost its tasks to another member (or its
// producer was fenced): the tasks are closed dirty and the thread rejoins. Java:
// TaskMigratedException.
func isMigration(err error) bool {
	for _, k := range []sarama.KError{sarama.ErrProducerFenced, sarama.ErrInvalidProducerEpoch, sarama.ErrInvalidTxnState,
		sarama.ErrIllegalGeneration, sarama.ErrUnknownMemberId,
		sarama.ErrTransactionCoordinatorFenced, sarama.ErrInvalidProducerIDMapping} {
		if errors.Is(err, k) {
			return true
		}
	}
	return errors.Is(err, sarama.ErrTransitionNotAllowed) || errors.Is(err, sarama.ErrTransactionNotReady) ||
		errors.Is(err, sarama.ErrNonTransactedProducer)
}

// LocalTasks returns, per thread name, the thread's running active tasks, sorted.
func (r *Runtime) LocalTasks() map[string][]processor.TaskID {
	r.mu.Lock()
	threads := slices.Clone(r.threads)
	r.mu.Unlock()
	out := map[string][]processor.TaskID{}
	for _, th := range threads {
		ids := th.view.runningIDs()
		out[th.name] = ids
	}
	return out
}

// errTaskHeld is buildTask's error when another stream thread of this instance still holds
// the task (it closes it during its own rebalance handling): the task manager tries again at
// the thread's next loop iteration (taskManager.retryHeld) instead of waiting.
var errTaskHeld = errors.New("the task is still held by another stream thread of this instance")

// tryLockTask takes task id for thread idx unless another thread of this instance holds it (a
// task moving between two threads of the instance is closed by one while the other already
// creates it); then it returns errTaskHeld wrapped with the holder. It never waits. Java: the
// state directory lock a TaskManager retries at its next loop iteration.
func (r *Runtime) tryLockTask(id processor.TaskID, idx int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.taskLocks == nil {
		r.taskLocks = map[processor.TaskID]int{}
	}
	if owner, held := r.taskLocks[id]; held && owner != idx {
		return fmt.Errorf("task %s: %w (stream thread %d)", id, errTaskHeld, owner+1)
	}
	r.taskLocks[id] = idx
	return nil
}

// heldElsewhere reports whether another thread than idx holds task id.
func (r *Runtime) heldElsewhere(id processor.TaskID, idx int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	owner, held := r.taskLocks[id]
	return held && owner != idx
}

// unlockTask releases task id if thread idx holds it.
func (r *Runtime) unlockTask(id processor.TaskID, idx int) {
	r.mu.Lock()
	if owner, ok := r.taskLocks[id]; ok && owner == idx {
		delete(r.taskLocks, id)
	}
	r.mu.Unlock()
}
