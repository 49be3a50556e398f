package kstreams

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The application's state directory <state.dir>/<application.id> is laid out as Java's
// StateDirectory lays it out, so that a Go and a Java instance can take turns on it:
//
//	.lock                            locked (fcntl record lock, whole file) while an instance runs
//	kafka-streams-process-metadata   {"processId":"<uuid>"}: the process id across restarts
//	<subtopology>_<partition>/       one directory per task
//
// Java locks .lock with FileChannel.tryLock, an fcntl write lock on Linux and the other Unix
// systems; we take the same kind of lock on the same file (on Linux an open-file-description
// lock, which conflicts with Java's), so whichever side starts second refuses to start.

// Names of the files in <state.dir>/<application.id>. Java: StateDirectory.LOCK_FILE_NAME and
// PROCESS_FILE_NAME.
const (
	stateDirLockFile    = ".lock"
	stateDirProcessFile = "kafka-streams-process-metadata"
)

// processMetadata is Java's kafka-streams-process-metadata file (StateDirectory): the process
// id survives restarts, so an instance restarted on the same state directory (by Go or by Java)
// keeps its transactional ids and fences (aborts) the transactions its previous run left open.
// Java writes only processId and ignores fields it does not know.
type processMetadata struct {
	ProcessID string `json:"processId"`
}

// ErrStateDirLocked is returned by New when another instance (of this or another process, Go
// or Java Kafka Streams) holds the application's state directory <state.dir>/<application.id>:
// two instances on one state directory would share their process id, hence their
// transactional ids, and fence each other. It comes wrapped in a *StateDirError naming the
// directory. Java: StreamsException "Unable to initialize state, this can happen if multiple
// instances of Kafka Streams are running in the same state directory".
var ErrStateDirLocked = errors.New("kstreams: state directory is locked by another instance " +
	"(another Kafka Streams instance, Go or Java, is running on the same state directory)")

// stateDirLock is the lock an instance holds on <state.dir>/<application.id>/.lock.
type stateDirLock struct {
	f    *os.File
	path string // absolute path of the lock file, the key in heldLocks
}

// heldLocks are the lock files this process holds, by absolute path. The operating system's
// lock alone does not stop a second instance of the same process everywhere: POSIX record
// locks belong to the process (two locks of one process never conflict), so without this set
// two instances in one Go process could share a directory on systems without
// open-file-description locks. Java keeps the same kind of in-process check
// (OverlappingFileLockException).
var heldLocks = struct {
	sync.Mutex
	paths map[string]bool
}{paths: map[string]bool{}}

// lockStateDir creates dir (0755, parents included) and locks dir/.lock without waiting.
// Errors: *StateDirError wrapping ErrStateDirLocked when another instance holds it, or the
// file system error.
func lockStateDir(dir string) (*stateDirLock, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &StateDirError{Path: dir, Err: err}
	}
	path := filepath.Join(dir, stateDirLockFile)
	heldLocks.Lock()
	defer heldLocks.Unlock()
	if heldLocks.paths[path] {
		return nil, &StateDirError{Path: dir, Err: ErrStateDirLocked}
	}
	// Java opens it with CREATE and WRITE: an fcntl write lock needs a file open for writing.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, &StateDirError{Path: dir, Err: err}
	}
	if err := tryLockFile(f); err != nil {
		f.Close()
		return nil, &StateDirError{Path: dir, Err: err}
	}
	heldLocks.paths[path] = true
	return &stateDirLock{f: f, path: path}, nil
}

// release unlocks and closes the lock file (closing it releases the operating system's lock).
func (l *stateDirLock) release() {
	heldLocks.Lock()
	delete(heldLocks.paths, l.path)
	heldLocks.Unlock()
	_ = l.f.Close()
}

// processID returns the instance's process id as Java's StateDirectory.initializeProcessId
// does. Without persistent stores it is a new random UUID on every start (nothing is kept
// locally, so nothing ties a restart to the previous run; a transaction a crashed run left
// open is aborted by the broker after transaction.timeout.ms). With persistent stores it
// locks <state.dir>/<application.id>/.lock for the instance's lifetime (the returned lock,
// released by Close) and then reads <state.dir>/<application.id>/kafka-streams-process-metadata
// (Java's JSON, {"processId":"<uuid>"}; other fields are ignored), or, when it is missing or
// holds no valid UUID, writes a new random one there, so a restart on the same state directory
// (by this library or by Java Kafka Streams) keeps its id and transactional ids and fences
// its previous run at once. Errors: *StateDirError (wrapping ErrStateDirLocked when the
// directory is held by another instance, Go or Java).
func processID(stateDir, appID string, persistent bool) (string, *stateDirLock, error) {
	if !persistent {
		return newUUID(), nil, nil
	}
	lock, err := lockStateDir(filepath.Join(stateDir, appID))
	if err != nil {
		return "", nil, err
	}
	file := filepath.Join(filepath.Dir(lock.path), stateDirProcessFile)
	if b, err := os.ReadFile(file); err == nil {
		var m processMetadata
		if err := json.Unmarshal(b, &m); err == nil {
			if id, ok := parseUUID(m.ProcessID); ok {
				return id, lock, nil
			}
		}
	}
	m := processMetadata{ProcessID: newUUID()}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		lock.release()
		return "", nil, &StateDirError{Path: file, Err: err}
	}
	return m.ProcessID, lock, nil
}

// parseUUID reports whether s is a UUID in its 36-character text form and returns it in
// lower case, as Java's UUID.toString prints it.
func parseUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return "", false
			}
		}
	}
	return strings.ToLower(s), true
}

// releaseStateDir releases the state directory lock taken by New, if any.
func (k *KafkaStreams) releaseStateDir() {
	k.mu.Lock()
	lock := k.dirLock
	k.dirLock = nil
	k.mu.Unlock()
	if lock != nil {
		lock.release()
	}
}

// StateDirError is a state directory (state.dir) that cannot be used: Path names the
// directory (absolute) or file, Err the cause (ErrStateDirLocked, or a file system error).
// Java: ProcessorStateException / StreamsException.
type StateDirError struct {
	// Path is the directory or file.
	Path string
	// Err is the cause.
	Err error
}

// Error implements error: "kstreams: state directory <path> (state.dir): <cause>", the
// cause without its own "kstreams: " prefix.
func (e *StateDirError) Error() string {
	cause := "<nil>"
	if e.Err != nil {
		cause = strings.TrimPrefix(e.Err.Error(), "kstreams: ")
	}
	return fmt.Sprintf("kstreams: state directory %s (state.dir): %s", e.Path, cause)
}

// Unwrap returns the cause.
func (e *StateDirError) Unwrap() error { return e.Err }

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
