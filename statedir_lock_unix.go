//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package kstreams

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLockFile takes an exclusive fcntl record lock (F_SETLK) on the whole of f without
// waiting, the lock Java's FileChannel.tryLock takes. It returns ErrStateDirLocked when
// another process holds a conflicting lock (locks of this process are checked by heldLocks).
func tryLockFile(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return ErrStateDirLocked
	}
	return err
}
