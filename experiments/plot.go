package experiments

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one line of a line chart.
type Series struct {
	Label  string
	X, Y   []float64
	Dashed bool
}

// Panel is one chart: a title, axis labels and its lines.
type Panel struct {
	Title, XLabel, YLabel string
	Series                []Series
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

func (p Panel) plot() (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Legend.Top = true
	for i, s := range p.Series {
		pts := make(plotter.XYs, 0, len(s.X))
		for j := range s.X {
			if j < len(s.Y) && !math.IsNaN(s.Y[j]) && !math.IsInf(s.Y[j], 0) {
				pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		c := palette[i%len(palette)]
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		points.Radius = vg.Points(2)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		pl.Add(line, points)
		if s.Label != "" {
			pl.Legend.Add(s.Label, line)
		}
	}
	return pl, nil
}

// SavePNG draws panels stacked vertically (sharing nothing but the canvas) into dir/name and
// returns the path.
func SavePNG(dir, name string, panels ...Panel) (string, error) {
	if len(panels) == 0 {
		return "", fmt.Errorf("experiments: a figure needs a panel")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	const w, h = 7 * vg.Inch, 3.2 * vg.Inch
	img := vgimg.New(w, h*vg.Length(len(panels)))
	dc := draw.New(img)
	plots := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		pl, err := p.plot()
		if err != nil {
			return "", err
		}
		plots[i] = []*plot.Plot{pl}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: 2 * vg.Millimeter, PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// SaveScatterPNG draws a scatter chart of the panel's series into dir/name.
func SaveScatterPNG(dir, name string, p Panel) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pl := plot.New()
	pl.Title.Text, pl.X.Label.Text, pl.Y.Label.Text = p.Title, p.XLabel, p.YLabel
	for i, s := range p.Series {
		pts := make(plotter.XYs, 0, len(s.X))
		for j := range s.X {
			if j < len(s.Y) && !math.IsNaN(s.X[j]) && !math.IsNaN(s.Y[j]) {
				pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
			}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return "", err
		}
		sc.Color = palette[i%len(palette)]
		sc.Radius = vg.Points(2)
		pl.Add(sc)
		if s.Label != "" {
			pl.Legend.Add(s.Label, sc)
		}
	}
	path := filepath.Join(dir, name)
	return path, pl.Save(7*vg.Inch, 4*vg.Inch, path)
}
