package task

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/internal/serdeapi"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// node is one instantiated node of the task.
type node struct {
	spec        NodeSpec
	task        *Task
	children    []*node
	childByName map[string]*node
	ctx         *nodeContext
	proc        UntypedProcessor
	initDone    bool

	keyDeser, valueDeser serde.Deserializer[any]
	keySer, valueSer     serde.Serializer[any]
	// stringKV: key and value deserializers (a sink's serializers) are both the String serde,
	// so equal key and value bytes decode to the same string (decoded and boxed once), and a
	// sink's equal key and value strings serialize to the same bytes (serialized once).
	stringKV bool
	// internKey and internValue: the source's key (value) deserializer is the String serde, so
	// short keys (values) are decoded through the task's intern table (see decodeString).
	internKey, internValue bool
	extractor              processor.TimestampExtractor
	// recordTime: the extractor is processor.FailOnInvalidTimestamp (the default), which
	// returns a non-negative record timestamp as it is; extract then takes it without the call.
	recordTime bool
	// keyApp and valueApp are a sink's key and value serializers when they append in place
	// (serdeapi.AppendsInPlace): keys and values are then serialized into sinkBuf (see serialize).
	keyApp, valueApp serde.AppendSerializer[any]
	sinkBuf          []byte
	// sinkHeaders holds the headers of the record a sink node is serializing (the serializers
	// get a pointer to them); kept in the node so that they need no allocation of their own.
	// Reset after each record: the output record owns what they held.
	sinkHeaders serde.Headers
	// sensors are the node's metrics (records processed at DEBUG; the end-to-end latency at
	// source and terminal nodes); nil when nothing is recorded.
	sensors *metrics.Node
}

func (n *node) init() error {
	t := n.task
	n.sensors = t.cfg.Metrics.Node(t.id, n.spec.Name, n.spec.Kind == SourceNode || len(n.children) == 0)
	switch n.spec.Kind {
	case SourceNode:
		n.keyDeser, n.valueDeser = n.spec.KeyDeserializer, n.spec.ValueDeserializer
		if n.keyDeser == nil && t.cfg.DefaultKeySerde != nil {
			n.keyDeser = t.cfg.DefaultKeySerde
		}
		if n.valueDeser == nil && t.cfg.DefaultValueSerde != nil {
			n.valueDeser = t.cfg.DefaultValueSerde
		}
		if n.keyDeser == nil || n.valueDeser == nil {
			return missingSerde(t.id.String(), "source node", n.spec.Name, "topics "+strings.Join(n.spec.Topics, ", "),
				n.keyDeser == nil, n.valueDeser == nil,
				"kstream.ConsumedWith(keySerde, valueSerde) on the Stream or Table, or deserializers on Topology.AddSource")
		}
		t.setDefaults(n.keyDeser, n.valueDeser)
		n.internKey, n.internValue = serdeapi.IsString(n.keyDeser), serdeapi.IsString(n.valueDeser)
		n.stringKV = n.internKey && n.internValue
		n.extractor = n.spec.TimestampExtractor
		if n.extractor == nil {
			n.extractor = t.cfg.DefaultTimestampExtractor
		}
		switch n.extractor.(type) {
		case processor.FailOnInvalidTimestamp, *processor.FailOnInvalidTimestamp:
			n.recordTime = true
		}
	case SinkNode:
		n.keySer, n.valueSer = n.spec.KeySerializer, n.spec.ValueSerializer
		if n.keySer == nil && t.cfg.DefaultKeySerde != nil {
			n.keySer = t.cfg.DefaultKeySerde
		}
		if n.valueSer == nil && t.cfg.DefaultValueSerde != nil {
			n.valueSer = t.cfg.DefaultValueSerde
		}
		if n.keySer == nil || n.valueSer == nil {
			topic := "topic " + n.spec.Topic
			if n.spec.Topic == "" {
				topic = "topics chosen per record"
			}
			return missingSerde(t.id.String(), "sink node", n.spec.Name, topic, n.keySer == nil, n.valueSer == nil,
				"kstream.ProducedWith(keySerde, valueSerde) on To, or serializers on Topology.AddSink")
		}
		t.setDefaults(n.keySer, n.valueSer)
		if serdeapi.AppendsInPlace(n.keySer) {
			n.keyApp, _ = n.keySer.(serde.AppendSerializer[any])
		}
		if serdeapi.AppendsInPlace(n.valueSer) {
			n.valueApp, _ = n.valueSer.(serde.AppendSerializer[any])
		}
		n.stringKV = serdeapi.IsString(n.keySer) && serdeapi.IsString(n.valueSer)
	case ProcessorNode:
		p, err := n.spec.NewProcessor()
		if err != nil {
			return fmt.Errorf("task %s: create processor %q: %w", t.id, n.spec.Name, err)
		}
		n.proc = p
		t.current = n
		err = callGuarded(func() error { return p.Init(n.ctx) })
		t.current = nil
		if err != nil {
			return fmt.Errorf("task %s: init processor %q: %w", t.id, n.spec.Name, err)
		}
		n.initDone = true
	}
	return nil
}

