package store

import (
	"bytes"
	"github.com/kstreams-go/kstreams/internal/storeapi"
)

// Scan implements storeapi.Scanner over the bytes store under the metered layer. It reads the layers
// below with their paged ranges (scanRange), so that a scan costs memory for a page of keys,
// not for its whole range, whatever the engine.
func (m *meteredKeyValueStore[K, V]) Scan(s storeapi.Scan[K]) (storeapi.RawKeyIterator[K, V], bool) {
	var from, to []byte
	var err error
	switch s.Kind {
	case storeapi.ScanRange:
		if !s.NoFrom {
			from, err = m.boundBytes("range", s.From)
		}
		if err == nil && !s.NoTo {
			to, err = m.boundBytes("range", s.To)
		}
		if err != nil {
			return &rawIterator[K, V]{typedIterator: typedIterator[K, V]{m: m, it: ErrorIterator[[]byte, []byte](err)}}, true
		}
		if from != nil && to != nil && bytes.Compare(from, to) > 0 {
			return &rawIterator[K, V]{typedIterator: typedIterator[K, V]{m: m, it: emptyIterator[[]byte, []byte]()}}, true
		}
	case storeapi.ScanPrefix:
		from = s.Prefix
		if from == nil {
			from = []byte{}
		}
		s.Reverse = false
	}
	if s.After != nil {
		if s.Reverse {
			if to == nil || bytes.Compare(s.After, to) < 0 {
				to = s.After
			}
		} else if from == nil || bytes.Compare(s.After, from) > 0 {
			from = s.After
		}
	}
	r := &rawIterator[K, V]{typedIterator: typedIterator[K, V]{m: m, it: scanRange(m.inner, from, to, s.Reverse)}, after: s.After}
	if s.Kind == storeapi.ScanPrefix {
		r.prefix = s.Prefix
		if r.prefix == nil {
			r.prefix = []byte{}
		}
	}
	return r, true
}

// pagedRanger is a bytes store (or layer) whose plain iterators copy the keys of their whole
// range when they open (the in-memory engine and the record cache, as Java's do); pagedRange
// is Range (ReverseRange when reverse; nil bounds unbounded) taking the keys a page at a time
// instead.
type pagedRanger interface {
	pagedRange(from, to []byte, reverse bool) KeyValueIterator[[]byte, []byte]
}

// scanRange is s's range for a Scan: the paged range of the first layer of s that has one,
// passing through the layers that do not change reads (change-logging, read-only views), else
// s's plain range (the Pebble engine's iterators read lazily anyway).
func scanRange(s ReadOnlyKeyValueStore[[]byte, []byte], from, to []byte, reverse bool) KeyValueIterator[[]byte, []byte] {
	for range 16 {
		switch l := s.(type) {
		case pagedRanger:
			return l.pagedRange(from, to, reverse)
		case *changeLoggingKeyValueBytesStore:
			s = l.KeyValueBytesStore
			continue
		case *changeLoggingTimestampedKeyValueBytesStore:
			s = l.KeyValueBytesStore
			continue
		case readOnlyBytes:
			s = l.view
			continue
		}
		break
	}
	if reverse {
		return s.ReverseRange(from, to)
	}
	return s.Range(from, to)
}

// pagedRange implements pagedRanger: the cache's entries a page at a time merged with the
// store below, read through its own paged range.
func (q cachingQueryView) pagedRange(from, to []byte, reverse bool) KeyValueIterator[[]byte, []byte] {
	c := q.c
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return emptyIterator[[]byte, []byte]()
	}
	if !c.IsOpen() {
		return ErrorIterator[[]byte, []byte](storeErr(c.Name(), "range", ErrStoreClosed))
	}
	return c.merged(scanRange(c.inner, from, to, reverse), c.cache.RangePaged(c.namespace, from, to, true, reverse), !reverse)
}

// rawIterator is the metered layer's iterator of a Scan: it skips the key the scan resumes
// after and, for a resumed prefix scan (a range from the resume key), stops at the first key
// outside the prefix.
type rawIterator[K, V any] struct {
	typedIterator[K, V]
	after  []byte
	prefix []byte
	done   bool
}

func (r *rawIterator[K, V]) Next() bool {
	if r.done {
		return false
	}
	for {
		// Peek at the raw key before decoding: the resume key is skipped without decoding it,
		// a key past the prefix ends the scan.
		if r.err != nil || !r.it.Next() {
			var zk K
			var zv V
			r.key, r.val = zk, zv
			return false
		}
		kb := r.it.Key()
		if r.after != nil {
			skip := bytes.Equal(kb, r.after)
			r.after = nil // only the first entry can be the resume key
			if skip {
				continue
			}
		}
		if r.prefix != nil && !bytes.HasPrefix(kb, r.prefix) {
			r.done = true
			var zk K
			var zv V
			r.key, r.val = zk, zv
			return false
		}
		return r.decode()
	}
}

// RawKey implements storeapi.RawKeyIterator.
func (r *rawIterator[K, V]) RawKey() []byte {
	if r.done {
		return nil
	}
	return r.it.Key()
}
