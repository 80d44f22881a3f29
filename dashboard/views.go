package dashboard

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hyperflat/hyperflat/stats"
)

// What the interactive views show is computed here from a run's trials; each view is bounded
// whatever the run's size: past a view's bound the server keeps every k-th point (in trial
// order, so the same store gives the same points) and says so in the JSON ("sampled"), which
// the chart repeats.

// Bounds on what one view sends.
const (
	maxPoints     = 2000 // points of a scatter, slice or parallel-coordinates view
	maxSteps      = 500  // steps of a history or learning curve
	maxCurves     = 100  // learning curves drawn
	maxTrialRows  = 500  // rows of the trial table per request
	importanceBin = 10   // equal-count bins per numeric hyperparameter
)

// analysisSpec is an experiment's default objective (what its trials are ranked by) and the
// cell metric its progress shows (the plan's Best); the page can pick another objective.
type analysisSpec struct {
	objective string
	higher    bool
	metric    string
	mHigher   bool
	// perMethod names a value whose kind differs from method to method, so that its values
	// are comparable within a method only; kinds says what it is for each.
	perMethod, kinds string
}

var analysisSpecs = map[string]analysisSpec{
	// ahsc's searches minimise minus the validation metric (the validation loss on
	// Bayesmark's sets); the metric itself reads more plainly.
	"ahsc":        {objective: "val_metric", higher: true, metric: "test_metric", mHigher: true},
	"weightdecay": {objective: "val_acc", higher: true, metric: "test_acc", mHigher: true},
	// freedman's "objective" is each method's own criterion, so its runs are ranked by the
	// test MSE of the selected model, the scale the methods are compared on (Figure 4.1).
	"freedman": {objective: "test_mse", higher: false, metric: "test_mse", mHigher: false,
		perMethod: "objective", kinds: "validation MSE, Eq. 7's PAC-Bayes objective, AIC, BIC, 10-fold CV MSE"},
	"premise": {objective: "test_metric", higher: true, metric: "test_metric", mHigher: true},
}

// analysis is a snapshot of a run's trials: immutable, shared by the requests of one state
// of the run, with the views computed from it memoised.
type analysis struct {
	experiment string
	spec       analysisSpec
	cells      []*cellTrials
	params     []column
	values     []column
	hidden     int
	// failedK and fidelityK are the value columns "failed" and "fidelity" (-1: none).
	failedK, fidelityK int
	memo               sync.Map // view+query → []byte
	memoLen            atomic.Int32
	// progress is computed once per snapshot: every event stream of the run sends it.
	progressOnce sync.Once
	progressMemo *progressView
}

func (ts *trialSet) snapshot(experiment string) *analysis {
	a := &analysis{experiment: experiment, spec: analysisSpecs[experiment]}
	for _, i := range ts.order {
		c := ts.cells[i]
		if c.hidden {
			a.hidden++
			continue
		}
		a.cells = append(a.cells, c)
	}
	for _, c := range ts.params {
		a.params = append(a.params, column{Name: c.Name, Cats: slices.Clone(c.Cats)})
	}
	for _, c := range ts.values {
		a.values = append(a.values, column{Name: c.Name})
	}
	a.failedK, a.fidelityK = a.valueIndex("failed"), a.valueIndex("fidelity")
	return a
}

// query is what a view is asked for: the group (dataset) and the objective and its direction.
type query struct {
	group     string
	objective int // index into analysis.values
	higher    bool
}

func (q query) key() string { return fmt.Sprintf("%s\x00%d\x00%t", q.group, q.objective, q.higher) }

// groups lists the run's groups in cell order.
func (a *analysis) groups() []string {
	var gs []string
	for _, c := range a.cells {
		if !slices.Contains(gs, c.group) {
			gs = append(gs, c.group)
		}
	}
	return gs
}

func (a *analysis) valueIndex(name string) int {
	return slices.IndexFunc(a.values, func(c column) bool { return c.Name == name })
}

// parseQuery reads ?group=, ?objective= and ?higher= (1 or 0), defaulting to the first group
// and the experiment's objective; an unknown name is an error that lists the choices.
func (a *analysis) parseQuery(v url.Values) (query, error) {
	gs := a.groups()
	q := query{objective: -1, higher: a.spec.higher}
	if g := v.Get("group"); g != "" {
		if !slices.Contains(gs, g) {
			return q, fmt.Errorf("group %q: the run's groups are %q", g, gs)
		}
		q.group = g
	} else if len(gs) > 0 {
		q.group = gs[0]
	}
	name := v.Get("objective")
	if name == "" {
		name = a.spec.objective
		if a.valueIndex(name) < 0 && len(a.values) > 0 {
			// An experiment without a default, or one whose trials lack it: the first value,
			// lower being better unless ?higher=1 says otherwise.
			name, q.higher = a.values[0].Name, false
		}
	}
	if name != "" {
		if q.objective = a.valueIndex(name); q.objective < 0 {
			names := make([]string, len(a.values))
			for i, c := range a.values {
				names[i] = c.Name
			}
			return q, fmt.Errorf("objective %q: the trials' values are %q", name, names)
		}
	}
	switch v.Get("higher") {
	case "":
	case "1", "true":
		q.higher = true
	case "0", "false":
		q.higher = false
	default:
		return q, fmt.Errorf("higher=%q: want 1 or 0", v.Get("higher"))
	}
	return q, nil
}

