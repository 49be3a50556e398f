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
