package kafkatest

import (
	"fmt"
	"testing"
	"time"
)

// Eventually polls until poll reports done, and returns the value it last observed. It polls at
// once, then at intervals growing from 10 ms to 100 ms; when timeout passes first it fails t
// with what and the last observed value. poll runs on the test's goroutine and may call
// t.Fatal itself (to stop on an application error, say).
//
// It is the way tests wait for a result: never a sleep of a guessed length, and never a
// dependence on the machine's speed beyond the generous timeout.
func Eventually[T any](t testing.TB, timeout time.Duration, what string, poll func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := 10 * time.Millisecond
	for {
		v, done := poll()
		if done {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v; last observed: %s", what, timeout, show(v))
			return v
		}
		time.Sleep(pause) // polling interval, bounded by the deadline
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// EventuallyNoError polls f until it returns nil; when timeout passes first it fails t with
// what and the last error.
func EventuallyNoError(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	Eventually(t, timeout, what, func() (error, bool) {
		err := f()
		return err, err == nil
	})
}

// show prints a value observed by [Eventually], long ones cut.
func show(v any) string {
	s := fmt.Sprintf("%+v", v)
	if len(s) > 2000 {
		s = s[:2000] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}
