package ahsc

import (
	"context"
	"errors"
	"io/fs"
	"runtime"
	"strconv"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
)

// TestPlanHoldsNoSplits checks that a planned run does not keep its repeats' data: phoneme
// under the authors' protocol (every column one-hot, 11,178 wide) is half a gigabyte a
// split, and its 20 repeats held 9 GB for as long as a worker ran. Planning two repeats
// must hold no more than planning one.
func TestPlanHoldsNoSplits(t *testing.T) {
	if testing.Short() {
		t.Skip("draws phoneme's one-hot folds four times")
	}
	ctx := context.Background()
	resolve := func(repeats int) (experiments.Options, *Config) {
		cfg, err := Experiment().Configure(experiments.Quick, map[string]string{"dataset": "phoneme", "protocol": "authors", "repeats": strconv.Itoa(repeats)})
		if err != nil {
			t.Fatal(err)
		}
		opt, err := Experiment().Resolve(experiments.Options{Preset: experiments.Quick, Seed: 1, Config: cfg, DataDir: datasets.ResolveDir("")})
		if err != nil {
			t.Fatal(err)
		}
		return opt, opt.Config.(*Config)
	}
	opt, cfg := resolve(1)
	p, err := loadProblem(ctx, opt, cfg, "phoneme")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("phoneme is not in the data directory %s (set %s): %v", opt.DataDir, datasets.EnvDataDir, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	sp, err := p.split(0)
	if err != nil {
		t.Fatal(err)
	}
	splitBytes := int64(8 * (sp.train.N*sp.train.D + sp.val.N*sp.val.D))
	sp, p = nil, nil

	held := func(repeats int) int64 {
		opt, cfg := resolve(repeats)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		pl, err := plan(ctx, opt, cfg)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(pl.Cells) != repeats*len(cfg.Methods) {
			t.Fatalf("%d repeats: %d cells, want %d", repeats, len(pl.Cells), repeats*len(cfg.Methods))
		}
		runtime.KeepAlive(pl)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	one, two := held(1), held(2)
	if two-one > splitBytes/4 {
		t.Errorf("a plan of 2 repeats holds %d MB more than one of 1 repeat (a split is %d MB): it keeps the repeats' data",
			(two-one)>>20, splitBytes>>20)
	}
	t.Logf("plan of 1 repeat holds %d MB, of 2 repeats %d MB; a split is %d MB", one>>20, two>>20, splitBytes>>20)
}