// process runs rec through this node (Java: ProcessorNode.process with the current node set).
func (n *node) process(rec processor.Record[any, any]) error {
	t := n.task
	prev := t.current
	t.current = n
	defer func() { t.current = prev }()
	n.sensors.Processed(t.systemTimeMs, rec.Timestamp)
	var err error
	switch n.spec.Kind {
	case SourceNode:
		return n.forward(rec, n.children)
	case ProcessorNode:
		err = n.callProcess(rec)
	case SinkNode:
		err = n.callSink(rec)
	}
	if err != nil {
		return n.fail(rec, err)
	}
	return nil
}

// fail hands err, the failure of rec at this node, to the processing (or, for a sink's
// serialization failure, the production) handler: nil when the handler continues (the record
// is dropped and dead-lettered), else a *ProcessingError with the record context's location.
func (n *node) fail(rec processor.Record[any, any], err error) error {
	t := n.task
	var pe *ProcessingError
	if errors.As(err, &pe) {
		return err
	}
	if n.spec.Kind == ProcessorNode && t.cfg.ProcessingHandler != nil && t.cfg.ProcessingHandler(n.spec.Name, rec, err) == Continue {
		t.log.Warn("processing error; the processing handler continues, the record is dropped", "task", t.id.String(),
			"node", n.spec.Name, "topic", t.rc.topic, "partition", t.rc.partition, "offset", t.rc.offset, "err", err)
		t.group.dropped++
		return t.deadLetter(n.spec.Name, err)
	}
	var se *serializationError
	if errors.As(err, &se) && t.cfg.ProductionHandler != nil && t.cfg.ProductionHandler(se.topic, err) == Continue {
		t.group.dropped++
		return t.deadLetter(n.spec.Name, err)
	}
	return &ProcessingError{Task: t.id, Node: n.spec.Name, Topic: t.rc.topic, Partition: t.rc.partition, Offset: t.rc.offset,
		Punctuation: !t.rc.hasMetadata, Err: err}
}

// forward sends rec to targets depth-first, with the record context's timestamp and headers
// set to the record's while the children run (Java: ProcessorContextImpl.forward).
func (n *node) forward(rec processor.Record[any, any], targets []*node) error {
	if rec.Timestamp < 0 {
		return fmt.Errorf("node %s: forward: %w: %d", n.spec.Name, processor.ErrInvalidTimestamp, rec.Timestamp)
	}
	t := n.task
	prevTS, prevHeaders := t.rc.timestamp, t.rc.headers
	t.rc.timestamp, t.rc.headers = rec.Timestamp, rec.Headers
	defer func() { t.rc.timestamp, t.rc.headers = prevTS, prevHeaders }()
	if len(targets) == 1 {
		return targets[0].process(rec)
	}
	for i, c := range targets {
		r := rec
		if i > 0 && rec.Headers.Len() > 0 {
			// Each further child gets its own copy of the headers, so that a child adding to
			// them cannot write into the backing array another child holds.
			r.Headers = rec.Headers.Clone()
		}
		if err := c.process(r); err != nil {
			return err
		}
	}
	return nil
}

// callProcess is callGuarded(func() error { return n.proc.Process(rec) }) without the closure,
// which every record at every processor would build.
func (n *node) callProcess(rec processor.Record[any, any]) (err error) {
	defer recoverPanic(&err)
	return n.proc.Process(rec)
}

