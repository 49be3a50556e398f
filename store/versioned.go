package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"math"
	"sync"

	"github.com/kstreams-go/kstreams/processor"
)

// Versioned key-value stores (KIP-889).
//
// A versioned store keeps, per key, the record versions of the last history retention: each
// version has a value (or is a tombstone), the timestamp it is valid from and the timestamp it
// is valid to (the timestamp of the next version; none for the latest). Puts may arrive out of
// timestamp order; a put older than the history retention (stream time of the store minus the
// history retention, which doubles as the grace period, as in Java) is not put.
//
// On-disk layout (ours; Java's RocksDB segments are not copied). Both engines keep their
// entries in one ordered bytes-level key-value store (a Pebble database at
// <task state dir>/pebble/<name>, or the in-memory skip list), in three key spaces:
//
//	0x00 ‖ key                                         -> int64 validFrom ‖ value   (latest version, never a tombstone)
//	0x01 ‖ uint32 len(key) ‖ key ‖ ts(validFrom)        -> int64 validTo ‖ flag ‖ value   (older versions; flag 0: tombstone)
//	0x02 ‖ ts(validTo) ‖ uint32 len(key) ‖ key ‖ ts(validFrom) -> empty   (expiry index of the older versions)
//
// ts(t) is t big-endian with its sign bit flipped, so that timestamps order as signed numbers.
// An older version with validFrom == validTo marks a tombstone that is newer than every value of
// its key (Java's "degenerate segment"). Versions whose validTo is at or before the history
// retention bound are deleted as stream time advances (they can no longer be returned); the
// latest version never expires. The store's stream time is not stored: after a restart it is
// the largest timestamp put or restored since (as Java's RocksDBVersionedStore does).
//
// Changelog: the record's key is the key, its value the plain value (nil for a delete) and its
// timestamp the version's timestamp, as Java's ChangeLoggingVersionedKeyValueBytesStore writes
// it; restore puts each record again at its timestamp.

// PutReturnCodeValidToUndefined is returned by a versioned put when the record put is the
// latest version of its key (its validTo is undefined). Java:
// VersionedKeyValueStore.PUT_RETURN_CODE_VALID_TO_UNDEFINED (-1).
const PutReturnCodeValidToUndefined int64 = -1

// PutReturnCodeNotPut is returned by a versioned put that was not applied because its
// timestamp is older than the store's history retention. Java:
// VersionedKeyValueStore.PUT_RETURN_CODE_NOT_PUT (Long.MIN_VALUE).
const PutReturnCodeNotPut int64 = math.MinInt64

// VersionedRecord is one version of a key in a versioned store: its value, the timestamp (ms)
// it is valid from and, unless it is the latest version, the timestamp (ms) it is valid to
// (exclusive). Java counterpart: org.apache.kafka.streams.state.VersionedRecord (validTo is
// Optional<Long> there; here HasValidTo says whether ValidTo is set).
type VersionedRecord[V any] struct {
	// Value is the value (never null: a null version is a missing record).
	Value V
	// Timestamp is the timestamp (ms) the version is valid from.
	Timestamp int64
	// ValidTo is the timestamp (ms) the version is valid to (exclusive), when HasValidTo.
	ValidTo int64
	// HasValidTo is false for the latest version of a key.
	HasValidTo bool
}

