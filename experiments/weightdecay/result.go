package weightdecay

import (
	"fmt"
	"math"
	"slices"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// result builds the run's tables from its fits, in plan order: the per-replicate summary of
// the methods, Table C.1, the histories of Figure 4.2, the correlations of Figure 4.3, the
// cost, and every hyper-step (the points of Figure 4.3).
func result(opt experiments.Options, cfg *Config, zetas []float64, fits []fit) *experiments.Result {
	p := newPair(cfg, fits)
	res := &experiments.Result{Experiment: "weightdecay", Preset: opt.Preset, Seed: opt.Seed,
		Tables: []experiments.Table{
			summaryTable(cfg, p),
			tableC1(cfg, p),
			historyTable(cfg, zetas, fits),
			correlationTable(cfg, p),
			costTable(cfg, fits),
			stepsTable(fits),
		}}
	res.Answer, res.View, res.Legend = answer(cfg, p)
	return res
}

// replicate is one initialization's runs as Table C.1 reads them: the Eq. 1 run (ζ = 0), the
// Eq. 7 runs at the ζ of the best final selection-image accuracy and of the best final test
// accuracy (nil without Eq. 7 runs), and the min-norm checkpoint of the Eq. 1 run.
type replicate struct {
	rep          int
	base         fit
	bySel, byTst *fit
	ckpt         checkpoint
}

// spearman is Spearman's ρ between the regularizer and the generalization gap (validation −
// test accuracy) over a set of hyper-steps, with its p-value and number of points.
type spearman struct {
	rho, p float64
	points int
}

// pair is one classifier–dataset pair's Table C.1 row, from the fits of its replicates:
// every replicate, the replicate whose final Eq. 1 model the final-model reading of the
// min-norm heuristic selects, and the correlations of Figure 4.3 over every run and over the
// runs at the largest ζ alone ("the correlation remains positive even for the largest values
// of ζ tested", Section 4.2).
type pair struct {
	reps     []replicate
	finalRep int
	all, top spearman
	topZeta  float64
}

// newPair groups fits by replicate (replicates in increasing order) and reads the pair.
func newPair(cfg *Config, fits []fit) *pair {
	byRep := map[int][]fit{}
	for _, f := range fits {
		byRep[f.replicate] = append(byRep[f.replicate], f)
	}
	p := &pair{}
	for rep := range cfg.Repeats {
		if len(byRep[rep]) == 0 {
			continue
		}
		base, bySel, byTst := pickZetas(byRep[rep])
		p.reps = append(p.reps, replicate{rep: rep, base: base, bySel: bySel, byTst: byTst, ckpt: minNorm(base.history)})
	}
	finals := make([]checkpoint, len(p.reps))
	for i, r := range p.reps {
		finals[i] = r.base.final()
	}
	if len(finals) > 0 {
		p.finalRep = minNormIndex(finals)
	}
	p.topZeta = slices.Max(append([]float64{0}, cfg.Zetas...))
	p.all = correlate(fits, func(fit) bool { return true })
	p.top = correlate(fits, func(f fit) bool { return f.zeta == p.topZeta })
	return p
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

// minNorm is the heuristic of Section 4.2 read as checkpoint selection: among the Eq. 1 run's
// hyper-step checkpoints at maximal validation accuracy, the one with the smallest weight norm.
func minNorm(history []checkpoint) checkpoint { return history[minNormIndex(history)] }

// minNormIndex is the index of the classifier the heuristic selects among cs: "the classifier
// with smallest weight-norm that also achieves the maximum top-1 validation accuracy" (the
// first on ties).
func minNormIndex(cs []checkpoint) int {
	best := 0
	for i, c := range cs[1:] {
		if b := cs[best]; c.valAcc > b.valAcc || (c.valAcc == b.valAcc && c.norm < b.norm) {
			best = i + 1
		}
	}
	return best
}

// The methods of Table C.1, as the summary and table_c1 name them.
const (
	methodEq1       = "validation"
	methodEq7       = "pac-bayes"
	methodOracle    = "pac-bayes-oracle"
	methodCkpt      = "min-norm"
	methodFinal     = "min-norm-final"
	readingCkpt     = "checkpoint"
	readingFinal    = "final model"
	selectionImages = "selection images"
	oracleNote      = "test set (paper; optimistic)"
)

// summaryTable has, per replicate, Eq. 1 (ζ = 0), Eq. 7 at the ζ chosen on the selection
// images (never the test set), Eq. 7 at the test-set oracle ζ (what the paper did, "grid
// search to select the ζ that minimizes out-of-sample error"; marked), and the min-norm
// heuristic read as checkpoint selection on the Eq. 1 run; then the heuristic's final-model
// reading, one classifier selected among the replicates' final Eq. 1 models.
func summaryTable(cfg *Config, p *pair) experiments.Table {
	t := experiments.Table{Name: "summary", Headline: true, Columns: []string{"method", "model", "dataset", "replicate", "zeta", "val_acc", "test_acc", "weight_norm", "regularizer", "selected_by"}}
	add := func(method string, rep int, zeta float64, c checkpoint, by string) {
		t.Add(method, cfg.Model, cfg.Dataset, rep, zeta, c.valAcc, c.testAcc, c.norm, c.distance, by)
	}
	for _, r := range p.reps {
		add(methodEq1, r.rep, 0, r.base.final(), "")
		if r.bySel != nil {
			add(methodEq7, r.rep, r.bySel.zeta, r.bySel.final(), selectionImages)
			add(methodOracle, r.rep, r.byTst.zeta, r.byTst.final(), oracleNote)
		}
		add(methodCkpt, r.rep, 0, r.ckpt, fmt.Sprintf("hyper-step %d of the Eq. 1 run", r.ckpt.step))
	}
	if len(p.reps) > 0 {
		r := p.reps[p.finalRep]
		add(methodFinal, r.rep, 0, r.base.final(), fmt.Sprintf("final Eq. 1 model of replicate %d, among %d", r.rep, len(p.reps)))
	}
	return t
}

// methodRow is one method's line of Table C.1: its final test and validation accuracies, one
// per replicate (one in all for the final-model reading).
type methodRow struct {
	method, reading string
	test, val       []float64
}

// rows are the pair's Table C.1 lines in the table's order.
func (p *pair) rows() []methodRow {
	rows := []methodRow{{method: methodEq1}, {method: methodEq7, reading: "ζ: selection set"},
		{method: methodOracle, reading: "ζ: test set (oracle)"}, {method: methodCkpt, reading: readingCkpt}, {method: methodFinal, reading: readingFinal}}
	add := func(i int, c checkpoint) {
		rows[i].test, rows[i].val = append(rows[i].test, c.testAcc), append(rows[i].val, c.valAcc)
	}
	for _, r := range p.reps {
		add(0, r.base.final())
		if r.bySel != nil {
			add(1, r.bySel.final())
			add(2, r.byTst.final())
		}
		add(3, r.ckpt)
	}
	if len(p.reps) > 0 {
		add(4, p.reps[p.finalRep].base.final())
	}
	return rows
}

// tableC1 is Table C.1's shape: per method, the mean (and standard deviation) of the final
// test accuracy over replicates, the mean final validation accuracy, and n.
func tableC1(cfg *Config, p *pair) experiments.Table {
	t := experiments.Table{Name: "table_c1", Headline: true, Columns: []string{"model", "dataset", "method", "reading", "mean_test_acc", "sd_test_acc", "mean_val_acc", "n"}}
	for _, r := range p.rows() {
		if len(r.test) > 0 {
			t.Add(cfg.Model, cfg.Dataset, r.method, r.reading, stats.Mean(r.test), stats.StdDev(r.test), stats.Mean(r.val), len(r.test))
		}
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
			if len(ta) > 0 {
				t.Add(z, step+1, stats.Mean(va), stats.Mean(ta), stats.Mean(rg), stats.Mean(wn))
			}
		}
	}
	return t
}

// correlate is Figure 4.3's statistic over every hyper-step of the fits that keep selects.
func correlate(fits []fit, keep func(fit) bool) spearman {
	var regs, gaps []float64
	for _, f := range fits {
		if !keep(f) {
			continue
		}
		for _, c := range f.history {
			regs = append(regs, c.distance)
			gaps = append(gaps, c.valAcc-c.testAcc)
		}
	}
	s := spearman{rho: math.NaN(), p: math.NaN(), points: len(regs)}
	if sp, err := stats.Spearman(regs, gaps); err == nil {
		s.rho, s.p = sp.Rho, sp.P
	}
	return s
}

// correlationTable is Figure 4.3's statistic: Spearman's ρ between the regularizer and the
// generalization gap (validation − test accuracy) over every hyper-step of every run, then
// over the runs at the largest ζ alone.
func correlationTable(cfg *Config, p *pair) experiments.Table {
	t := experiments.Table{Name: "correlation", Columns: []string{"model", "dataset", "runs", "spearman_rho", "p_value", "points"}}
	t.Add(cfg.Model, cfg.Dataset, "all", p.all.rho, p.all.p, p.all.points)
	t.Add(cfg.Model, cfg.Dataset, fmt.Sprintf("ζ=%g", p.topZeta), p.top.rho, p.top.p, p.top.points)
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
