//go:build unix

package store

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on the file at path, creating it, for processes of this
// machine; the returned function releases it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// canWrite reports whether this process may write path, as the kernel's permission check says
// (root may write almost anything; a read-only file system refuses even root).
func canWrite(path string) bool { return syscall.Access(path, 2 /* W_OK */) == nil }
