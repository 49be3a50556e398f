package ktable

import (
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// SlidingWindowAggregate is the supplier of windowed aggregate/count/reduce over
// SlidingWindows (KIP-450): a record at t updates the existing windows containing it, creates
// its left window [t - d, t] and, when later records exist within d, its right window
// [t + 1, t + 1 + d], and creates the right window of the previous record when t falls in it.
// Records with t < d go into the combined window [0, d]. Records with a null key or value are
// dropped (counted); a record whose own window ends before stream time - grace is dropped as
// late. Java: KStreamSlidingWindowAggregate (its reverse-iterator variant).
type SlidingWindowAggregate struct {
	opts          WindowOptions
	diffMs        int64
	init          Initializer
	agg           Aggregator
	sendOldValues bool
}

// NewSlidingWindowAggregate returns the supplier; diffMs is the time difference in ms.
func NewSlidingWindowAggregate(opts WindowOptions, diffMs int64, init Initializer, agg Aggregator) *SlidingWindowAggregate {
	return &SlidingWindowAggregate{opts: opts, diffMs: diffMs, init: init, agg: agg}
}

// EnableSendingOldValues always succeeds.
func (a *SlidingWindowAggregate) EnableSendingOldValues(bool) bool {
	a.sendOldValues = true
	return true
}

// View reads the window store by windowed key.
func (a *SlidingWindowAggregate) View() ValueGetterSupplier {
	return windowGetterSupplier{name: a.opts.StoreName, opts: &a.opts}
}

// Get returns a new processor.
func (a *SlidingWindowAggregate) Get() processor.Processor[any, any, any, any] {
	return &slidingProc{a: a}
}

type slidingProc struct {
	windowBase
	a  *SlidingWindowAggregate
	st WindowStore
}

func (p *slidingProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.init(ctx, &p.a.opts, p.a.sendOldValues)
	var err error
	if p.st, err = processor.GetStateStore[WindowStore](ctx, p.a.opts.StoreName); err != nil {
		return err
	}
	p.cachingOn = p.setWindowFlushListener(p.st)
	return nil
}

func (p *slidingProc) Close() error { return nil }

func (p *slidingProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil || r.Value == nil {
		p.dropNullKey("key or value")
		return nil
	}
	p.observed = max(p.observed, r.Timestamp)
	closeTime := p.observed - p.opts.GraceMs
	d := p.a.diffMs
	if end := r.Timestamp + d; end < closeTime {
		return p.dropLate(r, closedWindowString(r.Timestamp, end), "window end < stream time - grace", closeTime, end+p.opts.GraceMs+1)
	}
	var err error
	if r.Timestamp < d {
		err = p.processEarly(r, closeTime)
	} else {
		err = p.processReverse(r, closeTime)
	}
	if err != nil {
		return err
	}
	return p.maybeEmitFinal(r, closeTime)
}

type slidingWin struct {
	start int64
	v     *ValueAndTimestamp
}

// fetchBackward returns the key's windows with start in [from, to], latest first.
func (p *slidingProc) fetch(key any, from, to int64, forward bool) ([]slidingWin, error) {
	var it store.KeyValueIterator[int64, *ValueAndTimestamp]
	if forward {
		it = p.st.FetchTimeRange(key, from, to)
	} else {
		it = p.st.BackwardFetchTimeRange(key, from, to)
	}
	var out []slidingWin
	for it.Next() {
		if it.Value() != nil {
			out = append(out, slidingWin{start: it.Key(), v: it.Value()})
		}
	}
	err := it.Err()
	_ = it.Close()
	return out, err
}

func (p *slidingProc) processReverse(r processor.Record[any, any], closeTime int64) error {
	d, t := p.a.diffMs, r.Timestamp
	starts := map[int64]bool{}
	var leftAgg, rightAgg *ValueAndTimestamp
	leftCreated, rightCreated := false, false
	var prev *int64
	wins, err := p.fetch(r.Key, max(0, t-2*d), t+1, false)
	if err != nil {
		return err
	}
loop:
	for _, w := range wins {
		starts[w.start] = true
		end := w.start + d
		switch {
		case w.start == t+1:
			rightCreated = true
		case end > t:
			if rightAgg == nil {
				rightAgg = w.v
			}
			if err := p.updateWindow(w.start, w.v, r, closeTime); err != nil {
				return err
			}
		case end == t:
			leftCreated = true
			if err := p.updateWindow(w.start, w.v, r, closeTime); err != nil {
				return err
			}
			if w.v.Timestamp < t {
				ts := w.v.Timestamp
				prev = &ts
			} else {
				return nil
			}
		default: // end < t
			leftAgg = w.v
			ts := w.v.Timestamp
			prev = &ts
			break loop
		}
	}
	return p.createWindows(r, closeTime, starts, rightAgg, leftAgg, leftCreated, rightCreated, prev)
}

func (p *slidingProc) processEarly(r processor.Record[any, any], closeTime int64) error {
	t := r.Timestamp
	var combined *slidingWin
	var rightAgg *ValueAndTimestamp
	rightCreated := false
	starts := map[int64]bool{}
	var prev *int64
	wins, err := p.fetch(r.Key, 0, t+1, true)
	if err != nil {
		return err
	}
	for i := range wins {
		w := wins[i]
		starts[w.start] = true
		switch {
		case w.start == 0:
			combined = &wins[i]
			if w.v.Timestamp < t {
				ts := w.v.Timestamp
				prev = &ts
			}
		case w.start <= t:
			rightAgg = w.v
			if err := p.updateWindow(w.start, w.v, r, closeTime); err != nil {
				return err
			}
		case w.start == t+1:
			rightCreated = true
		}
	}
	if rightAgg == nil && combined != nil && combined.v.Timestamp > t {
		rightAgg = combined.v
	}
	if !rightCreated && rightAgg != nil && rightAgg.Timestamp > t {
		if err := p.createRight(r, rightAgg); err != nil {
			return err
		}
	}
	if prev != nil && !starts[*prev+1] {
		if err := p.createPreviousRight(*prev+1, r, closeTime); err != nil {
			return err
		}
	}
	if combined == nil {
		a, err := p.a.init()
		if err != nil {
			return err
		}
		return p.updateWindow(0, store.MakeValueAndTimestamp(a, t), r, closeTime)
	}
	return p.updateWindow(0, combined.v, r, closeTime)
}

func (p *slidingProc) createWindows(r processor.Record[any, any], closeTime int64, starts map[int64]bool, rightAgg, leftAgg *ValueAndTimestamp, leftCreated, rightCreated bool, prev *int64) error {
	d, t := p.a.diffMs, r.Timestamp
	if prev != nil {
		prs := *prev + 1
		if !starts[prs] && prs+d >= t {
			if err := p.createPreviousRight(prs, r, closeTime); err != nil {
				return err
			}
		}
	}
	if !leftCreated {
		var v *ValueAndTimestamp
		if prev != nil && t-d <= *prev {
			v = store.MakeValueAndTimestamp(leftAgg.Value, t)
		} else {
			a, err := p.a.init()
			if err != nil {
				return err
			}
			v = store.MakeValueAndTimestamp(a, t)
		}
		if err := p.updateWindow(t-d, v, r, closeTime); err != nil {
			return err
		}
	}
	if !rightCreated && rightAgg != nil && rightAgg.Timestamp > t {
		return p.createRight(r, rightAgg)
	}
	return nil
}

// createRight creates the record's right window holding rightAgg.
func (p *slidingProc) createRight(r processor.Record[any, any], rightAgg *ValueAndTimestamp) error {
	start := r.Timestamp + 1
	if err := p.st.Put(r.Key, rightAgg, start); err != nil {
		return err
	}
	return p.forwardUpdate(r, r.Key, serde.Window{Start: start, End: start + p.a.diffMs}, nil, rightAgg.Value, rightAgg.Timestamp)
}

func (p *slidingProc) createPreviousRight(start int64, r processor.Record[any, any], closeTime int64) error {
	a, err := p.a.init()
	if err != nil {
		return err
	}
	return p.updateWindow(start, store.MakeValueAndTimestamp(a, r.Timestamp), r, closeTime)
}

// updateWindow adds the record to the window starting at start (whose aggregate is v; nil or
// a nil value means initial) unless the window has closed.
func (p *slidingProc) updateWindow(start int64, v *ValueAndTimestamp, r processor.Record[any, any], closeTime int64) error {
	end := start + p.a.diffMs
	if end < closeTime {
		return p.dropLate(r, closedWindowString(start, end), "window end < stream time - grace", closeTime, end+p.opts.GraceMs+1)
	}
	var oldAgg any
	if v != nil {
		oldAgg = v.Value
	}
	newAgg, err := p.a.agg(r.Key, r.Value, oldAgg)
	if err != nil {
		return err
	}
	ts := r.Timestamp
	if oldAgg != nil {
		ts = max(r.Timestamp, v.Timestamp)
	}
	if err := p.st.Put(r.Key, store.MakeValueAndTimestamp(newAgg, ts), start); err != nil {
		return err
	}
	return p.forwardUpdate(r, r.Key, serde.Window{Start: start, End: end}, oldAgg, newAgg, ts)
}

func (p *slidingProc) maybeEmitFinal(r processor.Record[any, any], closeTime int64) error {
	if !p.shouldEmitFinal(closeTime) {
		return nil
	}
	d := p.a.diffMs
	upper := closeTime - d - 1
	if upper < 0 {
		return nil
	}
	lower := int64(0)
	if p.lastEmitClose != -1 {
		lower = max(0, p.lastEmitClose-d)
	}
	var entries []emitEntry
	it := fetchAllRetained(p.st, lower, upper)
	for it.Next() {
		if v := it.Value(); v != nil {
			entries = append(entries, emitEntry{key: it.Key(), value: v.Value, ts: v.Timestamp})
		}
	}
	err := it.Err()
	_ = it.Close()
	if err != nil {
		return err
	}
	if err := p.emitSorted(r, entries, func(w serde.Window) int64 { return w.Start }); err != nil {
		return err
	}
	p.lastEmitClose = closeTime
	return nil
}
