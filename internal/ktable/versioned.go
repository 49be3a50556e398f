package ktable

import (
	"errors"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/store"
)

// ErrVersionedTableOp is returned by the operations of a versioned table's store view that a
// versioned store cannot answer (ranges, a delete without a timestamp).
var ErrVersionedTableOp = errors.New("ktable: operation not supported by a versioned table store")

// VersionedView is a versioned table's store as the table processors see it: Get returns the
// latest version (as a timestamped value) and Put writes a version at the value's timestamp.
// Range queries fail with ErrVersionedTableOp. Java counterpart: KeyValueStoreWrapper over a
// VersionedKeyValueStore.
type VersionedView struct {
	// Versioned is the versioned store.
	Versioned store.VersionedKeyValueStore[any, any]
}

var _ Store = (*VersionedView)(nil)

// Inner returns the versioned store.
func (v *VersionedView) Inner() processor.StateStore { return v.Versioned }

// Name returns the store name.
func (v *VersionedView) Name() string { return v.Versioned.Name() }

// Init initialises the versioned store.
func (v *VersionedView) Init(ctx processor.StateStoreContext, root processor.StateStore) error {
	return v.Versioned.Init(ctx, root)
}

// Flush flushes the versioned store.
func (v *VersionedView) Flush() error { return v.Versioned.Flush() }

// Close closes the versioned store.
func (v *VersionedView) Close() error { return v.Versioned.Close() }

// Persistent reports whether the versioned store is persistent.
func (v *VersionedView) Persistent() bool { return v.Versioned.Persistent() }

// IsOpen reports whether the versioned store is open.
func (v *VersionedView) IsOpen() bool { return v.Versioned.IsOpen() }

// Get returns the latest version of key.
func (v *VersionedView) Get(key any) (*ValueAndTimestamp, bool, error) {
	r, err := v.Versioned.Get(key)
	if err != nil || r == nil {
		return nil, false, err
	}
	return &ValueAndTimestamp{Value: r.Value, Timestamp: r.Timestamp}, true, nil
}

// Put writes value at its timestamp; a nil value fails (a delete needs a timestamp: see PutAt).
func (v *VersionedView) Put(key any, value *ValueAndTimestamp) error {
	if value == nil {
		return ErrVersionedTableOp
	}
	_, err := v.Versioned.Put(key, value.Value, value.Timestamp)
	return err
}

// PutAt writes value (nil: a tombstone) at timestamp and returns the versioned put's result
// (store.PutReturnCodeValidToUndefined when it is the latest version, store.PutReturnCodeNotPut
// when it is beyond the history retention).
func (v *VersionedView) PutAt(key, value any, timestamp int64) (int64, error) {
	return v.Versioned.Put(key, value, timestamp)
}

// PutIfAbsent is not supported.
func (v *VersionedView) PutIfAbsent(any, *ValueAndTimestamp) (*ValueAndTimestamp, bool, error) {
	return nil, false, ErrVersionedTableOp
}

// PutAll applies Put to each entry.
func (v *VersionedView) PutAll(entries []store.KeyValue[any, *ValueAndTimestamp]) error {
	for _, e := range entries {
		if err := v.Put(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

// Delete is not supported (a versioned delete needs a timestamp).
func (v *VersionedView) Delete(any) (*ValueAndTimestamp, bool, error) {
	return nil, false, ErrVersionedTableOp
}

// Range is not supported.
func (v *VersionedView) Range(any, any) store.KeyValueIterator[any, *ValueAndTimestamp] {
	return store.ErrorIterator[any, *ValueAndTimestamp](ErrVersionedTableOp)
}

// ReverseRange is not supported.
func (v *VersionedView) ReverseRange(any, any) store.KeyValueIterator[any, *ValueAndTimestamp] {
	return store.ErrorIterator[any, *ValueAndTimestamp](ErrVersionedTableOp)
}

// All is not supported.
func (v *VersionedView) All() store.KeyValueIterator[any, *ValueAndTimestamp] {
	return store.ErrorIterator[any, *ValueAndTimestamp](ErrVersionedTableOp)
}

// ReverseAll is not supported.
func (v *VersionedView) ReverseAll() store.KeyValueIterator[any, *ValueAndTimestamp] {
	return store.ErrorIterator[any, *ValueAndTimestamp](ErrVersionedTableOp)
}

// PrefixScan is not supported.
func (v *VersionedView) PrefixScan([]byte) store.KeyValueIterator[any, *ValueAndTimestamp] {
	return store.ErrorIterator[any, *ValueAndTimestamp](ErrVersionedTableOp)
}

// ApproximateNumEntries returns 0 (unknown).
func (v *VersionedView) ApproximateNumEntries() int64 { return 0 }
