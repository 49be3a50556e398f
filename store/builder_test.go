package store

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// layerNames returns the types of st's layers, outermost first, without package or type
// arguments: "timestampedStore > cachingKeyValueStore > ...".
func layerNames(st processor.StateStore) string {
	var names []string
	for _, l := range storeapi.Layers(st) {
		names = append(names, regexp.MustCompile(`^\*?store\.|\[.*$`).ReplaceAllString(fmt.Sprintf("%T", l), ""))
	}
	return strings.Join(names, " > ")
}

// configurable is the part of Builder the table test below switches, whatever its S.
type configurable interface {
	processor.StoreBuilder
	CachingEnabled() bool
	enable(logging, caching bool)
}

// switched adapts a *Builder[S] to configurable.
type switched[S processor.StateStore] struct{ *Builder[S] }

func (s switched[S]) enable(logging, caching bool) {
	if logging {
		s.WithLoggingEnabled(nil)
	} else {
		s.WithLoggingDisabled()
	}
	if caching {
		s.WithCachingEnabled()
	} else {
		s.WithCachingDisabled()
	}
}

// Every builder of the Stores factory wraps its engine, from the inside out, in change
// logging (when enabled), the record cache (when enabled; never for versioned stores) and the
// typed layer, as Java's builders do; DescribeBuilder tells the runtime the retentions.
func TestBuilderLayers(t *testing.T) {
	win, err := Stores.InMemoryWindowStore("w", time.Hour, time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := Stores.InMemorySessionStore("s", 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ver, err := Stores.InMemoryVersionedKeyValueStore("v", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		builder func() configurable
		info    storeapi.BuilderInfo
		// layers with logging and caching enabled; the layers of the other combinations are
		// these without the logging or caching one.
		layers, logging, caching string
	}{
		{"key-value", func() configurable {
			return switched[KeyValueStore[string, int64]]{Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.Long())}
		}, storeapi.BuilderInfo{},
			"meteredKeyValueStore > cachingKeyValueStore > changeLoggingKeyValueBytesStore > inMemoryKeyValueStore",
			"changeLoggingKeyValueBytesStore", "cachingKeyValueStore"},
		{"timestamped key-value", func() configurable {
			return switched[TimestampedKeyValueStore[string, int64]]{Stores.TimestampedKeyValueStoreBuilder(Stores.InMemoryKeyValueStore("tkv"), serde.String(), serde.Long())}
		}, storeapi.BuilderInfo{},
			"timestampedStore > cachingKeyValueStore > changeLoggingTimestampedKeyValueBytesStore > inMemoryKeyValueStore",
			"changeLoggingTimestampedKeyValueBytesStore", "cachingKeyValueStore"},
		{"versioned", func() configurable {
			return switched[VersionedKeyValueStore[string, int64]]{Stores.VersionedKeyValueStoreBuilder(ver, serde.String(), serde.Long())}
		}, storeapi.BuilderInfo{Versioned: true, HistoryRetentionMs: 3000},
			"meteredVersionedKeyValueStore > changeLoggingVersionedKeyValueBytesStore > inMemoryVersionedKeyValueStore",
			"changeLoggingVersionedKeyValueBytesStore", ""},
		{"window", func() configurable {
			return switched[WindowStore[string, int64]]{Stores.WindowStoreBuilder(win, serde.String(), serde.Long())}
		}, storeapi.BuilderInfo{Windowed: true, RetentionMs: 3_600_000},
			"meteredWindowStore > cachingWindowStore > changeLoggingWindowBytesStore > inMemoryWindowStore",
			"changeLoggingWindowBytesStore", "cachingWindowStore"},
		{"timestamped window", func() configurable {
			return switched[TimestampedWindowStore[string, int64]]{Stores.TimestampedWindowStoreBuilder(win, serde.String(), serde.Long())}
		}, storeapi.BuilderInfo{Windowed: true, RetentionMs: 3_600_000},
			"timestampedWindowStore > cachingWindowStore > changeLoggingTimestampedWindowBytesStore > inMemoryWindowStore",
			"changeLoggingTimestampedWindowBytesStore", "cachingWindowStore"},
		{"session", func() configurable {
			return switched[SessionStore[string, int64]]{Stores.SessionStoreBuilder(sess, serde.String(), serde.Long())}
		}, storeapi.BuilderInfo{Windowed: true, RetentionMs: 7_200_000},
			"meteredSessionStore > cachingSessionStore > changeLoggingSessionBytesStore > inMemorySessionStore",
			"changeLoggingSessionBytesStore", "cachingSessionStore"},
	}
	without := func(layers, layer string) string {
		if layer == "" {
			return layers
		}
		return strings.Replace(layers, " > "+layer, "", 1)
	}
	for _, c := range cases {
		// Defaults: logging on, caching off.
		b := c.builder()
		if !b.LoggingEnabled() || b.CachingEnabled() {
			t.Errorf("%s: defaults logging %v caching %v, want true false", c.name, b.LoggingEnabled(), b.CachingEnabled())
		}
		st, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := layerNames(st), without(c.layers, c.caching); got != want {
			t.Errorf("%s: default layers %s, want %s", c.name, got, want)
		}
		if info, ok := storeapi.DescribeBuilder(b); !ok || info != c.info {
			t.Errorf("%s: DescribeBuilder = %+v, %v, want %+v", c.name, info, ok, c.info)
		}
		for _, logging := range []bool{false, true} {
			for _, caching := range []bool{false, true} {
				b := c.builder()
				b.enable(logging, caching)
				want := c.layers
				if !logging {
					want = without(want, c.logging)
				}
				if !caching {
					want = without(want, c.caching)
				}
				st, err := b.Build()
				if caching && c.caching == "" { // versioned: no cache, refused by Build
					if !errors.Is(err, ErrInvalidStoreArgument) || !strings.Contains(err.Error(), `versioned store "v"`) {
						t.Errorf("%s logging %v caching %v: Build error %v, want ErrInvalidStoreArgument naming the store", c.name, logging, caching, err)
					}
					if b.CachingEnabled() {
						t.Errorf("%s: CachingEnabled true on a builder that builds no cache", c.name)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := layerNames(st); got != want {
					t.Errorf("%s logging %v caching %v: layers %s, want %s", c.name, logging, caching, got, want)
				}
				if b.LoggingEnabled() != logging || b.CachingEnabled() != (caching && c.caching != "") {
					t.Errorf("%s logging %v caching %v: builder reports logging %v caching %v", c.name, logging, caching, b.LoggingEnabled(), b.CachingEnabled())
				}
			}
		}
	}
}

// LogConfig is nil without logging, an empty map with logging but no configs, and a copy of
// the configs given (changing either map changes nothing else).
func TestBuilderLogConfig(t *testing.T) {
	b := Stores.KeyValueStoreBuilder(Stores.InMemoryKeyValueStore("kv"), serde.String(), serde.Long())
	if cfg := b.LogConfig(); cfg == nil || len(cfg) != 0 {
		t.Fatalf("default LogConfig = %#v, want an empty map", cfg)
	}
	given := map[string]string{"segment.ms": "1000"}
	b.WithLoggingEnabled(given)
	given["segment.ms"] = "2"
	cfg := b.LogConfig()
	if !maps.Equal(cfg, map[string]string{"segment.ms": "1000"}) {
		t.Fatalf("LogConfig = %v, want segment.ms=1000", cfg)
	}
	cfg["segment.ms"] = "3"
	if got := b.LogConfig()["segment.ms"]; got != "1000" {
		t.Fatalf("LogConfig after changing a returned map: segment.ms=%s, want 1000", got)
	}
	if cfg := b.WithLoggingDisabled().LogConfig(); cfg != nil || b.LoggingEnabled() {
		t.Fatalf("after WithLoggingDisabled: LogConfig %#v logging %v, want nil false", cfg, b.LoggingEnabled())
	}
	if cfg := b.WithLoggingEnabled(nil).LogConfig(); cfg == nil || len(cfg) != 0 {
		t.Fatalf("WithLoggingEnabled(nil): LogConfig %#v, want an empty map", cfg)
	}
	if b.Name() != "kv" {
		t.Fatalf("Name = %q, want kv", b.Name())
	}
	// A builder of the user's own is not described.
	if _, ok := storeapi.DescribeBuilder(ownBuilder{b}); ok {
		t.Fatal("DescribeBuilder described a builder that is not a store.Builder")
	}
}

// ownBuilder is a processor.StoreBuilder that is not a store.Builder.
type ownBuilder struct{ processor.StoreBuilder }

// WithCachingEnabled on a versioned store's builder is an error (Java's builder throws
// IllegalStateException): Build reports it naming the store, BuildStore panics with the same
// error, and WithCachingDisabled does not undo the call.
func TestVersionedBuilderRefusesCaching(t *testing.T) {
	sup, err := Stores.InMemoryVersionedKeyValueStore("prices", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b := Stores.VersionedKeyValueStoreBuilder(sup, serde.String(), serde.Long()).WithCachingEnabled()
	if b.CachingEnabled() {
		t.Fatal("CachingEnabled = true for a versioned store")
	}
	st, err := b.Build()
	const msg = `store: invalid argument: versioned store "prices" has no record cache: WithCachingEnabled was called on its builder`
	if st != nil || !errors.Is(err, ErrInvalidStoreArgument) || err.Error() != msg {
		t.Fatalf("Build = %v, %v; want nil and %q", st, err, msg)
	}
	b.WithCachingDisabled()
	if _, err := b.Build(); err == nil || err.Error() != msg {
		t.Fatalf("Build after WithCachingDisabled: %v, want %q", err, msg)
	}
	func() {
		defer func() {
			if r, _ := recover().(error); r == nil || r.Error() != msg {
				t.Fatalf("BuildStore panicked with %v, want %q", r, msg)
			}
		}()
		b.BuildStore()
	}()
}