// VersionedKeyValueStore is a key-value store that keeps the history of each key's values
// for its history retention. Java counterpart: org.apache.kafka.streams.state.VersionedKeyValueStore.
type VersionedKeyValueStore[K, V any] interface {
	StateStore
	// Put adds a version of key valid from timestamp (ms); a nil value (nil pointer, slice, map
	// or interface) is a tombstone. It returns the validTo of the version put,
	// PutReturnCodeValidToUndefined when it is the latest one, or PutReturnCodeNotPut when
	// timestamp is older than the history retention (stream time minus history retention).
	// Errors: ErrNullKey, ErrStoreClosed, serialization errors. Java: put(key, value, timestamp).
	Put(key K, value V, timestamp int64) (int64, error)
	// Delete puts a tombstone for key at timestamp and returns the version that was valid at
	// timestamp before, or nil (also when timestamp is older than the history retention, and
	// then nothing is deleted). Java: delete(key, timestamp).
	Delete(key K, timestamp int64) (*VersionedRecord[V], error)
	// Get returns the latest version of key, or nil when the key has none or its latest
	// version is a tombstone. Java: get(key).
	Get(key K) (*VersionedRecord[V], error)
	// GetAsOf returns the version of key valid at asOfTimestamp (ms): the one with the largest
	// timestamp <= asOfTimestamp, or nil (no version, a tombstone, or asOfTimestamp older than
	// the history retention while the latest version is newer than asOfTimestamp).
	// Java: get(key, asOfTimestamp).
	GetAsOf(key K, asOfTimestamp int64) (*VersionedRecord[V], error)
}

// VersionedBytesStore is the bytes-level versioned store an engine implements (keys and values
// are raw bytes; a nil value is a tombstone). Java counterpart:
// org.apache.kafka.streams.state.VersionedBytesStore (with VersionedKeyValueStore<Bytes, byte[]>).
type VersionedBytesStore = VersionedKeyValueStore[[]byte, []byte]

const (
	nsVerLatest  = 0x00
	nsVerHistory = 0x01
	nsVerExpiry  = 0x02
)

// errBadVersionedEntry is returned (wrapped) when an entry of a versioned store's engine
// cannot be decoded.
var errBadVersionedEntry = errors.New("store: malformed versioned store entry")

func encTs(b []byte, ts int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(ts)^(1<<63)) }
func decTs(b []byte) int64            { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

func verLatestKey(key []byte) []byte {
	return append(append(make([]byte, 0, 1+len(key)), nsVerLatest), key...)
}

func verHistPrefix(key []byte) []byte {
	b := make([]byte, 0, 1+4+len(key)+8)
	b = append(b, nsVerHistory)
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	return append(b, key...)
}

func verHistKey(prefix []byte, from int64) []byte {
	return encTs(append(make([]byte, 0, len(prefix)+8), prefix...), from)
}

func verExpiryKey(to int64, key []byte, from int64) []byte {
	b := make([]byte, 0, 1+8+4+len(key)+8)
	b = append(b, nsVerExpiry)
	b = encTs(b, to)
	b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
	b = append(b, key...)
	return encTs(b, from)
}

// version is one older version as held in the history key space.
type version struct {
	from, to int64
	value    []byte // nil: tombstone
}

func encVersion(to int64, value []byte) []byte {
	b := make([]byte, 0, 9+len(value))
	b = binary.BigEndian.AppendUint64(b, uint64(to))
	if value == nil {
		return append(b, 0)
	}
	return append(append(b, 1), value...)
}

func decVersion(from int64, v []byte) (version, error) {
	if len(v) < 9 {
		return version{}, errBadVersionedEntry
	}
	out := version{from: from, to: int64(binary.BigEndian.Uint64(v))}
	if v[8] == 1 {
		out.value = bytes.Clone(v[9:])
		if out.value == nil {
			out.value = []byte{}
		}
	}
	return out, nil
}

// versionedEngine is the versioned store logic over an ordered bytes-level key-value store.
type versionedEngine struct {
	name      string
	retention int64
	segment   int64
	inner     KeyValueBytesStore

	mu       sync.RWMutex
	observed int64 // stream time of the store (Java's observedStreamTime), -1 before any put
	minTo    int64 // no older version has validTo below this (expiry scan hint)
}

func newVersionedEngine(name string, retention, segment int64, inner KeyValueBytesStore) *versionedEngine {
	return &versionedEngine{name: name, retention: retention, segment: segment, inner: inner, observed: -1, minTo: math.MinInt64}
}

// Name returns the store name.
func (e *versionedEngine) Name() string { return e.name }

// HistoryRetentionMs implements [storeapi.VersionedEngine].
func (e *versionedEngine) HistoryRetentionMs() int64 { return e.retention }

// SegmentIntervalMs returns the segment interval given to the supplier (ms). Our layout has no
// segments; the value is kept for the Java API.
func (e *versionedEngine) SegmentIntervalMs() int64 { return e.segment }

// Init opens the engine below (its own changelog registration is replaced by the versioned
// store's) and registers root with a restore callback that puts every changelog record at its
// timestamp.
func (e *versionedEngine) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	var inner processor.StateStoreContext
	if ctx != nil {
		inner = &noRegisterContext{StateStoreContext: ctx}
	}
	if err := e.inner.Init(inner, e.inner); err != nil {
		return err
	}
	e.mu.Lock()
	e.observed, e.minTo = -1, math.MinInt64
	e.mu.Unlock()
	if ctx != nil {
		if err := ctx.Register(root, e.restoreBatch); err != nil {
			_ = e.inner.Close()
			return storeErr(e.name, "init", err)
		}
	}
	return nil
}

