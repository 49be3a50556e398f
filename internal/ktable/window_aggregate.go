package ktable

import (
	"bytes"
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"log/slog"
	"slices"
	"strconv"

	"github.com/kstreams-go/kstreams/processor"
	"github.com/kstreams-go/kstreams/serde"
	"github.com/kstreams-go/kstreams/store"
)

// WindowStore is the untyped view of the timestamped window stores of windowed aggregations.
type WindowStore = store.TimestampedWindowStore[any, any]

// SessionStore is the untyped view of the session stores of session aggregations (values are
// not timestamped: a session's timestamp is its end).
type SessionStore = store.SessionStore[any, any]

// Merger merges two session aggregates of key (Java: Merger). Errors abort the record.
type Merger func(key, agg1, agg2 any) (any, error)

// DroppedRecordsSensor is implemented by the engine's processor context (internal/task): it
// counts records a processor drops (null keys, records for closed windows) in the task's
// dropped-records metric. Java counterpart: TaskMetrics.droppedRecordsSensor.
type DroppedRecordsSensor interface {
	// RecordDropped adds n to the task's dropped-records count.
	RecordDropped(n int64)
}

// emitIntervalConfig is Java's internal property throttling on-window-close emission checks
// (wall-clock ms between two checks; default 1000); users set it through
// kstream.EmitIntervalWindowedAggregationConfig, beside the outer join's. Java:
// StreamsConfig.InternalConfig.EMIT_INTERVAL_MS_KSTREAMS_WINDOWED_AGGREGATION.
const emitIntervalConfig = "__emit.interval.ms.kstreams.windowed.aggregation__"

// Header names of records sent to a late-record topic (no Java counterpart).
const (
	// LateHeaderWindow names the window that rejected the record: "[start,end)" for time
	// windows, "[start,end]" for sliding and session windows (ms).
	LateHeaderWindow = "kstreams.late.window"
	// LateHeaderReason says why: "window closed" with the rule that applied.
	LateHeaderReason = "kstreams.late.reason"
	// LateHeaderStreamTime is the stream time (ms, decimal) the aggregation had observed.
	LateHeaderStreamTime = "kstreams.late.stream-time"
	// LateHeaderCloseTime is the window's close time (ms, decimal): the stream time from which
	// the window takes no more records, window end + grace for time windows (whose end is
	// exclusive), window end + grace + 1 for sliding windows and session end + gap + grace + 1
	// for session windows (whose ends are inclusive). The record was late because the stream
	// time (LateHeaderStreamTime) had reached it.
	LateHeaderCloseTime = "kstreams.late.close-time"
	// LateHeaderProcessor names the aggregation processor.
	LateHeaderProcessor = "kstreams.late.processor"
)

// LateRecord is the value a windowed aggregation forwards (with ForwardTo) to its late-record
// node: the dropped record's original value. The late-record filter node unwraps it; every other
// record reaching that node is ignored.
type LateRecord struct{ Value any }

// LateRecordFilter is the supplier of the node between a windowed aggregation and its
// late-record sink: it passes only [LateRecord] values, unwrapped.
type LateRecordFilter struct{}

// Get returns a new filter processor.
func (LateRecordFilter) Get() processor.Processor[any, any, any, any] { return &lateFilterProc{} }

type lateFilterProc struct{ base }

func (p *lateFilterProc) Process(r processor.Record[any, any]) error {
	if l, ok := r.Value.(LateRecord); ok {
		r.Value = l.Value
		return p.ctx.Forward(r)
	}
	return nil
}

