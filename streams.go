// Package kstreams runs Kafka Streams topologies against Kafka: an application instance
// (Java's KafkaStreams) with stream threads, tasks, internal topics, at-least-once and
// exactly-once (v2) processing, exception handlers, interactive queries and metrics.
//
//	app, err := kstreams.New(topology, kstreams.Config{ApplicationID: "wordcount", BootstrapServers: []string{"localhost:9092"}})
//	if err != nil { ... }
//	err = app.Run(ctx) // start, block until ctx ends or a fatal error, close
package kstreams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kstreams-go/kstreams/internal/props"
	"github.com/kstreams-go/kstreams/internal/topology"

	"github.com/kstreams-go/kstreams/changelog"
	"github.com/kstreams-go/kstreams/internal/assignment"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/runtime"
	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/processor"
)

// State is the state of an application instance. Java: KafkaStreams.State.
type State int

const (
	// StateCreated: built, not started (Java: CREATED).
	StateCreated State = iota
	// StateRebalancing: a thread is joining the group or restoring (Java: REBALANCING).
	StateRebalancing
	// StateRunning: every thread processes its tasks (Java: RUNNING).
	StateRunning
	// StatePendingShutdown: Close was called (Java: PENDING_SHUTDOWN).
	StatePendingShutdown
	// StateNotRunning: closed cleanly (Java: NOT_RUNNING).
	StateNotRunning
	// StatePendingError: a fatal error is shutting the instance down (Java: PENDING_ERROR).
	StatePendingError
	// StateError: stopped by a fatal error, see Err (Java: ERROR).
	StateError
)

