package ktable

import (
	"github.com/kstreams-go/kstreams/internal/storeapi"
	"github.com/kstreams-go/kstreams/processor"
)

// setFlushListener registers, when st has an active record cache, a flush listener that
// forwards each flushed entry as a Change (new value, and old value when sendOldValues) with the
// new value's timestamp (the entry's record timestamp for a delete), and reports whether it did.
// Java counterpart: TimestampedCacheFlushListener (see /work/notes/cache-api.md).
func setFlushListener(ctx processor.ProcessorContext[any, any], st Store, sendOldValues bool) bool {
	cs, ok := st.(storeapi.CachedStateStore[any, *ValueAndTimestamp])
	if !ok {
		return false
	}
	return cs.SetFlushListener(func(r storeapi.CacheFlushRecord[any, *ValueAndTimestamp]) error {
		ts := r.Timestamp
		if r.NewValue != nil {
			ts = r.NewValue.Timestamp
		}
		return ctx.Forward(processor.Record[any, any]{Key: r.Key, Value: Change{New: valueOf(r.NewValue), Old: valueOf(r.OldValue)},
			Timestamp: ts, Headers: r.Headers})
	}, sendOldValues)
}
