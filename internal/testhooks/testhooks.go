// Package testhooks reaches into package kstreams for the tests outside it (integration/),
// which need what no user may have: a probing rebalance interval below Java's 1 min minimum
// (so a test can watch a probing rebalance), the number of queries waiting for a store lock (so
// a test can order a query between two records). Package kstreams sets the functions when it is
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
	// StoreLockWaiters returns how many interactive queries of app, a *kstreams.KafkaStreams,
	// wait for a stream thread's store lock now (0 before Start).
	StoreLockWaiters func(app any) int

	// BeforeAssign, when a test set it, is called by the stream thread that leads a classic
	// group before it computes the assignment of the group groupID, on the goroutine that
	// joins the group, while every member of the generation waits for its SyncGroup answer: a
	// test can hold a rebalance open there.
	BeforeAssign func(groupID string)
)
