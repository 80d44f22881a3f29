package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/hyperflat/hyperflat/hypergrad"
	"github.com/hyperflat/hyperflat/samplers"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Freedman's paradox (SPEC A.7; Section 4.1 and Appendix C.1 of the PAC-Bayes paper): greedy
// forward selection over 500 pure-noise features (plus, in the signal variant, two real ones)
// picks spurious predictors when it is scored by validation error (Eq. 1), and stops at the
// true ones when it is scored by the PAC-Bayes objective (Eq. 7).
//
// Everything here is linear least squares, so every method works on sufficient statistics:
// the Gram matrices XᵀX, Xᵀy, yᵀy of each row block are computed once per data set, and a
// candidate feature set only slices them. That makes a candidate's OLS fit O(k³) instead of
// O(nk²), and a Langevin step O(k²) per chain, independent of n.

// Method names, in the order they run and are reported.
const (
	methodValidation = "validation"
	methodPACBayes   = "pac-bayes"
	methodAIC        = "aic"
	methodBIC        = "bic"
	methodCV10       = "cv10"
)

var freedmanMethods = []string{methodValidation, methodPACBayes, methodAIC, methodBIC, methodCV10}

// Data dimensions of SPEC A.7.
const (
	freedmanRows     = 500 // rows 0–249 train, 250–499 validation
	freedmanTrain    = 250
	freedmanFeatures = 500
	freedmanTest     = 500
	freedmanFolds    = 10
)

// Seed-stream constants: the data, the CV folds and the Langevin chains draw from separate
// streams of the run's seed, so that (for example) changing the methods run never changes
// the data.
const (
	streamData  = 0x46726565646d616e // "Freedman"
	streamFolds = 0x43562d666f6c6473 // "CV-folds"
)

// freedmanSettings are a preset's sizes.
type freedmanSettings struct {
	validationSteps int // forward-selection steps of each method
	pacBayesSteps   int
	otherSteps      int // aic, bic, cv10
	chains          int // Monte-Carlo Langevin chains per candidate
	langevinSteps   int // T
	eta, beta       float64
}

// freedmanPreset returns the sizes of a preset. T = 50, η = 0.1, β = 0.1 are the authors'
// defaults in both presets. The chain count is not: with their 10 chains the estimate of a
// candidate's objective is noisy enough that the minimum over ~500 candidates at k = 3 beats
// the true pair {0, 1} (SPEC A.7, "optimistic selection effect"). With 200 chains the signal
// variant selected exactly {0, 1} for each of seeds 1–20 in the quick preset, as the closed
// form does (100 chains: 20/20; 400: 19/20, the miss being seed 8, where the closed forms of
// {x0} and {x0, x1} differ by 0.0007, below Monte-Carlo error). The quick preset can afford as
// many chains as the paper preset because it takes only 5 pac-bayes steps.
func freedmanPreset(preset string) freedmanSettings {
	s := freedmanSettings{validationSteps: 40, pacBayesSteps: 20, otherSteps: 40, chains: 200, langevinSteps: 50, eta: 0.1, beta: 0.1}
	if preset == Quick {
		// Validation needs ≥ 20 steps to show the paradox (its selected set is its whole
		// path); pac-bayes needs a few steps past k = 2 to show its objective rising.
		s.validationSteps, s.pacBayesSteps, s.otherSteps = 25, 5, 20
	}
	return s
}

