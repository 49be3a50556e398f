package task

import (
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
}

// next returns the successor schedule after a firing at curr: one interval later, or, when
// intervals were missed, the first multiple of the interval after curr (Java: PunctuationSchedule.next).
func (s *schedule) next(curr int64) *schedule {
	nt := s.time + s.interval
	if curr >= nt {
		missed := (curr - s.time) / s.interval
		nt = s.time + (missed+1)*s.interval
	}
	return &schedule{n: s.n, time: nt, interval: s.interval, p: s.p, cancel: s.cancel}
}

// punctuationQueue is a priority queue of schedules ordered by time only, with Java's
// PriorityQueue tie behaviour (Java: PunctuationQueue).
type punctuationQueue struct {
	h javaHeap[*schedule]
}

func (q *punctuationQueue) schedule(n *node, start, interval int64, p processor.Punctuator) processor.Cancellable {
	if q.h.cmp == nil {
		q.h.cmp = func(a, b *schedule) int { return cmpInt64(a.time, b.time) }
	}
	c := &cancelState{}
	q.h.offer(&schedule{n: n, time: start, interval: interval, p: p, cancel: c})
	return c
}

// scheduleAnchored adds a schedule first due at start; a start before now (the current stream
// or wall-clock time) moves to the first point of the start + k*interval grid after now
// (Java 4.4: StreamTask.getInitialSchedule with an anchored start).
func (q *punctuationQueue) scheduleAnchored(n *node, start, interval, now int64, p processor.Punctuator) processor.Cancellable {
	if q.h.cmp == nil {
		q.h.cmp = func(a, b *schedule) int { return cmpInt64(a.time, b.time) }
	}
	c := &cancelState{}
	s := &schedule{n: n, time: start, interval: interval, p: p, cancel: c}
	if start < now {
		s = s.next(now)
	}
	q.h.offer(s)
	return c
}

func (q *punctuationQueue) clear() { q.h.clear() }

// maybePunctuate fires every schedule due at ts (time <= ts) once, passing ts, and re-queues
// its successor unless it was cancelled (also from inside the punctuator). It stops at the
// first punctuator error (that schedule is not re-queued, as in Java where the task fails).
func (q *punctuationQueue) maybePunctuate(ts int64, typ processor.PunctuationType,
	run func(*node, int64, processor.PunctuationType, processor.Punctuator) error) (bool, error) {
	punctuated := false
	for {
		top, ok := q.h.peek()
		if !ok || top.time > ts {
			return punctuated, nil
		}
		s, _ := q.h.poll()
		if s.cancel.cancelled {
			continue
		}
		if err := run(s.n, ts, typ, s.p); err != nil {
			return punctuated, err
		}
		if !s.cancel.cancelled {
			q.h.offer(s.next(ts))
		}
		punctuated = true
	}
}

// canPunctuate reports whether a schedule that is not cancelled is due at ts, dropping
// cancelled schedules at the head (Java: PunctuationQueue.canPunctuate).
func (q *punctuationQueue) canPunctuate(ts int64) bool {
	for {
		top, ok := q.h.peek()
		if !ok || top.time > ts {
			return false
		}
		if !top.cancel.cancelled {
			return true
		}
		q.h.poll()
	}
}
