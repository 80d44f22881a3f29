package freedman

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

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/experimenttest"
)

// runTest runs the experiment in the quick preset with the given flags.
func runTest(t *testing.T, opt experiments.Options, flags map[string]string) *experiments.Result {
	t.Helper()
	opt.Preset = experiments.Quick
	return experimenttest.Run(t, Experiment(), opt, flags)
}

// summaryRow is one row of the summary table, read by column name.
type summaryRow struct {
	seed      any
	selected  string
	nSelected int
	testMSE   float64
}

// summaryRows indexes the summary table by "method/repeat".
func summaryRows(t *testing.T, res *experiments.Result) map[string]summaryRow {
	t.Helper()
	s := res.Table("summary")
	if s == nil {
		t.Fatal("no summary table")
	}
	out := map[string]summaryRow{}
	for i := range s.Rows {
		out[s.String(i, "method")+"/"+strconv.Itoa(s.Int(i, "repeat"))] = summaryRow{
			seed: s.Value(i, "seed"), selected: s.String(i, "selected"),
			nSelected: s.Int(i, "n_selected"), testMSE: s.Float(i, "test_mse")}
	}
	return out
}

func (r summaryRow) selectedSet() []string {
	s := strings.Fields(r.selected)
	slices.Sort(s)
	return s
}

// TestAcceptance is the real quick-preset run: in the signal variant the PAC-Bayes objective
// (Eq. 7) selects exactly the two true features for three repeats while validation selection
// (Eq. 1) keeps ≥ 20 spurious ones and predicts worse (Figure 4.1); in the null variant
// PAC-Bayes selects at most one feature (Figure C.1).
func TestAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("quick-preset acceptance run")
	}
	workers := runtime.GOMAXPROCS(0)
	res := runTest(t, experiments.Options{Seed: 1, Workers: workers},
		map[string]string{"variant": "signal", "methods": "validation,pac-bayes", "repeats": "3"})
	rows := summaryRows(t, res)
	for r := range 3 {
		pb, val := rows["pac-bayes/"+strconv.Itoa(r)], rows["validation/"+strconv.Itoa(r)]
		if got := pb.selectedSet(); !reflect.DeepEqual(got, []string{"0", "1"}) {
			t.Errorf("repeat %d (seed %v): pac-bayes selected {%s}; want {0, 1}", r, pb.seed, pb.selected)
		}
		if val.nSelected < 20 {
			t.Errorf("repeat %d (seed %v): validation selected %d features; want ≥ 20", r, val.seed, val.nSelected)
		}
		if !(val.testMSE > pb.testMSE) {
			t.Errorf("repeat %d (seed %v): validation test MSE %.4f not above pac-bayes %.4f", r, val.seed, val.testMSE, pb.testMSE)
		}
	}
	res = runTest(t, experiments.Options{Seed: 1, Workers: workers},
		map[string]string{"variant": "null", "methods": "pac-bayes"})
	if pb := summaryRows(t, res)["pac-bayes/0"]; pb.nSelected > 1 {
		t.Errorf("null variant: pac-bayes selected {%s}; want at most one feature", pb.selected)
	}
}

