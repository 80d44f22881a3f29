package experiments

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"image/color"
	"io"
	"math"
	"os"
	"slices"
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
	// Muted draws the series thin in the Muted grey, under every other (context, such as the ζ
	// beyond a panel's MaxSeries); Emphasis draws it thicker and over every other (the method
	// a figure is about, such as AHSC in its history).
	Muted, Emphasis bool
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
	// MaxPoints, when positive, thins the panel's point series evenly (every k-th point of
	// each) so that at most about MaxPoints are drawn; the x label then states how many.
	MaxPoints int
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

// zetaColors is the one ζ→colour map of every figure, fixed by the value (never by the order a
// panel lists its ζ): Eq. 1 (ζ=0) is the validation objective's blue, the decades take the
// most distinct colours (10 red, 100 green, 1000 orange), the paper's 1–5 and the CIFAR-10
// grid's 30 and 300 their own, and the extended grids' values (0.0001–0.1, 3000–10⁶) colours
// that no grid they appear in shares (a hash of the value gave 0.1 and 0.001, or 10⁴ and 10⁵,
// one colour). A panel of more than MaxSeries ζ draws the decades in colour and the rest muted
// (HighlightZetas).
var zetaColors = map[float64]color.Color{
	0: rgb(0x1f77b4), 1: rgb(0x9467bd), 10: rgb(0xd62728), 100: rgb(0x2ca02c), 1000: rgb(0xff7f0e), 10000: rgb(0x17becf),
	2: rgb(0xe377c2), 3: rgb(0xbcbd22), 4: rgb(0x8c564b), 5: rgb(0x393b79), 30: rgb(0x637939), 300: rgb(0x843c39),
	0.0001: rgb(0x393b79), 0.001: rgb(0xe377c2), 0.01: rgb(0x8c564b), 0.1: rgb(0xbcbd22), 3000: rgb(0x637939), 30000: rgb(0x843c39),
	100000: rgb(0x393b79), 300000: rgb(0x8c564b), 1e6: rgb(0xe377c2),
}

// MaxSeries is the most series a panel draws in distinguishable colours; more are muted.
const MaxSeries = 6

// Muted is the colour of a series drawn for context only (thin, under the others).
var Muted color.Color = color.Gray{Y: 0xbb}

// ZetaColor is the colour ζ=z is drawn in, the same in every panel of every figure; 0 is Eq. 1.
func ZetaColor(z float64) color.Color {
	if c, ok := zetaColors[z]; ok {
		return c
	}
	return MethodColor(strconv.FormatFloat(z, 'g', -1, 64) + "ζ")
}

// HighlightZetas picks the ζ a panel draws in colour when it has more than MaxSeries: Eq. 1
// (0), the ζ in prefer (those the reader must find: the chosen ones), then the powers of ten
// nearest to the first of prefer on a log scale (least first without one), up to MaxSeries; it
// returns the others, to be drawn Muted, in their order (none when the panel has MaxSeries or
// fewer).
func HighlightZetas(zs []float64, prefer ...float64) (muted []float64) {
	if len(zs) <= MaxSeries {
		return nil
	}
	var keep, tens []float64
	for _, z := range zs {
		if z == 0 || slices.Contains(prefer, z) {
			keep = append(keep, z)
		} else if e := math.Log10(z); z > 0 && math.Abs(e-math.Round(e)) < 1e-9 {
			tens = append(tens, z)
		}
	}
	slices.Sort(tens)
	if len(prefer) > 0 && prefer[0] > 0 {
		at := math.Log10(prefer[0])
		slices.SortStableFunc(tens, func(a, b float64) int {
			return cmp.Compare(math.Abs(math.Log10(a)-at), math.Abs(math.Log10(b)-at))
		})
	}
	keep = append(keep, tens...)
	keep = keep[:min(len(keep), MaxSeries)]
	for _, z := range zs {
		if !slices.Contains(keep, z) {
			muted = append(muted, z)
		}
	}
	return muted
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
		return ZetaColor(v)
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
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, LogTicks{}
	}
	series, note := thin(p.Series, p.MaxPoints)
	if note != "" {
		pl.X.Label.Text += " " + note
	}
	// Muted series first (under), emphasized last (on top); the legend keeps the panel's order.
	thumbs := make([][]plot.Thumbnailer, len(series))
	for _, layer := range []func(Series) bool{
		func(s Series) bool { return s.Muted },
		func(s Series) bool { return !s.Muted && !s.Emphasis },
		func(s Series) bool { return !s.Muted && s.Emphasis },
	} {
		for i, s := range series {
			if !layer(s) {
				continue
			}
			c := s.Color
			if s.Muted {
				c = Muted
			} else if c == nil {
				c = palette[i%len(palette)]
			}
			th, err := addSeries(pl, s, c)
			if err != nil {
				return nil, err
			}
			thumbs[i] = th
		}
	}
	for i, s := range series {
		if s.Label != "" {
			pl.Legend.Add(s.Label, thumbs[i]...)
		}
	}
	return pl, nil
}