// noRegisterContext hands the versioned engine's context to the key-value engine below without
// letting it register itself for restore.
type noRegisterContext struct {
	processor.StateStoreContext
}

func (c *noRegisterContext) Register(processor.StateStore, processor.StateRestoreCallback) error {
	return nil
}

// PebbleEnv forwards the context's Pebble environment, if any.
func (c *noRegisterContext) PebbleEnv() storeapi.PebbleEnv {
	if p, ok := c.StateStoreContext.(pebbleEnvProvider); ok {
		return p.PebbleEnv()
	}
	return nil
}

// Flush flushes the engine below.
func (e *versionedEngine) Flush() error { return e.inner.Flush() }

// Close closes the engine below.
func (e *versionedEngine) Close() error { return e.inner.Close() }

// Persistent reports whether the engine below is persistent.
func (e *versionedEngine) Persistent() bool { return e.inner.Persistent() }

// IsOpen reports whether the store is open.
func (e *versionedEngine) IsOpen() bool { return e.inner.IsOpen() }

func (e *versionedEngine) checkOpen(op string) error {
	if !e.inner.IsOpen() {
		return storeErr(e.name, op, ErrStoreClosed)
	}
	return nil
}

// Put implements [VersionedBytesStore].
func (e *versionedEngine) Put(key, value []byte, timestamp int64) (int64, error) {
	if key == nil {
		return 0, storeErr(e.name, "put", ErrNullKey)
	}
	if err := e.checkOpen("put"); err != nil {
		return 0, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if timestamp < e.observed-e.retention {
		return PutReturnCodeNotPut, nil
	}
	e.observed = max(e.observed, timestamp)
	res, err := e.doPut(key, value, timestamp)
	return res, storeErr(e.name, "put", err)
}

// Delete implements [VersionedBytesStore].
func (e *versionedEngine) Delete(key []byte, timestamp int64) (*VersionedRecord[[]byte], error) {
	if key == nil {
		return nil, storeErr(e.name, "delete", ErrNullKey)
	}
	if err := e.checkOpen("delete"); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if timestamp < e.observed-e.retention {
		return nil, nil
	}
	old, err := e.getAsOf(key, timestamp)
	if err != nil {
		return nil, storeErr(e.name, "delete", err)
	}
	e.observed = max(e.observed, timestamp)
	if _, err := e.doPut(key, nil, timestamp); err != nil {
		return nil, storeErr(e.name, "delete", err)
	}
	return old, nil
}

// Get implements [VersionedBytesStore].
func (e *versionedEngine) Get(key []byte) (*VersionedRecord[[]byte], error) {
	if key == nil {
		return nil, storeErr(e.name, "get", ErrNullKey)
	}
	if err := e.checkOpen("get"); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	r, err := e.latest(key)
	return r, storeErr(e.name, "get", err)
}

// GetAsOf implements [VersionedBytesStore].
func (e *versionedEngine) GetAsOf(key []byte, asOfTimestamp int64) (*VersionedRecord[[]byte], error) {
	if key == nil {
		return nil, storeErr(e.name, "get", ErrNullKey)
	}
	if err := e.checkOpen("get"); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	r, err := e.getAsOf(key, asOfTimestamp)
	return r, storeErr(e.name, "get", err)
}

func (e *versionedEngine) latest(key []byte) (*VersionedRecord[[]byte], error) {
	v, ok, err := e.inner.Get(verLatestKey(key))
	if err != nil || !ok {
		return nil, err
	}
	if len(v) < 8 {
		return nil, errBadVersionedEntry
	}
	val := bytes.Clone(v[8:])
	if val == nil {
		val = []byte{}
	}
	return &VersionedRecord[[]byte]{Value: val, Timestamp: int64(binary.BigEndian.Uint64(v))}, nil
}

func (e *versionedEngine) getAsOf(key []byte, asOf int64) (*VersionedRecord[[]byte], error) {
	l, err := e.latest(key)
	if err != nil {
		return nil, err
	}
	if l != nil && l.Timestamp <= asOf {
		return l, nil
	}
	if asOf < e.observed-e.retention {
		// Beyond the history retention only the latest version is returned (Java returns null
		// "for predictability" even when older data is still held).
		return nil, nil
	}
	p, err := e.floor(verHistPrefix(key), asOf)
	if err != nil || p == nil || p.to <= asOf || p.value == nil {
		return nil, err
	}
	return &VersionedRecord[[]byte]{Value: p.value, Timestamp: p.from, ValidTo: p.to, HasValidTo: true}, nil
}

// floor returns the older version of the key (history prefix) with the largest validFrom <= ts.
func (e *versionedEngine) floor(prefix []byte, ts int64) (*version, error) {
	it := e.inner.ReverseRange(verHistKey(prefix, math.MinInt64), verHistKey(prefix, ts))
	defer it.Close()
	if !it.Next() {
		return nil, it.Err()
	}
	v, err := decVersion(decTs(it.Key()[len(prefix):]), it.Value())
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// ceilAfter returns the validFrom of the older version of the key with the smallest validFrom > ts.
func (e *versionedEngine) ceilAfter(prefix []byte, ts int64) (int64, bool, error) {
	if ts == math.MaxInt64 {
		return 0, false, nil
	}
	it := e.inner.Range(verHistKey(prefix, ts+1), verHistKey(prefix, math.MaxInt64))
	defer it.Close()
	if !it.Next() {
		return 0, false, it.Err()
	}
	return decTs(it.Key()[len(prefix):]), true, nil
}

// writeVersion writes an older version (and its expiry entry); oldTo is the validTo of the
// entry it replaces at the same validFrom, if hadOld.
func (e *versionedEngine) writeVersion(key, prefix []byte, v version, oldTo int64, hadOld bool) error {
	if hadOld && oldTo != v.to {
		if _, _, err := e.inner.Delete(verExpiryKey(oldTo, key, v.from)); err != nil {
			return err
		}
	}
	if err := e.inner.Put(verHistKey(prefix, v.from), encVersion(v.to, v.value)); err != nil {
		return err
	}
	if !hadOld || oldTo != v.to {
		if err := e.inner.Put(verExpiryKey(v.to, key, v.from), []byte{}); err != nil {
			return err
		}
	}
	e.minTo = min(e.minTo, v.to)
	return nil
}

// existingTo returns the validTo of the older version at exactly from, if any.
func (e *versionedEngine) existingTo(prefix []byte, from int64) (int64, bool, error) {
	raw, ok, err := e.inner.Get(verHistKey(prefix, from))
	if err != nil || !ok {
		return 0, false, err
	}
	v, err := decVersion(from, raw)
	return v.to, err == nil, err
}

func (e *versionedEngine) addVersion(key, prefix []byte, v version) error {
	oldTo, had, err := e.existingTo(prefix, v.from)
	if err != nil {
		return err
	}
	return e.writeVersion(key, prefix, v, oldTo, had)
}

// doPut puts one version, the stream time already advanced; it follows the outcome of Java's
// RocksDBVersionedStore.doPut for puts within the grace period.
func (e *versionedEngine) doPut(key, value []byte, ts int64) (int64, error) {
	if err := e.expire(e.observed - e.retention); err != nil {
		return 0, err
	}
	prefix := verHistPrefix(key)
	l, err := e.latest(key)
	if err != nil {
		return 0, err
	}
	if l != nil && ts >= l.Timestamp {
		if ts > l.Timestamp {
			// The latest version becomes an older one, valid to ts.
			if err := e.addVersion(key, prefix, version{from: l.Timestamp, to: ts, value: l.Value}); err != nil {
				return 0, err
			}
		}
		if value != nil {
			err = e.inner.Put(verLatestKey(key), latestBytes(ts, value))
		} else {
			_, _, err = e.inner.Delete(verLatestKey(key))
		}
		return PutReturnCodeValidToUndefined, err
	}
	found, hasFound := int64(0), false
	if l != nil {
		found, hasFound = l.Timestamp, true
	}
	p, err := e.floor(prefix, ts)
	if err != nil {
		return 0, err
	}
	if p != nil && p.to > ts {
		// ts falls within an older version: replace it (same validFrom) or split it.
		if p.from == ts {
			return p.to, e.writeVersion(key, prefix, version{from: ts, to: p.to, value: value}, p.to, true)
		}
		if err := e.writeVersion(key, prefix, version{from: p.from, to: ts, value: p.value}, p.to, true); err != nil {
			return 0, err
		}
		return p.to, e.addVersion(key, prefix, version{from: ts, to: p.to, value: value})
	}
	if next, ok, err := e.ceilAfter(prefix, ts); err != nil {
		return 0, err
	} else if ok && (!hasFound || next < found) {
		found, hasFound = next, true
	}
	if hasFound {
		return found, e.addVersion(key, prefix, version{from: ts, to: found, value: value})
	}
	if value != nil {
		return PutReturnCodeValidToUndefined, e.inner.Put(verLatestKey(key), latestBytes(ts, value))
	}
	// A tombstone newer than every version: the previous version already ends at ts, or a
	// tombstone mark (validFrom == validTo) records it.
	if p != nil && p.to == ts {
		return PutReturnCodeValidToUndefined, nil
	}
	return PutReturnCodeValidToUndefined, e.addVersion(key, prefix, version{from: ts, to: ts})
}

func latestBytes(ts int64, value []byte) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(value)), uint64(ts))
	return append(b, value...)
}

