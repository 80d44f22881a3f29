package freedman

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hyperflat/hyperflat/experiments"
)

// cellBytes is what a cell's data holds: measured on a draw with folds.
func TestCellBytesMatchesTheHeld(t *testing.T) {
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Features = 300
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := newDataset(cfg, streamsOf(3), true)
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	est := float64(cellBytes(cfg, true))
	// The draw's design is garbage once the Gram matrices are made, so the estimate (which
	// counts it, as the peak holds it) is above what stays.
	if held > est || held < 0.7*est {
		t.Errorf("a cell with folds holds %.1f MB after the draw; estimated peak %.1f MB", held/1e6, est/1e6)
	}
	runtime.KeepAlive(d)
}

// Issue 52: --features 100000 (the documented maximum) ended in the runtime's out-of-memory,
// and --features 30000 grew to 21 GB in 40 s; sizes that cannot fit are refused up front with
// the estimate.
func TestSizesBeyondMemoryAreRefusedUpFront(t *testing.T) {
	const gib = 1 << 30
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Features = 30000
	if err := cfg.Finish(experiments.Quick); err != nil {
		t.Fatal(err)
	}
	err := fitsInMemory(cfg, 2, 24*gib)
	if err == nil || !strings.Contains(err.Error(), "--features 30000: a cell holds about 173.2 GB") ||
		!strings.Contains(err.Error(), "more than the 25.8 GB of memory available") {
		t.Errorf("30000 features on 24 GiB: %v", err)
	}
	cfg.Features, cfg.Methods = 10000, []string{"validation"}
	if err := fitsInMemory(cfg, 2, 24*gib); err != nil {
		t.Errorf("10000 features, validation only, on 24 GiB: %v", err)
	}
	// The whole command: refused before any data is drawn.
	e := Experiment()
	c, err := e.Configure(experiments.Quick, map[string]string{"features": "100000", "repeats": "1", "methods": "validation"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = e.Run(context.Background(), experiments.Options{Config: c, Workers: 1, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "--features 100000: a cell holds about 320.") {
		t.Errorf("--features 100000: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v", d)
	}
}

// Issue 52: a large draw ignored SIGTERM for as long as its Gram matrices took; a cancelled
// cell now returns at once.
func TestACancelledDrawReturnsAtOnce(t *testing.T) {
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Features, cfg.Methods = 1000, []string{methodValidation} // a draw of about 1.5 s
	if err := cfg.Finish(experiments.Quick); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err := runCell(ctx, experiments.Options{}, cfg, 0, methodValidation, 1, 1)
	if d := time.Since(start); err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) || d > 500*time.Millisecond {
		t.Errorf("after %v: %v; want the cancellation within 0.5 s", d, err)
	}
}
