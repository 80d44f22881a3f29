package ahsc

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The figures below read the stored tables by column name only: runs (one row per repeat of
// a method), summary (the paper's value), settings (the objective the searches saw) and
// evaluations (every call; the figures read its full-fidelity rows).

// methodValues returns the column's finite values of the runs rows of one dataset and method.
func methodValues(runs *experiments.Table, dataset, method, column string) []float64 {
	var vs []float64
	for i := range runs.Rows {
		if runs.String(i, "dataset") == dataset && runs.String(i, "method") == method {
			if v := runs.Float(i, column); !math.IsNaN(v) && !math.IsInf(v, 0) {
				vs = append(vs, v)
			}
		}
	}
	return vs
}

// lookup returns the summary's column for one dataset and method (NaN when absent).
func lookup(t *experiments.Table, dataset, method, column string) float64 {
	for i := range t.Rows {
		if t.String(i, "dataset") == dataset && t.String(i, "method") == method {
			return t.Float(i, column)
		}
	}
	return math.NaN()
}

// lighter mixes c with white (a box's fill).
func lighter(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)/3 + 0xff*2/3) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff}
}

// scorePlot is one dataset's Table 1 comparison: each method's values over the repeats as a
// box (median and quartiles) with every repeat's point, its mean, and the paper's value.
func scorePlot(runs, summary *experiments.Table, dataset string, methods []string) (*plot.Plot, error) {
	pl := plot.New()
	metric := ""
	for i := range runs.Rows {
		if runs.String(i, "dataset") == dataset {
			metric = runs.String(i, "metric")
		}
	}
	pl.Title.Text = fmt.Sprintf("%s: %s per repeat (box: median and quartiles)", dataset, metric)
	pl.Y.Label.Text = metric
	paperGlyph := draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
	meanGlyph := draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.5), Shape: draw.PyramidGlyph{}}
	pointGlyph := draw.GlyphStyle{Color: color.Gray{Y: 0x40}, Radius: vg.Points(2.5), Shape: draw.RingGlyph{}}
	var marks, papers []plot.Plotter
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, m := range methods {
		c := experiments.MethodColor(m)
		vs := methodValues(runs, dataset, m, "value")
		if p := lookup(summary, dataset, m, "paper"); !math.IsNaN(p) {
			papers = append(papers, scatter(plotter.XYs{{X: float64(i), Y: p}}, paperGlyph, nil))
			lo, hi = math.Min(lo, p), math.Max(hi, p)
		}
		if len(vs) > 0 {
			lo, hi = math.Min(lo, slices.Min(vs)), math.Max(hi, slices.Max(vs))
			m, err := boxWithPoints(pl, float64(i), vs, c, pointGlyph, meanGlyph)
			if err != nil {
				return nil, err
			}
			marks = append(marks, m...)
		}
	}
	pl.Add(append(marks, papers...)...)
	pl.NominalX(methods...)
	centerSlots(pl, len(methods))
	pl.Legend.Add("one repeat", scatter(nil, pointGlyph, nil))
	pl.Legend.Add("mean", scatter(nil, meanGlyph, nil))
	pl.Legend.Add("paper (Table 1)", scatter(nil, paperGlyph, nil))
	padY(pl, lo, hi)
	return pl, nil
}

// boxWithPoints adds to pl a box (median and quartiles) of vs at x in colour c and returns
// what is drawn over it, once every box is in: each value as a point (jittered within the
// box's slot) and the mean.
func boxWithPoints(pl *plot.Plot, x float64, vs []float64, c color.Color, point, mean draw.GlyphStyle) ([]plot.Plotter, error) {
	box, err := plotter.NewBoxPlot(vg.Points(30), x, plotter.Values(vs))
	if err != nil {
		return nil, err
	}
	box.FillColor = lighter(c)
	box.BoxStyle.Color, box.MedianStyle.Color, box.WhiskerStyle.Color = c, c, c
	box.MedianStyle.Width = vg.Points(2)
	box.GlyphStyle.Radius = 0 // every point is drawn, outliers included
	pl.Add(box)
	pts := make(plotter.XYs, len(vs))
	for j, v := range vs {
		pts[j] = plotter.XY{X: x + jitter(j, len(vs)), Y: v}
	}
	return []plot.Plotter{scatter(pts, point, c), scatter(plotter.XYs{{X: x, Y: stats.Mean(vs)}}, mean, nil)}, nil
}

// scatter draws pts in glyph style g, coloured c unless c is nil.
func scatter(pts plotter.XYs, g draw.GlyphStyle, c color.Color) *plotter.Scatter {
	s := &plotter.Scatter{XYs: pts, GlyphStyle: g}
	if c != nil {
		s.GlyphStyle.Color = c
	}
	return s
}

// minSlots is the fewest method slots a box plot's x axis spans, so that a box's points,
// jittered in slot units, stay over its box (a fixed width in points) when there are few.
const minSlots = 6

