package integration_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kstreams-go/kstreams"
	"github.com/kstreams-go/kstreams/store"
)

// With persistent stores the process id is kept in the state directory and the directory is
// locked while an instance uses it (Java's StateDirectory); without, every instance gets a new
// random process id and takes no lock.
func TestStateDirProcessIDAndLock(t *testing.T) {
	dir := t.TempDir()
	cfg := kstreams.Config{ApplicationID: "lock-app", BootstrapServers: []string{"127.0.0.1:1"}, StateDir: dir}
	persistent := func() *kstreams.KafkaStreams {
		t.Helper()
		app, err := kstreams.New(wordCountTopologyWith(t, "in", "out", store.Stores.PersistentKeyValueStore("Counts")), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return app
	}
	a := persistent()
	_, err := kstreams.New(wordCountTopologyWith(t, "in", "out", store.Stores.PersistentKeyValueStore("Counts")), cfg)
	var sde *kstreams.StateDirError
	if !errors.Is(err, kstreams.ErrStateDirLocked) || !errors.As(err, &sde) {
		t.Fatalf("second instance on a locked state directory: %v, want ErrStateDirLocked in a *StateDirError", err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := persistent()
	if b.ProcessID() != a.ProcessID() {
		t.Errorf("process id after a restart on the same state directory: %s, want %s", b.ProcessID(), a.ProcessID())
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// In-memory stores only: no lock, a new process id each time.
	m1, err := kstreams.New(wordCountTopology(t, "in", "out"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := kstreams.New(wordCountTopology(t, "in", "out"), cfg)
	if err != nil {
		t.Fatalf("second in-memory instance: %v", err)
	}
	if m1.ProcessID() == m2.ProcessID() || m1.ProcessID() == a.ProcessID() {
		t.Errorf("in-memory process ids %s, %s (persistent %s): want new random ids", m1.ProcessID(), m2.ProcessID(), a.ProcessID())
	}
	m1.Close(context.Background())
	m2.Close(context.Background())
}

// The process id is kept in Java's kafka-streams-process-metadata format: a file Java wrote
// ({"processId":...}, unknown fields ignored) gives its id; a file without a valid UUID is
// replaced by a new id, written as Java writes it.
func TestStateDirProcessFileJavaFormat(t *testing.T) {
	dir := t.TempDir()
	cfg := kstreams.Config{ApplicationID: "pid-app", BootstrapServers: []string{"127.0.0.1:1"}, StateDir: dir}
	file := filepath.Join(dir, "pid-app", "kafka-streams-process-metadata")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	open := func() string {
		t.Helper()
		app, err := kstreams.New(wordCountTopologyWith(t, "in", "out", store.Stores.PersistentKeyValueStore("Counts")), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer app.Close(context.Background())
		return app.ProcessID()
	}
	const javaID = "0c1f6a3e-9b7d-4e2a-8f10-5d6c7b8a9e01"
	if err := os.WriteFile(file, []byte(`{"processId":"0C1F6A3E-9B7D-4E2A-8F10-5D6C7B8A9E01","futureField":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := open(); got != javaID {
		t.Errorf("process id from Java's file: %s, want %s", got, javaID)
	}
	for _, bad := range []string{`{"processId":"not-a-uuid"}`, `{"processId":null}`, `garbage`, ``} {
		if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		id := open()
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"processId":"` + id + `"}`; string(b) != want {
			t.Errorf("after %q: file %s, want %s", bad, b, want)
		}
		if len(id) != 36 || id == javaID {
			t.Errorf("after %q: process id %q, want a new UUID", bad, id)
		}
	}
}

// CleanUpStateDir deletes the tasks' and global stores' directories but keeps the lock and
// the process id; it is refused while an instance holds the directory, and a missing
// directory is no error.
func TestCleanUpStateDir(t *testing.T) {
	dir := t.TempDir()
	cfg := kstreams.Config{ApplicationID: "clean-app", BootstrapServers: []string{"127.0.0.1:1"}, StateDir: dir}
	a, err := kstreams.New(wordCountTopologyWith(t, "in", "out", store.Stores.PersistentKeyValueStore("Counts")), cfg)
	if err != nil {
		t.Fatal(err)
	}
	appDir := filepath.Join(dir, "clean-app")
	if err := os.MkdirAll(filepath.Join(appDir, "0_0", "pebble"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(appDir, "global"), 0o755)
	err = kstreams.CleanUpStateDir(dir, "clean-app")
	var sde *kstreams.StateDirError
	if !errors.Is(err, kstreams.ErrStateDirLocked) || !errors.As(err, &sde) || sde.Path != appDir {
		t.Fatalf("clean up while an instance holds the directory: %v, want ErrStateDirLocked naming %s", err, appDir)
	}
	if _, err := os.Stat(filepath.Join(appDir, "0_0")); err != nil {
		t.Fatalf("a refused clean up deleted state: %v", err)
	}
	a.Close(context.Background())
	if err := kstreams.CleanUpStateDir(dir, "clean-app"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(appDir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != ".lock" || names[1] != "kafka-streams-process-metadata" {
		t.Errorf("left after clean up: %v, want the lock and process files", names)
	}
	b, err := kstreams.New(wordCountTopologyWith(t, "in", "out", store.Stores.PersistentKeyValueStore("Counts")), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b.ProcessID() != a.ProcessID() {
		t.Errorf("process id after clean up %s, want %s (kept)", b.ProcessID(), a.ProcessID())
	}
	b.Close(context.Background())
	if err := kstreams.CleanUpStateDir(dir, "no-such-app"); err != nil {
		t.Errorf("missing directory: %v", err)
	}
	if err := kstreams.CleanUpStateDir(dir, "../x"); err == nil {
		t.Errorf("application id ../x: no error")
	}
}
