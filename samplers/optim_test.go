package samplers_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The quadratic of the optimizer tests: f(θ) = ½ Σ_j a_j θ_j² over two parameter tensors,
// A = (θ_0, θ_1) of shape (2) with curvatures (1, 3) and B = θ_2 of shape (1, 1) with
// curvature 2, starting at θ = (1, −2, 0.5). The gradient is a⊙θ.
var (
	quadStart = []float64{1, -2, 0.5}
	quadCurv  = []float64{1, 3, 2}
)

func quadParams[T graph.Float]() []*tensor.Dense {
	return []*tensor.Dense{dense[T](quadStart[:2], 2), dense[T](quadStart[2:], 1, 1)}
}

func quadGrads[T graph.Float](t *testing.T, ps []*tensor.Dense) []G.Value {
	t.Helper()
	var gs []G.Value
	k := 0
	for _, p := range ps {
		th, err := graph.Elements[T](p)
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float64, len(th))
		for j := range th {
			g[j] = quadCurv[k] * float64(th[j])
			k++
		}
		gs = append(gs, dense[T](g, p.Shape()...))
	}
	return gs
}

func flat(t *testing.T, ps []*tensor.Dense) []float64 {
	t.Helper()
	out, err := flatErr(ps)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func flatErr(ps []*tensor.Dense) ([]float64, error) {
	var out []float64
	for _, p := range ps {
		xs, err := graph.ToFloat64s(p)
		if err != nil {
			return nil, err
		}
		out = append(out, xs...)
	}
	return out, nil
}

// runQuad takes steps optimizer steps on the quadratic in dtype T.
func runQuad[T graph.Float](t *testing.T, o samplers.Optimizer, steps int) []float64 {
	t.Helper()
	ps := quadParams[T]()
	for range steps {
		if err := o.Step(ps, quadGrads[T](t, ps)); err != nil {
			t.Fatal(err)
		}
	}
	return flat(t, ps)
}

func TestOptimizersByHand(t *testing.T) {
	cases := []struct {
		name string
		opt  func() samplers.Optimizer
		want []float64 // θ after 3 steps
	}{
		// PyTorch SGD, lr 0.1, momentum 0.9 (b ← g on the first step, b ← 0.9b + g later,
		// θ ← θ − 0.1b). θ_0 (a = 1): g = 1, b = 1, θ = 0.9; g = 0.9, b = 1.8, θ = 0.72;
		// g = 0.72, b = 2.34, θ = 0.486. θ_1 (a = 3): g = −6, b = −6, θ = −1.4; g = −4.2,
		// b = −9.6, θ = −0.44; g = −1.32, b = −9.96, θ = 0.556. θ_2 likewise: 0.031.
		{"sgd-momentum", func() samplers.Optimizer { return &samplers.SGD{LR: 0.1, Momentum: 0.9} },
			[]float64{0.486, 0.556, 0.031}},
		// Nesterov: d = g + 0.9b. θ_0: b = 1, d = 1.9, θ = 0.81; g = 0.81, b = 1.71,
		// d = 2.349, θ = 0.5751; g = 0.5751, b = 2.1141, d = 2.47779, θ = 0.327321.
		{"sgd-nesterov", func() samplers.Optimizer { return &samplers.SGD{LR: 0.1, Momentum: 0.9, Nesterov: true} },
			[]float64{0.327321, 0.696346, -0.054176}},
		// Plain gradient descent, lr 0.1: θ ← (1 − 0.1a)θ, so θ_0 = 0.9³ = 0.729,
		// θ_1 = −2·0.7³ = −0.686, θ_2 = 0.5·0.8³ = 0.256.
		{"sgd", func() samplers.Optimizer { return &samplers.SGD{LR: 0.1} },
			[]float64{0.729, -0.686, 0.256}},
		// PyTorch Adam, lr 0.1, β = (0.9, 0.999), ε = 1e-8; θ ← θ − 0.1·m̂/(√v̂ + ε) with
		// m̂ = m/(1−0.9ᵗ), v̂ = v/(1−0.999ᵗ). θ_0: t=1: g = 1, m = 0.1, v = 0.001, m̂ = v̂ = 1,
		// θ = 1 − 0.1/(1+1e-8) = 0.900000001; t=2: g = 0.900000001, m = 0.1800000001,
		// v = 0.001809000002, m̂ = 0.94736842158, v̂ = 0.90495247714, θ = 0.80041222971;
		// t=3: m = 0.24204122306, v = 0.00244785074, m̂ = 0.89314104451,
		// v̂ = 0.81676674091, θ = 0.70158627450.
		{"adam", func() samplers.Optimizer { return samplers.NewAdam(0.1) },
			[]float64{0.701586274504415, -1.7006233917912488, 0.2048712525602996}},
		// PyTorch RMSprop, lr 0.01, α = 0.99, ε = 1e-8: s ← 0.99s + 0.01g², θ ← θ − 0.01g/(√s+ε).
		// θ_0: g = 1, s = 0.01, θ = 1 − 0.01/0.10000001 = 0.90000001; g = 0.90000001,
		// s = 0.01800000018, θ = 0.83291797527; s = 0.02475752371, θ = 0.77998228198.
		{"rmsprop", func() samplers.Optimizer { return samplers.NewRMSprop(0.01) },
			[]float64{0.7799822819823541, -1.7753494441022075, 0.2904332263210434}},
		// Centered with momentum 0.9: a ← a + 0.01(g − a), r = √(s − a²) + ε,
		// b ← 0.9b + g/r, θ ← θ − 0.01b (the same recursion, evaluated in float64).
		{"rmsprop-centered-momentum", func() samplers.Optimizer {
			o := samplers.NewRMSprop(0.01)
			o.Momentum, o.Centered = 0.9, true
			return o
		}, []float64{0.5496501845770552, -1.5406780171484304, 0.07086753228974726}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got64 := runQuad[float64](t, c.opt(), 3)
			got32 := runQuad[float32](t, c.opt(), 3)
			for j, w := range c.want {
				if !closeTo(got64[j], w, 1e-12) {
					t.Errorf("float64 θ_%d = %.15g; want %.15g", j, got64[j], w)
				}
				if !closeTo(got32[j], w, 2e-6) || !closeTo(got32[j], got64[j], 2e-6) {
					t.Errorf("float32 θ_%d = %.9g; want %.9g (float64 %.15g)", j, got32[j], w, got64[j])
				}
			}
		})
	}
}

