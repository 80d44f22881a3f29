package weightdecay

import (
	"fmt"
	"math"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// bnRow is one stored run whose fits logged their accuracies both as the authors' code
// computes them (training-mode BatchNorm on its batches) and in eval mode (the clean
// protocol): final accuracies averaged over its complete replicates, the same weights scored
// both ways.
type bnRow struct {
	label, pair, budget string
	reps                int
	// reported tells whether the run is the one its pair's row of Table C.1 reports.
	reported bool
	// Final accuracies, [0] training mode (the authors'), [1] eval mode.
	eq1Test, eq7Test, eq1Val [2]float64
}

// batchNormRows are the runs, in run order, whose final checkpoints carry both evaluations. A
// run merged into a wider grid search is left to the merge: their Eq. 1 fits are the same ones.
func (t *TableC1) batchNormRows() []bnRow {
	merged := map[string]bool{}
	for _, sp := range t.candidates {
		if len(sp.names) > 1 {
			for _, n := range sp.names {
				merged[n] = true
			}
		}
	}
	var out []bnRow
	for _, sp := range t.candidates {
		if len(sp.p.reps) == 0 || math.IsNaN(sp.p.reps[0].base.final().testEval) || (len(sp.names) == 1 && merged[sp.names[0]]) {
			continue
		}
		one := experiments.Table{Columns: cellColumns, Rows: [][]any{sp.cells()}}
		r := bnRow{label: sp.label(), pair: pairName(sp.cfg.Model, sp.cfg.Dataset), budget: budgetText(one, 0), reps: len(sp.p.reps),
			reported: t.chosen[sp.key()] == sp}
		var e1t, e1e, e7t, e7e, v1t, v1e []float64
		for _, rep := range sp.p.reps {
			c := rep.base.final()
			e1t, e1e, v1t, v1e = append(e1t, c.testAcc), append(e1e, c.testEval), append(v1t, c.valAcc), append(v1e, c.valEval)
			if rep.bySel != nil {
				c7 := rep.bySel.final()
				e7t, e7e = append(e7t, c7.testAcc), append(e7e, c7.testEval)
			}
		}
		r.eq1Test = [2]float64{stats.Mean(e1t), stats.Mean(e1e)}
		r.eq7Test = [2]float64{stats.Mean(e7t), stats.Mean(e7e)}
		r.eq1Val = [2]float64{stats.Mean(v1t), stats.Mean(v1e)}
		out = append(out, r)
	}
	return out
}

// writeBatchNorm writes the BatchNorm comparison, if any run measured it.
func writeBatchNorm(b *strings.Builder, rows []bnRow) {
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## BatchNorm: the authors' training-mode evaluation against eval mode\n\n`weight_decay.py` never calls " +
		"`model.eval()`: its ResNets' BatchNorm normalizes every evaluated batch by that batch's statistics (the 50 validation images " +
		"at once; the test set in batches of 50 on MNIST, 4 on CIFAR-10). Under `--protocol authors` a ResNet logs its accuracies that " +
		"way and, besides, in eval mode (running statistics, batches of 500, the clean protocol's), so each row scores the same final " +
		"weights both ways; Eq. 7 is the run at the ζ the selection images chose (in training mode).\n\n" +
		"| run | pair | protocol; budget | replicates | Eq. 1 test, training mode → eval mode | Eq. 7 test, training → eval | " +
		"Eq. 1 validation, training → eval |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %s | %s |\n", r.label, r.pair, r.budget, r.reps, modes(r.eq1Test), modes(r.eq7Test), modes(r.eq1Val))
	}
}

// modes is "0.412 → 0.301 (−11.1 points)".
func modes(v [2]float64) string {
	if math.IsNaN(v[0]) || math.IsNaN(v[1]) {
		return "–"
	}
	return fmt.Sprintf("%.3f → %.3f (%s points)", v[0], v[1], signed(100*(v[1]-v[0])))
}
