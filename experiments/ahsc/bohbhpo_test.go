package ahsc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hyperflat/hyperflat/convexity"
	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/losses"
	"github.com/hyperflat/hyperflat/search"
	"gorgonia.org/tensor"
)

// The round bohb-hpo runs for min_budget 1, max_budget 30, η 3, as its optimize computes it
// (traced in Python with the package's expressions): rung sizes and int(budget) epochs.
func TestAuthorsBOHBBrackets(t *testing.T) {
	want := [][]bohbHPORung{
		{{27, 1}, {9, 3}, {1, 10}, {1, 30}},
		{{12, 3}, {4, 10}, {1, 29}},
		{{6, 10}, {2, 30}},
		{{4, 30}},
	}
	got := bohbHPOBrackets()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("brackets %v, want %v", got, want)
	}
	fits, epochs := 0, 0
	for _, b := range got {
		for _, r := range b {
			fits += r.configs
			epochs += r.configs * r.epochs
		}
	}
	if fits != 67 || epochs != 439 {
		t.Errorf("%d fits of %d epochs in all, want 67 and 439", fits, epochs)
	}
}

func TestAuthorsBOHBSearch(t *testing.T) {
	space := OpenMLSpace(10)
	// a deterministic value per configuration and epochs; configurations of depth 4 fail
	value := func(cfg search.Config, epochs int) float64 {
		return -float64(cfg.Int("log2_width")) - 0.1*float64(cfg.Int("log2_batch_size")) - 0.01*float64(cfg.Int("log10_learning_rate")+5) - 0.001*float64(epochs)
	}
	type call struct {
		cfg    search.Config
		epochs int
		value  float64
	}
	var calls []call
	obj := func(_ context.Context, cfg search.Config, f float64) (float64, error) {
		e := int(math.Ceil(f*200 - 1e-9))
		if cfg.Int("depth") == 4 {
			calls = append(calls, call{cfg, e, math.Inf(1)})
			return math.NaN(), errors.New("diverged")
		}
		v := value(cfg, e)
		calls = append(calls, call{cfg, e, v})
		return v, nil
	}
	trials, err := authorsBOHBSearch(context.Background(), space, obj, rand.New(rand.NewPCG(1, 2)), 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 68 || len(trials) != 68 {
		t.Fatalf("%d calls and %d trials, want 67 rung fits and the final", len(calls), len(trials))
	}
	// rung by rung: the epochs, and each rung after the first holds the previous one's best
	k := 0
	bestV, best := math.Inf(1), search.Config{}
	for _, rungs := range bohbHPOBrackets() {
		var prev []call
		for i, r := range rungs {
			cur := calls[k : k+r.configs]
			k += r.configs
			for _, c := range cur {
				if c.epochs != r.epochs {
					t.Fatalf("a rung of %d epochs trained %d", r.epochs, c.epochs)
				}
				if c.value < bestV {
					bestV, best = c.value, c.cfg
				}
			}
			if i > 0 {
				slices.SortStableFunc(prev, func(a, b call) int { return cmp.Compare(a.value, b.value) })
				var want, got []string
				for _, c := range prev[:r.configs] {
					want = append(want, c.cfg.String())
				}
				for _, c := range cur {
					got = append(got, c.cfg.String())
				}
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("rung of %d epochs trained %v, want the previous rung's best %v", r.epochs, got, want)
				}
			}
			prev = slices.Clone(cur)
		}
	}
	last := calls[67]
	if last.epochs != 200 || last.cfg.String() != best.String() {
		t.Errorf("final fit %s at %d epochs, want %s (the least value at any budget) at 200", last.cfg, last.epochs, best)
	}
	sel, err := search.Best(trials)
	if err != nil || sel.Fidelity != 1 || sel.Config.String() != best.String() {
		t.Errorf("selected %+v (%v), want the final fit", sel, err)
	}
	for _, tr := range trials[:67] {
		if tr.Fidelity >= 1 {
			t.Fatalf("a rung fit has fidelity %v", tr.Fidelity)
		}
	}

	if _, err := authorsBOHBSearch(context.Background(), space, obj, rand.New(rand.NewPCG(1, 2)), 20); err == nil {
		t.Error("a full training shorter than the largest rung was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err = authorsBOHBSearch(ctx, space, func(ctx context.Context, cfg search.Config, f float64) (float64, error) {
		if n++; n == 5 {
			cancel()
		}
		return -1, nil
	}, rand.New(rand.NewPCG(1, 2)), 200)
	if !errors.Is(err, context.Canceled) || n != 5 {
		t.Errorf("after a cancel: %v after %d calls", err, n)
	}
}

