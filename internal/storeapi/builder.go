package storeapi

import "github.com/kstreams-go/kstreams/processor"

// BuilderInfo is what the library's own packages need to know of a store.Builder beyond
// processor.StoreBuilder: the runtime to configure the store's changelog topic, the DSL to
// check a stream-table join's grace period. Users never read it: the public builder has no
// method for it.
type BuilderInfo struct {
	// Windowed is true for window and session stores; RetentionMs is then their retention
	// period in ms. Their changelog gets cleanup.policy=compact,delete and retention.ms =
	// RetentionMs + windowstore.changelog.additional.retention.ms (Java's
	// WindowedChangelogTopicConfig).
	Windowed    bool
	RetentionMs int64
	// Versioned is true for versioned key-value stores; HistoryRetentionMs is then their
	// history retention in ms. Their changelog gets min.compaction.lag.ms =
	// HistoryRetentionMs + 24 h unless the log config sets it (Java's
	// VersionedChangelogTopicConfig).
	Versioned          bool
	HistoryRetentionMs int64
}

// BuilderHooks are the functions package store registers at init (SetBuilderHooks) for the
// builders it makes; the other packages call them through DescribeBuilder and
// LogChangelogHeaders.
type BuilderHooks struct {
	// Describe returns the BuilderInfo of b, false when b is not a store.Builder.
	Describe func(b processor.StoreBuilder) (BuilderInfo, bool)
	// LogHeaders makes the timestamped key-value store b builds log the headers of the record
	// being processed with every change (Java 4.4's headers stores, KIP-1271); false (and no
	// change) when b is not a timestamped key-value store.Builder.
	LogHeaders func(b processor.StoreBuilder) bool
}

var builderHooks BuilderHooks

// SetBuilderHooks registers package store's builder hooks; store calls it from init.
func SetBuilderHooks(h BuilderHooks) { builderHooks = h }

// DescribeBuilder returns what the library needs to know of b (see BuilderInfo), and false
// when b is not a store.Builder (a user's own processor.StoreBuilder, or nil).
func DescribeBuilder(b processor.StoreBuilder) (BuilderInfo, bool) {
	if b == nil || builderHooks.Describe == nil {
		return BuilderInfo{}, false
	}
	return builderHooks.Describe(b)
}

// LogChangelogHeaders makes the timestamped key-value store b builds write the headers of the
// record being processed on its changelog records (through HeadersChangelogContext); it
// reports false, changing nothing, when b is not a builder of timestamped key-value stores.
// Java: the headers stores of KIP-1271 (the foreign-key join's subscription store).
func LogChangelogHeaders(b processor.StoreBuilder) bool {
	if b == nil || builderHooks.LogHeaders == nil {
		return false
	}
	return builderHooks.LogHeaders(b)
}
