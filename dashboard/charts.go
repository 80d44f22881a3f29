package dashboard

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"regexp"

	"github.com/hyperflat/hyperflat/experiments"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// distribution names, for one experiment, the table whose rows are one final score each and
// the columns to read: one chart per group value, one box per method.
type distribution struct {
	table, group, method, value, label string
}

// distributions are the score distributions drawn for each experiment, from its stored tables.
var distributions = map[string]distribution{
	"ahsc":        {table: "runs", group: "dataset", method: "method", value: "value", label: "score (the dataset's metric)"},
	"freedman":    {table: "summary", group: "variant", method: "method", value: "test_mse", label: "test MSE of the selected model"},
	"weightdecay": {table: "summary", group: "dataset", method: "method", value: "test_acc", label: "test accuracy"},
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// distributionCharts draws, as SVG, the spread of final scores per method for each group of
// the result's score table; a result without that table (or its columns) has none.
func distributionCharts(res *experiments.Result) ([]figure, error) {
	d, ok := distributions[res.Experiment]
	if !ok {
		return nil, nil
	}
	t := res.Table(d.table)
	if t == nil || t.Column(d.group) < 0 || t.Column(d.method) < 0 || t.Column(d.value) < 0 {
		return nil, nil
	}
	var groups []string
	methods := map[string][]string{}
	values := map[string]map[string][]float64{}
	for i := range t.Rows {
		g, m, v := t.String(i, d.group), t.String(i, d.method), t.Float(i, d.value)
		if values[g] == nil {
			groups = append(groups, g)
			values[g] = map[string][]float64{}
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if values[g][m] == nil {
			methods[g] = append(methods[g], m)
		}
		values[g][m] = append(values[g][m], v)
	}
	var out []figure
	for _, g := range groups {
		if len(methods[g]) == 0 {
			continue
		}
		title := fmt.Sprintf("%s %s: %s per method", d.group, g, d.value)
		svg, err := boxChart(title, d.label, methods[g], values[g])
		if err != nil {
			return out, fmt.Errorf("chart %s: %w", title, err)
		}
		name := "distribution_" + unsafeName.ReplaceAllString(g, "_") + ".svg"
		out = append(out, figure{Name: name, Title: title, svg: svg})
	}
	return out, nil
}

var boxColor = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0x50}

// boxChart draws one box per method with its points over it (runs are few: the points say
// more than the quartiles).
func boxChart(title, ylabel string, methods []string, values map[string][]float64) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, m := range methods {
		vs := plotter.Values(values[m])
		for _, v := range vs {
			lo, hi = min(lo, v), max(hi, v)
		}
		box, err := plotter.NewBoxPlot(vg.Points(24), float64(i), vs)
		if err != nil {
			return nil, err
		}
		box.FillColor = boxColor
		pts := make(plotter.XYs, len(vs))
		for j, v := range vs {
			// A small deterministic spread keeps equal scores apart.
			dx := 0.0
			if len(vs) > 1 {
				dx = 0.04 * float64(j%5-2)
			}
			pts[j] = plotter.XY{X: float64(i) + dx, Y: v}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Radius = vg.Points(2)
		sc.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
		p.Add(box, sc)
	}
	p.NominalX(methods...)
	// Room around the extremes, which plot's autoscaling puts on the frame.
	p.X.Min, p.X.Max = -0.5, float64(len(methods))-0.5
	pad := 0.08 * (hi - lo)
	if pad == 0 {
		pad = 0.05*math.Abs(hi) + 1e-9
	}
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	c := vgsvg.New(6*vg.Inch, 3.5*vg.Inch)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
