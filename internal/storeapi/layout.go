package storeapi

import (
	"bytes"
	"encoding/binary"
)

// PebbleDirName is the directory, under the task's state directory, that holds the Pebble
// databases of the task's stores: <state.dir>/<application.id>/<task>/pebble/<store>.
// Java keeps RocksDB key-value stores under "rocksdb/<store>" and segmented stores under
// "<store>/<store>.<segment start>"; the layouts differ anyway (Pebble is not RocksDB).
const PebbleDirName = "pebble"

// WindowStoreKey returns the window store (and changelog) key of key, windowStart (ms) and
// seqnum: key ‖ int64 windowStart ‖ int32 seqnum, big-endian. Java: WindowKeySchema.toStoreKeyBinary.
func WindowStoreKey(key []byte, windowStart int64, seqnum int32) []byte {
	out := make([]byte, len(key)+12) // 8-byte start, 4-byte seqnum
	copy(out, key)
	binary.BigEndian.PutUint64(out[len(key):], uint64(windowStart))
	binary.BigEndian.PutUint32(out[len(key)+8:], uint32(seqnum))
	return out
}

// SessionStoreKey returns the session store (and changelog) key: key ‖ int64 end ‖ int64 start.
// Java: SessionKeySchema.toBinary.
func SessionStoreKey(key []byte, start, end int64) []byte {
	out := make([]byte, len(key)+16) // 8-byte end, 8-byte start
	copy(out, key)
	binary.BigEndian.PutUint64(out[len(key):], uint64(end))
	binary.BigEndian.PutUint64(out[len(key)+8:], uint64(start))
	return out
}

// SegmentID returns the id of the segment holding timestamp ts (ms): ts / segmentInterval
// (Java's integer division, truncating towards zero). Java: AbstractSegments.segmentId.
func SegmentID(ts, segmentInterval int64) int64 { return ts / segmentInterval }

// ChangelogTopic returns the changelog topic name of a store: "<applicationID>-<store>-changelog".
// Java counterpart: ProcessorStateManager.storeChangelogTopic.
func ChangelogTopic(applicationID, storeName string) string {
	return applicationID + "-" + storeName + "-changelog"
}

// PebbleMetricsScope is the metrics scope of the Pebble engines' suppliers (Java: "rocksdb",
// "rocksdb-window", "rocksdb-session").
const PebbleMetricsScope = "pebble"

// ToTimestampedValue converts a changelog value of a timestamped store to its stored form:
// the 8-byte big-endian timestamp, then the raw value; nil (a tombstone) stays nil.
// Java: StateSerdes / RecordConverters.rawValueToTimestampedValue.
func ToTimestampedValue(raw []byte, timestamp int64) []byte {
	if raw == nil {
		return nil
	}
	out := make([]byte, 8+len(raw))
	binary.BigEndian.PutUint64(out, uint64(timestamp))
	copy(out[8:], raw)
	return out
}

// MinSegmentInterval is the smallest default segment interval of a segmented (window or
// session) store: 60 000 ms. Java: Stores.persistentWindowStore uses max(retention / 2, 60 000).
const MinSegmentInterval int64 = 60_000

// DefaultSegmentInterval returns Java's default segment interval for a retention period (ms):
// max(retention / 2, 60 000).
func DefaultSegmentInterval(retentionMs int64) int64 {
	return max(retentionMs/2, MinSegmentInterval)
}

// Detach returns v unchanged, except that a non-nil []byte (or *[]byte) is copied: it turns
// a key or value read from an iterator, which for the bytes-level iterators of the persistent
// engines is a view valid until the iterator's next Next or Close, into one the caller may
// keep. Deserializers that return their input (serde.ByteArray, serde.Bytes, and
// serde.Nullable of them) pass the view through, so typed layers (package store's, the DSL's
// outer-join store) call Detach on what they decoded. Values of other types are returned as
// they are: decoding made them independent of the input already, unless a custom
// deserializer keeps its input inside a larger value, in which case its caller must copy.
func Detach[T any](v T) T {
	switch b := any(v).(type) {
	case []byte:
		if b != nil {
			return any(bytes.Clone(b)).(T)
		}
	case *[]byte:
		if b != nil && *b != nil {
			c := bytes.Clone(*b)
			return any(&c).(T)
		}
	}
	return v
}
