package ktable

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// ErrSuppressBufferFull is returned (failing the task) when a suppression buffer configured to
// shut down when full exceeds its bounds. Java: StreamsException "<node> buffer exceeded its max
// capacity. Currently [r/maxRecords] records and [b/maxBytes] bytes."
var ErrSuppressBufferFull = errors.New("suppression buffer exceeded its max capacity")

// GraceMs returns the grace period (ms) of the windows; suppress(untilWindowCloses) waits that long.
func (a *WindowAggregate) GraceMs() int64 { return a.opts.GraceMs }

// GraceMs returns the grace period (ms) of the windows.
func (a *SlidingWindowAggregate) GraceMs() int64 { return a.opts.GraceMs }

// GraceMs returns the grace period plus the inactivity gap (ms): a session closes that long
// after its end.
func (a *SessionWindowAggregate) GraceMs() int64 { return a.opts.GraceMs + a.gapMs }

// SuppressConfig configures a suppression (Java: SuppressedInternal and BufferConfig).
type SuppressConfig struct {
	// StoreName is the buffer store's name.
	StoreName string
	// WaitMs is how long (ms of stream time) a key's update stays buffered.
	WaitMs int64
	// WindowEnd buffers by window end (untilWindowCloses) instead of record time.
	WindowEnd bool
	// SafeToDropTombstones drops deletes on emission (untilWindowCloses).
	SafeToDropTombstones bool
	// MaxRecords and MaxBytes bound the buffer (math.MaxInt64: unbounded).
	MaxRecords, MaxBytes int64
	// ShutDownWhenFull fails with ErrSuppressBufferFull when over a bound; otherwise the
	// oldest entries are emitted early.
	ShutDownWhenFull bool
	// KeySerde and ValueSerde size the buffer entries (nil: the default serdes).
	KeySerde, ValueSerde serde.Serde[any]
	// ProcessorName names the suppress node in errors.
	ProcessorName string
}

// Suppress is the supplier of KTable.suppress: updates are held per key in a time-ordered
// buffer and emitted (the latest update per key, with the timestamp and headers of the
// record that last updated it) once stream time passes the key's buffer time + WaitMs, or
// early when the buffer is over its bounds. A key updated while buffered keeps its original
// place (buffer time). Java: KTableSuppressProcessorSupplier with InMemoryTimeOrderedKeyValueChangeBuffer.
type Suppress struct {
	parent Supplier
	cfg    SuppressConfig
}

// NewSuppress returns the supplier; it asks parent for old values, as Java does.
func NewSuppress(parent Supplier, cfg SuppressConfig) *Suppress {
	parent.EnableSendingOldValues(true)
	return &Suppress{parent: parent, cfg: cfg}
}

// EnableSendingOldValues delegates to the parent.
func (s *Suppress) EnableSendingOldValues(force bool) bool {
	return s.parent.EnableSendingOldValues(force)
}

// View returns the parent's view (buffered prior values are not consulted).
func (s *Suppress) View() ValueGetterSupplier { return s.parent.View() }

// Get returns a new processor.
func (s *Suppress) Get() processor.Processor[any, any, any, any] { return &suppressProc{s: s} }

// SuppressBuffer is the in-memory state store of a suppression (no changelog yet). Java
// counterpart: InMemoryTimeOrderedKeyValueChangeBuffer.
type SuppressBuffer struct {
	name    string
	open    bool
	entries []*bufEntry // by (time, key bytes)
	index   map[string]*bufEntry
	size    int64
}

type bufEntry struct {
	time        int64
	kb          []byte
	key         any
	change      Change
	prior, old  []byte
	newB        []byte
	sameOld     bool
	ts          int64
	headers     serde.Headers
	topic       string
	partition   int32
	offset      int64
	recordBytes int64
}

// Name returns the store name.
func (b *SuppressBuffer) Name() string { return b.name }

// Init opens the buffer.
func (b *SuppressBuffer) Init(processor.StateStoreContext, processor.StateStore) error {
	b.open = true
	b.index = map[string]*bufEntry{}
	return nil
}

