package task

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"log/slog"
	"maps"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// UnknownTime is the stream time / partition time before any record: -1, Java's RecordQueue.UNKNOWN.
const UnknownTime int64 = -1

// OutRecord is a record the task produces: sink output or a changelog write.
type OutRecord struct {
	// Topic is the destination topic.
	Topic string
	// Partition is the destination partition, or -1 to let the producer's partitioner choose
	// (Java: a null partition in the ProducerRecord).
	Partition int32
	// Key and Value are the serialized key and value; nil is null.
	Key, Value []byte
	// Timestamp is the record timestamp in ms.
	Timestamp int64
	// Headers are the record headers.
	Headers serde.Headers
	// Changelog is true for changelog writes of a store.
	Changelog bool
	// Source is the input record whose processing produced this record, set only when
	// Config.DeadLetter is (the runtime dead-letters it when the producer fails to send this
	// record and the production handler continues); nil in punctuations and otherwise.
	Source *RawRecord
}

// Collector receives the records a task produces, in production order. The test driver
// captures them; the runtime hands them to a Kafka producer. Java counterpart: RecordCollector.
type Collector interface {
	// Send hands over one record; an error fails the processing of the current record.
	Send(rec OutRecord) error
	// PartitionsFor returns the number of partitions of topic (used with a StreamPartitioner).
	PartitionsFor(topic string) (int32, error)
}

// RawRecord is an input record as consumed: serialized key and value.
type RawRecord struct {
	// Topic, Partition and Offset locate the record.
	Topic     string
	Partition int32
	Offset    int64
	// Timestamp is the record's (CreateTime) timestamp in ms.
	Timestamp int64
	// Key and Value are the serialized key and value; nil is null.
	Key, Value []byte
	// Headers are the record headers.
	Headers serde.Headers
	// Queue names the partition queue the record is buffered in when it is not Topic: Java's
	// TopologyTestDriver buffers the records of every topic a pattern source reads in one queue
	// named after the pattern (see Task.AddInputPartition). Empty for the runtime.
	Queue string
}

// queueTopic returns the topic part of the record's queue key.
func (r RawRecord) queueTopic() string {
	if r.Queue != "" {
		return r.Queue
	}
	return r.Topic
}

