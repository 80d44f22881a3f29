package samplers_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/samplers"
	"gonum.org/v1/gonum/mat"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// linReg is least squares R̂(w) = (1/n)‖Xw − y‖² as a Problem whose gradients come from
// graph programs: one per batch size, each with inputs X (b×d) and y (b×1) refilled with
// the batch's rows, and the parameter w (d×1) bound once with gorgonia.WithValue, so that
// the samplers' in-place updates are what the next run reads.
type linReg struct {
	x, y  [][]float64
	w     *tensor.Dense
	progs map[int]*lrProg
}

type lrProg struct {
	prog *graph.Program
	x, y *tensor.Dense
	grad *G.Node
}

func newLinReg(x, y [][]float64) *linReg {
	d := len(x[0])
	return &linReg{x: x, y: y, progs: map[int]*lrProg{},
		w: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(d, 1))}
}

func (l *linReg) N() int { return len(l.x) }

func (l *linReg) program(rows int) (*lrProg, error) {
	if p, ok := l.progs[rows]; ok {
		return p, nil
	}
	d := len(l.x[0])
	g := G.NewGraph()
	p := &lrProg{x: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(rows, d)),
		y: tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(rows, 1))}
	xn := G.NewMatrix(g, tensor.Float64, G.WithShape(rows, d), G.WithName("X"), G.WithValue(p.x))
	yn := G.NewMatrix(g, tensor.Float64, G.WithShape(rows, 1), G.WithName("y"), G.WithValue(p.y))
	wn := G.NewTensor(g, tensor.Float64, 2, G.WithShape(d, 1), G.WithName("w"), G.WithValue(l.w))
	pred, err := graph.MatMul(xn, wn)
	if err != nil {
		return nil, err
	}
	res, err := graph.Sub(pred, yn)
	if err != nil {
		return nil, err
	}
	sq, err := graph.Square(res)
	if err != nil {
		return nil, err
	}
	loss, err := graph.Mean(sq)
	if err != nil {
		return nil, err
	}
	grads, err := graph.Grad(loss, wn)
	if err != nil {
		return nil, err
	}
	p.grad = grads[0]
	if p.prog, err = graph.Compile(p.grad); err != nil {
		return nil, err
	}
	l.progs[rows] = p
	return p, nil
}

func (l *linReg) Grad(ctx context.Context, params []*tensor.Dense, batch []int) ([]G.Value, error) {
	if len(params) != 1 || params[0] != l.w {
		return nil, fmt.Errorf("linReg: params are not the tensor bound into the graph")
	}
	p, err := l.program(len(batch))
	if err != nil {
		return nil, err
	}
	xs, ys := p.x.Float64s(), p.y.Float64s()
	d := len(l.x[0])
	for r, i := range batch {
		copy(xs[r*d:], l.x[i])
		ys[r] = l.y[i][0]
	}
	if err := p.prog.Run(ctx); err != nil {
		return nil, err
	}
	g, err := p.prog.Value(p.grad)
	if err != nil {
		return nil, err
	}
	return []G.Value{g}, nil
}

func (l *linReg) ExampleGrad(ctx context.Context, params []*tensor.Dense, i int) ([]G.Value, error) {
	return l.Grad(ctx, params, []int{i})
}

// linRegData draws y = Xw* + noise and returns it with the least-squares solution and
// the Gram matrix XᵀX.
func linRegData(n int, wStar []float64) (x, y [][]float64, ols []float64, gram *mat.SymDense) {
	rng := rand.New(rand.NewPCG(3, 4))
	d := len(wStar)
	xm, ym := mat.NewDense(n, d, nil), mat.NewVecDense(n, nil)
	for i := range n {
		x = append(x, make([]float64, d))
		var yi float64
		for j := range d {
			x[i][j] = rng.NormFloat64()
			xm.Set(i, j, x[i][j])
			yi += x[i][j] * wStar[j]
		}
		yi += 0.3 * rng.NormFloat64()
		y = append(y, []float64{yi})
		ym.SetVec(i, yi)
	}
	var w mat.VecDense
	if err := w.SolveVec(xm, ym); err != nil { // least squares
		panic(err)
	}
	gram = mat.NewSymDense(d, nil)
	gram.SymOuterK(1, xm.T())
	return x, y, w.RawVector().Data, gram
}

