package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

func smooth1D(x float64) float64 { return math.Sin(6*x) + 0.5*x }

func TestGPInterpolates1D(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x [][]float64
	var y []float64
	for i := 0; i < 12; i++ {
		xi := (float64(i) + 0.5) / 12
		x = append(x, []float64{xi})
		y = append(y, smooth1D(xi))
	}
	g, err := FitGP(rng, x, y, GPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("params: ℓ=%.3g σ²=%.3g σₙ²=%.3g lml=%.3f", g.Params.Lengthscales, g.Params.SignalVar, g.Params.NoiseVar, g.LogMarginalLikelihood())

	// Held-out points between the training points.
	var xs [][]float64
	for i := 0; i <= 40; i++ {
		xs = append(xs, []float64{0.04 + 0.92*float64(i)/40})
	}
	mean, variance := g.Predict(xs)
	var maxErr float64
	for i, xi := range xs {
		maxErr = math.Max(maxErr, math.Abs(mean[i]-smooth1D(xi[0])))
		if variance[i] < 0 {
			t.Fatalf("negative variance %v", variance[i])
		}
	}
	t.Logf("max held-out error %.2g", maxErr)
	if maxErr > 0.02 {
		t.Errorf("max held-out error %.4f, want < 0.02 (range of f ≈ 2)", maxErr)
	}
	// At the training points the latent variance is about the (small) noise level.
	_, vt := g.Predict(x)
	for i, v := range vt {
		if v > 1e-3 {
			t.Errorf("variance %.3g at training point %d, want ≈ 0", v, i)
		}
	}
	// Beyond the last training point the uncertainty grows.
	_, vfar := g.Predict([][]float64{{0.5 / 12}, {1}})
	if !(vfar[1] > vt[len(vt)-1]) {
		t.Errorf("variance at 1 (%.3g) not above that at the last training point (%.3g)", vfar[1], vt[len(vt)-1])
	}
}

// TestGPLogMLGradient checks the analytic gradient of the log marginal likelihood, warping
// parameters included, against central finite differences.
func TestGPLogMLGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, d = 15, 3
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		y[i] = math.Sin(3*x[i][0]) + x[i][1]*x[i][1] - 0.5*x[i][2] + 0.1*rng.NormFloat64()
	}
	ys, _, _ := standardize(y)
	f := newGPFit(x, ys, GPOptions{Warp: []bool{true, false, true}}.withDefaults())
	theta := []float64{math.Log(0.3), math.Log(0.7), math.Log(1.5), math.Log(0.8), math.Log(0.05),
		math.Log(0.7), math.Log(1.6), math.Log(2.2), math.Log(0.5)}
	if len(theta) != f.nparams() {
		t.Fatalf("%d params, want %d", len(theta), f.nparams())
	}
	grad := make([]float64, len(theta))
	f.logML(theta, grad)
	const h = 1e-5
	for i := range theta {
		tp := append([]float64(nil), theta...)
		tm := append([]float64(nil), theta...)
		tp[i] += h
		tm[i] -= h
		fd := (f.logML(tp, nil) - f.logML(tm, nil)) / (2 * h)
		if math.Abs(fd-grad[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("∂/∂θ[%d]: analytic %.8g, finite difference %.8g", i, grad[i], fd)
		}
	}
	// The prior's gradient too.
	g2 := make([]float64, len(theta))
	f.negLogPosterior(theta, g2)
	for i := range theta {
		tp := append([]float64(nil), theta...)
		tm := append([]float64(nil), theta...)
		tp[i] += h
		tm[i] -= h
		fd := (f.negLogPosterior(tp, make([]float64, len(theta))) - f.negLogPosterior(tm, make([]float64, len(theta)))) / (2 * h)
		if math.Abs(fd-g2[i]) > 1e-5*math.Max(1, math.Abs(fd)) {
			t.Errorf("posterior ∂/∂θ[%d]: analytic %.8g, finite difference %.8g", i, g2[i], fd)
		}
	}
}

