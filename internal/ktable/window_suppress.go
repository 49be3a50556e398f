package ktable

import (
	"bytes"
	"cmp"
	"encoding/binary"
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

// SuppressBuffer is the in-memory state store of a suppression. With logging on (the
// default, as in Java) it is backed by the changelog topic "<application.id>-<store>-changelog"
// in Java's layout, so a Java application's buffer restores into ours and back: at each commit
// every key put or evicted since the last one is logged, a buffered key as its serialized key
// with the value below and header "v" = 0x03, an evicted key as a tombstone without headers.
// The value (big-endian) is the record context (timestamp int64, offset int64, topic as int32
// length + UTF-8, partition int32, header count int32, per header int32 key length + UTF-8 key
// and int32 value length (-1: null) + value), the prior value, the old value (-2: the same
// bytes as the prior value) and the new value, each as int32 length (-1: null) + bytes, then
// the buffer time (int64 ms). Restore reads that layout (version 3, the only one Java 4.x
// writes; other versions fail with ErrSuppressChangelog). Java counterpart:
// InMemoryTimeOrderedKeyValueChangeBuffer with BufferValue and ProcessorRecordContext.serialize.
type SuppressBuffer struct {
	name    string
	open    bool
	logging bool
	entries []*bufEntry // by (time, key bytes)
	index   map[string]*bufEntry
	size    int64

	logger bufferLogger
	clock  interface{ CurrentSystemTimeMs() int64 }
	rca    recordContextSetter
	// dirty holds the keys put or evicted since the last commit, each with its insertion
	// number; dirtyCap is the capacity Java's HashSet of them would have (see dirtyOrder).
	dirty    map[string]int
	dirtySeq int
	dirtyCap int
}

// bufferLogger is the engine's changelog writer (storeapi.HeadersChangelogContext).
type bufferLogger interface {
	LogChangeWithHeaders(storeName string, key, value []byte, timestamp int64, headers serde.Headers) error
}

// ErrSuppressChangelog is returned when a suppress buffer's changelog record cannot be read
// (an unknown version header or a truncated value).
var ErrSuppressChangelog = errors.New("suppress buffer: invalid changelog record")

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
	// restored entries hold only bytes: key and change are decoded when emitted.
	restored bool
}

// Name returns the store name.
func (b *SuppressBuffer) Name() string { return b.name }

// Init opens the buffer and registers it for restore from its changelog.
func (b *SuppressBuffer) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	b.open = true
	b.index = map[string]*bufEntry{}
	b.dirty, b.dirtySeq, b.dirtyCap = map[string]int{}, 0, 16
	b.logger, _ = ctx.(bufferLogger)
	b.clock, _ = ctx.(interface{ CurrentSystemTimeMs() int64 })
	b.rca, _ = ctx.(recordContextSetter)
	if root == nil {
		root = b
	}
	return ctx.Register(root, b.restore)
}

// Flush logs the keys changed since the last flush (see FlushCache).
func (b *SuppressBuffer) Flush() error { return b.FlushCache() }

// FlushCache writes the changelog records of the keys put or evicted since the last call; the
// task calls it at every commit, before the commit's records are flushed. Java:
// InMemoryTimeOrderedKeyValueChangeBuffer.flush (also called before the record collector's
// flush). The records of one flush come in the iteration order of Java's HashSet of the dirty
// keys, so the changelog matches Java's record for record.
func (b *SuppressBuffer) FlushCache() error {
	if len(b.dirty) == 0 {
		return nil
	}
	if !b.logging || b.logger == nil {
		clear(b.dirty)
		return nil
	}
	var now int64
	if b.clock != nil {
		now = b.clock.CurrentSystemTimeMs()
	}
	for _, k := range b.dirtyOrder() {
		var err error
		if e, ok := b.index[k]; ok {
			err = b.logger.LogChangeWithHeaders(b.name, e.kb, e.encode(), now, changelogHeaders)
		} else {
			err = b.logger.LogChangeWithHeaders(b.name, []byte(k), nil, now, serde.Headers{})
		}
		if err != nil {
			return fmt.Errorf("suppress buffer %s: log change: %w", b.name, err)
		}
	}
	clear(b.dirty)
	return nil
}

