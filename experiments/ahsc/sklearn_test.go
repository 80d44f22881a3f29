package ahsc

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/search"
	"github.com/hyperflat/hyperflat/skmlp"
)

// resolve configures and resolves the quick preset with the given flags.
func resolve(t *testing.T, flags map[string]string) (experiments.Options, error) {
	t.Helper()
	cfg, err := Experiment().Configure(experiments.Quick, flags)
	if err != nil {
		return experiments.Options{}, err
	}
	return Experiment().Resolve(experiments.Options{Preset: experiments.Quick, Seed: 1, Config: cfg, DataDir: datasets.ResolveDir("")})
}

// TestBayesmarkModelFlag checks what --bayesmark-model stores: the sklearn model by default
// under authors, a stored value (and so an identity) of its own; hyperflat stored as "", the
// identity of the runs made before the flag; nothing for a run without a Bayesmark set.
func TestBayesmarkModelFlag(t *testing.T) {
	ids := map[string]string{}
	for _, c := range []struct {
		name  string
		flags map[string]string
		want  string
	}{
		{"authors", map[string]string{"protocol": "authors"}, bayesmarkSklearn},
		{"authors sklearn", map[string]string{"protocol": "authors", "bayesmark-model": "sklearn"}, bayesmarkSklearn},
		{"authors hyperflat", map[string]string{"protocol": "authors", "bayesmark-model": "hyperflat"}, ""},
		{"authors all-tabular", map[string]string{"protocol": "authors", "dataset": "all-tabular"}, bayesmarkSklearn},
		{"authors vehicle", map[string]string{"protocol": "authors", "dataset": "vehicle"}, ""},
		{"authors vehicle sklearn", map[string]string{"protocol": "authors", "dataset": "vehicle", "bayesmark-model": "sklearn"}, ""},
		{"clean", map[string]string{}, ""},
		{"clean hyperflat", map[string]string{"bayesmark-model": "hyperflat"}, ""},
	} {
		opt, err := resolve(t, c.flags)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		conf := opt.Config.(*Config)
		if conf.BayesmarkModel != c.want {
			t.Errorf("%s: BayesmarkModel %q; want %q", c.name, conf.BayesmarkModel, c.want)
		}
		js, _ := json.Marshal(conf)
		if got := strings.Contains(string(js), `"bayesmark-model"`); got != (c.want != "") {
			t.Errorf("%s: stored options %s; want a bayesmark-model key: %v", c.name, js, c.want != "")
		}
		// Resolving the stored options again (a worker, a resume) keeps the model.
		again := &Config{}
		if err := json.Unmarshal(js, again); err != nil {
			t.Fatal(err)
		}
		if err := again.Finish(experiments.Quick); err != nil || again.BayesmarkModel != c.want {
			t.Errorf("%s: the stored options resolve to %q (%v); want %q", c.name, again.BayesmarkModel, err, c.want)
		}
		if ids[c.name], err = experiments.Identity("ahsc", opt); err != nil {
			t.Fatal(err)
		}
	}
	if ids["authors"] == ids["authors hyperflat"] {
		t.Error("the sklearn and hyperflat models share a run identity under authors")
	}
	if ids["authors"] != ids["authors sklearn"] || ids["clean"] != ids["clean hyperflat"] || ids["authors vehicle"] != ids["authors vehicle sklearn"] {
		t.Error("an explicit default changed a run's identity")
	}
	for _, c := range []struct {
		flags map[string]string
		flag  string
	}{
		{map[string]string{"bayesmark-model": "sklearn"}, "bayesmark-model"},
		{map[string]string{"bayesmark-model": "keras"}, "bayesmark-model"},
		{map[string]string{"protocol": "authors", "adam": "torch"}, "adam"},
	} {
		_, err := resolve(t, c.flags)
		if fe, ok := err.(*experiments.FlagError); !ok || fe.Flag != c.flag {
			t.Errorf("%v: error %v; want a FlagError naming --%s", c.flags, err, c.flag)
		}
	}
	if _, err := resolve(t, map[string]string{"protocol": "authors", "adam": "torch", "bayesmark-model": "hyperflat"}); err != nil {
		t.Errorf("--adam torch --bayesmark-model hyperflat (the runs before both flags): %v", err)
	}
}

