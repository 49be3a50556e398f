package kstream

import (
	"math"
	"time"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/processor"
)

// ErrSuppressBufferFull is returned at run time (failing the task) when a buffer configured
// with ShutDownWhenFull exceeds its bounds. Java: StreamsException "... buffer exceeded its max
// capacity ...".
var ErrSuppressBufferFull = ktable.ErrSuppressBufferFull

const suppressName = "KTABLE-SUPPRESS-"

// BufferConfig bounds a suppression buffer: at most MaxRecords keys and MaxBytes bytes (Java's
// size estimate: key, value and old/prior value bytes, record context), and says what happens
// when a bound is exceeded: emit the oldest entries early (the default of bounded configs) or
// fail the task with ErrSuppressBufferFull. The zero value is not meaningful; use
// [BufferConfigMaxRecords], [BufferConfigMaxBytes] or [BufferConfigUnbounded]. Java
// counterpart: Suppressed.BufferConfig (EagerBufferConfig / StrictBufferConfig).
type BufferConfig struct {
	maxRecords, maxBytes int64
	shutDown             bool
	noLogging            bool
	logConfig            map[string]string
}

// BufferConfigMaxRecords returns a buffer of at most n keys that emits early when full. Java:
// BufferConfig.maxRecords(n).
func BufferConfigMaxRecords(n int64) BufferConfig {
	return BufferConfig{maxRecords: n, maxBytes: math.MaxInt64}
}

// BufferConfigMaxBytes returns a buffer of at most n bytes that emits early when full. Java:
// BufferConfig.maxBytes(n).
func BufferConfigMaxBytes(n int64) BufferConfig {
	return BufferConfig{maxRecords: math.MaxInt64, maxBytes: n}
}

// BufferConfigUnbounded returns an unbounded buffer (it never emits early; memory is the
// limit). Java: BufferConfig.unbounded().
func BufferConfigUnbounded() BufferConfig {
	return BufferConfig{maxRecords: math.MaxInt64, maxBytes: math.MaxInt64, shutDown: true}
}

// WithMaxRecords returns a copy bounded to n keys. Java: withMaxRecords(n).
func (c BufferConfig) WithMaxRecords(n int64) BufferConfig { c.maxRecords = n; return c }

// WithMaxBytes returns a copy bounded to n bytes. Java: withMaxBytes(n).
func (c BufferConfig) WithMaxBytes(n int64) BufferConfig { c.maxBytes = n; return c }

// WithNoBound returns an unbounded copy that shuts down when full (never). Java: withNoBound().
func (c BufferConfig) WithNoBound() BufferConfig {
	c.maxRecords, c.maxBytes, c.shutDown = math.MaxInt64, math.MaxInt64, true
	return c
}

// EmitEarlyWhenFull returns a copy that emits the oldest entries when over a bound. Java:
// emitEarlyWhenFull().
func (c BufferConfig) EmitEarlyWhenFull() BufferConfig { c.shutDown = false; return c }

// ShutDownWhenFull returns a copy that fails the task (ErrSuppressBufferFull) when over a
// bound. Java: shutDownWhenFull().
func (c BufferConfig) ShutDownWhenFull() BufferConfig { c.shutDown = true; return c }

// WithLoggingDisabled returns a copy without changelog: the buffer's contents are lost when the
// task moves or the application crashes (their windows' results are then never emitted).
// Java: withLoggingDisabled().
func (c BufferConfig) WithLoggingDisabled() BufferConfig { c.noLogging = true; return c }

// WithLoggingEnabled returns a copy with a changelog (the default) and extra topic configs for
// it (may be nil). The changelog "<application.id>-<store>-changelog" is in Java's layout (see
// ktable.SuppressBuffer), so a Java application's buffer restores into ours and back. Java:
// withLoggingEnabled(config).
func (c BufferConfig) WithLoggingEnabled(config map[string]string) BufferConfig {
	c.noLogging, c.logConfig = false, config
	return c
}

// Suppressed says how KTable.Suppress holds back updates. Java counterpart:
// org.apache.kafka.streams.kstream.Suppressed.
type Suppressed struct {
	name        string
	windowClose bool
	waitMs      int64
	buffer      BufferConfig
}