// changelogHeaders is Java's CHANGELOG_HEADERS: "v" = 3 (the record context comes first).
var changelogHeaders = *serde.NewHeaders(serde.Header{Key: "v", Value: []byte{3}})

func (b *SuppressBuffer) markDirty(kb []byte) {
	if !b.logging {
		return
	}
	if _, ok := b.dirty[string(kb)]; ok {
		return
	}
	b.dirty[string(kb)] = b.dirtySeq
	b.dirtySeq++
	// java.util.HashMap doubles its table when the size exceeds 0.75 of its capacity; clear()
	// keeps the table, so the capacity never shrinks.
	if len(b.dirty) > b.dirtyCap/4*3 {
		b.dirtyCap *= 2
	}
}

// dirtyOrder returns the dirty keys in the iteration order of a java.util.HashSet<Bytes> of
// them: by bucket (Bytes.hashCode = Arrays.hashCode, spread h ^ h>>>16, masked by the
// capacity), and within a bucket in insertion order.
func (b *SuppressBuffer) dirtyOrder() []string {
	keys := make([]string, 0, len(b.dirty))
	for k := range b.dirty {
		keys = append(keys, k)
	}
	mask := uint32(b.dirtyCap - 1)
	bucket := func(k string) uint32 {
		h := int32(1)
		for i := 0; i < len(k); i++ {
			h = 31*h + int32(int8(k[i]))
		}
		u := uint32(h)
		return (u ^ u>>16) & mask
	}
	slices.SortFunc(keys, func(x, y string) int {
		if bx, by := bucket(x), bucket(y); bx != by {
			return cmp.Compare(bx, by)
		}
		return cmp.Compare(b.dirty[x], b.dirty[y])
	})
	return keys
}

// encode returns the changelog value of e (Java: BufferValue.serialize(8) + buffer time).
func (e *bufEntry) encode() []byte {
	out := appendRecordContext(nil, e.ts, e.offset, e.topic, e.partition, e.headers)
	out = appendBytes(out, e.prior)
	switch {
	case e.old == nil:
		out = binary.BigEndian.AppendUint32(out, nullLen)
	case e.sameOld:
		out = binary.BigEndian.AppendUint32(out, samePriorLen)
	default:
		out = appendBytes(out, e.old)
	}
	out = appendBytes(out, e.newB)
	return binary.BigEndian.AppendUint64(out, uint64(e.time))
}

const (
	nullLen      = 0xffffffff // -1: null
	samePriorLen = 0xfffffffe // -2: old value = prior value
)

func appendBytes(out, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(out, nullLen)
	}
	out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
	return append(out, b...)
}

// bufReader reads the changelog value layout; a short value sets err.
type bufReader struct {
	b   []byte
	err error
}

