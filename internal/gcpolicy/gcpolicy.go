// Package gcpolicy sets the garbage collector's policy of hyperflat's programs: a larger
// GOGC than Go's default, under a soft memory limit.
//
// Why: an experiment builds, compiles and trains thousands of small graphs (AHSC screens 50
// configurations a repeat, each a new model), so its live heap stays small (7–16 MB in the
// bench's screening of 50 OpenML MLPs) while it allocates fast; at GOGC=100 the collector
// then runs about 50 times a second, and its write barriers, assists and cache misses slow
// the workers. At GOGC=400, "hyperflat run ahsc --preset quick --dataset breast --repeats 1
// --workers 1" takes 5.6–5.8 CPU-s against 6.4–6.7 at GOGC=100 (AMD EPYC, 2 vCPUs, AVX2; the
// README's environment section). The memory limit keeps the larger GOGC
// from letting a big heap (a full-width ResNet) grow fivefold: near the limit the collector
// runs as often as it must, whatever GOGC says.
//
// The GOGC and GOMEMLIMIT environment variables, when set, win: Apply then changes nothing
// they set.
package gcpolicy

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Percent is the GOGC that Apply sets when the environment sets none.
const Percent = 400

// LimitFraction is the share of the memory available to the process (the machine's memory,
// or its cgroup's limit when lower) that Apply sets as the soft memory limit when the
// environment sets no GOMEMLIMIT.
const LimitFraction = 0.5

// Policy is what Apply put in effect; a zero field means it left that setting alone.
type Policy struct {
	Percent int   // the GOGC set, or 0
	Limit   int64 // the soft memory limit set in bytes, or 0
}

// Apply sets GOGC to Percent and the soft memory limit to LimitFraction of the available
// memory, each unless its environment variable is set; it sets neither when it cannot tell
// how much memory there is, since a larger GOGC without a limit could exhaust it.
func Apply() Policy {
	var p Policy
	_, gogcSet := os.LookupEnv("GOGC")
	_, limitSet := os.LookupEnv("GOMEMLIMIT")
	if !limitSet {
		avail := availableMemory()
		if avail <= 0 {
			return p
		}
		p.Limit = int64(float64(avail) * LimitFraction)
		debug.SetMemoryLimit(p.Limit)
	}
	if !gogcSet {
		debug.SetGCPercent(Percent)
		p.Percent = Percent
	}
	return p
}

// availableMemory is the machine's memory or its cgroup's limit, whichever is lower, in
// bytes; 0 when unknown.
func availableMemory() int64 {
	total := readMeminfoTotal("/proc/meminfo")
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if lim := readLimit(f); lim > 0 && (total == 0 || lim < total) {
			total = lim
		}
	}
	return total
}

// readMeminfoTotal parses MemTotal (kB) from a /proc/meminfo file; 0 when absent.
func readMeminfoTotal(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || kb <= 0 {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// readLimit parses a cgroup memory limit file: a byte count, or "max" (no limit, 0).
// cgroup v1 writes a huge number for no limit, which the caller's minimum ignores.
func readLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// Available is the memory available to the process: the machine's memory, or its cgroup's
// limit when lower, in bytes; 0 when it cannot tell. Experiments compare their estimates with
// it to refuse, up front, sizes that cannot fit.
func Available() int64 { return availableMemory() }
