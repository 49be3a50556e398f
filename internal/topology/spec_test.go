package topology

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeStore is a minimal StoreBuilder for graph tests.
type fakeStore struct {
	name    string
	logging bool
}

func (f *fakeStore) Name() string         { return f.name }
func (f *fakeStore) LoggingEnabled() bool { return f.logging }

type fakeSupplier struct{}

func list(s string) []string {
	if s == "-" {
		return nil
	}
	return strings.Split(s, ",")
}

// buildSpec builds a graph from the line format read by testdata/describe/DescribeSpec.java.
func buildSpec(t *testing.T, spec string) (*Builder, error) {
	t.Helper()
	b := New()
	for _, line := range strings.Split(spec, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Split(line, " ")
		var err error
		switch p[0] {
		case "source":
			err = b.AddSource(p[1], list(p[2]), nil, "", ResetDefault, nil, nil, nil)
		case "pattern":
			err = b.AddSource(p[1], nil, regexp.MustCompile(p[2]), p[2], ResetDefault, nil, nil, nil)
		case "processor":
			err = b.AddProcessor(p[1], fakeSupplier{}, list(p[2])...)
		case "sink":
			err = b.AddSink(p[1], p[2], nil, "", nil, nil, nil, list(p[3])...)
		case "store":
			err = b.AddStateStore(&fakeStore{name: p[1], logging: true}, list(p[2])...)
		case "connect":
			err = b.ConnectProcessorAndStateStores(p[1], list(p[2])...)
		case "global":
			err = b.AddGlobalStore(&fakeStore{name: p[1]}, p[2], nil, nil, nil, p[3], p[4], fakeSupplier{}, true)
		default:
			t.Fatalf("bad spec line %q", line)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// TestDescribeMatchesJava compares Describe().String() with the text Java's
// topology.describe().toString() printed for the same spec (Kafka Streams 4.4.0, Java 17;
// produced by testdata/describe/DescribeSpec.java).
func TestDescribeMatchesJava(t *testing.T) {
	specs, _ := filepath.Glob("testdata/describe/*.spec")
	if len(specs) == 0 {
		t.Fatal("no specs")
	}
	for _, f := range specs {
		name := strings.TrimSuffix(filepath.Base(f), ".spec")
		t.Run(name, func(t *testing.T) {
			spec, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(strings.TrimSuffix(f, ".spec") + ".describe.txt")
			if err != nil {
				t.Fatal(err)
			}
			b, err := buildSpec(t, string(spec))
			if strings.HasPrefix(string(want), "ERROR ") {
				if err == nil {
					t.Fatalf("Java failed (%s) but Go built the topology", strings.TrimSpace(string(want)))
				}
				return
			}
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if got := b.Describe().String(); got != string(want) {
				t.Errorf("describe differs from Java\n--- got\n%s\n--- want (Java)\n%s", got, want)
			}
		})
	}
}
