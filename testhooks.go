package kstreams

import (
	"time"

	"github.com/kstreams-go/kstreams/internal/testhooks"
)

// The hooks of the integration tests (integration/), which live outside this package.
func init() {
	testhooks.SetProbingRebalanceInterval = func(app any, d time.Duration) {
		app.(*KafkaStreams).cfg.ProbingRebalanceInterval = d
	}
	testhooks.StoreLockWaiters = func(app any) int {
		if rt := app.(*KafkaStreams).runtime(); rt != nil {
			return rt.StoreLockWaiters()
		}
		return 0
	}
}
