package weightdecay

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/experiments/experimenttest"
	"github.com/hyperflat/hyperflat/layers"
	"gorgonia.org/tensor"
)

func sharedData(t *testing.T) string {
	t.Helper()
	dir, err := datasets.SharedDataDir()
	if err != nil {
		t.Skipf("needs MNIST from the shared data directory: %v", err)
	}
	return dir
}

// tinyConfig is a quick linear-MNIST configuration small enough to run in a few seconds.
func tinyConfig(tb testing.TB, repeats int) *Config {
	c := defaultConfig(tb, experiments.Quick)
	c.Repeats, c.InnerSteps, c.OuterSteps, c.Zetas, c.TestRows = repeats, 5, 2, []float64{100}, 200
	return c
}

func TestConfig(t *testing.T) {
	experimenttest.CheckConfig(t, Experiment())
}

func TestStoredConfig(t *testing.T) {
	opt := experiments.Options{Preset: experiments.Quick, Seed: 3, DataDir: sharedData(t), Config: tinyConfig(t, 1)}
	experimenttest.CheckStoredConfig(t, Experiment(), opt, true)
}

// TestQuickDerived checks the quick preset's sizes that depend on the model and the dataset,
// and that Finish leaves a finished configuration unchanged (workers finish it again).
func TestQuickDerived(t *testing.T) {
	for _, tc := range []struct {
		flags map[string]string
		want  Config
	}{
		{map[string]string{}, Config{Zetas: []float64{10, 100, 1000}, Repeats: 5, InnerSteps: 100, OuterSteps: 40, LR: 1e-3, Width: 1, TestRows: 10000}},
		{map[string]string{"dataset": "cifar10"}, Config{Zetas: []float64{30, 300}, Repeats: 5, InnerSteps: 50, OuterSteps: 40, LR: 2e-3, Width: 1, TestRows: 10000}},
		{map[string]string{"model": "resnet18"}, Config{Zetas: []float64{10, 100, 1000}, Repeats: 2, InnerSteps: 10, OuterSteps: 8, LR: 1e-3, Width: 1.0 / 16, TestRows: 500}},
		{map[string]string{"model": "resnet34", "inner-steps": "7", "zetas": "2,4"}, Config{Zetas: []float64{2, 4}, Repeats: 2, InnerSteps: 7, OuterSteps: 8, LR: 1e-3, Width: 1.0 / 16, TestRows: 500}},
	} {
		cfg, err := Experiment().Configure(experiments.Quick, tc.flags)
		if err != nil {
			t.Fatal(err)
		}
		c := cfg.(*Config)
		if err := c.Finish(experiments.Quick); err != nil {
			t.Fatal(err)
		}
		tc.want.Model, tc.want.Dataset, tc.want.Dtype, tc.want.OuterLR, tc.want.Images, tc.want.Protocol = c.Model, c.Dataset, "float32", 0.01, 50, protocolClean
		if !reflect.DeepEqual(*c, tc.want) {
			t.Errorf("quick %v:\n got %+v\nwant %+v", tc.flags, *c, tc.want)
		}
		again := *c
		again.Zetas = slices.Clone(c.Zetas)
		if err := again.Finish(experiments.Quick); err != nil || !reflect.DeepEqual(again, *c) {
			t.Errorf("quick %v: a second Finish gives %+v, %v", tc.flags, again, err)
		}
	}
	paper := defaultConfig(t, experiments.PaperScale)
	if paper.InnerSteps != 1000 || paper.OuterSteps != 100 || paper.LR != 1e-4 || paper.Repeats != 5 || !slices.Equal(paper.Zetas, []float64{1, 2, 3, 4, 5}) {
		t.Errorf("paper preset %+v, want weight_decay.py's 1000 inner and 100 outer steps at 1e-4, 5 replicates, ζ 1…5", *paper)
	}
}

func TestConfigRejects(t *testing.T) {
	for flag, value := range map[string]string{"zetas": "1,-2", "repeats": "-1", "lr": "-0.1", "width": "-1", "images": "-5"} {
		cfg, err := Experiment().Configure(experiments.Quick, map[string]string{flag: value})
		if err == nil {
			err = cfg.Finish(experiments.Quick)
		}
		if err == nil {
			t.Errorf("--%s %s accepted", flag, value)
		}
	}
	if _, err := Experiment().Configure(experiments.Quick, map[string]string{"dtype": "float16"}); err == nil {
		t.Error("--dtype float16 accepted")
	}
	if err := defaultConfig(t, experiments.PaperScale).Finish(experiments.PaperScale); err != nil {
		t.Error(err)
	}
	c := defaultConfig(t, experiments.PaperScale)
	c.InnerSteps = 0
	if err := c.Finish(experiments.PaperScale); err == nil {
		t.Error("the paper preset accepted 0 inner steps")
	}
}

