package store

import (
	"reflect"

	"github.com/kstreams-go/kstreams/processor"
)

// layers returns st followed by the stores it wraps, outermost first: each layer that has an
// Inner() method returning a state store (the metered, caching and change-logging layers) leads
// to the next, and the last element is the engine. Java counterpart: WrappedStateStore.wrapped().
func layers(st processor.StateStore) []processor.StateStore {
	var out []processor.StateStore
	for st != nil && len(out) < 16 {
		out = append(out, st)
		m := reflect.ValueOf(st).MethodByName("Inner")
		if !m.IsValid() || m.Type().NumIn() != 0 || m.Type().NumOut() != 1 {
			break
		}
		res := m.Call(nil)[0]
		if !res.IsValid() || (res.Kind() == reflect.Interface || res.Kind() == reflect.Pointer) && res.IsNil() {
			break
		}
		next, ok := res.Interface().(processor.StateStore)
		if !ok {
			break
		}
		st = next
	}
	return out
}

// FindTransactional returns the [transactionalStore] among st's layers, if any.
func FindTransactional(st processor.StateStore) (transactionalStore, bool) {
	for _, l := range layers(st) {
		if t, ok := l.(transactionalStore); ok {
			return t, true
		}
	}
	return nil, false
}

// FindWipeable returns the [wipeableStore] among st's layers, if any.
func FindWipeable(st processor.StateStore) (wipeableStore, bool) {
	for _, l := range layers(st) {
		if t, ok := l.(wipeableStore); ok {
			return t, true
		}
	}
	return nil, false
}

// timestampedBytesStore marks the layers of stores whose engine holds timestamped values
// (int64 ts ‖ value) while the changelog holds the raw value with the timestamp as record
// timestamp. Restore converts changelog records for such stores. Java counterpart:
// org.apache.kafka.streams.state.timestampedBytesStore.
type timestampedBytesStore interface {
	// TimestampedBytes is a marker method.
	TimestampedBytes()
}

// TimestampedBytes marks the timestamped change-logging layer (see [timestampedBytesStore]).
func (c *changeLoggingTimestampedKeyValueBytesStore) TimestampedBytes() {}

// TimestampedBytes marks the timestamped window change-logging layer (see [timestampedBytesStore]).
func (c *changeLoggingTimestampedWindowBytesStore) TimestampedBytes() {}

// IsTimestamped reports whether one of st's layers is a [timestampedBytesStore], i.e. whether
// changelog records must be converted to ts ‖ value on restore. Java: WrappedStateStore.isTimestamped.
func IsTimestamped(st processor.StateStore) bool {
	for _, l := range layers(st) {
		if _, ok := l.(timestampedBytesStore); ok {
			return true
		}
	}
	return false
}

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
