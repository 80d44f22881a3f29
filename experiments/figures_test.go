package experiments_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	. "github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/all"
)

// Issue 17 (figures): every figure type is written by a small run and drawn again from the
// stored result alone (hyperflat report --plots): ahsc's scores, optimization history, μ and run
// times, Freedman's selection paths, weightdecay's history and correlation.
func TestEveryFigureType(t *testing.T) {
	if testing.Short() {
		t.Skip("runs each experiment once")
	}
	dataDir := datasets.ResolveDir("")
	cases := []struct {
		name   string
		params map[string]string
		needs  string
		want   []string
	}{
		{"ahsc", map[string]string{"dataset": "iris", "repeats": "2", "bayesmark-budget": "4", "n1": "4", "n2": "2", "epochs": "3"}, "",
			[]string{"ahsc_scores_iris.png", "ahsc_history_iris.png", "ahsc_mu_iris.png", "ahsc_runtime_iris.png"}},
		{"freedman", map[string]string{"methods": "validation,pac-bayes", "repeats": "1"}, "",
			[]string{"freedman_signal_validation.png", "freedman_signal_pac-bayes.png"}},
		{"weightdecay", map[string]string{"model": "linear", "dataset": "mnist", "repeats": "1", "inner-steps": "2", "outer-steps": "3",
			"test-rows": "200"}, "mnist/train-images-idx3-ubyte.gz",
			[]string{"weightdecay_linear_mnist_history.png", "weightdecay_linear_mnist_correlation.png"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := lookupWithData(t, c.name, dataDir, c.needs)
			cfg, err := e.Configure(Quick, c.params)
			if err != nil {
				t.Fatal(err)
			}
			st := openTestStore(t)
			status, err := (&Runner{Store: st, Workers: 2}).Start(context.Background(), e,
				Options{Preset: Quick, Seed: 5, Workers: 2, DataDir: dataDir, Config: cfg}, Mode{})
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := Report(context.Background(), st, all.Experiments(), 0, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []*Result{status.Result, res} {
				dir := t.TempDir()
				paths, err := all.Experiments().Plots(r, dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range c.want {
					p := filepath.Join(dir, w)
					if !slices.Contains(paths, p) {
						t.Errorf("figure %s not written: %v", w, paths)
					} else if fi, err := os.Stat(p); err != nil {
						t.Error(err)
					} else if fi.Size() < 5000 {
						t.Errorf("figure %s has %d bytes", w, fi.Size())
					}
				}
			}
		})
	}
}