// Config configures a Task.
type Config struct {
	// ApplicationID is the application.id; it names changelog topics.
	ApplicationID string
	// AppConfigs are the application's properties by Java name (handed to processors).
	AppConfigs map[string]string
	// DefaultKeySerde and DefaultValueSerde are default.key.serde / default.value.serde;
	// nil when not configured.
	DefaultKeySerde, DefaultValueSerde serde.Serde[any]
	// DefaultTimestampExtractor is default.timestamp.extractor; nil means
	// processor.FailOnInvalidTimestamp (Java's default).
	DefaultTimestampExtractor processor.TimestampExtractor
	// StateDir is the task's state directory ("" when there is none).
	StateDir string
	// Clock returns the wall-clock time in ms; nil means time.Now.
	Clock func() int64
	// Collector receives the produced records. Required.
	Collector Collector
	// Logger receives warnings (dropped records); nil means slog.Default().
	Logger *slog.Logger
	// DeserializationHandler decides whether a record whose key or value fails to deserialize
	// is skipped (Continue: dropped and counted) or fails the task (Fail). nil means Fail, Java's
	// default LogAndFailExceptionHandler. Java: deserialization.exception.handler.
	DeserializationHandler func(rec RawRecord, err error) HandlerResponse
	// DeadLetter, when set, builds the dead-letter record of a record DeserializationHandler
	// skipped, and of the input record being processed when ProcessingHandler or
	// ProductionHandler continue (a zero RawRecord with offset and partition -1 in a
	// punctuation); the task sends it through Collector before going on (under exactly-once
	// inside the transaction). nil sends none. Java: errors.dead.letter.queue.topic.name
	// (KIP-1034).
	DeadLetter func(rec RawRecord, err error) OutRecord
	// ProductionHandler decides about an output record a sink cannot serialize: Continue drops
	// it (counted as dropped, dead-lettered when DeadLetter is set), Fail (and nil) fails the
	// task. Java: ProductionExceptionHandler.handleSerializationError (KIP-399).
	ProductionHandler func(topic string, err error) HandlerResponse
	// ProcessingHandler decides, for an error returned (or a panic raised) by a processor or a
	// punctuator, whether to drop the record at that node and go on (Continue) or fail (Fail).
	// node is the failing node; rec is the record it was processing (zero in a punctuation).
	// nil means Fail, Java's default LogAndFailProcessingExceptionHandler.
	// Java: processing.exception.handler (KIP-1033).
	ProcessingHandler func(node string, rec processor.Record[any, any], err error) HandlerResponse
	// MaxTaskIdleMs is max.task.idle.ms, used by IsProcessable: how long (ms of wall-clock time)
	// a task with an empty input partition whose lag is known to be 0 waits for data before it
	// processes the other partitions; 0 (Java's default) does not wait, -1 never waits (not even
	// for partitions with unknown or positive lag).
	MaxTaskIdleMs int64
	// GlobalStore looks up a global store by name (nil when the topology has none); global
	// stores are readable from every processor without being connected (Java:
	// ProcessorContextImpl.getStateStore checks global stores first).
	GlobalStore func(name string) processor.StateStore
	// Cache is the record cache of the stream thread (the test driver's instance), shared by
	// the caching store layers of its tasks; nil means caching is off (Java strips the caching
	// layers when statestore.cache.max.bytes is 0), so those layers pass writes straight through.
	Cache *cache.ThreadCache
	// Metrics is the instance's metrics registry; the store layers of the task time their
	// calls into it at DEBUG. nil records nothing.
	Metrics *metrics.Registry
	// AsyncNotify, when set, is called (from a call's goroutine) whenever a call of an async
	// step completes: the runtime wakes the goroutine that processes the task, since the
	// completion is work (HasAsyncCompletions) even without input.
	AsyncNotify func()
	// PebbleEnv is the application instance's shared Pebble environment (block cache and
	// memtable budget), handed to Pebble stores through their StateStoreContext
	// (a PebbleEnv method, which package store looks for); nil means the stores use its
	// process-wide default environment.
	PebbleEnv storeapi.PebbleEnv
}

// HandlerResponse is the answer of an exception handler.
// Java: DeserializationHandlerResponse / ProcessingHandlerResponse.
type HandlerResponse int

const (
	// Fail stops processing with the error (Java: FAIL).
	Fail HandlerResponse = iota
	// Continue drops the record and goes on (Java: CONTINUE).
	Continue
)

// PanicError is a panic raised by user code (a processor, punctuator, serde, extractor, ...)
// and recovered by the engine, which reports it as an error instead.
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the goroutine stack at the point of the panic.
	Stack []byte
}

// Error implements error.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value if it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// Errors of the engine.
var (
	// ErrClosed is returned by operations on a closed task.
	ErrClosed = errors.New("task: task is closed")
	// ErrNoCurrentNode is returned when a context method that needs a running node is called
	// outside Init, Process or a punctuator.
	ErrNoCurrentNode = errors.New("task: no current node")
	// ErrUnknownTopic is returned by AddRecord for a topic no source node reads.
	ErrUnknownTopic = errors.New("task: unknown source topic")
	// ErrNoSerde is returned when a source or sink has no serde and no default is configured.
	ErrNoSerde = errors.New("task: no serde configured and no default serde")
	// ErrInvalidSpec is returned by New for an inconsistent Spec.
	ErrInvalidSpec = errors.New("task: invalid task spec")
)

