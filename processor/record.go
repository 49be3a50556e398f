package processor

import (
	"github.com/kstreams-go/kstreams/serde"
)

// Record is a data record flowing through a topology: a key, a value, a timestamp in
// milliseconds since the epoch and headers. It is the counterpart of Java's
// org.apache.kafka.streams.processor.api.Record<K, V>.
//
// A Record is a value: copying it is cheap, and the With* methods return modified copies,
// leaving the receiver untouched, as Java's immutable Record does. Unlike Java, the fields are
// exported; the Java accessors key(), value(), timestamp() and headers() are the fields Key,
// Value, Timestamp and Headers. A nil key or value (for nillable K/V) is Java's null.
//
// Java's constructor rejects a negative timestamp; here a negative Timestamp is rejected when
// the record is forwarded ([ProcessingContext] implementations return [ErrInvalidTimestamp]).
type Record[K, V any] struct {
	// Key is the record key; Java null is the zero value (nil for nillable types).
	Key K
	// Value is the record value; Java null is the zero value (nil for nillable types).
	Value V
	// Timestamp is the record timestamp in milliseconds since the epoch; never negative when
	// forwarded.
	Timestamp int64
	// Headers are the record headers (an ordered list; the zero value is empty).
	Headers serde.Headers
}

// NewRecord returns a Record with the given key, value and timestamp (ms) and no headers.
// Java counterpart: new Record<>(key, value, timestamp).
func NewRecord[K, V any](key K, value V, timestamp int64) Record[K, V] {
	return Record[K, V]{Key: key, Value: value, Timestamp: timestamp}
}

// NewRecordWithHeaders returns a Record with the given key, value, timestamp (ms) and a copy
// of headers. Java counterpart: new Record<>(key, value, timestamp, headers).
func NewRecordWithHeaders[K, V any](key K, value V, timestamp int64, headers serde.Headers) Record[K, V] {
	return Record[K, V]{Key: key, Value: value, Timestamp: timestamp, Headers: cloneHeaders(headers)}
}

// WithKey returns a copy of the record with a new key, possibly of another type; value,
// timestamp and (a copy of the) headers are kept. Java counterpart: Record.withKey.
func (r Record[K, V]) WithKey[NewK any](key NewK) Record[NewK, V] {
	return Record[NewK, V]{Key: key, Value: r.Value, Timestamp: r.Timestamp, Headers: cloneHeaders(r.Headers)}
}

// WithValue returns a copy of the record with a new value, possibly of another type; key,
// timestamp and (a copy of the) headers are kept. Java counterpart: Record.withValue.
func (r Record[K, V]) WithValue[NewV any](value NewV) Record[K, NewV] {
	return Record[K, NewV]{Key: r.Key, Value: value, Timestamp: r.Timestamp, Headers: cloneHeaders(r.Headers)}
}

// WithTimestamp returns a copy of the record with a new timestamp in ms. Java counterpart:
// Record.withTimestamp (which throws on a negative timestamp; here the forward does).
func (r Record[K, V]) WithTimestamp(timestamp int64) Record[K, V] {
	return Record[K, V]{Key: r.Key, Value: r.Value, Timestamp: timestamp, Headers: cloneHeaders(r.Headers)}
}

// WithHeaders returns a copy of the record carrying a copy of headers. Java counterpart:
// Record.withHeaders.
func (r Record[K, V]) WithHeaders(headers serde.Headers) Record[K, V] {
	return Record[K, V]{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Headers: cloneHeaders(headers)}
}

// FixedKeyRecord is a record whose key cannot be changed: the input and output of a
// [FixedKeyProcessor]. It is the counterpart of Java's
// org.apache.kafka.streams.processor.api.FixedKeyRecord<K, V>. Its fields are read through
// methods so that the key stays fixed; the With* methods return modified copies.
//
// Applications do not construct a FixedKeyRecord; the engine does, with
// [NewFixedKeyRecordFromRecord] (tests of fixed-key processors may use it too).
type FixedKeyRecord[K, V any] struct {
	key       K
	value     V
	timestamp int64
	headers   serde.Headers
}

// NewFixedKeyRecordFromRecord turns a Record into a FixedKeyRecord (copying headers). It is
// meant for the processing engine and for unit tests of fixed-key processors. Java counterpart:
// org.apache.kafka.streams.processor.api.InternalFixedKeyRecordFactory.create.
func NewFixedKeyRecordFromRecord[K, V any](r Record[K, V]) FixedKeyRecord[K, V] {
	return FixedKeyRecord[K, V]{key: r.Key, value: r.Value, timestamp: r.Timestamp, headers: cloneHeaders(r.Headers)}
}

// Key returns the (fixed) key. Java: FixedKeyRecord.key().
func (r FixedKeyRecord[K, V]) Key() K { return r.key }

// Value returns the value. Java: FixedKeyRecord.value().
func (r FixedKeyRecord[K, V]) Value() V { return r.value }

// Timestamp returns the timestamp in ms since the epoch. Java: FixedKeyRecord.timestamp().
func (r FixedKeyRecord[K, V]) Timestamp() int64 { return r.timestamp }

// Headers returns the headers, for reading (the pointer is to this copy of the record;
// changes through it are not kept by the record: use WithHeaders). Java: FixedKeyRecord.headers().
func (r FixedKeyRecord[K, V]) Headers() *serde.Headers { return &r.headers }

// WithValue returns a copy with a new value, possibly of another type. Java:
// FixedKeyRecord.withValue.
func (r FixedKeyRecord[K, V]) WithValue[NewV any](value NewV) FixedKeyRecord[K, NewV] {
	return FixedKeyRecord[K, NewV]{key: r.key, value: value, timestamp: r.timestamp, headers: cloneHeaders(r.headers)}
}

// WithTimestamp returns a copy with a new timestamp in ms. Java: FixedKeyRecord.withTimestamp.
func (r FixedKeyRecord[K, V]) WithTimestamp(timestamp int64) FixedKeyRecord[K, V] {
	return FixedKeyRecord[K, V]{key: r.key, value: r.value, timestamp: timestamp, headers: cloneHeaders(r.headers)}
}

// WithHeaders returns a copy carrying a copy of headers. Java: FixedKeyRecord.withHeaders.
func (r FixedKeyRecord[K, V]) WithHeaders(headers serde.Headers) FixedKeyRecord[K, V] {
	return FixedKeyRecord[K, V]{key: r.key, value: r.value, timestamp: r.timestamp, headers: cloneHeaders(headers)}
}

// ToRecord returns the record as a plain Record (copying headers); used by engines that
// forward fixed-key records through the untyped graph.
func (r FixedKeyRecord[K, V]) ToRecord() Record[K, V] {
	return Record[K, V]{Key: r.key, Value: r.value, Timestamp: r.timestamp, Headers: cloneHeaders(r.headers)}
}

// cloneHeaders copies the header list (not the value bytes), as Java's Record constructor
// copies its headers into a new RecordHeaders.
func cloneHeaders(h serde.Headers) serde.Headers {
	if h.Len() == 0 {
		return serde.Headers{}
	}
	return *serde.NewHeaders(h.ToSlice()...)
}
