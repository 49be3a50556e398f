// Package testhooks reaches into package kstreams for the tests outside it (integration/),
// which need two things no user needs: the sarama configuration an instance gives its
// connections (so a test's own admin client authenticates as the application does), and a
// probing rebalance interval below Java's 1 min minimum (so a test can watch one). Package
// kstreams sets the functions when it is initialized; nothing else may.
package testhooks

import (
	"time"

	"github.com/IBM/sarama"
)

var (
	// SaramaConfig returns the base sarama configuration (security included) of cfg, a
	// *kstreams.Config.
	SaramaConfig func(cfg any) *sarama.Config
	// SetProbingRebalanceInterval sets probing.rebalance.interval.ms of app, a
	// *kstreams.KafkaStreams, bypassing Config.Validate; call it between New and Start.
	SetProbingRebalanceInterval func(app any, d time.Duration)
)