// callSink is callProcess for a sink node: n.sink(rec), a panic (of a serializer, a
// partitioner or a topic extractor) turned into a *PanicError.
func (n *node) callSink(rec processor.Record[any, any]) (err error) {
	defer recoverPanic(&err)
	return n.sink(rec)
}

// sink serializes rec and hands it to the collector (Java: SinkNode + RecordCollectorImpl.send).
func (n *node) sink(rec processor.Record[any, any]) error {
	t := n.task
	topic := n.spec.Topic
	if n.spec.TopicExtractor != nil {
		var err error
		topic, err = n.spec.TopicExtractor.Extract(rec.Key, rec.Value, processor.RecordContext{
			Topic: t.rc.topic, Partition: t.rc.partition, Offset: t.rc.offset, Timestamp: rec.Timestamp, Headers: rec.Headers,
		})
		if err != nil {
			return fmt.Errorf("sink %s: extract topic: %w", n.spec.Name, err)
		}
	}
	n.sinkHeaders = rec.Headers.Clone()
	hp := &n.sinkHeaders
	var kb, vb []byte
	var err error
	if !serdeapi.IsNil(rec.Key) {
		kb, err = n.serialize(n.keyApp, n.keySer, topic, hp, rec.Key)
	}
	if err == nil && !serdeapi.IsNil(rec.Value) {
		if n.stringKV && kb != nil && sameString(rec.Key, rec.Value) {
			// The String serde's bytes of equal strings are equal (a repartition topic keyed
			// by its value): the value shares the key's bytes, which nobody writes to.
			vb = kb
		} else if vb, err = n.serialize(n.valueApp, n.valueSer, topic, hp, rec.Value); err != nil {
			err = fmt.Errorf("sink %s: serialize value for topic %s: %w", n.spec.Name, topic, err)
		}
	} else if err != nil {
		err = fmt.Errorf("sink %s: serialize key for topic %s: %w", n.spec.Name, topic, err)
	}
	headers := n.sinkHeaders
	n.sinkHeaders = serde.Headers{}
	if err != nil {
		return &serializationError{topic: topic, err: err}
	}
	out := OutRecord{Topic: topic, Partition: -1, Key: kb, Value: vb, Timestamp: rec.Timestamp, Headers: headers, Source: t.rc.raw}
	if n.spec.Partitioner == nil {
		return t.cfg.Collector.Send(out)
	}
	num, err := t.cfg.Collector.PartitionsFor(topic)
	if err != nil {
		return fmt.Errorf("sink %s: partitions of %s: %w", n.spec.Name, topic, err)
	}
	parts, ok, err := n.spec.Partitioner.Partitions(topic, rec.Key, rec.Value, num)
	if err != nil {
		return fmt.Errorf("sink %s: partitioner: %w", n.spec.Name, err)
	}
	if !ok {
		return t.cfg.Collector.Send(out)
	}
	if len(parts) == 0 {
		// No partition: the record is dropped and counted (KIP-837; Java:
		// RecordCollectorImpl.send records it on the task's dropped-records sensor).
		t.group.dropped++
		return nil
	}
	var sent []int32
	for _, p := range parts {
		if slices.Contains(sent, p) {
			continue
		}
		sent = append(sent, p)
		o := out
		o.Partition = p
		o.Headers = headers.Clone()
		if err := t.cfg.Collector.Send(o); err != nil {
			return err
		}
	}
	return nil
}

// sameString reports whether a and b are equal strings.
func sameString(a, b any) bool {
	as, ok := a.(string)
	if !ok {
		return false
	}
	bs, ok := b.(string)
	return ok && as == bs
}

// nodeContext is the ProcessorContext[any, any] of one node.
type nodeContext struct{ n *node }

var _ processor.ProcessorContext[any, any] = (*nodeContext)(nil)

// ApplicationID returns application.id.
func (c *nodeContext) ApplicationID() string { return c.n.task.cfg.ApplicationID }

// TaskID returns the task id.
func (c *nodeContext) TaskID() processor.TaskID { return c.n.task.id }

