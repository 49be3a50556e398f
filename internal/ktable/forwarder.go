package ktable

import (
	"github.com/kstreams-go/kstreams/processor"
)

// Forwarder forwards the Changes of an operator that writes a timestamped store: without a
// record cache it forwards at once (dropping the old value unless old values are sent); with a
// cache it forwards nothing itself and the cache's flush listener forwards on flush/eviction.
// Java counterpart: TimestampedTupleForwarder with TimestampedCacheFlushListener.
type Forwarder struct {
	ctx           processor.ProcessorContext[any, any]
	sendOldValues bool
	cachingOn     bool
}

// NewForwarder creates the forwarder of a processor whose store is st (call it in Init).
func NewForwarder(ctx processor.ProcessorContext[any, any], st Store, sendOldValues bool) *Forwarder {
	f := &Forwarder{ctx: ctx, sendOldValues: sendOldValues}
	f.cachingOn = setFlushListener(ctx, st, sendOldValues)
	return f
}

// MaybeForward forwards r (whose value is a Change) unless a cache will forward it on flush.
// Java: TimestampedTupleForwarder.maybeForward.
func (f *Forwarder) MaybeForward(r processor.Record[any, any]) error {
	if f.cachingOn {
		return nil
	}
	if !f.sendOldValues {
		c := r.Value.(Change)
		r.Value = Change{New: c.New, NotLatest: c.NotLatest}
	}
	return f.ctx.Forward(r)
}

// MaybeForwardChange forwards r with the value Change{New: newValue, Old: oldValue} (Old
// dropped unless old values are sent) and timestamp ts, unless a cache will forward it on
// flush. It is MaybeForward(r.WithValue(Change{...}).WithTimestamp(ts)) without building (and
// boxing, one allocation per record) the Change when the cache forwards instead.
func (f *Forwarder) MaybeForwardChange(r processor.Record[any, any], newValue, oldValue any, ts int64) error {
	if f.cachingOn {
		return nil
	}
	if !f.sendOldValues {
		oldValue = nil
	}
	return f.ctx.Forward(r.WithValue[any](Change{New: newValue, Old: oldValue}).WithTimestamp(ts))
}
