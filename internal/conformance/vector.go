package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Header is one record header: {"key":"k","value":V}. In input vectors the typed value decides
// the serializer of the header bytes (a header value is serialized on its own, like a record
// value); in output records every header value is {"bytes":"<hex>"} or null, since a topic's
// header types are not known.
type Header struct {
	// Key is the header key (Java Header.key()).
	Key string `json:"key"`
	// Value is the header value; null is a header with null bytes.
	Value TypedValue `json:"value"`
}

// InputRecord is a record to pipe into the topology: {"topic":..., "key":V, "value":V,
// "timestamp":ms, "headers":[...]}. Key, value and headers may be omitted (null, none);
// topic and timestamp are required. Java counterpart: TestInputTopic.pipeInput(TestRecord)
// with the bytes of the typed key and value.
type InputRecord struct {
	// Topic is the input topic (a source topic, a topic matching a source pattern, or a
	// global store's topic).
	Topic string
	// Key and Value are the typed key and value; their kinds pick the serializers.
	Key, Value TypedValue
	// Timestamp is the record timestamp, ms since the epoch.
	Timestamp int64
	// Headers are the record headers, in order; nil and empty are the same.
	Headers []Header
}

// Event is one line of an input vector: a record (Record != nil) or a wall-clock advance
// {"advanceWallClockMs": N} (Record == nil), which calls TopologyTestDriver.advanceWallClockTime
// with N ms (N >= 0) and so may fire wall-clock punctuators.
type Event struct {
	// Record is the record to pipe, or nil for a wall-clock advance.
	Record *InputRecord
	// AdvanceWallClockMs is the advance in ms when Record is nil; ignored otherwise.
	AdvanceWallClockMs int64
}

// RecordEvent returns an event that pipes r.
func RecordEvent(r InputRecord) Event { return Event{Record: &r} }

// AdvanceEvent returns an event that advances the wall clock by ms milliseconds.
func AdvanceEvent(ms int64) Event { return Event{AdvanceWallClockMs: ms} }

type inputRecordJSON struct {
	Topic     *string    `json:"topic"`
	Key       TypedValue `json:"key"`
	Value     TypedValue `json:"value"`
	Timestamp *int64     `json:"timestamp"`
	Headers   []Header   `json:"headers,omitempty"`
}

type advanceJSON struct {
	AdvanceWallClockMs *int64 `json:"advanceWallClockMs"`
}

// MarshalJSON writes the event in the vector format.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.Record == nil {
		if e.AdvanceWallClockMs < 0 {
			return nil, fmt.Errorf("%w: negative wall-clock advance %d", ErrBadEvent, e.AdvanceWallClockMs)
		}
		return marshalNoHTMLEscape(advanceJSON{&e.AdvanceWallClockMs})
	}
	r := e.Record
	return marshalNoHTMLEscape(inputRecordJSON{
		Topic: &r.Topic, Key: r.Key, Value: r.Value, Timestamp: &r.Timestamp, Headers: r.Headers,
	})
}

// UnmarshalJSON reads an event; unknown members, a missing topic or timestamp, and a negative
// advance give ErrBadEvent.
func (e *Event) UnmarshalJSON(data []byte) error {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if _, ok := members["advanceWallClockMs"]; ok {
		var a advanceJSON
		if err := strictUnmarshal(data, &a); err != nil {
			return err
		}
		if *a.AdvanceWallClockMs < 0 {
			return fmt.Errorf("%w: negative wall-clock advance %d", ErrBadEvent, *a.AdvanceWallClockMs)
		}
		*e = AdvanceEvent(*a.AdvanceWallClockMs)
		return nil
	}
	var r inputRecordJSON
	if err := strictUnmarshal(data, &r); err != nil {
		return err
	}
	if r.Topic == nil || r.Timestamp == nil {
		return fmt.Errorf("%w: a record needs \"topic\" and \"timestamp\": %s", ErrBadEvent, data)
	}
	*e = RecordEvent(InputRecord{Topic: *r.Topic, Key: r.Key, Value: r.Value, Timestamp: *r.Timestamp, Headers: r.Headers})
	return nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, ErrBadValue) || errors.Is(err, ErrBadEvent) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrBadEvent, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the JSON object", ErrBadEvent)
	}
	return nil
}

// OutputRecord is one record a topology produced, as read back from the driver:
// {"step":i,"topic":..,"key":V,"value":V,"keyBytes":"hex"|null,"valueBytes":"hex"|null,
// "timestamp":ms,"headers":[...]}. The raw bytes are authoritative; Key and Value are those
// bytes decoded with the types the reference topology declares for the topic (bytes if none).
type OutputRecord struct {
	// Step is the 0-based index of the input event after which the record was read; -1 means
	// while the driver was created, len(events) while it was closed.
	Step int `json:"step"`
	// Topic is the topic written to (sink, repartition or changelog topic; internal topics
	// carry the application.id prefix).
	Topic string `json:"topic"`
	// Key and Value are the decoded key and value.
	Key   TypedValue `json:"key"`
	Value TypedValue `json:"value"`
	// KeyBytes and ValueBytes are the raw bytes; nil is null.
	KeyBytes   HexBytes `json:"keyBytes"`
	ValueBytes HexBytes `json:"valueBytes"`
	// Timestamp is the record timestamp in ms.
	Timestamp int64 `json:"timestamp"`
	// Headers are the record headers in order, every value of KindBytes or null. Always
	// written as an array; nil and empty compare equal.
	Headers []Header `json:"headers"`
}

// MarshalJSON writes the record with the members in the order above and "headers" as [] when
// there are none, as the Java Runner does.
func (o OutputRecord) MarshalJSON() ([]byte, error) {
	type plain OutputRecord
	p := plain(o)
	if p.Headers == nil {
		p.Headers = []Header{}
	}
	return marshalNoHTMLEscape(p)
}