// Flush does nothing (no changelog).
func (b *SuppressBuffer) Flush() error { return nil }

// Close drops the buffer.
func (b *SuppressBuffer) Close() error { b.open = false; b.entries, b.index = nil, nil; return nil }

// Persistent returns false.
func (b *SuppressBuffer) Persistent() bool { return false }

// IsOpen reports whether the buffer is open.
func (b *SuppressBuffer) IsOpen() bool { return b.open }

// NumRecords returns the number of buffered keys.
func (b *SuppressBuffer) NumRecords() int { return len(b.entries) }

// BufferSize returns the buffer's size in bytes as Java estimates it: per entry 8 (time) + key
// bytes + prior, old (unless the same as prior) and new value bytes + record context (8 + 8 +
// topic length + 4 + header keys and values).
func (b *SuppressBuffer) BufferSize() int64 { return b.size }

func (e *bufEntry) computeSize() int64 {
	n := int64(8 + len(e.kb) + len(e.prior) + len(e.newB))
	if !e.sameOld {
		n += int64(len(e.old))
	}
	n += 8 + 8 + int64(len([]rune(e.topic))) + 4
	for h := range e.headers.All() {
		n += int64(len([]rune(h.Key))) + int64(len(h.Value))
	}
	return n
}

func (b *SuppressBuffer) less(a *bufEntry, time int64, kb []byte) bool {
	if a.time != time {
		return a.time < time
	}
	return bytes.Compare(a.kb, kb) < 0
}

// put buffers e (non-resetting: a buffered key keeps its place and prior value).
func (b *SuppressBuffer) put(e *bufEntry) {
	if prev, ok := b.index[string(e.kb)]; ok {
		e.time, e.prior, e.sameOld = prev.time, prev.prior, false
		e.recordBytes = e.computeSize()
		b.size += e.recordBytes - prev.recordBytes
		*prev = *e
		return
	}
	e.prior, e.sameOld = e.old, true
	e.recordBytes = e.computeSize()
	i, _ := slices.BinarySearchFunc(b.entries, e, func(x, y *bufEntry) int {
		if b.less(x, y.time, y.kb) {
			return -1
		}
		if x.time == y.time && bytes.Equal(x.kb, y.kb) {
			return 0
		}
		return 1
	})
	b.entries = slices.Insert(b.entries, i, e)
	b.index[string(e.kb)] = e
	b.size += e.recordBytes
}

func (b *SuppressBuffer) minTime() (int64, bool) {
	if len(b.entries) == 0 {
		return 0, false
	}
	return b.entries[0].time, true
}

func (b *SuppressBuffer) popFront() *bufEntry {
	e := b.entries[0]
	b.entries[0] = nil
	b.entries = b.entries[1:]
	delete(b.index, string(e.kb))
	b.size -= e.recordBytes
	return e
}

// SuppressBufferBuilder builds a SuppressBuffer; it satisfies processor.StoreBuilder (no
// changelog: LoggingEnabled is false, a documented difference from Java, whose buffer logs to
// "<application.id>-<store>-changelog").
type SuppressBufferBuilder struct{ StoreName string }

// Name returns the store name.
func (s SuppressBufferBuilder) Name() string { return s.StoreName }

// Build returns a new buffer.
func (s SuppressBufferBuilder) Build() (processor.StateStore, error) {
	return &SuppressBuffer{name: s.StoreName}, nil
}

// LoggingEnabled returns false (see the type doc).
func (s SuppressBufferBuilder) LoggingEnabled() bool { return false }

// LogConfig returns nil.
func (s SuppressBufferBuilder) LogConfig() map[string]string { return nil }

type suppressProc struct {
	base
	s          *Suppress
	buf        *SuppressBuffer
	observed   int64
	keySerde   serde.Serde[any]
	valueSerde serde.Serde[any]
	name       string
}