// expire deletes the older versions whose validTo <= bound: no get within the history
// retention can return them and no put within the grace period depends on them.
func (e *versionedEngine) expire(bound int64) error {
	if bound < e.minTo {
		return nil
	}
	it := e.inner.Range([]byte{nsVerExpiry}, []byte{nsVerExpiry + 1})
	var dead [][]byte
	next := int64(math.MaxInt64)
	for it.Next() {
		k := it.Key()
		if len(k) < 1+8+4 {
			it.Close()
			return errBadVersionedEntry
		}
		to := decTs(k[1:9])
		if to > bound {
			next = to
			break
		}
		dead = append(dead, bytes.Clone(k))
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for _, k := range dead {
		n := int(binary.BigEndian.Uint32(k[9:13]))
		if len(k) != 13+n+8 {
			return errBadVersionedEntry
		}
		hk := make([]byte, 0, 1+4+n+8)
		hk = append(append(hk, nsVerHistory), k[9:]...)
		if _, _, err := e.inner.Delete(hk); err != nil {
			return err
		}
		if _, _, err := e.inner.Delete(k); err != nil {
			return err
		}
	}
	e.minTo = next
	return nil
}

// restoreBatch puts changelog records at their timestamps, skipping those that were beyond the
// grace period when written (Java's RocksDBVersionedStore.restoreBatch).
func (e *versionedEngine) restoreBatch(batch []processor.RestoreRecord) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range batch {
		if r.Key == nil {
			continue
		}
		if r.Timestamp < e.observed-e.retention {
			continue
		}
		e.observed = max(e.observed, r.Timestamp)
		if _, err := e.doPut(r.Key, r.Value, r.Timestamp); err != nil {
			return storeErr(e.name, fmt.Sprintf("restore offset %d", r.Offset), err)
		}
	}
	return nil
}

