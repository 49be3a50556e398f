package kstream_test

import (
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/ktable"
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
		Count(kstream.LateRecordsTo("late"))
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
	out := testdriver.CreateOutputTopic(d, "out", serde.TimeWindowed(serde.String(), 10), serde.Long())
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
		ktable.LateHeaderCloseTime:  "10",
		ktable.LateHeaderProcessor:  "KSTREAM-AGGREGATE-0000000002",
	}
	for k, v := range wantHeaders {
		hv, ok := l.Headers.LastHeader(k)
		if !ok || string(hv.Value) != v {
			t.Errorf("header %s = %q (present %v), want %q", k, hv.Value, ok, v)
		}
	}
}
