package systemtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The ports' topologies describe exactly as Kafka's clients do: testdata/*.describe.txt hold
// Java's describe() of EosTestClient (simple, complex) and SmokeTestClient, printed by
// systemtest/java's Describe from Kafka's own classes. With the test jars at hand
// (KSTREAMS_SYSTEMTEST_CP, set by scripts/systemtest.sh and make test) Java's text is also
// printed afresh and must equal the file, so the files cannot drift.
func TestDescribeMatchesJava(t *testing.T) {
	out := NewPrinter(nil)
	cases := []struct {
		name, version string
		describe      func() (string, error)
	}{
		{"eos", "4.2.1", func() (string, error) {
			topo, err := EosTopology(false, out)
			if err != nil {
				return "", err
			}
			return topo.Describe().String(), nil
		}},
		{"eos-complex", "4.2.1", func() (string, error) {
			topo, err := EosTopology(true, out)
			if err != nil {
				return "", err
			}
			return topo.Describe().String(), nil
		}},
		{"smoke", "4.3.1", func() (string, error) {
			topo, err := SmokeTopology("describe", out, nil)
			if err != nil {
				return "", err
			}
			return topo.Describe().String(), nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", c.name+".describe.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if cp := javaClasspath(c.version); cp != "" {
				cmd := exec.Command("java", "-cp", cp, "io.kstreams.systemtest.Describe", c.name)
				fresh, err := cmd.Output()
				if err != nil {
					t.Fatalf("Java Describe %s: %v", c.name, err)
				}
				if string(fresh) != string(want) {
					t.Fatalf("testdata/%s.describe.txt differs from Java's describe() now; regenerate it:\n%s", c.name, fresh)
				}
			}
			got, err := c.describe()
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("Describe() differs from Java's describe()\n--- Go:\n%s\n--- Java:\n%s\n--- first difference: %s", got, want, firstDiff(got, string(want)))
			}
		})
	}
}

// classpathEnv names systemtest/java's target directory (systemtest.jar, lib-4.2.1/,
// lib-4.3.1/); the tests that need Java skip without it.
const classpathEnv = "KSTREAMS_SYSTEMTEST_CP"

// javaClasspath is the classpath of systemtest/java for a test-jar version, from
// KSTREAMS_SYSTEMTEST_CP (systemtest/java's target directory), or "" when unset.
func javaClasspath(version string) string {
	dir := os.Getenv(classpathEnv)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "systemtest.jar") + string(os.PathListSeparator) + filepath.Join(dir, "lib-"+version, "*")
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: Go %q, Java %q", i+1, al[i], bl[i])
		}
	}
	return "one is a prefix of the other"
}
