package experiments

import (
	"fmt"
	"hash/fnv"
	"image/color"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one line (or set of points) of a chart. A series without points is a legend
// entry only: it explains a line style (dashed: validation) shared by other series.
type Series struct {
	Label string
	X, Y  []float64
	// Lo and Hi, when set, bound a translucent band drawn under the line (an interquartile
	// range).
	Lo, Hi []float64
	Dashed bool
	// Points draws markers only, no line; Big draws them as large rings (a selected point).
	Points, Big bool
	// Color is the series' colour; nil takes the chart's palette in series order. Methods are
	// drawn in MethodColor(method) in every figure.
	Color color.Color
}

// Panel is one chart: a title, axis labels and its lines. IntX and IntY tick an axis that
// counts (predictors, steps, evaluations) at integers only. Legends go outside the axes.
type Panel struct {
	Title, XLabel, YLabel string
	Series                []Series
	IntX, IntY            bool
	// LogY draws the y axis on a log scale (losses spanning decades); its values must be
	// positive.
	LogY bool
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

func rgb(c uint32) color.Color {
	return color.RGBA{R: uint8(c >> 16), G: uint8(c >> 8), B: uint8(c), A: 0xff}
}

// methodColors is the one method→colour map of every figure. Colours are distinct within
// each experiment's methods; a method two experiments share (validation, Eq. 1) has one.
var methodColors = map[string]color.Color{
	// ahsc
	"ahsc": rgb(0xd62728), "random": rgb(0x7f7f7f), "tpe": rgb(0x1f77b4), "bohb": rgb(0x2ca02c),
	"hebo": rgb(0x9467bd), "turbo": rgb(0xff7f0e), "ahsc-valloss": rgb(0xe377c2), "ahsc-hessian": rgb(0x8c564b),
	// freedman and weightdecay (Eq. 1 is the validation objective)
	"validation": rgb(0x1f77b4), "Eq. 1": rgb(0x1f77b4), "pac-bayes": rgb(0xd62728), "aic": rgb(0x2ca02c),
	"bic": rgb(0x9467bd), "cv10": rgb(0xff7f0e), "pac-bayes-oracle": rgb(0xe377c2), "min-norm": rgb(0x7f7f7f),
}

// zetaColors colour weightdecay's ζ grids (each preset's grid is distinct, and none is Eq. 1's
// blue).
var zetaColors = map[float64]color.Color{
	1: rgb(0xd62728), 2: rgb(0x2ca02c), 3: rgb(0xff7f0e), 4: rgb(0x9467bd), 5: rgb(0x8c564b),
	10: rgb(0xd62728), 30: rgb(0x2ca02c), 100: rgb(0x2ca02c), 300: rgb(0x9467bd), 1000: rgb(0xff7f0e),
}

// extraColors colour names the maps do not know, by a hash of the name (never Eq. 1's blue).
var extraColors = []color.Color{rgb(0x17becf), rgb(0xbcbd22), rgb(0xe377c2), rgb(0x393b79), rgb(0x637939), rgb(0x843c39)}

// MethodColor is the colour a method (or weightdecay's "ζ=V") is drawn in, the same in every
// figure of every experiment.
func MethodColor(name string) color.Color {
	if c, ok := methodColors[name]; ok {
		return c
	}
	if strings.HasPrefix(name, "cv") {
		return methodColors["cv10"]
	}
	if v, err := strconv.ParseFloat(strings.TrimPrefix(name, "ζ="), 64); err == nil && strings.HasPrefix(name, "ζ=") {
		if c, ok := zetaColors[v]; ok {
			return c
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return extraColors[h.Sum32()%uint32(len(extraColors))]
}

// IntegerTicks ticks an axis that counts at integers only, labelled without decimals.
type IntegerTicks struct{}

// Ticks implements plot.Ticker.
func (IntegerTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	if last < first {
		return []plot.Tick{{Value: math.Round(lo), Label: strconv.Itoa(int(math.Round(lo)))}}
	}
	step := 1.0
	for k := 0; (last-first)/step > 10; k++ {
		step *= []float64{2, 2.5, 2}[k%3] // 1, 2, 5, 10, 20, 50, …
	}
	var ticks []plot.Tick
	for v := math.Ceil(first/step) * step; v <= last; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	if step > 1 && (last-first) <= 100 {
		for v := first; v <= last; v++ {
			if math.Mod(v, step) != 0 {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

func (p Panel) plot() (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	if p.IntX {
		pl.X.Tick.Marker = IntegerTicks{}
	}
	if p.IntY {
		pl.Y.Tick.Marker = IntegerTicks{}
	}
	if p.LogY {
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	for i, s := range p.Series {
		c := s.Color
		if c == nil {
			c = palette[i%len(palette)]
		}
		if err := addSeries(pl, s, c); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// addSeries draws one series of a panel in colour c.
func addSeries(pl *plot.Plot, s Series, c color.Color) error {
	line := draw.LineStyle{Color: c, Width: vg.Points(1.5)}
	if s.Dashed {
		line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	glyph := draw.GlyphStyle{Color: c, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
	if s.Points {
		glyph = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.RingGlyph{}}
	}
	if s.Big {
		glyph = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5), Shape: draw.RingGlyph{}}
	}
	var pts, band plotter.XYs
	for j := range s.X {
		if j < len(s.Y) && finite(s.X[j]) && finite(s.Y[j]) {
			pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
		}
	}
	if len(s.Lo) == len(s.X) && len(s.Hi) == len(s.X) {
		for j := range s.X {
			if finite(s.Lo[j]) && finite(s.Hi[j]) {
				band = append(band, plotter.XY{X: s.X[j], Y: s.Lo[j]})
			}
		}
		for j := len(s.X) - 1; j >= 0; j-- {
			if finite(s.Lo[j]) && finite(s.Hi[j]) {
				band = append(band, plotter.XY{X: s.X[j], Y: s.Hi[j]})
			}
		}
	}
	if len(band) > 2 {
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return err
		}
		r, g, b, _ := c.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x40}
		poly.LineStyle.Width = 0
		pl.Add(poly)
	}
	var thumbs []plot.Thumbnailer
	if !s.Points {
		thumbs = append(thumbs, legendLine(line))
	}
	if s.Points || s.Big {
		thumbs = append(thumbs, legendGlyph(glyph))
	}
	if len(pts) > 0 {
		if !s.Points {
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.LineStyle = line
			pl.Add(l)
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle = glyph
		if !s.Points && !s.Big {
			sc.GlyphStyle.Radius = vg.Points(1.5)
		}
		pl.Add(sc)
	}
	if s.Label != "" {
		pl.Legend.Add(s.Label, thumbs...)
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

type legendLine draw.LineStyle

func (l legendLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle(l), c.Min.X, y, c.Max.X, y)
}

type legendGlyph draw.GlyphStyle

func (g legendGlyph) Thumbnail(c *draw.Canvas) { c.DrawGlyph(draw.GlyphStyle(g), c.Center()) }

// SavePNG draws panels stacked vertically into dir/name and returns the path. The file is
// written as WriteArtifact writes it.
func SavePNG(dir, name string, panels ...Panel) (string, error) {
	if len(panels) == 0 {
		return "", fmt.Errorf("experiments: a figure needs a panel")
	}
	plots := make([]*plot.Plot, len(panels))
	for i, p := range panels {
		pl, err := p.plot()
		if err != nil {
			return "", err
		}
		plots[i] = pl
	}
	return SavePlots(dir, name, 6.5*vg.Inch, 3.2*vg.Inch, plots...)
}

// SaveScatterPNG draws the panel's series as points (no lines) into dir/name, written as
// WriteArtifact writes it.
func SaveScatterPNG(dir, name string, p Panel) (string, error) {
	for i := range p.Series {
		p.Series[i].Points = true
	}
	pl, err := p.plot()
	if err != nil {
		return "", err
	}
	return SavePlots(dir, name, 6.5*vg.Inch, 4*vg.Inch, pl)
}

// SavePlots draws plots stacked vertically, each h high and w wide plus the legends' column, into dir/name (written as
// WriteArtifact writes it) and returns the path. Every plot's legend is moved outside its
// axes, into a column added on the right as wide as the widest legend, so that it covers no data;
// a title too wide for the figure is set smaller rather than clipped.
func SavePlots(dir, name string, w, h vg.Length, plots ...*plot.Plot) (string, error) {
	path, err := artifactPath(dir, name)
	if err != nil {
		return "", err
	}
	if len(plots) == 0 {
		return "", fmt.Errorf("experiments: %s: no plots to draw", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	legends := make([]plot.Legend, len(plots))
	var legendW vg.Length
	grid := make([][]*plot.Plot, len(plots))
	for i, pl := range plots {
		legends[i] = pl.Legend
		legends[i].Padding = vg.Points(2.5)
		pl.Legend = plot.NewLegend()
		if r := legends[i].Rectangle(draw.Canvas{}); r.Size().X > 0 {
			legendW = max(legendW, r.Size().X+4*vg.Millimeter)
		}
		grid[i] = []*plot.Plot{pl}
	}
	img := vgimg.New(w+legendW, h*vg.Length(len(plots)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter, PadY: 3 * vg.Millimeter, PadTop: 2 * vg.Millimeter,
		PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: 2*vg.Millimeter + legendW}
	canvases := plot.Align(grid, tiles, dc)
	for i, pl := range plots {
		c := canvases[i][0]
		fitTitle(pl, c.Size().X+legendW)
		pl.Draw(c)
		if legendW > 0 {
			lc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: c.Max.X + 3*vg.Millimeter, Y: c.Min.Y},
				Max: vg.Point{X: c.Max.X + legendW, Y: c.Max.Y - titleHeight(pl) - 2*vg.Millimeter}}}
			legends[i].Top, legends[i].Left = true, true
			legends[i].Draw(lc)
		}
	}
	return path, WriteArtifact(path, func(w io.Writer) error {
		_, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w)
		return err
	})
}

func titleHeight(pl *plot.Plot) vg.Length {
	if pl.Title.Text == "" {
		return 0
	}
	return pl.Title.TextStyle.Rectangle(pl.Title.Text).Size().Y + pl.Title.Padding
}

// fitTitle sets the title's font smaller until it is no wider than w.
func fitTitle(pl *plot.Plot, w vg.Length) {
	for pl.Title.Text != "" && pl.Title.TextStyle.Rectangle(pl.Title.Text).Size().X > w && pl.Title.TextStyle.Font.Size > vg.Points(7) {
		pl.Title.TextStyle.Font.Size -= vg.Points(0.5)
	}
}
