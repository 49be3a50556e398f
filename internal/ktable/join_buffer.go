package ktable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// timeFirstPrefix is the first byte of a time-first window key (Java:
// PrefixedWindowKeySchemas.TimeFirstWindowKeySchema).
const timeFirstPrefix = 0x00

// ErrJoinBufferChangelog is returned when a stream-table join buffer's changelog record cannot
// be read (a key shorter than prefix + timestamp + sequence number or with another prefix, or a
// truncated value).
var ErrJoinBufferChangelog = errors.New("stream-table join buffer: invalid changelog record")

// JoinBuffer is the time-ordered buffer of a stream-table join with a grace period (KIP-923):
// stream records wait in it, ordered by (timestamp, serialized key, sequence number), until the
// buffer's stream time (the largest timestamp put into it) passes their timestamp by more than
// the grace period. It lives in memory and, with logging on (the default, as in Java), is backed
// by the changelog topic "<application.id>-<store>-changelog" in Java's layout: every put is
// logged at once with key = the prefix byte 0x00 of Java's time-first key schema, the timestamp
// (int64), the serialized key and a sequence number (int32: 1, 2, ... per buffer instance,
// wrapping at 2^31), and value = the record context (see appendRecordContext), the prior and old
// values (both null, int32 -1), the new value (int32 length + serialized value) and the buffer
// time (int64, always 0); every eviction logs a tombstone for the key. The records carry no
// headers and the wall-clock time as timestamp. Java counterpart: RocksDBTimeOrderedKeyValueBuffer
// over RocksDBTimeOrderedKeyValueBytesStore (the store name is "<join processor>-Buffer").
type JoinBuffer struct {
	name    string
	graceMs int64
	logging bool
	open    bool
	// entries are ordered by their store key (bytes), as Java's time-first key schema orders
	// them in RocksDB.
	entries  []*joinBufEntry
	observed int64
	seq      int32

	logger bufferLogger
	clock  interface{ CurrentSystemTimeMs() int64 }
	rca    recordContextSetter
}

type joinBufEntry struct {
	sk        []byte // timestamp + key bytes + seqnum
	vb        []byte // serialized value
	ts        int64
	offset    int64
	topic     string
	partition int32
	headers   serde.Headers
}

// Name returns the store name.
func (b *JoinBuffer) Name() string { return b.name }

// GraceMs returns the grace period in ms.
func (b *JoinBuffer) GraceMs() int64 { return b.graceMs }

// Init opens the buffer and registers it for restore from its changelog.
func (b *JoinBuffer) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	b.open = true
	b.entries, b.observed, b.seq = nil, -1, 0
	b.logger, _ = ctx.(bufferLogger)
	b.clock, _ = ctx.(interface{ CurrentSystemTimeMs() int64 })
	b.rca, _ = ctx.(recordContextSetter)
	if root == nil {
		root = b
	}
	return ctx.Register(root, b.restore)
}

// Flush does nothing: every change is logged when it happens.
func (b *JoinBuffer) Flush() error { return nil }

// Close drops the buffer.
func (b *JoinBuffer) Close() error {
	b.open = false
	b.entries = nil
	return nil
}

// Persistent returns false: the buffer lives in memory and is rebuilt from its changelog.
func (b *JoinBuffer) Persistent() bool { return false }

// IsOpen reports whether the buffer is open.
func (b *JoinBuffer) IsOpen() bool { return b.open }

// NumRecords returns the number of buffered records.
func (b *JoinBuffer) NumRecords() int { return len(b.entries) }

// ObservedStreamTime returns the largest timestamp put into (or restored into) the buffer, -1
// before the first.
func (b *JoinBuffer) ObservedStreamTime() int64 { return b.observed }

// BufferedRecord is a record held by a JoinBuffer: serialized key and value and the context of
// the record that was buffered.
type BufferedRecord struct {
	Key, Value []byte
	Context    processor.RecordContext
}

// Put buffers a record (key and value serialized, both non-nil) with its context and reports
// true, or reports false without buffering when it is late: its timestamp is older than the
// buffer's stream time minus the grace period. Java: RocksDBTimeOrderedKeyValueBuffer.put.
func (b *JoinBuffer) Put(key, value []byte, rc processor.RecordContext) (bool, error) {
	if b.observed-b.graceMs > rc.Timestamp {
		return false, nil
	}
	b.seq = (b.seq + 1) & 0x7fffffff
	sk := binary.BigEndian.AppendUint64([]byte{timeFirstPrefix}, uint64(rc.Timestamp))
	sk = append(sk, key...)
	sk = binary.BigEndian.AppendUint32(sk, uint32(b.seq))
	e := &joinBufEntry{sk: sk, vb: value, ts: rc.Timestamp, offset: rc.Offset, topic: rc.Topic, partition: rc.Partition,
		headers: rc.Headers.Clone()}
	b.observed = max(b.observed, rc.Timestamp)
	b.insert(e)
	return true, b.log(sk, e.encode())
}