// inMemoryVersionedKeyValueStore is the in-memory versioned engine (see the layout above, held
// in an [inMemoryKeyValueStore]). Java has no in-memory versioned store; its behaviour is the
// one of Java's RocksDBVersionedStore.
type inMemoryVersionedKeyValueStore struct{ *versionedEngine }

// newInMemoryVersionedKeyValueStore returns a closed in-memory versioned engine with the given
// history retention (ms, >= 0); Init opens it. Most users get one through
// Stores.InMemoryVersionedKeyValueStore.
func newInMemoryVersionedKeyValueStore(name string, historyRetentionMs int64) *inMemoryVersionedKeyValueStore {
	return &inMemoryVersionedKeyValueStore{newVersionedEngine(name, historyRetentionMs, 0, newInMemoryKeyValueStore(name))}
}

// pebbleVersionedKeyValueStore is the persistent versioned engine: a Pebble database at
// <task state dir>/pebble/<name> (see the layout above). It is transactional under
// exactly-once and wipeable, as [pebbleKeyValueStore]. Java counterpart: RocksDBVersionedStore.
type pebbleVersionedKeyValueStore struct {
	*versionedEngine
	kv *pebbleKeyValueStore
}

var (
	_ VersionedBytesStore         = (*pebbleVersionedKeyValueStore)(nil)
	_ VersionedBytesStore         = (*inMemoryVersionedKeyValueStore)(nil)
	_ storeapi.TransactionalStore = (*pebbleVersionedKeyValueStore)(nil)
	_ storeapi.WipeableStore      = (*pebbleVersionedKeyValueStore)(nil)
)

