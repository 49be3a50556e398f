package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// freshPool gives j's calls a new pool of size servers until the end of t (not for parallel
// tests: the pools are the process's).
func freshPool(t *testing.T, j JavaRunner, size int) *serverPool {
	k := serverKey{j.java(), j.Classpath}
	p := newServerPool(k, size)
	poolsMu.Lock()
	old, had := pools[k]
	pools[k] = p
	poolsMu.Unlock()
	t.Cleanup(func() {
		poolsMu.Lock()
		defer poolsMu.Unlock()
		if had {
			pools[k] = old
		} else {
			delete(pools, k)
		}
	})
	return p
}

// javaFiles runs topology on its vector (or only describes it, when vector is false) with j and
// returns the bytes of the files the Runner wrote: out.jsonl ("" when only described) and
// describe.txt.
func javaFiles(t *testing.T, j JavaRunner, topology string, vector bool, configs ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if !vector {
		desc, err := j.Describe(t.Context(), dir, topology, configs...)
		if err != nil {
			t.Fatal(err)
		}
		return "", desc
	}
	in, err := filepath.Abs(filepath.Join("../../conformance/vectors", topology+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Run(t.Context(), dir, topology, in, configs...); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := os.ReadFile(filepath.Join(dir, "describe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(out), string(desc)
}

// A server gives the bytes a JVM of its own gives, also for runs after other runs in the same
// server: each topology below runs twice in one server (dsl-partitioner-drop reports the
// dropped-records total, which a run must count from zero; the cache topologies flush on a
// wall-clock punctuation, which must start from the driver's time 0), and List, Describe and a
// run with --config overrides agree too.
func TestJavaServerMatchesOwnJVM(t *testing.T) {
	j := JavaFromEnv(t)
	type run struct {
		topology string
		vector   bool
		configs  []string
	}
	runs := []run{
		{"dsl-partitioner-drop", true, nil},
		{"wordcount", true, nil},
		{"papi-cache", true, nil},
		{"papi-multi", true, nil},
		{"win-suppress-log", true, nil},
		{"dsl-cache", true, []string{"statestore.cache.max.bytes=0"}},
		{"dsl-cache", false, []string{"topology.optimization=all"}},
	}
	t.Setenv(ServersEnv, "0")
	wantNames, err := j.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type files struct{ out, desc string }
	want := make([]files, len(runs))
	for i, r := range runs {
		want[i].out, want[i].desc = javaFiles(t, j, r.topology, r.vector, r.configs...)
	}

	t.Setenv(ServersEnv, "1")
	p := freshPool(t, j, 1)
	for round := range 2 {
		for i, r := range runs {
			out, desc := javaFiles(t, j, r.topology, r.vector, r.configs...)
			if out != want[i].out {
				t.Errorf("round %d, %s %v: out.jsonl differs from a JVM of its own:\n--- own JVM\n%s--- server\n%s", round, r.topology, r.configs, want[i].out, out)
			}
			if desc != want[i].desc {
				t.Errorf("round %d, %s %v: describe.txt differs from a JVM of its own:\n--- own JVM\n%s\n--- server\n%s", round, r.topology, r.configs, want[i].desc, desc)
			}
		}
	}
	names, err := j.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, " ") != strings.Join(wantNames, " ") {
		t.Errorf("List through a server = %v, want %v", names, wantNames)
	}
	if p.started.Load() != 1 || p.broken.Load() {
		t.Errorf("the pool started %d servers (broken %v), want 1", p.started.Load(), p.broken.Load())
	}
}

// Failed runs answer with ErrJava and the text a JVM of its own prints, and leave the server
// serving: a usage error (exit status 2), a failure while running (status 1), then a good run,
// all on the one server.
func TestJavaServerFailuresKeepServing(t *testing.T) {
	j := JavaFromEnv(t)
	p := newServerPool(serverKey{j.java(), j.Classpath}, 1)
	status, out, err := p.call(t.Context(), []string{"--topology", "no-such-topology", "--describe-only", "--describe", filepath.Join(t.TempDir(), "d.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if status != 2 || !strings.Contains(out, `unknown topology "no-such-topology"`) || !strings.Contains(out, "usage: Runner") {
		t.Errorf("unknown topology: status %d, output:\n%s", status, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"topic\": \"streams-plaintext-input\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, err = p.call(t.Context(), []string{"--topology", "pipe", "--input", bad, "--output", filepath.Join(t.TempDir(), "o.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if status != 1 || !strings.Contains(out, `record needs "timestamp" (integer ms)`) {
		t.Errorf("bad vector: status %d, output:\n%s", status, out)
	}
	dir := t.TempDir()
	in, _ := filepath.Abs("../../conformance/vectors/pipe.jsonl")
	status, out, err = p.call(t.Context(), []string{"--topology", "pipe", "--input", in, "--output", filepath.Join(dir, "out.jsonl")})
	if err != nil || status != 0 || out != "" {
		t.Fatalf("good run after failures: status %d, %v, output:\n%s", status, err, out)
	}
	outs, err := ReadOutputsFile(filepath.Join(dir, "out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := ReadOutputsFile("../../conformance/golden/pipe.out.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffOutputs(golden, outs); d != "" {
		t.Errorf("pipe after failures differs from the golden output:\n%s", d)
	}
	if n := p.started.Load(); n != 1 {
		t.Errorf("started %d servers, want 1", n)
	}

	// Through JavaRunner the same failure is ErrJava with Java's message.
	_, err = j.Describe(t.Context(), t.TempDir(), "no-such-topology")
	if !errors.Is(err, ErrJava) || !strings.Contains(err.Error(), `unknown topology "no-such-topology"`) {
		t.Errorf("Describe(no-such-topology) = %v, want ErrJava with Java's message", err)
	}
}

// When its server dies, a call fails with errServerGone (JavaRunner then runs a JVM of its
// own), and the next call starts a new server.
func TestJavaServerDeathStartsAnother(t *testing.T) {
	j := JavaFromEnv(t)
	p := newServerPool(serverKey{j.java(), j.Classpath}, 1)
	list := []string{"--list"}
	if status, _, err := p.call(t.Context(), list); err != nil || status != 0 {
		t.Fatalf("--list: status %d, %v", status, err)
	}
	p.mu.Lock()
	s := p.idle[0]
	p.mu.Unlock()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.call(t.Context(), list); !errors.Is(err, errServerGone) {
		t.Fatalf("call on a killed server: %v, want errServerGone", err)
	}
	status, out, err := p.call(t.Context(), list)
	if err != nil || status != 0 || !strings.Contains(out, "wordcount\n") {
		t.Fatalf("call after the death: status %d, %v, output:\n%s", status, err, out)
	}
	if n, broken := p.started.Load(), p.broken.Load(); n != 2 || broken {
		t.Errorf("started %d servers (broken %v), want 2 and not broken", n, broken)
	}

	// A server that cannot start its Runner (bad classpath) turns the pool off.
	bad := newServerPool(serverKey{j.java(), filepath.Join(t.TempDir(), "none.jar")}, 1)
	bad.logf = t.Logf
	if _, _, err := bad.call(t.Context(), list); !errors.Is(err, errServerGone) {
		t.Fatalf("bad classpath: %v, want errServerGone", err)
	}
	if !bad.broken.Load() {
		t.Error("a server that died before its first answer left the pool on")
	}
}

// Parallel callers share a pool of two servers: every run gives the golden output, and no more
// than two servers start. Run under -race (make test does, for this package).
func TestJavaServerParallel(t *testing.T) {
	j := JavaFromEnv(t)
	p := newServerPool(serverKey{j.java(), j.Classpath}, 2)
	topologies := []string{"pipe", "wordcount", "dsl-count", "dsl-partitioner-drop", "papi-cache", "win-tumbling", "join-ss-inner", "tt-left"}
	t.Run("group", func(t *testing.T) {
		for round := range 2 {
			for _, name := range topologies {
				t.Run(fmt.Sprintf("%s-%d", name, round), func(t *testing.T) {
					t.Parallel()
					in, _ := filepath.Abs(filepath.Join("../../conformance/vectors", name+".jsonl"))
					dir := t.TempDir()
					status, out, err := p.call(t.Context(), []string{"--topology", name, "--input", in, "--output", filepath.Join(dir, "out.jsonl")})
					if err != nil || status != 0 {
						t.Fatalf("status %d, %v\n%s", status, err, out)
					}
					got, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
					if err != nil {
						t.Fatal(err)
					}
					outs, err := ReadOutputs(bytes.NewReader(got))
					if err != nil {
						t.Fatal(err)
					}
					want, err := ReadOutputsFile(filepath.Join("../../conformance/golden", name+".out.jsonl"))
					if err != nil {
						t.Fatal(err)
					}
					if d := DiffOutputs(want, outs); d != "" {
						t.Errorf("%s differs from the golden output:\n%s", name, d)
					}
				})
			}
		}
	})
	if n := p.started.Load(); n < 1 || n > 2 {
		t.Errorf("started %d servers, want 1 or 2", n)
	}
}