// ProcessingError is a failure while processing a record or running a punctuator, with where it
// happened. Java counterpart: the StreamsException "Exception caught in process. taskId=...,
// processor=..., topic=..., partition=..., offset=..." (or "... while punctuating processor ...").
type ProcessingError struct {
	// Task is the task id.
	Task processor.TaskID
	// Node is the node that failed.
	Node string
	// Topic, Partition and Offset locate the input record (empty/-1 in a punctuation).
	Topic     string
	Partition int32
	Offset    int64
	// Punctuation is true when the failure happened in a punctuator.
	Punctuation bool
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *ProcessingError) Error() string {
	if e.Punctuation {
		return fmt.Sprintf("task %s: exception caught while punctuating processor %q: %v", e.Task, e.Node, e.Err)
	}
	return fmt.Sprintf("exception caught in process. taskId=%s, processor=%s, topic=%s, partition=%d, offset=%d: %v",
		e.Task, e.Node, e.Topic, e.Partition, e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *ProcessingError) Unwrap() error { return e.Err }

// recordContext is the metadata of the record being processed (Java: ProcessorRecordContext).
type recordContext struct {
	timestamp int64
	offset    int64
	partition int32
	topic     string
	headers   serde.Headers
	// hasMetadata is false in punctuations (no topic).
	hasMetadata bool
	// raw is the input record being processed, as fetched (nil in punctuations and cache
	// flushes); the dead-letter record of a failure carries its bytes (Java:
	// ErrorHandlerContext.sourceRawKey/sourceRawValue, KIP-1034).
	raw *RawRecord
}

// Task runs one task: nodes, stores, record queues, stream time and punctuation schedules.
// A Task is not safe for concurrent use.
type Task struct {
	id     processor.TaskID
	cfg    Config
	log    *slog.Logger
	nodes  []*node
	byName map[string]*node
	// sources by topic
	sources map[string]*node
	// intern is the table of recently decoded short strings of the String-serialized sources
	// (see node.decodeString); nil until first used.
	intern *internTable

	storeSpecs []StoreSpec
	stores     map[string]processor.StateStore
	storeOrder []processor.StateStore
	changelogs map[string]string
	noLogging  map[string]bool
	restorers  map[string]processor.StateRestoreCallback

	group partitionGroup

	streamPunct punctuationQueue
	wallPunct   punctuationQueue

	rc           recordContext
	current      *node
	systemTimeMs int64

	commitRequested bool
	commitNeeded    bool
	// consumedOffsets are the offsets of the last processed record per input partition;
	// lastConsumed is the entry of the partition processed last, so that a run of records
	// from one partition updates it without hashing the topic name every time.
	consumedOffsets map[topicPartition]*int64
	lastConsumed    struct {
		tp  topicPartition
		off *int64
	}

	initialized bool
	closed      bool

	// deadLetters counts the dead-letter records sent (see DeadLetters); processed the
	// records processed (see Processed).
	deadLetters, processed int64

	// async runs the task's async steps (async.go).
	async asyncState
}

type topicPartition struct {
	topic     string
	partition int32
}

// New builds a task from spec: it creates the nodes (processors are instantiated by Init).
func New(id processor.TaskID, spec Spec, cfg Config) (*Task, error) {
	if cfg.Collector == nil {
		return nil, fmt.Errorf("%w: no collector", ErrInvalidSpec)
	}
	if cfg.Clock == nil {
		cfg.Clock = func() int64 { return time.Now().UnixMilli() }
	}
	if cfg.DefaultTimestampExtractor == nil {
		cfg.DefaultTimestampExtractor = processor.FailOnInvalidTimestamp{}
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	t := &Task{
		id: id, cfg: cfg, log: lg,
		byName:          map[string]*node{},
		sources:         map[string]*node{},
		stores:          map[string]processor.StateStore{},
		changelogs:      map[string]string{},
		noLogging:       map[string]bool{},
		storeSpecs:      spec.Stores,
		consumedOffsets: map[topicPartition]*int64{},
		rc:              recordContext{timestamp: UnknownTime, offset: -1, partition: -1},
	}
	t.group.init(t)
	for i := range spec.Nodes {
		ns := spec.Nodes[i]
		if _, dup := t.byName[ns.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate node %q", ErrInvalidSpec, ns.Name)
		}
		n := &node{spec: ns, task: t, childByName: map[string]*node{}}
		n.ctx = &nodeContext{n: n}
		t.nodes = append(t.nodes, n)
		t.byName[ns.Name] = n
		if ns.Kind == SourceNode {
			for _, topic := range ns.Topics {
				if _, dup := t.sources[topic]; dup {
					return nil, fmt.Errorf("%w: topic %q read by two source nodes", ErrInvalidSpec, topic)
				}
				t.sources[topic] = n
			}
		}
		if ns.Kind == ProcessorNode && ns.NewProcessor == nil {
			return nil, fmt.Errorf("%w: processor node %q has no processor factory", ErrInvalidSpec, ns.Name)
		}
	}
	for _, n := range t.nodes {
		for _, c := range n.spec.Children {
			child, ok := t.byName[c]
			if !ok {
				return nil, fmt.Errorf("%w: node %q has unknown child %q", ErrInvalidSpec, n.spec.Name, c)
			}
			n.children = append(n.children, child)
			n.childByName[c] = child
		}
	}
	for _, ss := range spec.Stores {
		if ss.Builder == nil {
			return nil, fmt.Errorf("%w: store without builder", ErrInvalidSpec)
		}
		if ss.ChangelogIsSource {
			t.noLogging[ss.Builder.Name()] = true
			if ss.ChangelogTopic != "" {
				t.changelogs[ss.Builder.Name()] = ss.ChangelogTopic
			}
			continue
		}
		if ss.Builder.LoggingEnabled() {
			topic := ss.ChangelogTopic
			if topic == "" {
				topic = cfg.ApplicationID + "-" + ss.Builder.Name() + "-changelog"
			}
			t.changelogs[ss.Builder.Name()] = topic
		}
	}
	return t, nil
}

// ID returns the task id.
func (t *Task) ID() processor.TaskID { return t.id }

// Init builds and initialises the stores (in Spec order), then creates and initialises the
// processors (in Spec node order), as Java's StreamTask.initializeIfNeeded/completeRestoration.
func (t *Task) Init() error {
	if t.closed {
		return ErrClosed
	}
	if t.initialized {
		return nil
	}
	if err := t.init(); err != nil {
		// Release what was opened (stores may hold files): the task is closed dirty, as Java's
		// task manager closes a task whose initialisation failed.
		return errors.Join(err, t.closeDirty())
	}
	t.initialized = true
	t.rc = recordContext{timestamp: UnknownTime, offset: -1, partition: -1}
	return nil
}

func (t *Task) init() error {
	sctx := &storeContext{t: t}
	for _, ss := range t.storeSpecs {
		st, err := ss.Builder.Build()
		if err != nil {
			return fmt.Errorf("task %s: build store %q: %w", t.id, ss.Builder.Name(), err)
		}
		sctx.building = st
		if err := st.Init(sctx, st); err != nil {
			if st.IsOpen() {
				_ = st.Close()
			}
			return fmt.Errorf("task %s: init store %q: %w", t.id, ss.Builder.Name(), err)
		}
		if _, ok := t.stores[st.Name()]; !ok {
			t.stores[st.Name()] = st
			t.storeOrder = append(t.storeOrder, st)
		}
	}
	t.systemTimeMs = t.cfg.Clock()
	for _, n := range t.nodes {
		if err := n.init(); err != nil {
			return err
		}
	}
	return nil
}

// closeDirty closes the processors initialised so far and the open stores, without flushing,
// and marks the task closed.
func (t *Task) closeDirty() error {
	var errs []error
	for _, n := range t.nodes {
		if n.proc != nil && n.initDone {
			if err := callGuarded(n.proc.Close); err != nil {
				errs = append(errs, fmt.Errorf("task %s: close processor %q: %w", t.id, n.spec.Name, err))
			}
		}
	}
	for _, s := range t.storeOrder {
		if s.IsOpen() {
			if err := s.Close(); err != nil {
				errs = append(errs, fmt.Errorf("task %s: close store %q: %w", t.id, s.Name(), err))
			}
		}
	}
	t.stopAsync()
	t.streamPunct.clear()
	t.wallPunct.clear()
	t.closed = true
	return errors.Join(errs...)
}

// Store returns the store named name, or nil.
func (t *Task) Store(name string) processor.StateStore { return t.stores[name] }

// StoreNames returns the names of the task's stores in initialisation order.
func (t *Task) StoreNames() []string {
	out := make([]string, 0, len(t.storeOrder))
	for _, s := range t.storeOrder {
		out = append(out, s.Name())
	}
	return out
}

// ChangelogTopics returns the changelog topic of every logged store, by store name.
func (t *Task) ChangelogTopics() map[string]string { return maps.Clone(t.changelogs) }

// Restore writes a batch of changelog records into store name through the restore callback
// the store registered. Errors: unknown store, or the callback's error.
func (t *Task) Restore(name string, batch []processor.RestoreRecord) error {
	r, ok := t.restorers[name]
	if !ok || r == nil {
		return fmt.Errorf("task %s: restore %q: %w", t.id, name, processor.ErrUnknownStore)
	}
	return r(batch)
}

// DroppedRecords returns the number of records dropped: input records with a negative
// extracted timestamp or skipped by the deserialization handler, and records dropped at a node
// by the processing handler (Java's dropped-records metric).
func (t *Task) DroppedRecords() int64 { return t.group.dropped }

// SourceTopics returns the topics the task's source nodes read.
func (t *Task) SourceTopics() []string {
	out := make([]string, 0, len(t.sources))
	for _, n := range t.nodes {
		if n.spec.Kind == SourceNode {
			out = append(out, n.spec.Topics...)
		}
	}
	return out
}

// HasSource reports whether a source node of the task reads topic (by name or pattern).
func (t *Task) HasSource(topic string) bool { return t.sourceFor(topic) != nil }

// sourceFor returns the source node reading topic, matching patterns (full match) when no
// source names the topic; matches are cached.
func (t *Task) sourceFor(topic string) *node {
	if n, ok := t.sources[topic]; ok {
		return n
	}
	for _, n := range t.nodes {
		if n.spec.Kind == SourceNode && n.spec.Pattern != nil {
			if fullMatch(n.spec.Pattern.String(), topic) {
				t.sources[topic] = n
				return n
			}
		}
	}
	return nil
}

func fullMatch(pattern, s string) bool {
	re, err := regexp.Compile(`^(?:` + pattern + `)$`)
	return err == nil && re.MatchString(s)
}

// StreamTime returns the task's stream time in ms (UnknownTime before any record).
func (t *Task) StreamTime() int64 { return t.group.streamTime }

// AddRecord buffers an input record in its partition's queue. The head record of a queue is
// deserialized and its timestamp extracted when it reaches the head (records with a negative
// extracted timestamp are dropped, as Java's RecordQueue does); errors of the deserializers
// and the extractor are returned.
func (t *Task) AddRecord(rec RawRecord) error {
	if t.closed {
		return ErrClosed
	}
	src := t.sourceFor(rec.Topic)
	if src == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTopic, rec.Topic)
	}
	return t.group.add(src, rec)
}

