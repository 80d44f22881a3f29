package search

import (
	"errors"
	"math"
)

// warpEps keeps warped inputs off the ends of [0,1], where the Kumaraswamy CDF's derivatives
// with respect to its parameters blow up (for b < 1 at x = 1 and for a < 1 at x = 0).
const warpEps = 1e-6

// Kumaraswamy is the CDF w(x) = 1 − (1 − x^A)^B of the Kumaraswamy distribution on [0,1], used
// as a per-dimension input warping (Snoek et al. 2014; HEBO, Cowen-Rivers et al. 2022). It is
// a monotone bijection of [0,1] for A, B > 0 and the identity for A = B = 1, so a GP on warped
// inputs can model objectives whose rate of change differs across a dimension's range (a
// learning rate that matters near one end only) with a single stationary lengthscale.
type Kumaraswamy struct{ A, B float64 }

// CDF warps x (clamped to [ε, 1−ε], ε = 1e-6) into (0,1).
func (k Kumaraswamy) CDF(x float64) float64 {
	if k.A == 1 && k.B == 1 {
		return x
	}
	x = math.Min(math.Max(x, warpEps), 1-warpEps)
	// 1 − x^a computed as −expm1(a ln x) keeps precision for x near 1.
	return -math.Expm1(k.B * math.Log(-math.Expm1(k.A*math.Log(x))))
}

// Quantile inverts CDF: x = (1 − (1 − u)^{1/B})^{1/A}.
func (k Kumaraswamy) Quantile(u float64) float64 {
	if k.A == 1 && k.B == 1 {
		return u
	}
	u = math.Min(math.Max(u, 0), 1)
	return math.Pow(-math.Expm1(math.Log1p(-u)/k.B), 1/k.A)
}

// cdfGrad is CDF together with its derivatives with respect to log A and log B (the GP fits
// the warping in log space).
func (k Kumaraswamy) cdfGrad(x float64) (w, dLogA, dLogB float64) {
	x = math.Min(math.Max(x, warpEps), 1-warpEps)
	lx := math.Log(x)
	xa := math.Exp(k.A * lx)        // x^a
	q := -math.Expm1(k.A * lx)      // 1 − x^a
	lq := math.Log(q)               // ln(1 − x^a)
	qb := math.Exp(k.B * lq)        // (1 − x^a)^b
	qb1 := math.Exp((k.B - 1) * lq) // (1 − x^a)^{b−1}
	w = 1 - qb
	dLogA = k.A * k.B * qb1 * xa * lx
	dLogB = -k.B * qb * lq
	return w, dLogA, dLogB
}

// PowerMethod selects the output transform PowerTransform applies.
type PowerMethod int

// Output transforms.
const (
	// Standardize only centres and scales (no power transform).
	Standardize PowerMethod = iota
	// BoxCox is ψ(λ, x) = (x^λ − 1)/λ (log x at λ = 0), for positive data.
	BoxCox
	// YeoJohnson extends Box-Cox to data of any sign (Yeo & Johnson 2000).
	YeoJohnson
)

// PowerTransform is a fitted monotone output transform z = (ψ(λ, y/Scale) − Mean)/Std, as
// scikit-learn's PowerTransformer(standardize=True) computes it on y/std(y) in HEBO. It makes
// heavy-tailed losses (a few diverged trainings among good ones) look Gaussian to the GP, so
// that the GP's lengthscales are fitted to the good region rather than to the outliers. Being
// strictly increasing, it keeps the ranking of observations, hence the incumbent.
type PowerTransform struct {
	Method PowerMethod
	Lambda float64
	// Scale divides the data before ψ (the data's standard deviation, as HEBO does).
	Scale float64
	// Mean and Std standardize ψ's output.
	Mean, Std float64
}

// lambdaRange bounds the λ search. scikit-learn leaves λ unbounded (Brent from the bracket
// [−2, 2]); a bound keeps Transform and Inverse finite on extreme data at no practical cost.
const lambdaRange = 5

