//go:build unix

package ahsc

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used (user and system, every thread: the
// trainings' and the garbage collector's), or false where it cannot be read.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
