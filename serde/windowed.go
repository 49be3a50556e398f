package serde

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Window is the time span of a windowed key, in epoch milliseconds (Java:
// org.apache.kafka.streams.kstream.Window). For time windows End is
// exclusive (Java TimeWindow); for session windows both ends are inclusive
// (Java SessionWindow). Java refuses to build a window with Start < 0, with
// End < Start, or, for a time window, with End == Start.
type Window struct {
	Start int64 // ms since the epoch
	End   int64 // ms since the epoch
}

// Windowed is a record key together with the window it belongs to, the key
// type of windowed aggregations (Java:
// org.apache.kafka.streams.kstream.Windowed).
type Windowed[K any] struct {
	Key    K
	Window Window
}

// String formats as Java's Windowed.toString: "[key@start/end]".
func (w Windowed[K]) String() string {
	return "[" + fmt.Sprint(w.Key) + "@" + strconv.FormatInt(w.Window.Start, 10) + "/" +
		strconv.FormatInt(w.Window.End, 10) + "]"
}

// serializeBaseKeyAny is the hook Untyped uses to forward SerializeBaseKey.
type baseKeyAny interface {
	serializeBaseKeyAny(topic string, headers *Headers, data any) ([]byte, error)
}

func serializeBaseKey[K any](name string, inner Serde[K], topic string, headers *Headers, data Windowed[K]) ([]byte, error) {
	kb, err := inner.Serialize(topic, headers, data.Key)
	if err != nil {
		return nil, serErr(name, topic, fmt.Errorf("key: %w", err))
	}
	if kb == nil {
		return nil, serErr(name, topic, fmt.Errorf("%w: key serialized to null", ErrInvalidValue))
	}
	return kb, nil
}

func baseKeyOfAny[K any](name string, inner Serde[K], topic string, headers *Headers, data any) ([]byte, error) {
	w, ok := data.(Windowed[K])
	if !ok {
		return nil, serErr(name, topic, fmt.Errorf("%w: got %T, want %s", ErrWrongType, data, typeName[Windowed[K]]()))
	}
	return serializeBaseKey(name, inner, topic, headers, w)
}

// TimeWindowed returns the serde of keys of time (tumbling, hopping,
// sliding) windows as written to output topics (Java:
// WindowedSerdes.TimeWindowedSerde(inner, windowSize), i.e.
// TimeWindowedSerializer and TimeWindowedDeserializer). Its name is
// "TimeWindowed<inner>".
//
// Layout: inner's bytes for the key ‖ int64 Window.Start (big-endian ms).
// Window.End is not written. A key that inner serializes to nil bytes is an
// error wrapping ErrInvalidValue (Java throws NullPointerException).
//
// Deserialize, as Java's: nil or empty input gives the zero Windowed and is
// reported as null through DecodesToNull (Java returns null); 1-7 bytes give
// an error wrapping ErrCorrupt. Otherwise inner decodes all but the last
// 8 bytes (an inner error is returned wrapped), Start is the last 8 bytes,
// and End = Start + windowSize (ms); if that sum is negative (overflow, or a
// negative windowSize) End becomes math.MaxInt64, as Java truncates. The
// window must then satisfy Java's TimeWindow rules: Start >= 0 and End >
// Start, else an error wraps ErrCorrupt (so windowSize <= 0 makes
// nearly every input fail, as in Java). Java's forChangelog(true) mode,
// which reads the window-store key layout instead, is not offered.
//
// windowSize is the windows' size (the windowed aggregation's TimeWindows
// size), used with ms precision; time.Duration(math.MaxInt64) stands for
// Java's Long.MAX_VALUE ms (its default when no size is configured), which
// makes every End math.MaxInt64.
//
// The result also has SerializeBaseKey(topic, headers, data Windowed[K]), the inner serde's
// bytes for data.Key without the window: Java's WindowedStreamPartitioner hashes those bytes,
// so that all windows of a key go to one partition (the DSL's windowed sinks and repartitions
// do; Java: org.apache.kafka.streams.kstream.internals.WindowedSerializer).
func TimeWindowed[K any](inner Serde[K], windowSize time.Duration) Serde[Windowed[K]] {
	ms := windowSize.Milliseconds()
	if windowSize == math.MaxInt64 {
		ms = math.MaxInt64
	}
	return &timeWindowed[K]{inner: inner, size: ms, name: "TimeWindowed<" + Name(inner) + ">"}
}

type timeWindowed[K any] struct {
	inner Serde[K]
	size  int64
	name  string
}

func (s *timeWindowed[K]) String() string { return s.name }

// WindowSizeMs returns the window size given to TimeWindowed, in ms.
func (s *timeWindowed[K]) WindowSizeMs() int64 { return s.size }

// DecodesToNull reports whether data is nil or empty, which Java's
// TimeWindowedDeserializer decodes to null.
func (s *timeWindowed[K]) DecodesToNull(data []byte) bool { return len(data) == 0 }

// SerializeBaseKey returns the inner serde's bytes for data.Key.
func (s *timeWindowed[K]) SerializeBaseKey(topic string, headers *Headers, data Windowed[K]) ([]byte, error) {
	return serializeBaseKey(s.name, s.inner, topic, headers, data)
}

func (s *timeWindowed[K]) serializeBaseKeyAny(topic string, headers *Headers, data any) ([]byte, error) {
	return baseKeyOfAny(s.name, s.inner, topic, headers, data)
}

func (s *timeWindowed[K]) Serialize(topic string, headers *Headers, data Windowed[K]) ([]byte, error) {
	kb, err := serializeBaseKey(s.name, s.inner, topic, headers, data)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(kb)+8)
	out = append(out, kb...)
	return binary.BigEndian.AppendUint64(out, uint64(data.Window.Start)), nil
}

