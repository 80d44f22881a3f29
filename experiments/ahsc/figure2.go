package ahsc

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The paper's Figure 2 (Section 4.1) is captioned "Algorithm runtimes on the vehicle dataset";
// the text reads it as "Our approach requires between 13% to 33% of the runtime compared to
// other algorithms". Its figure 2 here has both: each method's wall time per search over the
// repeats, and AHSC's time as a share of each other method's on the same repeat (same split,
// same data), as box plots over the repeats.

// paperShareLo and paperShareHi are that range, in percent.
const paperShareLo, paperShareHi = 13.0, 33.0

// figure2Data is one dataset's run times in one stored run: per method (in the summary's
// order), the seconds of each repeat's search.
type figure2Data struct {
	dataset, protocol string
	run               int64
	methods           []string
	seconds           []map[int]float64 // per method: repeat → seconds
}

// figure2Of reads dataset's run times from a result's runs table; ok is false when AHSC or
// every other method has none (no figure to draw).
func figure2Of(res *experiments.Result, run int64, dataset string) (figure2Data, bool) {
	f := figure2Data{dataset: dataset, protocol: protocolOf(res), run: run}
	runs, summary := res.Table("runs"), res.Table("summary")
	if runs == nil || summary == nil {
		return f, false
	}
	for i := range summary.Rows {
		if summary.String(i, "dataset") != dataset {
			continue
		}
		m := summary.String(i, "method")
		secs := map[int]float64{}
		for k := range runs.Rows {
			if runs.String(k, "dataset") == dataset && runs.String(k, "method") == m {
				if v := runs.Float(k, "seconds"); v > 0 && !math.IsInf(v, 0) {
					secs[runs.Int(k, "repeat")] = v
				}
			}
		}
		f.methods, f.seconds = append(f.methods, m), append(f.seconds, secs)
	}
	k := slices.Index(f.methods, "ahsc")
	return f, k >= 0 && len(f.seconds[k]) > 0 && len(f.methods) > 1
}

// values returns method k's seconds in repeat order.
func (f figure2Data) values(k int) []float64 {
	repeats := make([]int, 0, len(f.seconds[k]))
	for r := range f.seconds[k] {
		repeats = append(repeats, r)
	}
	slices.Sort(repeats)
	vs := make([]float64, len(repeats))
	for i, r := range repeats {
		vs[i] = f.seconds[k][r]
	}
	return vs
}

// shares returns, for method k, AHSC's seconds over method k's on every repeat both have,
// in percent and repeat order.
func (f figure2Data) shares(k int) []float64 {
	a := f.seconds[slices.Index(f.methods, "ahsc")]
	var repeats []int
	for r := range f.seconds[k] {
		if _, ok := a[r]; ok {
			repeats = append(repeats, r)
		}
	}
	slices.Sort(repeats)
	vs := make([]float64, len(repeats))
	for i, r := range repeats {
		vs[i] = 100 * a[r] / f.seconds[k][r]
	}
	return vs
}

// baselines are the methods other than AHSC, with their indices.
func (f figure2Data) baselines() (names []string, idx []int) {
	for k, m := range f.methods {
		if m != "ahsc" {
			names, idx = append(names, m), append(idx, k)
		}
	}
	return names, idx
}

// figure2Plots draws the two panels: wall time per search per method, and AHSC's share of
// each baseline's, with the paper's 13–33% as a band.
func figure2Plots(f figure2Data) ([]*plot.Plot, error) {
	point := draw.GlyphStyle{Color: color.Gray{Y: 0x40}, Radius: vg.Points(2.5), Shape: draw.RingGlyph{}}
	mean := draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3.5), Shape: draw.PyramidGlyph{}}
	n := 0
	for k := range f.methods {
		n = max(n, len(f.seconds[k]))
	}
	times := plot.New()
	times.Title.Text = fmt.Sprintf("%s, protocol %s: wall time per search over %d repeats (box: median and quartiles)", f.dataset, f.protocol, n)
	times.Y.Label.Text = "seconds per search"
	secs := make([][]float64, len(f.methods))
	for k := range f.methods {
		secs[k] = f.values(k)
	}
	hi, err := addBoxes(times, f.methods, secs, 0, point, mean)
	if err != nil {
		return nil, err
	}
	centerSlots(times, len(f.methods))
	times.Y.Min, times.Y.Max = 0, 1.1*hi

	share := plot.New()
	share.Title.Text = "AHSC's wall time as a share of each method's, same repeat"
	share.Y.Label.Text = "AHSC / method (%)"
	names, idx := f.baselines()
	lo, hi := centerSlots(share, len(names))
	band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: paperShareLo}, {X: hi, Y: paperShareLo}, {X: hi, Y: paperShareHi}, {X: lo, Y: paperShareHi}})
	if err != nil {
		return nil, err
	}
	band.Color, band.LineStyle.Width = color.Gray{Y: 0xdd}, 0
	share.Add(band)
	share.Legend.Add("paper, Section 4.1: 13–33%", band)
	shares := make([][]float64, len(idx))
	for j, k := range idx {
		shares[j] = f.shares(k)
	}
	top, err := addBoxes(share, names, shares, paperShareHi, point, mean)
	if err != nil {
		return nil, err
	}
	share.X.Min, share.X.Max = lo, hi // as set before the boxes were added
	share.Y.Min, share.Y.Max = 0, 1.1*top
	times.Y.Tick.Marker, share.Y.Tick.Marker = plainTicks{}, plainTicks{}
	return []*plot.Plot{times, share}, nil
}

