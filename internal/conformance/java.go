package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ClasspathEnv is the environment variable holding the Java classpath of the harness, e.g.
// "$PWD/conformance/java/target/conformance.jar:$PWD/conformance/java/target/lib/*" (the
// Makefile sets it for `make test`). Without it, RunJava and DescribeJava skip the test.
const ClasspathEnv = "KSTREAMS_CONFORMANCE_CP"

// DroppedRecordsTopic is the pseudo topic on which the Runner reports the driver's
// dropped-records total (a long value, no key, timestamp 0) after each step that changed it,
// after that step's records, for topologies that ask for it (conformance/README.md).
const DroppedRecordsTopic = "dropped-records"

// RunnerClass is the Java main class of the harness.
const RunnerClass = "io.kstreams.conformance.Runner"

// ErrJava reports that the Java Runner failed (non-zero exit); the message carries its stderr.
var ErrJava = errors.New("conformance: java runner failed")

// JavaRunner runs the Java reference harness as a child process: by default in one of a few
// long-lived Runner JVMs shared by the whole test process (see ServersEnv), else, or when no
// server can answer, in a JVM of its own per call. Both give the same outputs. Safe for
// concurrent use.
type JavaRunner struct {
	// Classpath is the java -cp argument (see ClasspathEnv). Required.
	Classpath string
	// Java is the java executable; "" means $JAVA_HOME/bin/java if JAVA_HOME is set, else
	// "java" from PATH.
	Java string
}

func (j JavaRunner) java() string {
	if j.Java != "" {
		return j.Java
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		return filepath.Join(home, "bin", "java")
	}
	return "java"
}

// jvmFlags start each Runner of its own with the client compiler only and the serial collector: a run
// lasts a few seconds, in which C2 compilation and G1's threads cost about a third of its CPU
// time without making it faster (the suite starts hundreds of them).
var jvmFlags = []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"}

// serve runs the Runner with args in a server of the pool and returns what it printed. ok is
// false when the pool is off (ServersEnv "0") or no server could answer: the caller then runs
// a JVM of its own, which also gives the error a run of its own would give.
func (j JavaRunner) serve(ctx context.Context, args []string) (out string, ok bool, err error) {
	p := poolFor(j.java(), j.Classpath)
	if p == nil {
		return "", false, nil
	}
	status, out, err := p.call(ctx, args)
	switch {
	case err == nil && status == 0:
		return out, true, nil
	case err == nil:
		return "", true, fmt.Errorf("%w: %s %s: exit status %d\n%s", ErrJava, RunnerClass, strings.Join(args, " "), status, out)
	case ctx.Err() != nil:
		return "", true, fmt.Errorf("%w: %s %s: %v", ErrJava, RunnerClass, strings.Join(args, " "), ctx.Err())
	}
	return "", false, nil
}

