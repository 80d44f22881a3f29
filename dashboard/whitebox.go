package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/hyperflat/hyperflat/stats"
)

// curvesView holds per-step learning curves: one series per cell (a replicate, a trial) of one
// stored field.
type curvesView struct {
	Group   string        `json:"group"`
	Field   string        `json:"field"`
	Fields  []string      `json:"fields"`
	Curves  []curveSeries `json:"curves"`
	Sampled *sampled      `json:"sampled,omitempty"`
}

type curveSeries struct {
	Name string `json:"name"`
	Step []any  `json:"step"`
	Y    []any  `json:"y"`
}

// curveFields are the fields a learning curve shows first, in order of preference.
var curveFields = []string{"val_loss", "val_acc", "val_metric"}

func (a *analysis) curves(q query, field string) (*curvesView, error) {
	v := &curvesView{Group: q.group, Curves: []curveSeries{}, Fields: []string{}}
	var cs []*cellTrials
	for _, c := range a.cells {
		if c.group != q.group || len(c.steps) == 0 {
			continue
		}
		cs = append(cs, c)
		for name := range c.curves {
			if !slices.Contains(v.Fields, name) {
				v.Fields = append(v.Fields, name)
			}
		}
	}
	sort.Strings(v.Fields)
	if field == "" {
		for _, f := range curveFields {
			if slices.Contains(v.Fields, f) {
				field = f
				break
			}
		}
		if field == "" && len(v.Fields) > 0 {
			field = v.Fields[0]
		}
	} else if !slices.Contains(v.Fields, field) {
		return nil, fmt.Errorf("field %q: the curves hold %q", field, v.Fields)
	}
	v.Field = field
	k := stride(len(cs), maxCurves)
	for i := 0; i < len(cs); i += k {
		c := cs[i]
		s := curveSeries{Name: c.key, Step: []any{}, Y: []any{}}
		ys := c.curves[field]
		ks := stride(len(ys), maxSteps)
		for j := 0; j < len(ys); j += ks {
			s.Step, s.Y = append(s.Step, jsonNum(c.steps[j])), append(s.Y, jsonNum(ys[j]))
		}
		v.Curves = append(v.Curves, s)
	}
	if k > 1 {
		v.Sampled = &sampled{Total: len(cs), Shown: len(v.Curves), Stride: k}
	}
	return v, nil
}

// screeningsView is AHSC's screening score (μ) against the final validation objective and
// test metric of the configurations it kept and trained (N2), per method, with Spearman's ρ.
type screeningsView struct {
	Group   string            `json:"group"`
	Methods []screeningMethod `json:"methods"`
}

type screeningMethod struct {
	Method string `json:"method"`
	// Points are [score, val_objective, test_metric, trained (0/1)]; untrained ones have no
	// final metrics (null).
	Points    [][]any  `json:"points"`
	Screened  int      `json:"screened"`
	Trained   int      `json:"trained"`
	RhoTest   *float64 `json:"rho_test"`
	RhoVal    *float64 `json:"rho_val"`
	RhoN      int      `json:"rho_n"`
	Sampled   *sampled `json:"sampled,omitempty"`
	ScoreName string   `json:"score_name"`
}

// scoreNames says what each AHSC variant screens by.
var scoreNames = map[string]string{"ahsc": "μ (strong-convexity estimate)", "ahsc-valloss": "validation loss",
	"ahsc-hessian": "‖H‖_F²"}

func (a *analysis) screenings(q query) *screeningsView {
	v := &screeningsView{Group: q.group, Methods: []screeningMethod{}}
	for _, m := range a.methods(q.group) {
		var all []screening
		for _, c := range a.cells {
			if c.group == q.group && c.method == m {
				all = append(all, c.screenings...)
			}
		}
		if len(all) == 0 {
			continue
		}
		sm := screeningMethod{Method: methodName(m), Screened: len(all), Points: [][]any{}, ScoreName: cmp.Or(scoreNames[m], "screening score")}
		var xs, yt, yv []float64
		for _, s := range all {
			if s.Trained {
				sm.Trained++
				if finite(s.Score) && finite(s.TestMetric) && finite(s.Objective) {
					xs, yt, yv = append(xs, s.Score), append(yt, s.TestMetric), append(yv, s.Objective)
				}
			}
		}
		sm.RhoN = len(xs)
		if r, err := stats.Spearman(xs, yt); err == nil {
			sm.RhoTest = ptr(r.Rho)
		}
		if r, err := stats.Spearman(xs, yv); err == nil {
			sm.RhoVal = ptr(r.Rho)
		}
		// The trained ones are few (N2 per cell) and all kept; the untrained thinned if need be.
		rest := len(all) - sm.Trained
		k := stride(rest, maxPoints)
		j := 0
		for _, s := range all {
			if !s.Trained {
				j++
				if (j-1)%k != 0 {
					continue
				}
			}
			tr := 0
			if s.Trained {
				tr = 1
			}
			sm.Points = append(sm.Points, []any{jsonNum(s.Score), jsonNum(s.Objective), jsonNum(s.TestMetric), tr})
		}
		if k > 1 {
			sm.Sampled = &sampled{Total: len(all), Shown: len(sm.Points), Stride: k}
		}
		v.Methods = append(v.Methods, sm)
	}
	return v
}

// gapView is Figure 4.3: every hyper-step of every cell, the regularizer (the stored
// "distance", √Σ_t‖a_t‖²) against the generalization gap (validation − test accuracy), one
// series per ζ, with Spearman's ρ over all points.
type gapView struct {
	Group   string      `json:"group"`
	Series  []gapSeries `json:"series"`
	Rho     *float64    `json:"rho"`
	N       int         `json:"n"`
	Sampled *sampled    `json:"sampled,omitempty"`
}

type gapSeries struct {
	Name   string  `json:"name"`
	Points [][]any `json:"points"` // [regularizer, gap, step]
}

func (a *analysis) gap(q query) *gapView {
	v := &gapView{Group: q.group, Series: []gapSeries{}}
	type point struct {
		x, y, step float64
		series     string
	}
	var pts []point
	zk := slices.IndexFunc(a.params, func(c column) bool { return c.Name == "zeta" })
	for _, c := range a.cells {
		reg, va, te := c.curves["distance"], c.curves["val_acc"], c.curves["test_acc"]
		if c.group != q.group || reg == nil || va == nil || te == nil {
			continue
		}
		name := methodName(c.method)
		if zk >= 0 && len(c.trials) == 1 {
			name = "ζ = " + strconv.FormatFloat(c.trials[0].param(zk), 'g', -1, 64)
		}
		for i := range c.steps {
			if x, y := reg[i], va[i]-te[i]; finite(x) && finite(y) {
				pts = append(pts, point{x, y, c.steps[i], name})
			}
		}
	}
	v.N = len(pts)
	xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], ys[i] = p.x, p.y
	}
	if r, err := stats.Spearman(xs, ys); err == nil {
		v.Rho = ptr(r.Rho)
	}
	k := stride(len(pts), maxPoints)
	for i := 0; i < len(pts); i += k {
		p := pts[i]
		j := slices.IndexFunc(v.Series, func(s gapSeries) bool { return s.Name == p.series })
		if j < 0 {
			v.Series = append(v.Series, gapSeries{Name: p.series, Points: [][]any{}})
			j = len(v.Series) - 1
		}
		v.Series[j].Points = append(v.Series[j].Points, []any{p.x, p.y, p.step})
	}
	if k > 1 {
		v.Sampled = &sampled{Total: len(pts), Shown: (len(pts) + k - 1) / k, Stride: k}
	}
	return v
}
