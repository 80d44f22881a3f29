package graph

import (
	"runtime"
	"sync"
	"sync/atomic"
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

// procs is the number of pieces worth splitting work into now.
func procs() int {
	return max(1, runtime.GOMAXPROCS(0)-max(0, int(running.Load())-1))
}

// parallelFor calls f(lo, hi) on disjoint ranges covering [0, n), on up to procs() goroutines
// (the caller's included), each range at least grain long. It returns when all have finished.
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
	var wg sync.WaitGroup
	wg.Add(p - 1)
	for i := 1; i < p; i++ {
		lo, hi := i*n/p, (i+1)*n/p
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	f(0, n/p)
	wg.Wait()
}
