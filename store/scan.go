package store

import (
	"bytes"
)

// scanKind says which key-value iteration a [Scan] continues.
type scanKind int

// The iterations a [Scan] can describe: the read-only key-value store's iterators.
const (
	// ScanAll is All (ReverseAll when Reverse).
	ScanAll scanKind = iota
	// ScanRange is Range(From, To) (ReverseRange when Reverse).
	ScanRange
	// ScanPrefix is PrefixScan(Prefix); it is ascending only.
	ScanPrefix
)

// Scan describes one of a key-value store's iterations, possibly resumed after a key it
// already handed out: a reader that reads a large store in bounded chunks (interactive
// queries read a few hundred entries at a time, each chunk while the stream thread leaves the
// store alone) opens the same Scan again with After set to the serialized key of the last
// entry it got, and goes on from the next key. Keys are the serialized keys in the store's
// order (unsigned bytes), so a resumed scan never repeats or reorders a key; entries written
// between two chunks are seen when their key is still ahead of the scan. Java has no
// counterpart: its iterators over RocksDB hold a snapshot open instead.
type Scan[K any] struct {
	// Kind is the iteration.
	Kind scanKind
	// From and To are Range's inclusive bounds (ScanRange only; a nil key of a nillable type is
	// unbounded, as for Range).
	From, To K
	// NoFrom and NoTo leave Range's lower or upper bound open whatever From or To holds, so
	// that a one-sided range can be asked for keys of any type (an interactive query's
	// RangeQuery with one bound, Java's RangeQuery.withLowerBound / withUpperBound). ScanRange
	// only.
	NoFrom, NoTo bool
	// Prefix is PrefixScan's serialized prefix (ScanPrefix only).
	Prefix []byte
	// Reverse iterates in descending key order (not with ScanPrefix).
	Reverse bool
	// After, when not nil, is a serialized key: the scan starts strictly after it in its
	// direction (above it ascending, below it descending).
	After []byte
}

// RawKeyIterator is a key-value iterator that also gives the serialized key of its current
// entry, to resume a [Scan] after it.
type RawKeyIterator[K, V any] interface {
	KeyValueIterator[K, V]
	// RawKey is the serialized key of the entry Next moved to; it may be a view valid only until
	// the next Next or Close (copy it to keep it).
	RawKey() []byte
}

// Scanner is a read-only key-value view that can run a [Scan]. Scan reports false when the
// store under the view cannot (a custom store type): then the caller iterates with the plain
// methods.
type Scanner[K, V any] interface {
	Scan(s Scan[K]) (RawKeyIterator[K, V], bool)
}

// Scan implements Scanner over the bytes store under the metered layer. It reads the layers
// below with their paged ranges (scanRange), so that a scan costs memory for a page of keys,
// not for its whole range, whatever the engine.
func (m *meteredKeyValueStore[K, V]) Scan(s Scan[K]) (RawKeyIterator[K, V], bool) {
	var from, to []byte
	var err error
	switch s.Kind {
	case ScanRange:
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
	case ScanPrefix:
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
	if s.Kind == ScanPrefix {
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

// RawKey implements RawKeyIterator.
func (r *rawIterator[K, V]) RawKey() []byte {
	if r.done {
		return nil
	}
	return r.it.Key()
}