// AddRecords buffers n records of one partition of topic, as AddRecord does for each: fill
// writes the i-th record (Topic and Partition included) into rec, a slot of the partition's
// queue. Meant for the runtime, which moves a whole fetched chunk at once. Errors: ErrClosed,
// ErrUnknownTopic, and the deserialization error of a new head record (it surfaces again when
// the record is processed).
func (t *Task) AddRecords(topic string, partition int32, n int, fill func(i int, rec *RawRecord)) error {
	if t.closed {
		return ErrClosed
	}
	src := t.sourceFor(topic)
	if src == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTopic, topic)
	}
	if n == 0 {
		return nil
	}
	return t.group.addBatch(src, topicPartition{topic, partition}, n, fill)
}

// HasRecordsQueued reports whether any record is buffered.
func (t *Task) HasRecordsQueued() bool { return t.group.buffered() > 0 }

// Process processes the next buffered record, the one with the smallest timestamp among the
// partition heads, through its source node; wallClockMs is the cached system time processors
// see. It returns false when nothing was buffered.
func (t *Task) Process(wallClockMs int64) (bool, error) {
	if t.closed {
		return false, ErrClosed
	}
	var applied int
	if len(t.async.steps) > 0 {
		// Completed async calls are applied first; a full async step takes no input.
		var err error
		if applied, err = t.ApplyAsync(); err != nil {
			return true, err
		}
		if t.AsyncIntakePaused() {
			return applied > 0, nil
		}
	}
	rec, src, headErr := t.group.next()
	if rec == nil && applied > 0 {
		return true, headErr
	}
	if rec == nil {
		return false, headErr
	}
	t.systemTimeMs = wallClockMs
	t.rc = recordContext{
		timestamp: rec.timestamp, offset: rec.raw.Offset, partition: rec.raw.Partition,
		topic: rec.raw.Topic, headers: rec.raw.Headers, hasMetadata: true,
	}
	if t.cfg.DeadLetter != nil {
		raw := rec.raw
		t.rc.raw = &raw
	}
	r := processor.Record[any, any]{Key: rec.key, Value: rec.value, Timestamp: rec.timestamp, Headers: rec.raw.Headers}
	err := src.process(r)
	t.current = nil
	t.consumed(rec.raw.Topic, rec.raw.Partition, rec.raw.Offset)
	t.commitNeeded = true
	t.processed++
	return true, errors.Join(err, headErr)
}

