package weightdecay

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// result builds the run's tables from its fits, in plan order: the per-replicate summary of
// the four methods, Table C.1, the histories of Figure 4.2, the correlation of Figure 4.3,
// the cost, and every hyper-step (the points of Figure 4.3).
func result(opt experiments.Options, cfg *Config, zetas []float64, fits []fit) *experiments.Result {
	summary := summaryTable(cfg, fits)
	return &experiments.Result{Experiment: "weightdecay", Preset: opt.Preset, Seed: opt.Seed,
		Tables: []experiments.Table{
			summary,
			tableC1(cfg, &summary),
			historyTable(cfg, zetas, fits),
			correlationTable(cfg, fits),
			costTable(cfg, fits),
			stepsTable(fits),
		}}
}

// summaryTable has, per replicate, Eq. 1 (ζ = 0), Eq. 7 at the ζ chosen on the selection
// images (never the test set), Eq. 7 at the test-set oracle ζ (what the paper did, "grid
// search to select the ζ that minimizes out-of-sample error"; marked), and the min-norm
// heuristic on the Eq. 1 run's checkpoints.
func summaryTable(cfg *Config, fits []fit) experiments.Table {
	t := experiments.Table{Name: "summary", Headline: true, Columns: []string{"method", "model", "dataset", "replicate", "zeta", "val_acc", "test_acc", "weight_norm", "regularizer", "selected_by"}}
	add := func(method string, rep int, zeta float64, c checkpoint, by string) {
		t.Add(method, cfg.Model, cfg.Dataset, rep, zeta, c.valAcc, c.testAcc, c.norm, c.distance, by)
	}
	byRep := map[int][]fit{}
	for _, f := range fits {
		byRep[f.replicate] = append(byRep[f.replicate], f)
	}
	for rep := range cfg.Repeats {
		base, bySel, byTest := pickZetas(byRep[rep])
		add("validation", rep, 0, base.final(), "")
		if bySel != nil {
			add("pac-bayes", rep, bySel.zeta, bySel.final(), "selection images")
			add("pac-bayes-oracle", rep, byTest.zeta, byTest.final(), "test set (paper; optimistic)")
		}
		c := minNorm(base.history)
		add("min-norm", rep, 0, c, fmt.Sprintf("hyper-step %d of the Eq. 1 run", c.step))
	}
	return t
}

// pickZetas splits one replicate's fits into the Eq. 1 fit and the Eq. 7 fits of the best
// final selection and test accuracy (the first on ties; nil without Eq. 7 fits).
func pickZetas(fits []fit) (base fit, bySel, byTest *fit) {
	for i := range fits {
		f := &fits[i]
		if f.zeta == 0 {
			base = *f
			continue
		}
		if bySel == nil || f.final().selAcc > bySel.final().selAcc {
			bySel = f
		}
		if byTest == nil || f.final().testAcc > byTest.final().testAcc {
			byTest = f
		}
	}
	return base, bySel, byTest
}

// minNorm is the heuristic of Section 4.2: among the Eq. 1 run's hyper-step checkpoints at
// maximal validation accuracy, the one with the smallest weight norm.
func minNorm(history []checkpoint) checkpoint {
	best := history[0]
	for _, c := range history[1:] {
		if c.valAcc > best.valAcc || (c.valAcc == best.valAcc && c.norm < best.norm) {
			best = c
		}
	}
	return best
}

// tableC1 is Table C.1's shape: the mean final test accuracy of each method over replicates.
func tableC1(cfg *Config, summary *experiments.Table) experiments.Table {
	t := experiments.Table{Name: "table_c1", Headline: true, Columns: []string{"model", "dataset", "method", "mean_test_acc", "replicates"}}
	accs := map[string][]float64{}
	var order []string
	for i := range summary.Rows {
		m := summary.String(i, "method")
		if _, ok := accs[m]; !ok {
			order = append(order, m)
		}
		accs[m] = append(accs[m], summary.Float(i, "test_acc"))
	}
	for _, m := range order {
		t.Add(cfg.Model, cfg.Dataset, m, stats.Mean(accs[m]), len(accs[m]))
	}
	return t
}

// historyTable is Figure 4.2: each hyper-step averaged over replicates, for every ζ.
func historyTable(cfg *Config, zetas []float64, fits []fit) experiments.Table {
	t := experiments.Table{Name: "history", Columns: []string{"zeta", "step", "val_acc", "test_acc", "regularizer", "weight_norm"}}
	for _, z := range zetas {
		for step := range cfg.OuterSteps {
			var va, ta, rg, wn []float64
			for _, f := range fits {
				if f.zeta == z && step < len(f.history) {
					c := f.history[step]
					va, ta, rg, wn = append(va, c.valAcc), append(ta, c.testAcc), append(rg, c.distance), append(wn, c.norm)
				}
			}
			t.Add(z, step+1, stats.Mean(va), stats.Mean(ta), stats.Mean(rg), stats.Mean(wn))
		}
	}
	return t
}

// correlationTable is Figure 4.3's statistic: Spearman's ρ between the regularizer and the
// generalization gap (validation − test accuracy) over every hyper-step of every run.
func correlationTable(cfg *Config, fits []fit) experiments.Table {
	var regs, gaps []float64
	for _, f := range fits {
		for _, c := range f.history {
			regs = append(regs, c.distance)
			gaps = append(gaps, c.valAcc-c.testAcc)
		}
	}
	t := experiments.Table{Name: "correlation", Columns: []string{"model", "dataset", "spearman_rho", "p_value", "points"}}
	if sp, err := stats.Spearman(regs, gaps); err == nil {
		t.Add(cfg.Model, cfg.Dataset, sp.Rho, sp.P, len(regs))
	} else {
		t.Add(cfg.Model, cfg.Dataset, math.NaN(), math.NaN(), len(regs))
	}
	return t
}

func costTable(cfg *Config, fits []fit) experiments.Table {
	t := experiments.Table{Name: "cost", Columns: []string{"model", "dataset", "runs", "inner_steps", "hyper_steps", "mean_seconds_per_run"}}
	var secs []float64
	for _, f := range fits {
		secs = append(secs, f.seconds)
	}
	t.Add(cfg.Model, cfg.Dataset, len(fits), cfg.InnerSteps, cfg.OuterSteps, stats.Mean(secs))
	return t
}

// stepsTable has every hyper-step of every run: the points of Figure 4.3 (a detail table,
// left out of the terminal view).
func stepsTable(fits []fit) experiments.Table {
	t := experiments.Table{Name: "steps", Detail: true, Columns: []string{"replicate", "zeta", "step", "val_acc", "test_acc", "selection_acc", "regularizer", "weight_norm"}}
	for _, f := range fits {
		for _, c := range f.history {
			t.Add(f.replicate, f.zeta, c.step, c.valAcc, c.testAcc, c.selAcc, c.distance, c.norm)
		}
	}
	return t
}
