package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runFreedmanTest runs the registered experiment with the given flags.
func runFreedmanTest(t *testing.T, opt Options, params map[string]string) *Result {
	t.Helper()
	e, err := Lookup("freedman")
	if err != nil {
		t.Fatal(err)
	}
	opt.Params = params
	res, err := e.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// summaryRows indexes the summary table by "method/repeat".
func summaryRows(t *testing.T, res *Result) map[string]map[string]any {
	t.Helper()
	s := res.Table("summary")
	if s == nil {
		t.Fatal("no summary table")
	}
	out := map[string]map[string]any{}
	for _, row := range s.Rows {
		m := map[string]any{}
		for i, c := range s.Columns {
			m[c] = row[i]
		}
		out[m["method"].(string)+"/"+itoa(m["repeat"].(int))] = m
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

func selectedSet(row map[string]any) []string {
	s := strings.Fields(row["selected"].(string))
	slices.Sort(s)
	return s
}

// TestFreedmanAcceptance is the real quick-preset run: in the signal variant the PAC-Bayes
// objective selects exactly the two true features for three seeds while validation selection
// keeps ≥ 20 spurious ones and predicts worse; in the null variant PAC-Bayes selects at most
// one feature.
func TestFreedmanAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("quick-preset acceptance run")
	}
	workers := runtime.GOMAXPROCS(0)
	res := runFreedmanTest(t, Options{Preset: Quick, Seed: 1, Repeats: 3, Workers: workers},
		map[string]string{"variant": "signal", "methods": "validation,pac-bayes"})
	rows := summaryRows(t, res)
	for r := range 3 {
		pb, val := rows["pac-bayes/"+itoa(r)], rows["validation/"+itoa(r)]
		if got := selectedSet(pb); !reflect.DeepEqual(got, []string{"0", "1"}) {
			t.Errorf("seed %v: pac-bayes selected %v; want {0, 1}", pb["seed"], pb["selected"])
		}
		if n := val["n_selected"].(int); n < 20 {
			t.Errorf("seed %v: validation selected %d features; want ≥ 20", val["seed"], n)
		}
		if v, p := val["test_mse"].(float64), pb["test_mse"].(float64); !(v > p) {
			t.Errorf("seed %v: validation test MSE %.4f not above pac-bayes %.4f", val["seed"], v, p)
		}
	}
	res = runFreedmanTest(t, Options{Preset: Quick, Seed: 1, Workers: workers},
		map[string]string{"variant": "null", "methods": "pac-bayes"})
	if pb := summaryRows(t, res)["pac-bayes/0"]; pb["n_selected"].(int) > 1 {
		t.Errorf("null variant: pac-bayes selected %v; want at most one feature", pb["selected"])
	}
}

// TestFreedmanMonteCarloMatchesExact checks the Langevin chains against the closed form of
// their law (SPEC A.7): with many chains the two parts of the objective, Σ_t E‖g_T − g_V‖²
// and E MSE_V(θ_T), and the objective itself agree within Monte-Carlo error.
func TestFreedmanMonteCarloMatchesExact(t *testing.T) {
	d := newFreedmanData(7, false, false)
	for _, set := range [][]int{{3}, {0, 1, 17}} {
		lp := d.langevinProblem(set)
		cfg := langevinConfig{Chains: 4000, Steps: 50, Eta: 0.1, Beta: 0.1, Seed: 3}
		mc, err := lp.monteCarlo(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := lp.exact(cfg)
		if err != nil {
			t.Fatal(err)
		}
		seF, seM := stdErr(mc.ChainFisher), stdErr(mc.ChainMSE)
		if math.Abs(mc.Fisher-ex.Fisher) > 4*seF {
			t.Errorf("%v: Σ_t E‖g_T − g_V‖²: MC %.5f ± %.5f, exact %.5f", set, mc.Fisher, seF, ex.Fisher)
		}
		if math.Abs(mc.MSE-ex.MSE) > 4*seM {
			t.Errorf("%v: E MSE_V(θ_T): MC %.5f ± %.5f, exact %.5f", set, mc.MSE, seM, ex.MSE)
		}
		// Objective = √(βη/4·F) + MSE; by the delta method its error is at most
		// √(βη/4)/(2√F)·se_F + se_M.
		z := math.Sqrt(cfg.Beta * cfg.Eta / 4)
		seO := z/(2*math.Sqrt(ex.Fisher))*seF + seM
		if math.Abs(mc.Objective-ex.Objective) > 4*seO {
			t.Errorf("%v: objective: MC %.5f ± %.5f, exact %.5f", set, mc.Objective, seO, ex.Objective)
		}
		if want := z*math.Sqrt(ex.Fisher) + ex.MSE; math.Abs(ex.Objective-want) > 1e-12 {
			t.Errorf("%v: exact objective %v; want %v", set, ex.Objective, want)
		}
	}
}

func stdErr(xs []float64) float64 {
	var m, v float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)-1) / float64(len(xs)))
}