// RecordMetadata returns the current record's origin; false in punctuations.
func (c *nodeContext) RecordMetadata() (processor.RecordMetadata, bool) {
	rc := c.n.task.rc
	if !rc.hasMetadata {
		return processor.RecordMetadata{}, false
	}
	return processor.RecordMetadata{Topic: rc.topic, Partition: rc.partition, Offset: rc.offset}, true
}

// KeySerde returns the default key serde or nil.
func (c *nodeContext) KeySerde() serde.Serde[any] { return c.n.task.cfg.DefaultKeySerde }

// ValueSerde returns the default value serde or nil.
func (c *nodeContext) ValueSerde() serde.Serde[any] { return c.n.task.cfg.DefaultValueSerde }

// StateDir returns the state directory.
func (c *nodeContext) StateDir() string { return c.n.task.cfg.StateDir }

// AppConfigs returns a copy of the properties.
func (c *nodeContext) AppConfigs() map[string]string { return c.n.task.appConfigs() }

// StateStore returns a store connected to the node.
func (c *nodeContext) StateStore(name string) (processor.StateStore, error) {
	t := c.n.task
	if t.cfg.GlobalStore != nil {
		if gs := t.cfg.GlobalStore(name); gs != nil {
			return gs, nil
		}
	}
	st, ok := t.stores[name]
	if !slices.Contains(c.n.spec.Stores, name) {
		if ok {
			return nil, fmt.Errorf("processor %s has no access to state store %s: %w: it is not connected to the processor; connect it with Topology.AddStateStore(builder, processorNames...) or Topology.ConnectProcessorAndStateStores", c.n.spec.Name, name, processor.ErrUnknownStore)
		}
		return nil, fmt.Errorf("processor %s: state store %s: %w", c.n.spec.Name, name, processor.ErrUnknownStore)
	}
	if !ok {
		return nil, fmt.Errorf("processor %s: state store %s: %w", c.n.spec.Name, name, processor.ErrUnknownStore)
	}
	return st, nil
}

// Schedule schedules a punctuator of this node.
func (c *nodeContext) Schedule(interval time.Duration, typ processor.PunctuationType, p processor.Punctuator) (processor.Cancellable, error) {
	ms := interval.Milliseconds()
	if ms < 1 {
		return nil, fmt.Errorf("node %s: schedule %v: %w", c.n.spec.Name, interval, processor.ErrInvalidSchedule)
	}
	if p == nil {
		return nil, fmt.Errorf("node %s: schedule: nil punctuator", c.n.spec.Name)
	}
	t := c.n.task
	switch typ {
	case processor.StreamTime:
		// Aligned to 0: fires as soon as stream time is known (Java's schedule(0, interval, ...)).
		return t.streamPunct.schedule(c.n, 0, ms, p), nil
	case processor.WallClockTime:
		return t.wallPunct.schedule(c.n, t.cfg.Clock()+ms, ms, p), nil
	}
	return nil, fmt.Errorf("node %s: schedule: unknown punctuation type %v", c.n.spec.Name, typ)
}

// ScheduleAt schedules a punctuator of this node first due at start (ms precision) and then
// every interval; a start in the past (before the current stream time for StreamTime, before
// the wall-clock time for WallClockTime) moves to the first start + k*interval after it.
// Errors (processor.ErrInvalidSchedule): interval below 1 ms, start before the epoch.
// Java 4.4: schedule(Instant startTime, Duration interval, PunctuationType, Punctuator).
func (c *nodeContext) ScheduleAt(start time.Time, interval time.Duration, typ processor.PunctuationType, p processor.Punctuator) (processor.Cancellable, error) {
	ms := interval.Milliseconds()
	if ms < 1 {
		return nil, fmt.Errorf("node %s: schedule %v: %w", c.n.spec.Name, interval, processor.ErrInvalidSchedule)
	}
	startMs := start.UnixMilli()
	if startMs < 0 {
		return nil, fmt.Errorf("node %s: schedule at %v: %w: the minimum supported start time is the epoch", c.n.spec.Name, start, processor.ErrInvalidSchedule)
	}
	if p == nil {
		return nil, fmt.Errorf("node %s: schedule: nil punctuator", c.n.spec.Name)
	}
	t := c.n.task
	switch typ {
	case processor.StreamTime:
		return t.streamPunct.scheduleAnchored(c.n, startMs, ms, t.group.streamTime, p), nil
	case processor.WallClockTime:
		return t.wallPunct.scheduleAnchored(c.n, startMs, ms, t.cfg.Clock(), p), nil
	}
	return nil, fmt.Errorf("node %s: schedule: unknown punctuation type %v", c.n.spec.Name, typ)
}

