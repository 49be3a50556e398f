package testdriver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kstreams-go/kstreams/internal/cache"
)

// Record-cache properties.
const (
	// StatestoreCacheMaxBytesConfig is "statestore.cache.max.bytes": the size in bytes of the
	// record cache in front of the stores built with caching enabled (the DSL's stores, unless
	// Materialized disables it). Default 10485760 (10 MiB); must be >= 0. The driver's cache has
	// this size; 0 switches caching off everywhere (one output per input). Java:
	// StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG.
	StatestoreCacheMaxBytesConfig = "statestore.cache.max.bytes"
	// CacheMaxBytesBufferingConfig is "cache.max.bytes.buffering", Java's deprecated name of
	// statestore.cache.max.bytes (default 10485760, >= 0). As in Java 4.4's TopologyTestDriver it
	// only decides whether caching is on (when statestore.cache.max.bytes is not set, a value of
	// 0 switches caching off); it never sets the driver cache's size.
	// Java: StreamsConfig.CACHE_MAX_BYTES_BUFFERING_CONFIG.
	CacheMaxBytesBufferingConfig = "cache.max.bytes.buffering"
	// DefaultCacheMaxBytes is the default of both properties: 10485760 bytes (10 MiB).
	DefaultCacheMaxBytes int64 = 10 * 1024 * 1024
)

// ErrInvalidConfig is returned for a property value Java's StreamsConfig rejects (Java:
// ConfigException "Invalid value ... for configuration ...").
var ErrInvalidConfig = errors.New("testdriver: invalid configuration value")

// cacheBytesProp parses a LONG property >= 0 as Java's ConfigDef does (surrounding whitespace
// trimmed); ok is false when the property is not set.
func cacheBytesProp(props map[string]string, name string) (n int64, ok bool, err error) {
	v, ok := props[name]
	if !ok {
		return DefaultCacheMaxBytes, false, nil
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if perr != nil {
		return 0, true, fmt.Errorf("%w: %q for configuration %s: not a number of type LONG", ErrInvalidConfig, v, name)
	}
	if n < 0 {
		return 0, true, fmt.Errorf("%w: %d for configuration %s: value must be at least 0", ErrInvalidConfig, n, name)
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
	size, newSet, err := cacheBytesProp(props, StatestoreCacheMaxBytesConfig)
	if err != nil {
		return nil, err
	}
	old, oldSet, err := cacheBytesProp(props, CacheMaxBytesBufferingConfig)
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
