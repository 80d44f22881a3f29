//go:build unix

package experiments

import "syscall"

// processAlive reports whether a process of this host has the given pid.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
