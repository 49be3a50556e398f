package kstreams

import "github.com/IBM/sarama"

// SaramaConfigForTest exposes to the external tests the base sarama configuration the instance
// gives every connection (security included), so that a test's own admin client authenticates
// the way the application does.
func (c *Config) SaramaConfigForTest() *sarama.Config { return c.saramaConfig() }
