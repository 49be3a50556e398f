package store

import (
	"maps"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// KeyValueBytesStoreSupplier supplies new bytes-level key-value engines, one per task.
// Java counterpart: org.apache.kafka.streams.state.KeyValueBytesStoreSupplier.
type KeyValueBytesStoreSupplier interface {
	// Name returns the name of the stores supplied.
	Name() string
	// Get returns a new, uninitialised store instance.
	Get() KeyValueBytesStore
	// MetricsScope returns the metrics scope of the stores ("in-memory" for the in-memory engine).
	MetricsScope() string
}

type inMemoryKeyValueSupplier struct{ name string }

func (s inMemoryKeyValueSupplier) Name() string            { return s.name }
func (s inMemoryKeyValueSupplier) Get() KeyValueBytesStore { return newInMemoryKeyValueStore(s.name) }
func (s inMemoryKeyValueSupplier) MetricsScope() string    { return "in-memory" }

// KeyValueStoreBuilder builds typed key-value stores: an engine from the supplier, wrapped (from
// the inside out) in change logging (when logging is enabled, the default), the record cache
// (when caching is enabled) and the typed metered layer. Logging is enabled by default with no
// extra topic configs; caching is disabled by default (as Java's StoreBuilder). The With* methods modify the builder and return it.
// It satisfies processor.StoreBuilder. Java counterpart: org.apache.kafka.streams.state.internals.KeyValueStoreBuilder.
type KeyValueStoreBuilder[K, V any] struct {
	supplier   KeyValueBytesStoreSupplier
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	logging    bool
	logConfig  map[string]string
	caching    bool
}

var _ processor.StoreBuilder = (*KeyValueStoreBuilder[string, int32])(nil)

// Name returns the store name (the supplier's). Java: name().
func (b *KeyValueStoreBuilder[K, V]) Name() string { return b.supplier.Name() }

// WithLoggingEnabled enables the changelog topic "<application.id>-<name>-changelog" with the
// given extra topic configs (copied; nil for none). Java: withLoggingEnabled(Map).
func (b *KeyValueStoreBuilder[K, V]) WithLoggingEnabled(config map[string]string) *KeyValueStoreBuilder[K, V] {
	b.logging = true
	b.logConfig = maps.Clone(config)
	return b
}

// WithLoggingDisabled disables the changelog topic. Java: withLoggingDisabled().
func (b *KeyValueStoreBuilder[K, V]) WithLoggingDisabled() *KeyValueStoreBuilder[K, V] {
	b.logging = false
	b.logConfig = nil
	return b
}

// WithCachingEnabled puts a record cache layer ([cachingKeyValueStore]) between the typed layer
// and the change-logging layer: writes are collapsed per key in the instance's cache
// (statestore.cache.max.bytes) and reach the store, the changelog and the flush listener on
// commit or eviction. Java: withCachingEnabled().
func (b *KeyValueStoreBuilder[K, V]) WithCachingEnabled() *KeyValueStoreBuilder[K, V] {
	b.caching = true
	return b
}

// WithCachingDisabled removes the record cache. Java: withCachingDisabled().
func (b *KeyValueStoreBuilder[K, V]) WithCachingDisabled() *KeyValueStoreBuilder[K, V] {
	b.caching = false
	return b
}

// LoggingEnabled reports whether the store has a changelog. Java: loggingEnabled().
func (b *KeyValueStoreBuilder[K, V]) LoggingEnabled() bool { return b.logging }

// LogConfig returns a copy of the changelog topic configs (empty map when logging is enabled
// without configs, nil when disabled). Java: logConfig().
func (b *KeyValueStoreBuilder[K, V]) LogConfig() map[string]string {
	if !b.logging {
		return nil
	}
	if b.logConfig == nil {
		return map[string]string{}
	}
	return maps.Clone(b.logConfig)
}

// CachingEnabled reports whether WithCachingEnabled was called.
func (b *KeyValueStoreBuilder[K, V]) CachingEnabled() bool { return b.caching }

// Build returns a new store; it satisfies processor.StoreBuilder. The store is a
// KeyValueStore[K, V]. Java: build().
func (b *KeyValueStoreBuilder[K, V]) Build() (processor.StateStore, error) {
	return b.BuildKeyValueStore(), nil
}

// BuildKeyValueStore returns a new typed store (not initialised).
func (b *KeyValueStoreBuilder[K, V]) BuildKeyValueStore() KeyValueStore[K, V] {
	var inner KeyValueBytesStore = b.supplier.Get()
	if b.logging {
		inner = newChangeLoggingKeyValueBytesStore(inner)
	}
	if b.caching {
		inner = newCachingKeyValueStore(inner)
	}
	return newMeteredKeyValueStore(inner, b.keySerde, b.valueSerde)
}

// StoresFactory is the type of [Stores]; it has no state.
type StoresFactory struct{}

// Stores is the factory of store suppliers and builders, as Java's
// org.apache.kafka.streams.state.Stores:
//
//	b := store.Stores.KeyValueStoreBuilder(store.Stores.InMemoryKeyValueStore("Counts"), serde.String(), serde.Integer())
var Stores StoresFactory

// InMemoryKeyValueStore returns a supplier of in-memory key-value engines named name.
// Java: Stores.inMemoryKeyValueStore(name).
func (StoresFactory) InMemoryKeyValueStore(name string) KeyValueBytesStoreSupplier {
	return inMemoryKeyValueSupplier{name: name}
}

// KeyValueStoreBuilder returns a builder of typed key-value stores over supplier's engines.
// Nil serdes mean the default serdes of the configuration (default.key.serde /
// default.value.serde), resolved at Init. Java: Stores.keyValueStoreBuilder(supplier, keySerde, valueSerde).
func (StoresFactory) KeyValueStoreBuilder[K, V any](supplier KeyValueBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *KeyValueStoreBuilder[K, V] {
	return &KeyValueStoreBuilder[K, V]{supplier: supplier, keySerde: keySerde, valueSerde: valueSerde, logging: true}
}
