package testdriver

import (
	"context"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/javaclass"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/internal/task"
	"github.com/kstreams-go/kstreams/internal/topology"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// Errors of the driver, matched with errors.Is; the error wrapping one names the topic or
// value concerned. A Java class name in the properties that has no Go counterpart is
// serde.ErrUnknownClass, as for kstreams.ConfigFromProperties.
var (
	// ErrUnknownTopic is returned when piping to a topic no source (or global store) reads.
	// Java: IllegalArgumentException "Unknown topic: ...".
	ErrUnknownTopic = errors.New("testdriver: unknown topic")
	// ErrEmptyTopic is returned when reading an output topic that has no record left to read:
	// all its records were read, or nothing was ever produced to it (the message says
	// "uninitialized"). Java: NoSuchElementException "Empty topic: ..." and "Uninitialized
	// topic: ...".
	ErrEmptyTopic = errors.New("testdriver: empty topic")
	// ErrClosed is returned by operations on a closed driver.
	ErrClosed = errors.New("testdriver: driver is closed")
	// ErrNullKey is returned by ReadKeyValuesToMap for a record with a nil key.
	// Java: IllegalStateException "Null keys not allowed with readKeyValuesToMap method".
	ErrNullKey = errors.New("testdriver: null keys not allowed with ReadKeyValuesToMap")
	// ErrInvalidArgument is returned for an argument the driver cannot use: a property value
	// Java's StreamsConfig rejects (New; Java: ConfigException "Invalid value ... for
	// configuration ..."), a nil serializer or deserializer of a test topic (by its pipe and
	// read methods; Java: NullPointerException), a negative duration (Java:
	// IllegalArgumentException).
	ErrInvalidArgument = errors.New("testdriver: invalid argument")
)

// TopologyTestDriver runs a topology without a broker, synchronously, as Java's
// org.apache.kafka.streams.TopologyTestDriver (test-utils) does:
//
//   - All sub-topologies run in one task, id 0_0, reading partition 0 of every source topic
//     (so stream time is shared by the whole topology, as in Java's driver); global stores are
//     updated by a separate global task.
//   - Each piped record is processed at once: the record, then the stream-time punctuators it
//     made due, then a commit (stores flushed), for every record queued, until none is left.
//   - Every produced record (sink output and changelog writes) is captured per topic; records
//     written to a topic the topology reads (repartition topics, or a source topic) are piped
//     back in, and those written to a global store's topic update the global store.
//   - Wall-clock time is mocked: it starts at the initial value and moves only with
//     AdvanceWallClockTime, which fires due wall-clock punctuators.
//
// Errors from processing are returned by the call that triggered the processing (PipeInput,
// AdvanceWallClockTime, ...), never panics. As in Java, what the failing record produced before
// the error is captured by the next call (it is not readable right after the error), and the
// driver goes on with the next input. A driver is not safe for concurrent use.
type TopologyTestDriver struct {
	appID     string
	wallClock int64
	task      *task.Task
	global    *task.Task
	offsets   map[string]int64
	// patterns are the pattern sources: topics they match share one offset sequence, keyed by
	// the pattern text, as in Java's driver (which subscribes the pattern as a placeholder
	// partition "<pattern>-0").
	patterns []*topology.Node
	pending  []task.OutRecord
	outputs  map[string][]task.OutRecord
	closed   bool
	// graph is the topology (for the DSL stores' key and value types).
	graph *topology.Builder
}

type collector struct{ d *TopologyTestDriver }

func (c collector) Send(r task.OutRecord) error { c.d.pending = append(c.d.pending, r); return nil }

// PartitionsFor reports one partition per topic (Java's driver mocks every topic with partition 0 only).
func (c collector) PartitionsFor(string) (int32, error) { return 1, nil }

// New creates a driver for topology with the given Java properties and the initial mocked
// wall-clock time in ms (Java's default constructor uses the real time; pass
// time.Now().UnixMilli() for that). The driver reads these properties; every property is also
// handed to processors as their AppConfigs:
//   - application.id: prefixes changelog and repartition topics; default (as Java's driver)
//     "dummy-topology-test-driver-app-id-<random int>".
//   - default.key.serde, default.value.serde: Java serde class names:
//     org.apache.kafka.common.serialization.Serdes$XSerde for X in String, Long, Integer, Short,
//     Double, Float, Boolean, ByteArray, Bytes, UUID and Void.
//   - default.timestamp.extractor: a Java extractor class name,
//     org.apache.kafka.streams.processor.X for X in FailOnInvalidTimestamp,
//     LogAndSkipOnInvalidTimestamp, UsePartitionTimeOnInvalidTimestamp and
//     WallclockTimestampExtractor;
//     default FailOnInvalidTimestamp.
//   - deserialization.exception.handler: org.apache.kafka.streams.errors.LogAndFailExceptionHandler
//     (default) or LogAndContinueExceptionHandler (skip records that fail to deserialize).
//   - processing.exception.handler: ...LogAndFailProcessingExceptionHandler (default) or
//     ...LogAndContinueProcessingExceptionHandler (drop the record at the failing node).
//   - max.task.idle.ms: how long (ms of the mocked wall-clock time) a task with an input topic
//     without buffered records waits before processing the others; default 0 (no waiting), -1
//     disables even that check. Records wait until records arrive on every input or
//     AdvanceWallClockTime passes the deadline, as in Java's driver.
//   - statestore.cache.max.bytes: the size in bytes of the record cache in front of the stores
//     built with caching enabled (the DSL's, unless Materialized disables it); default 10485760
//     (10 MiB), >= 0; 0 switches caching off (one output per input).
//   - cache.max.bytes.buffering: its deprecated name; as in Java 4.4's driver it only decides
//     whether caching is on (0 switches it off when statestore.cache.max.bytes is not set).
//
// Stores are built and initialised and processors' Init called (punctuators scheduled) before
// New returns. Errors: serde.ErrUnknownClass, ErrInvalidArgument (a property value), a missing serde for a source or sink (no default),
// store and processor Init errors. Java: new TopologyTestDriver(topology, props, initialWallClockTime).
func New(topo *processor.Topology, props map[string]string, initialWallClockMs int64, opts ...Option) (*TopologyTestDriver, error) {
	if topo == nil {
		return nil, errors.New("testdriver: nil topology")
	}
	return newDriver(topology.Of(topo), props, initialWallClockMs, opts...)
}

// newDriver builds the driver from the untyped graph.
func newDriver(b *topology.Builder, props map[string]string, initialWallClockMs int64, opts ...Option) (*TopologyTestDriver, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	props = maps.Clone(props)
	if props == nil {
		props = map[string]string{}
	}
	appID := props[propnames.ApplicationIDConfig]
	if appID == "" {
		appID = "dummy-topology-test-driver-app-id-" + strconv.Itoa(int(rand.Int32()))
		props[propnames.ApplicationIDConfig] = appID
	}
	if _, ok := props["bootstrap.servers"]; !ok {
		props["bootstrap.servers"] = "dummy-bootstrap-host:0"
	}
	// Java's TopologyTestDriver sets both internal emit-throttle intervals to 0 unless given, so
	// left/outer stream-stream joins and windowed aggregations emit on every record, not once per
	// wall-clock second.
	for _, k := range []string{"__emit.interval.ms.kstreams.outer.join.spurious.results.fix__", "__emit.interval.ms.kstreams.windowed.aggregation__"} {
		if _, ok := props[k]; !ok {
			props[k] = "0"
		}
	}
	var err error
	if o.keySerde == nil && props[propnames.DefaultKeySerdeConfig] != "" {
		if o.keySerde, err = javaclass.Serde(props[propnames.DefaultKeySerdeConfig]); err != nil {
			return nil, err
		}
	}
	if o.valueSerde == nil && props[propnames.DefaultValueSerdeConfig] != "" {
		if o.valueSerde, err = javaclass.Serde(props[propnames.DefaultValueSerdeConfig]); err != nil {
			return nil, err
		}
	}
	if o.extractor == nil && props[propnames.DefaultTimestampExtractorConfig] != "" {
		if o.extractor, err = javaclass.TimestampExtractor(props[propnames.DefaultTimestampExtractorConfig]); err != nil {
			return nil, err
		}
	}
	d := &TopologyTestDriver{graph: b, appID: appID, wallClock: initialWallClockMs, offsets: map[string]int64{},
		outputs: map[string][]task.OutRecord{}}
	deserHandler, procHandler, err := exceptionHandlers(props)
	if err != nil {
		return nil, err
	}
	for _, n := range b.Nodes() {
		if n.Kind == topology.SourceNode && n.Pattern != nil {
			d.patterns = append(d.patterns, n)
		}
	}
	recordCache, err := newRecordCache(props)
	if err != nil {
		return nil, err
	}
	maxIdle, err := maxTaskIdleMs(props)
	if err != nil {
		return nil, err
	}
	cfg := task.Config{
		MaxTaskIdleMs: maxIdle,
		ApplicationID: appID, AppConfigs: props, DefaultKeySerde: o.keySerde, DefaultValueSerde: o.valueSerde,
		DefaultTimestampExtractor: o.extractor, Clock: func() int64 { return d.wallClock }, Collector: collector{d},
		DeserializationHandler: deserHandler, ProcessingHandler: procHandler, Logger: o.logger, Cache: recordCache,
	}
	gspec, err := task.GlobalSpec(b, appID)
	if err != nil {
		return nil, err
	}
	if len(gspec.Nodes) > 0 {
		if d.global, err = task.New(processor.TaskID{Subtopology: -1, Partition: -1}, gspec, cfg); err != nil {
			return nil, err
		}
		if err := d.global.Init(); err != nil {
			return nil, err
		}
		cfg.GlobalStore = d.global.Store
	}
	spec, err := task.SpecFromTopology(b, appID, nil)
	if err != nil {
		return nil, err
	}
	if len(spec.Nodes) > 0 {
		if d.task, err = task.New(processor.TaskID{Subtopology: 0, Partition: 0}, spec, cfg); err != nil {
			return nil, err
		}
		if err := d.task.Init(); err != nil {
			if d.global != nil {
				err = errors.Join(err, d.global.Close())
			}
			return nil, err
		}
		if err := d.declareInputs(b); err != nil {
			return nil, errors.Join(err, d.Close())
		}
	}
	if err := d.captureOutputs(); err != nil {
		return nil, err
	}
	return d, nil
}

// WallClockTimeMs returns the driver's mocked wall-clock time in ms.
func (d *TopologyTestDriver) WallClockTimeMs() int64 { return d.wallClock }

// ApplicationID returns the application.id in use (the configured one or the generated default).
func (d *TopologyTestDriver) ApplicationID() string { return d.appID }

// pipeRecord routes one serialized record into the topology and processes all work it causes.
func (d *TopologyTestDriver) pipeRecord(topic string, ts int64, key, value []byte, headers serde.Headers) error {
	if d.closed {
		return ErrClosed
	}
	toTask := d.task != nil && d.task.HasSource(topic)
	toGlobal := d.global != nil && d.global.HasSource(topic)
	if !toTask && !toGlobal {
		return fmt.Errorf("%w: %s", ErrUnknownTopic, topic)
	}
	if toTask {
		if err := d.enqueue(topic, ts, key, value, headers); err != nil {
			return err
		}
		if err := d.completeAllProcessableWork(); err != nil {
			return err
		}
	}
	if toGlobal {
		return d.processGlobal(topic, ts, key, value, headers)
	}
	return nil
}

// nextOffset returns the next offset of topic's partition 0 (the pattern's shared sequence for
// a topic read through a pattern source).
func (d *TopologyTestDriver) nextOffset(topic string) int64 {
	key := topic
	for _, n := range d.patterns {
		if topology.MatchesPattern(n, topic) { // the builder refuses a topic both named and matched
			key = "pattern:" + n.PatternText
			break
		}
	}
	off := d.offsets[key]
	d.offsets[key] = off + 1
	return off
}

func (d *TopologyTestDriver) enqueue(topic string, ts int64, key, value []byte, headers serde.Headers) error {
	return d.task.AddRecord(task.RawRecord{Topic: topic, Partition: 0, Offset: d.nextOffset(topic), Timestamp: ts,
		Key: key, Value: value, Headers: headers.Clone(), Queue: d.queueFor(topic)})
}

// queueFor returns the queue of a topic read through a pattern source: the pattern's text (Java's
// driver subscribes the pattern as one placeholder partition), or "" for a named topic.
func (d *TopologyTestDriver) queueFor(topic string) string {
	for _, n := range d.patterns {
		if topology.MatchesPattern(n, topic) {
			return n.Pattern.String()
		}
	}
	return ""
}

// declareInputs declares every input partition of the stream task (partition 0 of each named
// source topic, one placeholder partition per pattern source) with a known lag of 0, as Java's
// driver (whose mock consumer reports no lag), so that max.task.idle.ms applies as in Java.
func (d *TopologyTestDriver) declareInputs(b *topology.Builder) error {
	for _, n := range b.Nodes() {
		if n.Kind != topology.SourceNode || n.Global || b.IsGlobalSource(n.Name) {
			continue
		}
		var topics []string
		if n.Pattern != nil {
			topics = []string{n.Pattern.String()}
		}
		for _, t := range n.Topics {
			topics = append(topics, b.DecorateTopic(d.appID, t))
		}
		for _, t := range topics {
			if err := d.task.AddInputPartition(t, 0); err != nil {
				return err
			}
			d.task.UpdateLag(t, 0, 0)
		}
	}
	return nil
}

func (d *TopologyTestDriver) processGlobal(topic string, ts int64, key, value []byte, headers serde.Headers) error {
	defer d.global.PublishSensors()
	if err := d.global.AddRecord(task.RawRecord{Topic: topic, Partition: 0, Offset: d.nextOffset(topic), Timestamp: ts,
		Key: key, Value: value, Headers: headers.Clone()}); err != nil {
		return err
	}
	for {
		ok, err := d.global.Process(d.wallClock)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	return d.global.Commit()
}

// completeAllProcessableWork processes every queued record: process, stream-time punctuation,
// commit, capture (Java: TopologyTestDriver.completeAllProcessableWork).
func (d *TopologyTestDriver) completeAllProcessableWork() error {
	if err := d.captureOutputs(); err != nil {
		return err
	}
	if d.task == nil {
		return nil
	}
	for d.task.HasRecordsQueued() && d.task.IsProcessable(d.wallClock) {
		processed, err := d.task.Process(d.wallClock)
		if err != nil {
			return err // outputs stay pending until the next call, as in Java
		}
		if !processed {
			return nil
		}
		// Async steps: the record's calls complete and are applied before anything else
		// happens, so the driver's output is that of a synchronous step (see the package doc).
		if err := d.task.DrainAsync(context.Background()); err != nil {
			return err
		}
		if _, err := d.task.MaybePunctuateStreamTime(); err != nil {
			return err // outputs stay pending until the next call, as in Java
		}
		if err := d.task.Commit(); err != nil {
			return err
		}
		if err := d.captureOutputs(); err != nil {
			return err
		}
	}
	return nil
}

// captureOutputs moves produced records to the per-topic queues and pipes back those written to
// topics the topology reads.
func (d *TopologyTestDriver) captureOutputs() error {
	out := d.pending
	d.pending = nil
	for _, r := range out {
		d.outputs[r.Topic] = append(d.outputs[r.Topic], r)
		if d.task != nil && d.task.HasSource(r.Topic) {
			if err := d.enqueue(r.Topic, r.Timestamp, r.Key, r.Value, r.Headers); err != nil {
				return err
			}
		}
		if d.global != nil && d.global.HasSource(r.Topic) {
			if err := d.processGlobal(r.Topic, r.Timestamp, r.Key, r.Value, r.Headers); err != nil {
				return err
			}
		}
	}
	return nil
}

// AdvanceWallClockTime moves the mocked wall-clock time forward by advance (truncated to ms),
// fires the wall-clock punctuators due (each once), commits, and processes what they sent to
// internal topics. Errors: ErrInvalidArgument for a negative advance, processing errors.
// Java: advanceWallClockTime(Duration).
func (d *TopologyTestDriver) AdvanceWallClockTime(advance time.Duration) error {
	if d.closed {
		return ErrClosed
	}
	if advance < 0 {
		return fmt.Errorf("%w: advance %v is negative", ErrInvalidArgument, advance)
	}
	d.wallClock += advance.Milliseconds()
	if d.task != nil {
		if _, err := d.task.MaybePunctuateSystemTime(d.wallClock); err != nil {
			return err // outputs stay pending until the next call, as in Java
		}
		if err := d.task.DrainAsync(context.Background()); err != nil {
			return err
		}
		if err := d.task.Commit(); err != nil {
			return err
		}
	}
	return d.completeAllProcessableWork()
}

// ProducedTopicNames returns, sorted, every topic a record was produced to so far: sink
// topics, repartition topics and changelog topics. Java: producedTopicNames() (a set).
func (d *TopologyTestDriver) ProducedTopicNames() []string {
	return slices.Sorted(maps.Keys(d.outputs))
}

// StateStore returns the store named name (local or global), or an error wrapping processor.ErrUnknownStore.
// Unlike Java's getStateStore it does not refuse built-in store types; use [KeyValueStore] for
// a typed view. Java: getStateStore(name).
func (d *TopologyTestDriver) StateStore(name string) (processor.StateStore, error) {
	if d.task != nil {
		if s := d.task.Store(name); s != nil {
			return s, nil
		}
	}
	if d.global != nil {
		if s := d.global.Store(name); s != nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("testdriver: %w: %q", processor.ErrUnknownStore, name)
}

// AllStateStores returns every store by name. Java: getAllStateStores().
func (d *TopologyTestDriver) AllStateStores() map[string]processor.StateStore {
	out := map[string]processor.StateStore{}
	for _, t := range []*task.Task{d.global, d.task} {
		if t == nil {
			continue
		}
		for _, n := range t.StoreNames() {
			out[n] = t.Store(n)
		}
	}
	return out
}

// Close closes the processors and the stores (after a final commit), then captures what was
// produced while closing. Calling it again does nothing. Java: close().
func (d *TopologyTestDriver) Close() error {
	if d.closed {
		return nil
	}
	var errs []error
	if d.task != nil {
		errs = append(errs, d.task.Close())
	}
	if d.global != nil {
		errs = append(errs, d.global.Close())
	}
	d.closed = true
	// Records produced while closing are captured; none can be processed any more.
	for _, r := range d.pending {
		d.outputs[r.Topic] = append(d.outputs[r.Topic], r)
	}
	d.pending = nil
	return errors.Join(errs...)
}

// readRaw pops the next captured record of topic.
func (d *TopologyTestDriver) readRaw(topic string) (task.OutRecord, error) {
	q, ok := d.outputs[topic]
	if !ok {
		return task.OutRecord{}, fmt.Errorf("%w: %s (uninitialized: nothing was ever produced to it)", ErrEmptyTopic, topic)
	}
	if len(q) == 0 {
		return task.OutRecord{}, fmt.Errorf("%w: %s", ErrEmptyTopic, topic)
	}
	r := q[0]
	d.outputs[topic] = q[1:]
	return r, nil
}

func (d *TopologyTestDriver) queueSize(topic string) int { return len(d.outputs[topic]) }
