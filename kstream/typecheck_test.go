package kstream_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// compileErrors builds src as a main package inside this module (through an overlay: nothing
// is written to the source tree) and returns the compiler's output; the build must fail.
func compileErrors(t *testing.T, src string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(wd, "zz_typecheck_"+strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_")))
	overlay := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlay, []byte(`{"Replace":{`+quote(filepath.Join(pkg, "main.go"))+`:`+quote(file)+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", overlay, "-gcflags=-e", "-o", os.DevNull, pkg)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the program compiled; it must not:\n%s", src)
	}
	return string(out)
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// The options of table operators are typed by the result's key and value types, so a
// Materialized (or a name option) of other types is a compile-time error, not a Build error.
func TestTableOptionsAreTypeChecked(t *testing.T) {
	out := compileErrors(t, `package main

import (
	"time"

	"github.com/kstreams-go/kstreams/kstream"
	"github.com/kstreams-go/kstreams/serde"
)

func main() {
	b := kstream.NewStreamsBuilder()
	g := kstream.Stream(b, "in", kstream.ConsumedWith(serde.String(), serde.String())).GroupByKey()
	g.Count(kstream.MaterializedAs[string, string]("a"))
	g.Reduce(func(a, v string) string { return a + v }, kstream.MaterializedAs[string, int64]("b"))
	g.Aggregate(func() int64 { return 0 }, func(string, string, int64) int64 { return 1 }, kstream.MaterializedAs[string, float64]("c"))
	g.Count(kstream.NamedAs("d"))
	kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).Count(kstream.MaterializedAs[string, string]("e"))
	kstream.WindowedBy(g, kstream.TimeWindowsOfSizeWithNoGrace(time.Minute)).LateRecordsToWith("late", serde.String(), serde.Long())
	t := kstream.Table(b, "t", kstream.ConsumedWith(serde.String(), serde.Long()))
	t.Join(t, func(a, b int64) int64 { return a + b }, kstream.MaterializedAs[string, string]("f"))
	t.Filter(func(string, int64) bool { return true }, kstream.TableNamedAs[string, string]("g"))
	t.LeftJoinFK(t, func(int64) string { return "" }, func(a, b int64) int64 { return a }, kstream.NamedAs("h"))
}
`)
	for line, want := range map[int]string{
		13: `kstream.Materialized[string, string] does not implement kstream.TableOption[string, int64]`,
		14: `kstream.Materialized[string, int64] does not implement kstream.TableOption[string, string]`,
		15: `type kstream.Materialized[string, float64] of kstream.MaterializedAs[string, float64]("c") does not match inferred type kstream.TableOption[string, int64]`,
		16: `kstream.Named does not implement kstream.TableOption[string, int64] (missing method applyTable)`,
		17: `kstream.Materialized[string, string] does not implement kstream.TableOption[string, int64]`,
		18: `cannot use serde.Long() (value of interface type serde.Serde[int64]) as serde.Serde[string] value`,
		20: `type kstream.Materialized[string, string] of kstream.MaterializedAs[string, string]("f") does not match inferred type kstream.TableOption[string, int64]`,
		21: `kstream.TableNamed[string, string] does not implement kstream.TableOption[string, int64]`,
		22: `kstream.Named does not implement kstream.FKJoinOption (missing method fkJoinOption)`,
	} {
		found := false
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "main.go:"+strconv.Itoa(line)+":") && strings.Contains(l, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("no error on line %d saying %q:\n%s", line, want, out)
		}
	}
	if n := strings.Count(out, "main.go:"); n != 9 {
		t.Errorf("%d errors, want 9 (one per misuse):\n%s", n, out)
	}
}