// Commit requests a commit.
func (c *nodeContext) Commit() { c.n.task.commitRequested = true }

// CurrentSystemTimeMs returns the cached wall-clock time in ms.
func (c *nodeContext) CurrentSystemTimeMs() int64 { return c.n.task.systemTimeMs }

// CurrentStreamTimeMs returns the stream time in ms.
func (c *nodeContext) CurrentStreamTimeMs() int64 { return c.n.task.group.streamTime }

// Forward sends rec to all children.
func (c *nodeContext) Forward(rec processor.Record[any, any]) error {
	return c.n.forward(rec, c.n.children)
}

// ForwardTo sends rec to the named child.
func (c *nodeContext) ForwardTo(rec processor.Record[any, any], childName string) error {
	child, ok := c.n.childByName[childName]
	if !ok {
		return fmt.Errorf("node %s: forward to %q: %w", c.n.spec.Name, childName, processor.ErrUnknownChild)
	}
	return c.n.forward(rec, []*node{child})
}

// storeContext is the StateStoreContext given to stores; it also writes changelog records.
type storeContext struct {
	t        *Task
	building processor.StateStore
	// saved are the record contexts SetRecordContext replaced, innermost last; restore pops one
	// (a func value made once, so that a flushed cache entry costs no closure).
	saved   []recordContext
	restore func()
}

var _ processor.StateStoreContext = (*storeContext)(nil)
var _ storeapi.HeadersChangelogContext = (*storeContext)(nil)

// ErrStoreAlreadyRegistered is returned by Register for a store name registered before.
var ErrStoreAlreadyRegistered = errors.New("task: store already registered")

func (s *storeContext) ApplicationID() string    { return s.t.cfg.ApplicationID }
func (s *storeContext) TaskID() processor.TaskID { return s.t.id }
func (s *storeContext) RecordMetadata() (processor.RecordMetadata, bool) {
	rc := s.t.rc
	if !rc.hasMetadata {
		return processor.RecordMetadata{}, false
	}
	return processor.RecordMetadata{Topic: rc.topic, Partition: rc.partition, Offset: rc.offset}, true
}
func (s *storeContext) KeySerde() serde.Serde[any]   { return s.t.cfg.DefaultKeySerde }
func (s *storeContext) ValueSerde() serde.Serde[any] { return s.t.cfg.DefaultValueSerde }
func (s *storeContext) StateDir() string             { return s.t.cfg.StateDir }

// PebbleEnv hands Pebble stores (package store looks for the method) the instance's Pebble environment (nil: the
// stores' default).
func (s *storeContext) PebbleEnv() storeapi.PebbleEnv { return s.t.cfg.PebbleEnv }
func (s *storeContext) AppConfigs() map[string]string { return s.t.appConfigs() }

// StoreSensors hands a metered store layer its sensors (nil below DEBUG).
func (s *storeContext) StoreSensors(name, typ string) *metrics.StoreOps {
	return s.t.cfg.Metrics.Store(s.t.id, name, typ)
}

// Register records the store (by name) for flush, close and restore.
func (s *storeContext) Register(st processor.StateStore, restore processor.StateRestoreCallback) error {
	if _, dup := s.t.stores[st.Name()]; dup {
		return fmt.Errorf("%w: %q", ErrStoreAlreadyRegistered, st.Name())
	}
	s.t.stores[st.Name()] = st
	s.t.storeOrder = append(s.t.storeOrder, st)
	if s.t.restorers == nil {
		s.t.restorers = map[string]processor.StateRestoreCallback{}
	}
	s.t.restorers[st.Name()] = restore
	return nil
}

// LogChange writes a changelog record of store to its changelog topic, task partition; it
// writes nothing for a store whose changelog is a source topic.
func (s *storeContext) LogChange(store string, key, value []byte, timestamp int64) error {
	return s.LogChangeWithHeaders(store, key, value, timestamp, serde.Headers{})
}

