package experiments

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
)

// recovered calls f, turning a panic into an error that carries the stack, so that a bug in
// one cell fails that cell instead of killing every worker of the process.
func recovered(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v\n%s", p, debug.Stack())
		}
	}()
	return f()
}

// Parallel calls f(i) for i in [0, n) on up to workers goroutines and returns the error of the
// lowest failing i. Each f writes only its own slot of a result slice, so results are the same
// for any number of workers.
func Parallel(ctx context.Context, workers, n int, f func(i int) error) error {
	workers = max(1, min(workers, n))
	errs := make([]error, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				errs[i] = recovered(func() error { return f(i) })
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
