package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// UpdateGoldenEnv, when "1", makes TestGoldenDescribeUpToDate and TestGoldenOutputsUpToDate
// rewrite the golden files from Java instead of failing on a difference.
const UpdateGoldenEnv = "KSTREAMS_UPDATE_GOLDEN"

// goldenTopologies lists the reference topologies: the Java Runner's list, checked against the
// golden files present so neither can be missing.
func goldenTopologies(t *testing.T) []string {
	t.Helper()
	j := JavaFromEnv(t)
	names, err := j.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("Runner --list gave no topologies")
	}
	return names
}

func checkGolden(t *testing.T, path string, got []byte, same func(want []byte) bool) {
	t.Helper()
	if os.Getenv(UpdateGoldenEnv) == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with %s=1 go test ./conformance -run TestGolden)", err, UpdateGoldenEnv)
	}
	if !same(want) {
		t.Errorf("%s is out of date with Java (regenerate with %s=1 go test ./conformance -run TestGolden):\n--- golden\n%s\n--- java\n%s",
			path, UpdateGoldenEnv, want, got)
	}
}

// TestGoldenDescribeUpToDate regenerates every topology's describe() text in Java and compares
// it byte for byte with golden/<name>.describe.txt, so the goldens the Go port reads cannot
// drift from Java.
func TestGoldenDescribeUpToDate(t *testing.T) {
	names := goldenTopologies(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			got := DescribeJava(t, name)
			checkGolden(t, filepath.Join("../../conformance/golden", name+".describe.txt"), []byte(got), func(want []byte) bool {
				return bytes.Equal(want, []byte(got))
			})
		})
	}
	files, _ := filepath.Glob(filepath.Join("../../conformance/golden", "*.describe.txt"))
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".describe.txt"); !slices.Contains(names, name) {
			t.Errorf("%s has no Java topology %q", f, name)
		}
	}
}

// TestGoldenOutputsUpToDate runs every topology on vectors/<name>.jsonl in Java and compares
// the records with golden/<name>.out.jsonl, so Go tests can use the golden outputs without a
// JVM and they still cannot drift.
func TestGoldenOutputsUpToDate(t *testing.T) {
	names := goldenTopologies(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			j := JavaFromEnv(t)
			vector, err := filepath.Abs(filepath.Join("../../conformance/vectors", name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			outs, _, err := j.Run(t.Context(), dir, name, vector)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "out.jsonl")) // Java's own bytes
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("../../conformance/golden", name+".out.jsonl"), raw, func(want []byte) bool {
				golden, err := ReadOutputs(bytes.NewReader(want))
				if err != nil {
					t.Errorf("golden: %v", err)
					return false
				}
				if d := DiffOutputs(golden, outs); d != "" {
					t.Log(d)
					return false
				}
				return true
			})
		})
	}
	files, _ := filepath.Glob(filepath.Join("../../conformance/golden", "*.out.jsonl"))
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".out.jsonl"); !slices.Contains(names, name) {
			t.Errorf("%s has no Java topology %q", f, name)
		}
	}
}

// The golden files must parse without Java, as Go conformance tests read them.
func TestGoldenFilesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("../../conformance/golden", "*.out.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden outputs: %v", err)
	}
	for _, f := range files {
		outs, err := ReadOutputsFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(outs) == 0 {
			t.Errorf("%s: empty", f)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".out.jsonl")
		if _, err := os.Stat(filepath.Join("../../conformance/golden", name+".describe.txt")); err != nil {
			t.Errorf("%s: no describe golden: %v", f, err)
		}
		if _, err := os.Stat(filepath.Join("../../conformance/vectors", name+".jsonl")); err != nil {
			t.Errorf("%s: no vector: %v", f, err)
		}
	}
}