// freedmanExperiment registers "freedman". Its result has these tables:
//
//   - summary: one row per repeat × method, columns variant, repeat (0, 1, …), seed (Seed +
//     repeat: the seed of that repeat's data, CV folds and chains), method, selected (the
//     selected features, space-separated in selection order), n_selected, objective (the
//     method's objective at the selected set) and test_mse (OLS fitted on the training rows
//     with the selected features, on the 500 fresh test points).
//   - path_<method>: every step of each repeat's forward selection, columns repeat, step (the
//     number of features), feature (the one added; null at step 0, the empty model),
//     objective and test_mse.
//
// A method's selected set is the prefix of its path with the smallest objective, the empty
// model included. With Out set it writes one PNG per method (and repeat) like Fig. 4.1/C.1,
// the tables as CSV and result.json.
func freedmanExperiment() Experiment {
	e := Experiment{
		Name:  "freedman",
		Paper: PACBayes,
		Description: "Freedman's paradox: forward selection over 500 noise features by validation MSE (Eq. 1) " +
			"vs the PAC-Bayes objective (Eq. 7), AIC, BIC and 10-fold CV (SPEC A.7, Fig. 4.1/C.1)",
		Params: []Param{
			{Name: "variant", Default: "signal", Choices: []string{"signal", "null"},
				Usage: "signal: y = (x0 + x1 + e)/√6 (Fig. 4.1); null: y ~ N(0,1) independent of x (Fig. C.1)"},
			{Name: "objective", Default: "mc", Choices: []string{"mc", "exact"},
				Usage: "pac-bayes objective: mc (Eq. 7 by Monte-Carlo Langevin chains) or exact (its infinite-chain closed form)"},
			{Name: "methods", Default: strings.Join(freedmanMethods, ","),
				Usage: "comma-separated selection methods: " + strings.Join(freedmanMethods, ", ")},
			{Name: "chains", Default: "0",
				Usage: "Langevin chains per pac-bayes candidate (0: the preset's, 200)"},
		},
	}
	e.Plan = planFreedman
	e.Plots = func(res *Result, dir string) ([]string, error) {
		return freedmanPlots(res.Params["objective"] == "exact")(res, dir)
	}
	return e
}

// parseMethods checks a --methods list and returns it in canonical order (duplicates dropped).
func parseMethods(s string) ([]string, error) {
	want := map[string]bool{}
	for _, m := range strings.Split(s, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if !contains(freedmanMethods, m) {
			return nil, flagError("methods", "has %q: want some of %s", m, strings.Join(freedmanMethods, ", "))
		}
		want[m] = true
	}
	var out []string
	for _, m := range freedmanMethods {
		if want[m] {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, flagError("methods", "is empty: want some of %s", strings.Join(freedmanMethods, ", "))
	}
	return out, nil
}

// freedmanPath is one cell's output: a method's forward-selection path on one repeat.
type freedmanPath struct {
	Repeat     int    `json:"repeat"`
	Seed       uint64 `json:"seed"`
	Method     string `json:"method"`
	Features   []int  `json:"features"`
	Objectives []F64  `json:"objectives"`
	TestMSE    []F64  `json:"test_mse"`
}

// planFreedman makes one cell per repeat × method; a repeat's cells share its data (drawn
// from Seed + repeat), so every cell redraws it.
func planFreedman(_ context.Context, opt Options) (*Plan, error) {
	set := freedmanPreset(opt.Preset)
	variant := opt.Params["variant"]
	exact := opt.Params["objective"] == "exact"
	methods, err := parseMethods(opt.Params["methods"])
	if err != nil {
		return nil, err
	}
	if c := opt.Params["chains"]; c != "" && c != "0" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return nil, flagError("chains", "%q: want a positive integer", c)
		}
		set.chains = n
	}
	repeats := max(opt.Repeats, 1)
	p := &Plan{Best: "test_mse", Higher: false}
	for r := range repeats {
		for _, m := range methods {
			p.Cells = append(p.Cells, Cell{Key: fmt.Sprintf("r%d/%s", r, m), Seed: opt.Seed + uint64(r),
				Config: map[string]any{"variant": variant, "repeat": r, "method": m}})
		}
	}
	p.Run = func(ctx context.Context, i, workers int) (CellResult, error) {
		r, m := i/len(methods), methods[i%len(methods)]
		seed := p.Cells[i].Seed
		// The folds come from their own stream of the seed, so drawing them only for cv10
		// leaves the data of the other methods unchanged.
		data := newFreedmanData(seed, variant == "null", m == methodCV10)
		steps, eval := data.method(m, set, exact, seed)
		label := fmt.Sprintf("freedman %s %s seed %d", variant, m, seed)
		path, err := forwardSelect(ctx, freedmanFeatures, steps, workers, eval, func(step, feature int, objective float64) {
			opt.progressf("%s: step %d/%d added x%d (objective %.4f)", label, step, steps, feature, objective)
		})
		if err != nil {
			return CellResult{}, fmt.Errorf("%s: %w", label, err)
		}
		testMSE := data.testMSEs(path.features)
		best := path.best()
		out := freedmanPath{Repeat: r, Seed: seed, Method: m, Features: path.features,
			Objectives: f64s(path.objectives), TestMSE: f64s(testMSE)}
		return CellResult{Output: out,
			Metrics: map[string]float64{"test_mse": testMSE[best], "n_selected": float64(best), "objective": path.objectives[best]},
			Summary: fmt.Sprintf("%s: selected %d features {%s}, test MSE %.4f", label, best, joinInts(path.features[:best]), testMSE[best])}, nil
	}
	p.Assemble = func(outputs []json.RawMessage) (*Result, error) {
		res := &Result{Experiment: "freedman", Preset: opt.Preset, Seed: opt.Seed}
		// summary: one row per method × repeat. repeat counts from 0 and seed = Seed + repeat
		// is the seed of that repeat's data, folds and chains; both columns are present even
		// for a single repeat, so the schema does not depend on the flags.
		summary := Table{Name: "summary", Columns: []string{"variant", "repeat", "seed", "method", "selected", "n_selected", "objective", "test_mse"}}
		paths := make([]Table, len(methods))
		for i, m := range methods {
			// step 0 is the empty model (feature null): a prefix like any other, so that a
			// method may select nothing, the right answer in the null variant.
			paths[i] = Table{Name: "path_" + m, Columns: []string{"repeat", "step", "feature", "objective", "test_mse"}}
		}
		for i, raw := range outputs {
			var c freedmanPath
			if err := json.Unmarshal(raw, &c); err != nil {
				return nil, fmt.Errorf("freedman: cell %s: %w", p.Cells[i].Key, err)
			}
			path := selectionPath{features: c.Features, objectives: floats(c.Objectives)}
			best := path.best()
			summary.Add(variant, c.Repeat, c.Seed, c.Method, joinInts(path.features[:best]), best, path.objectives[best], float64(c.TestMSE[best]))
			for s := range path.objectives {
				var feature any
				if s > 0 {
					feature = path.features[s-1]
				}
				paths[i%len(methods)].Add(c.Repeat, s, feature, path.objectives[s], float64(c.TestMSE[s]))
			}
		}
		res.Tables = append([]Table{summary}, paths...)
		return res, nil
	}
	return p, nil
}