// WindowOptions are the settings windowed aggregations share.
type WindowOptions struct {
	// StoreName is the window or session store written.
	StoreName string
	// GraceMs is the grace period (ms).
	GraceMs int64
	// EmitOnClose selects EmitStrategy.onWindowClose (KIP-825).
	EmitOnClose bool
	// LateNode is the name of the late-record filter child ("" = none).
	LateNode string
	// ProcessorName names the aggregation in late-record headers.
	ProcessorName string
	// KeySerde serializes keys to order on-close emissions as Java's time-ordered stores do;
	// nil = the default key serde.
	KeySerde serde.Serde[any]
	// WindowedKey makes the forwarded key (a typed Windowed[K]) of a base key and a window;
	// nil forwards serde.Windowed[any].
	WindowedKey func(key any, w serde.Window) any
	// BaseKey splits a forwarded windowed key (for value getters); nil accepts serde.Windowed[any].
	BaseKey func(windowed any) (key any, w serde.Window, ok bool)
}

func (o *WindowOptions) windowed(key any, w serde.Window) any {
	if o.WindowedKey != nil {
		return o.WindowedKey(key, w)
	}
	return serde.Windowed[any]{Key: key, Window: w}
}

func (o *WindowOptions) baseKey(k any) (any, serde.Window, bool) {
	if o.BaseKey != nil {
		return o.BaseKey(k)
	}
	w, ok := k.(serde.Windowed[any])
	return w.Key, w.Window, ok
}

// windowBase is what the windowed aggregation processors share: stream time, dropped-record
// accounting and logging, late-record forwarding, on-close emission throttling.
type windowBase struct {
	ctx           processor.ProcessorContext[any, any]
	opts          *WindowOptions
	sendOldValues bool
	observed      int64
	lastEmitClose int64
	nextEmit      int64
	emitInterval  int64
	dropped       DroppedRecordsSensor
	log           *slog.Logger
	name          string
	keySerde      serde.Serde[any]
	cachingOn     bool
}

func (w *windowBase) init(ctx processor.ProcessorContext[any, any], opts *WindowOptions, sendOld bool) {
	w.ctx, w.opts, w.sendOldValues = ctx, opts, sendOld
	w.observed, w.lastEmitClose = -1, -1
	w.dropped, _ = ctx.(DroppedRecordsSensor)
	w.log = slog.Default()
	w.emitInterval = 1000
	if v, ok := ctx.AppConfigs()[emitIntervalConfig]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			w.emitInterval = n
		}
	}
	w.name = opts.ProcessorName
	w.keySerde = opts.KeySerde
	if w.keySerde == nil {
		w.keySerde = ctx.KeySerde()
	}
}

func (w *windowBase) drop() {
	if w.dropped != nil {
		w.dropped.RecordDropped(1)
	}
}

// dropNullKey counts and logs a record skipped for its null key.
func (w *windowBase) dropNullKey(what string) {
	w.drop()
	if md, ok := w.ctx.RecordMetadata(); ok {
		w.log.Debug("skipping record due to null "+what, "topic", md.Topic, "partition", md.Partition, "offset", md.Offset)
	} else {
		w.log.Debug("skipping record due to null " + what)
	}
}

// dropLate counts and logs a record skipped for a closed window, and sends it to the late
// record node when there is one. closeTime is the aggregation's expiry bound (stream time -
// grace, Java's "expiration" in its log line), windowClose the window's own close time
// (LateHeaderCloseTime).
func (w *windowBase) dropLate(r processor.Record[any, any], window, rule string, closeTime, windowClose int64) error {
	w.drop()
	attrs := []any{"timestamp", r.Timestamp, "window", window, "expiration", closeTime, "streamTime", w.observed}
	if md, ok := w.ctx.RecordMetadata(); ok {
		attrs = append(attrs, "topic", md.Topic, "partition", md.Partition, "offset", md.Offset)
	}
	w.log.Debug("skipping record for expired window", attrs...)
	if w.opts.LateNode == "" {
		return nil
	}
	h := r.Headers.Clone()
	h.Add(LateHeaderWindow, []byte(window))
	h.Add(LateHeaderReason, []byte("window closed: "+rule))
	h.Add(LateHeaderStreamTime, []byte(strconv.FormatInt(w.observed, 10)))
	h.Add(LateHeaderCloseTime, []byte(strconv.FormatInt(windowClose, 10)))
	if w.name != "" {
		h.Add(LateHeaderProcessor, []byte(w.name))
	}
	return w.ctx.ForwardTo(processor.Record[any, any]{Key: r.Key, Value: LateRecord{Value: r.Value}, Timestamp: r.Timestamp, Headers: h}, w.opts.LateNode)
}