// TestCellSeeds checks that the runs of one replicate share their initial weights at every ζ,
// that replicates and root seeds get distinct ones, and that a cell computes from the seed
// it stores: given replicate 1's seed, replicate 0's Eq. 1 cell computes replicate 1's run.
func TestCellSeeds(t *testing.T) {
	e := Experiment()
	opt, err := e.Resolve(experiments.Options{Preset: experiments.Quick, Seed: 1, DataDir: sharedData(t), Config: tinyConfig(t, 2)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Plan(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"r0/zeta=0", "r0/zeta=100", "r1/zeta=0", "r1/zeta=100"}
	for i, c := range p.Cells {
		if c.Key != keys[i] {
			t.Fatalf("cell %d is %s, want %s", i, c.Key, keys[i])
		}
	}
	if p.Cells[0].Seed != p.Cells[1].Seed || p.Cells[2].Seed != p.Cells[3].Seed {
		t.Error("the runs of one replicate have different seeds")
	}
	if p.Cells[0].Seed == p.Cells[2].Seed || p.Cells[0].Seed == replicateSeed(2, 0) || p.Cells[2].Seed == replicateSeed(2, 0) {
		t.Error("replicates, or --seed 1 and --seed 2, share initial weights")
	}
	history := func(i int) string {
		r, err := p.Run(context.Background(), i, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r.Output.(fitJSON).History)
		return string(b)
	}
	want := history(2)
	if history(0) == want {
		t.Fatal("replicates 0 and 1 computed the same history")
	}
	p.Cells[0].Seed = p.Cells[2].Seed
	if got := history(0); got != want {
		t.Errorf("cell 0 with replicate 1's seed computed\n%s\nwant\n%s", got, want)
	}
}

// TestEq7BeatsEq1 runs a reduced quick preset (3 replicates, one ζ) on MNIST with the linear
// classifier: Eq. 1 overfits the 50 validation images and loses test accuracy, Eq. 7 keeps
// it; the regularizer correlates with the generalization gap.
func TestEq7BeatsEq1(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 6 bilevel runs")
	}
	cfg := defaultConfig(t, experiments.Quick)
	cfg.Repeats, cfg.Zetas = 3, []float64{100}
	res, err := Experiment().Run(context.Background(), experiments.Options{Preset: experiments.Quick, Seed: 1, Workers: 2,
		DataDir: sharedData(t), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	tc1 := res.Table("table_c1")
	acc := map[string]float64{}
	for i := range tc1.Rows {
		acc[tc1.String(i, "method")] = tc1.Float(i, "mean_test_acc")
	}
	t.Logf("mean test accuracy: %v", acc)
	if acc["pac-bayes"] <= acc["validation"] {
		t.Errorf("Eq. 7 test accuracy %.4f does not exceed Eq. 1's %.4f", acc["pac-bayes"], acc["validation"])
	}
	if _, ok := acc["min-norm"]; !ok {
		t.Error("no min-norm row")
	}
	if rho := res.Table("correlation").Float(0, "spearman_rho"); !(rho > 0) {
		t.Errorf("Spearman correlation between the regularizer and the gap %v ≤ 0", rho)
	}
	s := res.Table("summary")
	for _, c := range []string{"method", "model", "dataset", "zeta", "val_acc", "test_acc", "weight_norm", "regularizer"} {
		if s.Column(c) < 0 {
			t.Errorf("summary lacks column %s", c)
		}
	}
}

// TestParamCount checks the --max-mem estimate's parameter count, computed without building
// the model, against models built at several widths.
func TestParamCount(t *testing.T) {
	if got := paramCount("linear", 784, 1); got != 7850 {
		t.Errorf("linear: %g parameters, want 7850", got)
	}
	for _, model := range []string{"resnet18", "resnet34"} {
		for _, w := range []float64{1.0 / 16, 0.25, 1} {
			net, err := layers.NewNet(tensor.Float32, 1)
			if err != nil {
				t.Fatal(err)
			}
			cfg := layers.ResNet18(1, 1000)
			if model == "resnet34" {
				cfg = layers.ResNet34(1, 1000)
			}
			cfg.Width = w
			if _, err := layers.NewResNet(net, cfg); err != nil {
				t.Fatal(err)
			}
			got, want := paramCount(model, 784, w), net.NumParams()
			if r := got / float64(want); r < 0.98 || r > 1.05 {
				t.Errorf("%s width %g: estimate %.0f parameters, built %d (ratio %.3f; want 0.98–1.05)", model, w, got, want, r)
			}
		}
	}
}

// Issue 52 (class 3): --model resnet18 --width 200 ended in the runtime's fatal out-of-memory
// while it initialized the first convolution (and a width whose estimate overflows int64
// would have passed any limit); sizes that cannot fit are refused up front with the estimate.
func TestSizesBeyondMemoryAreRefusedUpFront(t *testing.T) {
	const gib = 1 << 30
	mnist := []int{1, 28, 28}
	cfg := &Config{Model: "resnet18", Dataset: "mnist", Width: 200, Images: 50, Dtype: "float32"}
	err := fitsInMemory(cfg, mnist, 10, 2, 24*gib)
	if err == nil || !strings.Contains(err.Error(), "--width 200: an optimization of resnet18 on mnist holds about") ||
		!strings.Contains(err.Error(), "lower --width") {
		t.Errorf("width 200 on 24 GiB: %v", err)
	}
	for _, w := range []float64{1e9, 1e300} {
		cfg.Width = w
		if err := fitsInMemory(cfg, mnist, 10, 1, 24*gib); err == nil {
			t.Errorf("width %g on 24 GiB: no error", w)
		}
	}
	cfg.Width = 1 // the paper's
	if err := fitsInMemory(cfg, mnist, 10, 2, 24*gib); err != nil {
		t.Errorf("the paper's ResNet-18 on 24 GiB: %v", err)
	}
	if err := fitsInMemory(cfg, mnist, 10, 2, 0); err != nil {
		t.Errorf("unknown memory: %v", err)
	}
}
