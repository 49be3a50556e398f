package task

import (
	"github.com/kstreams-go/kstreams/internal/cache"
	"github.com/kstreams-go/kstreams/internal/storeapi"
)

// Cache returns the record cache the task's caching store layers use (Config.Cache; nil when
// caching is off). It makes the StateStoreContext a storeapi.CacheContext.
// Java: InternalProcessorContext.cache().
func (s *storeContext) Cache() *cache.ThreadCache { return s.t.cfg.Cache }

var _ storeapi.CacheContext = (*storeContext)(nil)
