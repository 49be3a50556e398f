package kstreams

import (
	"time"

	"github.com/IBM/sarama"

	"github.com/kstreams-go/kstreams/internal/testhooks"
)

// The hooks of the integration tests (integration/), which live outside this package.
func init() {
	testhooks.SaramaConfig = func(cfg any) *sarama.Config { return cfg.(*Config).saramaConfig() }
	testhooks.SetProbingRebalanceInterval = func(app any, d time.Duration) {
		app.(*KafkaStreams).cfg.ProbingRebalanceInterval = d
	}
}
