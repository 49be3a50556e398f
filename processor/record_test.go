package processor_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
)

func TestRecordWithCopies(t *testing.T) {
	h := serde.NewHeaders(serde.Header{Key: "a", Value: []byte("1")})
	r := processor.NewRecordWithHeaders("k", 5, 100, *h)
	h.Add("b", nil) // the record has its own copy
	if r.Headers.Len() != 1 {
		t.Fatalf("headers not copied: %d", r.Headers.Len())
	}
	r2 := r.WithKey(int64(7)).WithValue("v").WithTimestamp(200)
	r2.Headers.Add("c", []byte("3"))
	if r2.Key != 7 || r2.Value != "v" || r2.Timestamp != 200 || r2.Headers.Len() != 2 {
		t.Fatalf("r2 = %+v", r2)
	}
	if r.Key != "k" || r.Value != 5 || r.Timestamp != 100 || r.Headers.Len() != 1 {
		t.Fatalf("original changed: %+v", r)
	}
	r3 := r.WithHeaders(serde.Headers{})
	if r3.Headers.Len() != 0 || r.Headers.Len() != 1 {
		t.Fatal("WithHeaders")
	}
	f := processor.NewFixedKeyRecordFromRecord(r).WithValue(3.5).WithTimestamp(9)
	if f.Key() != "k" || f.Value() != 3.5 || f.Timestamp() != 9 || f.Headers().Len() != 1 {
		t.Fatalf("fixed = %+v", f)
	}
	if back := f.ToRecord(); back.Key != "k" || back.Value != 3.5 {
		t.Fatalf("ToRecord = %+v", back)
	}
}

func TestTaskID(t *testing.T) {
	id := processor.TaskID{Subtopology: 0, Partition: 1}
	if id.String() != "0_1" {
		t.Fatal(id.String())
	}
	got, err := processor.ParseTaskID("12_3")
	if err != nil || got != (processor.TaskID{Subtopology: 12, Partition: 3}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "1", "a_1", "1_", "-1_2"} {
		if _, err := processor.ParseTaskID(bad); !errors.Is(err, processor.ErrInvalidTaskID) {
			t.Errorf("ParseTaskID(%q) = %v", bad, err)
		}
	}
	if id.Compare(processor.TaskID{Subtopology: 1}) != -1 || id.Compare(id) != 0 || id.Compare(processor.TaskID{}) != 1 {
		t.Fatal("Compare")
	}
}

func TestPunctuationTypeNames(t *testing.T) {
	if processor.StreamTime.String() != "STREAM_TIME" || processor.WallClockTime.String() != "WALL_CLOCK_TIME" {
		t.Fatal("names")
	}
}

// Behaviour of Java's extractors on valid and negative timestamps.
func TestTimestampExtractors(t *testing.T) {
	ok := processor.ConsumerRecord{Topic: "t", Timestamp: 42}
	neg := processor.ConsumerRecord{Topic: "t", Partition: 1, Offset: 7, Timestamp: -1}

	var fail processor.FailOnInvalidTimestamp
	if ts, err := fail.Extract(ok, 10); ts != 42 || err != nil {
		t.Fatalf("fail ok: %d %v", ts, err)
	}
	if _, err := fail.Extract(neg, 10); !errors.Is(err, processor.ErrInvalidTimestamp) {
		t.Fatalf("fail neg: %v", err)
	}

	var logged strings.Builder
	skip := processor.LogAndSkipOnInvalidTimestamp{Logger: slog.New(slog.NewTextHandler(&logged, nil))}
	if ts, err := skip.Extract(neg, 10); ts != -1 || err != nil {
		t.Fatalf("skip neg: %d %v", ts, err)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "offset=7") {
		t.Fatalf("skip log: %q", logged.String())
	}

	var part processor.UsePartitionTimeOnInvalidTimestamp
	if ts, err := part.Extract(ok, 10); ts != 42 || err != nil {
		t.Fatalf("partition ok: %d %v", ts, err)
	}
	if ts, err := part.Extract(neg, 10); ts != 10 || err != nil {
		t.Fatalf("partition neg: %d %v", ts, err)
	}
	if _, err := part.Extract(neg, -1); !errors.Is(err, processor.ErrInvalidTimestamp) {
		t.Fatalf("partition unknown: %v", err)
	}

	wall := processor.WallclockTimestampExtractor{Now: func() time.Time { return time.UnixMilli(1234) }}
	if ts, err := wall.Extract(neg, 10); ts != 1234 || err != nil {
		t.Fatalf("wallclock: %d %v", ts, err)
	}
}
