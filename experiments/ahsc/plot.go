package ahsc

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plots draws, for every dataset, Table 1's scores (ahsc_scores_DATASET.png), the searches'
// optimization histories (ahsc_history_DATASET.png, when the result has the evaluations
// table), AHSC's μ against the trained configurations' test metric (ahsc_mu_DATASET.png,
// when the screenings table has a trained ahsc row) and Figure 2's run times
// (ahsc_runtime_DATASET.png), from the stored tables alone.
func plots(res *experiments.Result, dir string) ([]string, error) {
	summary := res.Table("summary")
	if summary == nil {
		return nil, fmt.Errorf("ahsc: result has no summary table")
	}
	var order []string
	methods := map[string][]string{}
	for i := range summary.Rows {
		d := summary.String(i, "dataset")
		if _, ok := methods[d]; !ok {
			order = append(order, d)
		}
		methods[d] = append(methods[d], summary.String(i, "method"))
	}
	runs, evals, settings := res.Table("runs"), res.Table("evaluations"), res.Table("settings")
	var out []string
	for _, d := range order {
		if runs != nil {
			pl, err := scorePlot(runs, summary, d, methods[d])
			if err != nil {
				return nil, err
			}
			path, err := experiments.SavePlots(dir, fmt.Sprintf("ahsc_scores_%s.png", d), 6.5*vg.Inch, 4*vg.Inch, pl)
			if err != nil {
				return nil, err
			}
			out = append(out, path)
		}
		if evals != nil {
			path, err := experiments.SavePNG(dir, fmt.Sprintf("ahsc_history_%s.png", d), historyPanel(evals, settings, d, methods[d]))
			if err != nil {
				return nil, err
			}
			out = append(out, path)
		}
		if screens := res.Table("screenings"); screens != nil {
			if pl := muPlot(screens, d); pl != nil {
				path, err := experiments.SavePlots(dir, fmt.Sprintf("ahsc_mu_%s.png", d), 6.5*vg.Inch, 4*vg.Inch, pl)
				if err != nil {
					return nil, err
				}
				out = append(out, path)
			}
		}
		mu, sd, n := runtimeSeconds(d, methods[d], runs, summary)
		path, err := runtimeBars(dir, d, methods[d], mu, sd, n)
		if err != nil {
			return nil, err
		}
		out = append(out, path)
	}
	return out, nil
}

// runtimeSeconds returns each method's mean wall time per search on one dataset and its
// standard deviation over the repeats, from the runs table (the summary's mean alone, and NaN
// deviations, when a result has none), and the most repeats a method has.
func runtimeSeconds(dataset string, methods []string, runs, summary *experiments.Table) (mu, sd []float64, n int) {
	for _, m := range methods {
		secs := []float64{}
		if runs != nil {
			secs = methodValues(runs, dataset, m, "seconds")
		}
		if len(secs) == 0 {
			mu, sd = append(mu, lookup(summary, dataset, m, "seconds")), append(sd, math.NaN())
			continue
		}
		mu, sd, n = append(mu, stats.Mean(secs)), append(sd, stats.StdDev(secs)), max(n, len(secs))
	}
	return mu, sd, n
}

// runtimePNG draws Figure 2's comparison for one dataset without error bars.
func runtimePNG(dir, dataset string, methods []string, seconds []float64) (string, error) {
	return runtimeBars(dir, dataset, methods, seconds, nil, 0)
}

// runtimeBars draws Figure 2's comparison for one dataset: each method's mean wall time per
// search as a bar in its colour, with ±1 standard deviation over the n repeats where sd has
// one, into dir/ahsc_runtime_DATASET.png. A NaN mean (no run) leaves an empty slot.
func runtimeBars(dir, dataset string, methods []string, mu, sd []float64, n int) (string, error) {
	pl := plot.New()
	pl.Y.Label.Text = "seconds per search"
	top := 0.0
	for i, m := range methods {
		if math.IsNaN(mu[i]) {
			continue
		}
		bar, err := plotter.NewBarChart(plotter.Values{mu[i]}, vg.Points(28))
		if err != nil {
			return "", err
		}
		bar.XMin, bar.Color, bar.LineStyle.Width = float64(i), experiments.MethodColor(m), 0
		pl.Add(bar)
		top = math.Max(top, mu[i])
		if i < len(sd) && !math.IsNaN(sd[i]) {
			eb, err := plotter.NewYErrorBars(errorBar{x: float64(i), y: mu[i], err: sd[i]})
			if err != nil {
				return "", err
			}
			eb.LineStyle.Width, eb.CapWidth = vg.Points(1.2), vg.Points(10)
			pl.Add(eb)
			top = math.Max(top, mu[i]+sd[i])
		}
	}
	pl.Title.Text = fmt.Sprintf("%s: mean wall time per search", dataset)
	if n > 1 {
		pl.Title.Text += fmt.Sprintf(" (error bars: ±1 s.d. over %d repeats)", n)
	}
	pl.NominalX(methods...)
	pl.Y.Min, pl.Y.Max = 0, 1.12*top
	if top == 0 {
		pl.Y.Max = 1
	}
	return experiments.SavePlots(dir, fmt.Sprintf("ahsc_runtime_%s.png", dataset), 6.5*vg.Inch, 3.5*vg.Inch, pl)
}

// errorBar is one bar's ±err, as plotter.NewYErrorBars reads it.
type errorBar struct{ x, y, err float64 }

func (e errorBar) Len() int                      { return 1 }
func (e errorBar) XY(int) (float64, float64)     { return e.x, e.y }
func (e errorBar) YError(int) (float64, float64) { return e.err, e.err }
