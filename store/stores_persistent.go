package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/serde"
)

// ErrInvalidStoreArgument is returned (wrapped, with Java's message) by the Stores factory
// functions for negative retention periods or window sizes, or a retention period smaller than
// the window size, and (wrapped, naming the store) by Builder.Build of a versioned store's
// builder on which WithCachingEnabled was called. Java counterpart: IllegalArgumentException
// (IllegalStateException for the versioned builder's cache).
var ErrInvalidStoreArgument = errors.New("store: invalid argument")

type pebbleKeyValueSupplier struct{ name string }

func (s pebbleKeyValueSupplier) Name() string            { return s.name }
func (s pebbleKeyValueSupplier) Get() KeyValueBytesStore { return newPebbleKeyValueStore(s.name) }
func (s pebbleKeyValueSupplier) MetricsScope() string    { return storeapi.PebbleMetricsScope }

// PersistentKeyValueStore returns a supplier of Pebble key-value engines named name.
// Java: Stores.persistentKeyValueStore(name).
func (StoresFactory) PersistentKeyValueStore(name string) KeyValueBytesStoreSupplier {
	return pebbleKeyValueSupplier{name: name}
}

// PersistentTimestampedKeyValueStore returns a supplier of Pebble key-value engines for
// timestamped stores (values int64 ts ‖ value); use it with
// [StoresFactory.TimestampedKeyValueStoreBuilder].
// Java: Stores.persistentTimestampedKeyValueStore(name).
func (StoresFactory) PersistentTimestampedKeyValueStore(name string) KeyValueBytesStoreSupplier {
	return pebbleKeyValueSupplier{name: name}
}

// WindowBytesStoreSupplier supplies window engines, one per task.
// Java counterpart: org.apache.kafka.streams.state.WindowBytesStoreSupplier.
type WindowBytesStoreSupplier interface {
	// Name returns the store name.
	Name() string
	// Get returns a new, uninitialised engine.
	Get() WindowBytesStore
	// SegmentIntervalMs returns the segment interval in ms.
	SegmentIntervalMs() int64
	// WindowSize returns the window size in ms.
	WindowSize() int64
	// RetainDuplicates reports whether every put is kept (stream-stream joins).
	RetainDuplicates() bool
	// RetentionPeriod returns the retention period in ms.
	RetentionPeriod() int64
	// MetricsScope returns the metrics scope ("pebble" or "in-memory").
	MetricsScope() string
}

// SessionBytesStoreSupplier supplies session engines, one per task.
// Java counterpart: org.apache.kafka.streams.state.SessionBytesStoreSupplier.
type SessionBytesStoreSupplier interface {
	// Name returns the store name.
	Name() string
	// Get returns a new, uninitialised engine.
	Get() SessionBytesStore
	// SegmentIntervalMs returns the segment interval in ms.
	SegmentIntervalMs() int64
	// RetentionPeriod returns the retention period in ms.
	RetentionPeriod() int64
	// MetricsScope returns the metrics scope ("pebble" or "in-memory").
	MetricsScope() string
}

type windowSupplier struct {
	name                 string
	retention, size, seg int64
	dups                 bool
	persistent           bool
}

func (s windowSupplier) Name() string             { return s.name }
func (s windowSupplier) SegmentIntervalMs() int64 { return s.seg }
func (s windowSupplier) WindowSize() int64        { return s.size }
func (s windowSupplier) RetainDuplicates() bool   { return s.dups }
func (s windowSupplier) RetentionPeriod() int64   { return s.retention }
func (s windowSupplier) MetricsScope() string {
	if s.persistent {
		return storeapi.PebbleMetricsScope
	}
	return "in-memory"
}
func (s windowSupplier) Get() WindowBytesStore {
	if s.persistent {
		return newPebbleWindowStore(s.name, s.retention, s.seg, s.size, s.dups)
	}
	return newInMemoryWindowStore(s.name, s.retention, s.size, s.dups)
}

type sessionSupplier struct {
	name           string
	retention, seg int64
	persistent     bool
}

func (s sessionSupplier) Name() string             { return s.name }
func (s sessionSupplier) SegmentIntervalMs() int64 { return s.seg }
func (s sessionSupplier) RetentionPeriod() int64   { return s.retention }
func (s sessionSupplier) MetricsScope() string {
	if s.persistent {
		return storeapi.PebbleMetricsScope
	}
	return "in-memory"
}
func (s sessionSupplier) Get() SessionBytesStore {
	if s.persistent {
		return newPebbleSessionStore(s.name, s.retention, s.seg)
	}
	return newInMemorySessionStore(s.name, s.retention)
}

func windowArgs(name string, retention, windowSize time.Duration) (int64, int64, error) {
	r, w := retention.Milliseconds(), windowSize.Milliseconds()
	switch {
	case r < 0:
		return 0, 0, fmt.Errorf("%w: retentionPeriod cannot be negative", ErrInvalidStoreArgument)
	case w < 0:
		return 0, 0, fmt.Errorf("%w: windowSize cannot be negative", ErrInvalidStoreArgument)
	case w > r:
		return 0, 0, fmt.Errorf("%w: The retention period of the window store %s must be no smaller than its window size. Got size=[%d], retention=[%d]",
			ErrInvalidStoreArgument, name, w, r)
	}
	return r, w, nil
}

