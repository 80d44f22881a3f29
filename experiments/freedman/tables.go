package freedman

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/experiments"
)

// assemble builds the summary and path_<method> tables (see Experiment) from the cells'
// outputs, in plan order.
func assemble(opt experiments.Options, cfg *Config, cells []experiments.Cell, outputs []json.RawMessage) (*experiments.Result, error) {
	res := &experiments.Result{Experiment: "freedman", Preset: opt.Preset, Seed: opt.Seed}
	// repeat and seed are columns even for a single repeat, so that the schema does not
	// depend on the flags.
	summary := experiments.Table{Name: "summary", Headline: true,
		Columns: []string{"variant", "repeat", "seed", "method", "selected", "n_selected", "objective", "test_mse"}}
	paths := make([]experiments.Table, len(cfg.Methods))
	for i, m := range cfg.Methods {
		// step 0 is the empty model (feature null): a prefix like any other, so that a
		// method may select nothing, the right answer in the null variant (with --data
		// authors it is not scored: objective null, as in their scripts).
		paths[i] = experiments.Table{Name: "path_" + m, Columns: []string{"repeat", "step", "feature", "objective", "test_mse"}}
	}
	for i, raw := range outputs {
		var c cellOutput
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("freedman: cell %s: %w", cells[i].Key, err)
		}
		m := slices.Index(cfg.Methods, c.Method)
		if m < 0 {
			return nil, fmt.Errorf("freedman: cell %s: method %q is not in the run's --methods", cells[i].Key, c.Method)
		}
		path := selectionPath{features: c.Features, objectives: experiments.Floats(c.Objectives)}
		best := path.best()
		summary.Add(cfg.Variant, c.Repeat, c.Seed, c.Method, joinInts(path.features[:best]), best,
			path.objectives[best], float64(c.TestMSE[best]))
		for s := range path.objectives {
			var feature any
			if s > 0 {
				feature = path.features[s-1]
			}
			paths[m].Add(c.Repeat, s, feature, path.objectives[s], float64(c.TestMSE[s]))
		}
	}
	res.Tables = append([]experiments.Table{summary}, paths...)
	res.Answer, res.View, res.Legend = answer(cfg, &summary)
	return res, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// plots draws Figure 4.1 (signal) or C.1 (null) for every method and repeat from the
// result's tables alone.
func plots(res *experiments.Result, dir string) ([]string, error) {
	summary := res.Table("summary")
	if summary == nil {
		return nil, errors.New("freedman: result has no summary table")
	}
	repeats := 0
	for i := range summary.Rows {
		repeats = max(repeats, summary.Int(i, "repeat")+1)
	}
	var out []string
	for i := range summary.Rows {
		variant, r, m := summary.String(i, "variant"), summary.Int(i, "repeat"), summary.String(i, "method")
		path, testMSE, err := readPath(res, m, r)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("freedman_%s_%s", variant, m)
		if repeats > 1 {
			name += fmt.Sprintf("_r%d", r)
		}
		title := fmt.Sprintf("Freedman (%s variant, repeat %d): %s", variant, r, m)
		p, err := savePathPNG(dir, name+".png", m, title, objectiveLabel(m, res.Params), path, testMSE)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// readPath reads back repeat r's path of method m and its test MSEs from the path_<m> table.
func readPath(res *experiments.Result, m string, r int) (selectionPath, []float64, error) {
	var path selectionPath
	var testMSE []float64
	t := res.Table("path_" + m)
	if t == nil {
		return path, nil, fmt.Errorf("freedman: result has no path_%s table", m)
	}
	for j := range t.Rows {
		if t.Int(j, "repeat") != r {
			continue
		}
		if t.Value(j, "feature") != nil {
			path.features = append(path.features, t.Int(j, "feature"))
		}
		path.objectives = append(path.objectives, t.Float(j, "objective"))
		testMSE = append(testMSE, t.Float(j, "test_mse"))
	}
	return path, testMSE, nil
}

// objectiveLabel names a method's objective on its figure; params are the run's flags.
func objectiveLabel(method string, params map[string]string) string {
	switch method {
	case methodValidation:
		return "validation MSE (Eq. 1)"
	case methodPACBayes:
		if params["objective"] == "exact" {
			return "PAC-Bayes objective (Eq. 7, closed form)"
		}
		return "PAC-Bayes objective (Eq. 7, Monte Carlo)"
	case methodAIC:
		return "AIC"
	case methodBIC:
		return "BIC"
	}
	folds := params["folds"]
	if folds == "" {
		folds = "10"
	}
	return folds + "-fold CV MSE"
}

// savePathPNG draws Figure 4.1/C.1 for one method: test MSE (top) and the selection objective
// (bottom) against the number of predictors, with the selected model marked. gonum/plot has
// no twin axes, so the two quantities get stacked panels over the same x range.
func savePathPNG(dir, name, method, title, objLabel string, path selectionPath, testMSE []float64) (string, error) {
	k := make([]float64, len(path.objectives))
	for i := range k {
		k[i] = float64(i)
	}
	best := path.best()
	c := experiments.MethodColor(method)
	mark := func(y []float64) experiments.Series {
		return experiments.Series{Label: fmt.Sprintf("selected (k = %d)", best), X: []float64{float64(best)}, Y: []float64{y[best]}, Big: true, Points: true}
	}
	top := experiments.Panel{Title: title, XLabel: "number of predictors", YLabel: "test MSE", IntX: true,
		Series: []experiments.Series{{Label: "test MSE (OLS on training rows)", X: k, Y: testMSE, Color: c}, mark(testMSE)}}
	bottom := experiments.Panel{XLabel: "number of predictors", YLabel: "objective", IntX: true,
		Series: []experiments.Series{{Label: objLabel, X: k, Y: path.objectives, Dashed: true, Color: c}, mark(path.objectives)}}
	return experiments.SavePNG(dir, name, top, bottom)
}