// TestMonteCarloMatchesExact checks the Langevin chains against the closed form of
// their law: with many chains the two parts of the objective, Σ_t E‖g_T − g_V‖²
// and E MSE_V(θ_T), and the objective itself agree within Monte-Carlo error.
func TestMonteCarloMatchesExact(t *testing.T) {
	d := newDataset(defaultConfig(t, experiments.Quick), streamsOf(7), false)
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

// TestExactScalar checks the closed form against the scalar recursion written out by
// hand: for k = 1, θ_t ~ N(μ_t, v_t), μ_{t+1} = (1−ησ_T)μ_t + ηc_T, v_{t+1} = (1−ησ_T)²v_t + s².
func TestExactScalar(t *testing.T) {
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

// TestOLSHandComputed checks OLS, AIC, BIC, validation and CV MSE against values
// worked out by hand.
func TestOLSHandComputed(t *testing.T) {
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
	d := &dataset{train: g, val: val}
	mse, err := d.validationMSE([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	near("validation MSE", mse, 1)

	// CV with four leave-one-out folds of the intercept-only model on y = (1,2,3,6): the
	// held-out predictions are 11/3, 10/3, 3, 2, so CV MSE = (64/9 + 16/9 + 0 + 16)/4 = 56/9.
	ys := []float64{1, 2, 3, 6}
	all := newGram([]float64{1, 1, 1, 1}, ys, 1)
	d = &dataset{all: all}
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

// TestData checks the generated data against Appendix C.1: block sizes, the folds
// partitioning the 500 rows, the signal's coefficients 1/√6 on features 0 and 1, and null
// test labels N(0, 1) that do not depend on x (not create_dataset's signal-variant test
// labels). Drawing the folds must not change the data.
func TestData(t *testing.T) {
	for _, null := range []bool{false, true} {
		cfg := defaultConfig(t, experiments.Quick)
		if null {
			cfg.Variant = "null"
		}
		d := newDataset(cfg, streamsOf(11), true)
		if plain := newDataset(cfg, streamsOf(11), false); !reflect.DeepEqual(plain.all, d.all) || !reflect.DeepEqual(plain.test, d.test) {
			t.Errorf("null=%v: drawing the CV folds changed the data", null)
		}
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
		path, err := forwardSelect(context.Background(), 6, 4, workers, true, obj, nil)
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

// TestDeterministic runs every method (pac-bayes with few chains to stay fast) with one and
// with three workers, and again with the same seed: the tables must be identical. It also
// checks the artifacts and the JSON summary's documented columns.
func TestDeterministic(t *testing.T) {
	flags := map[string]string{"variant": "signal", "chains": "8"}
	out := t.TempDir()
	a := runTest(t, experiments.Options{Seed: 5, Workers: 1, Out: out}, flags)
	b := runTest(t, experiments.Options{Seed: 5, Workers: 3}, flags)
	if !reflect.DeepEqual(a.Tables, b.Tables) {
		t.Errorf("workers 1 and 3 give different tables")
	}
	c := runTest(t, experiments.Options{Seed: 5, Workers: 3}, flags)
	if !reflect.DeepEqual(b.Tables, c.Tables) {
		t.Errorf("the same seed gives different tables")
	}
	d := runTest(t, experiments.Options{Seed: 6, Workers: 3}, flags)
	if reflect.DeepEqual(c.Tables, d.Tables) {
		t.Errorf("seeds 5 and 6 give identical tables")
	}

	for _, m := range allMethods {
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
	if pngs != len(allMethods) {
		t.Errorf("%d PNG artifacts; want one per method", pngs)
	}
	checkJSON(t, a)
}

// checkJSON checks the JSON form of a full quick run's result: a leading summary table with
// the documented columns and one row per method, and path tables starting at the empty model.
func checkJSON(t *testing.T, res *experiments.Result) {
	t.Helper()
	var buf bytes.Buffer
	if err := res.Write(&buf, "json"); err != nil {
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
	if len(s.Rows) != len(allMethods) {
		t.Errorf("summary has %d rows; want one per method", len(s.Rows))
	}
	wantPath := []string{"repeat", "step", "feature", "objective", "test_mse"}
	if p := res.Table("path_validation"); p == nil || !reflect.DeepEqual(p.Columns, wantPath) || len(p.Rows) != 26 || p.Value(0, "feature") != nil {
		t.Errorf("path_validation: want columns %v and 26 steps from the empty model", wantPath)
	}
}

// TestSeeds checks the derivation of the repeats' seeds: the methods of a repeat share one
// seed (and so their data), repeats differ, and --seed 2's repeat 0 is not --seed 1's
// repeat 1 (as it was with seed + repeat).
func TestSeeds(t *testing.T) {
	e := Experiment()
	seeds := func(seed uint64) [][]uint64 {
		t.Helper()
		cfg, err := e.Configure(experiments.Quick, map[string]string{"methods": "validation,bic", "repeats": "2"})
		if err != nil {
			t.Fatal(err)
		}
		opt, err := e.Resolve(experiments.Options{Seed: seed, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Plan(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		out := make([][]uint64, 2)
		for i, c := range p.Cells {
			out[i/2] = append(out[i/2], c.Seed)
		}
		return out
	}
	s1, s2 := seeds(1), seeds(2)
	for _, s := range [][][]uint64{s1, s2} {
		if s[0][0] != s[0][1] || s[1][0] != s[1][1] {
			t.Errorf("the methods of a repeat have different seeds: %v", s)
		}
		if s[0][0] == s[1][0] {
			t.Errorf("repeats 0 and 1 share the seed %d", s[0][0])
		}
	}
	if s2[0][0] == s1[1][0] {
		t.Errorf("--seed 2 repeat 0 has the seed of --seed 1 repeat 1")
	}
	if st := streamsOf(s1[0][0]); st.data == st.folds || st.data == st.langevin || st.folds == st.langevin {
		t.Errorf("a repeat's streams collide: %+v", st)
	}
}

// TestFlags checks the validation of the configuration.
func TestFlags(t *testing.T) {
	e := Experiment()
	for _, flags := range []map[string]string{
		{"methods": "validation,lasso"}, {"methods": ","}, {"chains": "-2"}, {"variant": "other"},
		{"objective": "closed"}, {"repeats": "0"}, {"eta": "0"}, {"folds": "1"},
		{"validation-steps": "250"}, {"features": "10", "baseline-steps": "11"},
	} {
		cfg, err := e.Configure(experiments.Quick, flags)
		if err == nil {
			_, err = e.Resolve(experiments.Options{Config: cfg})
		}
		if err == nil {
			t.Errorf("%v accepted", flags)
		}
	}
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Methods = []string{"cv10", "validation", "cv10"}
	if err := cfg.Finish(experiments.Quick); err != nil || !reflect.DeepEqual(cfg.Methods, []string{"validation", "cv10"}) {
		t.Errorf("methods cv10,validation,cv10 finish as %v, %v; want validation,cv10", cfg.Methods, err)
	}
	if err := cfg.Finish(experiments.Quick); err != nil || !reflect.DeepEqual(cfg.Methods, []string{"validation", "cv10"}) {
		t.Errorf("Finish is not idempotent: %v, %v", cfg.Methods, err)
	}
}

func TestConfig(t *testing.T) { experimenttest.CheckConfig(t, Experiment()) }

// TestStoredConfig checks that a stored run computed by a worker decodes the same
// configuration (a small run: two cheap methods, one repeat).
func TestStoredConfig(t *testing.T) {
	e := Experiment()
	cfg, err := e.Configure(experiments.Quick, map[string]string{"methods": "validation,bic", "repeats": "1"})
	if err != nil {
		t.Fatal(err)
	}
	experimenttest.CheckStoredConfig(t, e, experiments.Options{Preset: experiments.Quick, Seed: 3, Config: cfg, Workers: 2}, true)
}
