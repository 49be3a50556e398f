package kstreams

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kstreams-go/kstreams/processor"
)

// Every property name of internal/props and of kstream is a known property, so none is ever
// warned about.
func TestPropertyConstantsAreKnown(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	more, _ := filepath.Glob("kstream/*.go")
	names, _ := filepath.Glob("internal/props/*.go")
	more = append(more, names...)
	n := 0
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(node ast.Node) bool {
			vs, ok := node.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 || !strings.HasSuffix(vs.Names[0].Name, "Config") || !vs.Names[0].IsExported() {
				return true
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, _ := strconv.Unquote(lit.Value)
			n++
			if u := UnknownProperties(map[string]string{v: "x"}); len(u) != 0 {
				t.Errorf("%s = %q is warned about as unknown", vs.Names[0].Name, v)
			}
			return true
		})
	}
	if n < 50 {
		t.Fatalf("found only %d property constants", n)
	}
}

// A misspelt property is named in a warning with the property it likely misspells;
// known, prefixed and internal ones are not.
func TestUnknownPropertiesWarned(t *testing.T) {
	props := map[string]string{"application.id": "app", "bootstrap.server": "localhost:9092", "num.stream.thread": "2",
		"consumer.fetch.min.bytes": "1", "topology.optimization": "all", "schema.registry.url": "http://x",
		"my.own.setting": "1", "__emit.interval.ms.kstreams.outer.join.spurious.results.fix__": "0"}
	got := UnknownProperties(props)
	want := [][2]string{{"bootstrap.server", "bootstrap.servers"}, {"my.own.setting", ""}, {"num.stream.thread", "num.stream.threads"}}
	if len(got) != len(want) {
		t.Fatalf("UnknownProperties = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("UnknownProperties = %v, want %v", got, want)
		}
	}
	c, err := ConfigFromProperties(props)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	c.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	c.BootstrapServers = []string{"localhost:1"}
	c.StateDir = t.TempDir()
	app, err := New(processor.NewTopology(), c)
	if err != nil {
		t.Fatal(err)
	}
	_ = app.Close(t.Context())
	const msg = `level=WARN msg="kstreams: unknown configuration property: nothing reads it (it is kept in Properties)" `
	for _, line := range []string{msg + "property=bootstrap.server did_you_mean=bootstrap.servers",
		msg + "property=my.own.setting", msg + "property=num.stream.thread did_you_mean=num.stream.threads"} {
		if !strings.Contains(buf.String(), line+"\n") {
			t.Errorf("log lacks %q:\n%s", line, buf.String())
		}
	}
}

// Run (or Start) on an instance that ran already says what happened and what to do.
func TestRunTwiceMessage(t *testing.T) {
	app, err := New(processor.NewTopology(), Config{ApplicationID: "x", BootstrapServers: []string{"127.0.0.1:1"}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_ = app.Close(t.Context())
	err = app.Run(t.Context())
	const want = "kstreams: illegal state: Run on an instance in state NOT_RUNNING: an instance runs once (Start or Run, " +
		"not both, not twice); to run the topology again make a new instance with kstreams.New"
	if !errors.Is(err, ErrIllegalState) || err.Error() != want {
		t.Fatalf("Run after Close = %v, want %s", err, want)
	}
}

// The state-directory error does not repeat its "kstreams:" prefix.
func TestStateDirErrorMessage(t *testing.T) {
	err := &StateDirError{Path: "/var/lib/app", Err: ErrStateDirLocked}
	const want = "kstreams: state directory /var/lib/app (state.dir): state directory is locked by another instance " +
		"(another Kafka Streams instance, Go or Java, is running on the same state directory)"
	if err.Error() != want || !errors.Is(err, ErrStateDirLocked) {
		t.Fatalf("message\n got %s\nwant %s", err, want)
	}
}
