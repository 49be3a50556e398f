package testdriver

import (
	"fmt"
	"strconv"
	"strings"

	propnames "github.com/kstreams-go/kstreams/internal/props"

	"github.com/kstreams-go/kstreams/internal/cache"
)

// defaultCacheMaxBytes is the default of statestore.cache.max.bytes and
// cache.max.bytes.buffering: 10485760 bytes (10 MiB).
const defaultCacheMaxBytes int64 = 10 * 1024 * 1024

// cacheBytesProp parses a LONG property >= 0 as Java's ConfigDef does (surrounding whitespace
// trimmed); ok is false when the property is not set.
func cacheBytesProp(props map[string]string, name string) (n int64, ok bool, err error) {
	v, ok := props[name]
	if !ok {
		return defaultCacheMaxBytes, false, nil
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if perr != nil {
		return 0, true, fmt.Errorf("%w: %q for configuration %s: not a number of type LONG", ErrInvalidArgument, v, name)
	}
	if n < 0 {
		return 0, true, fmt.Errorf("%w: %d for configuration %s: value must be at least 0", ErrInvalidArgument, n, name)
	}
	return n, true, nil
}

// newRecordCache returns the driver's record cache, shared by the task and the global task as
// in Java's TopologyTestDriver, or nil when caching is off. As Java 4.4: the cache holds
// statestore.cache.max.bytes bytes; the topology's caching layers are stripped (here: the
// cache is nil, so they pass through) when the effective cache size is 0, the effective size
// being statestore.cache.max.bytes when set, else cache.max.bytes.buffering when set, else the
// default (Java: StreamsConfigUtils.totalCacheSize, InternalTopologyBuilder.rewriteTopology).
func newRecordCache(props map[string]string) (*cache.ThreadCache, error) {
	size, newSet, err := cacheBytesProp(props, propnames.StateStoreCacheMaxBytesConfig)
	if err != nil {
		return nil, err
	}
	old, oldSet, err := cacheBytesProp(props, propnames.CacheMaxBytesBufferingConfig)
	if err != nil {
		return nil, err
	}
	effective := size
	if !newSet && oldSet {
		effective = old
	}
	if effective == 0 {
		return nil, nil
	}
	return cache.New(size), nil
}
