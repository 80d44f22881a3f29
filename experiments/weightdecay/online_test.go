package weightdecay

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/hypergrad"
	"github.com/hyperflat/hyperflat/layers"
)

// TestProtocolIdentity checks that --online leaves the default configuration's stored form
// unchanged, and that --online and --protocol authors change the identity; a protocol not
// known is refused, by the flag and by Finish.
func TestProtocolIdentity(t *testing.T) {
	e := Experiment()
	id := func(flags map[string]string) (string, []byte) {
		t.Helper()
		cfg, err := e.Configure(experiments.Quick, flags)
		if err != nil {
			t.Fatal(err)
		}
		opt, err := e.Resolve(experiments.Options{Preset: experiments.Quick, Seed: 1, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		s, err := experiments.Identity(e.Name, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(opt.Config)
		return s, b
	}
	base, stored := id(nil)
	if strings.Contains(string(stored), `"online"`) || !strings.Contains(string(stored), `"protocol":"clean"`) {
		t.Errorf("the default configuration stores %s", stored)
	}
	if s, _ := id(map[string]string{"protocol": "clean", "online": "false"}); s != base {
		t.Errorf("--protocol clean --online=false has identity %s, the default %s", s, base)
	}
	for _, flags := range []map[string]string{{"protocol": "authors"}, {"online": "true"}} {
		if s, _ := id(flags); s == base {
			t.Errorf("%v leaves the identity %s unchanged", flags, s)
		}
	}
	if cfg, err := e.Configure(experiments.Quick, map[string]string{"protocol": "lookahead"}); err == nil {
		if err := cfg.Finish(experiments.Quick); err == nil {
			t.Error("--protocol lookahead accepted")
		}
	}
	c := defaultConfig(t, experiments.Quick)
	c.Protocol = "current"
	if err := c.Finish(experiments.Quick); err == nil {
		t.Error("a stored protocol \"current\" passed Finish")
	}
}

// TestEvaluation pins the authors' evaluation to weight_decay.py's: training-mode BatchNorm,
// the validation images in one batch (get_accuracy), the test set in fetch_MNIST_data's
// DataLoader batches of 50 and fetch_CIFAR_data's of 4; the clean protocol's eval mode.
func TestEvaluation(t *testing.T) {
	for _, tc := range []struct {
		protocol, dataset string
		want              evaluation
	}{
		{protocolAuthors, "mnist", evaluation{layers.Train, 0, 50}},
		{protocolAuthors, "cifar10", evaluation{layers.Train, 0, 4}},
		{protocolClean, "mnist", evaluation{layers.Eval, 500, 500}},
		{protocolClean, "cifar10", evaluation{layers.Eval, 500, 500}},
	} {
		c := &Config{Protocol: tc.protocol, Dataset: tc.dataset}
		if got := c.evaluation(); got != tc.want {
			t.Errorf("%s on %s: %+v, want %+v", tc.protocol, tc.dataset, got, tc.want)
		}
	}
	if (&Config{Protocol: protocolAuthors}).t1t2() != hypergrad.AtCurrent || (&Config{Protocol: protocolClean}).t1t2() != hypergrad.LookAhead {
		t.Error("authors must take the T1–T2 term at the current θ, clean the look-ahead one")
	}
}

// TestPenalty pins run_fit's scaling of the grid's ζ: ζη²/2 on √(Σ_t‖a_t‖²) offline (the
// code divides X by 2√Y), ζη² on ‖a_t‖ online (it divides by √‖a_t‖² alone).
func TestPenalty(t *testing.T) {
	c := &Config{LR: 0.01}
	if z, f := c.penalty(3); f != hypergrad.SqrtSum || math.Abs(z-1.5e-4) > 1e-18 {
		t.Errorf("offline: %v %v, want 1.5e-4 sqrt-sum", z, f)
	}
	c.Online = true
	if z, f := c.penalty(3); f != hypergrad.Sum || math.Abs(z-3e-4) > 1e-18 {
		t.Errorf("online: %v %v, want 3e-4 sum", z, f)
	}
}

// tinySet is n random images of d pixels with labels among the 10 classes.
func tinySet(rng *rand.Rand, n, d int) *datasets.Dataset {
	s := &datasets.Dataset{Name: "tiny", N: n, D: d, Shape: []int{d}, X: make([]float64, n*d), Y: make([]int, n)}
	for i := range s.X {
		s.X[i] = rng.Float64()
	}
	for i := range s.Y {
		s.Y[i] = rng.IntN(classes)
	}
	return s
}

// ceGrad is the gradient of the mean cross-entropy of the linear classifier x·W + b, W of
// shape d×10 row-major, on s.
func ceGrad(s *datasets.Dataset, w, b []float64) (gw, gb []float64) {
	gw, gb = make([]float64, len(w)), make([]float64, len(b))
	for n := 0; n < s.N; n++ {
		x := s.X[n*s.D : (n+1)*s.D]
		z := append([]float64(nil), b...)
		for j, xj := range x {
			for c := range z {
				z[c] += xj * w[j*classes+c]
			}
		}
		top, sum := z[0], 0.0
		for _, v := range z {
			top = math.Max(top, v)
		}
		for c := range z {
			z[c] = math.Exp(z[c] - top)
			sum += z[c]
		}
		for c := range z {
			r := z[c] / sum
			if c == s.Y[n] {
				r--
			}
			r /= float64(s.N)
			gb[c] += r
			for j, xj := range x {
				gw[j*classes+c] += xj * r
			}
		}
	}
	return gw, gb
}

// tinyFit is a float64 linear model on tiny random data, with λ set to random positive decays.
func tinyFit(t *testing.T) (*Config, *subsets, layers.FeatureModel, *hypergrad.Chain, *layers.WeightDecay) {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	d := &subsets{train: tinySet(rng, 7, 5), val: tinySet(rng, 6, 5), sel: tinySet(rng, 5, 5), test: tinySet(rng, 9, 5)}
	cfg := &Config{Model: "linear", Dataset: "mnist", Dtype: "float64", LR: 0.05, OuterLR: 0.01, InnerSteps: 3, OuterSteps: 2, Protocol: protocolClean}
	m, err := buildModel(cfg, d, 13)
	if err != nil {
		t.Fatal(err)
	}
	chain, wd, err := NewChain(m, d.train, d.val, cfg.LR)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range wd.Values() {
		v := l.Float64s()
		for i := range v {
			v[i] = 0.2 + rng.Float64()
		}
	}
	return cfg, d, m, chain, wd
}

// TestChainT1T2Forms checks both T1–T2 forms on the chain runFit optimizes against the
// cross-entropy's gradient in plain Go: the authors' −η θ⊙∇R̂_V(θ), and the look-ahead
// −η θ⊙∇R̂_V(θ'), θ' = θ − η(∇R̂_T(θ) + λ⊙θ) — which tests that the training risk carries
// ½Σλθ² and that each form reads the right images.
func TestChainT1T2Forms(t *testing.T) {
	cfg, d, m, chain, wd := tinyFit(t)
	eta := cfg.LR
	params := m.Net().Params()
	w, b := params[0].Value.Float64s(), params[1].Value.Float64s()
	lw, lb := wd.Values()[0].Float64s(), wd.Values()[1].Float64s()
	authors := func(w, b []float64) [][]float64 {
		gw, gb := ceGrad(d.val, w, b)
		for i := range gw {
			gw[i] *= -eta * params[0].Value.Float64s()[i]
		}
		for i := range gb {
			gb[i] *= -eta * params[1].Value.Float64s()[i]
		}
		return [][]float64{gw, gb}
	}
	tw, tb := ceGrad(d.train, w, b)
	aw, ab := append([]float64(nil), w...), append([]float64(nil), b...)
	for i := range aw {
		aw[i] -= eta * (tw[i] + lw[i]*w[i])
	}
	for i := range ab {
		ab[i] -= eta * (tb[i] + lb[i]*b[i])
	}
	cur, err := hypergrad.NewT1T2AtCurrent(chain.Problem, eta)
	if err != nil {
		t.Fatal(err)
	}
	look, err := hypergrad.NewT1T2(chain.Problem, eta)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		est  hypergrad.Estimator
		want [][]float64
	}{{"authors", cur, authors(w, b)}, {"lookahead", look, authors(aw, ab)}} {
		e, err := tc.est.Estimate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for k := range tc.want {
			for i, x := range tc.want[k] {
				if g := e.Grad[k][i]; math.Abs(g-x) > 1e-12+1e-9*math.Abs(x) {
					t.Fatalf("%s: λ %d entry %d: hypergradient %v, want %v", tc.name, k, i, g, x)
				}
			}
		}
	}
}

// TestRunFitOnline runs runFit on tiny data in every mode: at ζ = 0 online is offline exactly
// (weight_decay.py takes no online step then), at ζ > 0 it differs, and so does --protocol
// authors.
func TestRunFitOnline(t *testing.T) {
	history := func(online bool, protocol string, zeta float64) []checkpoint {
		cfg, d, _, _, _ := tinyFit(t)
		cfg.Online, cfg.Protocol = online, protocol
		f, err := runFit(context.Background(), cfg, d, 0, zeta, 13)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.history) != cfg.OuterSteps {
			t.Fatalf("%d checkpoints, want %d", len(f.history), cfg.OuterSteps)
		}
		return f.history
	}
	if a, b := history(false, protocolClean, 0), history(true, protocolClean, 0); !slices.EqualFunc(a, b, sameCheckpoint) {
		t.Errorf("ζ = 0: offline %+v, online %+v", a, b)
	}
	const zeta = 5e5 // ζη² = 1250 with η = 0.05: large enough to move λ within 2 hyper-steps of 3 steps
	base := history(false, protocolClean, zeta)
	for _, mode := range []struct {
		online   bool
		protocol string
	}{{true, protocolClean}, {false, protocolAuthors}, {true, protocolAuthors}} {
		h := history(mode.online, mode.protocol, zeta)
		if last, first := h[len(h)-1], base[len(base)-1]; last.norm == first.norm && last.testLoss == first.testLoss {
			t.Errorf("online=%v protocol=%q: the same final weights as the default", mode.online, mode.protocol)
		}
	}
}

// TestAuthorsDraw checks the authors' MNIST images: authorsMNIST is what
// testdata/torchdraw.py prints under the python3 that has torch (skipped without one), 100
// distinct training indices; the authors protocol puts them first, whatever the seed, then the
// seed's permutation of the rest; and it refuses other set sizes and a partial split.
func TestAuthorsDraw(t *testing.T) {
	seen := map[int]bool{}
	for _, i := range authorsMNIST {
		if i < 0 || i >= 60000 || seen[i] {
			t.Fatalf("authorsMNIST has %d twice or out of range", i)
		}
		seen[i] = true
	}
	perm := rand.New(rand.NewPCG(3, 4)).Perm(60000)
	order, err := authorsOrder(perm, 50, 60000)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 60000 || !slices.Equal(order[:100], authorsMNIST[:]) {
		t.Fatalf("authorsOrder: %d indices, first 100 %v", len(order), order[:min(100, len(order))])
	}
	rest := slices.DeleteFunc(slices.Clone(perm), func(i int) bool { return seen[i] })
	if !slices.Equal(order[100:], rest) {
		t.Error("after the authors' 100 images, authorsOrder does not follow the seed's permutation")
	}
	if _, err := authorsOrder(perm, 40, 60000); err == nil {
		t.Error("--images 40 accepted under the authors' draw")
	}
	if _, err := authorsOrder(perm[:1000], 50, 1000); err == nil {
		t.Error("a 1000-image split accepted under the authors' draw")
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import torch").Run(); err != nil {
		t.Skipf("%s has no torch (python3-torch): %v", py, err)
	}
	out, err := exec.Command(py, "testdata/torchdraw.py", "60000").Output()
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != len(authorsMNIST) {
		t.Fatalf("torchdraw.py printed %d indices, want %d", len(fields), len(authorsMNIST))
	}
	for k, f := range fields {
		if f != strconv.Itoa(authorsMNIST[k]) {
			t.Fatalf("index %d: torchdraw.py %s, authorsMNIST %d", k, f, authorsMNIST[k])
		}
	}
}
