package kstreams_test

import (
	"context"
	"errors"
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
