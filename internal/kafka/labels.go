package kafka

import (
	"context"
	"runtime/pprof"
)

// LabelGoroutine labels the calling goroutine (and the goroutines it starts) with
// kstreams=role in CPU profiles, so a profile splits the library's CPU by what runs it:
// "stream-thread" (polls, commits and, with one executor, processes), "executor",
// "state-updater", "fetch", "fetch-route", "produce". It costs nothing after the call.
func LabelGoroutine(role string) {
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("kstreams", role)))
}
