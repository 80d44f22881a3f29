//go:build !unix

package ahsc

import "time"

// processCPU cannot be read here: BenchmarkWhitebox reports wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