// TestFreedmanExactScalar checks the closed form against the scalar recursion written out by
// hand: for k = 1, θ_t ~ N(μ_t, v_t), μ_{t+1} = (1−ησ_T)μ_t + ηc_T, v_{t+1} = (1−ησ_T)²v_t + s².
func TestFreedmanExactScalar(t *testing.T) {
	lp := langevinProblem{k: 1, sigmaT: []float64{1.2}, sigmaV: []float64{0.9}, cT: []float64{0.5}, cV: []float64{0.3}, yyV: 1.1, nT: 250}
	cfg := langevinConfig{Steps: 50, Eta: 0.1, Beta: 0.1}
	got, err := lp.exact(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mu, v, fisher := 0.0, 1.0, 0.0
	s2 := 2 * cfg.Eta / (cfg.Beta * 250)
	for range cfg.Steps {
		d, e := 1.2-0.9, 0.5-0.3
		fisher += (d*mu-e)*(d*mu-e) + d*d*v
		mu = (1-cfg.Eta*1.2)*mu + cfg.Eta*0.5
		v = (1-cfg.Eta*1.2)*(1-cfg.Eta*1.2)*v + s2
	}
	mse := 0.9*mu*mu - 2*0.3*mu + 1.1 + 0.9*v
	want := math.Sqrt(cfg.Beta*cfg.Eta/4*fisher) + mse
	if math.Abs(got.Fisher-fisher) > 1e-12 || math.Abs(got.MSE-mse) > 1e-12 || math.Abs(got.Objective-want) > 1e-12 {
		t.Errorf("exact = %+v; want fisher %v, mse %v, objective %v", got, fisher, mse, want)
	}
}

// tinyGram is the design x0 = (1,1,0,0), x1 = (0,0,1,1), x2 = (1,0,0,0) with y = (1,3,2,6).
func tinyGram() gram {
	x := []float64{
		1, 0, 1,
		1, 0, 0,
		0, 1, 0,
		0, 1, 0,
	}
	return newGram(x, []float64{1, 3, 2, 6}, 3)
}

// TestFreedmanOLSHandComputed checks OLS, AIC, BIC, validation and CV MSE against values
// worked out by hand.
func TestFreedmanOLSHandComputed(t *testing.T) {
	g := tinyGram()
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %.15g; want %.15g", name, got, want)
		}
	}
	// {0, 1}: orthogonal columns, θ = (mean(1,3), mean(2,6)) = (2, 4), RSS = 1+1+4+4 = 10.
	theta, err := g.ols([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	near("θ0", theta[0], 2)
	near("θ1", theta[1], 4)
	near("RSS{0,1}", g.sse([]int{0, 1}, theta), 10)
	// {0, 1, 2}: rows 1 and 2 are fitted exactly by θ0 + θ2 = 1, θ0 = 3; RSS = 4+4 = 8.
	theta, err = g.ols([]int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	near("θ{0,1,2}[2]", theta[2], -2)
	near("RSS{0,1,2}", g.sse([]int{0, 1, 2}, theta), 8)
	aic, _ := g.aic([]int{0, 1})
	near("AIC{0,1}", aic, 4*math.Log(10.0/4)+2*2)
	bic, _ := g.bic([]int{0, 1})
	near("BIC{0,1}", bic, 4*math.Log(10.0/4)+2*math.Log(4))
	// {0}: θ0 = 2, RSS = 1+1+4+36 = 42. The empty model: RSS = ‖y‖² = 50.
	aic, _ = g.aic([]int{0})
	near("AIC{0}", aic, 4*math.Log(42.0/4)+2)
	bic, _ = g.bic(nil)
	near("BIC{}", bic, 4*math.Log(50.0/4))

	// Validation MSE: fit on tinyGram, validate on rows (1,0,0)→3, (0,1,0)→3: errors
	// (2−3)² and (4−3)², MSE 1.
	val := newGram([]float64{1, 0, 0, 0, 1, 0}, []float64{3, 3}, 3)
	d := &freedmanData{train: g, val: val}
	mse, err := d.validationMSE([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	near("validation MSE", mse, 1)

	// CV with four leave-one-out folds of the intercept-only model on y = (1,2,3,6): the
	// held-out predictions are 11/3, 10/3, 3, 2, so CV MSE = (64/9 + 16/9 + 0 + 16)/4 = 56/9.
	ys := []float64{1, 2, 3, 6}
	all := newGram([]float64{1, 1, 1, 1}, ys, 1)
	d = &freedmanData{all: all}
	for _, y := range ys {
		f := newGram([]float64{1}, []float64{y}, 1)
		d.folds = append(d.folds, f)
		d.rest = append(d.rest, all.combine(f, -1))
	}
	cv, err := d.cvMSE([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	near("CV MSE", cv, 56.0/9)
}

// TestFreedmanData checks the generated data against SPEC A.7: block sizes, the folds
// partitioning the 500 rows, the signal's coefficients 1/√6 on features 0 and 1, and null
// test labels N(0, 1) that do not depend on x (not the authors' code quirk).
func TestFreedmanData(t *testing.T) {
	for _, null := range []bool{false, true} {
		d := newFreedmanData(11, null, true)
		if d.train.n != 250 || d.val.n != 250 || d.all.n != 500 || d.test.n != 500 {
			t.Fatalf("blocks of %d, %d, %d, %d rows", d.train.n, d.val.n, d.all.n, d.test.n)
		}
		sum := d.folds[0]
		for f := 1; f < len(d.folds); f++ {
			if d.folds[f].n != 50 {
				t.Errorf("fold %d has %d rows", f, d.folds[f].n)
			}
			sum = sum.combine(d.folds[f], 1)
		}
		if sum.n != 500 || math.Abs(sum.yy-d.all.yy) > 1e-9 || math.Abs(sum.xx[7*500+9]-d.all.xx[7*500+9]) > 1e-9 {
			t.Errorf("folds do not partition the rows")
		}
		// Test-set OLS on features {0, 1}: ≈ 1/√6 each (signal) or ≈ 0 (null), with a
		// standard error of about √(2/3)/√500 ≈ 0.037.
		theta, err := d.test.ols([]int{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		want := 1 / math.Sqrt(6)
		if null {
			want = 0
		}
		for i, th := range theta {
			if math.Abs(th-want) > 0.15 {
				t.Errorf("null=%v: test coefficient %d = %.3f; want ≈ %.3f", null, i, th, want)
			}
		}
		if v := d.test.yy / 500; math.Abs(v-1) > 0.25 {
			t.Errorf("null=%v: test E y² = %.3f; want ≈ 1", null, v)
		}
	}
}

// TestForwardSelectTies checks the selection rule: ascending candidates, strict <, the
// first minimizer kept; NaN never wins.
func TestForwardSelectTies(t *testing.T) {
	score := map[int]float64{0: 5, 1: 3, 2: math.NaN(), 3: 1, 4: 3, 5: 1}
	obj := func(set []int) (float64, error) {
		v := 0.0
		for _, j := range set {
			v += score[j]
		}
		return v, nil
	}
	for _, workers := range []int{1, 3} {
		path, err := forwardSelect(context.Background(), 6, 4, workers, obj, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{3, 5, 1, 4}; !reflect.DeepEqual(path.features, want) {
			t.Errorf("workers %d: path %v; want %v", workers, path.features, want)
		}
		if want := []float64{0, 1, 2, 5, 8}; !reflect.DeepEqual(path.objectives, want) {
			t.Errorf("workers %d: objectives %v; want %v", workers, path.objectives, want)
		}
		if path.best() != 0 {
			t.Errorf("best prefix %d; want the empty model", path.best())
		}
	}
}

// TestFreedmanDeterministic runs every method (pac-bayes with few chains to stay fast) with
// one and with three workers, and again with the same seed: the tables must be identical. It
// also checks the artifacts and the JSON summary's documented columns.
func TestFreedmanDeterministic(t *testing.T) {
	params := map[string]string{"variant": "signal", "chains": "8"}
	out := t.TempDir()
	a := runFreedmanTest(t, Options{Preset: Quick, Seed: 5, Workers: 1, Out: out}, params)
	b := runFreedmanTest(t, Options{Preset: Quick, Seed: 5, Workers: 3}, params)
	if !reflect.DeepEqual(a.Tables, b.Tables) {
		t.Errorf("workers 1 and 3 give different tables")
	}
	c := runFreedmanTest(t, Options{Preset: Quick, Seed: 5, Workers: 3}, params)
	if !reflect.DeepEqual(b.Tables, c.Tables) {
		t.Errorf("the same seed gives different tables")
	}
	d := runFreedmanTest(t, Options{Preset: Quick, Seed: 6, Workers: 3}, params)
	if reflect.DeepEqual(c.Tables, d.Tables) {
		t.Errorf("seeds 5 and 6 give identical tables")
	}

	for _, m := range freedmanMethods {
		if a.Table("path_"+m) == nil {
			t.Errorf("no path_%s table", m)
		}
	}
	var pngs int
	for _, p := range a.Artifacts {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("artifact %s: %v", p, err)
		}
		if strings.HasSuffix(p, ".png") {
			pngs++
		}
	}
	if pngs != len(freedmanMethods) {
		t.Errorf("%d PNG artifacts; want one per method", pngs)
	}

	var buf bytes.Buffer
	if err := a.Write(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Tables []struct {
			Name    string   `json:"name"`
			Columns []string `json:"columns"`
			Rows    [][]any  `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(buf.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded.Tables) == 0 || decoded.Tables[0].Name != "summary" {
		t.Fatalf("JSON has no leading summary table")
	}
	s := decoded.Tables[0]
	want := []string{"variant", "repeat", "seed", "method", "selected", "n_selected", "objective", "test_mse"}
	if !reflect.DeepEqual(s.Columns, want) {
		t.Errorf("summary columns %v; want %v", s.Columns, want)
	}
	if len(s.Rows) != len(freedmanMethods) {
		t.Errorf("summary has %d rows; want one per method", len(s.Rows))
	}
	wantPath := []string{"repeat", "step", "feature", "objective", "test_mse"}
	if p := a.Table("path_validation"); p == nil || !reflect.DeepEqual(p.Columns, wantPath) || len(p.Rows) != 26 || p.Rows[0][2] != nil {
		t.Errorf("path_validation: want columns %v and 26 steps from the empty model", wantPath)
	}
}

func TestFreedmanFlags(t *testing.T) {
	e, _ := Lookup("freedman")
	if _, err := e.Run(context.Background(), Options{Params: map[string]string{"methods": "validation,lasso"}}); err == nil {
		t.Error("unknown method accepted")
	}
	if _, err := e.Run(context.Background(), Options{Params: map[string]string{"chains": "-2"}}); err == nil {
		t.Error("negative chain count accepted")
	}
	if _, err := e.Run(context.Background(), Options{Params: map[string]string{"variant": "other"}}); err == nil {
		t.Error("unknown variant accepted")
	}
	got, err := parseMethods("cv10, validation,cv10")
	if err != nil || !reflect.DeepEqual(got, []string{"validation", "cv10"}) {
		t.Errorf("parseMethods = %v, %v", got, err)
	}
}