// Method bohb is the authors' BOHB under the authors' protocol on an OpenML set (67 rung fits
// and the final one, rungs early-stopped on the training loss), and the package's BOHB under
// the clean protocol.
// blobsProblem is a small two-class OpenML-like problem: 40 training, 20 validation and 20
// test rows of two Gaussian blobs in 4 dimensions, 40 epochs, a budget of 3.
func blobsProblem() (*problem, *split) {
	rng := rand.New(rand.NewPCG(5, 5))
	mk := func(n int) *datasets.Dataset {
		ds := &datasets.Dataset{Name: "blobs", N: n, D: 4, Shape: []int{4}, Classes: []string{"a", "b"}, X: make([]float64, n*4), Y: make([]int, n)}
		for i := 0; i < n; i++ {
			ds.Y[i] = i % 2
			for j := 0; j < 4; j++ {
				ds.X[i*4+j] = rng.NormFloat64() + float64(ds.Y[i])
			}
		}
		return ds
	}
	sp := &split{train: mk(40), val: mk(20), test: mk(20)}
	p := &problem{name: "blobs", group: openML, metric: convexity.AUC, label: "roc-auc", loss: losses.Binary,
		space: OpenMLSpace(4), epochs: 40, budget: 3, build: OpenMLBuild(2, tensor.Float64), dtype: tensor.Float64,
		estimate: func(*datasets.Dataset, recordRows) func(search.Config) (int64, error) { return nil }}
	return p, sp
}

func TestAuthorsBOHBWiring(t *testing.T) {
	p, sp := blobsProblem()
	for _, tc := range []struct {
		protocol  string
		calls     int // evaluations of the objective, rungs included
		fullEvals int
	}{{protocolAuthors, 68, 1}, {protocolClean, -1, -1}} {
		cfg := defaultConfig(t, experiments.Quick)
		cfg.Protocol = tc.protocol
		r, err := runOne(context.Background(), p, sp, cfg, "bohb", 0, seeds{weights: 1, search: 2}, limits{}, 1)
		if err != nil || r.err != "" {
			t.Fatalf("%s: %v %s", tc.protocol, err, r.err)
		}
		if len(r.evals) != r.calls {
			t.Errorf("%s: %d calls, %d evaluations stored; every call is a row", tc.protocol, r.calls, len(r.evals))
		}
		if tc.calls >= 0 && (r.calls != tc.calls || len(fullEvals(r.evals)) != tc.fullEvals) {
			t.Errorf("%s: %d calls, %d at full fidelity; want %d and %d", tc.protocol, r.calls, len(fullEvals(r.evals)), tc.calls, tc.fullEvals)
		}
		if tc.protocol == protocolAuthors {
			// the reported configuration is the rungs' best (highest validation AUC, the
			// first of ties), which a reader can recheck from the stored evaluations
			rungs, last := r.evals[:len(r.evals)-1], r.evals[len(r.evals)-1]
			best := -1
			for i, e := range rungs {
				if e.fullFidelity() || !math.IsNaN(e.testMetric) {
					t.Errorf("rung %d: fidelity %v, test metric %v; want a lower fidelity, no test score", i, e.fidelity, e.testMetric)
				}
				if !e.failed && (best < 0 || e.valMetric > rungs[best].valMetric) {
					best = i
				}
			}
			if best < 0 || last.config != rungs[best].config || last.config != r.config || !last.fullFidelity() {
				t.Errorf("reported %s (last call %s at fidelity %v), the rungs' best %d", r.config, last.config, last.fidelity, best)
			}
		}
		if tc.calls < 0 && r.calls == 68 {
			t.Errorf("%s: the authors' round under the clean protocol", tc.protocol)
		}
	}
}