func (j JavaRunner) exec(ctx context.Context, args ...string) error {
	if j.Classpath == "" {
		return fmt.Errorf("%w: no classpath", ErrJava)
	}
	if _, ok, err := j.serve(ctx, args); ok {
		return err
	}
	cmd := exec.CommandContext(ctx, j.java(), append(append(jvmFlags[:len(jvmFlags):len(jvmFlags)], "-cp", j.Classpath, RunnerClass), args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s %s: %v\n%s", ErrJava, RunnerClass, strings.Join(args, " "), err, stderr.String())
	}
	return nil
}

func configArgs(configs []string) []string {
	var args []string
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	return args
}

// Run runs the named reference topology on the vector at inputPath in Java's
// TopologyTestDriver and returns every record it produced and the topology's
// describe().toString() text. configs are "key=value" Streams properties
// (e.g. "statestore.cache.max.bytes=0") overriding the topology's defaults. workDir receives
// the output files (out.jsonl, describe.txt). Errors: ErrJava (with stderr), or a *LineError
// if the output cannot be read.
func (j JavaRunner) Run(ctx context.Context, workDir, topology, inputPath string, configs ...string) ([]OutputRecord, string, error) {
	outPath := filepath.Join(workDir, "out.jsonl")
	descPath := filepath.Join(workDir, "describe.txt")
	args := append([]string{"--topology", topology, "--input", inputPath, "--output", outPath, "--describe", descPath},
		configArgs(configs)...)
	if err := j.exec(ctx, args...); err != nil {
		return nil, "", err
	}
	outs, err := ReadOutputsFile(outPath)
	if err != nil {
		return nil, "", err
	}
	desc, err := os.ReadFile(descPath)
	if err != nil {
		return nil, "", fmt.Errorf("conformance: %w", err)
	}
	return outs, string(desc), nil
}

// Describe returns the named topology's describe().toString() text without running it
// (Runner --describe-only). workDir receives describe.txt. Errors: ErrJava.
func (j JavaRunner) Describe(ctx context.Context, workDir, topology string, configs ...string) (string, error) {
	descPath := filepath.Join(workDir, "describe.txt")
	args := append([]string{"--topology", topology, "--describe-only", "--describe", descPath}, configArgs(configs)...)
	if err := j.exec(ctx, args...); err != nil {
		return "", err
	}
	desc, err := os.ReadFile(descPath)
	if err != nil {
		return "", fmt.Errorf("conformance: %w", err)
	}
	return string(desc), nil
}

// List returns the names of the Java reference topologies (Runner --list), sorted.
// Errors: ErrJava.
func (j JavaRunner) List(ctx context.Context) ([]string, error) {
	if j.Classpath == "" {
		return nil, fmt.Errorf("%w: no classpath", ErrJava)
	}
	if out, ok, err := j.serve(ctx, []string{"--list"}); ok {
		if err != nil {
			return nil, err
		}
		return strings.Fields(out), nil
	}
	cmd := exec.CommandContext(ctx, j.java(), append(jvmFlags[:len(jvmFlags):len(jvmFlags)], "-cp", j.Classpath, RunnerClass, "--list")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s --list: %v\n%s", ErrJava, RunnerClass, err, stderr.String())
	}
	return strings.Fields(string(out)), nil
}

// JavaFromEnv returns a JavaRunner using the classpath in ClasspathEnv, or skips t with a
// message saying how to get one.
func JavaFromEnv(t testing.TB) JavaRunner {
	t.Helper()
	cp := os.Getenv(ClasspathEnv)
	if cp == "" {
		t.Skip("Java conformance harness not available: set " + ClasspathEnv +
			" to its classpath after `mvn -B -q -f conformance/java/pom.xml package`" +
			" (\"$PWD/conformance/java/target/conformance.jar:$PWD/conformance/java/target/lib/*\"), or run make test")
	}
	return JavaRunner{Classpath: cp}
}

// RunJava runs the named reference topology in Java on the vector at inputPath (see
// JavaRunner.Run) and returns its output records and describe text. It skips t when
// ClasspathEnv is unset and fails t if the Runner fails.
func RunJava(t testing.TB, topology, inputPath string, configs ...string) ([]OutputRecord, string) {
	t.Helper()
	j := JavaFromEnv(t)
	abs, err := filepath.Abs(inputPath)
	if err != nil {
		t.Fatalf("conformance: %v", err)
	}
	outs, desc, err := j.Run(t.Context(), t.TempDir(), topology, abs, configs...)
	if err != nil {
		t.Fatal(err)
	}
	return outs, desc
}

// DescribeJava returns the named topology's describe().toString() text from Java (see
// JavaRunner.Describe). It skips t when ClasspathEnv is unset and fails t if the Runner fails.
func DescribeJava(t testing.TB, topology string, configs ...string) string {
	t.Helper()
	j := JavaFromEnv(t)
	desc, err := j.Describe(t.Context(), t.TempDir(), topology, configs...)
	if err != nil {
		t.Fatal(err)
	}
	return desc
}