func (s *timeWindowed[K]) Deserialize(topic string, headers *Headers, data []byte) (Windowed[K], error) {
	var w Windowed[K]
	if len(data) == 0 {
		return w, nil
	}
	if len(data) < 8 {
		return w, deserErr(s.name, topic, data, fmt.Errorf("%w: wrong length, want at least 8 bytes", ErrCorrupt))
	}
	n := len(data) - 8
	key, err := s.inner.Deserialize(topic, headers, cloneBytes(data[:n]))
	if err != nil {
		return w, deserErr(s.name, topic, data, fmt.Errorf("key: %w", err))
	}
	start := int64(binary.BigEndian.Uint64(data[n:]))
	end := start + s.size
	if end < 0 {
		end = math.MaxInt64
	}
	if err := checkWindow(start, end, true); err != nil {
		return w, deserErr(s.name, topic, data, err)
	}
	return Windowed[K]{Key: key, Window: Window{Start: start, End: end}}, nil
}

// SessionWindowed returns the serde of session-window keys as written to
// output topics (Java: WindowedSerdes.SessionWindowedSerde(inner), i.e.
// SessionWindowedSerializer and SessionWindowedDeserializer). Its name is
// "SessionWindowed<inner>".
//
// Layout: inner's bytes for the key ‖ int64 Window.End ‖ int64
// Window.Start (big-endian ms; end before start, as Java's SessionKeySchema
// orders them). A key that inner serializes to nil bytes is an error
// wrapping ErrInvalidValue (Java throws NullPointerException).
//
// Deserialize, as Java's: nil or empty input gives the zero Windowed and is
// reported as null through DecodesToNull; 1-15 bytes give an error wrapping
// ErrCorrupt; inner decodes all but the last 16 bytes (an inner error is
// returned wrapped); a window with Start < 0 or End < Start gives an error
// wrapping ErrCorrupt (Java's SessionWindow rules; End == Start is
// valid).
//
// The result also has SerializeBaseKey(topic, headers, data Windowed[K]), the inner serde's
// bytes for data.Key without the window: Java's WindowedStreamPartitioner hashes those bytes,
// so that all windows of a key go to one partition (the DSL's windowed sinks and repartitions
// do; Java: org.apache.kafka.streams.kstream.internals.WindowedSerializer).
func SessionWindowed[K any](inner Serde[K]) Serde[Windowed[K]] {
	return &sessionWindowed[K]{inner: inner, name: "SessionWindowed<" + Name(inner) + ">"}
}

type sessionWindowed[K any] struct {
	inner Serde[K]
	name  string
}

func (s *sessionWindowed[K]) String() string { return s.name }

// DecodesToNull reports whether data is nil or empty, which Java's
// SessionWindowedDeserializer decodes to null.
func (s *sessionWindowed[K]) DecodesToNull(data []byte) bool { return len(data) == 0 }

// SerializeBaseKey returns the inner serde's bytes for data.Key.
func (s *sessionWindowed[K]) SerializeBaseKey(topic string, headers *Headers, data Windowed[K]) ([]byte, error) {
	return serializeBaseKey(s.name, s.inner, topic, headers, data)
}

func (s *sessionWindowed[K]) serializeBaseKeyAny(topic string, headers *Headers, data any) ([]byte, error) {
	return baseKeyOfAny(s.name, s.inner, topic, headers, data)
}

func (s *sessionWindowed[K]) Serialize(topic string, headers *Headers, data Windowed[K]) ([]byte, error) {
	kb, err := serializeBaseKey(s.name, s.inner, topic, headers, data)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(kb)+16)
	out = append(out, kb...)
	out = binary.BigEndian.AppendUint64(out, uint64(data.Window.End))
	return binary.BigEndian.AppendUint64(out, uint64(data.Window.Start)), nil
}

func (s *sessionWindowed[K]) Deserialize(topic string, headers *Headers, data []byte) (Windowed[K], error) {
	var w Windowed[K]
	if len(data) == 0 {
		return w, nil
	}
	if len(data) < 16 {
		return w, deserErr(s.name, topic, data, fmt.Errorf("%w: wrong length, want at least 16 bytes", ErrCorrupt))
	}
	n := len(data) - 16
	key, err := s.inner.Deserialize(topic, headers, cloneBytes(data[:n]))
	if err != nil {
		return w, deserErr(s.name, topic, data, fmt.Errorf("key: %w", err))
	}
	end := int64(binary.BigEndian.Uint64(data[n:]))
	start := int64(binary.BigEndian.Uint64(data[n+8:]))
	if err := checkWindow(start, end, false); err != nil {
		return w, deserErr(s.name, topic, data, err)
	}
	return Windowed[K]{Key: key, Window: Window{Start: start, End: end}}, nil
}

// checkWindow applies Java's Window (and, if timeWindow, TimeWindow)
// constructor checks.
func checkWindow(start, end int64, timeWindow bool) error {
	switch {
	case start < 0:
		return fmt.Errorf("%w: invalid window: start %d ms is negative", ErrCorrupt, start)
	case end < start:
		return fmt.Errorf("%w: invalid window: end %d ms is before start %d ms", ErrCorrupt, end, start)
	case timeWindow && end == start:
		return fmt.Errorf("%w: invalid window: time window end %d ms equals its start", ErrCorrupt, end)
	}
	return nil
}
