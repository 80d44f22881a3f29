package premise

import (
	"fmt"
	"image/color"
	"math"

	"github.com/hyperflat/hyperflat/experiments"
)

// The colours of Figure 1's two configurations.
var (
	lowColor  = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	highColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// plots draws, from the stored tables alone, Figure 1 (premise_figure1_DATASET.png: the
// training and test metric and loss over the epochs of the configurations of least and
// greatest μ) and, per dataset, each measure against the test metric and the generalization
// gap (premise_measures_DATASET.png).
func plots(res *experiments.Result, dir string) ([]string, error) {
	var out []string
	if path, err := figurePNG(res, dir); err != nil {
		return nil, err
	} else if path != "" {
		out = append(out, path)
	}
	configs, summary := res.Table("configurations"), res.Table("summary")
	if configs == nil || summary == nil {
		return out, nil
	}
	var order []string
	for i := range summary.Rows {
		if d := summary.String(i, "dataset"); len(order) == 0 || order[len(order)-1] != d {
			order = append(order, d)
		}
	}
	for _, d := range order {
		path, err := experiments.SavePNG(dir, fmt.Sprintf("premise_measures_%s.png", d), measurePanels(configs, summary, d)...)
		if err != nil {
			return nil, err
		}
		out = append(out, path)
	}
	return out, nil
}

// figurePNG draws Figure 1 into dir/premise_figure1_DATASET.png when the result has it, and
// returns the path ("" without a figure).
func figurePNG(res *experiments.Result, dir string) (string, error) {
	fig, curves := res.Table("figure1"), res.Table("curves")
	if fig == nil || curves == nil || len(fig.Rows) != 2 {
		return "", nil
	}
	return experiments.SavePNG(dir, figureName(fig.String(0, "dataset")), figurePanels(fig, curves)...)
}

func figureName(dataset string) string { return fmt.Sprintf("premise_figure1_%s.png", dataset) }

// figurePanels are Figure 1's two charts: the metric, then the loss (log scale), each with
// the training (solid) and test (dashed) curves of the low-μ and high-μ configurations.
func figurePanels(fig, curves *experiments.Table) []experiments.Panel {
	d, metric := fig.String(0, "dataset"), fig.String(0, "metric")
	title := fmt.Sprintf("Figure 1, %s: low μ = %.3g (configuration %d) vs high μ = %.3g (configuration %d)",
		d, fig.Float(0, "mu"), fig.Int(0, "index"), fig.Float(1, "mu"), fig.Int(1, "index"))
	top := experiments.Panel{Title: title, XLabel: "epoch", YLabel: metric, IntX: true}
	bottom := experiments.Panel{Title: "training (solid) and test (dashed) loss", XLabel: "epoch", YLabel: "mean log loss", IntX: true, LogY: true}
	for row, c := range []color.Color{lowColor, highColor} {
		label := fig.String(row, "strong_convexity") + " μ"
		idx := fig.Int(row, "index")
		var epochs, trainM, testM, trainL, testL []float64
		for i := range curves.Rows {
			if curves.String(i, "dataset") != d || curves.Int(i, "index") != idx {
				continue
			}
			epochs = append(epochs, curves.Float(i, "epoch"))
			trainM, testM = append(trainM, curves.Float(i, "train_metric")), append(testM, curves.Float(i, "test_metric"))
			trainL, testL = append(trainL, positive(curves.Float(i, "train_loss"))), append(testL, positive(curves.Float(i, "test_loss")))
		}
		top.Series = append(top.Series,
			experiments.Series{Label: label + ", training", X: epochs, Y: trainM, Color: c},
			experiments.Series{Label: label + ", test", X: epochs, Y: testM, Color: c, Dashed: true})
		bottom.Series = append(bottom.Series,
			experiments.Series{Label: label + ", training", X: epochs, Y: trainL, Color: c},
			experiments.Series{Label: label + ", test", X: epochs, Y: testL, Color: c, Dashed: true})
	}
	return []experiments.Panel{top, bottom}
}

// positive keeps a value a log axis can draw (NaN otherwise, which the chart skips).
func positive(x float64) float64 {
	if x > 0 {
		return x
	}
	return math.NaN()
}

// measurePanels are one chart per measure: the usable configurations' test metric and
// generalization gap against log10 of the measure (configurations whose measure is not
// positive are left out of the chart, not of the correlations), with Spearman's ρ.
func measurePanels(configs, summary *experiments.Table, dataset string) []experiments.Panel {
	var panels []experiments.Panel
	for _, m := range measures {
		var x, test, gap []float64
		metric, hidden := "", 0
		for i := range configs.Rows {
			if configs.String(i, "dataset") != dataset || configs.String(i, "error") != "" {
				continue
			}
			metric = configs.String(i, "metric")
			x = append(x, math.Log10(positive(configs.Float(i, m.name))))
			hidden += b2i(math.IsNaN(x[len(x)-1]))
			test, gap = append(test, configs.Float(i, "test_metric")), append(gap, configs.Float(i, "gap"))
		}
		rhoTest, rhoGap, n := math.NaN(), math.NaN(), 0
		for i := range summary.Rows {
			if summary.String(i, "dataset") == dataset && summary.String(i, "measure") == m.name {
				rhoTest, rhoGap, n = summary.Float(i, "rho_test"), summary.Float(i, "rho_gap"), summary.Int(i, "n")
			}
		}
		xl := "log10 " + m.name
		if hidden > 0 {
			xl += fmt.Sprintf(" (%d configurations ≤ 0 not drawn)", hidden)
		}
		panels = append(panels, experiments.Panel{
			Title:  fmt.Sprintf("%s: %s (Spearman ρ, n = %d: test %.2f, gap %.2f)", dataset, m.name, n, rhoTest, rhoGap),
			XLabel: xl, YLabel: metric,
			Series: []experiments.Series{
				{Label: "test " + metric, X: x, Y: test, Points: true, Color: lowColor},
				{Label: "gap (train − test)", X: x, Y: gap, Points: true, Color: highColor},
			}})
	}
	return panels
}
