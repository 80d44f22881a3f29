package experiments

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommitRidesOutAnOutage: a finished cell's write that fails because the store is
// unreachable is tried again until it succeeds (a worker dropped the result); a write that
// fails for another reason is not retried; the retrying ends at Runner.Outage, and an
// interrupt ends it commitGrace later, saying the result is lost.
func TestCommitRidesOutAnOutage(t *testing.T) {
	down := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	var log strings.Builder
	r := &Runner{Outage: time.Minute, Log: &log}
	tries := 0
	err := r.commit(context.Background(), func(context.Context) error {
		if tries++; tries < 4 {
			return down
		}
		return nil
	})
	if err != nil || tries != 4 || !strings.Contains(log.String(), "unreachable") || !strings.Contains(log.String(), "reachable again") {
		t.Errorf("an outage of 3 tries: %v after %d tries; log %q", err, tries, log.String())
	}

	wrong := errors.New("constraint violated")
	tries = 0
	if err := r.commit(context.Background(), func(context.Context) error { tries++; return wrong }); !errors.Is(err, wrong) || tries != 1 {
		t.Errorf("a write that is wrong: %v after %d tries, want it at once", err, tries)
	}

	r.Outage = 300 * time.Millisecond
	start := time.Now()
	if err := r.commit(context.Background(), func(context.Context) error { return down }); !errors.Is(err, syscall.ECONNREFUSED) ||
		!strings.Contains(err.Error(), "unreachable for") || time.Since(start) > 5*time.Second {
		t.Errorf("an outage longer than Outage: %v after %v", err, time.Since(start))
	}

	defer func(g time.Duration) { commitGrace = g }(commitGrace)
	commitGrace = 200 * time.Millisecond
	r.Outage = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	err = r.commit(ctx, func(context.Context) error { return down })
	if err == nil || !strings.Contains(err.Error(), "result is lost") || time.Since(start) > 5*time.Second {
		t.Errorf("interrupted in an outage: %v after %v", err, time.Since(start))
	}
}
