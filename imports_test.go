package kstreams_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The runtime package does not depend on the test driver: the Java class-name
// mapping of serdes and timestamp extractors lives with the serdes and the Processor API.
func TestRootDoesNotImportTestDriver(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/kstreams-go/kstreams/testdriver" || strings.HasPrefix(p, "github.com/kstreams-go/kstreams/testdriver/") {
			t.Fatalf("package kstreams depends on %s", p)
		}
	}
}
