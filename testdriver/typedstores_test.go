package testdriver

import (
	"errors"
	"testing"
)

// wantErr checks that err matches target and has exactly the message msg.
func wantErr(t *testing.T, err, target error, msg string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one matching %v", err, target)
	}
	if err.Error() != msg {
		t.Fatalf("message\n got %s\nwant %s", err, msg)
	}
}