func TestAdamWeightDecayAndEps(t *testing.T) {
	// One step of Adam with ε = 1e-7 and coupled weight decay 0.5 on θ = 1 with
	// zero loss gradient: g = 0.5θ = 0.5, m̂ = 0.5, v̂ = 0.25, θ = 1 − 0.1·0.5/(0.5 + 1e-7).
	o := samplers.NewAdam(0.1)
	o.Eps, o.WeightDecay = 1e-7, 0.5
	p := []*tensor.Dense{dense[float64]([]float64{1}, 1)}
	if err := o.Step(p, []G.Value{dense[float64]([]float64{0}, 1)}); err != nil {
		t.Fatal(err)
	}
	if got, want := f64s(t, p[0])[0], 1-0.1*0.5/(0.5+1e-7); !closeTo(got, want, 1e-15) {
		t.Errorf("θ = %.17g; want %.17g", got, want)
	}
}

// TestAdamEpsHat: the ε̂ form (Keras, scikit-learn) against hand-derived first steps and
// scikit-learn's AdamOptimizer.update_params written out step by step.
func TestAdamEpsHat(t *testing.T) {
	// First step from m = v = 0 with gradient g: m = (1−β1)g, v = (1−β2)g², so
	// α·m/(√v + ε) = LR·√(1−β2)·g / (√(1−β2)·|g| + ε), whereas PyTorch's
	// m̂/(√v̂ + ε) = g/(|g| + ε). With a small gradient the two differ by far.
	const lr, g = 0.1, 1e-6
	s := math.Sqrt(1 - 0.999)
	for _, c := range []struct {
		opt  *samplers.Adam
		want float64
	}{
		{samplers.NewKerasAdam(lr), 1 - lr*s*g/(s*g+1e-7)},                               // 0.97597…
		{&samplers.Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-7}, 1 - lr*g/(g+1e-7)}, // 0.90909…
	} {
		p := []*tensor.Dense{dense[float64]([]float64{1}, 1)}
		if err := c.opt.Step(p, []G.Value{dense[float64]([]float64{g}, 1)}); err != nil {
			t.Fatal(err)
		}
		if got := f64s(t, p[0])[0]; !closeTo(got, c.want, 1e-14) {
			t.Errorf("EpsHat=%v: θ = %.17g; want %.17g", c.opt.EpsHat, got, c.want)
		}
	}

	// Several steps with weight decay against scikit-learn's update, in float64 (its type)
	// and float32 (Keras's).
	rng := rand.New(rand.NewPCG(3, 4))
	const n, steps = 37, 6
	b1, b2, eps, wd := 0.8, 0.99, 1e-8, 0.01
	theta, m, v := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	o64 := &samplers.Adam{LR: 0.05, Beta1: b1, Beta2: b2, Eps: eps, WeightDecay: wd, EpsHat: true}
	o32 := *o64
	p64 := []*tensor.Dense{dense[float64](theta, n)}
	p32 := []*tensor.Dense{dense[float32](theta, n)}
	for step := 1; step <= steps; step++ {
		grad := make([]float64, n)
		for i := range grad {
			grad[i] = rng.NormFloat64() * math.Pow(10, float64(-i%8)) // down to 1e-7: where ε̂ matters
		}
		lrT := o64.LR * math.Sqrt(1-math.Pow(b2, float64(step))) / (1 - math.Pow(b1, float64(step)))
		for i := range theta {
			gi := grad[i] + wd*theta[i]
			m[i] = b1*m[i] + (1-b1)*gi
			v[i] = b2*v[i] + (1-b2)*gi*gi
			theta[i] += -lrT * m[i] / (math.Sqrt(v[i]) + eps)
		}
		if err := o64.Step(p64, []G.Value{dense[float64](grad, n)}); err != nil {
			t.Fatal(err)
		}
		if err := o32.Step(p32, []G.Value{dense[float32](grad, n)}); err != nil {
			t.Fatal(err)
		}
	}
	got64, got32 := f64s(t, p64[0]), flat(t, p32)
	for i := range theta {
		if !closeTo(got64[i], theta[i], 1e-13) {
			t.Errorf("float64 θ_%d = %.17g; scikit-learn's update gives %.17g", i, got64[i], theta[i])
		}
		if !closeTo(got32[i], theta[i], 1e-5) {
			t.Errorf("float32 θ_%d = %.9g; scikit-learn's update gives %.9g", i, got32[i], theta[i])
		}
	}
}

