// Package testhooks reaches into package kstreams for the tests outside it (integration/),
// which need what no user may have: a probing rebalance interval below Java's 1 min minimum
// (so a test can watch a probing rebalance). Package kstreams sets the functions when it is
// initialized; nothing else may. The other way round, the runtime calls the hooks a test set
// (before it started any application; nil: none), to hold it at a point of interest.
package testhooks

import (
	"time"
)

var (
	// SetProbingRebalanceInterval sets probing.rebalance.interval.ms of app, a
	// *kstreams.KafkaStreams, bypassing Config.Validate; call it between New and Start.
	SetProbingRebalanceInterval func(app any, d time.Duration)

	// BeforeAssign, when a test set it, is called by the stream thread that leads a classic
	// group before it computes the assignment of the group groupID, on the goroutine that
	// joins the group, while every member of the generation waits for its SyncGroup answer: a
	// test can hold a rebalance open there.
	BeforeAssign func(groupID string)
)