// PublishSensors makes the end-to-end latencies the task's nodes recorded since the last call
// visible to the metrics registry's readers (metrics.Node.Publish). The task's operations that
// process records call it when they return, except Process, whose caller calls it after a run
// of records (the stream thread's executor after its share of a pass; the test driver's other
// calls do); between two calls a node publishes every few dozen records of its own.
func (t *Task) PublishSensors() {
	for _, n := range t.nodes {
		n.sensors.Publish()
	}
}

// consumed records offset as the last processed one of topic and partition.
func (t *Task) consumed(topic string, partition int32, offset int64) {
	l := &t.lastConsumed
	if l.off == nil || l.tp.partition != partition || l.tp.topic != topic {
		tp := topicPartition{topic, partition}
		off := t.consumedOffsets[tp]
		if off == nil {
			off = new(int64)
			t.consumedOffsets[tp] = off
		}
		l.tp, l.off = tp, off
	}
	*l.off = offset
}

// MaybePunctuateStreamTime runs the stream-time punctuators that are due at the current stream
// time (none while stream time is unknown); each due schedule fires once, with the stream time
// as timestamp, and is moved past it. Java: StreamTask.maybePunctuateStreamTime.
func (t *Task) MaybePunctuateStreamTime() (bool, error) {
	defer t.PublishSensors()
	if t.closed {
		return false, ErrClosed
	}
	st := t.group.streamTime
	if st == UnknownTime {
		return false, nil
	}
	return t.streamPunct.maybePunctuate(st, processor.StreamTime, t.punctuate)
}

