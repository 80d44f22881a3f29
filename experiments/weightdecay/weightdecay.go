package weightdecay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/internal/gcpolicy"
)

// Experiment is the weight-decay experiment of Section 4.2 and Appendix C.2.
func Experiment() experiments.Experiment {
	return experiments.Define[*Config]("weightdecay", experiments.PACBayes,
		"per-weight decay tuned on 50 validation images: Eq. 1 vs Eq. 7 (PAC-Bayes) "+
			"vs the min-weight-norm heuristic (Table C.1, Figures 4.2-4.3)",
		plan, plots)
}

// replicateSeed is the seed of replicate r's initial weights, shared by its runs at every ζ:
// that pairing is the design (weight_decay.py seeds each fit_num's initialization, not each ζ).
func replicateSeed(root uint64, r int) uint64 {
	return experiments.DeriveSeed(root, "weightdecay", "replicate", r, "init")
}

// plan makes one cell per replicate × ζ (ζ = 0 is Eq. 1).
func plan(ctx context.Context, opt experiments.Options, cfg *Config) (*experiments.Plan, error) {
	d, err := loadSubsets(ctx, opt, cfg)
	if err != nil {
		return nil, err
	}
	if need := estimateBytes(cfg, d.train.Shape); opt.MaxMem > 0 && need > opt.MaxMem {
		return nil, fmt.Errorf("weightdecay: %s on %s needs about %s, over the --max-mem limit of %s",
			cfg.Model, cfg.Dataset, convexity.FormatBytes(need), convexity.FormatBytes(opt.MaxMem))
	}
	zetas := append([]float64{0}, cfg.Zetas...)
	if err := fitsInMemory(cfg, d.train.Shape, cfg.Repeats*len(zetas), opt.Workers, gcpolicy.Available()); err != nil {
		return nil, err
	}
	type job struct {
		rep  int
		zeta float64
	}
	var jobs []job
	p := &experiments.Plan{Best: "test_acc", Higher: true}
	for r := range cfg.Repeats {
		for _, z := range zetas {
			jobs = append(jobs, job{r, z})
			p.Cells = append(p.Cells, experiments.Cell{Key: fmt.Sprintf("r%d/zeta=%g", r, z), Seed: replicateSeed(opt.Seed, r),
				Config: map[string]any{"model": cfg.Model, "dataset": cfg.Dataset, "replicate": r, "zeta": z}})
		}
	}
	p.Run = func(ctx context.Context, i, _ int) (experiments.CellResult, error) {
		j := jobs[i]
		if opt.TrialTimeout > 0 { // one optimization is this experiment's trial
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, opt.TrialTimeout)
			defer cancel()
		}
		f, err := runFit(ctx, cfg, d, j.rep, j.zeta, p.Cells[i].Seed)
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %v (--trial-timeout): %w", opt.TrialTimeout, err)
		}
		if err != nil {
			return experiments.CellResult{}, fmt.Errorf("replicate %d, ζ %g: %w", j.rep, j.zeta, err)
		}
		last := f.final()
		out := f.toJSON()
		return experiments.CellResult{Output: out, History: out.History,
			Metrics: map[string]float64{"val_acc": last.valAcc, "test_acc": last.testAcc, "regularizer": last.distance, "weight_norm": last.norm},
			Summary: fmt.Sprintf("weightdecay %s/%s: replicate %d ζ=%g: val %.3f test %.3f (%.1fs)",
				cfg.Model, cfg.Dataset, j.rep, j.zeta, last.valAcc, last.testAcc, f.seconds)}, nil
	}
	p.Assemble = func(outputs []json.RawMessage) (*experiments.Result, error) {
		fits := make([]fit, len(outputs))
		for i, raw := range outputs {
			var j fitJSON
			if err := json.Unmarshal(raw, &j); err != nil {
				return nil, fmt.Errorf("weightdecay: cell %s: %w", p.Cells[i].Key, err)
			}
			fits[i] = j.fit()
		}
		return result(opt, cfg, zetas, fits), nil
	}
	return p, nil
}

// checkpointJSON and fitJSON are a cell's stored output.
type checkpointJSON struct {
	Step     int             `json:"step"`
	ValAcc   experiments.F64 `json:"val_acc"`
	TestAcc  experiments.F64 `json:"test_acc"`
	SelAcc   experiments.F64 `json:"sel_acc"`
	TestLoss experiments.F64 `json:"test_loss"`
	Distance experiments.F64 `json:"distance"`
	Norm     experiments.F64 `json:"norm"`
	// ValEval and TestEval are the eval-mode BatchNorm accuracies an authors-protocol ResNet
	// logs besides (checkpoint.valEval); absent elsewhere.
	ValEval  *experiments.F64 `json:"val_acc_eval_mode,omitempty"`
	TestEval *experiments.F64 `json:"test_acc_eval_mode,omitempty"`
}

type fitJSON struct {
	Replicate int              `json:"replicate"`
	Zeta      experiments.F64  `json:"zeta"`
	History   []checkpointJSON `json:"history"`
	Seconds   experiments.F64  `json:"seconds"`
}

func (f fit) toJSON() fitJSON {
	type F = experiments.F64
	out := fitJSON{Replicate: f.replicate, Zeta: F(f.zeta), Seconds: F(f.seconds)}
	opt := func(x float64) *F {
		if math.IsNaN(x) {
			return nil
		}
		v := F(x)
		return &v
	}
	for _, c := range f.history {
		out.History = append(out.History, checkpointJSON{c.step, F(c.valAcc), F(c.testAcc), F(c.selAcc), F(c.testLoss), F(c.distance), F(c.norm),
			opt(c.valEval), opt(c.testEval)})
	}
	return out
}

func (j fitJSON) fit() fit {
	f := fit{replicate: j.Replicate, zeta: float64(j.Zeta), seconds: float64(j.Seconds)}
	opt := func(x *experiments.F64) float64 {
		if x == nil {
			return math.NaN()
		}
		return float64(*x)
	}
	for _, c := range j.History {
		f.history = append(f.history, checkpoint{c.Step, float64(c.ValAcc), float64(c.TestAcc), float64(c.SelAcc), float64(c.TestLoss), float64(c.Distance), float64(c.Norm),
			opt(c.ValEval), opt(c.TestEval)})
	}
	return f
}