// UnmarshalJSON reads a record strictly (unknown members give ErrBadEvent).
func (o *OutputRecord) UnmarshalJSON(data []byte) error {
	type plain OutputRecord
	var p plain
	if err := strictUnmarshal(data, &p); err != nil {
		return err
	}
	*o = OutputRecord(p)
	return nil
}

// Equal reports whether o and p are the same record: all fields equal, typed values by
// TypedValue.Equal, nil and empty header lists alike.
func (o OutputRecord) Equal(p OutputRecord) bool {
	if o.Step != p.Step || o.Topic != p.Topic || o.Timestamp != p.Timestamp ||
		!o.Key.Equal(p.Key) || !o.Value.Equal(p.Value) ||
		(o.KeyBytes == nil) != (p.KeyBytes == nil) || !bytes.Equal(o.KeyBytes, p.KeyBytes) ||
		(o.ValueBytes == nil) != (p.ValueBytes == nil) || !bytes.Equal(o.ValueBytes, p.ValueBytes) ||
		len(o.Headers) != len(p.Headers) {
		return false
	}
	for i := range o.Headers {
		if o.Headers[i].Key != p.Headers[i].Key || !o.Headers[i].Value.Equal(p.Headers[i].Value) {
			return false
		}
	}
	return true
}

// String renders the record as its JSON line (without newline), for messages.
func (o OutputRecord) String() string {
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Sprintf("%#v", o)
	}
	return string(b)
}

// LineError reports a line of a vector or output file that could not be read.
type LineError struct {
	// Path is the file, if known.
	Path string
	// Line is the 1-based line number.
	Line int
	// Err is the cause; it wraps ErrBadEvent or ErrBadValue.
	Err error
}

func (e *LineError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// asFormatError wraps JSON syntax errors (not already ours) with ErrBadEvent.
func asFormatError(err error) error {
	if errors.Is(err, ErrBadEvent) || errors.Is(err, ErrBadValue) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrBadEvent, err)
}

// readLines calls fn for each non-blank line with its 1-based number.
func readLines(r io.Reader, path string, fn func(line []byte) error) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(line); ferr != nil {
				return &LineError{Path: path, Line: n, Err: ferr}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("conformance: reading %s: %w", path, err)
		}
	}
}

// ReadEvents reads an input vector: one Event per non-blank line. Blank lines are skipped
// and do not count as steps. Bad lines give a *LineError.
func ReadEvents(r io.Reader) ([]Event, error) {
	return readEvents(r, "")
}

func readEvents(r io.Reader, path string) ([]Event, error) {
	var events []Event
	err := readLines(r, path, func(line []byte) error {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			return asFormatError(err)
		}
		events = append(events, e)
		return nil
	})
	return events, err
}

// ReadEventsFile reads the input vector at path (see ReadEvents).
func ReadEventsFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	defer f.Close()
	return readEvents(f, path)
}

// WriteEvents writes events as an input vector, one JSON line each.
func WriteEvents(w io.Writer, events []Event) error {
	return writeLines(w, len(events), func(i int) any { return events[i] })
}

// ReadOutputs reads an output file: one OutputRecord per non-blank line. Bad lines give a
// *LineError.
func ReadOutputs(r io.Reader) ([]OutputRecord, error) {
	return readOutputs(r, "")
}

func readOutputs(r io.Reader, path string) ([]OutputRecord, error) {
	var outs []OutputRecord
	err := readLines(r, path, func(line []byte) error {
		var o OutputRecord
		if err := json.Unmarshal(line, &o); err != nil {
			return asFormatError(err)
		}
		outs = append(outs, o)
		return nil
	})
	return outs, err
}

// ReadOutputsFile reads the output file at path (see ReadOutputs).
func ReadOutputsFile(path string) ([]OutputRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	defer f.Close()
	return readOutputs(f, path)
}

// WriteOutputs writes records as an output file, one JSON line each, in the Java Runner's
// member order. Doubles may be spelled differently than Java spells them (1e+21 vs 1.0E21):
// compare outputs after reading them, not as text.
func WriteOutputs(w io.Writer, outs []OutputRecord) error {
	return writeLines(w, len(outs), func(i int) any { return outs[i] })
}

func writeLines(w io.Writer, n int, item func(int) any) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw) // Encode ends each value with '\n'
	enc.SetEscapeHTML(false)   // write <, > and & as themselves, as Jackson does
	for i := 0; i < n; i++ {
		if err := enc.Encode(item(i)); err != nil {
			return fmt.Errorf("conformance: line %d: %w", i+1, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("conformance: writing: %w", err)
	}
	return nil
}

// DiffOutputs compares want (e.g. Java's) with got (e.g. Go's) record by record and returns ""
// when they are equal, else a description of the first difference and of any length mismatch.
func DiffOutputs(want, got []OutputRecord) string {
	var sb strings.Builder
	n := min(len(want), len(got))
	for i := 0; i < n; i++ {
		if !want[i].Equal(got[i]) {
			fmt.Fprintf(&sb, "record %d differs:\n  want %s\n  got  %s\n", i, want[i], got[i])
			break
		}
	}
	if len(want) != len(got) {
		fmt.Fprintf(&sb, "want %d records, got %d\n", len(want), len(got))
		for i := n; i < len(want); i++ {
			fmt.Fprintf(&sb, "  missing %s\n", want[i])
		}
		for i := n; i < len(got); i++ {
			fmt.Fprintf(&sb, "  extra   %s\n", got[i])
		}
	}
	return sb.String()
}
