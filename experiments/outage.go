package experiments

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hyperflat/hyperflat/store"
)

// What a runner does when the store is out of reach, and which runs it computes.

// DefaultOutage is Runner.Outage's default: longer than a database restart takes.
const DefaultOutage = time.Minute

// checkBuild refuses a run begun by another build, unless r.AnyBuild.
func (r *Runner) checkBuild(run store.Run) error {
	if r.AnyBuild || run.Build == "" || run.Build == CodeVersion() {
		return nil
	}
	return fmt.Errorf("run %d was begun by build %s, and this is %s: two builds may sum products in different orders, so its cells would not all be computed alike (start a new run, or let this build go on with it: --any-build)",
		run.ID, run.Build, CodeVersion())
}

// commitGrace is how long commit goes on trying after the runner is interrupted: long enough
// for a store that is back to take the result, short enough that an interrupt is obeyed.
var commitGrace = 10 * time.Second

// commit runs write, a store write that must not be lost (a finished cell's outcome), each try
// bounded to a minute, again and again with backoff while the store is unreachable, for up to
// r.Outage. An interrupt (ctx done) does not stop the write at once — the result is valid, and
// a write takes milliseconds — but stops the retrying commitGrace later.
func (r *Runner) commit(ctx context.Context, write func(context.Context) error) error {
	patient, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(commitGrace, cancel)
		context.AfterFunc(patient, func() { t.Stop() })
	})
	defer stop()
	var out outage
	for {
		wctx, cancelTry := context.WithTimeout(patient, time.Minute)
		err := write(wctx)
		cancelTry()
		if err == nil {
			out.over(r)
			return nil
		}
		if err = out.wait(patient, r, err); err != nil {
			if patient.Err() != nil {
				return fmt.Errorf("interrupted while the store was unreachable; this cell's result is lost (its lease ends and it is computed again): %w", err)
			}
			return err
		}
	}
}

// WhileUnavailable calls fn until it succeeds, fails for another cause than an unreachable
// store (store.IsUnavailable), or the store has been unreachable for limit (0: DefaultOutage),
// with the runner's backoff, noting the outage on log (when not nil): for what a worker does
// before it has a Runner, opening the store.
func WhileUnavailable(ctx context.Context, limit time.Duration, log io.Writer, fn func() error) error {
	r := &Runner{Outage: limit, Log: log}
	var out outage
	for {
		err := fn()
		if err == nil {
			out.over(r)
			return nil
		}
		if err = out.wait(ctx, r, err); err != nil {
			return err
		}
	}
}

// outage tracks one loop's stretch of store unavailability.
type outage struct {
	since   time.Time
	backoff time.Duration
}

// over ends a stretch of unavailability, if one was under way, saying so on r.Log.
func (o *outage) over(r *Runner) {
	if !o.since.IsZero() && r.Log != nil {
		fmt.Fprintf(r.Log, "the store is reachable again after %v\n", time.Since(o.since).Round(time.Millisecond))
	}
	*o = outage{}
}

// wait returns err at once unless it says the store is unreachable (store.IsUnavailable) and
// the stretch of failures has lasted less than r.Outage: then it sleeps, a backoff doubling
// from 100 ms to 5 s, and returns nil for the caller to try again. The first failure of a
// stretch is reported on r.Log.
func (o *outage) wait(ctx context.Context, r *Runner, err error) error {
	if !store.IsUnavailable(err) || ctx.Err() != nil {
		return err
	}
	limit := r.Outage
	if limit <= 0 {
		limit = DefaultOutage
	}
	if o.since.IsZero() {
		o.since, o.backoff = time.Now(), 100*time.Millisecond
		if r.Log != nil {
			for_ := "for up to " + limit.String()
			if limit > 100*365*24*time.Hour {
				for_ = "for as long as it takes"
			}
			fmt.Fprintf(r.Log, "the store is unreachable (%v); retrying %s\n", err, for_)
		}
	}
	if time.Since(o.since) >= limit {
		return fmt.Errorf("the store was unreachable for %v (the limit: --wait D, or %v without --wait): %w", time.Since(o.since).Round(time.Second), limit, err)
	}
	select {
	case <-ctx.Done():
		return err
	case <-time.After(o.backoff):
	}
	o.backoff = min(2*o.backoff, 5*time.Second)
	return nil
}
