package apisurface

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxExported is the most identifiers the public packages may export together (generated mocks
// not counted). It only goes down: lower it whenever machinery leaves the public packages (the
// aim is 1 200), and raise it only for a name users write against.
const maxExported = 1344

// TestPublicSurface keeps the exported API small: every exported name is a promise to users.
// Run with -v to see the count per package; KSTREAMS_API_LIST=<dir> lists one package's names.
func TestPublicSurface(t *testing.T) {
	counts, err := Walk(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	var lines []string
	for _, c := range counts {
		total += len(c.Names)
		lines = append(lines, fmt.Sprintf("%5d %s", len(c.Names), c.Dir))
		if c.Dir == os.Getenv("KSTREAMS_API_LIST") {
			for _, n := range c.Names {
				t.Log(n)
			}
		}
	}
	t.Logf("exported identifiers per public package:\n%s\n%5d in all (limit %d)", strings.Join(lines, "\n"), total, maxExported)
	if total > maxExported {
		t.Errorf("the public packages export %d identifiers, more than %d: keep machinery in internal/", total, maxExported)
	}
}

// TestExamplesUsePublicPackages: the examples (not their tests) compile against the public
// packages only, as a user's program does.
func TestExamplesUsePublicPackages(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example sources found (%v)", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/kstreams-go/kstreams") && (strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")) {
				t.Errorf("%s imports %s, an internal package", f, path)
			}
		}
	}
}
