package store

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Reading a key's versions over a time range: the store side of interactive queries'
// MultiVersionedKeyQuery (KIP-968).

// VersionedRecordIterator iterates versions of one key (see VersionHistoryReader). Next moves
// to the next version and reports whether there is one; Record is the version Next moved to
// (the zero record before the first Next, at the end and after Close); Err is the error that
// ended the iteration, if any; Close releases the iterator (Next then reports false and Err
// is ErrIteratorClosed). Java counterpart:
// org.apache.kafka.streams.state.VersionedRecordIterator.
type VersionedRecordIterator[V any] interface {
	Next() bool
	Record() VersionedRecord[V]
	Err() error
	Close() error
}

// VersionHistoryReader is a versioned store that can list the versions of a key valid at some
// time within [fromTime, toTime] (ms, inclusive): every non-tombstone version with
// Timestamp <= toTime and ValidTo > fromTime (the latest version, valid to the end of time,
// when Timestamp <= toTime), ascending or descending by Timestamp. When toTime is older than
// the history retention (stream time minus history retention) only the latest version can be
// returned, as GetAsOf. The versions are read at once (a consistent snapshot of the key, as
// Java's iterator reads a RocksDB snapshot); a key holds at most its history retention's
// versions. Versions that ended at or before the history retention bound are gone from our
// engines as soon as stream time passes them, where Java's segments may still return them
// until their whole segment expires. The versioned engines of this package and the layers
// above them implement it. Errors: ErrNullKey, ErrStoreClosed, serialization errors;
// errors.ErrUnsupported (wrapped) from a layer over an engine that does not implement it.
// Java counterpart: RocksDBVersionedStore.get(key, fromTime, toTime, order).
type VersionHistoryReader[K, V any] interface {
	GetVersions(key K, fromTime, toTime int64, ascending bool) (VersionedRecordIterator[V], error)
}

var (
	_ VersionHistoryReader[[]byte, []byte] = (*inMemoryVersionedKeyValueStore)(nil)
	_ VersionHistoryReader[[]byte, []byte] = (*pebbleVersionedKeyValueStore)(nil)
	_ VersionHistoryReader[[]byte, []byte] = (*changeLoggingVersionedKeyValueBytesStore)(nil)
	_ VersionHistoryReader[string, int32]  = (*meteredVersionedKeyValueStore[string, int32])(nil)
)

// VersionedRecordsIterator returns an iterator over records, in their order.
func VersionedRecordsIterator[V any](records []VersionedRecord[V]) VersionedRecordIterator[V] {
	return &sliceVersions[V]{recs: records, pos: -1}
}

type sliceVersions[V any] struct {
	recs   []VersionedRecord[V]
	pos    int
	closed bool
}

func (s *sliceVersions[V]) Next() bool {
	if s.closed || s.pos+1 >= len(s.recs) {
		s.pos = len(s.recs)
		return false
	}
	s.pos++
	return true
}

func (s *sliceVersions[V]) Record() (r VersionedRecord[V]) {
	if !s.closed && s.pos >= 0 && s.pos < len(s.recs) {
		r = s.recs[s.pos]
	}
	return r
}

func (s *sliceVersions[V]) Err() error {
	if s.closed {
		return ErrIteratorClosed
	}
	return nil
}

func (s *sliceVersions[V]) Close() error {
	s.closed, s.recs = true, nil
	return nil
}

// CollectVersions reads it to its end and closes it.
func CollectVersions[V any](it VersionedRecordIterator[V]) ([]VersionedRecord[V], error) {
	var out []VersionedRecord[V]
	for it.Next() {
		out = append(out, it.Record())
	}
	err := it.Err()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return out, err
}

// GetVersions implements [VersionHistoryReader].
func (e *versionedEngine) GetVersions(key []byte, fromTime, toTime int64, ascending bool) (VersionedRecordIterator[[]byte], error) {
	if key == nil {
		return nil, storeErr(e.name, "get versions", ErrNullKey)
	}
	if err := e.checkOpen("get versions"); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	out, err := e.versions(key, fromTime, toTime)
	if err != nil {
		return nil, storeErr(e.name, "get versions", err)
	}
	if !ascending {
		slices.Reverse(out)
	}
	return VersionedRecordsIterator(out), nil
}

// versions returns the key's versions valid within [from, to], ascending by timestamp.
func (e *versionedEngine) versions(key []byte, from, to int64) ([]VersionedRecord[[]byte], error) {
	var out []VersionedRecord[[]byte]
	if to >= e.observed-e.retention {
		prefix := verHistPrefix(key)
		it := e.inner.Range(verHistKey(prefix, math.MinInt64), verHistKey(prefix, to))
		for it.Next() {
			v, err := decVersion(decTs(it.Key()[len(prefix):]), it.Value())
			if err != nil {
				it.Close()
				return nil, err
			}
			if v.value != nil && v.to > from {
				out = append(out, VersionedRecord[[]byte]{Value: v.value, Timestamp: v.from, ValidTo: v.to, HasValidTo: true})
			}
		}
		err := it.Err()
		it.Close()
		if err != nil {
			return nil, err
		}
	}
	l, err := e.latest(key)
	if err != nil {
		return nil, err
	}
	if l != nil && l.Timestamp <= to {
		out = append(out, *l)
	}
	return out, nil
}

// GetVersions implements [VersionHistoryReader] with the store below (reads are not logged).
func (c *changeLoggingVersionedKeyValueBytesStore) GetVersions(key []byte, fromTime, toTime int64, ascending bool) (VersionedRecordIterator[[]byte], error) {
	r, ok := c.VersionedBytesStore.(VersionHistoryReader[[]byte, []byte])
	if !ok {
		return nil, storeErr(c.Name(), "get versions", fmt.Errorf("%w: %T cannot list versions", errors.ErrUnsupported, c.VersionedBytesStore))
	}
	return r.GetVersions(key, fromTime, toTime, ascending)
}

// GetVersions implements [VersionHistoryReader]: the versions of the bytes store below,
// deserialized.
func (m *meteredVersionedKeyValueStore[K, V]) GetVersions(key K, fromTime, toTime int64, ascending bool) (VersionedRecordIterator[V], error) {
	k, err := m.keyBytes("get versions", key)
	if err != nil {
		return nil, err
	}
	r, ok := m.inner.(VersionHistoryReader[[]byte, []byte])
	if !ok {
		return nil, storeErr(m.Name(), "get versions", fmt.Errorf("%w: %T cannot list versions", errors.ErrUnsupported, m.inner))
	}
	it, err := r.GetVersions(k, fromTime, toTime, ascending)
	if err != nil {
		return nil, err
	}
	raw, err := CollectVersions(it)
	if err != nil {
		return nil, err
	}
	out := make([]VersionedRecord[V], 0, len(raw))
	for i := range raw {
		v, err := m.record("get versions", &raw[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return VersionedRecordsIterator(out), nil
}