func (p *suppressProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.ctx = ctx
	p.observed = -1
	p.name = p.s.cfg.ProcessorName
	var err error
	p.buf, err = processor.GetStateStore[*SuppressBuffer](ctx, p.s.cfg.StoreName)
	p.keySerde, p.valueSerde = p.s.cfg.KeySerde, p.s.cfg.ValueSerde
	if p.keySerde == nil {
		p.keySerde = ctx.KeySerde()
	}
	if p.valueSerde == nil {
		p.valueSerde = ctx.ValueSerde()
	}
	return err
}

func (p *suppressProc) ser(s serde.Serde[any], what string, v any) ([]byte, error) {
	if v == nil || s == nil {
		return nil, nil
	}
	b, err := s.Serialize(p.s.cfg.StoreName+"-changelog", nil, v)
	if err != nil {
		return nil, fmt.Errorf("suppress %s: serialize %s: %w", p.s.cfg.StoreName, what, err)
	}
	return b, nil
}

// windowEndOf returns Window.End of a Windowed[K] key of any K.
func windowEndOf(key any) (int64, bool) {
	if key == nil {
		return 0, false
	}
	v := reflect.ValueOf(key)
	if v.Kind() != reflect.Struct {
		return 0, false
	}
	f := v.FieldByName("Window")
	if !f.IsValid() {
		return 0, false
	}
	w, ok := f.Interface().(serde.Window)
	return w.End, ok
}

func (p *suppressProc) Process(r processor.Record[any, any]) error {
	p.observed = max(p.observed, r.Timestamp)
	c, _ := r.Value.(Change)
	t := r.Timestamp
	if p.s.cfg.WindowEnd {
		end, ok := windowEndOf(r.Key)
		if !ok {
			return fmt.Errorf("suppress %s: untilWindowCloses needs windowed keys, got %T", p.s.cfg.StoreName, r.Key)
		}
		t = end
	}
	kb, err := p.ser(p.keySerde, "key", r.Key)
	if err != nil {
		return err
	}
	nb, err := p.ser(p.valueSerde, "new value", c.New)
	if err != nil {
		return err
	}
	ob, err := p.ser(p.valueSerde, "old value", c.Old)
	if err != nil {
		return err
	}
	e := &bufEntry{time: t, kb: kb, key: r.Key, change: c, old: ob, newB: nb, ts: r.Timestamp, headers: r.Headers.Clone(),
		partition: -1, offset: -1}
	if md, ok := p.ctx.RecordMetadata(); ok {
		e.topic, e.partition, e.offset = md.Topic, md.Partition, md.Offset
	}
	p.buf.put(e)
	return p.enforce()
}

func (p *suppressProc) over() bool {
	return int64(p.buf.NumRecords()) > p.s.cfg.MaxRecords || p.buf.BufferSize() > p.s.cfg.MaxBytes
}

func (p *suppressProc) enforce() error {
	expiry := p.observed - p.s.cfg.WaitMs
	for {
		mt, ok := p.buf.minTime()
		if !ok || mt > expiry {
			break
		}
		if err := p.emit(p.buf.popFront()); err != nil {
			return err
		}
	}
	if !p.over() {
		return nil
	}
	if p.s.cfg.ShutDownWhenFull {
		name := p.s.cfg.StoreName
		if p.name != "" {
			name = p.name
		}
		return fmt.Errorf("%w: %s buffer exceeded its max capacity. Currently [%d/%d] records and [%d/%d] bytes",
			ErrSuppressBufferFull, name, p.buf.NumRecords(), p.s.cfg.MaxRecords, p.buf.BufferSize(), p.s.cfg.MaxBytes)
	}
	for p.over() && p.buf.NumRecords() > 0 {
		if err := p.emit(p.buf.popFront()); err != nil {
			return err
		}
	}
	return nil
}

func (p *suppressProc) emit(e *bufEntry) error {
	if e.change.New == nil && p.s.cfg.SafeToDropTombstones {
		return nil
	}
	return p.ctx.Forward(processor.Record[any, any]{Key: e.key, Value: Change{New: e.change.New, Old: e.change.Old}, Timestamp: e.ts, Headers: e.headers})
}