// centerSlots sets pl's x range to n slots, centred in at least minSlots, and returns it.
func centerSlots(pl *plot.Plot, n int) (lo, hi float64) {
	pad := float64(max(minSlots-n, 0)) / 2
	pl.X.Min, pl.X.Max = -0.5-pad, float64(n)-0.5+pad
	return pl.X.Min, pl.X.Max
}

// jitter spreads n points of one box over ±0.15 of its slot, so that equal values stay visible.
func jitter(j, n int) float64 {
	if n < 2 {
		return 0
	}
	return 0.3 * (float64(j)/float64(n-1) - 0.5)
}

// padY leaves a tenth of the data's range [lo, hi] free above and below, so that nothing
// touches the frame.
func padY(pl *plot.Plot, lo, hi float64) {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return
	}
	pad := 0.1 * (hi - lo)
	if pad == 0 {
		pad = 0.05*math.Abs(hi) + 0.05
	}
	pl.Y.Min, pl.Y.Max = lo-pad, hi+pad
}

// historyObjective names the evaluations column of the objective the searches saw on dataset
// (from the settings table) and whether lower is better: cross-validated log loss for
// Bayesmark's datasets, the validation metric elsewhere.
func historyObjective(settings, evals *experiments.Table, dataset string) (column, label string, lower bool) {
	objective := ""
	if settings != nil {
		for i := range settings.Rows {
			if settings.String(i, "dataset") == dataset {
				objective = settings.String(i, "objective")
			}
		}
	}
	if strings.Contains(objective, "log loss") && evals.Column("val_log_loss") >= 0 {
		return "val_log_loss", objective, true
	}
	metric := ""
	for i := range evals.Rows {
		if evals.String(i, "dataset") == dataset {
			metric = evals.String(i, "metric")
		}
	}
	return "val_metric", "validation " + metric, false
}

// bestSoFar returns, per repeat of one dataset and method, the best visible objective after
// each full-fidelity evaluation (failed ones count as calls and improve nothing).
func bestSoFar(evals *experiments.Table, dataset, method, column string, lower bool) [][]float64 {
	type call struct {
		n int
		v float64
	}
	byRepeat := map[int][]call{}
	for i := range evals.Rows {
		if evals.String(i, "dataset") != dataset || evals.String(i, "method") != method || evals.Value(i, "hidden") == true {
			continue
		}
		if f := evals.Float(i, "fidelity"); !math.IsNaN(f) && f < 1 {
			continue
		}
		v := evals.Float(i, column)
		if evals.Value(i, "failed") == true || math.IsInf(v, 0) {
			v = math.NaN()
		}
		r := evals.Int(i, "repeat")
		byRepeat[r] = append(byRepeat[r], call{evals.Int(i, "call"), v})
	}
	repeats := make([]int, 0, len(byRepeat))
	for r := range byRepeat {
		repeats = append(repeats, r)
	}
	slices.Sort(repeats)
	out := make([][]float64, len(repeats))
	for k, r := range repeats {
		calls := byRepeat[r]
		sort.SliceStable(calls, func(a, b int) bool { return calls[a].n < calls[b].n })
		best := math.NaN()
		for _, c := range calls {
			if !math.IsNaN(c.v) && (math.IsNaN(best) || (lower && c.v < best) || (!lower && c.v > best)) {
				best = c.v
			}
			out[k] = append(out[k], best)
		}
	}
	return out
}

// quantile is the q-quantile of the sorted xs, interpolated linearly (NumPy's default).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	h := q * float64(len(xs)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}

// historySeries is one method's best-so-far curve: the median over the repeats after each
// evaluation with the interquartile band. A repeat that made fewer evaluations keeps its
// final best (its search had ended).
func historySeries(curves [][]float64, method string) experiments.Series {
	s := experiments.Series{Label: method, Color: experiments.MethodColor(method), Emphasis: method == "ahsc"}
	n := 0
	for _, c := range curves {
		n = max(n, len(c))
	}
	for k := range n {
		var at []float64
		for _, c := range curves {
			if len(c) == 0 {
				continue
			}
			if v := c[min(k, len(c)-1)]; !math.IsNaN(v) {
				at = append(at, v)
			}
		}
		slices.Sort(at)
		s.X = append(s.X, float64(k+1))
		s.Y, s.Lo, s.Hi = append(s.Y, quantile(at, 0.5)), append(s.Lo, quantile(at, 0.25)), append(s.Hi, quantile(at, 0.75))
	}
	return s
}

// historyPanel is one dataset's optimization history: best-so-far visible objective against
// full-fidelity evaluations, median and interquartile band per method.
func historyPanel(evals, settings *experiments.Table, dataset string, methods []string) experiments.Panel {
	column, label, lower := historyObjective(settings, evals, dataset)
	dir := "higher is better"
	if lower {
		dir = "lower is better"
	}
	p := experiments.Panel{Title: fmt.Sprintf("%s: best %s so far (median, interquartile band)", dataset, label),
		XLabel: "full-fidelity evaluations", YLabel: fmt.Sprintf("best so far (%s)", dir), IntX: true, LogY: lower}
	for _, m := range methods {
		if curves := bestSoFar(evals, dataset, m, column, lower); len(curves) > 0 {
			s := historySeries(curves, m)
			for _, v := range slices.Concat(s.Y, s.Lo, s.Hi) {
				p.LogY = p.LogY && (math.IsNaN(v) || v > 0) // a log axis needs positive values
			}
			p.Series = append(p.Series, s)
		}
	}
	muteBeyond(p.Series, experiments.MaxSeries)
	return p
}

