package testdriver

import (
	"fmt"
	"github.com/kstreams-go/kstreams/internal/javaclass"
	"maps"
	"time"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// MockProcessorContext is a ProcessorContext for unit tests of a single processor: it records
// what the processor forwards (with the child name), the punctuators it schedules (which the
// test fires itself), whether it requested a commit, and offers settable record metadata,
// wall-clock time and stream time, and stores the test registers. It takes no action by
// itself (it never fires punctuators). Java counterpart:
// org.apache.kafka.streams.processor.api.MockProcessorContext (test-utils).
//
// Stores: build them (e.g. with logging disabled), call Init with StateStoreContext() (which
// registers them here), or register them with AddStateStore. A store with logging enabled
// works too: this context writes no changelog (as Java 4.4's mock, whose logChange does nothing).
type MockProcessorContext[KForward, VForward any] struct {
	appID      string
	taskID     processor.TaskID
	configs    map[string]string
	keySerde   serde.Serde[any]
	valueSerde serde.Serde[any]
	stateDir   string

	metadata    *processor.RecordMetadata
	systemTime  *int64
	streamTime  *int64
	stores      map[string]processor.StateStore
	punctuators []*CapturedPunctuator
	forwards    []CapturedForward[KForward, VForward]
	committed   bool
}

var _ processor.ProcessorContext[string, string] = (*MockProcessorContext[string, string])(nil)

// MockContextOption configures a MockProcessorContext.
type MockContextOption func(*mockOptions)

type mockOptions struct {
	taskID     processor.TaskID
	stateDir   string
	keySerde   serde.Serde[any]
	valueSerde serde.Serde[any]
}

// WithMockTaskID sets the task id (default 0_0).
func WithMockTaskID(id processor.TaskID) MockContextOption {
	return func(o *mockOptions) { o.taskID = id }
}

// WithMockStateDir sets the state directory (default "").
func WithMockStateDir(dir string) MockContextOption { return func(o *mockOptions) { o.stateDir = dir } }

// WithMockDefaultSerdes sets the default serdes returned by KeySerde and ValueSerde (over the
// default.key.serde / default.value.serde properties).
func WithMockDefaultSerdes(key, value serde.Serde[any]) MockContextOption {
	return func(o *mockOptions) { o.keySerde, o.valueSerde = key, value }
}

// NewMockProcessorContext returns a mock context with the given Java properties (nil for none;
// application.id defaults to "dummy-mock-app-id" and bootstrap.servers to
// "dummy-bootstrap-host:0", as in Java). Errors: serde.ErrUnknownClass for an unknown serde class in
// default.key.serde / default.value.serde. Java: new MockProcessorContext(config, taskId, stateDir).
func NewMockProcessorContext[KForward, VForward any](props map[string]string, opts ...MockContextOption) (*MockProcessorContext[KForward, VForward], error) {
	var o mockOptions
	for _, f := range opts {
		f(&o)
	}
	cfg := maps.Clone(props)
	if cfg == nil {
		cfg = map[string]string{}
	}
	if cfg[propnames.ApplicationIDConfig] == "" {
		cfg[propnames.ApplicationIDConfig] = "dummy-mock-app-id"
	}
	if cfg["bootstrap.servers"] == "" {
		cfg["bootstrap.servers"] = "dummy-bootstrap-host:0"
	}
	var err error
	if o.keySerde == nil && cfg[propnames.DefaultKeySerdeConfig] != "" {
		if o.keySerde, err = javaclass.Serde(cfg[propnames.DefaultKeySerdeConfig]); err != nil {
			return nil, err
		}
	}
	if o.valueSerde == nil && cfg[propnames.DefaultValueSerdeConfig] != "" {
		if o.valueSerde, err = javaclass.Serde(cfg[propnames.DefaultValueSerdeConfig]); err != nil {
			return nil, err
		}
	}
	return &MockProcessorContext[KForward, VForward]{appID: cfg[propnames.ApplicationIDConfig], taskID: o.taskID, configs: cfg,
		keySerde: o.keySerde, valueSerde: o.valueSerde, stateDir: o.stateDir, stores: map[string]processor.StateStore{}}, nil
}

// CapturedPunctuator is a punctuator a processor scheduled on a MockProcessorContext.
// Java: MockProcessorContext.CapturedPunctuator.
type CapturedPunctuator struct {
	// StartTime is the start given to ScheduleAt (zero for Schedule). Java: getStartTime().
	StartTime time.Time
	// Interval is the scheduled interval.
	Interval time.Duration
	// Type is the punctuation type.
	Type processor.PunctuationType
	// Punctuator is the scheduled function; call it to "fire" the punctuation.
	Punctuator processor.Punctuator
	cancelled  bool
}

// Cancel marks the punctuator cancelled (the Cancellable returned by Schedule does the same).
func (c *CapturedPunctuator) Cancel() { c.cancelled = true }

// Cancelled reports whether the punctuator was cancelled.
func (c *CapturedPunctuator) Cancelled() bool { return c.cancelled }

// Punctuate calls the punctuator with timestamp ts (ms) unless it was cancelled.
func (c *CapturedPunctuator) Punctuate(ts int64) error {
	if c.cancelled {
		return nil
	}
	return c.Punctuator(ts)
}

// CapturedForward is a record a processor forwarded, with the child it was sent to ("" for
// all children). Java: MockProcessorContext.CapturedForward.
type CapturedForward[K, V any] struct {
	// Record is the forwarded record.
	Record processor.Record[K, V]
	// ChildName is the child given to ForwardTo, or "" for Forward.
	ChildName string
}

// String renders the capture as Java's toString: "CapturedForward{childName=..., record=...}".
func (c CapturedForward[K, V]) String() string {
	child := "Optional.empty"
	if c.ChildName != "" {
		child = "Optional[" + c.ChildName + "]"
	}
	return fmt.Sprintf("CapturedForward{childName=%s, record=Record{key=%v, value=%v, timestamp=%d}}", child,
		c.Record.Key, c.Record.Value, c.Record.Timestamp)
}

// ApplicationID returns application.id. Java: applicationId().
func (m *MockProcessorContext[KForward, VForward]) ApplicationID() string { return m.appID }

// TaskID returns the task id (default 0_0). Java: taskId().
func (m *MockProcessorContext[KForward, VForward]) TaskID() processor.TaskID { return m.taskID }

// AppConfigs returns a copy of the properties. Java: appConfigs().
func (m *MockProcessorContext[KForward, VForward]) AppConfigs() map[string]string {
	return maps.Clone(m.configs)
}

// KeySerde returns the default key serde or nil. Java: keySerde().
func (m *MockProcessorContext[KForward, VForward]) KeySerde() serde.Serde[any] { return m.keySerde }

// ValueSerde returns the default value serde or nil. Java: valueSerde().
func (m *MockProcessorContext[KForward, VForward]) ValueSerde() serde.Serde[any] { return m.valueSerde }

// StateDir returns the state directory given with WithMockStateDir, or "". Java: stateDir().
func (m *MockProcessorContext[KForward, VForward]) StateDir() string { return m.stateDir }

// SetRecordMetadata sets what RecordMetadata returns. Java: setRecordMetadata(topic, partition, offset).
func (m *MockProcessorContext[KForward, VForward]) SetRecordMetadata(topic string, partition int32, offset int64) {
	m.metadata = &processor.RecordMetadata{Topic: topic, Partition: partition, Offset: offset}
}

// RecordMetadata returns the metadata set with SetRecordMetadata, and false before any was set.
// Java: recordMetadata().
func (m *MockProcessorContext[KForward, VForward]) RecordMetadata() (processor.RecordMetadata, bool) {
	if m.metadata == nil {
		return processor.RecordMetadata{}, false
	}
	return *m.metadata, true
}

// SetCurrentSystemTimeMs sets what CurrentSystemTimeMs returns. Java: setCurrentSystemTimeMs.
func (m *MockProcessorContext[KForward, VForward]) SetCurrentSystemTimeMs(ms int64) {
	m.systemTime = &ms
}

// SetCurrentStreamTimeMs sets what CurrentStreamTimeMs returns. Java: setCurrentStreamTimeMs.
func (m *MockProcessorContext[KForward, VForward]) SetCurrentStreamTimeMs(ms int64) {
	m.streamTime = &ms
}

// CurrentSystemTimeMs returns the time set with SetCurrentSystemTimeMs, or -1 when none was
// set (Java throws IllegalStateException). Java: currentSystemTimeMs().
func (m *MockProcessorContext[KForward, VForward]) CurrentSystemTimeMs() int64 {
	if m.systemTime == nil {
		return -1
	}
	return *m.systemTime
}

// CurrentStreamTimeMs returns the time set with SetCurrentStreamTimeMs, or -1 when none was
// set (Java throws IllegalStateException). Java: currentStreamTimeMs().
func (m *MockProcessorContext[KForward, VForward]) CurrentStreamTimeMs() int64 {
	if m.streamTime == nil {
		return -1
	}
	return *m.streamTime
}

// AddStateStore registers a store under its name. Java: addStateStore(store).
func (m *MockProcessorContext[KForward, VForward]) AddStateStore(s processor.StateStore) {
	m.stores[s.Name()] = s
}

// StateStore returns a registered store; the error wraps processor.ErrUnknownStore when
// none has that name (Java returns null). Java: getStateStore(name).
func (m *MockProcessorContext[KForward, VForward]) StateStore(name string) (processor.StateStore, error) {
	s, ok := m.stores[name]
	if !ok {
		return nil, fmt.Errorf("mock context: state store %s: %w", name, processor.ErrUnknownStore)
	}
	return s, nil
}

// Schedule captures the punctuator (it never fires by itself) and returns a Cancellable that
// marks it cancelled. Intervals are not validated, as in Java's mock. Java: schedule(...).
func (m *MockProcessorContext[KForward, VForward]) Schedule(interval time.Duration, typ processor.PunctuationType, p processor.Punctuator) (processor.Cancellable, error) {
	c := &CapturedPunctuator{Interval: interval, Type: typ, Punctuator: p}
	m.punctuators = append(m.punctuators, c)
	return c, nil
}

// ScheduleAt captures the punctuator with its start time (it never fires by itself).
// Java 4.4: schedule(Instant, Duration, PunctuationType, Punctuator).
func (m *MockProcessorContext[KForward, VForward]) ScheduleAt(start time.Time, interval time.Duration, typ processor.PunctuationType, p processor.Punctuator) (processor.Cancellable, error) {
	c := &CapturedPunctuator{StartTime: start, Interval: interval, Type: typ, Punctuator: p}
	m.punctuators = append(m.punctuators, c)
	return c, nil
}

// ScheduledPunctuators returns the captured punctuators in scheduling order (cancelled ones
// included). Java: scheduledPunctuators().
func (m *MockProcessorContext[KForward, VForward]) ScheduledPunctuators() []*CapturedPunctuator {
	return append([]*CapturedPunctuator(nil), m.punctuators...)
}

// Forward captures record (sent to all children). Java: forward(record).
func (m *MockProcessorContext[KForward, VForward]) Forward(record processor.Record[KForward, VForward]) error {
	m.forwards = append(m.forwards, CapturedForward[KForward, VForward]{Record: record})
	return nil
}

// ForwardTo captures record with the child name. Java: forward(record, childName).
func (m *MockProcessorContext[KForward, VForward]) ForwardTo(record processor.Record[KForward, VForward], childName string) error {
	m.forwards = append(m.forwards, CapturedForward[KForward, VForward]{Record: record, ChildName: childName})
	return nil
}

// Forwarded returns all captured forwards in order. Java: forwarded().
func (m *MockProcessorContext[KForward, VForward]) Forwarded() []CapturedForward[KForward, VForward] {
	return append([]CapturedForward[KForward, VForward](nil), m.forwards...)
}

// ForwardedTo returns the forwards that reach childName: those sent to it and those sent to
// all children. Java: forwarded(childName).
func (m *MockProcessorContext[KForward, VForward]) ForwardedTo(childName string) []CapturedForward[KForward, VForward] {
	var out []CapturedForward[KForward, VForward]
	for _, f := range m.forwards {
		if f.ChildName == "" || f.ChildName == childName {
			out = append(out, f)
		}
	}
	return out
}

// ResetForwards clears the captured forwards. Java: resetForwards().
func (m *MockProcessorContext[KForward, VForward]) ResetForwards() { m.forwards = nil }

// Commit records a commit request. Java: commit().
func (m *MockProcessorContext[KForward, VForward]) Commit() { m.committed = true }

// Committed reports whether Commit was called since the last ResetCommit. Java: committed().
func (m *MockProcessorContext[KForward, VForward]) Committed() bool { return m.committed }

// ResetCommit clears the commit flag. Java: resetCommit().
func (m *MockProcessorContext[KForward, VForward]) ResetCommit() { m.committed = false }

// StateStoreContext returns a StateStoreContext to Init stores with; Register adds the store
// to this mock context (restore callbacks are ignored). Java: getStateStoreContext().
func (m *MockProcessorContext[KForward, VForward]) StateStoreContext() processor.StateStoreContext {
	return mockStoreContext[KForward, VForward]{m}
}

type mockStoreContext[K, V any] struct{ m *MockProcessorContext[K, V] }

func (c mockStoreContext[K, V]) ApplicationID() string    { return c.m.appID }
func (c mockStoreContext[K, V]) TaskID() processor.TaskID { return c.m.taskID }
func (c mockStoreContext[K, V]) RecordMetadata() (processor.RecordMetadata, bool) {
	return c.m.RecordMetadata()
}
func (c mockStoreContext[K, V]) KeySerde() serde.Serde[any]    { return c.m.keySerde }
func (c mockStoreContext[K, V]) ValueSerde() serde.Serde[any]  { return c.m.valueSerde }
func (c mockStoreContext[K, V]) StateDir() string              { return c.m.stateDir }
func (c mockStoreContext[K, V]) AppConfigs() map[string]string { return c.m.AppConfigs() }
func (c mockStoreContext[K, V]) Register(s processor.StateStore, _ processor.StateRestoreCallback) error {
	c.m.stores[s.Name()] = s
	return nil
}
