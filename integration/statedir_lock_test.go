//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package integration_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/store"
)

// lockHelperEnv makes the test binary, run as a child process, take or probe the lock Java's
// FileChannel.tryLock takes: a classic process-associated fcntl write lock (F_SETLK) on the
// whole file named by the variable's value.
const lockHelperEnv = "KSTREAMS_TEST_JAVA_STYLE_LOCK"

// TestStateDirLockHelper is not a test: run as a child process with lockHelperEnv=hold:<file>
// it locks <file> as Java does, prints "locked" and holds the lock until its standard input
// closes; with probe:<file> it tries the same lock once and prints "free" or "held".
func TestStateDirLockHelper(t *testing.T) {
	v := os.Getenv(lockHelperEnv)
	if v == "" {
		t.Skip("helper process only")
	}
	mode, file, _ := strings.Cut(v, ":")
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
	switch {
	case mode == "probe" && err == nil:
		fmt.Println("free")
	case mode == "probe" && (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES)):
		fmt.Println("held")
	case mode == "hold" && err == nil:
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, os.Stdin)
	default:
		fmt.Println("error", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// javaStyleLock runs the helper in mode on file and returns its first output line; for
// "hold" the child keeps the lock until the returned stop function is called.
func javaStyleLock(t *testing.T, mode, file string) (string, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStateDirLockHelper$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+mode+":"+file)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	stop := func() {
		stdin.Close()
		_ = cmd.Wait()
	}
	if mode != "hold" {
		stop()
	}
	return strings.TrimSpace(line), stop
}

// A state directory locked the way Java locks it (by another process) makes New fail with
// ErrStateDirLocked naming the directory; a state directory we hold is seen as locked by a
// Java-style lock attempt of another process, and free again after Close.
func TestStateDirLockConflictsWithJavaStyleLock(t *testing.T) {
	dir := t.TempDir()
	appDir := filepath.Join(dir, "lock-app")
	if err := os.MkdirAll(appDir, 0o755); err != nil {
		t.Fatal(err)
	}
	lockFile := filepath.Join(appDir, ".lock")
	cfg := kstreams.Config{ApplicationID: "lock-app", BootstrapServers: []string{"127.0.0.1:1"}, StateDir: dir}
	topo := func() *kstreams.KafkaStreams {
		t.Helper()
		app, err := kstreams.New(wordCountTopologyWith(t, "in", "out", store.Stores.PersistentKeyValueStore("Counts")), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return app
	}

	line, stop := javaStyleLock(t, "hold", lockFile)
	if line != "locked" {
		stop()
		t.Fatalf("helper: %q", line)
	}
	_, err := kstreams.New(wordCountTopologyWith(t, "in", "out", store.Stores.PersistentKeyValueStore("Counts")), cfg)
	var sde *kstreams.StateDirError
	if !errors.Is(err, kstreams.ErrStateDirLocked) || !errors.As(err, &sde) || sde.Path != appDir ||
		!strings.Contains(err.Error(), appDir) {
		stop()
		t.Fatalf("New on a directory another process locked as Java does: %v, want ErrStateDirLocked in a *StateDirError naming %s", err, appDir)
	}
	stop()
	a := topo()
	if got, _ := javaStyleLock(t, "probe", lockFile); got != "held" {
		t.Errorf("a Java-style lock attempt while we hold the state directory: %q, want held", got)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := javaStyleLock(t, "probe", lockFile); got != "free" {
		t.Errorf("a Java-style lock attempt after Close: %q, want free", got)
	}
}
