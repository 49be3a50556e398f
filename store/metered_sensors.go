package store

import (
	"time"

	"github.com/kstreams-go/kstreams/internal/metrics"
	"github.com/kstreams-go/kstreams/processor"
)

// storeSensorsProvider is implemented by the runtime's StateStoreContext when
// metrics.recording.level is DEBUG or TRACE: it hands a metered layer the sensors its calls
// are timed into (Java: the stream-state-metrics sensors of MeteredKeyValueStore).
type storeSensorsProvider interface {
	StoreSensors(store, storeType string) *metrics.StoreOps
}

// storeSensors returns the sensors of store name from ctx; nil when none are recorded (INFO,
// or a context of the test driver), and then the layer reads no clock.
func storeSensors(ctx processor.StateStoreContext, name string, persistent bool) *metrics.StoreOps {
	p, ok := ctx.(storeSensorsProvider)
	if !ok {
		return nil
	}
	typ := "in-memory"
	if persistent {
		typ = "pebble"
	}
	return p.StoreSensors(name, typ)
}

// timed records one call of op started at start.
func timed(s *metrics.StoreOps, op metrics.StoreOp, start time.Time) {
	s.Op(op).Record(1, time.Since(start))
}