// EvictExpired removes, in store-key order, every record whose timestamp is at most the
// buffer's stream time minus the grace period, calling emit for each while the engine's record
// context is the buffered record's (its topic, partition, offset, timestamp and headers).
// Java: evictWhile(() -> true, callback).
func (b *JoinBuffer) EvictExpired(emit func(BufferedRecord) error) error {
	limit := b.observed - b.graceMs
	for len(b.entries) > 0 && b.entries[0].ts <= limit {
		e := b.entries[0]
		b.entries[0] = nil
		b.entries = b.entries[1:]
		if err := b.log(e.sk, nil); err != nil {
			return err
		}
		rc := processor.RecordContext{Topic: e.topic, Partition: e.partition, Offset: e.offset, Timestamp: e.ts, Headers: e.headers}
		if err := b.emitWith(emit, BufferedRecord{Key: e.sk[9 : len(e.sk)-4], Value: e.vb, Context: rc}); err != nil {
			return err
		}
	}
	return nil
}

func (b *JoinBuffer) emitWith(emit func(BufferedRecord) error, r BufferedRecord) error {
	if b.rca != nil {
		defer b.rca.SetRecordContext(r.Context)()
	}
	return emit(r)
}

func (b *JoinBuffer) log(key, value []byte) error {
	if !b.logging || b.logger == nil {
		return nil
	}
	var now int64
	if b.clock != nil {
		now = b.clock.CurrentSystemTimeMs()
	}
	if err := b.logger.LogChangeWithHeaders(b.name, key, value, now, serde.Headers{}); err != nil {
		return fmt.Errorf("stream-table join buffer %s: log change: %w", b.name, err)
	}
	return nil
}

// encode returns the changelog value (Java: BufferValue(null, null, value, context).serialize(8)
// with buffer time 0).
func (e *joinBufEntry) encode() []byte {
	out := appendRecordContext(nil, e.ts, e.offset, e.topic, e.partition, e.headers)
	out = binary.BigEndian.AppendUint32(out, nullLen) // prior value
	out = binary.BigEndian.AppendUint32(out, nullLen) // old value
	out = appendBytes(out, e.vb)
	return binary.BigEndian.AppendUint64(out, 0)
}

func (b *JoinBuffer) search(sk []byte) (int, bool) {
	return slices.BinarySearchFunc(b.entries, sk, func(x *joinBufEntry, k []byte) int { return bytes.Compare(x.sk, k) })
}

func (b *JoinBuffer) insert(e *joinBufEntry) {
	i, found := b.search(e.sk)
	if found {
		b.entries[i] = e
		return
	}
	b.entries = slices.Insert(b.entries, i, e)
}

// restore applies changelog records: a value buffers the record under its key, a tombstone
// removes it. The buffer's stream time follows the restored keys' timestamps, as Java's store
// does.
func (b *JoinBuffer) restore(batch []processor.RestoreRecord) error {
	for _, rec := range batch {
		if len(rec.Key) < 13 || rec.Key[0] != timeFirstPrefix {
			return fmt.Errorf("%w: store %s, partition %d, offset %d: key of %d bytes", ErrJoinBufferChangelog, b.name, rec.Partition, rec.Offset, len(rec.Key))
		}
		ts := int64(binary.BigEndian.Uint64(rec.Key[1:]))
		b.observed = max(b.observed, ts)
		if rec.Value == nil {
			if i, ok := b.search(rec.Key); ok {
				b.entries = slices.Delete(b.entries, i, i+1)
			}
			continue
		}
		r := &bufReader{b: rec.Value}
		e := &joinBufEntry{sk: append([]byte{}, rec.Key...)}
		e.ts, e.offset, e.topic, e.partition, e.headers = r.recordContext()
		r.nullable() // prior value
		if n := r.int32(); n != -1 && n != -2 {
			r.bytesOf(n) // old value
		}
		e.vb = r.nullable()
		r.int64() // buffer time
		if r.err != nil || len(r.b) != 0 || e.vb == nil {
			return fmt.Errorf("%w: store %s, partition %d, offset %d", ErrJoinBufferChangelog, b.name, rec.Partition, rec.Offset)
		}
		b.insert(e)
	}
	return nil
}

// JoinBufferBuilder builds a JoinBuffer; it satisfies processor.StoreBuilder. The buffer is
// logged to "<application.id>-<store>-changelog" unless LoggingDisabled.
type JoinBufferBuilder struct {
	StoreName       string
	GraceMs         int64
	LoggingDisabled bool
	LogConfigs      map[string]string
}

// Name returns the store name.
func (s JoinBufferBuilder) Name() string { return s.StoreName }

// Build returns a new buffer.
func (s JoinBufferBuilder) Build() (processor.StateStore, error) {
	return &JoinBuffer{name: s.StoreName, graceMs: s.GraceMs, logging: !s.LoggingDisabled, observed: -1}, nil
}

// LoggingEnabled reports whether the buffer has a changelog (default true).
func (s JoinBufferBuilder) LoggingEnabled() bool { return !s.LoggingDisabled }

// LogConfig returns the changelog topic's extra configs (nil without logging).
func (s JoinBufferBuilder) LogConfig() map[string]string {
	if s.LoggingDisabled {
		return nil
	}
	return s.LogConfigs
}
