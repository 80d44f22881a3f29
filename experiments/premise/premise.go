package premise

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/ahsc"
	"github.com/hyperflat/hyperflat/internal/gcpolicy"
)

// Experiment tests AHSC's premise: does the one-epoch strong convexity μ, beside the Hessian
// trace, Frobenius norm and top eigenvalue, predict a configuration's test metric and
// generalization gap (with the paper's Figure 1)?
func Experiment() experiments.Experiment {
	return experiments.Define[*Config]("premise", experiments.AHSC,
		"does AHSC's one-epoch strong convexity μ predict generalization? Spearman correlations of μ, tr H, ‖H‖_F and "+
			"λ_max with the test metric and the generalization gap over sampled configurations (Figure 1)",
		plan, plots)
}

// ahscOptions are the options of the ahsc experiment whose task dataset's configurations
// train through: its paper preset with this run's sizes, seed and limits.
func ahscOptions(opt experiments.Options, cfg *Config, dataset string) (experiments.Options, error) {
	ac, err := ahsc.DefaultConfig(experiments.PaperScale)
	if err != nil {
		return experiments.Options{}, err
	}
	ac.Dataset, ac.Epochs, ac.Patience, ac.MinDelta = dataset, cfg.Epochs, cfg.Patience, cfg.MinDelta
	ac.MaxLog2Width, ac.TabRows, ac.Adam = cfg.MaxLog2Width, cfg.TabRows, cfg.Adam
	return experiments.Options{Preset: experiments.PaperScale, Seed: opt.Seed, DataDir: opt.DataDir, Config: ac,
		MaxMem: opt.MaxMem, TrialTimeout: opt.TrialTimeout}, nil
}

// cellSeed is the seed of one configuration: its sample from the space, its Hessian probes
// and its Figure 1 batches.
func cellSeed(root uint64, dataset string, index int) uint64 {
	return experiments.DeriveSeed(root, "premise", dataset, "config", index)
}

// loadTasks loads every dataset's task (nothing is trained).
func loadTasks(ctx context.Context, opt experiments.Options, cfg *Config) ([]*convexity.Task, error) {
	tasks := make([]*convexity.Task, len(cfg.Datasets))
	for i, d := range cfg.Datasets {
		ao, err := ahscOptions(opt, cfg, d)
		if err != nil {
			return nil, err
		}
		if tasks[i], err = ahsc.TrialTask(ctx, ao, cfg.Repeat); err != nil {
			return nil, fmt.Errorf("premise: %s: %w", d, err)
		}
	}
	return tasks, nil
}

func plan(ctx context.Context, opt experiments.Options, cfg *Config) (*experiments.Plan, error) {
	if err := exactFitsInMemory(cfg.ExactParams, len(cfg.Datasets)*cfg.Configs, opt.Workers, gcpolicy.Available()); err != nil {
		return nil, err
	}
	tasks, err := loadTasks(ctx, opt, cfg)
	if err != nil {
		return nil, err
	}
	type job struct{ dataset, index int }
	var jobs []job
	p := &experiments.Plan{Best: "test_metric", Higher: true}
	for di, d := range cfg.Datasets {
		for i := range cfg.Configs {
			jobs = append(jobs, job{di, i})
			p.Cells = append(p.Cells, experiments.Cell{Key: fmt.Sprintf("%s/c%03d", d, i), Seed: cellSeed(opt.Seed, d, i),
				Config: map[string]any{"dataset": d, "config": i}})
		}
	}
	p.Run = func(ctx context.Context, i, _ int) (experiments.CellResult, error) {
		j := jobs[i]
		d := cfg.Datasets[j.dataset]
		r, err := measure(ctx, tasks[j.dataset], cfg, d, j.index, p.Cells[i].Seed, d == cfg.Figure)
		if err != nil {
			return experiments.CellResult{}, fmt.Errorf("premise: %s configuration %d: %w", d, j.index, err)
		}
		return cellResult(r), nil
	}
	p.Assemble = func(outputs []json.RawMessage) (*experiments.Result, error) {
		recs := make([]record, len(outputs))
		for i, raw := range outputs {
			if err := json.Unmarshal(raw, &recs[i]); err != nil {
				return nil, fmt.Errorf("premise: cell %s: %w", p.Cells[i].Key, err)
			}
			// The plan, not the stored text, names the cell.
			recs[i].Dataset, recs[i].Index = cfg.Datasets[jobs[i].dataset], jobs[i].index
		}
		return result(opt, cfg, tasks, recs), nil
	}
	return p, nil
}

// cellResult is a finished cell's stored output, headline metrics and progress line.
func cellResult(r record) experiments.CellResult {
	status := fmt.Sprintf("μ %.4g, ‖H‖_F %.4g, test %s %.4g, gap %.3g", float64(r.Mu), float64(r.Frobenius), r.Metric, float64(r.TestMetric), r.gap())
	if r.Err != "" {
		status = "no result: " + r.Err
	}
	metrics := map[string]float64{"mu": float64(r.Mu), "hessian_frobenius": float64(r.Frobenius), "test_metric": float64(r.TestMetric),
		"gap": r.gap(), "seconds": float64(r.Seconds)}
	for k, v := range metrics {
		if math.IsNaN(v) {
			delete(metrics, k)
		}
	}
	return experiments.CellResult{Output: r, Metrics: metrics,
		Summary: fmt.Sprintf("premise: %s configuration %d: %s (%.1fs)", r.Dataset, r.Index, status, float64(r.Seconds))}
}