// muteBeyond draws AHSC and the first methods up to max in their colours and the rest muted,
// under one legend entry naming them (AHSC, drawn on top, is never muted).
func muteBeyond(series []experiments.Series, max int) {
	if len(series) <= max {
		return
	}
	var names []string
	first, kept := -1, b2i(slices.ContainsFunc(series, func(s experiments.Series) bool { return s.Label == "ahsc" }))
	for i := range series {
		if series[i].Label == "ahsc" {
			continue
		}
		if kept < max {
			kept++
			continue
		}
		names = append(names, series[i].Label)
		series[i].Muted, series[i].Label, series[i].Lo, series[i].Hi = true, "", nil, nil
		if first < 0 {
			first = i
		}
	}
	series[first].Label = strings.Join(names, ", ") + " (grey)"
}

// muPoints reads the screenings table's rows of one dataset's ahsc searches: the trained
// configurations' (μ, test metric), the μ of those screened but not trained, and how many
// were dropped at screening (no μ to place), and how many repeats the rows come from.
func muPoints(t *experiments.Table, dataset string) (trained, untrained plotter.XYs, dropped, repeats int) {
	seen := map[int]bool{}
	for i := range t.Rows {
		if t.String(i, "dataset") != dataset || t.String(i, "method") != "ahsc" {
			continue
		}
		seen[t.Int(i, "repeat")] = true
		mu := t.Float(i, "score")
		switch {
		case t.String(i, "dropped_reason") != "" || !(mu > 0) || math.IsInf(mu, 0):
			dropped++
		case t.Value(i, "trained") == true:
			if y := t.Float(i, "test_metric"); !math.IsNaN(y) && !math.IsInf(y, 0) {
				trained = append(trained, plotter.XY{X: mu, Y: y})
			}
		default:
			untrained = append(untrained, plotter.XY{X: mu})
		}
	}
	return trained, untrained, dropped, len(seen)
}

// muPlot is μ against the final test metric of one dataset's ahsc screenings (issue 18), from
// the screenings table alone: a point per fully trained configuration over every repeat, the
// screened but untrained ones as small marks along the x axis; nil when no configuration was
// trained. A μ range wider than 10× is drawn on a log scale.
func muPlot(t *experiments.Table, dataset string) *plot.Plot {
	trained, untrained, dropped, repeats := muPoints(t, dataset)
	if len(trained) == 0 {
		return nil
	}
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s: AHSC screening μ against the trained configurations' test metric", dataset)
	pl.X.Label.Text, pl.Y.Label.Text = "μ (one-epoch screening)", "test metric after full training"
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, p := range slices.Concat(trained, untrained) {
		xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
	}
	for _, p := range trained {
		ylo, yhi = math.Min(ylo, p.Y), math.Max(yhi, p.Y)
	}
	padY(pl, ylo, yhi)
	c := experiments.MethodColor("ahsc")
	pl.Add(scatter(trained, draw.GlyphStyle{Radius: vg.Points(3), Shape: draw.CircleGlyph{}}, c))
	pl.Legend.Add(fmt.Sprintf("trained (%d, %d repeats)", len(trained), repeats), scatter(nil, draw.GlyphStyle{Radius: vg.Points(3), Shape: draw.CircleGlyph{}}, c))
	if len(untrained) > 0 {
		pl.Y.Min -= 0.1 * (pl.Y.Max - pl.Y.Min) // a strip below the trained points
		base := pl.Y.Min + 0.04*(pl.Y.Max-pl.Y.Min)
		for i := range untrained {
			untrained[i].Y = base
		}
		g := draw.GlyphStyle{Color: color.Gray{Y: 0x70}, Radius: vg.Points(2), Shape: draw.PlusGlyph{}}
		pl.Add(scatter(untrained, g, nil))
		pl.Legend.Add(fmt.Sprintf("screened, not trained (%d; μ only, on the x axis)", len(untrained)), scatter(nil, g, nil))
	}
	if dropped > 0 {
		pl.Legend.Add(fmt.Sprintf("dropped at screening: %d (not shown)", dropped))
	}
	if xlo > 0 && xhi > 10*xlo {
		pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, experiments.LogTicks{}
		pl.X.Min, pl.X.Max = xlo/1.25, xhi*1.25
	} else {
		pad := 0.05*(xhi-xlo) + 0.01*math.Abs(xhi)
		pl.X.Min, pl.X.Max = xlo-pad, xhi+pad
	}
	return pl
}