// LogChangeWithHeaders is LogChange with headers (a copy is sent) on the changelog record (see
// storeapi.HeadersChangelogContext).
func (s *storeContext) LogChangeWithHeaders(store string, key, value []byte, timestamp int64, headers serde.Headers) error {
	if s.t.noLogging[store] {
		return nil
	}
	topic, ok := s.t.changelogs[store]
	if !ok {
		topic = s.t.cfg.ApplicationID + "-" + store + "-changelog"
	}
	return s.t.cfg.Collector.Send(OutRecord{Topic: topic, Partition: int32(s.t.id.Partition), Key: key, Value: value,
		Timestamp: timestamp, Headers: headers.Clone(), Changelog: true})
}

// RecordTimestamp returns the current record (or punctuation) timestamp.
func (s *storeContext) RecordTimestamp() int64 { return s.t.rc.timestamp }

// CurrentSystemTimeMs returns the wall-clock time now (ms; the driver's mocked clock in the test
// driver): the suppress buffer stamps its changelog records with it, as Java's producer stamps
// a record sent without timestamp. Java: StateStoreContext's currentSystemTimeMs.
func (s *storeContext) CurrentSystemTimeMs() int64 { return s.t.cfg.Clock() }

// CurrentRecordContext returns the context of the record being processed: topic ("" in a
// punctuation, Java's null), partition and offset (-1 in a punctuation), timestamp and headers.
// Java: InternalProcessorContext.recordContext(). For store layers (the record cache).
func (s *storeContext) CurrentRecordContext() processor.RecordContext {
	rc := s.t.rc
	return processor.RecordContext{Topic: rc.topic, Partition: rc.partition, Offset: rc.offset, Timestamp: rc.timestamp, Headers: rc.headers}
}

// SetRecordContext makes rc the context of the record being processed (an empty Topic means
// no metadata, as in a punctuation) and returns a function that restores the previous one.
// Java: InternalProcessorContext.setRecordContext, used by the caching layer while it flushes
// an entry with the context of the write that cached it.
func (s *storeContext) SetRecordContext(rc processor.RecordContext) (restore func()) {
	s.saved = append(s.saved, s.t.rc)
	s.t.rc = recordContext{timestamp: rc.Timestamp, offset: rc.Offset, partition: rc.Partition, topic: rc.Topic,
		headers: rc.Headers, hasMetadata: rc.Topic != ""}
	if s.restore == nil {
		s.restore = func() {
			n := len(s.saved) - 1
			s.t.rc = s.saved[n]
			s.saved[n] = recordContext{}
			s.saved = s.saved[:n]
		}
	}
	return s.restore
}

// DefaultSerdeUser is implemented by serializers and deserializers that wrap an inner serde the
// user may leave to the configured default (the DSL's Change serde of repartition topics): the
// engine hands them default.key.serde and default.value.serde (nil when not configured) when
// the source or sink node is initialised, and the wrapper picks the one it needs. Java
// counterpart: WrappingNullableSerializer/Deserializer.setIfUnset.
type DefaultSerdeUser interface {
	UseDefaultSerdes(key, value serde.Serde[any])
}

func (t *Task) setDefaults(vs ...any) {
	for _, v := range vs {
		if u, ok := v.(DefaultSerdeUser); ok {
			u.UseDefaultSerdes(t.cfg.DefaultKeySerde, t.cfg.DefaultValueSerde)
		}
	}
}

// missingSerde is the error of a source or sink node without a key or value serde and no
// default for it: which are missing, where the node reads or writes, and how to give them.
func missingSerde(task, kind, name, where string, key, value bool, give string) error {
	which, defaults := "key and value serdes", "default.key.serde and default.value.serde are"
	switch {
	case !value:
		which, defaults = "key serde", "default.key.serde is"
	case !key:
		which, defaults = "value serde", "default.value.serde is"
	}
	return fmt.Errorf("task %s: %s %s (%s) has no %s and no %s configured; give it its serdes (%s) "+
		"or set the defaults (Config.DefaultKeySerde/DefaultValueSerde, default.key.serde/default.value.serde): %w",
		task, kind, name, where, which, defaults, give, ErrNoSerde)
}
