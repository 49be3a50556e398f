// Package storeapi holds the contracts between the state stores of package store and the
// library's other packages (the runtime, the task engine, the table processors, interactive
// queries) that users never write against: resumable scans, the record cache's flush
// contract, and the hooks restore uses. It does not import package store, so that store can
// implement and use them; the stores satisfy its interfaces structurally.
package storeapi

import "github.com/kstreams-go/kstreams/serde"

// ScanKind says which key-value iteration a [Scan] continues.
type ScanKind int

// The iterations a [Scan] can describe: the read-only key-value store's iterators.
const (
	// ScanAll is All (ReverseAll when Reverse).
	ScanAll ScanKind = iota
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
	Kind ScanKind
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
	// Next moves to the next entry and reports whether there is one.
	Next() bool
	// Key is the current entry's key.
	Key() K
	// Value is the current entry's value.
	Value() V
	// Err is the first error met while iterating.
	Err() error
	// Close releases the iterator; it must be called.
	Close() error
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

// WindowScanKind says which window or session store iteration a [WindowScan] continues.
type WindowScanKind int

// The iterations a [WindowScan] can describe.
const (
	// WindowScanKey is one key's iteration: a window store's FetchTimeRange(Key, TimeFrom,
	// TimeTo) (BackwardFetchTimeRange when Reverse); a session store's FindSessions(Key,
	// TimeFrom, TimeTo) (Fetch(Key) is FindSessions(Key, 0, math.MaxInt64)).
	WindowScanKey WindowScanKind = iota
	// WindowScanRange is a key range's iteration: a window store's FetchKeyRange(From, To,
	// TimeFrom, TimeTo); a session store's FindSessionsRange(From, To, TimeFrom, TimeTo)
	// (FetchRange is FindSessionsRange(From, To, 0, math.MaxInt64)). A nil bound of a nillable
	// key type is unbounded.
	WindowScanRange
	// WindowScanAll is every key's iteration: a window store's FetchAll(TimeFrom, TimeTo) (All
	// is FetchAll(math.MinInt64, math.MaxInt64)); for a session store, FindSessionsRange with
	// both key bounds open.
	WindowScanAll
)

// WindowScan describes one of a window or session store's iterations, possibly resumed after
// an entry it already handed out, as [Scan] does for key-value stores: a reader that reads a
// large store in bounded chunks (interactive queries read a few hundred entries at a time,
// each chunk while the stream thread leaves the store alone) opens the same WindowScan again
// with After set to the raw store key ([RawKeyIterator.RawKey]) of the last entry it got.
//
// Raw keys are the stores' keys: key ‖ int64 window start ‖ int32 seqnum for windows, key ‖
// int64 session end ‖ int64 session start for sessions (the layouts of the store
// package's window and session store keys). Every one of these iterations walks the store in one order, the order of
// the store's segments (segment = window start, or session end, / segment interval) and then of
// the raw keys' bytes (for one key's windows that is window start order); the backward forms
// walk it in reverse. A resumed scan goes on strictly after After in that order, so it never
// repeats, skips or reorders an entry that exists throughout; an entry written between two
// chunks is seen when it is still ahead of the scan. Java has no counterpart: its iterators over
// RocksDB hold a snapshot open instead.
type WindowScan[K any] struct {
	// Kind is the iteration.
	Kind WindowScanKind
	// Key is the key of a WindowScanKey scan.
	Key K
	// From and To are the inclusive key bounds of a WindowScanRange scan.
	From, To K
	// TimeFrom and TimeTo are the inclusive time bounds (ms): the window starts for window
	// stores; the earliest session end and the latest session start for session stores.
	TimeFrom, TimeTo int64
	// Reverse iterates backward (the Backward forms).
	Reverse bool
	// After, when not nil, is a raw store key: the scan starts strictly after it in its order.
	After []byte
}

// WindowScanner is a read-only window store view that can run a [WindowScan]; its iterator's
// keys are the windows (for a WindowScanKey scan the caller takes Window.Start as the
// FetchTimeRange key). ScanWindows reports false when the store under the view cannot (a
// custom store type): then the caller iterates with the plain methods.
type WindowScanner[K, V any] interface {
	ScanWindows(s WindowScan[K]) (RawKeyIterator[serde.Windowed[K], V], bool)
}

// SessionScanner is a read-only session store view that can run a [WindowScan] (see
// [WindowScanner]); its iterator's keys are the sessions.
type SessionScanner[K, V any] interface {
	ScanSessions(s WindowScan[K]) (RawKeyIterator[serde.Windowed[K], V], bool)
}