// FitPowerTransform fits λ of the given method by maximum likelihood of a Gaussian on the
// transformed data (the criterion scikit-learn uses), then standardizes. BoxCox requires
// positive data. Constant data cannot be transformed and return an error.
func FitPowerTransform(y []float64, method PowerMethod) (PowerTransform, error) {
	n := len(y)
	if n < 2 {
		return PowerTransform{}, errors.New("search: power transform needs two values")
	}
	for _, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return PowerTransform{}, errors.New("search: power transform of a non-finite value")
		}
		if method == BoxCox && v <= 0 {
			return PowerTransform{}, errors.New("search: Box-Cox of a non-positive value")
		}
	}
	_, sd := meanStd(y)
	if !(sd > 0) {
		return PowerTransform{}, errors.New("search: power transform of constant data")
	}
	t := PowerTransform{Method: method, Scale: sd, Std: 1}
	x := make([]float64, n)
	for i, v := range y {
		x[i] = v / sd
	}
	if method != Standardize {
		t.Lambda = maximize1D(func(l float64) float64 { return powerLogLik(method, l, x) }, -lambdaRange, lambdaRange)
	}
	z := make([]float64, n)
	for i, v := range x {
		z[i] = powerPsi(method, t.Lambda, v)
	}
	mu, s := meanStd(z)
	if !(s > 0) || math.IsNaN(mu) || math.IsInf(mu, 0) || math.IsInf(s, 0) {
		return PowerTransform{}, errors.New("search: power transform degenerated")
	}
	t.Mean, t.Std = mu, s
	return t, nil
}

// Transform maps a raw value to the transformed, standardized scale.
func (t PowerTransform) Transform(y float64) float64 {
	return (powerPsi(t.Method, t.Lambda, y/t.Scale) - t.Mean) / t.Std
}

// Inverse maps a transformed value back to the raw scale. Values beyond the range that ψ
// reaches (possible for Box-Cox with λ ≠ 0) map to the nearest attainable raw value.
func (t PowerTransform) Inverse(z float64) float64 {
	v := z*t.Std + t.Mean
	l := t.Lambda
	var x float64
	switch t.Method {
	case BoxCox:
		if math.Abs(l) < 1e-12 {
			x = math.Exp(v)
		} else {
			x = math.Pow(math.Max(l*v+1, 0), 1/l)
		}
	case YeoJohnson:
		if v >= 0 {
			if math.Abs(l) < 1e-12 {
				x = math.Expm1(v)
			} else {
				x = math.Pow(math.Max(l*v+1, 0), 1/l) - 1
			}
		} else {
			if math.Abs(l-2) < 1e-12 {
				x = -math.Expm1(-v)
			} else {
				x = 1 - math.Pow(math.Max(1-(2-l)*v, 0), 1/(2-l))
			}
		}
	default:
		x = v
	}
	return x * t.Scale
}

// powerPsi is the untransformed-scale power function ψ(λ, x).
func powerPsi(m PowerMethod, l, x float64) float64 {
	switch m {
	case BoxCox:
		if math.Abs(l) < 1e-12 {
			return math.Log(x)
		}
		return math.Expm1(l*math.Log(x)) / l
	case YeoJohnson:
		if x >= 0 {
			if math.Abs(l) < 1e-12 {
				return math.Log1p(x)
			}
			return math.Expm1(l*math.Log1p(x)) / l
		}
		if math.Abs(l-2) < 1e-12 {
			return -math.Log1p(-x)
		}
		return -math.Expm1((2-l)*math.Log1p(-x)) / (2 - l)
	default:
		return x
	}
}

// powerLogLik is the profile log-likelihood of λ: a Gaussian fitted to ψ(λ, x), plus the log
// Jacobian of ψ.
func powerLogLik(m PowerMethod, l float64, x []float64) float64 {
	z := make([]float64, len(x))
	var jac float64
	for i, v := range x {
		z[i] = powerPsi(m, l, v)
		switch m {
		case BoxCox:
			jac += (l - 1) * math.Log(v)
		case YeoJohnson:
			jac += (l - 1) * math.Copysign(math.Log1p(math.Abs(v)), v)
		}
	}
	_, s := meanStd(z)
	if !(s > 0) || math.IsInf(s, 0) || math.IsNaN(s) {
		return math.Inf(-1)
	}
	return -float64(len(x))*math.Log(s) + jac
}

// maximize1D maximizes f on [lo, hi]: a grid to find the best bracket (the likelihood of λ
// can be flat or multimodal on small samples), then golden-section search inside it.
func maximize1D(f func(float64) float64, lo, hi float64) float64 {
	const grid = 40
	step := (hi - lo) / grid
	best, bestF := lo, math.Inf(-1)
	for i := 0; i <= grid; i++ {
		x := lo + float64(i)*step
		if v := f(x); v > bestF {
			best, bestF = x, v
		}
	}
	a, b := math.Max(best-step, lo), math.Min(best+step, hi)
	const invPhi = 0.6180339887498949
	c, d := b-invPhi*(b-a), a+invPhi*(b-a)
	fc, fd := f(c), f(d)
	for b-a > 1e-6 {
		if fc > fd {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = f(d)
		}
	}
	if x := (a + b) / 2; f(x) >= bestF {
		return x
	}
	return best
}

// meanStd returns the mean and population standard deviation.
func meanStd(x []float64) (mean, std float64) {
	if len(x) == 0 {
		return 0, 0
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)))
}
