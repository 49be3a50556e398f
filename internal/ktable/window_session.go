package ktable

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// SessionWindowAggregate is the supplier of session-windowed aggregate/count/reduce: a record
// at t merges every session of its key overlapping [t - gap, t + gap] (removing them, each
// forwarded as a delete with its end as timestamp) into one session holding the merged
// aggregate, forwarded with the session end as timestamp. If the merged session ends before
// stream time - grace - gap the record is dropped as late (counted, logged, sent to the
// late-record node if any). Records with a null key are dropped. Java:
// KStreamSessionWindowAggregate.
type SessionWindowAggregate struct {
	opts          WindowOptions
	gapMs         int64
	init          Initializer
	agg           Aggregator
	merger        Merger
	sendOldValues bool
}

// NewSessionWindowAggregate returns the supplier; gapMs is the inactivity gap in ms.
func NewSessionWindowAggregate(opts WindowOptions, gapMs int64, init Initializer, agg Aggregator, merger Merger) *SessionWindowAggregate {
	return &SessionWindowAggregate{opts: opts, gapMs: gapMs, init: init, agg: agg, merger: merger}
}

// EnableSendingOldValues always succeeds.
func (a *SessionWindowAggregate) EnableSendingOldValues(bool) bool {
	a.sendOldValues = true
	return true
}

// View reads the session store by windowed key (timestamp = session end).
func (a *SessionWindowAggregate) View() ValueGetterSupplier {
	return sessionGetterSupplier{name: a.opts.StoreName, opts: &a.opts}
}

// Get returns a new processor.
func (a *SessionWindowAggregate) Get() processor.Processor[any, any, any, any] {
	return &sessionProc{a: a}
}

type sessionProc struct {
	windowBase
	a  *SessionWindowAggregate
	st SessionStore
}

func (p *sessionProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.init(ctx, &p.a.opts, p.a.sendOldValues)
	var err error
	if p.st, err = processor.GetStateStore[SessionStore](ctx, p.a.opts.StoreName); err != nil {
		return err
	}
	// Java: TimestampedTupleForwarder with a SessionCacheFlushListener (not for on-close emission).
	if cs, ok := p.st.(interface {
		SetFlushListener(storeapi.CacheFlushListener[serde.Windowed[any], any], bool) bool
	}); ok && !p.opts.EmitOnClose {
		p.cachingOn = cs.SetFlushListener(func(r storeapi.CacheFlushRecord[serde.Windowed[any], any]) error {
			c := Change{}
			if r.HasNewValue {
				c.New = r.NewValue
			}
			if r.HasOldValue {
				c.Old = r.OldValue
			}
			return ctx.Forward(processor.Record[any, any]{Key: p.opts.windowed(r.Key.Key, r.Key.Window), Value: c,
				Timestamp: r.Key.Window.End, Headers: r.Headers})
		}, p.sendOldValues)
	}
	return nil
}

func (p *sessionProc) Close() error { return nil }

type sessionEntry struct {
	key serde.Windowed[any]
	agg any
}

func (p *sessionProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		p.dropNullKey("key")
		return nil
	}
	t := r.Timestamp
	p.observed = max(p.observed, t)
	closeTime := p.observed - p.opts.GraceMs - p.a.gapMs
	agg, err := p.a.init()
	if err != nil {
		return err
	}
	merged := serde.Window{Start: t, End: t}
	var found []sessionEntry
	it := p.st.FindSessions(r.Key, t-p.a.gapMs, t+p.a.gapMs)
	for it.Next() {
		e := sessionEntry{key: it.Key(), agg: it.Value()}
		found = append(found, e)
		if agg, err = p.a.merger(r.Key, agg, e.agg); err != nil {
			_ = it.Close()
			return err
		}
		merged = serde.Window{Start: min(merged.Start, e.key.Window.Start), End: max(merged.End, e.key.Window.End)}
	}
	err = it.Err()
	_ = it.Close()
	if err != nil {
		return err
	}
	if merged.End < closeTime {
		if err := p.dropLate(r, closedWindowString(merged.Start, merged.End), "session end < stream time - grace - gap", closeTime, merged.End+p.a.gapMs+p.opts.GraceMs+1); err != nil {
			return err
		}
	} else {
		if merged != (serde.Window{Start: t, End: t}) {
			for _, e := range found {
				if err := p.st.Remove(e.key); err != nil {
					return err
				}
				if err := p.forwardUpdate(r, e.key.Key, e.key.Window, e.agg, nil, e.key.Window.End); err != nil {
					return err
				}
			}
		}
		if agg, err = p.a.agg(r.Key, r.Value, agg); err != nil {
			return err
		}
		if err := p.st.Put(serde.Windowed[any]{Key: r.Key, Window: merged}, agg); err != nil {
			return err
		}
		if err := p.forwardUpdate(r, r.Key, merged, nil, agg, merged.End); err != nil {
			return err
		}
	}
	return p.maybeEmitFinal(r, closeTime)
}

func (p *sessionProc) maybeEmitFinal(r processor.Record[any, any], closeTime int64) error {
	if !p.shouldEmitFinal(closeTime) {
		return nil
	}
	upper := closeTime - 1
	if upper < 0 {
		return nil
	}
	lower := max(0, p.lastEmitClose)
	if upper < lower {
		return nil
	}
	var entries []emitEntry
	var it store.KeyValueIterator[serde.Windowed[any], any]
	if f, ok := p.st.(interface {
		FindSessionsEndingIn(int64, int64) store.KeyValueIterator[serde.Windowed[any], any]
	}); ok {
		it = f.FindSessionsEndingIn(lower, upper)
	} else {
		it = p.st.FindSessionsRange(nil, nil, lower, upper)
	}
	for it.Next() {
		k := it.Key()
		if k.Window.End < lower || k.Window.End > upper || it.Value() == nil {
			continue
		}
		entries = append(entries, emitEntry{key: k, value: it.Value(), ts: k.Window.End})
	}
	err := it.Err()
	_ = it.Close()
	if err != nil {
		return err
	}
	if err := p.emitSorted(r, entries, func(w serde.Window) int64 { return w.End }); err != nil {
		return err
	}
	p.lastEmitClose = closeTime
	return nil
}

type sessionGetterSupplier struct {
	name string
	opts *WindowOptions
}

func (s sessionGetterSupplier) Get() ValueGetter     { return &sessionGetter{s: s} }
func (s sessionGetterSupplier) StoreNames() []string { return []string{s.name} }

type sessionGetter struct {
	s  sessionGetterSupplier
	st SessionStore
}

func (g *sessionGetter) Init(ctx processor.ProcessingContext) error {
	st, err := processor.GetStateStore[SessionStore](ctx, g.s.name)
	g.st = st
	return err
}

func (g *sessionGetter) Get(key any) (*ValueAndTimestamp, error) {
	k, w, ok := g.s.opts.baseKey(key)
	if !ok {
		return nil, nil
	}
	v, found, err := g.st.FetchSession(k, w.Start, w.End)
	if err != nil || !found || v == nil {
		return nil, err
	}
	return &ValueAndTimestamp{Value: v, Timestamp: w.End}, nil
}

func (g *sessionGetter) Close() {}