// MaybePunctuateSystemTime runs the wall-clock punctuators due at wallClockMs, each once, with
// wallClockMs as timestamp. Java: StreamTask.maybePunctuateSystemTime.
func (t *Task) MaybePunctuateSystemTime(wallClockMs int64) (bool, error) {
	defer t.PublishSensors()
	if t.closed {
		return false, ErrClosed
	}
	t.systemTimeMs = wallClockMs
	return t.wallPunct.maybePunctuate(wallClockMs, processor.WallClockTime, t.punctuate)
}

func (t *Task) punctuate(n *node, ts int64, typ processor.PunctuationType, p processor.Punctuator) error {
	t.rc = recordContext{timestamp: ts, offset: -1, partition: -1}
	t.current = n
	defer func() { t.current = nil }()
	t.systemTimeMs = t.cfg.Clock()
	err := callGuarded(func() error { return p(ts) })
	if err == nil {
		return nil
	}
	var pe *ProcessingError
	if errors.As(err, &pe) {
		return err
	}
	if t.cfg.ProcessingHandler != nil && t.cfg.ProcessingHandler(n.spec.Name, processor.Record[any, any]{}, err) == Continue {
		t.log.Warn("punctuation error; the processing handler continues", "task", t.id.String(), "node", n.spec.Name, "err", err)
		t.group.dropped++
		return t.deadLetter(n.spec.Name, err)
	}
	return &ProcessingError{Task: t.id, Node: n.spec.Name, Partition: -1, Offset: -1, Punctuation: true, Err: err}
}

