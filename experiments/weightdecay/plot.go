package weightdecay

import (
	"errors"
	"fmt"
	"image/color"
	"slices"

	"github.com/hyperflat/hyperflat/experiments"
)

// gray draws what is not a method (a line style's legend entry).
var gray = color.Gray{Y: 0x55}

// plots draws Figure 4.2 (accuracy and regularizer per hyper-step) and Figure 4.3 (regularizer
// against the generalization gap) from the result's tables alone.
func plots(res *experiments.Result, dir string) ([]string, error) {
	model, dataset := res.Params["model"], res.Params["dataset"]
	hist, steps := res.Table("history"), res.Table("steps")
	if hist == nil || steps == nil {
		return nil, errors.New("weightdecay: result lacks the history or steps table")
	}
	acc, reg := historyPanels(hist, model, dataset)
	p1, err := experiments.SavePNG(dir, fmt.Sprintf("weightdecay_%s_%s_history.png", model, dataset), acc, reg)
	if err != nil {
		return nil, err
	}
	sc := experiments.Panel{Title: fmt.Sprintf("%s on %s: regularizer vs generalization gap (Figure 4.3)", model, dataset),
		XLabel: "regularizer √Σ‖a_t‖²", YLabel: "validation − test accuracy"}
	for _, z := range zetas(steps) {
		var s experiments.Series
		for i := range steps.Rows {
			if steps.Float(i, "zeta") == z {
				s.X = append(s.X, steps.Float(i, "regularizer"))
				s.Y = append(s.Y, steps.Float(i, "val_acc")-steps.Float(i, "test_acc"))
			}
		}
		s.Label = zetaLabel(z)
		s.Color = experiments.MethodColor(s.Label)
		sc.Series = append(sc.Series, s)
	}
	if c := res.Table("correlation"); c != nil && len(c.Rows) > 0 {
		sc.Title += fmt.Sprintf(", Spearman ρ = %.2f", c.Float(0, "spearman_rho"))
	}
	p2, err := experiments.SaveScatterPNG(dir, fmt.Sprintf("weightdecay_%s_%s_correlation.png", model, dataset), sc)
	if err != nil {
		return nil, err
	}
	return []string{p1, p2}, nil
}

// zetas lists the table's ζ values in order of appearance.
func zetas(t *experiments.Table) []float64 {
	var zs []float64
	for i := range t.Rows {
		if z := t.Float(i, "zeta"); !slices.Contains(zs, z) {
			zs = append(zs, z)
		}
	}
	return zs
}

// zetaLabel names a ζ in the figures (and picks its colour): 0 is Eq. 1, validation loss alone.
func zetaLabel(z float64) string {
	if z == 0 {
		return "Eq. 1"
	}
	return fmt.Sprintf("ζ=%g", z)
}

// historyPanels are Figure 4.2's two panels: test (solid) and validation (dashed) accuracy,
// and the regularizer, per hyper-step for each ζ, one colour per ζ in both.
func historyPanels(hist *experiments.Table, model, dataset string) (acc, reg experiments.Panel) {
	acc = experiments.Panel{Title: fmt.Sprintf("%s on %s: accuracy per hyper-step (Figure 4.2)", model, dataset),
		XLabel: "hyper-step", YLabel: "accuracy", IntX: true}
	reg = experiments.Panel{Title: "regularizer √Σ‖a_t‖² per hyper-step", XLabel: "hyper-step", YLabel: "regularizer", IntX: true}
	for _, z := range zetas(hist) {
		var xs, va, ta, rg []float64
		for i := range hist.Rows {
			if hist.Float(i, "zeta") != z {
				continue
			}
			xs = append(xs, hist.Float(i, "step"))
			va, ta, rg = append(va, hist.Float(i, "val_acc")), append(ta, hist.Float(i, "test_acc")), append(rg, hist.Float(i, "regularizer"))
		}
		label := zetaLabel(z)
		c := experiments.MethodColor(label)
		acc.Series = append(acc.Series, experiments.Series{Label: label, X: xs, Y: ta, Color: c},
			experiments.Series{X: xs, Y: va, Dashed: true, Color: c})
		reg.Series = append(reg.Series, experiments.Series{Label: label, X: xs, Y: rg, Color: c})
	}
	// The line styles' own legend entries (no points: legend only).
	acc.Series = append(acc.Series, experiments.Series{Label: "solid: test", Color: gray},
		experiments.Series{Label: "dashed: validation", Dashed: true, Color: gray})
	return acc, reg
}
