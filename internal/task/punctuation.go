package task

import (
	"container/heap"

	"github.com/kstreams-go/kstreams/processor"
)

// cancelState is shared by a schedule and its successors, so the Cancellable returned by
// Schedule cancels whichever schedule is current (Java's RepointableCancellable).
type cancelState struct{ cancelled bool }

// Cancel stops the punctuation; it may be called from inside the punctuator.
func (c *cancelState) Cancel() { c.cancelled = true }

type schedule struct {
	n        *node
	time     int64
	interval int64
	p        processor.Punctuator
	cancel   *cancelState
	seq      uint64
}

// next returns the successor schedule after a firing at curr: one interval later, or, when
// intervals were missed, the first multiple of the interval after curr (Java: PunctuationSchedule.next).
func (s *schedule) next(curr int64, seq uint64) *schedule {
	nt := s.time + s.interval
	if curr >= nt {
		missed := (curr - s.time) / s.interval
		nt = s.time + (missed+1)*s.interval
	}
	return &schedule{n: s.n, time: nt, interval: s.interval, p: s.p, cancel: s.cancel, seq: seq}
}

type scheduleHeap []*schedule

func (h scheduleHeap) Len() int { return len(h) }
func (h scheduleHeap) Less(i, j int) bool {
	if h[i].time != h[j].time {
		return h[i].time < h[j].time
	}
	return h[i].seq < h[j].seq
}
func (h scheduleHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *scheduleHeap) Push(x any)   { *h = append(*h, x.(*schedule)) }
func (h *scheduleHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// punctuationQueue is a priority queue of schedules by time (Java: PunctuationQueue); equal
// times fire in scheduling order.
type punctuationQueue struct {
	h   scheduleHeap
	seq uint64
}

func (q *punctuationQueue) schedule(n *node, start, interval int64, p processor.Punctuator) processor.Cancellable {
	c := &cancelState{}
	q.seq++
	heap.Push(&q.h, &schedule{n: n, time: start, interval: interval, p: p, cancel: c, seq: q.seq})
	return c
}

func (q *punctuationQueue) clear() { q.h = nil }

// maybePunctuate fires every schedule due at ts (time <= ts) once, passing ts, and re-queues
// its successor unless it was cancelled (also from inside the punctuator). It stops at the
// first punctuator error (that schedule is not re-queued, as in Java where the task fails).
func (q *punctuationQueue) maybePunctuate(ts int64, typ processor.PunctuationType,
	run func(*node, int64, processor.PunctuationType, processor.Punctuator) error) (bool, error) {
	punctuated := false
	for len(q.h) > 0 && q.h[0].time <= ts {
		s := heap.Pop(&q.h).(*schedule)
		if s.cancel.cancelled {
			continue
		}
		if err := run(s.n, ts, typ, s.p); err != nil {
			return punctuated, err
		}
		if !s.cancel.cancelled {
			q.seq++
			heap.Push(&q.h, s.next(ts, q.seq))
		}
		punctuated = true
	}
	return punctuated, nil
}
