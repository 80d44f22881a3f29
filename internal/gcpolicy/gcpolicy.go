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
// GOGC 400 is for small live heaps. A process that keeps a big one alive (a trained model, a
// ResNet program) would otherwise get a heap goal of five times it, and until the heap reaches
// that goal everything it allocates lands on pages it has never touched, each first touch a
// page fault (about 13 µs a 4 KiB page on the VMs of docs/performance.md, "Earlier work in
// the same process"): an AHSC screening after two ResNets kept alive took twice as long as in
// a fresh process for as long as that lasted, more than nine screenings. So after each
// collection Apply's policy sets the GOGC that allows Headroom bytes beyond the live heap,
// between Percent (live heaps up to 16 MiB, as before) and Go's default 100 (from 64 MiB): the
// collector never works harder than at Go's default, and a big live heap's goal is twice it,
// not five times (the same screenings: five slow ones, then a fresh process's speed).
//
// The GOGC and GOMEMLIMIT environment variables, when set, win: Apply then changes nothing
// they set.
package gcpolicy

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// Percent is the GOGC that Apply sets when the environment sets none, while the live heap is
// small (see Headroom).
const Percent = 400

// Headroom is the most heap, beyond the live heap, that Apply's policy lets the collector
// allow between collections once Percent of the live heap would exceed it, down to
// MinPercent. 64 MiB is what Percent gives the live heap of an AHSC screening (7–16 MB).
const Headroom = 64 << 20

// MinPercent is the GOGC below which Apply's policy never goes: Go's default.
const MinPercent = 100

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
// how much memory there is, since a larger GOGC without a limit could exhaust it. Where it
// sets GOGC, it resets it after each collection to PercentFor the live heap, until the
// program sets a GOGC of its own (debug.SetGCPercent), which it then keeps.
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
		startTuning()
		p.Percent = Percent
	}
	return p
}

// PercentFor is the GOGC that Apply's policy sets after a collection that left live bytes
// live: Percent, or less where Percent of live would exceed Headroom, but never below
// MinPercent.
func PercentFor(live uint64) int {
	if live <= Headroom*100/Percent {
		return Percent
	}
	return max(MinPercent, int(Headroom*100/live))
}

// tuning is the state of Apply's policy: percent is the GOGC it set last, 0 when it no longer
// sets one; armed, whether a sentinel waits for the next collection.
var tuning struct {
	mu      sync.Mutex
	percent int
	armed   bool
}

// startTuning sets GOGC to PercentFor the live heap now and keeps it so after every
// collection.
func startTuning() {
	tuning.mu.Lock()
	defer tuning.mu.Unlock()
	tuning.percent = PercentFor(liveHeap())
	debug.SetGCPercent(tuning.percent)
	if !tuning.armed {
		tuning.armed = true
		arm()
	}
}

// sentinel is an object no one keeps, whose finalizer therefore runs after the next
// collection. (A pointer field keeps it out of the tiny allocator, whose objects may never be
// finalized.)
type sentinel struct{ _ *int }

func arm() { runtime.SetFinalizer(new(sentinel), retune) }

// retune runs after each collection: it sets GOGC to PercentFor the live heap that collection
// left, unless the program has set one of its own since.
func retune(*sentinel) {
	tuning.mu.Lock()
	defer tuning.mu.Unlock()
	if tuning.percent == 0 || GOGC() != tuning.percent {
		tuning.percent, tuning.armed = 0, false
		return
	}
	if p := PercentFor(liveHeap()); p != tuning.percent {
		debug.SetGCPercent(p)
		tuning.percent = p
	}
	arm()
}

// Tuning reports whether Apply's policy sets GOGC after each collection (Apply set GOGC and
// the program has not set one of its own since).
func Tuning() bool {
	tuning.mu.Lock()
	defer tuning.mu.Unlock()
	return tuning.percent != 0 && GOGC() == tuning.percent
}

// liveHeap is the heap the last collection marked live, in bytes (0 before the first).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// GOGC is the GOGC in effect, -1 when the collector is off. It reads it without setting it:
// debug.SetGCPercent, the other way to learn it, would end Apply's policy.
func GOGC() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	v := s[0].Value.Uint64()
	if v > 1<<31 {
		return -1
	}
	return int(v)
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