// freedmanPlots draws Fig. 4.1/C.1 for every method and repeat from the result's tables.
func freedmanPlots(exact bool) func(res *Result, dir string) ([]string, error) {
	return func(res *Result, dir string) ([]string, error) {
		summary := res.Table("summary")
		if summary == nil {
			return nil, errors.New("freedman: result has no summary table")
		}
		repeats := 0
		for _, row := range summary.Rows {
			repeats = max(repeats, asInt(row[1])+1)
		}
		var out []string
		for _, row := range summary.Rows {
			variant, r, seed, m := fmt.Sprint(row[0]), asInt(row[1]), asInt(row[2]), fmt.Sprint(row[3])
			pt := res.Table("path_" + m)
			if pt == nil {
				return nil, fmt.Errorf("freedman: result has no path_%s table", m)
			}
			var path selectionPath
			var testMSE []float64
			for _, pr := range pt.Rows {
				if asInt(pr[0]) != r {
					continue
				}
				if pr[2] != nil {
					path.features = append(path.features, asInt(pr[2]))
				}
				path.objectives = append(path.objectives, asFloat(pr[3]))
				testMSE = append(testMSE, asFloat(pr[4]))
			}
			name := fmt.Sprintf("freedman_%s_%s", variant, m)
			if repeats > 1 {
				name += fmt.Sprintf("_r%d", r)
			}
			p, err := savePathPNG(dir, name+".png", fmt.Sprintf("Freedman (%s variant, seed %d): %s", variant, seed, m), objectiveLabel(m, exact), path, testMSE)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	}
}

func objectiveLabel(method string, exact bool) string {
	switch method {
	case methodValidation:
		return "validation MSE (Eq. 1)"
	case methodPACBayes:
		if exact {
			return "PAC-Bayes objective (Eq. 7, closed form)"
		}
		return "PAC-Bayes objective (Eq. 7, Monte Carlo)"
	case methodAIC:
		return "AIC"
	case methodBIC:
		return "BIC"
	}
	return "10-fold CV MSE"
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// savePathPNG draws Fig. 4.1/C.1 for one method: test MSE (top) and the selection objective
// (bottom) against the number of predictors, with the selected model marked. gonum/plot has
// no twin axes, so the two quantities get stacked panels over the same x range.
func savePathPNG(dir, name, title, objLabel string, path selectionPath, testMSE []float64) (string, error) {
	k := make([]float64, len(path.objectives))
	for i := range k {
		k[i] = float64(i)
	}
	best := path.best()
	mark := func(y []float64) Series {
		return Series{Label: fmt.Sprintf("selected (k = %d)", best), X: []float64{float64(best)}, Y: []float64{y[best]}}
	}
	top := Panel{Title: title, XLabel: "number of predictors", YLabel: "test MSE",
		Series: []Series{{Label: "test MSE (OLS on training rows)", X: k, Y: testMSE}, mark(testMSE)}}
	bottom := Panel{XLabel: "number of predictors", YLabel: "objective",
		Series: []Series{{Label: objLabel, X: k, Y: path.objectives, Dashed: true}, mark(path.objectives)}}
	return SavePNG(dir, name, top, bottom)
}

// ---- data ------------------------------------------------------------------------------

// gram holds the sufficient statistics of least squares on a block of n rows with p features:
// XᵀX (p×p, row-major), Xᵀy and yᵀy. Every objective of the experiment is a function of them.
type gram struct {
	n, p int
	xx   []float64
	xy   []float64
	yy   float64
}

// newGram computes the statistics of the n×p row-major design x and labels y.
func newGram(x []float64, y []float64, p int) gram {
	n := len(y)
	xm := mat.NewDense(n, p, x)
	var xx mat.Dense
	xx.Mul(xm.T(), xm)
	xy := mat.NewVecDense(p, nil)
	xy.MulVec(xm.T(), mat.NewVecDense(n, y))
	return gram{n: n, p: p, xx: xx.RawMatrix().Data, xy: xy.RawVector().Data, yy: mat.Dot(mat.NewVecDense(n, y), mat.NewVecDense(n, y))}
}

// combine returns the statistics of the rows of g plus (sign 1) or minus (sign −1) those of h.
func (g gram) combine(h gram, sign float64) gram {
	out := gram{n: g.n + int(sign)*h.n, p: g.p, xx: make([]float64, len(g.xx)), xy: make([]float64, len(g.xy)), yy: g.yy + sign*h.yy}
	for i := range g.xx {
		out.xx[i] = g.xx[i] + sign*h.xx[i]
	}
	for i := range g.xy {
		out.xy[i] = g.xy[i] + sign*h.xy[i]
	}
	return out
}

// slice returns XᵀX and Xᵀy restricted to the features in set (in that order), each divided
// by scale.
func (g gram) slice(set []int, scale float64) (xx, xy []float64) {
	k := len(set)
	xx, xy = make([]float64, k*k), make([]float64, k)
	for a, i := range set {
		row := g.xx[i*g.p:]
		for b, j := range set {
			xx[a*k+b] = row[j] / scale
		}
		xy[a] = g.xy[i] / scale
	}
	return xx, xy
}

// ols returns the least-squares coefficients on the features in set, by the Cholesky
// factorization of the normal equations (the design is far from collinear: n ≥ 250 Gaussian
// rows, at most 40 columns). LAPACK's potrf/potrs directly rather than mat.Cholesky, which
// also estimates the condition number: that estimate was half of the cost of cv10.
func (g gram) ols(set []int) ([]float64, error) {
	k := len(set)
	if k == 0 {
		return nil, nil
	}
	xx, xy := g.slice(set, 1)
	t, ok := lapack64.Potrf(blas64.Symmetric{N: k, Stride: k, Data: xx, Uplo: blas.Upper})
	if !ok {
		return nil, fmt.Errorf("freedman: XᵀX on features %v is not positive definite", set)
	}
	lapack64.Potrs(t, blas64.General{Rows: k, Cols: 1, Stride: 1, Data: xy})
	return xy, nil
}

// sse is the residual sum of squares ‖X_set θ − y‖² = θᵀXᵀXθ − 2θᵀXᵀy + yᵀy on these rows.
func (g gram) sse(set []int, theta []float64) float64 {
	s := g.yy
	for a, i := range set {
		row := g.xx[i*g.p:]
		q := 0.0
		for b, j := range set {
			q += row[j] * theta[b]
		}
		s += theta[a]*q - 2*theta[a]*g.xy[i]
	}
	return s
}

// aic and bic score the OLS fit on these rows: n·log(RSS/n) + 2k and n·log(RSS/n) + k·log n.
func (g gram) aic(set []int) (float64, error) { return g.informationCriterion(set, 2) }
func (g gram) bic(set []int) (float64, error) {
	return g.informationCriterion(set, math.Log(float64(g.n)))
}

func (g gram) informationCriterion(set []int, perParam float64) (float64, error) {
	theta, err := g.ols(set)
	if err != nil {
		return 0, err
	}
	n := float64(g.n)
	return n*math.Log(g.sse(set, theta)/n) + perParam*float64(len(set)), nil
}

// freedmanData is one draw of SPEC A.7's data, reduced to the Gram statistics of its blocks.
type freedmanData struct {
	train, val, all, test gram
	// CV (cv10 only): the rows of each fold, and the other rows (all − fold), precomputed
	// because a candidate's fit only slices them.
	folds, rest []gram
}

// newFreedmanData draws the data of SPEC A.7 from a PCG stream of seed, in the order of the
// authors' code: the 500×500 design row by row, then the 500 labels (signal: the noise e_i
// of y_i = (x_i0 + x_i1 + e_i)/√6, e ~ N(0, 2²); null: y_i ~ N(0, 1)), then the test design and
// its labels. The null variant's test labels are N(0, 1) too — not the code's quirk of
// signal-variant test labels. With folds, the 500 train+validation rows are split into 10
// folds of 50 by a permutation from a second stream of seed.
func newFreedmanData(seed uint64, null, folds bool) *freedmanData {
	rng := rand.New(rand.NewPCG(seed, streamData))
	draw := func(rows int) (x, y []float64) {
		x = make([]float64, rows*freedmanFeatures)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		y = make([]float64, rows)
		for i := range y {
			if null {
				y[i] = rng.NormFloat64()
			} else {
				y[i] = (x[i*freedmanFeatures] + x[i*freedmanFeatures+1] + 2*rng.NormFloat64()) / math.Sqrt(6)
			}
		}
		return x, y
	}
	x, y := draw(freedmanRows)
	tx, ty := draw(freedmanTest)
	p := freedmanFeatures
	d := &freedmanData{
		train: newGram(x[:freedmanTrain*p], y[:freedmanTrain], p),
		val:   newGram(x[freedmanTrain*p:], y[freedmanTrain:], p),
		test:  newGram(tx, ty, p),
	}
	d.all = d.train.combine(d.val, 1)
	if folds {
		perm := rand.New(rand.NewPCG(seed, streamFolds)).Perm(freedmanRows)
		for f := range freedmanFolds {
			var fx, fy []float64
			for i := f; i < freedmanRows; i += freedmanFolds {
				row := perm[i]
				fx = append(fx, x[row*p:(row+1)*p]...)
				fy = append(fy, y[row])
			}
			fold := newGram(fx, fy, p)
			d.folds = append(d.folds, fold)
			d.rest = append(d.rest, d.all.combine(fold, -1))
		}
	}
	return d
}

// validationMSE is Eq. 1: the validation MSE of the OLS fit on the training rows.
func (d *freedmanData) validationMSE(set []int) (float64, error) {
	theta, err := d.train.ols(set)
	if err != nil {
		return 0, err
	}
	return d.val.sse(set, theta) / float64(d.val.n), nil
}

// cvMSE is the 10-fold cross-validation MSE of OLS on the train+validation rows: the SSE of
// each fold under the fit on the other nine, summed and divided by n = 500.
func (d *freedmanData) cvMSE(set []int) (float64, error) {
	if len(d.folds) == 0 {
		return 0, errors.New("freedman: data drawn without CV folds")
	}
	var sse float64
	for f, fold := range d.folds {
		theta, err := d.rest[f].ols(set)
		if err != nil {
			return 0, err
		}
		sse += fold.sse(set, theta)
	}
	return sse / float64(d.all.n), nil
}

// testMSEs returns, for every prefix of features (the empty model first), the test MSE of the
// OLS fit on the training rows.
func (d *freedmanData) testMSEs(features []int) []float64 {
	out := make([]float64, len(features)+1)
	for k := range out {
		set := features[:k]
		theta, err := d.train.ols(set)
		if err != nil {
			out[k] = math.NaN()
			continue
		}
		out[k] = d.test.sse(set, theta) / float64(d.test.n)
	}
	return out
}

// method returns the number of selection steps and the objective of a method.
func (d *freedmanData) method(m string, s freedmanSettings, exact bool, seed uint64) (int, func(set []int) (float64, error)) {
	switch m {
	case methodValidation:
		return s.validationSteps, d.validationMSE
	case methodPACBayes:
		cfg := langevinConfig{Chains: s.chains, Steps: s.langevinSteps, Eta: s.eta, Beta: s.beta, Seed: seed}
		return s.pacBayesSteps, func(set []int) (float64, error) {
			lp := d.langevinProblem(set)
			var est pacBayesEstimate
			var err error
			if exact {
				est, err = lp.exact(cfg)
			} else {
				est, err = lp.monteCarlo(cfg)
			}
			return est.Objective, err
		}
	case methodAIC:
		return s.otherSteps, d.all.aic
	case methodBIC:
		return s.otherSteps, d.all.bic
	}
	return s.otherSteps, d.cvMSE
}

// ---- the PAC-Bayes objective -----------------------------------------------------------

// langevinProblem is the quadratic training and validation risk of one feature set:
// R̂(θ) = ½θᵀΣθ − cᵀθ + ½‖y‖²/n with Σ = XᵀX/n and c = Xᵀy/n on each block.
type langevinProblem struct {
	k              int
	sigmaT, sigmaV []float64 // k×k
	cT, cV         []float64
	yyV            float64 // ‖y_V‖²/n_V
	nT             int
}

func (d *freedmanData) langevinProblem(set []int) langevinProblem {
	lp := langevinProblem{k: len(set), yyV: d.val.yy / float64(d.val.n), nT: d.train.n}
	lp.sigmaT, lp.cT = d.train.slice(set, float64(d.train.n))
	lp.sigmaV, lp.cV = d.val.slice(set, float64(d.val.n))
	return lp
}

// mseV is the full validation MSE at θ: θᵀΣ_Vθ − 2θᵀc_V + ‖y_V‖²/n_V.
func (lp *langevinProblem) mseV(theta []float64) float64 {
	k := lp.k
	s := lp.yyV
	for i := range k {
		q := 0.0
		row := lp.sigmaV[i*k : (i+1)*k]
		for j, x := range theta {
			q += row[j] * x
		}
		s += theta[i]*q - 2*theta[i]*lp.cV[i]
	}
	return s
}

// langevinConfig are the sampler's settings: SPEC A.7's η, β_G, T and the chain count.
type langevinConfig struct {
	Chains, Steps int
	Eta, Beta     float64
	Seed          uint64
}

// pacBayesEstimate is the Eq. 7 objective of one feature set and its two parts.
type pacBayesEstimate struct {
	Objective float64 // √(β η/4 · Fisher) + MSE
	Fisher    float64 // Σ_{t<T} E‖g_T − g_V‖²(θ_t), the mean over chains (MC) or exact
	MSE       float64 // E MSE_V(θ_T)
	// Per chain (Monte Carlo only): Σ_t ‖g_T − g_V‖²(θ_t^c) and MSE_V(θ_T^c), whose spread
	// gives the estimate's standard errors (the error bands of Fig. 4.1(b)).
	ChainFisher, ChainMSE []float64
}

// regularizer is the √Σ term of Eq. 7 in the form the authors' Freedman code optimizes:
// √(Σ_t β η/4 · d_t²) = ζ√(Σ_t d_t²) with ζ = √(β η/4) (SPEC A.3 form 1).
func (c langevinConfig) regularizer() hypergrad.Regularizer {
	return hypergrad.Regularizer{Form: hypergrad.SqrtSum, Zeta: math.Sqrt(c.Beta * c.Eta / 4)}
}

// monteCarlo estimates the objective with cfg.Chains Langevin chains of cfg.Steps steps
// (SPEC A.7 steps 1–4): θ_0 ~ N(0, I_k), θ ← θ − η g_T + √(2η/(β n_T)) ξ, recording
// ‖g_T − g_V‖² at θ_0, …, θ_{T−1}; the objective is √(Σ_t β η/4 · mean_c ‖g_T − g_V‖²) plus
// mean_c MSE_V(θ_T).
//
// Common random numbers: the authors re-seed before every candidate, so that the candidates
// of one step are compared under the same noise. We go one step further and give every
// coordinate position a of the feature set (the a-th feature selected) its own random stream,
// samplers.ChainRand(seed, a), and its own samplers.Langevin, which moves that coordinate of
// all C chains (a tensor of C entries): stream a supplies θ_0 and then each step's noise of
// coordinate a, whatever k is. So a candidate set sees the very same noise as the prefix it
// extends on their shared coordinates, which makes the comparison between prefixes of
// different lengths — the one that decides the selected set — less noisy (measured on {x1}
// vs {x1, x0}, seed 11: the standard error of the difference drops from 0.0028 with
// independent noise to 0.0020, as if with twice the chains). Within a stream the C chains draw
// consecutive normals, so chains are independent, and the result depends only on the seed.
// (One Langevin per chain, as in samplers.RunChains, would tie the noise of a coordinate to k
// and cost one Step — ~2 µs of argument checks — per chain and iteration, ~10⁸ in the paper
// preset; one per coordinate costs k Steps per iteration.)
func (lp *langevinProblem) monteCarlo(cfg langevinConfig) (pacBayesEstimate, error) {
	C, k := cfg.Chains, lp.k
	est := pacBayesEstimate{ChainFisher: make([]float64, C), ChainMSE: make([]float64, C)}
	if C < 1 {
		return est, fmt.Errorf("freedman: %d Langevin chains", C)
	}
	reg := cfg.regularizer()
	if k == 0 { // the empty model: θ has no coordinates, both gradients vanish
		for c := range C {
			est.ChainMSE[c] = lp.yyV
		}
		est.MSE, est.Objective = lp.yyV, lp.yyV
		return est, nil
	}
	// theta[a*C+c] is coordinate a of chain c; grad likewise holds g_T.
	theta, grad, gv := make([]float64, k*C), make([]float64, k*C), make([]float64, C)
	langs := make([]*samplers.Langevin, k)
	params := make([][]*tensor.Dense, k)
	grads := make([][]G.Value, k)
	for a := range k {
		rng := samplers.ChainRand(cfg.Seed, a)
		row := theta[a*C : (a+1)*C]
		for c := range row {
			row[c] = rng.NormFloat64()
		}
		langs[a] = &samplers.Langevin{Eta: cfg.Eta, Beta: cfg.Beta, N: lp.nT, Rand: rng}
		params[a] = []*tensor.Dense{tensor.New(tensor.WithShape(C), tensor.WithBacking(row))}
		grads[a] = []G.Value{tensor.New(tensor.WithShape(C), tensor.WithBacking(grad[a*C:(a+1)*C]))}
	}
	sq := make([]float64, C) // ‖g_T − g_V‖² of each chain at the current step
	for range cfg.Steps {
		clear(sq)
		for a := range k {
			gt := grad[a*C : (a+1)*C]
			for c := range C {
				gt[c], gv[c] = -lp.cT[a], -lp.cV[a]
			}
			for b := range k {
				st, sv := lp.sigmaT[a*k+b], lp.sigmaV[a*k+b]
				for c, x := range theta[b*C : (b+1)*C] {
					gt[c] += st * x
					gv[c] += sv * x
				}
			}
			for c := range C {
				d := gt[c] - gv[c]
				sq[c] += d * d
			}
		}
		step := 0.0
		for c, v := range sq {
			est.ChainFisher[c] += v
			step += v
		}
		if err := reg.Add(step / float64(C)); err != nil {
			return est, err
		}
		// Every gradient is computed before any coordinate moves: this is one Langevin step of
		// the whole vector θ, split by coordinate.
		for a := range k {
			if err := langs[a].Step(params[a], grads[a]); err != nil {
				return est, err
			}
		}
	}
	chain := make([]float64, k)
	for c := range C {
		for a := range k {
			chain[a] = theta[a*C+c]
		}
		est.ChainMSE[c] = lp.mseV(chain)
		est.MSE += est.ChainMSE[c]
	}
	est.MSE /= float64(C)
	est.Fisher = reg.Distance() * reg.Distance()
	est.Objective = reg.Value() + est.MSE
	return est, nil
}

// exact is the infinite-chain limit of monteCarlo (SPEC A.7, closed form): with
// M = I − ηΣ_T and s² = 2η/(β n_T), θ_t ~ N(μ_t, C_t) where μ_0 = 0, C_0 = I,
// μ_{t+1} = Mμ_t + ηc_T and C_{t+1} = M C_t Mᵀ + s²I; E‖g_T − g_V‖² at θ_t is
// hypergrad.LinearGaussianFisher, and E MSE_V(θ_T) = μᵀΣ_Vμ − 2μᵀc_V + ‖y_V‖²/n_V + tr(Σ_V C_T).
func (lp *langevinProblem) exact(cfg langevinConfig) (pacBayesEstimate, error) {
	k := lp.k
	reg := cfg.regularizer()
	var est pacBayesEstimate
	if k == 0 {
		est.MSE, est.Objective = lp.yyV, lp.yyV
		return est, nil
	}
	m := make([]float64, k*k) // M = I − ηΣ_T, symmetric
	for i := range m {
		m[i] = -cfg.Eta * lp.sigmaT[i]
	}
	cov := make([]float64, k*k)
	for i := range k {
		m[i*k+i]++
		cov[i*k+i] = 1
	}
	mu, next := make([]float64, k), make([]float64, k)
	tmp, tmp2 := make([]float64, k*k), make([]float64, k*k)
	s2 := 2 * cfg.Eta / (cfg.Beta * float64(lp.nT))
	for range cfg.Steps {
		f, err := hypergrad.LinearGaussianFisher(lp.sigmaT, lp.sigmaV, lp.cT, lp.cV, mu, cov)
		if err != nil {
			return est, err
		}
		if err := reg.Add(f); err != nil {
			return est, err
		}
		for i := range k {
			v := cfg.Eta * lp.cT[i]
			for j := range k {
				v += m[i*k+j] * mu[j]
			}
			next[i] = v
		}
		mu, next = next, mu
		matMul(tmp, m, cov, k)
		matMul(tmp2, tmp, m, k) // M C M (M is symmetric)
		for i := range k {
			tmp2[i*k+i] += s2
		}
		cov, tmp2 = tmp2, cov
	}
	est.MSE = lp.mseV(mu)
	for i := range k {
		for j := range k {
			est.MSE += lp.sigmaV[i*k+j] * cov[j*k+i]
		}
	}
	est.Fisher = reg.Distance() * reg.Distance()
	est.Objective = reg.Value() + est.MSE
	return est, nil
}

// matMul sets dst = a·b for k×k row-major matrices (dst must not alias a or b).
func matMul(dst, a, b []float64, k int) {
	for i := range k {
		row := dst[i*k : (i+1)*k]
		clear(row)
		for l := range k {
			x := a[i*k+l]
			for j, y := range b[l*k : (l+1)*k] {
				row[j] += x * y
			}
		}
	}
}

// ---- forward selection -----------------------------------------------------------------

// selectionPath is a forward-selection run: the features in the order they were added, and
// the objective of every prefix (objectives[k] for the first k features; [0] is the empty
// model).
type selectionPath struct {
	features   []int
	objectives []float64
}

// best is the length of the prefix with the smallest objective (the first, on ties).
func (p selectionPath) best() int {
	b := 0
	for k, v := range p.objectives {
		if v < p.objectives[b] {
			b = k
		}
	}
	return b
}

// forwardSelect runs greedy forward selection over p features for the given number of steps:
// at each step every remaining feature j (ascending) is scored as selected ∪ {j}, and the
// first minimizer (strict <) is added. Candidates are scored concurrently on workers
// goroutines (parallel); each score depends only on its feature set, so the path does not
// depend on the number of workers. A NaN score never wins; a step where every score is NaN is an error.
func forwardSelect(ctx context.Context, p, steps, workers int, objective func(set []int) (float64, error), onStep func(step, feature int, objective float64)) (selectionPath, error) {
	var path selectionPath
	v0, err := objective(nil)
	if err != nil {
		return path, err
	}
	path.objectives = append(path.objectives, v0)
	used := make([]bool, p)
	for step := 1; step <= min(steps, p); step++ {
		var cands []int
		for j := range p {
			if !used[j] {
				cands = append(cands, j)
			}
		}
		vals := make([]float64, len(cands))
		err := parallel(ctx, workers, len(cands), func(i int) error {
			set := append(slices.Clip(path.features), cands[i]) // a fresh slice per candidate
			var err error
			vals[i], err = objective(set)
			return err
		})
		if err != nil {
			return path, err
		}
		bestI := -1
		for i, v := range vals {
			if math.IsNaN(v) {
				continue
			}
			if bestI < 0 || v < vals[bestI] {
				bestI = i
			}
		}
		if bestI < 0 {
			return path, fmt.Errorf("step %d: no candidate has a finite objective", step)
		}
		used[cands[bestI]] = true
		path.features = append(path.features, cands[bestI])
		path.objectives = append(path.objectives, vals[bestI])
		if onStep != nil {
			onStep(step, cands[bestI], vals[bestI])
		}
	}
	return path, nil
}
