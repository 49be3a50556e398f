package ktable

import (
	"github.com/kstreams-go/kstreams/processor"
)

// setFlushListener registers the forwarding flush listener on st when st has an active record
// cache and reports whether it did (see /work/notes/cache-api.md). Until the caching layer
// lands, stores have no cache and this reports false.
func setFlushListener(ctx processor.ProcessorContext[any, any], st Store, sendOldValues bool) bool {
	_, _, _ = ctx, st, sendOldValues
	return false
}
