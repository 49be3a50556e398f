package task

import (
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
