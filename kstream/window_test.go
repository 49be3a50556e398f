package kstream_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/internal/ktable"
	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/testdriver"
)

// TestWindowLateRecordTopic: a record for a closed window is dropped, counted in the task's
// dropped-records metric and found on the late-record topic with its original key, value,
// timestamp and headers, plus the headers naming the window and the reason.
func TestWindowLateRecordTopic(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	s := kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String()))
	counts := kstream.WindowedBy(s.GroupByKey(kstream.GroupedWith(serde.String(), serde.String())),
		kstream.TimeWindowsOfSizeAndGrace(10*time.Millisecond, 5*time.Millisecond)).
		LateRecordsTo("late").
		Count()
	counts.ToStream().To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "late-test"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String())
	var h serde.Headers
	h.Add("origin", []byte("sensor-7"))
	for _, r := range []testdriver.TestRecord[string, string]{
		testdriver.NewTestRecordAt("a", "1", 3),
		testdriver.NewTestRecordAt("a", "2", 14), // window [10,20)
		testdriver.NewTestRecordAt("a", "3", 15), // stream time 15: [0,10) closes (10 <= 15-5)
		testdriver.NewTestRecordAt("a", "late", 9).WithHeaders(h),
		testdriver.NewTestRecordAt("a", "4", 19),
	} {
		if err := in.PipeRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	out := testdriver.CreateOutputTopic(d, "out", serde.TimeWindowed(serde.String(), 10*time.Millisecond), serde.Long())
	got, err := out.ReadRecordsToList()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		key   string
		count int64
		ts    int64
	}
	want := []row{{"[a@0/10]", 1, 3}, {"[a@10/20]", 1, 14}, {"[a@10/20]", 2, 15}, {"[a@10/20]", 3, 19}}
	if len(got) != len(want) {
		t.Fatalf("got %d outputs %v, want %v", len(got), got, want)
	}
	for i, w := range want {
		if g := (row{got[i].Key.String(), got[i].Value, got[i].Timestamp}); g != w {
			t.Errorf("output %d = %+v, want %+v", i, g, w)
		}
	}
	if n := d.DroppedRecords(); n != 1 {
		t.Errorf("dropped-records = %d, want 1", n)
	}
	late, err := testdriver.CreateOutputTopic(d, "late", serde.String(), serde.String()).ReadRecordsToList()
	if err != nil {
		t.Fatal(err)
	}
	if len(late) != 1 {
		t.Fatalf("late topic has %d records, want 1", len(late))
	}
	l := late[0]
	if l.Key != "a" || l.Value != "late" || l.Timestamp != 9 {
		t.Errorf("late record = %q=%q@%d, want a=late@9", l.Key, l.Value, l.Timestamp)
	}
	wantHeaders := map[string]string{
		"origin":                    "sensor-7",
		ktable.LateHeaderWindow:     "[0,10)",
		ktable.LateHeaderReason:     "window closed: window end <= stream time - grace",
		ktable.LateHeaderStreamTime: "15",
		ktable.LateHeaderCloseTime:  "15", // the window [0,10) closes at its end + grace 5, not stream time - grace
		ktable.LateHeaderProcessor:  "KSTREAM-AGGREGATE-0000000002",
	}
	for k, v := range wantHeaders {
		hv, ok := l.Headers.LastHeader(k)
		if !ok || string(hv.Value) != v {
			t.Errorf("header %s = %q (present %v), want %q", k, hv.Value, ok, v)
		}
	}
}