// String returns Java's name of the state (e.g. "RUNNING").
func (s State) String() string {
	switch s {
	case StateCreated:
		return "CREATED"
	case StateRebalancing:
		return "REBALANCING"
	case StateRunning:
		return "RUNNING"
	case StatePendingShutdown:
		return "PENDING_SHUTDOWN"
	case StateNotRunning:
		return "NOT_RUNNING"
	case StatePendingError:
		return "PENDING_ERROR"
	case StateError:
		return "ERROR"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ThreadResponse is the uncaught-error handler's decision. Java:
// StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.
type ThreadResponse int

const (
	// ShutdownClient stops this instance; it ends in Error (Java: SHUTDOWN_CLIENT, the default).
	ShutdownClient ThreadResponse = iota
	// ReplaceThread restarts the failed thread: its tasks are closed without commit and
	// rejoin the group (Java: REPLACE_THREAD).
	ReplaceThread
	// ShutdownApplication shuts down every instance of the application (Java:
	// SHUTDOWN_APPLICATION, KIP-671). The failed thread's tasks are closed without commit and
	// the thread rejoins the group, without processing, to announce the request; the other
	// threads of this instance announce it too. The group leader then answers every member
	// with the error code SHUTDOWN_REQUESTED and no tasks, and every instance that receives it
	// (this one included) goes to PendingError and then Error. Err returns the handled error
	// on this instance and an error wrapping ErrApplicationShutdown on the others. Until the
	// answer arrives this instance stays in Rebalancing. An instance that is not a member of
	// the group at that moment is not reached. An instance that received the answer stops
	// without leaving the group (as Java's, whose consumers close with REMAIN_IN_GROUP), so
	// that the members still waiting for their answer get it; the coordinator expires its
	// members after session.timeout.ms.
	ShutdownApplication
)

// Errors of the application instance. Failures of Start are typed errors wrapping these.
var (
	// ErrIllegalState is returned by Start on an instance that is not Created.
	// Java: IllegalStateException.
	ErrIllegalState = errors.New("kstreams: illegal state")
	// ErrMissingSourceTopics: a source topic does not exist ([*MissingSourceTopicsError] with
	// the topics). Java: MissingSourceTopicException.
	ErrMissingSourceTopics = runtime.ErrMissingSourceTopics
	// ErrWrongPartitionCount: an existing internal topic has another partition count than the
	// topology needs ([*PartitionCountError] names it).
	ErrWrongPartitionCount = runtime.ErrWrongPartitionCount
	// ErrCopartition: co-partitioned topics have different partition counts.
	ErrCopartition = runtime.ErrCopartition
	// ErrNilTopology is returned by New for a nil topology.
	ErrNilTopology = errors.New("kstreams: nil topology")
	// ErrApplicationShutdown is wrapped by Err of an instance stopped because an instance
	// of its application (another one, or this one without a handled error of its own)
	// requested the shutdown of the whole application (ShutdownApplication).
	// Java: AssignorError.SHUTDOWN_REQUESTED.
	ErrApplicationShutdown = runtime.ErrApplicationShutdown
	// ErrTaskTimeout is wrapped by every *TaskTimeoutError: a stream thread's tasks made no
	// progress within task.timeout.ms.
	ErrTaskTimeout = runtime.ErrTaskTimeout
)

// TaskTimeoutError is a stream thread's failure after its tasks made no progress for
// task.timeout.ms (Config.TaskTimeout): it names the task (when known), the topic the records
// could not be sent to (or, with Op set, the input partition whose committed offset could not be
// read), and the last failure (Err); errors.Is(err, ErrTaskTimeout) holds and errors.As reaches
// the client's error (e.g. sarama.ErrUnknownTopicOrPartition, sarama.ErrUnstableOffsetCommit). It is handed to
// the uncaught-exception handler and, when that shuts the instance down, returned by Err. Java:
// the StreamsException wrapping a TimeoutException ("Task ... did not make progress within ...
// ms").
type TaskTimeoutError = runtime.TaskTimeoutError

// MissingSourceTopicsError lists the source topics that do not exist: field Topics ([]string,
// sorted). Start returns it as a pointer wrapping [ErrMissingSourceTopics]; get it with
// errors.As(err, new(*MissingSourceTopicsError)). Java: MissingSourceTopicException.
type MissingSourceTopicsError = runtime.MissingSourceTopicsError

// PartitionCountError names an existing internal topic with the wrong partition count: fields
// Topic (string), Expected and Actual (int32, the count the topology needs and the topic's).
// Start returns it as a pointer wrapping [ErrWrongPartitionCount]; get it with
// errors.As(err, new(*PartitionCountError)).
type PartitionCountError = runtime.PartitionCountError

// KafkaStreams is an application instance running a topology. Java: KafkaStreams.
// Its methods are safe for concurrent use.
type KafkaStreams struct {
	cfg       Config
	topology  *processor.Topology
	log       *slog.Logger
	processID string
	rt        atomic.Pointer[runtime.Runtime] // set once, by Start
	// dirLock holds <state.dir>/<application.id>/.lock (persistent stores only) until Close.
	dirLock *stateDirLock

	mu         sync.Mutex
	state      State
	listener   func(newState, oldState State)
	restoreL   changelog.RestoreListener
	errHandler func(err error) ThreadResponse
	threads    map[int]runtime.ThreadState
	// failedThreads counts threads that died of an error (replaced or not); obs is the
	// metrics registry (metrics.go).
	failedThreads int
	obs           *metrics.Registry
	err           error
	// done is closed by stop, the one path every way of stopping ends in.
	done     chan struct{}
	stopOnce sync.Once
	// startMu is held while Start connects and starts the threads, so that stop, when Close
	// comes during Start, closes the threads Start made.
	startMu sync.Mutex
}

// New validates cfg and returns an instance of topology in state Created; nothing connects
// before Start. When the topology has persistent stores, New locks the application's state
// directory <state.dir>/<application.id> (an fcntl lock on its .lock file, the lock Java
// Kafka Streams takes, so neither a Go nor a Java instance can start on a directory the other
// runs on) and reads or creates its process id there (Java's kafka-streams-process-metadata),
// until Close, also when the instance is never started: call Close to release it. Errors:
// ErrNilTopology, *ConfigError (wrapping ErrInvalidConfig; also for a pattern source on
// group.protocol=streams, which Java 4.4 refuses too), *StateDirError (wrapping
// ErrStateDirLocked when another instance holds the state directory; its Path names the
// directory). Java: new KafkaStreams(topology, props).
func New(topology *processor.Topology, cfg Config) (*KafkaStreams, error) {
	if topology == nil {
		return nil, ErrNilTopology
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkStreamsProtocolTopology(topology, cfg); err != nil {
		return nil, err
	}
	ignored := cfg.ignoredOnStreamsProtocol()
	cfg = cfg.withDefaults()
	for _, name := range ignored {
		cfg.Logger.Warn("kstreams: group.protocol=streams: the group's configuration decides this, not the instance's; "+
			"set the group config (kafka-configs --entity-type groups) or the broker's group.streams.* default",
			"property", name)
	}
	for _, u := range UnknownProperties(cfg.Properties) {
		attrs := []any{"property", u[0]}
		if u[1] != "" {
			attrs = append(attrs, "did_you_mean", u[1])
		}
		cfg.Logger.Warn("kstreams: unknown configuration property: nothing reads it (it is kept in Properties)", attrs...)
	}
	pid, lock, err := processID(cfg.StateDir, cfg.ApplicationID, hasPersistentStores(topology))
	if err != nil {
		return nil, err
	}
	if cfg.ClientID == "" {
		cfg.ClientID = cfg.ApplicationID + "-" + pid
	}
	k := &KafkaStreams{cfg: cfg, topology: topology, log: cfg.Logger, processID: pid, dirLock: lock,
		threads: map[int]runtime.ThreadState{}, done: make(chan struct{})}
	k.initMetrics()
	return k, nil
}

// checkStreamsProtocolTopology refuses a topology with a pattern source (AddSourcePattern, a
// DSL stream of a pattern) on group.protocol=streams: Java 4.4's KafkaStreams refuses it
// ("Pattern subscriptions are not supported with the STREAMS protocol"), and Apache Kafka 4.4's
// group coordinator answers a topology with SourceTopicRegex INVALID_REQUEST ("Regular
// expressions for source topics are not supported yet"). The error is a *ConfigError for
// group.protocol naming the source.
func checkStreamsProtocolTopology(topo *processor.Topology, cfg Config) error {
	if !strings.EqualFold(string(cfg.GroupProtocol), string(GroupProtocolStreams)) {
		return nil
	}
	for _, n := range topology.Of(topo).Nodes() {
		if n.Kind == topology.SourceNode && n.Pattern != nil {
			return &ConfigError{Property: props.GroupProtocolConfig, Value: string(cfg.GroupProtocol),
				Reason: fmt.Sprintf("source %s reads the topic pattern %s: pattern subscriptions are not supported with the streams protocol "+
					"(as in Java 4.4; the group coordinator refuses source topic patterns); use group.protocol=classic or name the topics", n.Name, n.PatternText)}
		}
	}
	return nil
}

// hasPersistentStores reports whether a store of the topology keeps its data in the state
// directory (StateStore.Persistent). Java: InternalTopologyBuilder.hasPersistentStores, which
// also builds each store to ask it.
func hasPersistentStores(topo *processor.Topology) bool {
	for _, s := range topology.Of(topo).Stores() {
		b, ok := s.Builder.(interface {
			Build() (processor.StateStore, error)
		})
		if !ok {
			continue
		}
		if st, err := b.Build(); err == nil && st != nil && st.Persistent() {
			return true
		}
	}
	return false
}

// ProcessID returns the instance's process id (a random UUID), part of its transactional ids.
func (k *KafkaStreams) ProcessID() string { return k.processID }

// SetStateListener sets the function called on every state change (from the goroutine that
// changed it; keep it short). Java: setStateListener. Must be called before Start.
func (k *KafkaStreams) SetStateListener(f func(newState, oldState State)) {
	k.mu.Lock()
	k.listener = f
	k.mu.Unlock()
}

// SetGlobalStateRestoreListener sets the listener told about the restore of every state store
// of the instance from its changelog: start (first offset read, end offset), each batch
// written, and end (records restored). It is called concurrently (each stream thread restores
// a few tasks at once), so it must be safe for concurrent use and quick. nil removes it. Must be
// called before Start. Java: setGlobalStateRestoreListener(StateRestoreListener).
func (k *KafkaStreams) SetGlobalStateRestoreListener(l changelog.RestoreListener) {
	k.mu.Lock()
	k.restoreL = l
	k.mu.Unlock()
}

// SetUncaughtExceptionHandler sets the handler of a stream thread's fatal error; without one
// the instance shuts down (ShutdownClient) and ends in Error. The handler runs on the failed
// thread; its answer is ReplaceThread, ShutdownClient or ShutdownApplication (which stops
// every instance of the application). Java: setUncaughtExceptionHandler.
func (k *KafkaStreams) SetUncaughtExceptionHandler(f func(err error) ThreadResponse) {
	k.mu.Lock()
	k.errHandler = f
	k.mu.Unlock()
}

// State returns the current state. Java: state().
func (k *KafkaStreams) State() State {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.state
}

// Err returns the instance's fatal error, or nil: the error a stream thread's handler answered
// with ShutdownClient or ShutdownApplication (set at once; the instance is then in, or on its
// way to, Error), or, when another instance of the application requested its shutdown, an
// error wrapping ErrApplicationShutdown.
func (k *KafkaStreams) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// setStateLocked changes the state (Java's transition rules: nothing leaves NotRunning or
// Error; PendingShutdown only goes to NotRunning; PendingError only to Error).
func (k *KafkaStreams) setStateLocked(s State) func() {
	old := k.state
	if old == s {
		return func() {}
	}
	switch old {
	case StateNotRunning, StateError:
		return func() {}
	case StatePendingShutdown:
		if s != StateNotRunning {
			return func() {}
		}
	case StatePendingError:
		if s != StateError {
			return func() {}
		}
	}
	k.state = s
	l := k.listener
	k.log.Info("state transition", "from", old.String(), "to", s.String())
	return func() {
		if l != nil {
			l(s, old)
		}
	}
}

func (k *KafkaStreams) setState(s State) {
	k.mu.Lock()
	notify := k.setStateLocked(s)
	k.mu.Unlock()
	notify()
}

// onThreadState aggregates thread states: Running when every live thread runs, else
// Rebalancing.
func (k *KafkaStreams) onThreadState(idx int, st runtime.ThreadState) {
	k.mu.Lock()
	k.threads[idx] = st
	if k.state != StateRunning && k.state != StateRebalancing {
		k.mu.Unlock()
		return
	}
	all := true
	for _, s := range k.threads {
		if s != runtime.ThreadRunning && s != runtime.ThreadDead {
			all = false
		}
	}
	next := StateRebalancing
	if all {
		next = StateRunning
	}
	notify := k.setStateLocked(next)
	k.mu.Unlock()
	notify()
}

func (k *KafkaStreams) onThreadError(idx int, err error) runtime.ThreadAction {
	k.obs.RecordError(metrics.ErrorEvent{Kind: "thread", Where: fmt.Sprintf("StreamThread-%d", idx+1), Message: err.Error()})
	k.mu.Lock()
	k.failedThreads++
	h := k.errHandler
	k.mu.Unlock()
	resp := ShutdownClient
	if h != nil {
		resp = h(err)
	}
	switch resp {
	case ReplaceThread:
		return runtime.ReplaceThread
	case ShutdownApplication:
		// The instance stops when the group's answer arrives (onApplicationShutdown).
		k.mu.Lock()
		if k.err == nil {
			k.err = err
		}
		k.mu.Unlock()
		return runtime.ShutdownApplication
	}
	k.closeToError(err)
	return runtime.ShutdownClient
}

// onApplicationShutdown is called by a stream thread that received the group's answer to a
// ShutdownApplication request (error code SHUTDOWN_REQUESTED): the instance shuts down to
// Error. Java: StreamThread.shutdownToError.
func (k *KafkaStreams) onApplicationShutdown(err error) { k.closeToError(err) }

// closeToError records err (unless an error is already recorded), moves to PendingError and
// stops the threads in the background, then moves to Error. Java: closeToError.
func (k *KafkaStreams) closeToError(err error) {
	k.mu.Lock()
	if k.err == nil {
		k.err = err
	}
	old := k.state
	notify := k.setStateLocked(StatePendingError)
	started := old != StatePendingError && k.state == StatePendingError
	k.mu.Unlock()
	notify()
	if started {
		k.stop(StateError)
	}
}

// runtime returns the stream threads' runtime, nil before Start.
func (k *KafkaStreams) runtime() *runtime.Runtime { return k.rt.Load() }

// stop is the one way an instance stops, whatever stopped it (Close, a fatal error, a failed
// Start, Run's context): in the background it waits for the stream threads to finish (when
// they were started), releases the state directory, sets the final state (NotRunning, or
// Error when the instance is in PendingError; the transition rules keep Error as it is) and
// closes Done. Only the first call does anything; callers wait on Done.
func (k *KafkaStreams) stop(final State) {
	k.stopOnce.Do(func() {
		go func() {
			k.startMu.Lock() // a Start under way has stored its runtime when it lets go
			rt := k.runtime()
			k.startMu.Unlock()
			if rt != nil {
				_ = rt.Close(context.Background())
			}
			k.releaseStateDir()
			k.setState(final)
			close(k.done)
		}()
	})
}

// Start prepares the internal topics (creating missing changelog and repartition topics),
// then starts the stream threads and returns; the instance moves to Rebalancing and, once every
// thread has its tasks restored, to Running. ctx bounds the connections and requests Start
// makes (its cancellation or deadline ends Start with ctx's error); it does not bound the
// running instance. Errors: ErrIllegalState when not Created, *MissingSourceTopicsError,
// *PartitionCountError, ErrCopartition, connection errors and ctx's error: the instance is
// then in Error and Done is closed. Java: start().
func (k *KafkaStreams) Start(ctx context.Context) error { return k.startAs(ctx, "Start") }

// startAs is Start, naming op (Start or Run) in its error.
func (k *KafkaStreams) startAs(ctx context.Context, op string) error {
	k.mu.Lock()
	if k.state != StateCreated {
		st := k.state
		k.mu.Unlock()
		return fmt.Errorf("%w: %s on an instance in state %s: an instance runs once (Start or Run, not both, not twice); "+
			"to run the topology again make a new instance with kstreams.New", ErrIllegalState, op, st)
	}
	notify := k.setStateLocked(StateRebalancing)
	k.mu.Unlock()
	notify()
	k.startMu.Lock()
	err := k.start(ctx)
	k.startMu.Unlock()
	if err != nil {
		k.closeToError(err)
		<-k.done
		return err
	}
	return nil
}

func (k *KafkaStreams) start(ctx context.Context) error {
	c := k.cfg
	k.logTopologyWarnings()
	metrics, err := runtime.NewMetrics(c.Registry, c.ApplicationID)
	if err != nil {
		return fmt.Errorf("kstreams: register metrics: %w", err)
	}
	if c.Registry != nil {
		if err := c.Registry.Register(k.obs); err != nil {
			return fmt.Errorf("kstreams: register metrics: %w", err)
		}
	}
	appConfigs := maps.Clone(c.Properties)
	if appConfigs == nil {
		appConfigs = map[string]string{}
	}
	appConfigs[props.ApplicationIDConfig] = c.ApplicationID
	appConfigs[props.BootstrapServersConfig] = strings.Join(c.BootstrapServers, ",")
	appConfigs[props.ProcessingGuaranteeConfig] = string(c.ProcessingGuarantee)
	appConfigs[props.NumStreamThreadsConfig] = strconv.Itoa(c.NumStreamThreads)
	appConfigs[props.CommitIntervalMsConfig] = strconv.FormatInt(c.CommitInterval.Milliseconds(), 10)
	appConfigs[props.StateDirConfig] = c.StateDir
	appConfigs[props.StateStoreCacheMaxBytesConfig] = strconv.FormatInt(*c.StateStoreCacheMaxBytes, 10)
	tc := task.Config{
		ApplicationID: c.ApplicationID, AppConfigs: appConfigs, DefaultKeySerde: c.DefaultKeySerde,
		DefaultValueSerde: c.DefaultValueSerde, DefaultTimestampExtractor: c.DefaultTimestampExtractor,
		MaxTaskIdleMs: c.MaxTaskIdle.Milliseconds(),
	}
	if c.MaxTaskIdle < 0 {
		tc.MaxTaskIdleMs = -1 // disabled: never wait for empty partitions
	}
	rcfg := runtime.Config{
		ApplicationID: c.ApplicationID, ProcessID: k.processID, ClientID: c.ClientID, Topology: topology.Of(k.topology),
		Brokers: c.BootstrapServers, Sarama: c.saramaConfig, Threads: c.NumStreamThreads,
		Executors:   c.NumTaskExecutors,
		ExactlyOnce: c.ProcessingGuarantee == ExactlyOnceV2, CommitInterval: c.CommitInterval,
		MaxBufferedPerPartition: c.BufferedRecordsPerPartition, ApplicationServer: c.ApplicationServer,
		StateDir: c.StateDir, ReplicationFactor: c.ReplicationFactor, Logger: c.Logger, Metrics: metrics, Observe: k.obs,
		CacheMaxBytes: *c.StateStoreCacheMaxBytes, NumStandbyReplicas: c.NumStandbyReplicas,
		Assignment: assignment.Config{AcceptableRecoveryLag: *c.AcceptableRecoveryLag, MaxWarmupReplicas: c.MaxWarmupReplicas,
			ProbingRebalanceInterval: c.ProbingRebalanceInterval},
		ClientTags:      c.ClientTags,
		DeadLetterTopic: c.DeadLetterQueueTopic, OnState: k.onThreadState, OnError: k.onThreadError,
		WindowChangelogAdditionalRetentionMs: runtime.WindowedChangelogAdditionalRetentionMs,
		OnApplicationShutdown:                k.onApplicationShutdown,
		Producer:                             c.producerConfig(),
		Fetch:                                c.fetchConfig(),
		Group:                                c.groupConfig(),
		StreamsProtocol:                      strings.EqualFold(string(c.GroupProtocol), string(GroupProtocolStreams)),
		Pebble:                               c.Pebble,
	}
	if d := c.TaskTimeout; d != nil {
		rcfg.TaskTimeout = *d
		if *d == 0 {
			rcfg.TaskTimeout = -1 // the runtime's "fail at the first failure"
		}
	}
	if d := c.WindowStoreChangelogAdditionalRetention; d != nil {
		rcfg.WindowChangelogAdditionalRetentionMs = d.Milliseconds()
	}
	k.mu.Lock()
	rcfg.RestoreListener = k.restoreL
	k.mu.Unlock()
	k.installHandlers(&tc, &rcfg)
	rcfg.Task = tc
	rt := runtime.New(rcfg)
	k.rt.Store(rt)
	return rt.Start(ctx)
}

// installHandlers wires the exception handlers (and the dead-letter topic) into the engine.
func (k *KafkaStreams) installHandlers(tc *task.Config, rc *runtime.Config) {
	c := k.cfg
	if c.DeserializationHandler != nil {
		h := c.DeserializationHandler
		tc.DeserializationHandler = func(rec task.RawRecord, err error) task.HandlerResponse {
			resp := h(rec.Topic, rec.Partition, rec.Offset, err)
			k.recordHandled("deserialization", fmt.Sprintf("%s-%d@%d", rec.Topic, rec.Partition, rec.Offset), resp, err)
			if resp == Continue {
				return task.Continue // the runtime dead-letters it (DeadLetterQueueTopic)
			}
			return task.Fail
		}
	}
	if c.ProcessingHandler != nil {
		h := c.ProcessingHandler
		tc.ProcessingHandler = func(node string, _ processor.Record[any, any], err error) task.HandlerResponse {
			resp := h(node, err)
			k.recordHandled("processing", node, resp, err)
			if resp == Continue {
				return task.Continue
			}
			return task.Fail
		}
	}
	if c.ProductionHandler != nil {
		h := c.ProductionHandler
		rc.Production = func(rec task.OutRecord, err error) task.HandlerResponse {
			resp := h(rec.Topic, err)
			k.recordHandled("production", rec.Topic, resp, err)
			if resp == Continue {
				return task.Continue
			}
			return task.Fail
		}
		tc.ProductionHandler = func(topic string, err error) task.HandlerResponse {
			resp := h(topic, err)
			k.recordHandled("production", topic, resp, err)
			if resp == Continue {
				return task.Continue
			}
			return task.Fail
		}
	}
}

// Close stops the instance: threads commit, close their tasks and leave the group, the state
// directory is released, the instance ends in NotRunning (or stays in Error) and Done is
// closed. Close returns nil when that is done, or ctx's error when ctx ends first: the threads
// then finish in the background and the instance still ends in NotRunning and closes Done
// when they have. Closing a closed instance waits for the first Close. Java: close(Duration),
// except that on the classic protocol Java's dynamic members stay in the group until their
// session times out (CloseOptions.GroupMembershipOperation.DEFAULT, KIP-1153), where Close's
// leave it at once, so that the group rebalances without waiting. Static members
// (ConsumerConfig.GroupInstanceID) keep their place until the session timeout, as Java's.
func (k *KafkaStreams) Close(ctx context.Context) error {
	k.setState(StatePendingShutdown)
	k.stop(StateNotRunning)
	select {
	case <-k.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run starts the instance, blocks until ctx ends or a fatal error stops it, closes it (with
// a 30 s deadline) and returns the fatal error, or nil after a clean stop.
func (k *KafkaStreams) Run(ctx context.Context) error {
	if err := k.startAs(ctx, "Run"); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-k.done:
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.Close(cctx); err != nil {
		return err
	}
	return k.Err()
}

// Done returns a channel closed when the instance has stopped, whatever stopped it (Close, a
// fatal error, a failed Start, Run's context): it is then in NotRunning or Error, its threads
// have finished and its state directory is released.
func (k *KafkaStreams) Done() <-chan struct{} { return k.done }