// newPebbleVersionedKeyValueStore returns a closed Pebble versioned engine with the given
// history retention and segment interval (ms); Init opens it. Most users get one through
// Stores.PersistentVersionedKeyValueStore.
func newPebbleVersionedKeyValueStore(name string, historyRetentionMs, segmentIntervalMs int64) *pebbleVersionedKeyValueStore {
	kv := newPebbleKeyValueStore(name)
	return &pebbleVersionedKeyValueStore{versionedEngine: newVersionedEngine(name, historyRetentionMs, segmentIntervalMs, kv), kv: kv}
}

// CommitTransaction implements [storeapi.TransactionalStore].
func (s *pebbleVersionedKeyValueStore) CommitTransaction(changelogOffset int64) error {
	return s.kv.CommitTransaction(changelogOffset)
}

// AbortTransaction implements [storeapi.TransactionalStore]; the store's stream time is kept (it only
// decides which puts are too old, and Java keeps it too).
func (s *pebbleVersionedKeyValueStore) AbortTransaction() error { return s.kv.AbortTransaction() }

// CommittedOffset implements [storeapi.TransactionalStore].
func (s *pebbleVersionedKeyValueStore) CommittedOffset() (int64, bool, error) {
	return s.kv.CommittedOffset()
}

// Transactional implements [storeapi.TransactionalStore].
func (s *pebbleVersionedKeyValueStore) Transactional() bool { return s.kv.Transactional() }

// Wipe implements [storeapi.WipeableStore]; the stream time starts again.
func (s *pebbleVersionedKeyValueStore) Wipe() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observed, s.minTo = -1, math.MinInt64
	return s.kv.Wipe()
}

// WipedOnOpen implements [storeapi.WipeableStore].
func (s *pebbleVersionedKeyValueStore) WipedOnOpen() bool { return s.kv.WipedOnOpen() }

// IsEmpty implements [storeapi.WipeableStore].
func (s *pebbleVersionedKeyValueStore) IsEmpty() (bool, error) { return s.kv.IsEmpty() }
