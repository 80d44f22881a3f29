package weightdecay

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

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
	sc := gapPanel(steps, fmt.Sprintf("%s on %s: regularizer vs generalization gap (Figure 4.3)", model, dataset))
	if c := res.Table("correlation"); c != nil && len(c.Rows) > 0 {
		sc.Title += fmt.Sprintf(", Spearman ρ = %.2f", c.Float(0, "spearman_rho"))
	}
	p2, err := experiments.SaveScatterPNG(dir, fmt.Sprintf("weightdecay_%s_%s_correlation.png", model, dataset), sc)
	if err != nil {
		return nil, err
	}
	return []string{p1, p2}, nil
}

// gapPanel is Figure 4.3: each hyper-step of every run as a point, the regularizer against
// the generalization gap, one colour per ζ. The regularizer is drawn on a log scale: Eq. 1's
// grows by decades over the hyper-steps while Eq. 7's stays small (Spearman's ρ, a rank
// statistic, is unchanged by it).
func gapPanel(steps *experiments.Table, title string, chosen ...float64) experiments.Panel {
	sc := experiments.Panel{Title: title, XLabel: "log10 of the regularizer √Σ norm(a_t)²", YLabel: "validation − test accuracy",
		MaxPoints: 500}
	zs := zetas(steps)
	styles := zetaStyles(steps, chosen...)
	for _, z := range zs {
		st := styles[z]
		s := experiments.Series{Label: st.label, Points: true, Color: st.color, Muted: st.muted}
		for i := range steps.Rows {
			if steps.Float(i, "zeta") == z {
				s.X = append(s.X, math.Log10(steps.Float(i, "regularizer")))
				s.Y = append(s.Y, steps.Float(i, "val_acc")-steps.Float(i, "test_acc"))
			}
		}
		sc.Series = append(sc.Series, s)
	}
	return sc
}

// testPanel is one pair's panel of Figure 4.2 as the paper draws it: test accuracy per
// hyper-step, averaged over replicates, Eq. 1 dashed and Eq. 7 solid, one colour per ζ.
func testPanel(hist *experiments.Table, title string, chosen ...float64) experiments.Panel {
	p := experiments.Panel{Title: title, XLabel: "hyper-step", YLabel: "test accuracy", IntX: true}
	zs := zetas(hist)
	styles := zetaStyles(hist, chosen...)
	for _, z := range zs {
		st := styles[z]
		s := experiments.Series{Label: st.label, Dashed: z == 0, Color: st.color, Muted: st.muted}
		for i := range hist.Rows {
			if hist.Float(i, "zeta") == z {
				s.X, s.Y = append(s.X, hist.Float(i, "step")), append(s.Y, hist.Float(i, "test_acc"))
			}
		}
		p.Series = append(p.Series, s)
	}
	return p
}

