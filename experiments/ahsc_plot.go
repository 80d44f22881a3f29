package experiments

import (
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// ahscRuntimePNG draws Figure 2's comparison for one dataset: mean wall time per method as
// bars, into dir/ahsc_runtime_DATASET.png.
func ahscRuntimePNG(dir, dataset string, methods []string, seconds []float64) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s: mean wall time per search", dataset)
	pl.Y.Label.Text = "seconds"
	vals := make(plotter.Values, len(seconds))
	for i, s := range seconds {
		if s == s { // NaN (no run) draws as an empty bar
			vals[i] = s
		}
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(28))
	if err != nil {
		return "", err
	}
	bars.Color = palette[0]
	bars.LineStyle.Width = 0
	pl.Add(bars)
	pl.NominalX(methods...)
	path := filepath.Join(dir, fmt.Sprintf("ahsc_runtime_%s.png", dataset))
	return path, pl.Save(6*vg.Inch, 3.5*vg.Inch, path)
}