// thin keeps every k-th point of each point series, k the least that leaves at most max
// points in all, and says so ("" when nothing is dropped).
func thin(series []Series, max int) ([]Series, string) {
	total := 0
	for _, s := range series {
		if s.Points {
			total += len(s.X)
		}
	}
	if max <= 0 || total <= max {
		return series, ""
	}
	k := (total + max - 1) / max
	out, drawn := make([]Series, len(series)), 0
	for i, s := range series {
		out[i] = s
		if !s.Points {
			continue
		}
		out[i].X, out[i].Y = nil, nil
		for j := 0; j < len(s.X) && j < len(s.Y); j += k {
			out[i].X, out[i].Y = append(out[i].X, s.X[j]), append(out[i].Y, s.Y[j])
		}
		drawn += len(out[i].X)
	}
	return out, fmt.Sprintf("(every %d%s point drawn: %d of %d)", k, ordinal(k), drawn, total)
}

func ordinal(k int) string {
	switch {
	case k%100 >= 11 && k%100 <= 13:
		return "th"
	case k%10 == 1:
		return "st"
	case k%10 == 2:
		return "nd"
	case k%10 == 3:
		return "rd"
	}
	return "th"
}

// LogTicks ticks a log axis at the powers of ten (and at 2 and 5 times them when fewer than
// two powers fall in the range), every label in one format: plain decimals when all lie in
// [0.001, 10000], else all as "Me±K" ("1e7", "1e6", "1e5"), never plot.LogTicks' mix of
// "1e+07" and "100000".
type LogTicks struct{}

// Ticks implements plot.Ticker.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi) // its panic, as a log scale's
	}
	in := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	type tick struct {
		m, e int
	}
	var all []tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		for m := 1; m <= 9; m++ {
			all = append(all, tick{m, e})
		}
	}
	value := func(t tick) float64 { return float64(t.m) * math.Pow10(t.e) }
	// Label the powers of ten; then 2 and 5 times them, then every tick, until two fall in range.
	var labelled func(tick) bool
	for _, rule := range []func(tick) bool{
		func(t tick) bool { return t.m == 1 },
		func(t tick) bool { return t.m == 1 || t.m == 2 || t.m == 5 },
		func(tick) bool { return true },
	} {
		labelled = rule
		n := 0
		for _, t := range all {
			n += b2i(rule(t) && in(value(t)))
		}
		if n >= 2 {
			break
		}
	}
	plain := true
	for _, t := range all {
		if labelled(t) && (t.e < -3 || t.e > 4) {
			plain = false
		}
	}
	var ticks []plot.Tick
	for _, t := range all {
		tk := plot.Tick{Value: value(t)}
		if labelled(t) {
			tk.Label = fmt.Sprintf("%de%d", t.m, t.e)
			if plain {
				tk.Label = strconv.FormatFloat(tk.Value, 'f', max(0, -t.e), 64)
			}
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// addSeries draws one series of a panel in colour c and returns its legend thumbnails.
func addSeries(pl *plot.Plot, s Series, c color.Color) ([]plot.Thumbnailer, error) {
	line := draw.LineStyle{Color: c, Width: vg.Points(1.5)}
	switch {
	case s.Muted:
		line.Width = vg.Points(0.8)
	case s.Emphasis:
		line.Width = vg.Points(3)
	}
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
			return nil, err
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
				return nil, err
			}
			l.LineStyle = line
			pl.Add(l)
		}
		if s.Points || s.Big || (!s.Muted && len(pts) <= 60) { // a long or muted line needs no dots
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = glyph
			if !s.Points && !s.Big {
				sc.GlyphStyle.Radius = vg.Points(1.5)
			}
			pl.Add(sc)
		}
	}
	return thumbs, nil
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