// caveat is the sentence a view shows when its objective is of a different kind for each
// method (the experiment's perMethod value): empty otherwise.
func (a *analysis) caveat(q query) string {
	if q.objective < 0 || a.spec.perMethod == "" || a.values[q.objective].Name != a.spec.perMethod {
		return ""
	}
	return fmt.Sprintf("%s is each method's own criterion (%s): compare values within a method, not across methods.",
		a.spec.perMethod, a.spec.kinds)
}

// counted reports whether a trial takes part in the ranking views: it finished (no "failed"
// flag) at full fidelity (BOHB's lower rungs are not comparable) with a finite objective.
func (a *analysis) counted(t *trial, q query) bool {
	if q.objective < 0 || !finite(t.value(q.objective)) {
		return false
	}
	if a.failedK >= 0 && t.value(a.failedK) == 1 {
		return false
	}
	return a.fullFidelity(t)
}

// fullFidelity reports whether a trial is a full evaluation (not one of BOHB's lower rungs).
func (a *analysis) fullFidelity(t *trial) bool {
	if a.fidelityK >= 0 {
		if f := t.value(a.fidelityK); !math.IsNaN(f) && f < 1 {
			return false
		}
	}
	return true
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// better reports whether x beats y under q's direction.
func (q query) better(x, y float64) bool {
	if q.higher {
		return x > y
	}
	return x < y
}

// sampled says how a view was cut: every stride-th of total, shown in all.
type sampled struct {
	Total  int `json:"total"`
	Shown  int `json:"shown"`
	Stride int `json:"stride"`
}

// stride is the step that keeps at most limit of n items.
func stride(n, limit int) int { return max(1, (n+limit-1)/limit) }

func (a *analysis) methods(group string) []string {
	var ms []string
	for _, c := range a.cells {
		if c.group == group && !slices.Contains(ms, c.method) {
			ms = append(ms, c.method)
		}
	}
	return ms
}

// methodName is a method as the views label it ("all" for cells of no method).
func methodName(m string) string {
	if m == "" {
		return "all"
	}
	return m
}

// progressView is the live partial result of a run: per group and method, the cells finished
// and the best objective so far, and the median of the finished cells' headline metric.
type progressView struct {
	Objective string        `json:"objective"`
	Higher    bool          `json:"higher"`
	Metric    string        `json:"metric"`
	Rows      []progressRow `json:"rows"`
	Hidden    int           `json:"hidden_cells,omitempty"`
}

type progressRow struct {
	Group  string   `json:"group"`
	Method string   `json:"method"`
	Cells  int      `json:"cells"`
	Trials int      `json:"trials"`
	Best   *float64 `json:"best"`
	Median *float64 `json:"metric_median"`
}

func ptr(x float64) *float64 {
	if !finite(x) {
		return nil
	}
	return &x
}

func (a *analysis) progress() *progressView {
	a.progressOnce.Do(func() { a.progressMemo = a.computeProgress() })
	return a.progressMemo
}

func (a *analysis) computeProgress() *progressView {
	q, err := a.parseQuery(url.Values{})
	p := &progressView{Metric: a.spec.metric, Hidden: a.hidden, Rows: []progressRow{}}
	if err == nil && q.objective >= 0 {
		p.Objective, p.Higher = a.values[q.objective].Name, q.higher
	}
	for _, g := range a.groups() {
		for _, m := range a.methods(g) {
			row := progressRow{Group: g, Method: methodName(m)}
			best := math.NaN()
			var ms []float64
			for _, c := range a.cells {
				if c.group != g || c.method != m {
					continue
				}
				row.Cells++
				if x, ok := c.metrics[a.spec.metric]; ok && finite(x) {
					ms = append(ms, x)
				}
				for i := range c.trials {
					t := &c.trials[i]
					if err != nil || !a.counted(t, q) {
						continue
					}
					row.Trials++
					if y := t.value(q.objective); math.IsNaN(best) || q.better(y, best) {
						best = y
					}
				}
			}
			row.Best, row.Median = ptr(best), ptr(stats.Median(ms))
			p.Rows = append(p.Rows, row)
		}
	}
	return p
}

// historyView is the optimization history: per method, the best objective so far after
// each evaluation, its median and quartiles over the repeats (cells).
type historyView struct {
	Objective string          `json:"objective"`
	Higher    bool            `json:"higher"`
	Group     string          `json:"group"`
	X         string          `json:"x"`
	Methods   []historyMethod `json:"methods"`
	Caveat    string          `json:"caveat,omitempty"`
}

type historyMethod struct {
	Method  string     `json:"method"`
	Repeats int        `json:"repeats"`
	Step    []int      `json:"step"`
	Median  []*float64 `json:"median"`
	Q25     []*float64 `json:"q25"`
	Q75     []*float64 `json:"q75"`
	N       []int      `json:"n"`
	Sampled *sampled   `json:"sampled,omitempty"`
}

// quantile is the q-quantile of sorted xs, interpolated linearly (numpy's default).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

func (a *analysis) history(q query) *historyView {
	h := &historyView{Group: q.group, X: "evaluation", Methods: []historyMethod{}, Higher: q.higher}
	if q.objective < 0 {
		return h
	}
	h.Objective, h.Caveat = a.values[q.objective].Name, a.caveat(q)
	oneEach := true
	for _, c := range a.cells {
		oneEach = oneEach && len(c.trials) <= 1
	}
	for _, m := range a.methods(q.group) {
		var runs [][]float64 // best so far, per repeat
		var cellSeries []float64
		for _, c := range a.cells {
			if c.group != q.group || c.method != m {
				continue
			}
			// Step k is the k-th full evaluation, failed ones included: they spent budget
			// and carry the best so far (none before the first success).
			var best []float64
			found := false
			for i := range c.trials {
				t := &c.trials[i]
				if !a.fullFidelity(t) {
					continue
				}
				y, n := t.value(q.objective), len(best)
				switch {
				case !a.counted(t, q) && n > 0:
					y = best[n-1]
				case !a.counted(t, q):
					y = math.NaN()
				case n > 0 && !math.IsNaN(best[n-1]) && !q.better(y, best[n-1]):
					y = best[n-1]
				default:
					found = true
				}
				best = append(best, y)
			}
			if found {
				runs = append(runs, best)
				cellSeries = append(cellSeries, best[len(best)-1])
			}
		}
		if oneEach {
			// One trial per cell (a grid): the history runs over the cells, in plan order.
			h.X = "finished cell (plan order)"
			runs = [][]float64{nil}
			for _, y := range cellSeries {
				if n := len(runs[0]); n > 0 && !q.better(y, runs[0][n-1]) {
					y = runs[0][n-1]
				}
				runs[0] = append(runs[0], y)
			}
		}
		steps := 0
		for _, r := range runs {
			steps = max(steps, len(r))
		}
		hm := historyMethod{Method: methodName(m), Repeats: len(runs), Step: []int{}, Median: []*float64{}, Q25: []*float64{}, Q75: []*float64{}, N: []int{}}
		k := stride(steps, maxSteps)
		if k > 1 {
			hm.Sampled = &sampled{Total: steps, Stride: k}
		}
		col := make([]float64, 0, len(runs))
		for s := 0; s < steps; s++ {
			if s%k != 0 && s != steps-1 {
				continue
			}
			col = col[:0]
			for _, r := range runs {
				// A repeat that ended early keeps its last best: it is still the best it found.
				if len(r) > 0 && !math.IsNaN(r[min(s, len(r)-1)]) {
					col = append(col, r[min(s, len(r)-1)])
				}
			}
			slices.Sort(col)
			hm.Step = append(hm.Step, s+1)
			hm.Median = append(hm.Median, ptr(quantile(col, 0.5)))
			hm.Q25 = append(hm.Q25, ptr(quantile(col, 0.25)))
			hm.Q75 = append(hm.Q75, ptr(quantile(col, 0.75)))
			hm.N = append(hm.N, len(col))
		}
		if hm.Sampled != nil {
			hm.Sampled.Shown = len(hm.Step)
		}
		h.Methods = append(h.Methods, hm)
	}
	return h
}

// importanceView is each hyperparameter's first-order importance.
type importanceView struct {
	Objective string       `json:"objective"`
	Group     string       `json:"group"`
	Estimator string       `json:"estimator"`
	Trials    int          `json:"trials"`
	Params    []importance `json:"params"`
	Caveat    string       `json:"caveat,omitempty"`
}

type importance struct {
	Name       string  `json:"name"`
	Importance float64 `json:"importance"`
	Bins       int     `json:"bins"`
}

// ImportanceEstimator names the importance the views show.
const ImportanceEstimator = "first-order functional ANOVA by binning: the share of the objective's variance " +
	"explained by each hyperparameter's bin means (η²; 10 equal-count bins, one per category), all methods' trials"

// importance estimates, for each hyperparameter, the fraction of the objective's variance
// over the group's counted trials that its bins' means explain (the correlation ratio η², a
// first-order functional ANOVA term with the parameter's marginal estimated by binning). The
// bins are of equal count by the parameter's rank, ties kept in trial order, so the same
// trials give the same values; it needs no random forest and no seed.
func (a *analysis) importance(q query) *importanceView {
	v := &importanceView{Group: q.group, Estimator: ImportanceEstimator, Params: []importance{}}
	if q.objective < 0 {
		return v
	}
	v.Objective, v.Caveat = a.values[q.objective].Name, a.caveat(q)
	var ts []*trial
	for _, c := range a.cells {
		if c.group != q.group {
			continue
		}
		for i := range c.trials {
			if t := &c.trials[i]; a.counted(t, q) {
				ts = append(ts, t)
			}
		}
	}
	v.Trials = len(ts)
	ys := make([]float64, len(ts))
	for i, t := range ts {
		ys[i] = t.value(q.objective)
	}
	for k, p := range a.params {
		var idx []int
		var xs []float64
		for i, t := range ts {
			if x := t.param(k); !math.IsNaN(x) {
				idx, xs = append(idx, i), append(xs, x)
			}
		}
		if len(idx) < 2 {
			continue
		}
		bin := make([]int, len(idx))
		nb := 0
		if len(p.Cats) > 0 {
			for j, x := range xs {
				bin[j] = int(x)
			}
			nb = len(p.Cats)
		} else {
			// Equal-count bins by rank; a stable sort keeps ties in trial order.
			order := make([]int, len(idx))
			for j := range order {
				order[j] = j
			}
			slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(xs[x], xs[y]) })
			nb = min(importanceBin, len(order))
			for r, j := range order {
				bin[j] = r * nb / len(order)
			}
		}
		sum, sumB, cnt := 0.0, make([]float64, nb), make([]int, nb)
		for j, i := range idx {
			sum += ys[i]
			sumB[bin[j]] += ys[i]
			cnt[bin[j]]++
		}
		mean := sum / float64(len(idx))
		total, between := 0.0, 0.0
		for _, i := range idx {
			d := ys[i] - mean
			total += d * d
		}
		used := 0
		for b := range nb {
			if cnt[b] > 0 {
				d := sumB[b]/float64(cnt[b]) - mean
				between += float64(cnt[b]) * d * d
				used++
			}
		}
		imp := 0.0
		if total > 0 {
			imp = between / total
		}
		v.Params = append(v.Params, importance{Name: p.Name, Importance: imp, Bins: used})
	}
	slices.SortStableFunc(v.Params, func(x, y importance) int {
		if c := cmp.Compare(y.Importance, x.Importance); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	return v
}

// slicesView holds the points of the slice and parallel-coordinates views: per counted trial
// of the group, its hyperparameters (categories by index), its objective and its method.
type slicesView struct {
	Objective string   `json:"objective"`
	Higher    bool     `json:"higher"`
	Group     string   `json:"group"`
	Params    []column `json:"params"`
	Methods   []string `json:"methods"`
	Rows      [][]any  `json:"rows"` // params..., objective, method index
	Sampled   *sampled `json:"sampled,omitempty"`
	Caveat    string   `json:"caveat,omitempty"`
}

func (a *analysis) slices(q query) *slicesView {
	v := &slicesView{Group: q.group, Params: a.params, Higher: q.higher, Rows: [][]any{}, Methods: []string{}}
	if q.objective < 0 {
		return v
	}
	v.Objective, v.Caveat = a.values[q.objective].Name, a.caveat(q)
	ms := a.methods(q.group)
	for _, m := range ms {
		v.Methods = append(v.Methods, methodName(m))
	}
	var ts []*trial
	for _, c := range a.cells {
		if c.group != q.group {
			continue
		}
		for i := range c.trials {
			if t := &c.trials[i]; a.counted(t, q) {
				ts = append(ts, t)
			}
		}
	}
	k := stride(len(ts), maxPoints)
	for i := 0; i < len(ts); i += k {
		t := ts[i]
		row := make([]any, 0, len(a.params)+2)
		for p := range a.params {
			row = append(row, jsonNum(t.param(p)))
		}
		row = append(row, jsonNum(t.value(q.objective)), slices.Index(ms, a.cellOf(t).method))
		v.Rows = append(v.Rows, row)
	}
	if k > 1 {
		v.Sampled = &sampled{Total: len(ts), Shown: len(v.Rows), Stride: k}
	}
	return v
}

// cellOf is the cell a trial belongs to.
func (a *analysis) cellOf(t *trial) *cellTrials {
	i := sort.Search(len(a.cells), func(i int) bool { return a.cells[i].index >= t.cell })
	return a.cells[i]
}

// jsonNum is x for JSON: nil (null) when not finite.
func jsonNum(x float64) any {
	if !finite(x) {
		return nil
	}
	return x
}
