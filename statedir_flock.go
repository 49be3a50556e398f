//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package kstreams

import (
	"errors"
	"os"
	"syscall"
)

// tryLockFile takes an exclusive advisory lock (flock) on f without waiting. It returns
// ErrStateDirLocked when another open file (of this or another process) holds it.
func tryLockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrStateDirLocked
	}
	return err
}
