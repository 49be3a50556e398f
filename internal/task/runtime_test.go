package task

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kstreams-go/kstreams/processor"
)

func TestRuntimeHelpers(t *testing.T) {
	clock := int64(0)
	var canc processor.Cancellable
	p := &funcProc{init: func(ctx processor.ProcessorContext[any, any]) error {
		if _, err := ctx.Schedule(10*time.Millisecond, processor.StreamTime, func(int64) error { return nil }); err != nil {
			return err
		}
		var err error
		canc, err = ctx.Schedule(time.Second, processor.WallClockTime, func(int64) error { return nil })
		return err
	}}
	tk, _ := newTask(t, pipeline(p), &clock)
	if tk.CanPunctuateStreamTime() {
		t.Fatal("stream-time punctuation due before any record")
	}
	_ = tk.AddRecord(raw("in", 10, 5, "k", "a"))
	_ = tk.AddRecord(raw("in", 11, 6, "k", "b"))
	if tk.Buffered("in", 0) != 2 || tk.Buffered("other", 0) != 0 {
		t.Fatalf("buffered %d", tk.Buffered("in", 0))
	}
	if _, err := tk.Process(0); err != nil {
		t.Fatal(err)
	}
	if tk.Buffered("in", 0) != 1 || !tk.CanPunctuateStreamTime() {
		t.Fatal("after one record")
	}
	if off := tk.CommittableOffsets()["in"][0]; off != 11 {
		t.Fatalf("committable offset %d", off)
	}
	if tk.CanPunctuateSystemTime(999) || !tk.CanPunctuateSystemTime(1000) {
		t.Fatal("wall-clock due time")
	}
	canc.Cancel()
	if tk.CanPunctuateSystemTime(5000) {
		t.Fatal("cancelled schedule still due")
	}
}

// TestScheduleAtAnchored: Java 4.4.0 prints "st60,wc1250,wc1350" for the same schedules and inputs
// (testdriver/testdata/AnchoredPunct.java).
func TestScheduleAtAnchored(t *testing.T) {
	clock := int64(1000)
	var fired []string
	var ctxSeen *nodeContext
	p := &funcProc{init: func(ctx processor.ProcessorContext[any, any]) error {
		ctxSeen = ctx.(*nodeContext)
		// Wall clock: anchored at 1250 (in the future): first at 1250, then every 100 ms.
		_, err := ctxSeen.ScheduleAt(time.UnixMilli(1250), 100*time.Millisecond, processor.WallClockTime, func(ts int64) error {
			fired = append(fired, "wc"+strconv.FormatInt(ts, 10))
			return nil
		})
		return err
	}}
	tk, _ := newTask(t, pipeline(p), &clock)
	_ = tk.AddRecord(raw("in", 0, 57, "k", "v"))
	drain(t, tk, 0)
	// Stream time is 57: a start of 10 (in the past) moves onto the grid, 10 + 5*10 = 60.
	if _, err := ctxSeen.ScheduleAt(time.UnixMilli(10), 10*time.Millisecond, processor.StreamTime, func(ts int64) error {
		fired = append(fired, "st"+strconv.FormatInt(ts, 10))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = tk.AddRecord(raw("in", 1, 59, "k", "v"))
	drain(t, tk, 0)
	_ = tk.AddRecord(raw("in", 2, 60, "k", "v"))
	drain(t, tk, 0)
	for _, now := range []int64{1249, 1250, 1349, 1350} {
		_, _ = tk.MaybePunctuateSystemTime(now)
	}
	if strings.Join(fired, ",") != "st60,wc1250,wc1350" {
		t.Fatalf("fired %v", fired)
	}
	if _, err := ctxSeen.ScheduleAt(time.UnixMilli(-1), time.Second, processor.StreamTime, func(int64) error { return nil }); !errors.Is(err, processor.ErrInvalidSchedule) {
		t.Fatalf("start before epoch: %v", err)
	}
	if _, err := ctxSeen.ScheduleAt(time.UnixMilli(0), 0, processor.StreamTime, func(int64) error { return nil }); !errors.Is(err, processor.ErrInvalidSchedule) {
		t.Fatalf("zero interval: %v", err)
	}
}

// The committable and consumed offsets follow every input partition while records of several
// topics and partitions are processed interleaved (in timestamp order) and in runs.
func TestCommittableOffsetsInterleaved(t *testing.T) {
	clock := int64(0)
	tk, _ := newTask(t, pipeline(&funcProc{}), &clock)
	in := []RawRecord{raw("in", 10, 1, "k", "a"), raw("in", 11, 3, "k", "b"), raw("in2", 4, 2, "k", "c"),
		raw("in2", 5, 5, "k", "d"), raw("in2", 6, 6, "k", "e")}
	p1 := raw("in", 7, 4, "k", "f")
	p1.Partition = 1
	in = append(in, p1)
	for _, r := range in {
		if err := tk.AddRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	// Processing order by timestamp: in-0@10, in2-0@4, in-0@11, in-1@7, in2-0@5, in2-0@6.
	want := []string{"in/0=11", "in/0=11 in2/0=5", "in/0=12 in2/0=5", "in/0=12 in/1=8 in2/0=5",
		"in/0=12 in/1=8 in2/0=6", "in/0=12 in/1=8 in2/0=7"}
	for i, w := range want {
		if ok, err := tk.Process(0); !ok || err != nil {
			t.Fatalf("record %d: processed %v, %v", i, ok, err)
		}
		var got []string
		for _, topic := range []string{"in", "in2"} {
			for p := int32(0); p < 2; p++ {
				if off, ok := tk.CommittableOffsets()[topic][p]; ok {
					got = append(got, topic+"/"+strconv.Itoa(int(p))+"="+strconv.FormatInt(off, 10))
					if c := tk.ConsumedOffsets()[topic][p]; c != off-1 {
						t.Fatalf("record %d: consumed offset of %s/%d is %d, committable %d", i, topic, p, c, off)
					}
				}
			}
		}
		if g := strings.Join(got, " "); g != w {
			t.Fatalf("after record %d: committable %s, want %s", i, g, w)
		}
	}
}
