package kstreams

import (
	"errors"
	"os"
	"path/filepath"
)

// CleanUpStateDir deletes the local state of application applicationID under stateDir (the
// state.dir value; "" means the default, "<os.TempDir()>/kafka-streams"): everything in
// <stateDir>/<applicationID> (task directories with their stores and checkpoints, the global
// stores' directory) except the lock file and kafka-streams-process-metadata, so the next
// instance restores every store from its changelog, or, after an application reset (the
// kstreams-application-reset command), starts from empty stores. The process id is kept, as
// Java keeps it. A missing directory is not an error. It holds the directory's lock while it
// deletes: when a running instance (this library's or Java Kafka Streams') holds the lock, it
// deletes nothing and returns a *StateDirError wrapping ErrStateDirLocked; other errors are
// *StateDirError with the file system's cause. Java: KafkaStreams.cleanUp (which may be called
// only on an instance that is not running; this works on the directory alone, with no
// instance).
func CleanUpStateDir(stateDir, applicationID string) error {
	if applicationID == "" || applicationID == "." || applicationID == ".." || filepath.Base(applicationID) != applicationID {
		return &StateDirError{Path: stateDir, Err: errors.New("kstreams: invalid application id " + applicationID)}
	}
	if stateDir == "" {
		stateDir = Config{}.withDefaults().StateDir
	}
	dir := filepath.Join(stateDir, applicationID)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	lock, err := lockStateDir(dir)
	if err != nil {
		return err
	}
	defer lock.release()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return &StateDirError{Path: dir, Err: err}
	}
	for _, e := range entries {
		if e.Name() == stateDirLockFile || e.Name() == stateDirProcessFile {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return &StateDirError{Path: filepath.Join(dir, e.Name()), Err: err}
		}
	}
	return nil
}
