package hypergrad

import (
	"context"
	"math"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
	"gonum.org/v1/gonum/mat"
	"gorgonia.org/tensor"
)

// gradV is ∇_θC = X_vᵀ(X_vθ − y_v)/m.
func (r *ridge) gradV(th []float64) []float64 {
	m, _ := r.xv.Dims()
	out := make([]float64, r.d)
	for i := 0; i < m; i++ {
		p := -r.yv.At(i, 0)
		for j := range th {
			p += r.xv.At(i, j) * th[j]
		}
		for j := range out {
			out[j] += p * r.xv.At(i, j) / float64(m)
		}
	}
	return out
}

// mixedT is (∂²L_T/∂λ∂θ)ᵀ v for the penalty ½Σλ⊙θ²: θ⊙v with a λ per coefficient, θᵀv with
// one shared λ.
func (r *ridge) mixedT(v []float64) []float64 {
	th := r.theta.Float64s()
	if r.lambda.Shape().TotalSize() == 1 {
		s := 0.0
		for i := range th {
			s += th[i] * v[i]
		}
		return []float64{s}
	}
	out := make([]float64, len(th))
	for i := range th {
		out[i] = th[i] * v[i]
	}
	return out
}

func estimate(t *testing.T, e Estimator) Estimate {
	t.Helper()
	out, err := e.Estimate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestT1T2AtCurrentClosedForm checks the authors' T1–T2 form, −lr·(∂²L_T/∂λ∂θ)ᵀ∇_θC(θ) at
// the current θ, against its closed form on ridge regression, and against finite differences
// of the objective it linearizes, λ ↦ C(θ) − lr·∇_θC(θ)ᵀ∇_θL_T(θ, λ).
func TestT1T2AtCurrentClosedForm(t *testing.T) {
	for _, perCoef := range []bool{false, true} {
		r := newRidge(t, 6, perCoef, 0.3)
		const lr = 0.1
		im, err := NewT1T2AtCurrent(r.problem, lr)
		if err != nil {
			t.Fatal(err)
		}
		e := estimate(t, im)
		th := r.theta.Float64s()
		if want := r.val(th); math.Abs(e.Value-want) > 1e-12 {
			t.Errorf("perCoef=%v: value %v, want C(θ) = %v", perCoef, e.Value, want)
		}
		gv := r.gradV(th)
		want := r.mixedT(gv)
		for i := range want {
			want[i] *= -lr
		}
		if d := relErr(e.Grad[0], want); d > 1e-10 {
			t.Errorf("perCoef=%v: hypergradient %v, closed form %v (rel err %g)", perCoef, e.Grad[0], want, d)
		}
		lin := func() float64 {
			gt := r.gradT(th)
			s := r.val(th)
			for i := range gt {
				s -= lr * gv[i] * gt[i]
			}
			return s
		}
		if fd := r.fdLambda(lin); relErr(e.Grad[0], fd) > 1e-6 {
			t.Errorf("perCoef=%v: hypergradient %v, finite differences of the linearization %v", perCoef, e.Grad[0], fd)
		}
	}
	if _, err := NewT1T2AtCurrent(newRidge(t, 6, true, 0.3).problem, 0); err == nil {
		t.Error("a zero T1–T2 step was accepted")
	}
}

// TestT1T2FormsDifferAndAgree sets the look-ahead form (NewT1T2) beside the authors' form
// (NewT1T2AtCurrent) on ridge regression, where C is quadratic: away from a stationary point
// they differ by exactly lr²·(∂²L_T/∂λ∂θ)ᵀ A_V ∇_θL_T (A_V = X_vᵀX_v/m), so by a relative
// O(lr) that vanishes as lr → 0; at the minimizer of L_T they coincide. Every estimator is
// built on the ridge's one graph, so each must keep inputs of its own (see inputsLike).
func TestT1T2FormsDifferAndAgree(t *testing.T) {
	forms := func(r *ridge, lr float64) (look, cur []float64) {
		u, err := NewT1T2(r.problem, lr)
		if err != nil {
			t.Fatal(err)
		}
		im, err := NewT1T2AtCurrent(r.problem, lr)
		if err != nil {
			t.Fatal(err)
		}
		return estimate(t, u).Grad[0], estimate(t, im).Grad[0]
	}
	for _, perCoef := range []bool{false, true} {
		r := newRidge(t, 7, perCoef, 0.2)
		prevRel := math.Inf(1)
		for _, lr := range []float64{0.1, 0.01, 0.001} {
			look, cur := forms(r, lr)
			// A_V ∇_θL_T, then lr² times its mixed product.
			m, _ := r.xv.Dims()
			var av mat.Dense
			av.Mul(r.xv.T(), r.xv)
			gt := r.gradT(r.theta.Float64s())
			avg := make([]float64, r.d)
			for i := range avg {
				for j := range gt {
					avg[i] += av.At(i, j) * gt[j] / float64(m)
				}
			}
			diff := r.mixedT(avg)
			rel := 0.0
			for i := range diff {
				diff[i] *= lr * lr
				got := look[i] - cur[i]
				if math.Abs(got-diff[i]) > 1e-9*math.Max(math.Abs(diff[i]), 1e-12)+1e-15 {
					t.Errorf("perCoef=%v lr=%g: look-ahead − authors = %v at entry %d, closed form %v", perCoef, lr, got, i, diff[i])
				}
				rel = math.Max(rel, math.Abs(got)/math.Abs(cur[i]))
			}
			if lr == 0.1 && !(rel > 1e-3) {
				t.Errorf("perCoef=%v lr=%g: the forms differ by only %g (relative): the test would not tell them apart", perCoef, lr, rel)
			}
			if !(rel < prevRel/5) {
				t.Errorf("perCoef=%v lr=%g: relative difference %g did not shrink with lr (was %g)", perCoef, lr, rel, prevRel)
			}
			prevRel = rel
		}
		// At θ* = (A + diag λ)⁻¹ b, ∇_θL_T = 0 and θ' = θ: the forms coincide.
		r.toMinimizer(t)
		look, cur := forms(r, 0.1)
		if d := relErr(look, cur); d > 1e-10 {
			t.Errorf("perCoef=%v: at the training minimizer the forms differ: look-ahead %v, authors %v", perCoef, look, cur)
		}
	}
}

// decoupledChain is a chain that descends the ridge's fit by SGD at lr and then decays
// θ ← θ − lr·λ⊙θ, as weight_decay.py's inner loop (with SGD for Adam).
func decoupledChain(r *ridge, lr float64) *Chain {
	return &Chain{Problem: r.problem, InnerLoss: r.fit, Inner: &samplers.SGD{LR: lr},
		AfterStep: func() error {
			th, l := r.theta.Float64s(), r.lambda.Float64s()
			for i := range th {
				th[i] -= lr * l[i] * th[i]
			}
			return nil
		}}
}

// TestOnlineMatchesAuthorsLoop runs Bilevel online (Form Sum, Algorithm C.3) with a decoupled
// decay and SGD on both levels, against run_fit's loop with online=True in weight_decay.py
// written out in plain Go: at every inner step, a_t at (θ_t, λ), a λ step on ζ∇_λ‖a_t‖ (checked
// against finite differences of ‖a_t‖), then the training step and the decay by the new λ;
// after the inner steps, the T1–T2 step. Both T1–T2 forms are run.
func TestOnlineMatchesAuthorsLoop(t *testing.T) {
	const lr, outerLR, zeta, inner, hyper = 0.05, 0.3, 0.7, 4, 3
	for _, form := range []T1T2Form{AtCurrent, LookAhead} {
		r := newRidge(t, 8, true, 0.1)
		th0, lam0 := append([]float64(nil), r.theta.Float64s()...), append([]float64(nil), r.lambda.Float64s()...)
		b := &Bilevel{Chains: []*Chain{decoupledChain(r, lr)}, Lambda: []*tensor.Dense{r.lambda},
			Outer: &samplers.SGD{LR: outerLR}, InnerSteps: inner, HyperSteps: hyper, RiskLR: lr,
			Zeta: zeta, Form: Sum, T1T2: form}
		if _, err := b.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		gotTh, gotLam := append([]float64(nil), r.theta.Float64s()...), append([]float64(nil), r.lambda.Float64s()...)

		copy(r.theta.Float64s(), th0)
		copy(r.lambda.Float64s(), lam0)
		th, lam := r.theta.Float64s(), r.lambda.Float64s() // gradT and gradV read them
		a := func() []float64 {
			gt, gv := r.gradT(th), r.gradV(th)
			for i := range gt {
				gt[i] -= gv[i]
			}
			return gt
		}
		normA := func() float64 { return math.Sqrt(dot(a(), a())) }
		for h := 0; h < hyper; h++ {
			for s := 0; s < inner; s++ {
				at, na := a(), normA()
				step := make([]float64, r.d)
				for i := range step {
					step[i] = zeta * th[i] * at[i] / na
				}
				if h == 0 && s == 0 {
					if fd := r.fdLambda(normA); relErr(step, scaled(fd, zeta)) > 1e-6 {
						t.Fatalf("ζθ⊙a/‖a‖ = %v, finite differences of ζ‖a‖ %v", step, scaled(fd, zeta))
					}
				}
				gfit := r.gradT(th)
				for i := range gfit {
					gfit[i] -= lam[i] * th[i]
				}
				for i := range lam {
					lam[i] -= outerLR * step[i]
				}
				for i := range th {
					th[i] -= lr * gfit[i]
					th[i] -= lr * lam[i] * th[i]
				}
			}
			look := append([]float64(nil), th...)
			if form == LookAhead {
				gt := r.gradT(th)
				for i := range look {
					look[i] -= lr * gt[i]
				}
			}
			gv := r.gradV(look)
			for i := range lam {
				lam[i] -= outerLR * (-lr * th[i] * gv[i])
			}
		}
		if relErr(gotTh, th) > 1e-12 || relErr(gotLam, lam) > 1e-12 {
			t.Errorf("%v: Bilevel ends at θ %v, λ %v; weight_decay.py's online loop at θ %v, λ %v", form, gotTh, gotLam, th, lam)
		}
	}
}

func scaled(x []float64, s float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = s * x[i]
	}
	return out
}

// TestOnlineWithoutPenaltyIsOffline checks that at ζ = 0 the online form takes no outer step
// during the inner loop (weight_decay.py steps only when zeta > 0): with RMSprop, whose state a
// zero-gradient step would still decay, the two forms give bit-identical λ.
func TestOnlineWithoutPenaltyIsOffline(t *testing.T) {
	var lams [2][]float64
	for i, form := range []Form{SqrtSum, Sum} {
		r := newRidge(t, 9, true, 0.1)
		b := &Bilevel{Chains: []*Chain{decoupledChain(r, 0.05)}, Lambda: []*tensor.Dense{r.lambda},
			Outer: samplers.NewRMSprop(0.01), InnerSteps: 5, HyperSteps: 3, RiskLR: 0.05, Form: form, Monitor: true}
		if _, err := b.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		lams[i] = r.lambda.Float64s()
	}
	for j := range lams[0] {
		if lams[0][j] != lams[1][j] {
			t.Fatalf("ζ = 0: offline λ %v, online λ %v", lams[0], lams[1])
		}
	}
}