// callGuarded calls f and turns a panic into a *PanicError.
func callGuarded(f func() error) (err error) {
	defer recoverPanic(&err)
	return f()
}

// recoverPanic, deferred, turns a panic of the deferring function into a *PanicError in *err.
func recoverPanic(err *error) {
	if r := recover(); r != nil {
		*err = &PanicError{Value: r, Stack: debug.Stack()}
	}
}

// CommitNeeded reports whether records were processed or a commit was requested since the last
// Commit.
func (t *Task) CommitNeeded() bool { return t.commitNeeded || t.commitRequested }

// CommitRequested reports whether a processor called Commit since the last Commit.
func (t *Task) CommitRequested() bool { return t.commitRequested }

// ConsumedOffsets returns, per topic and partition, the offset of the last processed record
// (the offset to commit minus one), as topic -> partition -> offset. See CommittableOffsets.
func (t *Task) ConsumedOffsets() map[string]map[int32]int64 {
	out := map[string]map[int32]int64{}
	for tp, off := range t.consumedOffsets {
		if out[tp.topic] == nil {
			out[tp.topic] = map[int32]int64{}
		}
		out[tp.topic][tp.partition] = *off
	}
	return out
}

// Commit flushes the record caches of the stores, then the stores, each pass in initialisation
// order, and clears the commit flags: a commit with an enforced checkpoint, as Java's
// TopologyTestDriver does after every record (prepareCommit, then postCommit(true)). Cache
// flushes forward records (the flush listeners of the DSL), which may fill the cache of a store
// flushed earlier in the first pass: the second pass flushes those too. Java 4.4:
// StreamTask.prepareCommit flushes every store's cache (ProcessorStateManager.flushCache), then
// postCommit(true) flushes every store (ProcessorStateManager.flush; a caching store flushes its
// cache again, then the store below) before writing the checkpoint.
func (t *Task) Commit() error {
	if err := t.flushCaches(); err != nil {
		return err
	}
	if err := t.FlushStores(); err != nil {
		return err
	}
	t.commitNeeded = false
	t.commitRequested = false
	return nil
}

// CommitCaches flushes the record caches of the stores in initialisation order and clears the
// commit flags, without flushing the stores themselves: the regular commit of the runtime,
// which flushes the stores only before it writes a checkpoint (see FlushStores). Java 4.4:
// StreamTask.prepareCommit (ProcessorStateManager.flushCache), with postCommit(false) skipping
// the store flush while the changelog offsets advanced by at most 10 000 since the last
// checkpoint. A flush listener writing into a store flushed earlier in the pass leaves that
// cache dirty until the next commit, as in Java; CommitFinal flushes until none is dirty.
func (t *Task) CommitCaches() error {
	if err := t.flushCaches(); err != nil {
		return err
	}
	t.commitNeeded = false
	t.commitRequested = false
	return nil
}

// maxCachePasses bounds the cache flush passes of CommitFinal: acyclic flush chains (a store's
// flush listener writing into a store earlier in initialisation order) need at most one pass
// per store, so hitting the bound means flush listeners keep feeding each other.
const maxCachePasses = 64

// CommitFinal flushes the record caches of the stores in initialisation order, again and again
// while a pass left a cache of the task dirty (a later store's flush listener wrote into an
// earlier store, in this or an earlier commit), and clears the commit flags: the commit before
// the task is suspended or closed, after which closing forwards nothing more. Java: a clean
// suspend or close runs prepareCommit (one cache pass) and postCommit(true), whose store flush
// flushes the caches again before the checkpoint; the runtime sends what those passes forward
// before it writes the checkpoint. Caches still dirty after 64 passes (flush listeners feeding
// each other) are logged as a warning and left to the store flush of the close.
func (t *Task) CommitFinal() error {
	for pass := 1; ; pass++ {
		if err := t.flushCaches(); err != nil {
			return err
		}
		dirty := t.dirtyCaches()
		if len(dirty) == 0 {
			break
		}
		if pass >= maxCachePasses {
			t.log.Warn("record caches still dirty after the final commit's flush passes (flush listeners feeding each other)",
				"task", t.id.String(), "stores", dirty, "passes", pass)
			break
		}
	}
	t.commitNeeded = false
	t.commitRequested = false
	return nil
}