// SuppressedUntilWindowCloses emits only the final result of each window, once stream time
// passes window end + grace (sessions: + gap); deletes are dropped. buffer must not emit early
// (use BufferConfigUnbounded or a bounded config with ShutDownWhenFull), else Build fails with a
// *processor.TopologyError. Java: Suppressed.untilWindowCloses(StrictBufferConfig).
func SuppressedUntilWindowCloses(buffer BufferConfig) Suppressed {
	return Suppressed{windowClose: true, buffer: buffer}
}

// SuppressedUntilTimeLimit holds each key's updates for timeToWaitForMoreEvents (ms precision)
// of stream time after its first buffered update, then emits the latest; the buffer bounds
// apply. Java: Suppressed.untilTimeLimit(Duration, BufferConfig).
func SuppressedUntilTimeLimit(timeToWaitForMoreEvents time.Duration, buffer BufferConfig) Suppressed {
	return Suppressed{waitMs: timeToWaitForMoreEvents.Milliseconds(), buffer: buffer}
}

// WithName returns a copy naming the suppress processor (its store becomes "<name>-store").
// Java: withName(name).
func (s Suppressed) WithName(name string) Suppressed { s.name = name; return s }

// graceSupplier is implemented by the windowed aggregation suppliers.
type graceSupplier interface{ GraceMs() int64 }

// Suppress holds back the table's updates as s says and forwards them later. The processor is
// "KTABLE-SUPPRESS-<n>" (or s's name) with the in-memory buffer store
// "KTABLE-SUPPRESS-STATE-STORE-<n>" (or "<name>-store"), logged to
// "<application.id>-<store>-changelog" unless the buffer config disables logging; after a
// restart or a task move the buffer is restored from it and the held updates are emitted once
// stream time passes them again. The table asks its parent for old
// values, as Java.
//
// Suppression emits only when stream time advances, and stream time moves only with the
// records that reach the suppress processor (the updates of the table above it, so with the
// record cache on only when the cache forwards them): wall-clock time never releases a
// buffered update, neither for SuppressedUntilWindowCloses nor for SuppressedUntilTimeLimit.
// On a quiet topic the last windows or keys stay buffered until later records arrive, as in
// Java; to release them, write a record with a later timestamp to every input partition now
// and then (see EmitOnWindowClose and Example_closeWindowsOnQuietTopic). Java: KTable.suppress.
func (t KTable[K, V]) Suppress(s Suppressed) KTable[K, V] {
	b := t.t.b
	var name string
	if s.name != "" {
		b.checkName(s.name)
		name = s.name
	} else {
		name = b.newProcessorName(suppressName)
	}
	var storeName string
	if s.name != "" {
		storeName = s.name + "-store"
	} else {
		storeName = b.newStoreName(suppressName)
	}
	cfg := ktable.SuppressConfig{StoreName: storeName, WaitMs: s.waitMs, MaxRecords: s.buffer.maxRecords, MaxBytes: s.buffer.maxBytes,
		ShutDownWhenFull: s.buffer.shutDown, KeySerde: t.t.keySerde, ValueSerde: t.t.valueSerde, ProcessorName: name}
	if s.buffer.maxRecords == 0 && s.buffer.maxBytes == 0 {
		cfg.MaxRecords, cfg.MaxBytes = math.MaxInt64, math.MaxInt64
	}
	if s.windowClose {
		gs, ok := t.t.supplier.(graceSupplier)
		if !ok {
			b.fail(dslErr(name, nil, "%s: window close time is only defined for windowed computations", name))
		} else {
			cfg.WaitMs = gs.GraceMs()
		}
		if !s.buffer.shutDown && (s.buffer.maxRecords != 0 || s.buffer.maxBytes != 0) {
			b.fail(dslErr(name, nil, "%s: untilWindowCloses needs a strict buffer (unbounded or ShutDownWhenFull)", name))
		}
		cfg.WindowEnd, cfg.SafeToDropTombstones = true, true
	}
	sup := ktable.NewSuppress(t.t.supplier, cfg)
	n := b.addNode(processorNode(name, sup, nil, func() processor.StoreBuilder {
		return ktable.SuppressBufferBuilder{StoreName: storeName, LoggingDisabled: s.buffer.noLogging, LogConfigs: s.buffer.logConfig}
	}), t.t.node)
	return KTable[K, V]{t: &tableImpl{b: b, name: name, node: n, keySerde: t.t.keySerde, valueSerde: t.t.valueSerde, supplier: sup}}
}