func TestGPSampleMatchesPosterior(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := [][]float64{{0.1, 0.2}, {0.5, 0.9}, {0.8, 0.3}, {0.3, 0.6}}
	y := []float64{1, 3, 2, 0.5}
	g, err := NewGP(x, y, GPParams{Lengthscales: []float64{0.4, 0.4}, SignalVar: 1, NoiseVar: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	xs := [][]float64{{0.1, 0.2}, {0.45, 0.5}, {0.9, 0.9}}
	mean, variance := g.Predict(xs)
	const ns = 20000
	s := g.Sample(rng, xs, ns, false)
	for j := range xs {
		var m, v float64
		for k := 0; k < ns; k++ {
			m += s[k][j]
		}
		m /= ns
		for k := 0; k < ns; k++ {
			v += (s[k][j] - m) * (s[k][j] - m)
		}
		v /= ns - 1
		se := math.Sqrt(variance[j]/ns) + 1e-6
		if math.Abs(m-mean[j]) > 5*se {
			t.Errorf("point %d: sample mean %.4g, posterior mean %.4g", j, m, mean[j])
		}
		if math.Abs(v-variance[j]) > 0.05*variance[j]+1e-6 {
			t.Errorf("point %d: sample variance %.4g, posterior variance %.4g", j, v, variance[j])
		}
	}
	// Joint: duplicated points must get identical samples (perfect correlation).
	s2 := g.Sample(rng, [][]float64{{0.7, 0.7}, {0.7, 0.7}}, 5, false)
	for _, row := range s2 {
		if math.Abs(row[0]-row[1]) > 1e-3 {
			t.Errorf("duplicate points sampled %.5g and %.5g", row[0], row[1])
		}
	}
}

func TestGPRejectsBadData(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	if _, err := FitGP(rng, nil, nil, GPOptions{}); err == nil {
		t.Error("empty data accepted")
	}
	if _, err := FitGP(rng, [][]float64{{0.5}}, []float64{math.NaN()}, GPOptions{}); err == nil {
		t.Error("NaN output accepted")
	}
	// A single point and constant outputs are fine.
	g, err := FitGP(rng, [][]float64{{0.5}, {0.2}}, []float64{2, 2}, GPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := g.Predict([][]float64{{0.9}})
	if math.Abs(m[0]-2) > 1e-9 {
		t.Errorf("constant data predicted %v", m[0])
	}
}

func TestKumaraswamyRoundTrip(t *testing.T) {
	for _, k := range []Kumaraswamy{{1, 1}, {0.3, 2.5}, {4, 0.4}, {0.2, 0.2}, {5, 5}} {
		prev := -1.0
		for i := 0; i <= 100; i++ {
			x := float64(i) / 100
			w := k.CDF(x)
			if w < prev || w < 0 || w > 1 {
				t.Fatalf("%+v: CDF not monotone in [0,1] at %v: %v after %v", k, x, w, prev)
			}
			prev = w
			if x > 0.01 && x < 0.99 {
				if back := k.Quantile(w); math.Abs(back-x) > 1e-7 {
					t.Errorf("%+v: Quantile(CDF(%v)) = %v", k, x, back)
				}
			}
		}
		// cdfGrad's value agrees with CDF and its derivatives with finite differences.
		for _, x := range []float64{0.05, 0.3, 0.7, 0.95} {
			w, da, db := k.cdfGrad(x)
			if math.Abs(w-k.CDF(x)) > 1e-12 {
				t.Errorf("%+v: cdfGrad value %v vs CDF %v", k, w, k.CDF(x))
			}
			const h = 1e-6
			fa := (Kumaraswamy{k.A * math.Exp(h), k.B}.CDF(x) - Kumaraswamy{k.A * math.Exp(-h), k.B}.CDF(x)) / (2 * h)
			fb := (Kumaraswamy{k.A, k.B * math.Exp(h)}.CDF(x) - Kumaraswamy{k.A, k.B * math.Exp(-h)}.CDF(x)) / (2 * h)
			if math.Abs(fa-da) > 1e-6 || math.Abs(fb-db) > 1e-6 {
				t.Errorf("%+v at %v: ∂/∂log A %v vs %v, ∂/∂log B %v vs %v", k, x, da, fa, db, fb)
			}
		}
	}
}

func TestPowerTransformRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pos := make([]float64, 30)
	mixed := make([]float64, 30)
	for i := range pos {
		pos[i] = math.Exp(2 * rng.NormFloat64()) // log-normal: Box-Cox should find λ ≈ 0
		mixed[i] = rng.NormFloat64()*3 + math.Exp(rng.NormFloat64()*1.5)
	}
	for _, tc := range []struct {
		name string
		y    []float64
		m    PowerMethod
	}{{"box-cox", pos, BoxCox}, {"yeo-johnson", mixed, YeoJohnson}, {"yeo-johnson-pos", pos, YeoJohnson}, {"standardize", mixed, Standardize}} {
		pt, err := FitPowerTransform(tc.y, tc.m)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		z := make([]float64, len(tc.y))
		for i, v := range tc.y {
			z[i] = pt.Transform(v)
			if back := pt.Inverse(z[i]); math.Abs(back-v) > 1e-8*math.Max(1, math.Abs(v)) {
				t.Errorf("%s: Inverse(Transform(%v)) = %v", tc.name, v, back)
			}
		}
		if m, s := meanStd(z); math.Abs(m) > 1e-9 || math.Abs(s-1) > 1e-9 {
			t.Errorf("%s: transformed mean %v, std %v", tc.name, m, s)
		}
		// Strictly increasing.
		for _, pair := range [][2]float64{{0.1, 0.2}, {1, 1.5}, {3, 30}} {
			if tc.m != BoxCox {
				pair[0], pair[1] = pair[0]-2, pair[1]-2
			}
			if !(pt.Transform(pair[0]) < pt.Transform(pair[1])) {
				t.Errorf("%s: not increasing on %v", tc.name, pair)
			}
		}
		t.Logf("%s: λ = %.3f", tc.name, pt.Lambda)
		if tc.name == "box-cox" && math.Abs(pt.Lambda) > 0.35 {
			t.Errorf("Box-Cox λ = %.3f on log-normal data, want ≈ 0", pt.Lambda)
		}
	}
	if _, err := FitPowerTransform([]float64{1, -1}, BoxCox); err == nil {
		t.Error("Box-Cox of a negative value accepted")
	}
	if _, err := FitPowerTransform([]float64{2, 2, 2}, YeoJohnson); err == nil {
		t.Error("constant data accepted")
	}
}

func TestGPFixedHyperparameter(t *testing.T) {
	x := [][]float64{{0.1}, {0.4}, {0.6}, {0.9}}
	y := []float64{1, 0, 0.5, 2}
	g, err := FitGP(rand.New(rand.NewPCG(1, 2)), x, y, GPOptions{NoiseBounds: [2]float64{1e-2, 1e-2}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(g.Params.NoiseVar-1e-2) > 1e-12 {
		t.Errorf("noise %v, want it fixed at 0.01", g.Params.NoiseVar)
	}
	if _, err := FitGP(rand.New(rand.NewPCG(1, 2)), x, y, GPOptions{LengthBounds: [2]float64{1, 0.5}}); err == nil {
		t.Error("inverted bounds accepted")
	}
}