// shouldEmitFinal applies Java's throttle (wall clock) and progress checks.
func (w *windowBase) shouldEmitFinal(closeTime int64) bool {
	if !w.opts.EmitOnClose {
		return false
	}
	now := w.ctx.CurrentSystemTimeMs()
	if now < w.nextEmit {
		return false
	}
	w.nextEmit = now + w.emitInterval
	return w.lastEmitClose == -1 || w.lastEmitClose < closeTime
}

// forwardUpdate forwards an update unless emitting on close.
func (w *windowBase) forwardUpdate(r processor.Record[any, any], key any, win serde.Window, oldAgg, newAgg any, ts int64) error {
	if w.opts.EmitOnClose || w.cachingOn {
		return nil
	}
	c := Change{New: newAgg}
	if w.sendOldValues {
		c.Old = oldAgg
	}
	return w.ctx.Forward(processor.Record[any, any]{Key: w.opts.windowed(key, win), Value: c, Timestamp: ts, Headers: r.Headers})
}

type emitEntry struct {
	key   serde.Windowed[any]
	kb    []byte
	value any
	ts    int64
}

// emitSorted forwards entries ordered as Java's time-ordered stores return them: by primary
// time (window start; session end), then key bytes, then window start.
func (w *windowBase) emitSorted(r processor.Record[any, any], entries []emitEntry, primary func(serde.Window) int64) error {
	for i := range entries {
		if w.keySerde != nil {
			kb, err := w.keySerde.Serialize("", nil, entries[i].key.Key)
			if err != nil {
				return err
			}
			entries[i].kb = kb
		}
	}
	slices.SortStableFunc(entries, func(a, b emitEntry) int {
		if c := compareInt(primary(a.key.Window), primary(b.key.Window)); c != 0 {
			return c
		}
		if c := bytes.Compare(a.kb, b.kb); c != 0 {
			return c
		}
		return compareInt(a.key.Window.Start, b.key.Window.Start)
	})
	for _, e := range entries {
		if err := w.ctx.Forward(processor.Record[any, any]{Key: w.opts.windowed(e.key.Key, e.key.Window), Value: Change{New: e.value}, Timestamp: e.ts, Headers: r.Headers}); err != nil {
			return err
		}
	}
	return nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func timeWindowString(start, end int64) string {
	return "[" + strconv.FormatInt(start, 10) + "," + strconv.FormatInt(end, 10) + ")"
}

func closedWindowString(start, end int64) string {
	return "[" + strconv.FormatInt(start, 10) + "," + strconv.FormatInt(end, 10) + "]"
}

// ---------------------------------------------------------------------------------------------
// Time windows

// TimeWindowsSpec is what the time-window aggregation needs of TimeWindows.
type TimeWindowsSpec interface {
	// WindowsFor returns the windows containing timestamp, by ascending start.
	WindowsFor(timestamp int64) []serde.Window
	// SizeMs returns the window size in ms.
	SizeMs() int64
}

// WindowAggregate is the supplier of windowed aggregate/count/reduce over TimeWindows: each
// record updates every window it falls in whose end is after stream time - grace; windows
// already closed drop the record (counted, logged at debug level, sent to the late-record
// node if any). The aggregate's timestamp is the maximum record timestamp of the window.
// Java: KStreamWindowAggregate.
type WindowAggregate struct {
	opts          WindowOptions
	windows       TimeWindowsSpec
	init          Initializer
	agg           Aggregator
	sendOldValues bool
}

// NewWindowAggregate returns the supplier.
func NewWindowAggregate(opts WindowOptions, windows TimeWindowsSpec, init Initializer, agg Aggregator) *WindowAggregate {
	return &WindowAggregate{opts: opts, windows: windows, init: init, agg: agg}
}

// EnableSendingOldValues always succeeds.
func (a *WindowAggregate) EnableSendingOldValues(bool) bool { a.sendOldValues = true; return true }

// View reads the window store by windowed key.
func (a *WindowAggregate) View() ValueGetterSupplier {
	return windowGetterSupplier{name: a.opts.StoreName, opts: &a.opts}
}

// Get returns a new processor.
func (a *WindowAggregate) Get() processor.Processor[any, any, any, any] {
	return &windowAggProc{a: a}
}

type windowAggProc struct {
	windowBase
	a  *WindowAggregate
	st WindowStore
}

func (p *windowAggProc) Init(ctx processor.ProcessorContext[any, any]) error {
	p.init(ctx, &p.a.opts, p.a.sendOldValues)
	var err error
	if p.st, err = processor.GetStateStore[WindowStore](ctx, p.a.opts.StoreName); err != nil {
		return err
	}
	p.cachingOn = p.setWindowFlushListener(p.st)
	return nil
}

func (p *windowAggProc) Close() error { return nil }

func (p *windowAggProc) Process(r processor.Record[any, any]) error {
	if r.Key == nil {
		p.dropNullKey("key")
		return nil
	}
	p.observed = max(p.observed, r.Timestamp)
	closeTime := p.observed - p.opts.GraceMs
	for _, win := range p.a.windows.WindowsFor(r.Timestamp) {
		if win.End <= closeTime {
			if err := p.dropLate(r, timeWindowString(win.Start, win.End), "window end <= stream time - grace", closeTime, win.End+p.opts.GraceMs); err != nil {
				return err
			}
			continue
		}
		old, _, err := p.st.Fetch(r.Key, win.Start)
		if err != nil {
			return err
		}
		var oldAgg any
		ts := r.Timestamp
		if old == nil || old.Value == nil {
			if oldAgg, err = p.a.init(); err != nil {
				return err
			}
		} else {
			oldAgg, ts = old.Value, max(r.Timestamp, old.Timestamp)
		}
		newAgg, err := p.a.agg(r.Key, r.Value, oldAgg)
		if err != nil {
			return err
		}
		if err := p.st.Put(r.Key, store.MakeValueAndTimestamp(newAgg, ts), win.Start); err != nil {
			return err
		}
		if err := p.forwardUpdate(r, r.Key, win, oldAgg, newAgg, ts); err != nil {
			return err
		}
	}
	return p.maybeEmitFinal(r, closeTime)
}

func (p *windowAggProc) maybeEmitFinal(r processor.Record[any, any], closeTime int64) error {
	if !p.shouldEmitFinal(closeTime) {
		return nil
	}
	size := p.a.windows.SizeMs()
	upper := closeTime - size
	if upper < 0 {
		return nil
	}
	lower := int64(0)
	if p.lastEmitClose != -1 {
		lower = max(0, p.lastEmitClose-size) + 1
		if slices.Equal(p.a.windows.WindowsFor(upper), p.a.windows.WindowsFor(lower-1)) {
			return nil
		}
	}
	var entries []emitEntry
	it := fetchAllRetained(p.st, lower, upper)
	for it.Next() {
		v := it.Value()
		if v == nil {
			continue
		}
		entries = append(entries, emitEntry{key: it.Key(), value: v.Value, ts: v.Timestamp})
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

// windowGetterSupplier reads a timestamped window store by windowed key.
type windowGetterSupplier struct {
	name string
	opts *WindowOptions
}

func (s windowGetterSupplier) Get() ValueGetter     { return &windowGetter{name: s.name, opts: s.opts} }
func (s windowGetterSupplier) StoreNames() []string { return []string{s.name} }

type windowGetter struct {
	name string
	opts *WindowOptions
	st   WindowStore
}

func (g *windowGetter) Init(ctx processor.ProcessingContext) error {
	st, err := processor.GetStateStore[WindowStore](ctx, g.name)
	g.st = st
	return err
}

func (g *windowGetter) Get(key any) (*ValueAndTimestamp, error) {
	k, w, ok := g.opts.baseKey(key)
	if !ok {
		return nil, nil
	}
	v, _, err := g.st.Fetch(k, w.Start)
	return v, err
}

func (g *windowGetter) Close() {}

// retainedFetcher is implemented by the timestamped window stores that
// store.Stores.TimestampedWindowStoreBuilder builds over its in-memory and Pebble engines.
type retainedFetcher interface {
	// FetchAllRetained iterates every window with max(timeFrom, observed stream time -
	// retention) <= start <= timeTo (ms, inclusive). Java: the fetchAll of the time-ordered
	// window store that emit-on-close aggregations use.
	FetchAllRetained(timeFrom, timeTo int64) store.KeyValueIterator[serde.Windowed[any], *ValueAndTimestamp]
}

// fetchAllRetained reads the windows with start in [lower, upper] as Java's time-ordered store
// does (no read-side retention filter) when the store supports it.
func fetchAllRetained(st WindowStore, lower, upper int64) store.KeyValueIterator[serde.Windowed[any], *ValueAndTimestamp] {
	if f, ok := st.(retainedFetcher); ok {
		return f.FetchAllRetained(lower, upper)
	}
	return st.FetchAll(lower, upper)
}

// WindowedPassThrough is the merge node of a windowed cogrouped aggregation: it forwards the
// Changes of the per-stream windowed aggregations, which share one store, and reads that store
// by windowed key. Java: KTablePassThrough over KStreamWindowAggregate /
// KStreamSessionWindowAggregate / KStreamSlidingWindowAggregate.
type WindowedPassThrough struct {
	PassThrough
	parents []Supplier
}

// NewWindowedPassThrough returns the supplier over the cogroup's windowed aggregate suppliers.
func NewWindowedPassThrough(parents []Supplier, storeName string) *WindowedPassThrough {
	return &WindowedPassThrough{PassThrough: PassThrough{parents: parents, storeName: storeName}, parents: parents}
}

// View reads the shared store through the first aggregation's view.
func (p *WindowedPassThrough) View() ValueGetterSupplier { return p.parents[0].View() }

// GraceMs returns the windows' grace (see WindowAggregate.GraceMs), for suppress.
func (p *WindowedPassThrough) GraceMs() int64 {
	if g, ok := p.parents[0].(interface{ GraceMs() int64 }); ok {
		return g.GraceMs()
	}
	return 0
}

// setWindowFlushListener registers, when st has an active record cache (and results are not
// emitted on close), a listener forwarding each flushed window as a Change with the new value's
// timestamp (the entry's record timestamp for a delete); it reports whether it did. Java:
// TimestampedTupleForwarder with a TimestampedCacheFlushListener.
func (w *windowBase) setWindowFlushListener(st WindowStore) bool {
	cs, ok := st.(interface {
		SetFlushListener(storeapi.CacheFlushListener[serde.Windowed[any], *ValueAndTimestamp], bool) bool
	})
	if !ok || w.opts.EmitOnClose {
		return false
	}
	return cs.SetFlushListener(func(r storeapi.CacheFlushRecord[serde.Windowed[any], *ValueAndTimestamp]) error {
		ts := r.Timestamp
		if r.NewValue != nil {
			ts = r.NewValue.Timestamp
		}
		return w.ctx.Forward(processor.Record[any, any]{Key: w.opts.windowed(r.Key.Key, r.Key.Window),
			Value: Change{New: valueOf(r.NewValue), Old: valueOf(r.OldValue)}, Timestamp: ts, Headers: r.Headers})
	}, w.sendOldValues)
}
