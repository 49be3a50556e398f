package store

import (
	"fmt"
	"maps"

	"github.com/kstreams-go/kstreams/internal/storeapi"
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

// Builder builds one store of type S per task (S is the typed store interface:
// KeyValueStore[K, V], TimestampedKeyValueStore[K, V], VersionedKeyValueStore[K, V],
// WindowStore[K, V], TimestampedWindowStore[K, V] or SessionStore[K, V]). The [Stores] factory
// makes one from an engine supplier and the key and value serdes; every store it builds is the
// supplier's engine wrapped, from the inside out, in change logging (when logging is enabled),
// the record cache (when caching is enabled) and the typed metered layer (serdes; nil serdes
// mean the configuration's default.key.serde / default.value.serde, resolved at Init).
//
// Defaults, as Java's StoreBuilder: logging enabled with no extra changelog topic configs,
// caching disabled. Versioned stores have no record cache: WithCachingEnabled on their
// builder is an error, reported by Build (an error wrapping [ErrInvalidStoreArgument] that
// names the store) and BuildStore (a panic with that error), where Java's
// VersionedKeyValueStoreBuilder throws IllegalStateException at the call itself. Window stores
// whose supplier retains duplicates get no cache either: the request is dropped, as Java drops
// it with a warning, and CachingEnabled reports false.
//
// The With* methods modify the builder and return it, for chaining. A Builder is not safe
// for concurrent modification; Build and BuildStore may be called concurrently once it is
// configured. It satisfies processor.StoreBuilder. Java counterpart:
// org.apache.kafka.streams.state.StoreBuilder<T> (the builders of
// org.apache.kafka.streams.state.internals).
type Builder[S processor.StateStore] struct {
	core  builderCore
	build func(o *builderOptions) S
}

var _ processor.StoreBuilder = (*Builder[KeyValueStore[string, int32]])(nil)

// builderCore is the untyped part of a Builder, which the builder hooks of internal/storeapi
// read (see describedBuilder).
type builderCore struct {
	// supplier names the store (asked on every Name call, as Java's builders do).
	supplier interface{ Name() string }
	opts     builderOptions
	// info describes the store to the runtime (nil: nothing to say).
	info func() storeapi.BuilderInfo
	// versioned marks a versioned store's builder, which takes no cache; cachingRefused
	// records that WithCachingEnabled was called on it all the same, which Build reports.
	versioned, cachingRefused bool
	// dropsCache (nil: never) reports whether the store is built without its cache even when
	// caching is enabled: a window store whose supplier retains duplicates.
	dropsCache func() bool
	// headersOK: the store is a timestamped key-value store, which can log headers.
	headersOK bool
}

// builderOptions are the logging and caching switches of a Builder.
type builderOptions struct {
	logging   bool
	logConfig map[string]string
	caching   bool
	// headers: changelog records carry the headers of the record being processed
	// (storeapi.LogChangelogHeaders; timestamped key-value stores only).
	headers bool
}

// newBuilder returns a Builder of the stores supplier names, with the defaults (logging on,
// caching off), that builds its stores with build; info (nil for none) describes them from
// the supplier when the runtime asks.
func newBuilder[S processor.StateStore](supplier interface{ Name() string }, info func() storeapi.BuilderInfo, build func(o *builderOptions) S) *Builder[S] {
	return &Builder[S]{core: builderCore{supplier: supplier, opts: builderOptions{logging: true}, info: info}, build: build}
}

// describedBuilder is implemented by every Builder; the hooks registered with
// storeapi.SetBuilderHooks reach the untyped part through it.
type describedBuilder interface{ builderCore() *builderCore }

func (b *Builder[S]) builderCore() *builderCore { return &b.core }

func init() {
	storeapi.SetBuilderHooks(storeapi.BuilderHooks{
		Describe: func(sb processor.StoreBuilder) (storeapi.BuilderInfo, bool) {
			d, ok := sb.(describedBuilder)
			if !ok {
				return storeapi.BuilderInfo{}, false
			}
			if info := d.builderCore().info; info != nil {
				return info(), true
			}
			return storeapi.BuilderInfo{}, true
		},
		LogHeaders: func(sb processor.StoreBuilder) bool {
			d, ok := sb.(describedBuilder)
			if !ok || !d.builderCore().headersOK {
				return false
			}
			d.builderCore().opts.headers = true
			return true
		},
	})
}

// Name returns the store name (the supplier's): the name processors look the store up by and
// the middle of its changelog topic's name. Java: name().
func (b *Builder[S]) Name() string { return b.core.supplier.Name() }

// WithLoggingEnabled enables the changelog topic "<application.id>-<name>-changelog" with the
// given extra topic configs (copied; nil for none), which override the library's defaults for
// the topic. Java: withLoggingEnabled(Map).
func (b *Builder[S]) WithLoggingEnabled(config map[string]string) *Builder[S] {
	b.core.opts.logging, b.core.opts.logConfig = true, maps.Clone(config)
	return b
}

// WithLoggingDisabled disables the changelog topic: the store is not restored after a
// failure or a move to another instance. Java: withLoggingDisabled().
func (b *Builder[S]) WithLoggingDisabled() *Builder[S] {
	b.core.opts.logging, b.core.opts.logConfig = false, nil
	return b
}

// WithCachingEnabled puts the record cache between the typed layer and the change-logging
// layer: writes are collapsed per key in the thread's cache (statestore.cache.max.bytes) and
// reach the store, the changelog and the cache's flush listener on commit or eviction. On a
// versioned store's builder it is an error that Build reports (WithCachingDisabled does not
// undo it); over a window supplier that retains duplicates it is ignored (see Builder). Java:
// withCachingEnabled().
func (b *Builder[S]) WithCachingEnabled() *Builder[S] {
	if b.core.versioned {
		b.core.cachingRefused = true
		return b
	}
	b.core.opts.caching = true
	return b
}

// WithCachingDisabled removes the record cache (the default). Java: withCachingDisabled().
func (b *Builder[S]) WithCachingDisabled() *Builder[S] {
	b.core.opts.caching = false
	return b
}

// LoggingEnabled reports whether the store has a changelog topic (true by default). Java:
// loggingEnabled().
func (b *Builder[S]) LoggingEnabled() bool { return b.core.opts.logging }

// LogConfig returns a copy of the extra changelog topic configs: nil when logging is disabled,
// an empty map when it is enabled without configs. Java: logConfig().
func (b *Builder[S]) LogConfig() map[string]string {
	if !b.core.opts.logging {
		return nil
	}
	if b.core.opts.logConfig == nil {
		return map[string]string{}
	}
	return maps.Clone(b.core.opts.logConfig)
}

// CachingEnabled reports whether the stores built have the record cache: WithCachingEnabled
// was called (and not undone by WithCachingDisabled) and the store can have one. It is
// always false for a versioned store, and false for a window store whose supplier retains
// duplicates (asked on every call). Java has no getter (the builders' enableCaching field).
func (b *Builder[S]) CachingEnabled() bool {
	return b.core.opts.caching && !b.core.versioned && (b.core.dropsCache == nil || !b.core.dropsCache())
}

// Build returns a new, uninitialised store, an S; it satisfies processor.StoreBuilder, whose
// engine calls it once per task. It fails only on a versioned store's builder on which
// WithCachingEnabled was called: the error wraps [ErrInvalidStoreArgument] and names the
// store. Java: build() (Java throws IllegalStateException from withCachingEnabled instead).
func (b *Builder[S]) Build() (processor.StateStore, error) {
	if err := b.core.check(); err != nil {
		return nil, err
	}
	o := b.core.opts
	return b.build(&o), nil
}

// BuildStore returns a new, uninitialised store with its typed interface, for tests and
// tools that use a store outside a topology (it must be initialised with a
// processor.StateStoreContext before use). Where Build returns an error (WithCachingEnabled
// on a versioned store's builder), BuildStore panics with that error. Java: build().
func (b *Builder[S]) BuildStore() S {
	if err := b.core.check(); err != nil {
		panic(err)
	}
	o := b.core.opts
	return b.build(&o)
}

// check returns the error Build reports for the builder's configuration, nil when it can build.
func (c *builderCore) check() error {
	if c.cachingRefused {
		return fmt.Errorf("%w: versioned store %q has no record cache: WithCachingEnabled was called on its builder", ErrInvalidStoreArgument, c.supplier.Name())
	}
	return nil
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
func (StoresFactory) KeyValueStoreBuilder[K, V any](supplier KeyValueBytesStoreSupplier, keySerde serde.Serde[K], valueSerde serde.Serde[V]) *Builder[KeyValueStore[K, V]] {
	return newBuilder(supplier, nil, func(o *builderOptions) KeyValueStore[K, V] {
		var inner KeyValueBytesStore = supplier.Get()
		if o.logging {
			inner = newChangeLoggingKeyValueBytesStore(inner)
		}
		if o.caching {
			inner = newCachingKeyValueStore(inner)
		}
		return newMeteredKeyValueStore(inner, keySerde, valueSerde)
	})
}