func (r *bufReader) int64() int64 {
	if len(r.b) < 8 {
		r.err = ErrSuppressChangelog
		return 0
	}
	v := int64(binary.BigEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *bufReader) int32() int32 {
	if len(r.b) < 4 {
		r.err = ErrSuppressChangelog
		return 0
	}
	v := int32(binary.BigEndian.Uint32(r.b))
	r.b = r.b[4:]
	return v
}

func (r *bufReader) bytesOf(n int32) []byte {
	if n == -1 {
		return nil
	}
	if n < 0 || int(n) > len(r.b) {
		r.err = ErrSuppressChangelog
		return nil
	}
	v := append([]byte{}, r.b[:n]...)
	r.b = r.b[n:]
	return v
}

func (r *bufReader) nullable() []byte { return r.bytesOf(r.int32()) }

// appendRecordContext appends a record context in Java's ProcessorRecordContext.serialize
// layout: timestamp, offset, topic (int32 length + UTF-8), partition, header count, per header
// int32 key length + key and int32 value length (-1: null) + value; big-endian.
func appendRecordContext(out []byte, ts, offset int64, topic string, partition int32, headers serde.Headers) []byte {
	out = binary.BigEndian.AppendUint64(out, uint64(ts))
	out = binary.BigEndian.AppendUint64(out, uint64(offset))
	out = appendBytes(out, []byte(topic))
	out = binary.BigEndian.AppendUint32(out, uint32(partition))
	out = binary.BigEndian.AppendUint32(out, uint32(headers.Len()))
	for h := range headers.All() {
		out = appendBytes(out, []byte(h.Key))
		out = appendBytes(out, h.Value)
	}
	return out
}

// recordContext reads what appendRecordContext writes.
func (r *bufReader) recordContext() (ts, offset int64, topic string, partition int32, headers serde.Headers) {
	ts = r.int64()
	offset = r.int64()
	topic = string(r.nullable())
	partition = r.int32()
	if n := r.int32(); n > 0 {
		for i := int32(0); i < n && r.err == nil; i++ {
			k := r.nullable()
			headers.Add(string(k), r.nullable())
		}
	}
	return
}

// decodeBufEntry reads a version-3 changelog value.
func decodeBufEntry(kb, v []byte) (*bufEntry, error) {
	r := &bufReader{b: v}
	e := &bufEntry{kb: append([]byte{}, kb...), restored: true}
	e.ts, e.offset, e.topic, e.partition, e.headers = r.recordContext()
	e.prior = r.nullable()
	switch n := r.int32(); n {
	case -2:
		e.old, e.sameOld = e.prior, true
	default:
		e.old = r.bytesOf(n)
		e.sameOld = javaEqual(e.prior, e.old)
	}
	e.newB = r.nullable()
	e.time = r.int64()
	if r.err != nil || len(r.b) != 0 {
		return nil, ErrSuppressChangelog
	}
	return e, nil
}

// javaEqual is java.util.Arrays.equals: null equals only null.
func javaEqual(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// restore applies changelog records: a value (header v=3) buffers its key (a key already
// buffered keeps its place), a tombstone removes the key. Java: restoreBatch.
func (b *SuppressBuffer) restore(batch []processor.RestoreRecord) error {
	for _, rec := range batch {
		if rec.Value == nil {
			if e, ok := b.index[string(rec.Key)]; ok {
				b.remove(e)
			}
			continue
		}
		v, ok := rec.Headers.LastHeader("v")
		if !ok || !bytes.Equal(v.Value, []byte{3}) {
			return fmt.Errorf("%w: store %s, partition %d, offset %d: version header %v (only version 3 is read)",
				ErrSuppressChangelog, b.name, rec.Partition, rec.Offset, v.Value)
		}
		e, err := decodeBufEntry(rec.Key, rec.Value)
		if err != nil {
			return fmt.Errorf("%w: store %s, partition %d, offset %d", err, b.name, rec.Partition, rec.Offset)
		}
		e.recordBytes = e.computeSize()
		if prev, ok := b.index[string(e.kb)]; ok {
			e.time = prev.time
			b.size += e.recordBytes - prev.recordBytes
			*prev = *e
			continue
		}
		b.insert(e)
	}
	return nil
}

// Close drops the buffer.
func (b *SuppressBuffer) Close() error {
	b.open = false
	b.entries, b.index, b.dirty, b.size = nil, nil, nil, 0
	return nil
}

// Persistent returns false: the buffer lives in memory and is rebuilt from its changelog.
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
	b.markDirty(e.kb)
	if prev, ok := b.index[string(e.kb)]; ok {
		e.time, e.prior = prev.time, prev.prior
		e.sameOld = javaEqual(e.prior, e.old)
		e.recordBytes = e.computeSize()
		b.size += e.recordBytes - prev.recordBytes
		*prev = *e
		return
	}
	e.prior, e.sameOld = e.old, true
	e.recordBytes = e.computeSize()
	b.insert(e)
}

func (b *SuppressBuffer) search(e *bufEntry) (int, bool) {
	return slices.BinarySearchFunc(b.entries, e, func(x, y *bufEntry) int {
		if b.less(x, y.time, y.kb) {
			return -1
		}
		if x.time == y.time && bytes.Equal(x.kb, y.kb) {
			return 0
		}
		return 1
	})
}

func (b *SuppressBuffer) insert(e *bufEntry) {
	i, _ := b.search(e)
	b.entries = slices.Insert(b.entries, i, e)
	b.index[string(e.kb)] = e
	b.size += e.recordBytes
}

// remove drops a buffered entry (a restored tombstone).
func (b *SuppressBuffer) remove(e *bufEntry) {
	if i, ok := b.search(e); ok {
		b.entries = slices.Delete(b.entries, i, i+1)
	}
	delete(b.index, string(e.kb))
	b.size -= e.recordBytes
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
	b.markDirty(e.kb)
	return e
}

// SuppressBufferBuilder builds a SuppressBuffer; it satisfies processor.StoreBuilder. The
// buffer is logged to "<application.id>-<store>-changelog" unless LoggingDisabled (Java:
// BufferConfig.withLoggingDisabled); LogConfigs are the changelog topic's extra configs
// (Java: withLoggingEnabled(config)).
type SuppressBufferBuilder struct {
	StoreName       string
	LoggingDisabled bool
	LogConfigs      map[string]string
}

// Name returns the store name.
func (s SuppressBufferBuilder) Name() string { return s.StoreName }

// Build returns a new buffer.
func (s SuppressBufferBuilder) Build() (processor.StateStore, error) {
	return &SuppressBuffer{name: s.StoreName, logging: !s.LoggingDisabled}, nil
}

// LoggingEnabled reports whether the buffer has a changelog (default true).
func (s SuppressBufferBuilder) LoggingEnabled() bool { return !s.LoggingDisabled }

// LogConfig returns the changelog topic's extra configs (nil without logging).
func (s SuppressBufferBuilder) LogConfig() map[string]string {
	if s.LoggingDisabled {
		return nil
	}
	return s.LogConfigs
}

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
	if e.restored {
		if err := p.decode(e); err != nil {
			return err
		}
	}
	if e.change.New == nil && p.s.cfg.SafeToDropTombstones {
		return nil
	}
	rec := processor.Record[any, any]{Key: e.key, Value: Change{New: e.change.New, Old: e.change.Old}, Timestamp: e.ts, Headers: e.headers}
	// Java forwards with the buffered record's context (its topic, partition and offset).
	if p.buf.rca != nil {
		defer p.buf.rca.SetRecordContext(processor.RecordContext{Topic: e.topic, Partition: e.partition, Offset: e.offset,
			Timestamp: e.ts, Headers: e.headers})()
	}
	return p.ctx.Forward(rec)
}

