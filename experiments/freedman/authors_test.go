package freedman

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/hyperflat/hyperflat/experiments"
)

// The expected values in this file come from running the authors' scripts unmodified,
// freedman/freedman.py (with and without --null) and freedman/freedman_naive.py of
// github.com/DEShawResearch/PACBayesHyperOpt, with Debian 12's NumPy 1.24.2, and from their
// dumped freedman-data-set.pkl. Only the random streams are reproduced bit for bit: the
// arithmetic differs (Gram statistics and Cholesky here, BLAS products and lstsq there), hence
// the tolerance.
const authorsTol = 1e-12

func authorsConfig(t *testing.T, variant string) *Config {
	t.Helper()
	e := Experiment()
	cfg, err := e.Configure(experiments.Quick, map[string]string{"data": "authors", "variant": variant})
	if err != nil {
		t.Fatal(err)
	}
	opt, err := e.Resolve(experiments.Options{Preset: experiments.Quick, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return opt.Config.(*Config)
}

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > authorsTol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.17g; want %.17g (authors' script)", name, got, want)
	}
}

// TestAuthorsData checks create_dataset's data through the Gram statistics: the design is
// the same in both variants, and so are the test labels (their --null changes only the
// training and validation labels, and draws as many normals as the signal's noise, so the test
// block is the same draw).
func TestAuthorsData(t *testing.T) {
	for _, c := range []struct {
		variant          string
		x0y, yyV         float64
		x0x0, yyTe, x1yT float64
	}{
		{"signal", 92.6868153125304, 239.5432203770611, 259.0261837925354, 472.62148612858863, 208.24609619417157},
		{"null", -18.16273465565566, 238.69095004078827, 259.0261837925354, 472.62148612858863, 208.24609619417157},
	} {
		cfg := authorsConfig(t, c.variant)
		d := newAuthorsDataset(cfg, 0, streamsOf(1), false)
		near(t, c.variant+" Σ_train x0²", d.train.xx[0], c.x0x0)
		near(t, c.variant+" Σ_train x0·y", d.train.xy[0], c.x0y)
		near(t, c.variant+" Σ_valid y²", d.val.yy, c.yyV)
		near(t, c.variant+" Σ_test y²", d.test.yy, c.yyTe)
		near(t, c.variant+" Σ_test x1·y", d.test.xy[1], c.x1yT)
	}
}

// TestAuthorsValidationPath pins the first five steps of the Eq. 1 path on the authors' data
// against freedman_naive.py (whose 40 features this path also matches, see doc.go).
func TestAuthorsValidationPath(t *testing.T) {
	for _, c := range []struct {
		variant  string
		features []int
		mse      []float64
	}{
		{"signal", []int{0, 1, 327, 57, 80},
			[]float64{0.7595027670623481, 0.6402355133765808, 0.6251422181754297, 0.6116453098801314, 0.599824839273099}},
		{"null", []int{327, 57, 80, 340, 347},
			[]float64{0.9326700553670327, 0.9136108151547168, 0.8959021237684474, 0.8805800417154734, 0.8647211811048607}},
	} {
		cfg := authorsConfig(t, c.variant)
		d := newAuthorsDataset(cfg, 0, streamsOf(1), false)
		path, err := forwardSelect(context.Background(), cfg.Features, 5, 2, false, d.validationMSE, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(path.features, c.features) {
			t.Errorf("%s: Eq. 1 path starts %v; want %v", c.variant, path.features, c.features)
		}
		if !math.IsNaN(path.objectives[0]) {
			t.Errorf("%s: the empty model was scored (%v)", c.variant, path.objectives[0])
		}
		for k, want := range c.mse {
			near(t, c.variant+" validation MSE", path.objectives[k+1], want)
		}
	}
}

// TestAuthorsChains pins run_chains' objective and mean validation MSE ("top_error") of the
// first forward-selection steps of freedman.py: the chains' noise must be theirs to 1e-12,
// Monte-Carlo error with 10 chains being ~10⁻².
func TestAuthorsChains(t *testing.T) {
	for _, c := range []struct {
		variant          string
		set              []int
		objective, error float64
	}{
		{"signal", []int{0}, 0.8665855342606611, 0.8384831628154407},
		{"signal", []int{0, 1}, 0.7588165180098271, 0.7175967427819304},
		{"signal", []int{0, 1, 263}, 0.7436681708382171, 0.7010546288969887},
		{"null", []int{347}, 1.010978255740827, 1.0003309467376398},
		{"null", []int{347, 476}, 1.0147325730573045, 0.992596966370782},
	} {
		cfg := authorsConfig(t, c.variant)
		d := newAuthorsDataset(cfg, 0, streamsOf(1), false)
		lc := langevinConfig{Chains: cfg.Chains, Steps: cfg.LangevinSteps, Eta: cfg.Eta, Beta: cfg.Beta}
		lp := d.langevinProblem(c.set)
		est, err := lp.authorsMonteCarlo(lc, authorsChainNoise(cfg.Chains, len(c.set), cfg.LangevinSteps))
		if err != nil {
			t.Fatal(err)
		}
		near(t, c.variant+" objective", est.Objective, c.objective)
		near(t, c.variant+" mean validation MSE", est.MSE, c.error)
	}
}

// TestAuthorsDefaults checks that --data authors takes the authors' protocol in both presets
// unless a flag says otherwise, and that the project's defaults are unchanged.
func TestAuthorsDefaults(t *testing.T) {
	e := Experiment()
	for _, c := range []struct {
		preset, data          string
		flags                 map[string]string
		chains, valSteps, pbs int
	}{
		{experiments.Quick, "project", nil, 200, 25, 5},
		{experiments.PaperScale, "project", nil, 200, 40, 20},
		{experiments.Quick, "authors", nil, 10, 40, 20},
		{experiments.PaperScale, "authors", nil, 10, 40, 20},
		{experiments.Quick, "authors", map[string]string{"chains": "200", "pac-bayes-steps": "5"}, 200, 40, 5},
	} {
		flags := map[string]string{"data": c.data}
		for k, v := range c.flags {
			flags[k] = v
		}
		cfg, err := e.Configure(c.preset, flags)
		if err != nil {
			t.Fatal(err)
		}
		opt, err := e.Resolve(experiments.Options{Preset: c.preset, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		got := opt.Config.(*Config)
		if got.Chains != c.chains || got.ValidationSteps != c.valSteps || got.PACBayesSteps != c.pbs {
			t.Errorf("%s %s %v: chains %d, validation steps %d, pac-bayes steps %d; want %d, %d, %d", c.preset, c.data, c.flags,
				got.Chains, got.ValidationSteps, got.PACBayesSteps, c.chains, c.valSteps, c.pbs)
		}
		if got.LangevinSteps != 50 || got.Eta != 0.1 || got.Beta != 0.1 {
			t.Errorf("%s %s: Langevin T = %d, η = %v, β = %v; want 50, 0.1, 0.1", c.preset, c.data, got.LangevinSteps, got.Eta, got.Beta)
		}
	}
	if _, err := e.Configure(experiments.Quick, map[string]string{"data": "numpy"}); err == nil {
		t.Error("--data numpy accepted")
	}
}
