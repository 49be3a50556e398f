package kstream

import (
	"errors"
	"fmt"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

// ErrInvalidWindows: a window specification Java rejects with an IllegalArgumentException: a
// size or gap <= 0, an advance <= 0 or > size, a negative grace or time difference (also of
// JoinWindows, or before+after < 0), a window store's retention shorter than size plus grace.
// The Validate methods of the window types return it directly, with the value that is wrong;
// Build returns it inside a *processor.TopologyError (matching processor.ErrInvalidTopology)
// when the specification was used.
var ErrInvalidWindows = errors.New("invalid window specification")

// Windowed is a key together with the window it belongs to: the key type of windowed
// aggregation results. It prints as Java's Windowed.toString, "[key@start/end]". Alias of
// serde.Windowed. Java counterpart: org.apache.kafka.streams.kstream.Windowed.
type Windowed[K any] = serde.Windowed[K]

// Window is a time span in epoch ms (time windows: end exclusive; session windows: both ends
// inclusive). Alias of serde.Window. Java counterpart: org.apache.kafka.streams.kstream.Window.
type Window = serde.Window

// TimeWindows are fixed-size windows: tumbling (advance = size) or hopping (advance < size).
// A record with timestamp t belongs to every window [start, start+size) with start a multiple
// of the advance and start <= t < start+size. A window closes (later records for it are
// dropped as late) when stream time - grace >= its end. Build values with
// [TimeWindowsOfSizeWithNoGrace] or [TimeWindowsOfSizeAndGrace]; an invalid specification is
// reported by Validate and by StreamsBuilder.Build. Java counterpart:
// org.apache.kafka.streams.kstream.TimeWindows.
type TimeWindows struct {
	sizeMs, advanceMs, graceMs int64
	err                        error
}

// TimeWindowsOfSizeWithNoGrace returns tumbling windows of the given size (ms precision) and no
// grace period: a record is late as soon as stream time reaches its window's end. Invalid
// (size <= 0): ErrInvalidWindows. Java: TimeWindows.ofSizeWithNoGrace(size).
func TimeWindowsOfSizeWithNoGrace(size time.Duration) TimeWindows {
	return TimeWindowsOfSizeAndGrace(size, 0)
}

// TimeWindowsOfSizeAndGrace returns tumbling windows of the given size that accept out-of-order
// records until stream time passes window end + afterWindowEnd (ms precision). Invalid (size
// <= 0, negative grace): ErrInvalidWindows. Java: TimeWindows.ofSizeAndGrace(size, afterWindowEnd).
func TimeWindowsOfSizeAndGrace(size, afterWindowEnd time.Duration) TimeWindows {
	w := TimeWindows{sizeMs: size.Milliseconds(), advanceMs: size.Milliseconds(), graceMs: afterWindowEnd.Milliseconds()}
	switch {
	case w.sizeMs <= 0:
		w.err = fmt.Errorf("%w: window size (sizeMs) must be larger than zero", ErrInvalidWindows)
	case w.graceMs < 0:
		w.err = fmt.Errorf("%w: grace period must not be negative", ErrInvalidWindows)
	}
	return w
}

// AdvanceBy returns hopping windows: a new window starts every advance (ms precision), so a
// record belongs to size/advance overlapping windows. Invalid (advance <= 0 or > size):
// ErrInvalidWindows. Java: TimeWindows.advanceBy(advance).
func (w TimeWindows) AdvanceBy(advance time.Duration) TimeWindows {
	a := advance.Milliseconds()
	if w.err == nil && (a <= 0 || a > w.sizeMs) {
		w.err = fmt.Errorf("%w: window advancement interval should be more than zero and less than window duration which is %d ms, but given advancement interval is: %d ms",
			ErrInvalidWindows, w.sizeMs, a)
	}
	w.advanceMs = a
	return w
}

// Validate returns the specification error, if any (ErrInvalidWindows).
func (w TimeWindows) Validate() error { return w.err }

// SizeMs returns the window size in ms. Java: size().
func (w TimeWindows) SizeMs() int64 { return w.sizeMs }

// AdvanceMs returns the advance in ms (= size for tumbling windows). Java: advanceMs.
func (w TimeWindows) AdvanceMs() int64 { return w.advanceMs }

// GracePeriodMs returns the grace period in ms. Java: gracePeriodMs().
func (w TimeWindows) GracePeriodMs() int64 { return w.graceMs }

// WindowsFor returns the windows containing timestamp (ms), by ascending start. Java:
// TimeWindows.windowsFor.
func (w TimeWindows) WindowsFor(timestamp int64) []Window {
	if w.advanceMs <= 0 || w.sizeMs <= 0 {
		return nil
	}
	start := (max(0, timestamp-w.sizeMs+w.advanceMs) / w.advanceMs) * w.advanceMs
	var out []Window
	for ; start <= timestamp; start += w.advanceMs {
		out = append(out, Window{Start: start, End: start + w.sizeMs})
	}
	return out
}

// SlidingWindows are windows of a fixed time difference defined by the records themselves
// (KIP-450): two records are in a common window when their timestamps differ by at most the
// time difference; each record creates the window [t - difference, t] ending at it and, when
// needed, the window [t + 1, t + 1 + difference] starting just after it. Both bounds are
// inclusive. Build values with [SlidingWindowsOfTimeDifferenceWithNoGrace] or
// [SlidingWindowsOfTimeDifferenceAndGrace]. Java counterpart:
// org.apache.kafka.streams.kstream.SlidingWindows.
type SlidingWindows struct {
	diffMs, graceMs int64
	err             error
}

// SlidingWindowsOfTimeDifferenceWithNoGrace returns sliding windows with the given maximum
// time difference (ms precision) and no grace. Invalid (negative difference):
// ErrInvalidWindows. Java: SlidingWindows.ofTimeDifferenceWithNoGrace(timeDifference).
func SlidingWindowsOfTimeDifferenceWithNoGrace(timeDifference time.Duration) SlidingWindows {
	return SlidingWindowsOfTimeDifferenceAndGrace(timeDifference, 0)
}

// SlidingWindowsOfTimeDifferenceAndGrace returns sliding windows with the given maximum time
// difference and grace period (ms precision). Invalid (negative values): ErrInvalidWindows.
// Java: SlidingWindows.ofTimeDifferenceAndGrace(timeDifference, afterWindowEnd).
func SlidingWindowsOfTimeDifferenceAndGrace(timeDifference, afterWindowEnd time.Duration) SlidingWindows {
	w := SlidingWindows{diffMs: timeDifference.Milliseconds(), graceMs: afterWindowEnd.Milliseconds()}
	switch {
	case w.diffMs < 0:
		w.err = fmt.Errorf("%w: window time difference must not be negative", ErrInvalidWindows)
	case w.graceMs < 0:
		w.err = fmt.Errorf("%w: window grace period must not be negative", ErrInvalidWindows)
	}
	return w
}

// Validate returns the specification error, if any (ErrInvalidWindows).
func (w SlidingWindows) Validate() error { return w.err }

// TimeDifferenceMs returns the time difference (= window size) in ms. Java: timeDifferenceMs().
func (w SlidingWindows) TimeDifferenceMs() int64 { return w.diffMs }

// GracePeriodMs returns the grace period in ms. Java: gracePeriodMs().
func (w SlidingWindows) GracePeriodMs() int64 { return w.graceMs }

// SessionWindows group the records of a key into sessions: periods of activity separated by
// gaps of inactivity longer than the inactivity gap. A record within the gap of existing
// sessions merges them into one session [first, last] (both inclusive). A session closes when
// stream time - grace - gap > its end. Build values with [SessionWindowsOfInactivityGapWithNoGrace]
// or [SessionWindowsOfInactivityGapAndGrace]. Java counterpart:
// org.apache.kafka.streams.kstream.SessionWindows.
type SessionWindows struct {
	gapMs, graceMs int64
	err            error
}

// SessionWindowsOfInactivityGapWithNoGrace returns session windows with the given inactivity
// gap (ms precision) and no grace. Invalid (gap <= 0): ErrInvalidWindows. Java:
// SessionWindows.ofInactivityGapWithNoGrace(inactivityGap).
func SessionWindowsOfInactivityGapWithNoGrace(inactivityGap time.Duration) SessionWindows {
	return SessionWindowsOfInactivityGapAndGrace(inactivityGap, 0)
}

// SessionWindowsOfInactivityGapAndGrace returns session windows with the given inactivity gap
// and grace period (ms precision). Invalid (gap <= 0, negative grace): ErrInvalidWindows. Java:
// SessionWindows.ofInactivityGapAndGrace(inactivityGap, afterWindowEnd).
func SessionWindowsOfInactivityGapAndGrace(inactivityGap, afterWindowEnd time.Duration) SessionWindows {
	w := SessionWindows{gapMs: inactivityGap.Milliseconds(), graceMs: afterWindowEnd.Milliseconds()}
	switch {
	case w.gapMs <= 0:
		w.err = fmt.Errorf("%w: gap time cannot be zero or negative", ErrInvalidWindows)
	case w.graceMs < 0:
		w.err = fmt.Errorf("%w: grace period must not be negative", ErrInvalidWindows)
	}
	return w
}

// Validate returns the specification error, if any (ErrInvalidWindows).
func (w SessionWindows) Validate() error { return w.err }

// InactivityGapMs returns the inactivity gap in ms. Java: inactivityGap().
func (w SessionWindows) InactivityGapMs() int64 { return w.gapMs }

// GracePeriodMs returns the grace period in ms. Java: gracePeriodMs().
func (w SessionWindows) GracePeriodMs() int64 { return w.graceMs }

// EmitStrategy says when a windowed aggregation forwards results: on every update (the
// default) or once per window when it closes (KIP-825). Java counterpart:
// org.apache.kafka.streams.kstream.EmitStrategy.
type EmitStrategy struct{ onClose bool }

// EmitOnWindowUpdate forwards a result for every update of a window (subject to the record
// cache). Java: EmitStrategy.onWindowUpdate().
func EmitOnWindowUpdate() EmitStrategy { return EmitStrategy{} }

// EmitOnWindowClose forwards one final result per window once stream time passes its end plus
// grace (KIP-825). In a running application the aggregation looks for closed windows at most
// once per EmitIntervalWindowedAggregationConfig of wall-clock time (default 1000 ms), when a
// record arrives, so a window's result can come up to that long after the record that closed
// it; the test driver sets the interval to 0, as Java's TopologyTestDriver does, so there every
// record that moves stream time past a window's end plus grace emits it at once.
//
// Only records close windows, never the clock: stream time is the largest timestamp the
// aggregation has seen (per task, that is per input partition), and a window's result comes
// when a later record, with a key, advances it past the window's end plus grace. On a quiet
// topic the last windows stay open until more records arrive, as in Java. To close them, have
// a producer write a record with a later timestamp to every input partition now and then, for
// instance under a key of its own that the application filters out of the results (see
// Example_closeWindowsOnQuietTopic). Java: EmitStrategy.onWindowClose().
func EmitOnWindowClose() EmitStrategy { return EmitStrategy{onClose: true} }

// Java's internal properties throttling the DSL's emission checks, set in the application's
// properties (kstreams.Config.Properties) or the test driver's. Both are wall-clock ms between
// two checks, default 1000; the test driver sets both to 0 unless given, as Java's
// TopologyTestDriver does.
const (
	// EmitIntervalWindowedAggregationConfig throttles how often a windowed aggregation with
	// EmitOnWindowClose looks for closed windows. Java:
	// StreamsConfig.InternalConfig.EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION.
	EmitIntervalWindowedAggregationConfig = "__emit.interval.ms.kstreams.windowed.aggregation__"
	// EmitIntervalOuterJoinConfig throttles how often a left or outer stream-stream join scans
	// its shared store for held-back records whose window has closed (KIP-633). Java:
	// StreamsConfig.InternalConfig.EMIT_INTERVAL_MS_KSTREAMS_OUTER_JOIN_SPURIOUS_RESULTS_FIX.
	EmitIntervalOuterJoinConfig = "__emit.interval.ms.kstreams.outer.join.spurious.results.fix__"
)

// OnWindowClose reports whether this is the on-window-close strategy.
func (e EmitStrategy) OnWindowClose() bool { return e.onClose }

// windowedPartitioner partitions windowed keys by their base key, so all windows of a key go
// to one partition: (murmur2(base key bytes) & 0x7fffffff) % partitions. It is used by To when
// no partitioner is given and the key serde is a windowed serde (baseKeySerializer).
// Java: WindowedStreamPartitioner.
func windowedPartitioner(keySerde serde.Serde[any]) processor.StreamPartitioner[any, any] {
	bk, ok := keySerde.(baseKeySerializer)
	if !ok {
		return nil
	}
	return processor.StreamPartitionerFunc[any, any](func(topic string, key, _ any, n int32) ([]int32, bool, error) {
		if key == nil || n <= 0 {
			return nil, false, nil
		}
		kb, err := bk.SerializeBaseKey(topic, nil, key)
		if err != nil {
			return nil, false, err
		}
		return []int32{int32(murmur2(kb)&0x7fffffff) % n}, true, nil
	})
}

// murmur2 is Kafka's Utils.murmur2 (the default partitioner's hash), seed 0x9747b28c.
func murmur2(data []byte) uint32 {
	const m, r = uint32(0x5bd1e995), 24
	n := len(data)
	h := uint32(0x9747b28c) ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := n &^ 3
	switch n % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// baseKeySerializer is implemented by serde.Untyped of the windowed serdes (TimeWindowed,
// SessionWindowed): SerializeBaseKey serializes only the key of data, a serde.Windowed of the
// wrapped serde's key type, without the window. Java: WindowedSerializer.serializeBaseKey.
type baseKeySerializer interface {
	SerializeBaseKey(topic string, headers *serde.Headers, data any) ([]byte, error)
}