// recordContextSetter is storeapi.RecordContextAccess's setter, on the engine's context.
type recordContextSetter interface {
	SetRecordContext(rc processor.RecordContext) (restore func())
}

// decode turns a restored entry's bytes into its key and change (Java deserializes every
// evicted entry with the buffer's serdes).
func (p *suppressProc) decode(e *bufEntry) error {
	topic := p.s.cfg.StoreName + "-changelog"
	var err error
	if e.key, err = p.deser(p.keySerde, topic, e.kb); err != nil {
		return fmt.Errorf("suppress %s: deserialize key: %w", p.s.cfg.StoreName, err)
	}
	if e.change.New, err = p.deser(p.valueSerde, topic, e.newB); err != nil {
		return fmt.Errorf("suppress %s: deserialize new value: %w", p.s.cfg.StoreName, err)
	}
	if e.change.Old, err = p.deser(p.valueSerde, topic, e.old); err != nil {
		return fmt.Errorf("suppress %s: deserialize old value: %w", p.s.cfg.StoreName, err)
	}
	e.restored = false
	return nil
}

func (p *suppressProc) deser(s serde.Serde[any], topic string, b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	if s == nil {
		return nil, fmt.Errorf("no serde for a restored entry")
	}
	return s.Deserialize(topic, nil, b)
}
