package graph

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Parallelism: the kernels of this package split large work into at most GOMAXPROCS pieces run
// on goroutines, so that a step uses every core without a BLAS thread pool of its own (which,
// next to Go's scheduler, spins in sched_yield while Go code runs). Under the openblas tag
// OpenBLAS itself is set to one thread; gemm splits large products here instead.

// running counts the Program runs in progress. Kernels split their work only across the cores
// that other runs leave idle: one program alone uses every core, while independent programs on
// as many goroutines (parallel workers, chains, configurations) each run serially, without
// contending for cores or paying for the hand-offs.
var running atomic.Int32

// concurrent is the number of goroutines that callers have declared run programs side by
// side (Concurrent), beyond the first.
var concurrent atomic.Int32

// Concurrent declares that n goroutines will run programs side by side until the returned
// function is called: kernels then leave the other cores to them even in the moments when
// only one of them is inside a Run (between runs, the others train, score or build). Worker
// pools call it: with one program per core, splitting work only adds hand-offs.
func Concurrent(n int) (done func()) {
	d := int32(max(0, n-1))
	concurrent.Add(d)
	var once sync.Once
	return func() { once.Do(func() { concurrent.Add(-d) }) }
}

// procs is the number of pieces worth splitting work into now.
func procs() int {
	busy := max(int(running.Load())-1, int(concurrent.Load()))
	return max(1, runtime.GOMAXPROCS(0)-max(0, busy))
}

// parallelFor calls f(lo, hi) on disjoint ranges covering [0, n), each at least grain long
// (but the last), on up to procs() goroutines, the caller's included, and returns when all
// have finished. The ranges are handed out dynamically, a few per goroutine, so that a helper
// that starts late only takes what is left. Which goroutine runs a range never changes what
// it computes.
//
// The helpers are long-lived goroutines that, after a job, keep polling for the next one for
// a short while before they park: a program's parallel ops come microseconds apart, and
// waking a parked thread costs tens to hundreds of microseconds on a virtual machine — as
// much as the parallel part of a small product saves.
func parallelFor(n, grain int, f func(lo, hi int)) {
	p := procs()
	if grain < 1 {
		grain = 1
	}
	p = min(p, n/grain)
	if p <= 1 {
		if n > 0 {
			f(0, n)
		}
		return
	}
	j := &job{f: f, n: n, chunks: min(n/grain, 4*p)}
	helpers.start()
	helpers.current.Store(j)
	if w := min(int(helpers.parked.Load()), p-1); w > 0 {
		for i := 0; i < w; i++ {
			select {
			case helpers.wake <- struct{}{}:
			default:
			}
		}
	}
	j.work()
	for j.done.Load() < int32(j.chunks) {
		runtime.Gosched()
	}
	// unpublish the job: its closure holds the caller's buffers, which must not outlive it
	helpers.current.CompareAndSwap(j, nil)
}

// job is one parallelFor: its ranges are claimed by index.
type job struct {
	f         func(lo, hi int)
	n, chunks int
	next      atomic.Int32
	done      atomic.Int32
}

func (j *job) work() bool {
	did := false
	for {
		c := int(j.next.Add(1)) - 1
		if c >= j.chunks {
			return did
		}
		j.f(c*j.n/j.chunks, (c+1)*j.n/j.chunks)
		j.done.Add(1)
		did = true
	}
}

// helperSpin is how long an idle helper keeps polling before it parks.
const helperSpin = 200 * time.Microsecond

type helperPool struct {
	once    sync.Once
	current atomic.Pointer[job]
	parked  atomic.Int32
	wake    chan struct{}
}

var helpers helperPool

func (h *helperPool) start() {
	h.once.Do(func() {
		n := max(1, runtime.GOMAXPROCS(0)-1)
		h.wake = make(chan struct{}, n)
		for i := 0; i < n; i++ {
			go helperLoop()
		}
	})
}

func helperLoop() {
	h := &helpers
	for {
		if j := h.current.Load(); j != nil && j.work() {
			continue
		}
		// poll for a while, then park until a job wakes us
		deadline := time.Now().Add(helperSpin)
		found := false
		for i := 0; !found; i++ {
			if j := h.current.Load(); j != nil && j.next.Load() < int32(j.chunks) {
				found = true
				break
			}
			runtime.Gosched()
			if i&15 == 15 && time.Now().After(deadline) {
				break
			}
		}
		if found {
			continue
		}
		h.parked.Add(1)
		if j := h.current.Load(); j == nil || j.next.Load() >= int32(j.chunks) {
			<-h.wake
		}
		h.parked.Add(-1)
	}
}
