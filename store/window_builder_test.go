package store

import (
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/serde"
)

// hasWindowCache reports whether a built window store has the record cache layer.
func hasWindowCache(s WindowStore[string, string]) bool {
	for _, l := range storeapi.Layers(s) {
		if _, ok := l.(*cachingWindowStore); ok {
			return true
		}
	}
	return false
}

// The Processor API window store builders put a record cache under the typed layer when asked,
// except over a supplier that retains duplicates (Java's WindowStoreBuilder drops caching then).
func TestWindowStoreBuilderCaching(t *testing.T) {
	for _, dup := range []bool{false, true} {
		sup, err := Stores.InMemoryWindowStore("w", time.Hour, time.Minute, dup)
		if err != nil {
			t.Fatal(err)
		}
		for _, caching := range []bool{false, true} {
			b := Stores.WindowStoreBuilder(sup, serde.String(), serde.String())
			tb := Stores.TimestampedWindowStoreBuilder(sup, serde.String(), serde.String())
			if caching {
				b.WithCachingEnabled()
				tb.WithCachingEnabled()
			}
			want := caching && !dup
			if b.CachingEnabled() != want || tb.CachingEnabled() != want {
				t.Errorf("caching %v, retain duplicates %v: CachingEnabled %v (timestamped %v), want %v", caching, dup, b.CachingEnabled(), tb.CachingEnabled(), want)
			}
			if got := hasWindowCache(b.BuildStore()); got != want {
				t.Errorf("WindowStoreBuilder caching %v, retain duplicates %v: record cache %v, want %v", caching, dup, got, want)
			}
			var cached bool
			for _, l := range storeapi.Layers(tb.BuildStore()) {
				if _, ok := l.(*cachingWindowStore); ok {
					cached = true
				}
			}
			if cached != want {
				t.Errorf("TimestampedWindowStoreBuilder caching %v, retain duplicates %v: record cache %v, want %v", caching, dup, cached, want)
			}
		}
	}
}