// Figures draws Figure 4.2 (test accuracy per hyper-step) and Figure 4.3 (regularizer
// against generalization gap) of every reported pair into dir, a panel per pair, and the
// same of the other stored runs (Others) into a second pair of files, and returns their
// paths; none without a reported pair.
func (t *TableC1) Figures(dir string) ([]string, error) {
	var reported []*storedPair
	for _, k := range Pairs {
		if sp, ok := t.chosen[k]; ok {
			reported = append(reported, sp)
		}
	}
	var paths []string
	for _, f := range []struct {
		runs     []*storedPair
		acc, gap string
	}{{reported, Figure42, Figure43}, {t.otherRuns(), Figure42Others, Figure43Others}} {
		if len(f.runs) == 0 {
			continue
		}
		var acc, gap []experiments.Panel
		for _, sp := range f.runs {
			name := sp.title()
			chosen := sp.chosenZetas()
			acc = append(acc, testPanel(sp.res.Table("history"), name, chosen...))
			// "ρ", not "Spearman ρ": SavePlots centres a title over the axes, so a
			// title wider than them is clipped on the left (the ResNet panels' were).
			gap = append(gap, gapPanel(sp.res.Table("steps"), name+fmt.Sprintf(", ρ = %.2f", sp.p.all.rho), chosen...))
		}
		for _, fig := range []struct {
			name   string
			panels []experiments.Panel
		}{{f.acc, acc}, {f.gap, gap}} {
			p, err := experiments.SavePNG(dir, fig.name, fig.panels...)
			if err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// chosenZetas are the ζ the pair's cells list, each replicate's choice by the selection images
// and by the test set, in that order.
func (sp *storedPair) chosenZetas() []float64 {
	var zs []float64
	for _, r := range sp.p.reps {
		for _, f := range []*fit{r.bySel, r.byTst} {
			if f != nil && !slices.Contains(zs, f.zeta) {
				zs = append(zs, f.zeta)
			}
		}
	}
	return zs
}

// title names a run's panel: its pair, variant, ζ grid size, replicates, width and steps (no
// store ids: the tables say which runs a pair comes from; the grid tells two runs apart).
func (sp *storedPair) title() string {
	name := fmt.Sprintf("%s, %s", pairName(sp.cfg.Model, sp.cfg.Dataset), sp.cfg.variant())
	if h := sp.res.Table("history"); h != nil {
		name += fmt.Sprintf(", %d ζ", len(slices.DeleteFunc(zetas(h), func(z float64) bool { return z == 0 })))
	}
	reps := fmt.Sprintf("%d replicate", len(sp.p.reps))
	if len(sp.p.reps) > 1 {
		reps += "s"
	}
	if len(sp.names) == 1 && len(sp.p.reps) < sp.cfg.Repeats { // a run in progress: of how many
		reps = fmt.Sprintf("%d of %d replicates", len(sp.p.reps), sp.cfg.Repeats)
	}
	name += ": " + reps
	if sp.cfg.resnet() {
		name += ", width " + widthText(sp.cfg.Width) // as the table writes it
	}
	return name + fmt.Sprintf(", %d×%d steps", sp.cfg.InnerSteps, sp.cfg.OuterSteps)
}

// zetaStyle is how each of a panel's ζ is drawn: in its own colour (experiments.ZetaColor, the
// same in every panel of every figure), or muted beyond experiments.MaxSeries, the muted ζ
// sharing one legend entry (on the first of them).
type zetaStyle struct {
	color color.Color
	muted bool
	label string
}

// zetaStyles styles t's ζ: bestZeta's and then chosen's (the ζ the table's cells list) stay in
// colour however many ζ a panel has.
func zetaStyles(t *experiments.Table, chosen ...float64) map[float64]zetaStyle {
	zs := zetas(t)
	var prefer []float64
	if best, ok := bestZeta(t); ok {
		prefer = append(prefer, best)
	}
	for _, z := range chosen {
		if !slices.Contains(prefer, z) {
			prefer = append(prefer, z)
		}
	}
	muted := experiments.HighlightZetas(zs, prefer...)
	var names []string
	for _, z := range muted {
		names = append(names, zetaString(z))
	}
	out := map[float64]zetaStyle{}
	for _, z := range zs {
		st := zetaStyle{color: experiments.ZetaColor(z), label: zetaLabel(z)}
		if i := slices.Index(muted, z); i >= 0 {
			st.muted, st.label = true, ""
			if i == 0 {
				st.label = "ζ=" + strings.Join(names, ",") + " (grey)"
			}
		}
		out[z] = st
	}
	return out
}

// bestZeta is the ζ > 0 of the highest mean test accuracy at the last hyper-step (the
// test-oracle choice of the averaged curves), kept in colour however many ζ a panel has.
func bestZeta(t *experiments.Table) (float64, bool) {
	last := map[float64]float64{}
	for i := range t.Rows {
		z := t.Float(i, "zeta")
		last[z] = max(last[z], t.Float(i, "step"))
	}
	sum, n := map[float64]float64{}, map[float64]float64{}
	for i := range t.Rows {
		if z := t.Float(i, "zeta"); z > 0 && t.Float(i, "step") == last[z] && !math.IsNaN(t.Float(i, "test_acc")) {
			sum[z] += t.Float(i, "test_acc")
			n[z]++
		}
	}
	best, ok := 0.0, false
	for _, z := range zetas(t) {
		if n[z] > 0 && (!ok || sum[z]/n[z] > sum[best]/n[best]) {
			best, ok = z, true
		}
	}
	return best, ok
}

// zetaString writes a ζ as the tables and legends do: whole numbers in full (1000000, not
// 1e+06), others in the shortest form.
func zetaString(z float64) string {
	if z == math.Trunc(z) && math.Abs(z) < 1e15 {
		return strconv.FormatFloat(z, 'f', -1, 64)
	}
	return strconv.FormatFloat(z, 'g', -1, 64)
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
	return "ζ=" + zetaString(z)
}

// historyPanels are Figure 4.2's two panels: test (solid) and validation (dashed) accuracy,
// and the regularizer, per hyper-step for each ζ, one colour per ζ in both.
func historyPanels(hist *experiments.Table, model, dataset string) (acc, reg experiments.Panel) {
	acc = experiments.Panel{Title: fmt.Sprintf("%s on %s: accuracy per hyper-step (Figure 4.2)", model, dataset),
		XLabel: "hyper-step", YLabel: "accuracy", IntX: true}
	reg = experiments.Panel{Title: "regularizer √Σ norm(a_t)² per hyper-step", XLabel: "hyper-step", YLabel: "regularizer", IntX: true}
	zs := zetas(hist)
	styles := zetaStyles(hist)
	for _, z := range zs {
		var xs, va, ta, rg []float64
		for i := range hist.Rows {
			if hist.Float(i, "zeta") != z {
				continue
			}
			xs = append(xs, hist.Float(i, "step"))
			va, ta, rg = append(va, hist.Float(i, "val_acc")), append(ta, hist.Float(i, "test_acc")), append(rg, hist.Float(i, "regularizer"))
		}
		st := styles[z]
		acc.Series = append(acc.Series, experiments.Series{Label: st.label, X: xs, Y: ta, Color: st.color, Muted: st.muted},
			experiments.Series{X: xs, Y: va, Dashed: true, Color: st.color, Muted: st.muted})
		reg.Series = append(reg.Series, experiments.Series{Label: st.label, X: xs, Y: rg, Color: st.color, Muted: st.muted})
	}
	// The line styles' own legend entries (no points: legend only).
	acc.Series = append(acc.Series, experiments.Series{Label: "solid: test", Color: gray},
		experiments.Series{Label: "dashed: validation", Dashed: true, Color: gray})
	return acc, reg
}
