package experiments

import (
	"context"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/layers"
	"gorgonia.org/tensor"
)

func sharedData(t *testing.T) string {
	t.Helper()
	dir, err := datasets.SharedDataDir()
	if err != nil {
		t.Skipf("needs the shared data directory: %v", err)
	}
	return dir
}

// TestWeightDecayEq7BeatsEq1 runs a reduced quick preset (3 replicates, one ζ) on MNIST with
// the linear classifier: Eq. 1 overfits the 50 validation images and loses test accuracy,
// Eq. 7 keeps it; the regularizer correlates with the generalization gap.
func TestWeightDecayEq7BeatsEq1(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 6 bilevel runs")
	}
	e, err := Lookup("weightdecay")
	if err != nil {
		t.Fatal(err)
	}
	opt, err := e.Resolve(Options{Preset: Quick, Seed: 1, Repeats: 3, Workers: 2, DataDir: sharedData(t),
		Params: map[string]string{"zetas": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	acc := map[string]float64{}
	for _, row := range res.Table("table_c1").Rows {
		acc[row[2].(string)] = row[3].(float64)
	}
	t.Logf("mean test accuracy: %v", acc)
	if acc["pac-bayes"] <= acc["validation"] {
		t.Errorf("Eq. 7 test accuracy %.4f does not exceed Eq. 1's %.4f", acc["pac-bayes"], acc["validation"])
	}
	if _, ok := acc["min-norm"]; !ok {
		t.Error("no min-norm row")
	}
	if rho := res.Table("correlation").Rows[0][2].(float64); !(rho > 0) {
		t.Errorf("Spearman correlation between the regularizer and the gap %v ≤ 0", rho)
	}
	s := res.Table("summary")
	want := []string{"method", "model", "dataset", "zeta", "val_acc", "test_acc", "weight_norm", "regularizer"}
	for _, c := range want {
		found := false
		for _, have := range s.Columns {
			found = found || have == c
		}
		if !found {
			t.Errorf("summary lacks column %s", c)
		}
	}
}

// TestWeightDecayParamCount checks the --max-mem estimate's parameter count, computed
// without building the model, against models built at several widths.
func TestWeightDecayParamCount(t *testing.T) {
	if got := wdParamCount("linear", 784, 1); got != 7850 {
		t.Errorf("linear: %d parameters, want 7850", got)
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
			got, want := wdParamCount(model, 784, w), net.NumParams()
			if r := float64(got) / float64(want); r < 0.98 || r > 1.05 {
				t.Errorf("%s width %g: estimate %d parameters, built %d (ratio %.3f; want 0.98–1.05)", model, w, got, want, r)
			}
		}
	}
}