// PersistentWindowStore returns a supplier of Pebble window engines with segment interval
// max(retention/2, 60 s). Errors ([ErrInvalidStoreArgument]): negative durations, or
// retention < windowSize. Java: Stores.persistentWindowStore(name, retentionPeriod, windowSize, retainDuplicates).
func (StoresFactory) PersistentWindowStore(name string, retentionPeriod, windowSize time.Duration, retainDuplicates bool) (WindowBytesStoreSupplier, error) {
	r, w, err := windowArgs(name, retentionPeriod, windowSize)
	if err != nil {
		return nil, err
	}
	return windowSupplier{name: name, retention: r, size: w, seg: storeapi.DefaultSegmentInterval(r), dups: retainDuplicates, persistent: true}, nil
}

// PersistentTimestampedWindowStore returns the same supplier as PersistentWindowStore; the
// timestamped value layout is the builder's concern. Java: Stores.persistentTimestampedWindowStore.
func (f StoresFactory) PersistentTimestampedWindowStore(name string, retentionPeriod, windowSize time.Duration, retainDuplicates bool) (WindowBytesStoreSupplier, error) {
	return f.PersistentWindowStore(name, retentionPeriod, windowSize, retainDuplicates)
}

// InMemoryWindowStore returns a supplier of in-memory window engines. Errors as
// PersistentWindowStore. Java: Stores.inMemoryWindowStore(name, retentionPeriod, windowSize, retainDuplicates).
func (StoresFactory) InMemoryWindowStore(name string, retentionPeriod, windowSize time.Duration, retainDuplicates bool) (WindowBytesStoreSupplier, error) {
	r, w, err := windowArgs(name, retentionPeriod, windowSize)
	if err != nil {
		return nil, err
	}
	return windowSupplier{name: name, retention: r, size: w, seg: storeapi.DefaultSegmentInterval(r), dups: retainDuplicates}, nil
}

// PersistentSessionStore returns a supplier of Pebble session engines (segment interval
// max(retention/2, 60 s)). Errors: negative retention ([ErrInvalidStoreArgument]).
// Java: Stores.persistentSessionStore(name, retentionPeriod).
func (StoresFactory) PersistentSessionStore(name string, retentionPeriod time.Duration) (SessionBytesStoreSupplier, error) {
	r := retentionPeriod.Milliseconds()
	if r < 0 {
		return nil, fmt.Errorf("%w: retentionPeriod cannot be negative", ErrInvalidStoreArgument)
	}
	return sessionSupplier{name: name, retention: r, seg: storeapi.DefaultSegmentInterval(r), persistent: true}, nil
}

// InMemorySessionStore returns a supplier of in-memory session engines. Errors: negative
// retention. Java: Stores.inMemorySessionStore(name, retentionPeriod).
func (StoresFactory) InMemorySessionStore(name string, retentionPeriod time.Duration) (SessionBytesStoreSupplier, error) {
	r := retentionPeriod.Milliseconds()
	if r < 0 {
		return nil, fmt.Errorf("%w: retentionPeriod cannot be negative", ErrInvalidStoreArgument)
	}
	return sessionSupplier{name: name, retention: r, seg: storeapi.DefaultSegmentInterval(r)}, nil
}

// windowInfo describes a window or session store with retention period retentionMs to the
// runtime (its changelog's retention.ms); the supplier is asked when the runtime asks, not
// when the builder is made.
func windowInfo(retentionMs func() int64) func() storeapi.BuilderInfo {
	return func() storeapi.BuilderInfo { return storeapi.BuilderInfo{Windowed: true, RetentionMs: retentionMs()} }
}

// WindowStoreBuilder returns a builder of [WindowStore] stores over supplier's engines: the
// engine wrapped (inside out) in change logging (changelog key: key ‖ int64 window start ‖
// int32 sequence number), the record cache (never over a supplier that retains duplicates)
// and the typed layer. The changelog topic gets cleanup.policy=compact,delete and
// retention.ms = the supplier's retention period +
// windowstore.changelog.additional.retention.ms. Nil serdes mean the configuration's default
// serdes, resolved at Init. Java: Stores.windowStoreBuilder(supplier, keySerde, valueSerde).
func (StoresFactory) WindowStoreBuilder[K, V any](supplier WindowBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *Builder[WindowStore[K, V]] {
	b := newBuilder(supplier, windowInfo(func() int64 { return supplier.RetentionPeriod() }), func(o *builderOptions) WindowStore[K, V] {
		inner := supplier.Get()
		if o.logging {
			inner = newChangeLoggingWindowBytesStore(inner, supplier.RetainDuplicates())
		}
		if o.caching && !supplier.RetainDuplicates() {
			inner = newCachingWindowStore(inner, supplier.WindowSize(), supplier.SegmentIntervalMs())
		}
		return newMeteredWindowStore(inner, keySerde, valueSerde)
	})
	b.core.dropsCache = supplier.RetainDuplicates
	return b
}

// SessionStoreBuilder returns a builder of [SessionStore] stores over supplier's engines: the
// engine wrapped (inside out) in change logging (changelog key: key ‖ int64 end ‖ int64
// start), the record cache and the typed layer. The changelog topic gets
// cleanup.policy=compact,delete and retention.ms = the supplier's retention period +
// windowstore.changelog.additional.retention.ms. Nil serdes mean the configuration's default
// serdes, resolved at Init. Java: Stores.sessionStoreBuilder(supplier, keySerde, valueSerde).
func (StoresFactory) SessionStoreBuilder[K, V any](supplier SessionBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *Builder[SessionStore[K, V]] {
	return newBuilder(supplier, windowInfo(func() int64 { return supplier.RetentionPeriod() }), func(o *builderOptions) SessionStore[K, V] {
		inner := supplier.Get()
		if o.logging {
			inner = newChangeLoggingSessionBytesStore(inner)
		}
		if o.caching {
			inner = newCachingSessionStore(inner, supplier.SegmentIntervalMs())
		}
		return newMeteredSessionStore(inner, keySerde, valueSerde)
	})
}
