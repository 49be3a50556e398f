//go:build linux

package kstreams

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLockFile takes an exclusive fcntl lock on the whole of f without waiting: an
// open-file-description lock (F_OFD_SETLK, Linux 3.15+), which conflicts with the classic
// process-associated record lock Java's FileChannel.tryLock takes (fcntl F_SETLK) and with
// another open of the file in this process. Kernels without OFD locks get the classic lock.
// It returns ErrStateDirLocked when another open file (of this or another process) holds a
// conflicting lock.
func tryLockFile(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EINVAL) {
		lk = unix.Flock_t{Type: unix.F_WRLCK}
		err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
	}
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return ErrStateDirLocked
	}
	return err
}