// TestWindowSpecErrors: invalid window specifications and retentions fail Build with
// ErrInvalidWindows (Java: IllegalArgumentException).
func TestWindowSpecErrors(t *testing.T) {
	if err := kstream.TimeWindowsOfSizeWithNoGrace(0).Validate(); !errors.Is(err, kstream.ErrInvalidWindows) {
		t.Errorf("size 0: %v", err)
	}
	if err := kstream.TimeWindowsOfSizeWithNoGrace(10 * time.Millisecond).AdvanceBy(11 * time.Millisecond).Validate(); !errors.Is(err, kstream.ErrInvalidWindows) {
		t.Errorf("advance > size: %v", err)
	}
	if err := kstream.SessionWindowsOfInactivityGapAndGrace(time.Second, -time.Second).Validate(); !errors.Is(err, kstream.ErrInvalidWindows) {
		t.Errorf("negative grace: %v", err)
	}
	if err := kstream.SlidingWindowsOfTimeDifferenceWithNoGrace(-time.Second).Validate(); !errors.Is(err, kstream.ErrInvalidWindows) {
		t.Errorf("negative difference: %v", err)
	}
	for name, build := range map[string]func(b *kstream.StreamsBuilder, g kstream.KGroupedStream[string, string]){
		"size 0": func(_ *kstream.StreamsBuilder, g kstream.KGroupedStream[string, string]) {
			kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(0)).Count()
		},
		"retention below size+grace": func(_ *kstream.StreamsBuilder, g kstream.KGroupedStream[string, string]) {
			kstream.WindowedBy(g, kstream.TimeWindowsOfSizeAndGrace(10*time.Millisecond, 5*time.Millisecond)).
				Count(kstream.MaterializedAs[string, int64]("s").WithRetention(14 * time.Millisecond))
		},
		"sliding retention below 2 x difference + grace": func(_ *kstream.StreamsBuilder, g kstream.KGroupedStream[string, string]) {
			kstream.WindowedBySliding(g, kstream.SlidingWindowsOfTimeDifferenceWithNoGrace(10*time.Millisecond)).
				Count(kstream.MaterializedAs[string, int64]("s").WithRetention(19 * time.Millisecond))
		},
		"session retention below gap+grace": func(_ *kstream.StreamsBuilder, g kstream.KGroupedStream[string, string]) {
			kstream.WindowedBySession(g, kstream.SessionWindowsOfInactivityGapAndGrace(10*time.Millisecond, 1*time.Millisecond)).
				Count(kstream.MaterializedAs[string, int64]("s").WithRetention(10 * time.Millisecond))
		},
	} {
		b := kstream.NewStreamsBuilder()
		build(b, kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String())).GroupByKey())
		_, err := b.Build()
		if !errors.Is(err, kstream.ErrInvalidWindows) || !errors.Is(err, processor.ErrInvalidTopology) {
			t.Errorf("%s: Build error %v, want ErrInvalidWindows and ErrInvalidTopology", name, err)
		}
	}
	// untilWindowCloses needs a windowed table.
	b := kstream.NewStreamsBuilder()
	kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String())).GroupByKey().Count().
		Suppress(kstream.SuppressedUntilWindowCloses(kstream.BufferConfigUnbounded()))
	if _, err := b.Build(); !errors.Is(err, processor.ErrInvalidTopology) || !strings.Contains(err.Error(), "window close time is only defined for windowed computations") {
		t.Errorf("untilWindowCloses on a non-windowed table: %v, want a topology error", err)
	}
}

// TestSuppressShutDownWhenFull: a buffer over its bound with ShutDownWhenFull fails processing
// with ErrSuppressBufferFull (Java: StreamsException "... buffer exceeded its max capacity").
func TestSuppressShutDownWhenFull(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	g := kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String())).GroupByKey(kstream.GroupedWith(serde.String(), serde.String()))
	kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(100*time.Millisecond)).Count().
		Suppress(kstream.SuppressedUntilTimeLimit(time.Second, kstream.BufferConfigMaxRecords(1).ShutDownWhenFull())).
		ToStream().To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "suppress-full"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String())
	if err := in.PipeKeyValueAt("a", "1", 1); err != nil {
		t.Fatal(err)
	}
	if err := in.PipeKeyValueAt("a", "2", 2); err != nil { // same key: still one record
		t.Fatal(err)
	}
	err = in.PipeKeyValueAt("b", "3", 3)
	if !errors.Is(err, kstream.ErrSuppressBufferFull) {
		t.Fatalf("second key: %v, want ErrSuppressBufferFull", err)
	}
}

// TestSessionLateRecordTopic: a record whose merged session ends before stream time - grace -
// gap is dropped, counted and sent to the late-record topic with the session and rule.
func TestSessionLateRecordTopic(t *testing.T) {
	b := kstream.NewStreamsBuilder()
	g := kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String())).GroupByKey(kstream.GroupedWith(serde.String(), serde.String()))
	kstream.WindowedBySession(g, kstream.SessionWindowsOfInactivityGapAndGrace(5*time.Millisecond, 2*time.Millisecond)).
		LateRecordsToWith("late", serde.String(), serde.String()).Count().ToStream().To("out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	d, err := testdriver.New(topo, map[string]string{"application.id": "session-late"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := testdriver.CreateInputTopic(d, "in", serde.String(), serde.String())
	for _, r := range []testdriver.TestRecord[string, string]{
		testdriver.NewTestRecordAt("a", "1", 0),
		testdriver.NewTestRecordAt("a", "2", 20), // close time 20 - 2 - 5 = 13
		testdriver.NewTestRecordAt("b", "3", 13), // session [13,13]: 13 >= 13, accepted
		testdriver.NewTestRecordAt("b", "4", 12), // merges with [13,13] -> [12,13], accepted
		testdriver.NewTestRecordAt("c", "5", 12), // session [12,12]: 12 < 13, late
	} {
		if err := in.PipeRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.DroppedRecords(); n != 1 {
		t.Errorf("dropped-records = %d, want 1", n)
	}
	late, err := testdriver.CreateOutputTopic(d, "late", serde.String(), serde.String()).ReadRecordsToList()
	if err != nil {
		t.Fatal(err)
	}
	if len(late) != 1 || late[0].Key != "c" || late[0].Value != "5" || late[0].Timestamp != 12 {
		t.Fatalf("late records %+v, want c=5@12", late)
	}
	for k, v := range map[string]string{ktable.LateHeaderWindow: "[12,12]",
		ktable.LateHeaderReason: "window closed: session end < stream time - grace - gap", ktable.LateHeaderCloseTime: "20"} { // [12,12] closes at 12 + gap 5 + grace 2 + 1
		if h, ok := late[0].Headers.LastHeader(k); !ok || string(h.Value) != v {
			t.Errorf("header %s = %q, want %q", k, h.Value, v)
		}
	}
}