// TestGraphProblem drives the samplers with gradients from a compiled graph program.
func TestGraphProblem(t *testing.T) {
	const n = 40
	x, y, ols, gram := linRegData(n, []float64{1, -2, 0.5})

	// Adam on the program's full-batch gradient reaches the least-squares solution.
	lr := newLinReg(x, y)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	adam := samplers.NewAdam(0.05)
	for range 2000 {
		g, err := lr.Grad(context.Background(), []*tensor.Dense{lr.w}, all)
		if err != nil {
			t.Fatal(err)
		}
		if err := adam.Step([]*tensor.Dense{lr.w}, g); err != nil {
			t.Fatal(err)
		}
	}
	for j, w := range lr.w.Float64s() {
		if math.Abs(w-ols[j]) > 1e-6 {
			t.Errorf("Adam: w_%d = %.9f; least squares %.9f", j, w, ols[j])
		}
	}

	// LD targets exp(−βn R̂) = exp(−β‖Xw − y‖²) = N(w_OLS, (2βXᵀX)⁻¹). R̂'s curvature 2XᵀX/n
	// has eigenvalues near 2, so η = 0.01 gives a discretization bias of about 1%. With 8
	// chains × 10,000 iterates (autocorrelation time ≈ 100) the Monte Carlo error is
	// ≈ 4% of a standard deviation for the mean and ≈ 4% for the variance.
	const chains, steps, burn, beta = 8, 10500, 500, 1.0
	m := newMoments(chains, burn)
	cfg := samplers.ChainConfig{Method: samplers.MethodLD, Chains: chains, Steps: steps, Eta: 0.01, Beta: beta, Seed: 1}
	probs := make([]*linReg, chains)
	err := samplers.RunChains(context.Background(), cfg,
		func(c int) (samplers.Problem, error) { probs[c] = newLinReg(x, y); return probs[c], nil },
		func(c int, rng *rand.Rand) ([]*tensor.Dense, error) {
			for j := range probs[c].w.Float64s() { // θ_0 ~ N(0, I), written into the bound tensor
				probs[c].w.Float64s()[j] = rng.NormFloat64()
			}
			return []*tensor.Dense{probs[c].w}, nil
		}, m.visit)
	if err != nil {
		t.Fatal(err)
	}
	var cov mat.SymDense
	gram.ScaleSym(2*beta, gram)
	if err := cov.PowPSD(gram, -1); err != nil {
		t.Fatal(err)
	}
	mean, variance := m.meanVar()
	for j := range mean {
		sd := math.Sqrt(cov.At(j, j))
		t.Logf("w_%d: mean %.4f (least squares %.4f, %.3f sd off), variance %.5f (posterior %.5f, ratio %.3f)",
			j, mean[j], ols[j], (mean[j]-ols[j])/sd, variance[j], sd*sd, variance[j]/(sd*sd))
		if math.Abs(mean[j]-ols[j]) > 0.2*sd {
			t.Errorf("w_%d: chain mean %.4f; posterior mean %.4f ± %.4f", j, mean[j], ols[j], sd)
		}
		if r := variance[j] / (sd * sd); math.Abs(r-1) > 0.15 {
			t.Errorf("w_%d: chain variance / posterior variance = %.3f", j, r)
		}
	}

	// Noiseless DP-SGLD with no clipping over the full batch averages the one-example
	// programs' gradients: the same path as LD on the full-batch program.
	paths := map[samplers.Method][]float64{}
	for _, method := range []samplers.Method{samplers.MethodLD, samplers.MethodDPSGLD} {
		cfg := samplers.ChainConfig{Method: method, Chains: 1, Steps: 20, Eta: 0.05, Beta: math.Inf(1),
			Batch: n, Clip: math.Inf(1)}
		prob := newLinReg(x, y)
		err := samplers.RunChains(context.Background(), cfg,
			func(int) (samplers.Problem, error) { return prob, nil },
			func(int, *rand.Rand) ([]*tensor.Dense, error) { return []*tensor.Dense{prob.w}, nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		paths[method] = prob.w.Float64s()
	}
	for j := range paths[samplers.MethodLD] {
		if a, b := paths[samplers.MethodLD][j], paths[samplers.MethodDPSGLD][j]; math.Abs(a-b) > 1e-12 {
			t.Errorf("w_%d after 20 steps: LD %.15f, DP-SGLD %.15f", j, a, b)
		}
	}
}
