package topology

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
		case "readonly":
			err = b.AddReadOnlyStore(&fakeStore{name: p[1], logging: true}, p[2], nil, nil, nil, p[3], p[4], fakeSupplier{})
		case "internal":
			var props InternalTopicProperties
			if len(p) > 2 {
				n, _ := strconv.Atoi(p[2])
				props.NumberOfPartitions = int32(n)
			}
			b.AddInternalTopic(p[1], props)
		case "copartition":
			b.CopartitionSources(list(p[1])...)
		case "global", "globallog":
			err = b.AddGlobalStore(&fakeStore{name: p[1], logging: p[0] == "globallog"}, p[2], nil, nil, nil, p[3], p[4], fakeSupplier{}, true)
		default:
			t.Fatalf("bad spec line %q", line)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// errSpecKinds maps each err-*.spec that Java refuses to the sentinel Go must return.
var errSpecKinds = map[string]error{
	"err-no-topics":                 ErrNoTopics,
	"err-dup-name":                  ErrDuplicateName,
	"err-dup-name-sink":             ErrDuplicateName,
	"err-global-dup-source-name":    ErrDuplicateName,
	"err-topic-twice":               ErrTopicAlreadyRegistered,
	"err-topic-twice-same-source":   ErrTopicAlreadyRegistered,
	"err-pattern-matches-topic":     ErrTopicAlreadyRegistered,
	"err-topic-matches-pattern":     ErrTopicAlreadyRegistered,
	"err-global-topic-registered":   ErrTopicAlreadyRegistered,
	"err-topic-is-global":           ErrTopicAlreadyRegistered,
	"err-processor-no-parent":       ErrNoParent,
	"err-sink-no-parent":            ErrNoParent,
	"err-self-parent":               ErrSelfParent,
	"err-unknown-parent":            ErrUnknownParent,
	"err-unknown-parent-sink":       ErrUnknownParent,
	"err-sink-parent-of-sink":       ErrSinkAsParent,
	"err-sink-parent-of-processor":  ErrSinkAsParent,
	"err-store-twice":               ErrDuplicateStore,
	"err-global-dup-store":          ErrDuplicateStore,
	"err-global-store-then-store":   ErrDuplicateStore,
	"err-connect-unknown-store":     ErrUnknownStore,
	"err-connect-unknown-processor": ErrUnknownProcessor,
	"err-store-unknown-processor":   ErrUnknownProcessor,
	"err-connect-global":            ErrGlobalStoreConnected,
	"err-store-on-source":           ErrStoreOnSourceOrSink,
	"err-store-on-sink":             ErrStoreOnSourceOrSink,
	"err-global-same-names":         ErrSameSourceAndProcessorName,
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
				if !errors.Is(err, ErrInvalidTopology) {
					t.Fatalf("error %v does not wrap ErrInvalidTopology", err)
				}
				if kind, ok := errSpecKinds[name]; ok && !errors.Is(err, kind) {
					t.Fatalf("error %v does not wrap %v (Java: %s)", err, kind, strings.TrimSpace(string(want)))
				} else if !ok && strings.HasPrefix(name, "err-") {
					t.Fatalf("no expected sentinel for %s", name)
				}
				return
			}
			if strings.HasPrefix(name, "err-") {
				if _, ok := errSpecKinds[name]; ok {
					t.Fatalf("Java accepted %s, but the test expects an error", name)
				}
			}
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if got := b.Describe().String(); got != string(want) {
				t.Errorf("describe differs from Java\n--- got\n%s\n--- want (Java)\n%s", got, want)
			}
			if strings.HasSuffix(f, ".topics.spec") {
				want, err := os.ReadFile(strings.TrimSuffix(f, ".spec") + ".txt")
				if err != nil {
					t.Fatal(err)
				}
				if got := formatTopics(b, "app"); got != string(want) {
					t.Errorf("topic groups differ from Java\n--- got\n%s\n--- want (Java)\n%s", got, want)
				}
			}
		})
	}
}

// formatTopics prints TopicGroups and CopartitionGroups in the format DescribeSpec.java writes
// for Java's subtopologyToTopicsInfo() and copartitionGroups().
func formatTopics(b *Builder, app string) string {
	var sb strings.Builder
	set := func(xs []string) string { return "[" + strings.Join(xs, ", ") + "]" }
	for _, g := range b.TopicGroups(app) {
		fmt.Fprintf(&sb, "subtopology %d\n source: %s\n sink: %s\n", g.Subtopology, set(g.SourceTopics), set(g.SinkTopics))
		var rep []string
		for _, k := range sortedKeys(keysOf(g.RepartitionSourceTopics)) {
			rep = append(rep, fmt.Sprintf("%s=%d", k, g.RepartitionSourceTopics[k].NumberOfPartitions))
		}
		fmt.Fprintf(&sb, " repartition: {%s}\n", strings.Join(rep, ", "))
		fmt.Fprintf(&sb, " changelog: %s\n", set(sortedKeys(keysOf(g.ChangelogTopics))))
	}
	var groups []string
	for _, g := range b.CopartitionGroups(app) {
		groups = append(groups, set(g))
	}
	slices.Sort(groups)
	fmt.Fprintf(&sb, "copartition: %s\n", set(groups))
	return sb.String()
}

func keysOf[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}
