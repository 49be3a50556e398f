package kstream_test

import (
	"testing"

	"github.com/kstreams-go/kstreams/kstream"
)

// A zero KStream panics with a message that says how to make one, not with
// a nil pointer dereference.
func TestZeroKStreamPanicsClearly(t *testing.T) {
	defer func() {
		const want = "kstream: zero KStream: make a KStream with kstream.Stream(builder, topic, ...) or from an operator " +
			"of another KStream or KTable, not with var or KStream{}"
		if r := recover(); r != want {
			t.Fatalf("panic %v, want %s", r, want)
		}
	}()
	var s kstream.KStream[string, string]
	s.Filter(func(string, string) bool { return true })
}
