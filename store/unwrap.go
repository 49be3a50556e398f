package store

import ()

// TimestampedBytes marks the timestamped change-logging layer (see [storeapi.TimestampedBytesStore]).
func (c *changeLoggingTimestampedKeyValueBytesStore) TimestampedBytes() {}

// TimestampedBytes marks the timestamped window change-logging layer (see [storeapi.TimestampedBytesStore]).
func (c *changeLoggingTimestampedWindowBytesStore) TimestampedBytes() {}

// ToTimestampedValue converts a changelog value of a timestamped store to its stored form:
// the 8-byte big-endian timestamp, then the raw value; nil (a tombstone) stays nil.
// Java: StateSerdes / RecordConverters.rawValueToTimestampedValue.
func ToTimestampedValue(raw []byte, timestamp int64) []byte {
	if raw == nil {
		return nil
	}
	out := make([]byte, 8+len(raw))
	copy(out, offsetBytes(timestamp))
	copy(out[8:], raw)
	return out
}
