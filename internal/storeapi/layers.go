package storeapi

import (
	"reflect"

	"github.com/kstreams-go/kstreams/processor"
)

// Layers returns st followed by the stores it wraps, outermost first: each layer that has an
// Inner() method returning a state store (the metered, caching and change-logging layers) leads
// to the next, and the last element is the engine. Java counterpart: WrappedStateStore.wrapped().
func Layers(st processor.StateStore) []processor.StateStore {
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

// FindTransactional returns the [TransactionalStore] among st's layers (see [Layers]), if any.
func FindTransactional(st processor.StateStore) (TransactionalStore, bool) {
	for _, l := range Layers(st) {
		if t, ok := l.(TransactionalStore); ok {
			return t, true
		}
	}
	return nil, false
}

// FindWipeable returns the [WipeableStore] among st's layers (see [Layers]), if any.
func FindWipeable(st processor.StateStore) (WipeableStore, bool) {
	for _, l := range Layers(st) {
		if t, ok := l.(WipeableStore); ok {
			return t, true
		}
	}
	return nil, false
}

// TimestampedBytesStore marks the Layers of stores whose engine holds timestamped values
// (int64 ts ‖ value) while the changelog holds the raw value with the timestamp as record
// timestamp. Restore converts changelog records for such stores. Java counterpart:
// org.apache.kafka.streams.state.TimestampedBytesStore.
type TimestampedBytesStore interface {
	// TimestampedBytes is a marker method.
	TimestampedBytes()
}

// IsTimestamped reports whether one of st's layers is a [TimestampedBytesStore], i.e. whether
// changelog records must be converted to ts ‖ value on restore. Java: WrappedStateStore.isTimestamped.
func IsTimestamped(st processor.StateStore) bool {
	for _, l := range Layers(st) {
		if _, ok := l.(TimestampedBytesStore); ok {
			return true
		}
	}
	return false
}

// TransactionalStore is implemented by the Pebble engines (and reached through the Layers
// above them with [FindTransactional]). Under exactly-once (processing.guarantee
// exactly_once_v2 in the context's AppConfigs at Init) the writes of the open transaction are
// kept in a Pebble batch that reads see; CommitTransaction applies them together with the
// changelog offset in one atomic write after the Kafka transaction committed, and
// AbortTransaction drops them. A crash therefore leaves the store at the state of its last
// committed offset, and restore replays the changelog from there: no wipe is needed.
// Under at-least-once, writes wait in a write-behind batch that reads see, applied by the
// store's Flush (or once it grows past a bound), and CommitTransaction applies it with the
// offset. There is no Java counterpart (Java 4.x wipes the store after an unclean shutdown
// under exactly-once).
type TransactionalStore interface {
	// CommitTransaction applies the transaction's writes and records changelogOffset (the
	// offset of the last changelog record of the store written so far; negative = keep the
	// recorded one) atomically. Errors: ErrStoreClosed, Pebble write errors.
	CommitTransaction(changelogOffset int64) error
	// AbortTransaction drops the writes of the open transaction (nothing under at-least-once).
	AbortTransaction() error
	// CommittedOffset returns the changelog offset recorded with the data, and false when none
	// was ever recorded.
	CommittedOffset() (int64, bool, error)
	// Transactional reports whether writes are held in a transaction (exactly-once).
	Transactional() bool
}

// WipeableStore is implemented by persistent engines whose local state can be dropped and
// restored from the changelog (Java wipes the task directory for a corrupted task).
type WipeableStore interface {
	// Wipe deletes the local state and reopens the store empty.
	Wipe() error
	// WipedOnOpen reports whether the store had no local state at Init, or was found corrupt
	// and wiped, or was wiped since: it must be restored from the beginning of its changelog,
	// whatever the checkpoint says.
	WipedOnOpen() bool
	// IsEmpty reports whether the store holds no data.
	IsEmpty() (bool, error)
}
