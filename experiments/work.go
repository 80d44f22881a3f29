package experiments

// The worker side of a Runner: claiming stored cells, computing them, committing their
// results and assembling the runs they complete.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// Work serves stored runs as a worker: it claims cells of runs (none: of any run, lowest ID
// first) until no run in scope has cells left to compute or take over, assembling every run it
// completes. Given several runs, it claims from them in the order given, moving on to the next
// as soon as the current one has no cell left to claim rather than waiting for its last cells
// computed elsewhere. It returns how many cells it computed.
func (r *Runner) Work(ctx context.Context, runs ...int64) (int, error) {
	r.defaults()
	pc := &planCache{plans: map[int64]*planned{}}
	claim := store.ClaimOptions{Runs: runs, Worker: r.Name, Lease: r.Lease}
	if !r.AnyBuild {
		claim.Build = CodeVersion()
	}
	inScope := func(rr store.Run) bool {
		return (len(runs) == 0 || slices.Contains(runs, rr.ID)) && r.checkBuild(rr) == nil
	}
	// Before the claim loops, which ride out an unreachable store, what they need of it: the
	// runs named are this build's, and (for the monitor) how many cells are left.
	err := WhileUnavailable(ctx, r.Outage, r.Log, func() error {
		for _, id := range runs {
			run, err := r.Store.GetRun(ctx, id)
			if err != nil {
				return err
			}
			if err := r.checkBuild(run); err != nil {
				return err
			}
		}
		if r.Monitor == nil {
			return nil
		}
		stored, err := r.Store.Runs(ctx)
		if err != nil {
			return err
		}
		left := 0
		for _, rr := range stored {
			if inScope(rr) {
				left += rr.Left()
			}
		}
		r.Monitor.Begin(left, 0, "", false)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return r.serve(ctx, pc, claim, 1, true, func(ctx context.Context) (bool, error) {
		if r.Wait {
			return true, nil
		}
		stored, err := r.Store.Runs(ctx)
		if err != nil {
			return false, err
		}
		for _, rr := range stored {
			if inScope(rr) && rr.Left() > 0 {
				return true, nil
			}
		}
		return false, nil
	})
}

// serve runs r.Workers claim loops; with assemble, the loop that completes a run's last
// cell assembles and stores the run's result. When nothing is claimable, a loop keeps polling while
// busy reports that cells in its scope are still pending or running elsewhere (their worker
// may die, and their leases expire), and stops when it reports false.
func (r *Runner) serve(ctx context.Context, pc *planCache, claim store.ClaimOptions, inner int, assemble bool, busy func(context.Context) (bool, error)) (int, error) {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		computed int
		firstErr error
	)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for slot := range r.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := claim
			c.Worker = fmt.Sprintf("%s/%d", r.Name, slot)
			var out outage
			for ctx.Err() == nil {
				did, err := r.step(ctx, pc, c, slot, inner, assemble)
				if did {
					mu.Lock()
					computed++
					mu.Unlock()
				}
				if err == nil && !did {
					var more bool
					if more, err = busy(ctx); err == nil && !more {
						return
					}
					if err == nil {
						out.over(r)
						select {
						case <-ctx.Done():
						case <-time.After(r.Poll):
						}
						continue
					}
				}
				if err == nil {
					out.over(r)
				} else if err = out.wait(ctx, r, err); err == nil {
					continue // the store was unreachable; it is tried again
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = parent.Err() // interrupted while waiting for cells held elsewhere
	}
	return computed, firstErr
}

// step claims and computes one cell; it reports false when nothing was claimable. A cell
// whose computation fails is recorded as failed and is not an error of the loop; a lost
// lease drops the cell (its new holder computes the same result).
func (r *Runner) step(ctx context.Context, pc *planCache, claim store.ClaimOptions, slot, inner int, assemble bool) (bool, error) {
	l, err := r.Store.Claim(ctx, claim)
	if err != nil || l == nil {
		return false, err
	}
	pl, err := pc.get(ctx, r, l.Run)
	if err != nil {
		_ = r.release(l)
		return false, err
	}
	if l.Index >= len(pl.plan.Cells) || pl.plan.Cells[l.Index].Key != l.Key {
		_ = r.release(l)
		return false, fmt.Errorf("run %d: stored cell %d (%s) is not in the plan", l.Run, l.Index, l.Key)
	}
	if r.Monitor != nil {
		r.Monitor.Started(slot, l.Key)
	}
	cctx, cancelCell := context.WithCancel(ctx)
	cp := newStoreCheckpoint(r.Store, l)
	lost, hbDone := r.heartbeat(cctx, cancelCell, l, cp)
	var res CellResult
	runErr := recovered(func() (err error) {
		res, err = pl.plan.Run(WithCheckpoint(cctx, cp), l.Index, inner)
		return err
	})
	// A cell that went on from an earlier attempt's progress counts that attempt's time too.
	secs := cp.seconds()
	cancelCell()
	<-hbDone
	var out []byte
	if runErr == nil {
		out, runErr = json.Marshal(res.Output)
	}
	select {
	case <-lost:
		if r.Monitor != nil {
			r.Monitor.Finished(slot, l.Key, res, secs, fmt.Errorf("lease lost to another worker"))
		}
		return true, nil
	default:
	}
	// A finished cell is committed even when the run is being interrupted: its result is
	// valid, and committing takes milliseconds — or, while the store is unreachable, as long
	// as the runner waits for it (Runner.Outage): the result is kept until then.
	wctx := context.WithoutCancel(ctx)
	if runErr != nil {
		// What the cell saved since the last write is kept for its next attempt; a write that
		// fails costs that attempt time, never a result.
		fctx, cancelFlush := context.WithTimeout(wctx, time.Minute)
		_ = cp.flush(fctx)
		cancelFlush()
	}
	if runErr != nil && ctx.Err() != nil {
		// Interrupted: hand the cell back so that a resumed run goes on with it at once.
		_ = r.release(l)
		return false, ctx.Err()
	}
	if runErr != nil {
		err := r.commit(wctx, func(ctx context.Context) error { return r.Store.Fail(ctx, l, runErr.Error(), secs) })
		if err != nil && !errors.Is(err, store.ErrLeaseLost) {
			return true, err
		}
	} else {
		var hist []byte
		if res.History != nil {
			if hist, err = json.Marshal(res.History); err != nil {
				return true, err
			}
		}
		o := store.Outcome{Output: out, Metrics: res.Metrics, History: hist, Seconds: secs, CodeVersion: CodeVersion(), Host: hostDescription()}
		err = r.commit(wctx, func(ctx context.Context) error { return r.Store.Complete(ctx, l, o) })
		if err != nil && !errors.Is(err, store.ErrLeaseLost) {
			return true, err
		}
	}
	if r.Monitor != nil {
		r.Monitor.Finished(slot, l.Key, res, secs, runErr)
	}
	if ctx.Err() != nil {
		return true, ctx.Err()
	}
	if !assemble {
		return true, nil
	}
	// The worker that completes a run's last cell assembles and stores its result, waiting
	// out an unreachable store: no other worker would (Report assembles too, but later).
	var down outage
	for {
		err := r.assembleIfDone(ctx, pl, l.Run)
		if err == nil {
			down.over(r)
			return true, nil
		}
		if err = down.wait(ctx, r, err); err != nil {
			return true, err
		}
	}
}

// assembleIfDone assembles and stores the run's result when all its cells are done and it
// has none yet.
func (r *Runner) assembleIfDone(ctx context.Context, pl *planned, id int64) error {
	run, err := r.Store.GetRun(ctx, id)
	if err != nil {
		return err
	}
	if run.Done == run.Cells && !run.HasResult {
		if _, err := r.finish(ctx, pl, run); err != nil {
			return fmt.Errorf("run %d: assembling: %w", run.ID, err)
		}
	}
	return nil
}

// heartbeat renews the cell's lease every third of it until ctx ends, and writes the progress
// the cell saved since the last write; when the lease is lost to another worker it closes lost
// and cancels the cell. done closes when it stops.
func (r *Runner) heartbeat(ctx context.Context, cancel context.CancelFunc, l *store.Lease, cp *storeCheckpoint) (lost, done chan struct{}) {
	lost, done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := r.Store.Heartbeat(ctx, l, r.Lease); errors.Is(err, store.ErrLeaseLost) {
					close(lost)
					cancel()
					return
				}
				_ = cp.flush(ctx) // a failed write is retried at the next tick
			}
		}
	}()
	return lost, done
}

func (r *Runner) release(l *store.Lease) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.Store.Release(ctx, l)
}