func (t *Task) flushCaches() error {
	defer t.PublishSensors()
	if t.closed {
		return ErrClosed
	}
	for _, s := range t.storeOrder {
		if c, ok := s.(interface{ FlushCache() error }); ok {
			if err := c.FlushCache(); err != nil {
				return fmt.Errorf("task %s: flush cache of store %q: %w", t.id, s.Name(), err)
			}
		}
	}
	return nil
}

// dirtyCaches returns the names of the task's stores whose record cache holds dirty entries.
func (t *Task) dirtyCaches() []string {
	c := t.cfg.Cache
	if c == nil {
		return nil
	}
	var out []string
	id := t.id.String()
	for _, s := range t.storeOrder {
		if c.DirtyLen(cache.NameSpace(id, s.Name())) > 0 {
			out = append(out, s.Name())
		}
	}
	return out
}

// FlushStores flushes every store in initialisation order: caching layers flush their caches
// again (records forwarded by a later store's cache flush may have filled an earlier one), then
// the engines make what they hold durable (a Pebble store flushes its memtables). Call it
// before writing a checkpoint. Java: ProcessorStateManager.flush.
func (t *Task) FlushStores() error {
	defer t.PublishSensors() // a caching store's flush forwards records
	if t.closed {
		return ErrClosed
	}
	for _, s := range t.storeOrder {
		if err := s.Flush(); err != nil {
			return fmt.Errorf("task %s: flush store %q: %w", t.id, s.Name(), err)
		}
	}
	return nil
}

// Close closes the processors (in node order), then flushes and closes the stores, as Java's
// clean close. All errors are returned joined; the task is closed afterwards in any case.
func (t *Task) Close() error {
	defer t.PublishSensors()
	if t.closed {
		return nil
	}
	var errs []error
	if n := t.stopAsync(); n > 0 {
		// The runtime drains before a clean close; records still held were never committed.
		t.log.Warn("closing the task with async records not applied: their calls are cancelled and their results dropped",
			"task", t.id.String(), "records", n)
	}
	if t.initialized {
		for _, n := range t.nodes {
			if n.proc != nil {
				t.current = n
				if err := callGuarded(n.proc.Close); err != nil {
					errs = append(errs, fmt.Errorf("task %s: close processor %q: %w", t.id, n.spec.Name, err))
				}
			}
		}
	}
	t.current = nil
	for _, s := range t.storeOrder {
		if err := s.Flush(); err != nil {
			errs = append(errs, fmt.Errorf("task %s: flush store %q: %w", t.id, s.Name(), err))
		}
		if err := s.Close(); err != nil {
			errs = append(errs, fmt.Errorf("task %s: close store %q: %w", t.id, s.Name(), err))
		}
	}
	t.streamPunct.clear()
	t.wallPunct.clear()
	t.closed = true
	return errors.Join(errs...)
}

// AppConfigs returns a copy of the configured properties.
func (t *Task) appConfigs() map[string]string { return maps.Clone(t.cfg.AppConfigs) }

// ClearQueues drops every buffered, unprocessed record (the runtime refetches them from the
// committed offsets after a rebalance); stream time and partition times are kept, as Java's
// PartitionGroup.clear on suspension.
func (t *Task) ClearQueues() { t.group.clear() }

// QueueSize returns the number of records buffered for topic and partition (Java:
// PartitionGroup.numBuffered(TopicPartition)); the runtime pauses fetching a partition whose
// queue is full (buffered.records.per.partition).
func (t *Task) QueueSize(topic string, partition int32) int {
	return t.group.queueSize(topicPartition{topic, partition})
}