func TestDecoupledDecay(t *testing.T) {
	// θ ← θ − 0.1·λ⊙θ with per-entry λ = (1, 2) on (1, −2), and one λ = 0.5 on (4).
	ps := []*tensor.Dense{dense[float32]([]float64{1, -2}, 2), dense[float32]([]float64{4}, 1, 1)}
	ls := []*tensor.Dense{dense[float32]([]float64{1, 2}, 2), dense[float32]([]float64{0.5}, 1)}
	if err := samplers.DecoupledDecay(ps, ls, 0.1); err != nil {
		t.Fatal(err)
	}
	got, want := flat(t, ps), []float64{0.9, -1.6, 3.8}
	for j := range want {
		if !closeTo(got[j], want[j], 1e-6) {
			t.Errorf("θ_%d = %v; want %v", j, got[j], want[j])
		}
	}
	if err := samplers.DecoupledDecay(ps, ls[:1], 0.1); err == nil {
		t.Error("DecoupledDecay accepted 1 decay for 2 parameters")
	}
}

func TestOptimizerErrors(t *testing.T) {
	nan := dense[float64]([]float64{1, 0}, 2)
	nan.Float64s()[1] = 0 / func() float64 { return 0 }()
	cases := []struct {
		name   string
		params []*tensor.Dense
		grads  []G.Value
		want   string
	}{
		{"count", quadParams[float64](), []G.Value{dense[float64]([]float64{1, 1}, 2)}, "1 gradients for 2 parameters"},
		{"shape", quadParams[float64](), []G.Value{dense[float64]([]float64{1, 1, 1}, 3), dense[float64]([]float64{1}, 1, 1)}, "gradient 0 has shape"},
		{"dtype", quadParams[float64](), []G.Value{dense[float64]([]float64{1, 1}, 2), dense[float32]([]float64{1}, 1, 1)}, "gradient 1 has dtype float32"},
		{"mixed", []*tensor.Dense{dense[float64]([]float64{1}, 1), dense[float32]([]float64{1}, 1)}, nil, "parameter 1 has dtype float32"},
		{"nan", []*tensor.Dense{dense[float64]([]float64{1}, 1), dense[float64]([]float64{1, 2}, 2)},
			[]G.Value{dense[float64]([]float64{1}, 1), nan}, "gradient of parameter 1 has a non-finite entry"},
		{"inf", []*tensor.Dense{dense[float32]([]float64{1}, 1)}, []G.Value{dense[float32]([]float64{1e39}, 1)}, "gradient of parameter 0 has a non-finite entry"},
		// several: the first is named, however the check reads them
		{"first", []*tensor.Dense{dense[float32]([]float64{1}, 1), dense[float32]([]float64{1, 2, 3}, 3), dense[float32]([]float64{1}, 1)},
			[]G.Value{dense[float32]([]float64{1}, 1), dense[float32]([]float64{0, 1e39, -1e39}, 3), dense[float32]([]float64{1e39}, 1)},
			"gradient of parameter 1 has a non-finite entry (+Inf at flat index 1)"},
		{"empty", nil, nil, "no parameters"},
	}
	for _, c := range cases {
		for _, o := range []samplers.Optimizer{&samplers.SGD{LR: 0.1, Momentum: 0.9}, samplers.NewAdam(1e-3), samplers.NewRMSprop(1e-2)} {
			before := flat(t, c.params)
			err := o.Step(c.params, c.grads)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %T.Step error %v; want one containing %q", c.name, o, err, c.want)
			}
			if after := flat(t, c.params); !equal(before, after) {
				t.Errorf("%s: %T.Step changed the parameters on error", c.name, o)
			}
		}
	}

	// The parameter list may not change between steps.
	o := samplers.NewAdam(1e-3)
	ps := quadParams[float64]()
	if err := o.Step(ps, quadGrads[float64](t, ps)); err != nil {
		t.Fatal(err)
	}
	if err := o.Step(ps[:1], quadGrads[float64](t, ps)[:1]); err == nil || !strings.Contains(err.Error(), "1 parameters but the optimizer state holds 2") {
		t.Errorf("changed list: %v", err)
	}
	ps32 := quadParams[float32]()
	if err := o.Step(ps32, quadGrads[float32](t, ps32)); err == nil || !strings.Contains(err.Error(), "optimizer state is float64") {
		t.Errorf("changed dtype: %v", err)
	}
	o.Reset()
	if err := o.Step(ps32, quadGrads[float32](t, ps32)); err != nil {
		t.Errorf("after Reset: %v", err)
	}
	// A view cannot be updated in place.
	big := dense[float64]([]float64{1, 2, 3, 4}, 2, 2)
	view, err := big.Slice(tensor.S(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&samplers.SGD{LR: 1}).Step([]*tensor.Dense{view.(*tensor.Dense)}, []G.Value{dense[float64]([]float64{1, 1}, 2)}); err == nil || !strings.Contains(err.Error(), "view") {
		t.Errorf("view parameter: %v", err)
	}
	if err := (&samplers.SGD{LR: 0.1, Nesterov: true}).Step(ps, quadGrads[float64](t, ps)); err == nil {
		t.Error("Nesterov without momentum accepted")
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}
