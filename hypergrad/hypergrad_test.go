package hypergrad

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/samplers"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ridge is L_T(θ, λ) = ‖Xθ − y‖²/(2n) + ½ Σ λ⊙θ², C(θ) = ‖X_vθ − y_v‖²/(2m), with λ either
// one shared scalar or one per coefficient.
type ridge struct {
	d             int
	x, y, xv, yv  *mat.Dense
	theta, lambda *tensor.Dense
	problem       *Problem
	thetaN, lamN  *G.Node
	// fit is L_T without the penalty, for chains that decay θ apart (decoupled weight decay).
	fit func(theta []*G.Node, k int) (*G.Node, error)
}

func dense(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

func toTensor(m *mat.Dense) *tensor.Dense {
	r, c := m.Dims()
	return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(append([]float64(nil), m.RawMatrix().Data...)))
}

func newRidge(t *testing.T, seed uint64, perCoef bool, lam float64) *ridge {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := &ridge{d: 3}
	r.x, r.y, r.xv, r.yv = dense(rng, 20, 3), dense(rng, 20, 1), dense(rng, 15, 3), dense(rng, 15, 1)
	g := G.NewGraph()
	in := func(name string, v *tensor.Dense) *G.Node {
		return G.NewTensor(g, tensor.Float64, len(v.Shape()), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
	}
	r.theta = toTensor(dense(rng, 3, 1))
	ln := 1
	if perCoef {
		ln = 3
	}
	ls := make([]float64, ln)
	for i := range ls {
		ls[i] = lam * float64(i+1)
	}
	lshape := []int{1}
	if perCoef {
		lshape = []int{3, 1}
	}
	r.lambda = tensor.New(tensor.WithShape(lshape...), tensor.WithBacking(ls))
	r.thetaN, r.lamN = in("theta", r.theta), in("lambda", r.lambda)
	X, Y, XV, YV := in("X", toTensor(r.x)), in("Y", toTensor(r.y)), in("XV", toTensor(r.xv)), in("YV", toTensor(r.yv))
	sq := func(a, b *G.Node, th *G.Node) (*G.Node, error) {
		p, err := graph.MatMul(a, th)
		if err != nil {
			return nil, err
		}
		d, err := graph.Sub(p, b)
		if err != nil {
			return nil, err
		}
		s, err := graph.SquaredNorm(d)
		if err != nil {
			return nil, err
		}
		return graph.Scale(s, 0.5/float64(a.Shape()[0]))
	}
	r.fit = func(th []*G.Node, _ int) (*G.Node, error) { return sq(X, Y, th[0]) }
	r.problem = &Problem{
		Params: []*G.Node{r.thetaN}, Hypers: []*G.Node{r.lamN},
		Train: func(th []*G.Node, _ int) (*G.Node, error) {
			fit, err := sq(X, Y, th[0])
			if err != nil {
				return nil, err
			}
			t2, err := graph.Square(th[0])
			if err != nil {
				return nil, err
			}
			pen, err := graph.Mul(r.lamN, t2)
			if err != nil {
				return nil, err
			}
			ps, err := graph.Sum(pen)
			if err != nil {
				return nil, err
			}
			ps, err = graph.Scale(ps, 0.5)
			if err != nil {
				return nil, err
			}
			return graph.Add(fit, ps)
		},
		Val: func(th []*G.Node) (*G.Node, error) { return sq(XV, YV, th[0]) },
	}
	return r
}

// toMinimizer moves θ to the exact minimizer θ* = (A + diag λ)⁻¹ b of L_T and returns
// A + diag λ, the training Hessian, and θ*.
func (r *ridge) toMinimizer(t *testing.T) (*mat.Dense, *mat.VecDense) {
	t.Helper()
	a, b := r.gramT()
	reg := mat.NewDense(r.d, r.d, nil)
	reg.Copy(a)
	for i := 0; i < r.d; i++ {
		reg.Set(i, i, reg.At(i, i)+r.lam(i))
	}
	var star mat.VecDense
	if err := star.SolveVec(reg, b); err != nil {
		t.Fatal(err)
	}
	copy(r.theta.Float64s(), star.RawVector().Data)
	return reg, &star
}

// Plain-Go oracles.
func (r *ridge) gramT() (*mat.Dense, *mat.VecDense) {
	n, _ := r.x.Dims()
	var a mat.Dense
	a.Mul(r.x.T(), r.x)
	a.Scale(1/float64(n), &a)
	var b mat.Dense
	b.Mul(r.x.T(), r.y)
	bv := mat.NewVecDense(r.d, nil)
	for i := 0; i < r.d; i++ {
		bv.SetVec(i, b.At(i, 0)/float64(n))
	}
	return &a, bv
}

func (r *ridge) lam(i int) float64 {
	l := r.lambda.Float64s()
	if len(l) == 1 {
		return l[0]
	}
	return l[i]
}

// gradT is ∇_θ L_T = Aθ − b + λ⊙θ.
func (r *ridge) gradT(th []float64) []float64 {
	a, b := r.gramT()
	out := make([]float64, r.d)
	for i := range out {
		for j := range th {
			out[i] += a.At(i, j) * th[j]
		}
		out[i] += -b.AtVec(i) + r.lam(i)*th[i]
	}
	return out
}

func (r *ridge) val(th []float64) float64 {
	m, _ := r.xv.Dims()
	s := 0.0
	for i := 0; i < m; i++ {
		p := -r.yv.At(i, 0)
		for j := range th {
			p += r.xv.At(i, j) * th[j]
		}
		s += p * p
	}
	return s / (2 * float64(m))
}

// unrolledVal is C after k gradient steps of size lr from the current θ.
func (r *ridge) unrolledVal(k int, lr float64) float64 {
	th := append([]float64(nil), r.theta.Float64s()...)
	for s := 0; s < k; s++ {
		g := r.gradT(th)
		for i := range th {
			th[i] -= lr * g[i]
		}
	}
	return r.val(th)
}

// fdLambda differentiates f with respect to each λ entry by central differences.
func (r *ridge) fdLambda(f func() float64) []float64 {
	l := r.lambda.Float64s()
	out := make([]float64, len(l))
	const h = 1e-5
	for i := range l {
		orig := l[i]
		l[i] = orig + h
		fp := f()
		l[i] = orig - h
		fm := f()
		l[i] = orig
		out[i] = (fp - fm) / (2 * h)
	}
	return out
}

func relErr(a, b []float64) float64 {
	worst := 0.0
	for i := range a {
		worst = math.Max(worst, math.Abs(a[i]-b[i])/math.Max(math.Max(math.Abs(a[i]), math.Abs(b[i])), 1e-8))
	}
	return worst
}

func TestUnrolledMatchesFiniteDifferencesOfUnrolledObjective(t *testing.T) {
	for _, perCoef := range []bool{false, true} {
		for _, k := range []int{0, 1, 3} {
			r := newRidge(t, 1, perCoef, 0.3)
			const lr = 0.1
			u, err := NewUnrolled(r.problem, k, lr)
			if err != nil {
				t.Fatal(err)
			}
			e, err := u.Estimate(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := r.unrolledVal(k, lr); math.Abs(e.Value-want) > 1e-12 {
				t.Errorf("K=%d: value %v, want %v", k, e.Value, want)
			}
			want := r.fdLambda(func() float64 { return r.unrolledVal(k, lr) })
			if k == 0 {
				for _, g := range e.Grad[0] {
					if g != 0 {
						t.Errorf("K=0 with C independent of λ: gradient %v, want 0", e.Grad[0])
					}
				}
				continue
			}
			if d := relErr(e.Grad[0], want); d > 1e-6 {
				t.Errorf("perCoef=%v K=%d: hypergradient %v, finite differences %v (rel err %g)", perCoef, k, e.Grad[0], want, d)
			}
		}
	}
}

func TestImplicitMatchesRidgeClosedForm(t *testing.T) {
	for _, method := range []InverseMethod{CG, Neumann} {
		r := newRidge(t, 2, true, 0.2)
		reg, star := r.toMinimizer(t)
		// Exact: dC/dλ_i = −[(A + diag λ)⁻¹ ∇C(θ*)]_i θ*_i.
		m, _ := r.xv.Dims()
		gc := mat.NewVecDense(r.d, nil)
		for i := 0; i < m; i++ {
			p := -r.yv.At(i, 0)
			for j := 0; j < r.d; j++ {
				p += r.xv.At(i, j) * star.AtVec(j)
			}
			for j := 0; j < r.d; j++ {
				gc.SetVec(j, gc.AtVec(j)+p*r.xv.At(i, j)/float64(m))
			}
		}
		var w mat.VecDense
		if err := w.SolveVec(reg, gc); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, r.d)
		for i := range want {
			want[i] = -w.AtVec(i) * star.AtVec(i)
		}
		im, err := NewImplicit(r.problem, method, 200)
		if err != nil {
			t.Fatal(err)
		}
		im.Alpha = 0.5
		e, err := im.Estimate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tol := 1e-9
		if method == Neumann {
			tol = 1e-4
		}
		if d := relErr(e.Grad[0], want); d > tol {
			t.Errorf("method %d: implicit hypergradient %v, exact %v (rel err %g)", method, e.Grad[0], want, d)
		}
	}
}

func TestRegularizerGradientMatchesFiniteDifferences(t *testing.T) {
	r := newRidge(t, 3, true, 0.4)
	c := &Chain{Problem: r.problem, Inner: &samplers.SGD{LR: 0}}
	b := &Bilevel{Chains: []*Chain{c}, Lambda: []*tensor.Dense{r.lambda}, Outer: &samplers.SGD{LR: 0}, InnerSteps: 1, HyperSteps: 1, RiskLR: 0.1, Zeta: 1}
	if err := b.prepare(c); err != nil {
		t.Fatal(err)
	}
	res, err := b.innerStep(context.Background(), c, 0)
	if err != nil {
		t.Fatal(err)
	}
	// ½‖a‖² with a = ∇L_T − ∇C = Aθ − b + λ⊙θ − ∇C(θ).
	half := func() float64 {
		gt := r.gradT(r.theta.Float64s())
		m, _ := r.xv.Dims()
		th := r.theta.Float64s()
		s := 0.0
		for j := 0; j < r.d; j++ {
			gv := 0.0
			for i := 0; i < m; i++ {
				p := -r.yv.At(i, 0)
				for l := 0; l < r.d; l++ {
					p += r.xv.At(i, l) * th[l]
				}
				gv += p * r.xv.At(i, j) / float64(m)
			}
			s += (gt[j] - gv) * (gt[j] - gv)
		}
		return s / 2
	}
	if math.Abs(res.sq-2*half()) > 1e-12 {
		t.Errorf("‖a‖² = %v, want %v", res.sq, 2*half())
	}
	if d := relErr(res.reg[0], r.fdLambda(half)); d > 1e-6 {
		t.Errorf("∇λ ½‖a‖² = %v, finite differences %v", res.reg[0], r.fdLambda(half))
	}
}

func TestLinearGaussianFisherMatchesMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	k := 3
	sT, sV := []float64{2, 0.3, 0, 0.3, 1, 0.1, 0, 0.1, 1.5}, []float64{1.5, 0, 0.2, 0, 1.2, 0, 0.2, 0, 1}
	cT, cV := []float64{0.5, -1, 0.2}, []float64{0.1, -0.5, 0.4}
	mu := []float64{0.3, -0.2, 0.5}
	// C = L Lᵀ with L lower triangular.
	l := []float64{0.5, 0, 0, 0.1, 0.4, 0, -0.2, 0.1, 0.3}
	cov := make([]float64, k*k)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			for m := 0; m < k; m++ {
				cov[i*k+j] += l[i*k+m] * l[j*k+m]
			}
		}
	}
	want, err := LinearGaussianFisher(sT, sV, cT, cV, mu, cov)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200000
	sum := 0.0
	th, z := make([]float64, k), make([]float64, k)
	for s := 0; s < n; s++ {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		for i := 0; i < k; i++ {
			th[i] = mu[i]
			for m := 0; m < k; m++ {
				th[i] += l[i*k+m] * z[m]
			}
		}
		// a = (Σ_T θ − c_T) − (Σ_V θ − c_V)
		sq := 0.0
		for i := 0; i < k; i++ {
			a := -(cT[i] - cV[i])
			for j := 0; j < k; j++ {
				a += (sT[i*k+j] - sV[i*k+j]) * th[j]
			}
			sq += a * a
		}
		sum += sq
	}
	if got := sum / n; math.Abs(got-want)/want > 0.01 {
		t.Errorf("Monte Carlo %v, closed form %v", got, want)
	}
}

func TestBilevelLowersValidationLoss(t *testing.T) {
	for _, form := range []Form{SqrtSum, Sum} {
		r := newRidge(t, 5, true, 0.5)
		b := &Bilevel{
			Chains:     []*Chain{{Problem: r.problem, Inner: samplers.NewAdam(0.05)}},
			Lambda:     []*tensor.Dense{r.lambda},
			Outer:      samplers.NewRMSprop(0.01),
			InnerSteps: 20, HyperSteps: 30, RiskLR: 0.05, Zeta: 0.01, Form: form,
		}
		h, err := b.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		first, last := h[0], h[len(h)-1]
		if !(last.ValLoss < first.ValLoss) || last.Distance <= 0 || last.Regularizer <= 0 {
			t.Errorf("%v: first %+v, last %+v", form, first, last)
		}
	}
}
