package store

import (
	"errors"
	"fmt"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"maps"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// ErrInvalidStoreArgument is returned (wrapped, with Java's message) by the Stores factory
// functions for negative retention periods or window sizes, or a retention period smaller than
// the window size. Java counterpart: IllegalArgumentException.
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
// timestamped stores (values int64 ts ‖ value); use it with TimestampedKeyValueStoreBuilder.
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

// builderOptions are the logging and caching switches every builder has.
type builderOptions struct {
	logging   bool
	logConfig map[string]string
	caching   bool
}

func (o *builderOptions) logCfg() map[string]string {
	if !o.logging {
		return nil
	}
	if o.logConfig == nil {
		return map[string]string{}
	}
	return maps.Clone(o.logConfig)
}

// WindowStoreBuilder builds typed window stores: an engine from the supplier, wrapped (inside
// out) in change logging (default on), the record cache ([cachingWindowStore], off by default;
// never over a supplier that retains duplicates, as Java's builder drops it then) and the typed
// metered layer. It satisfies processor.StoreBuilder.
// Java counterpart: org.apache.kafka.streams.state.internals.WindowStoreBuilder.
type WindowStoreBuilder[K, V any] struct {
	supplier   WindowBytesStoreSupplier
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	opts       builderOptions
}

var _ processor.StoreBuilder = (*WindowStoreBuilder[string, int64])(nil)

// WindowStoreBuilder returns a builder of typed window stores over supplier's engines; nil
// serdes resolve to the default serdes at Init. Java: Stores.windowStoreBuilder(supplier, keySerde, valueSerde).
func (StoresFactory) WindowStoreBuilder[K, V any](supplier WindowBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *WindowStoreBuilder[K, V] {
	return &WindowStoreBuilder[K, V]{supplier: supplier, keySerde: keySerde, valueSerde: valueSerde, opts: builderOptions{logging: true}}
}

// Name returns the store name. Java: name().
func (b *WindowStoreBuilder[K, V]) Name() string { return b.supplier.Name() }

// WithLoggingEnabled enables the changelog topic with extra topic configs. Java: withLoggingEnabled(Map).
func (b *WindowStoreBuilder[K, V]) WithLoggingEnabled(config map[string]string) *WindowStoreBuilder[K, V] {
	b.opts.logging, b.opts.logConfig = true, maps.Clone(config)
	return b
}

// WithLoggingDisabled disables the changelog topic. Java: withLoggingDisabled().
func (b *WindowStoreBuilder[K, V]) WithLoggingDisabled() *WindowStoreBuilder[K, V] {
	b.opts.logging, b.opts.logConfig = false, nil
	return b
}

// WithCachingEnabled puts a record cache ([cachingWindowStore]) under the typed layer: writes
// stay in the thread's cache (statestore.cache.max.bytes) until a commit or an eviction flushes
// them to the store and changelog. Ignored when the supplier retains duplicates (Java logs a
// warning and does the same). Java: withCachingEnabled().
func (b *WindowStoreBuilder[K, V]) WithCachingEnabled() *WindowStoreBuilder[K, V] {
	b.opts.caching = true
	return b
}

// WithCachingDisabled removes the record cache. Java: withCachingDisabled().
func (b *WindowStoreBuilder[K, V]) WithCachingDisabled() *WindowStoreBuilder[K, V] {
	b.opts.caching = false
	return b
}

// LoggingEnabled reports whether the store has a changelog. Java: loggingEnabled().
func (b *WindowStoreBuilder[K, V]) LoggingEnabled() bool { return b.opts.logging }

// LogConfig returns a copy of the changelog topic configs. Java: logConfig().
func (b *WindowStoreBuilder[K, V]) LogConfig() map[string]string { return b.opts.logCfg() }

// CachingEnabled reports whether WithCachingEnabled was called.
func (b *WindowStoreBuilder[K, V]) CachingEnabled() bool { return b.opts.caching }

// RetentionPeriod returns the supplier's retention period in ms (the changelog topic gets
// retention.ms = this + windowstore.changelog.additional.retention.ms).
func (b *WindowStoreBuilder[K, V]) RetentionPeriod() int64 { return b.supplier.RetentionPeriod() }

// Build returns a new store (a WindowStore[K, V]). Java: build().
func (b *WindowStoreBuilder[K, V]) Build() (processor.StateStore, error) {
	return b.BuildWindowStore(), nil
}

// BuildWindowStore returns a new typed window store (not initialised).
func (b *WindowStoreBuilder[K, V]) BuildWindowStore() WindowStore[K, V] {
	inner := b.supplier.Get()
	if b.opts.logging {
		inner = newChangeLoggingWindowBytesStore(inner, b.supplier.RetainDuplicates())
	}
	if b.opts.caching && !b.supplier.RetainDuplicates() {
		inner = newCachingWindowStore(inner, b.supplier.WindowSize(), b.supplier.SegmentIntervalMs())
	}
	return newMeteredWindowStore(inner, b.keySerde, b.valueSerde)
}

// SessionStoreBuilder builds typed session stores: an engine from the supplier, wrapped in
// change logging (default on), the record cache ([cachingSessionStore], off by default) and
// the typed metered layer. Java counterpart: org.apache.kafka.streams.state.internals.SessionStoreBuilder.
type SessionStoreBuilder[K, V any] struct {
	supplier   SessionBytesStoreSupplier
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	opts       builderOptions
}

var _ processor.StoreBuilder = (*SessionStoreBuilder[string, int64])(nil)

// SessionStoreBuilder returns a builder of typed session stores over supplier's engines.
// Java: Stores.sessionStoreBuilder(supplier, keySerde, valueSerde).
func (StoresFactory) SessionStoreBuilder[K, V any](supplier SessionBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *SessionStoreBuilder[K, V] {
	return &SessionStoreBuilder[K, V]{supplier: supplier, keySerde: keySerde, valueSerde: valueSerde, opts: builderOptions{logging: true}}
}

// Name returns the store name. Java: name().
func (b *SessionStoreBuilder[K, V]) Name() string { return b.supplier.Name() }

// WithLoggingEnabled enables the changelog topic with extra topic configs. Java: withLoggingEnabled(Map).
func (b *SessionStoreBuilder[K, V]) WithLoggingEnabled(config map[string]string) *SessionStoreBuilder[K, V] {
	b.opts.logging, b.opts.logConfig = true, maps.Clone(config)
	return b
}

// WithLoggingDisabled disables the changelog topic. Java: withLoggingDisabled().
func (b *SessionStoreBuilder[K, V]) WithLoggingDisabled() *SessionStoreBuilder[K, V] {
	b.opts.logging, b.opts.logConfig = false, nil
	return b
}

// WithCachingEnabled asks for a record cache. Java: withCachingEnabled().
func (b *SessionStoreBuilder[K, V]) WithCachingEnabled() *SessionStoreBuilder[K, V] {
	b.opts.caching = true
	return b
}

// WithCachingDisabled removes the record cache. Java: withCachingDisabled().
func (b *SessionStoreBuilder[K, V]) WithCachingDisabled() *SessionStoreBuilder[K, V] {
	b.opts.caching = false
	return b
}

// LoggingEnabled reports whether the store has a changelog. Java: loggingEnabled().
func (b *SessionStoreBuilder[K, V]) LoggingEnabled() bool { return b.opts.logging }

// LogConfig returns a copy of the changelog topic configs. Java: logConfig().
func (b *SessionStoreBuilder[K, V]) LogConfig() map[string]string { return b.opts.logCfg() }

// CachingEnabled reports whether WithCachingEnabled was called.
func (b *SessionStoreBuilder[K, V]) CachingEnabled() bool { return b.opts.caching }

// RetentionPeriod returns the supplier's retention period in ms.
func (b *SessionStoreBuilder[K, V]) RetentionPeriod() int64 { return b.supplier.RetentionPeriod() }

// Build returns a new store (a SessionStore[K, V]). Java: build().
func (b *SessionStoreBuilder[K, V]) Build() (processor.StateStore, error) {
	return b.BuildSessionStore(), nil
}

// BuildSessionStore returns a new typed session store (not initialised).
func (b *SessionStoreBuilder[K, V]) BuildSessionStore() SessionStore[K, V] {
	inner := b.supplier.Get()
	if b.opts.logging {
		inner = newChangeLoggingSessionBytesStore(inner)
	}
	if b.opts.caching {
		inner = newCachingSessionStore(inner, b.supplier.SegmentIntervalMs())
	}
	return newMeteredSessionStore(inner, b.keySerde, b.valueSerde)
}