// TestSklearnModelWiring checks that an authors-protocol Bayesmark candidate is skmlp's
// MLPClassifier: its Fit on a fold trains what skmlp.Fit trains with the configuration's
// parameters (the logit-scaled ones mapped back, early stopping on, max_iter the epochs),
// the model scored by the task holds the trained weights (its probabilities are skmlp's),
// the fold's early stopping is not the task's, and the clean protocol keeps its own model.
func TestSklearnModelWiring(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"iris", "breast"} {
		opt, err := resolve(t, map[string]string{"protocol": "authors", "dataset": name, "epochs": "60"})
		if err != nil {
			t.Fatal(err)
		}
		cfg := opt.Config.(*Config)
		p, err := loadProblem(ctx, opt, cfg, name)
		if err != nil {
			t.Fatal(err)
		}
		if !p.sklearn {
			t.Fatalf("%s: the authors' problem does not use the sklearn model", name)
		}
		sp, err := p.split(0)
		if err != nil {
			t.Fatal(err)
		}
		task := newTask(p, sp, cfg, 7, limits{})
		authorsTask(task, p, "random", 7)
		if task.Holdout != nil || task.Folds[0].Holdout != nil {
			t.Errorf("%s: a Holdout is set for the sklearn model, which holds out its own data", name)
		}
		u := []float64{0.3, 0.4, 0.1, 0.7, 0.5, 0.5, 0.6, 0.5, 0.4}
		hp := p.space.FromUnit(u)
		f := task.Folds[1]
		var seed uint64
		build := f.Build
		f.Build = func(cfg search.Config, s uint64) (*convexity.Candidate, error) {
			seed = s
			return build(cfg, s)
		}
		c, tr, err := f.Fit(ctx, hp, task.Epochs, true)
		if err != nil {
			t.Fatal(err)
		}
		if c.Fit == nil || c.Optimizer != nil {
			t.Fatalf("%s: candidate without its own Fit", name)
		}
		want := sklearnParams(hp)
		want.MaxIter = task.Epochs
		if !want.EarlyStopping || want.NIterNoChange != 10 || math.Abs(want.ValidationFraction-expit(hp.Float("logit_validation_fraction"))) != 0 {
			t.Errorf("%s: parameters %+v", name, want)
		}
		h := seed ^ dataHash(f.Train)
		ref, err := skmlp.Fit(ctx, want, uint32(h)^uint32(h>>32), f.Train.X, f.Train.N, f.Train.D, f.Train.Y, len(f.Train.Classes))
		if err != nil {
			t.Fatal(err)
		}
		res, err := tr.Evaluate(ctx, f.Val, 0)
		if err != nil {
			t.Fatal(err)
		}
		worst := probaDiff(res.Scores.Values, ref.Net.PredictProba(f.Val.X, f.Val.N), len(f.Val.Classes), f.Val.N)
		if worst > 1e-9 {
			t.Errorf("%s: the scored model's probabilities differ from skmlp's by %v", name, worst)
		}
		t.Logf("%s: fold 1 trained %d epochs (max %d), probabilities agree to %.2g", name, ref.NIter, task.Epochs, worst)
		// the one-epoch fit of AHSC's screening is max_iter 1
		if c1, _, err := task.Fit(ctx, hp, 1, false); err != nil || c1.Fit == nil {
			t.Errorf("%s: a one-epoch fit: %v", name, err)
		}
	}
}

// probaDiff is the largest difference between the class probabilities of logits (one per
// row for two classes, else k) and proba (k per row).
func probaDiff(logits, proba []float64, k, rows int) float64 {
	worst := 0.0
	for r := range rows {
		for j := range k {
			var q float64
			if k == 2 { // one logit: σ(z)
				q = 1 / (1 + math.Exp(-logits[r]))
				if j == 0 {
					q = 1 - q
				}
			} else {
				row := logits[r*k : (r+1)*k]
				m, s := math.Inf(-1), 0.0
				for _, v := range row {
					m = max(m, v)
				}
				for _, v := range row {
					s += math.Exp(v - m)
				}
				q = math.Exp(row[j]-m) / s
			}
			worst = max(worst, math.Abs(q-proba[r*k+j]))
		}
	}
	return worst
}

// TestCleanKeepsItsModel checks that the clean protocol keeps this package's MLP, trained by
// package train.
func TestCleanKeepsItsModel(t *testing.T) {
	ctx := context.Background()
	opt, err := resolve(t, map[string]string{"dataset": "iris"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadProblem(ctx, opt, opt.Config.(*Config), "iris")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := p.split(0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.build(sp.train)(p.space.FromUnit(make([]float64, len(p.space))), 1)
	if err != nil || c.Fit != nil || c.Optimizer == nil || p.sklearn {
		t.Errorf("clean: candidate %+v (%v); want the hyperflat model", c, err)
	}
}

// TestSklearnModelEveryMethod runs every method of the experiment on iris under the authors'
// protocol with the sklearn model (tiny budgets): each finishes, none of its calls fails.
func TestSklearnModelEveryMethod(t *testing.T) {
	res := testRun(t, experiments.Options{Seed: 4}, map[string]string{"dataset": "iris", "protocol": "authors", "repeats": "1",
		"methods": strings.Join(Methods, ","), "bayesmark-budget": "3", "n1": "3", "n2": "2", "epochs": "15", "folds": "2"})
	rt := res.Table("runs")
	if rt == nil {
		t.Fatal("no runs table")
	}
	seen := map[string]bool{}
	for i := range rt.Rows {
		m := rt.String(i, "method")
		seen[m] = true
		if f, d := rt.Int(i, "failed"), rt.Int(i, "screen_dropped"); f != 0 || d != 0 {
			t.Errorf("%s: %d failed calls, %d failed screenings", m, f, d)
		}
		if v := rt.Float(i, "value"); math.IsNaN(v) {
			t.Errorf("%s: no score", m)
		}
	}
	for _, m := range Methods {
		if !seen[m] {
			t.Errorf("method %s did not run", m)
		}
	}
	if ps := res.Params["bayesmark-model"]; ps != bayesmarkSklearn {
		t.Errorf("the result's parameters say bayesmark-model %q; want %q", ps, bayesmarkSklearn)
	}
}
