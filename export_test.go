package kstreams

import (
	"time"

	"github.com/IBM/sarama"
)

// SaramaConfigForTest exposes to the external tests the base sarama configuration the instance
// gives every connection (security included), so that a test's own admin client authenticates
// the way the application does.
func (c *Config) SaramaConfigForTest() *sarama.Config { return c.saramaConfig() }

// SetProbingRebalanceIntervalForTest sets probing.rebalance.interval.ms below Java's 1 min
// minimum, which Config.Validate refuses, so that tests can watch a probing rebalance.
// Call it between New and Start.
func SetProbingRebalanceIntervalForTest(k *KafkaStreams, d time.Duration) {
	k.cfg.ProbingRebalanceInterval = d
}