// addBoxes draws series[i] as a box with its points at x = i in the colour of methods[i],
// names the slots, adds the points' legend and returns the greatest value (floor if none is
// greater).
func addBoxes(pl *plot.Plot, methods []string, series [][]float64, floor float64, point, mean draw.GlyphStyle) (float64, error) {
	var marks []plot.Plotter
	top := floor
	for i, vs := range series {
		if len(vs) == 0 {
			continue
		}
		ms, err := boxWithPoints(pl, float64(i), vs, experiments.MethodColor(methods[i]), point, mean)
		if err != nil {
			return 0, err
		}
		marks, top = append(marks, ms...), math.Max(top, slices.Max(vs))
	}
	pl.Add(marks...)
	pl.NominalX(methods...)
	pl.Legend.Add("one repeat", scatter(nil, point, nil))
	pl.Legend.Add("mean", scatter(nil, mean, nil))
	return top, nil
}

// figure2File names the figure of a dataset under a protocol, next to table1.md.
func figure2File(dataset, protocol string) string {
	return fmt.Sprintf("figure2_%s_%s.png", dataset, protocol)
}

// table1Figure2s reads Figure 2's data for every dataset and protocol of Table 1's cells,
// from the run those cells come from (Table1Cells' choice: the latest run holding them).
func table1Figure2s(t experiments.Table, runs []StoredRun) []figure2Data {
	type key struct {
		dataset, protocol string
		run               int64
	}
	var out []figure2Data
	seen := map[key]bool{}
	for i := range t.Rows {
		k := key{t.String(i, "dataset"), t.String(i, "protocol"), int64(t.Int(i, "run"))}
		if seen[k] {
			continue
		}
		seen[k] = true
		for _, sr := range runs {
			if sr.ID == k.run {
				if f, ok := figure2Of(sr.Result, sr.ID, k.dataset); ok {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// WriteTable1Figures writes Figure 2 (figure2_DATASET_PROTOCOL.png) for every dataset and
// protocol of the stored runs into dir, the figures Table1Markdown links, and returns their
// paths.
func WriteTable1Figures(dir string, runs ...StoredRun) ([]string, error) {
	t, err := Table1Cells(runs...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range table1Figure2s(t, runs) {
		pls, err := figure2Plots(f)
		if err != nil {
			return nil, err
		}
		path, err := experiments.SavePlots(dir, figure2File(f.dataset, f.protocol), 7*vg.Inch, 3.4*vg.Inch, pls...)
		if err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeFigure2Section is Table 1's Figure 2 section: each figure, linked, with the medians it
// shows.
func writeFigure2Section(b *bytes.Buffer, t experiments.Table, runs []StoredRun) {
	figs := table1Figure2s(t, runs)
	b.WriteString("\n## Figure 2: run times\n\nThe paper's Figure 2 (Section 4.1) is \"Algorithm runtimes on the vehicle dataset\" " +
		"(an RTX 2060 Super), read in the text as \"Our approach requires between 13% to 33% of the runtime compared to other " +
		"algorithms\". Each figure below has both, from the stored runs: every method's wall time per search (top), and AHSC's " +
		"time as a share of each other method's on the same repeat (bottom; grey band: the paper's 13–33%), box plots over the " +
		"repeats. The seconds are wall times of cells run side by side on a shared machine (`--workers`), so they carry its load.\n")
	if len(figs) == 0 {
		b.WriteString("\nNo stored run has AHSC's and another method's run times.\n")
		return
	}
	for _, f := range figs {
		file := figure2File(f.dataset, f.protocol)
		fmt.Fprintf(b, "\n### %s, protocol %s (run %d)\n\n![Figure 2: %s, %s](%s)\n\n| method | median seconds [95%% interval] | AHSC's share: median (min–max) [95%% interval] | n |\n|---|---|---|---|\n",
			f.dataset, f.protocol, f.run, f.dataset, f.protocol, filepath.ToSlash(file))
		for k, m := range f.methods {
			secs := f.values(k)
			cell := "–"
			if sh := f.shares(k); m != "ahsc" && len(sh) > 0 {
				slices.Sort(sh)
				cell = fmt.Sprintf("%.0f%% (%.0f–%.0f%%)", quantile(sh, 0.5), sh[0], sh[len(sh)-1])
				if iv := ciOf(sh, stats.Median); !math.IsNaN(iv.Low) {
					cell += fmt.Sprintf(" [%.0f, %.0f%%]", iv.Low, iv.High)
				}
			}
			slices.Sort(secs)
			fmt.Fprintf(b, "| %s | %s | %s | %d |\n", m, num(quantile(secs, 0.5), 1)+ivText(ciOf(secs, stats.Median), 1), cell, len(secs))
		}
	}
	if !slices.ContainsFunc(figs, func(f figure2Data) bool { return f.dataset == "vehicle" }) {
		b.WriteString("\nThe paper's dataset, vehicle, has no stored run yet.\n")
	}
}

// plainTicks are gonum's default ticks labelled with as few digits as their values need
// (gonum's own labels give every tick the decimals of the finest one: "2500.00").
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}
