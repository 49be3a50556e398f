package kafkatest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records Fatalf instead of stopping the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestEventuallyReturnsTheValueThatEndedIt(t *testing.T) {
	n := 0
	got := Eventually(t, time.Minute, "third poll", func() (int, bool) {
		n++
		return n, n == 3
	})
	if got != 3 || n != 3 {
		t.Fatalf("Eventually returned %d after %d polls, want 3 after 3", got, n)
	}
}

func TestEventuallyFailsWithTheLastObservedValue(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	got := Eventually(r, 30*time.Millisecond, "count above a million", func() (int, bool) {
		n++
		return n, false
	})
	if got != n || n < 2 {
		t.Fatalf("returned %d after %d polls", got, n)
	}
	want := fmt.Sprintf("count above a million: not reached within 30ms; last observed: %d", n)
	if r.failed != want {
		t.Fatalf("failure %q, want %q", r.failed, want)
	}
}

func TestEventuallyNoErrorNamesTheLastError(t *testing.T) {
	r := &recorder{TB: t}
	EventuallyNoError(r, 20*time.Millisecond, "store open", func() error { return errors.New("still restoring") })
	if !strings.HasSuffix(r.failed, "last observed: still restoring") {
		t.Fatalf("failure %q", r.failed)
	}
	r.failed = ""
	EventuallyNoError(r, time.Minute, "store open", func() error { return nil })
	if r.failed != "" {
		t.Fatalf("failed: %s", r.failed)
	}
}
