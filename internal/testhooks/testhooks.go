// Package testhooks reaches into package kstreams for the tests outside it (integration/),
// which need what no user may have: a probing rebalance interval below Java's 1 min minimum
// (so a test can watch a probing rebalance). Package kstreams sets the functions when it is
// initialized; nothing else may.
package testhooks

import (
	"time"
)

var (
	// SetProbingRebalanceInterval sets probing.rebalance.interval.ms of app, a
	// *kstreams.KafkaStreams, bypassing Config.Validate; call it between New and Start.
	SetProbingRebalanceInterval func(app any, d time.Duration)
)
