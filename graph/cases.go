package graph

import (
	"context"
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// OpCase is one op of this package set up for the gradient checkers: how to draw inputs at
// which its derivatives are smooth (away from ReLU's kink and from ties in a max), which
// inputs to differentiate, and the function itself.
type OpCase struct {
	Name   string
	Inputs func(rng *rand.Rand) []*tensor.Dense
	Wrt    []int // nil: all inputs
	F      Func
}

// OpCheck is the outcome of checking one OpCase to first and second order.
type OpCheck struct {
	Name          string
	First, Second CheckResult
}

// Passed reports whether both orders passed.
func (c OpCheck) Passed() bool { return c.First.Passed && c.Second.Passed }

// CheckOps runs GradCheck and GradGradCheck on every case. Each case's output y is checked
// through Σ w⊙y² rather than y, so that the second-order check of a linear op differentiates
// its VJP's own VJP (the Hessian of a linear map alone is zero and would test nothing).
func CheckOps(ctx context.Context, cases []OpCase, opt CheckOptions) ([]OpCheck, error) {
	var out []OpCheck
	for i, c := range cases {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if c.Inputs == nil || c.F == nil {
			return out, fmt.Errorf("graph: op case %d (%q) has no Inputs or no F", i, c.Name)
		}
		rng := rand.New(rand.NewPCG(opt.Seed, uint64(i)))
		inputs := c.Inputs(rng)
		o := opt
		o.Wrt = c.Wrt
		f := func(in []*G.Node) (*G.Node, error) {
			y, err := c.F(in)
			if err != nil {
				return nil, err
			}
			return Square(y)
		}
		first, err := GradCheck(f, inputs, o)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Name, err)
		}
		second, err := GradGradCheck(f, inputs, o)
		if err != nil {
			return out, fmt.Errorf("%s: %w", c.Name, err)
		}
		out = append(out, OpCheck{Name: c.Name, First: first, Second: second})
	}
	return out, nil
}

func dense(shape []int, fill func() float64) *tensor.Dense {
	d := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range d {
		d[i] = fill()
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

func normal(rng *rand.Rand, shape ...int) *tensor.Dense { return dense(shape, rng.NormFloat64) }

// awayFromZero draws from ±[0.1, 1.1), keeping clear of kinks at zero.
func awayFromZero(rng *rand.Rand, shape ...int) *tensor.Dense {
	return dense(shape, func() float64 {
		v := 0.1 + rng.Float64()
		if rng.IntN(2) == 0 {
			return -v
		}
		return v
	})
}

func positive(rng *rand.Rand, shape ...int) *tensor.Dense {
	return dense(shape, func() float64 { return 0.5 + 1.5*rng.Float64() })
}

// distinct draws values spaced at least 0.01 apart, so that a max never ties.
func distinct(rng *rand.Rand, shape ...int) *tensor.Dense {
	n := tensor.Shape(shape).TotalSize()
	perm := rng.Perm(n)
	d := make([]float64, n)
	for i, p := range perm {
		d[i] = float64(p)*0.01 - float64(n)*0.005
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

func oneHot(rng *rand.Rand, n, k int) *tensor.Dense {
	d := make([]float64, n*k)
	for i := 0; i < n; i++ {
		d[i*k+rng.IntN(k)] = 1
	}
	return tensor.New(tensor.WithShape(n, k), tensor.WithBacking(d))
}

// sparseNormal draws an n×k matrix with perRow standard normal entries in random columns of
// each row and zeros elsewhere.
func sparseNormal(rng *rand.Rand, n, k, perRow int) *tensor.Dense {
	d := make([]float64, n*k)
	for i := 0; i < n; i++ {
		for _, j := range rng.Perm(k)[:perRow] {
			d[i*k+j] = rng.NormFloat64()
		}
	}
	return tensor.New(tensor.WithShape(n, k), tensor.WithBacking(d))
}

func mask(rng *rand.Rand, keep float64, shape ...int) *tensor.Dense {
	return dense(shape, func() float64 {
		if rng.Float64() < keep {
			return 1
		}
		return 0
	})
}

func one(f func(*G.Node) (*G.Node, error)) Func {
	return func(in []*G.Node) (*G.Node, error) { return f(in[0]) }
}

func two(f func(a, b *G.Node) (*G.Node, error)) Func {
	return func(in []*G.Node) (*G.Node, error) { return f(in[0], in[1]) }
}

func inputs(gen ...func(*rand.Rand) *tensor.Dense) func(*rand.Rand) []*tensor.Dense {
	return func(rng *rand.Rand) []*tensor.Dense {
		out := make([]*tensor.Dense, len(gen))
		for i, g := range gen {
			out[i] = g(rng)
		}
		return out
	}
}

func shaped(f func(*rand.Rand, ...int) *tensor.Dense, shape ...int) func(*rand.Rand) *tensor.Dense {
	return func(rng *rand.Rand) *tensor.Dense { return f(rng, shape...) }
}

// OpCases lists every differentiable op of this package with inputs for the checkers. The
// elementwise ops' cases come from their tables (elementwise.go).
func OpCases() []OpCase {
	conv := func(g Geometry) Func {
		return func(in []*G.Node) (*G.Node, error) { return Conv2d(in[0], in[1], g) }
	}
	cases := []OpCase{
		{Name: "MatMul", Inputs: inputs(shaped(normal, 3, 4), shaped(normal, 4, 2)), F: two(MatMul)},
		{Name: "MatMulT(a,bᵀ)", Inputs: inputs(shaped(normal, 3, 4), shaped(normal, 2, 4)), F: two(func(a, b *G.Node) (*G.Node, error) { return MatMulT(a, b, false, true) })},
		{Name: "MatMulT(aᵀ,b)", Inputs: inputs(shaped(normal, 4, 3), shaped(normal, 4, 2)), F: two(func(a, b *G.Node) (*G.Node, error) { return MatMulT(a, b, true, false) })},
		{Name: "MatMulT(aᵀ,bᵀ)", Inputs: inputs(shaped(normal, 4, 3), shaped(normal, 2, 4)), F: two(func(a, b *G.Node) (*G.Node, error) { return MatMulT(a, b, true, true) })},
		// a one-hot-like data operand large enough for the sparse path (sparse.go), forward
		// and, in b's gradient aᵀ·G, transposed; 9 columns exercise the kernels' tail
		{Name: "MatMul(sparse a, b)", Inputs: inputs(func(rng *rand.Rand) *tensor.Dense { return sparseNormal(rng, 16, 512, 2) }, shaped(normal, 512, 9)), Wrt: []int{1}, F: two(MatMul)},
	}
	cases = append(cases, elementwiseCases(false)...)
	cases = append(cases, []OpCase{
		{Name: "Sum (all)", Inputs: inputs(shaped(normal, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return Sum(x) })},
		{Name: "Sum (axes 0,2)", Inputs: inputs(shaped(normal, 2, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return Sum(x, 0, 2) })},
		{Name: "Mean (axis 1)", Inputs: inputs(shaped(normal, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return Mean(x, 1) })},
		{Name: "MeanKeep (axis -1)", Inputs: inputs(shaped(normal, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return MeanKeep(x, -1) })},
		{Name: "BroadcastTo", Inputs: inputs(shaped(normal, 3, 1)), F: one(func(x *G.Node) (*G.Node, error) { return BroadcastTo(x, 2, 3, 4) })},
		{Name: "Reshape", Inputs: inputs(shaped(normal, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return Reshape(x, 2, -1, 3) })},
		{Name: "Reshape (to scalar)", Inputs: inputs(shaped(normal, 1, 1)), F: one(func(x *G.Node) (*G.Node, error) { return Reshape(x) })},
		{Name: "Transpose", Inputs: inputs(shaped(normal, 2, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return Transpose(x, 2, 0, 1) })},
		{Name: "Concat", Inputs: inputs(shaped(normal, 2, 3), shaped(normal, 2, 2)), F: two(func(a, b *G.Node) (*G.Node, error) { return Concat(1, a, b) })},
		{Name: "Slice", Inputs: inputs(shaped(normal, 4, 5)), F: one(func(x *G.Node) (*G.Node, error) { return Slice(x, S{1, 3}, S{2, 5}) })},
		{Name: "Softmax", Inputs: inputs(shaped(normal, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return Softmax(x, 1) })},
		{Name: "LogSoftmax", Inputs: inputs(shaped(normal, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return LogSoftmax(x, 1) })},
		{Name: "LogSumExp", Inputs: inputs(shaped(normal, 3, 4)), F: one(func(x *G.Node) (*G.Node, error) { return LogSumExp(x, 0) })},
		{Name: "CrossEntropy", Inputs: func(rng *rand.Rand) []*tensor.Dense { return []*tensor.Dense{normal(rng, 4, 3), oneHot(rng, 4, 3)} }, Wrt: []int{0}, F: two(CrossEntropy)},
		{Name: "Im2Col", Inputs: inputs(shaped(normal, 2, 2, 4, 4)), F: one(func(x *G.Node) (*G.Node, error) {
			return Im2Col(x, 3, 3, Geometry{PadH: 1, PadW: 1, StrideH: 2, StrideW: 1})
		})},
		{Name: "Col2Im", Inputs: inputs(shaped(normal, 2*3*3, 2*2*4)), F: one(func(x *G.Node) (*G.Node, error) {
			return Col2Im(x, tensor.Shape{2, 2, 4, 4}, 3, 3, Geometry{PadH: 1, PadW: 1, StrideH: 2, StrideW: 1})
		})},
		{Name: "Conv2d (pad 1)", Inputs: inputs(shaped(normal, 2, 2, 5, 5), shaped(normal, 3, 2, 3, 3)), F: conv(Geometry{PadH: 1, PadW: 1})},
		{Name: "Conv2d (same, even kernel)", Inputs: inputs(shaped(normal, 1, 2, 4, 5), shaped(normal, 2, 2, 2, 4)), F: conv(SamePadding(2, 4))},
		{Name: "Conv2d (window wider than input)", Inputs: inputs(shaped(normal, 2, 2, 1, 2), shaped(normal, 2, 2, 3, 3)), F: conv(Geometry{StrideH: 2, StrideW: 2, PadH: 1, PadW: 1})},
		{Name: "Conv2d (stride 2)", Inputs: inputs(shaped(normal, 1, 2, 6, 5), shaped(normal, 2, 2, 2, 3)), F: conv(Geometry{StrideH: 2, StrideW: 2})},
		{Name: "MaxPool2d", Inputs: inputs(shaped(distinct, 2, 2, 4, 4)), F: one(func(x *G.Node) (*G.Node, error) { return MaxPool2d(x, 2, 2, Geometry{}) })},
		{Name: "MaxPool2d (3x3 s2 p1)", Inputs: inputs(shaped(distinct, 1, 2, 5, 5)), F: one(func(x *G.Node) (*G.Node, error) {
			return MaxPool2d(x, 3, 3, Geometry{StrideH: 2, StrideW: 2, PadH: 1, PadW: 1})
		})},
		{Name: "AvgPool2d", Inputs: inputs(shaped(normal, 2, 2, 4, 4)), F: one(func(x *G.Node) (*G.Node, error) { return AvgPool2d(x, 2, 2, Geometry{}) })},
		{Name: "BatchNorm (train, 4-D)", Inputs: inputs(shaped(normal, 3, 2, 2, 2), shaped(normal, 2), shaped(normal, 2)), F: func(in []*G.Node) (*G.Node, error) {
			y, _, _, err := BatchNorm(in[0], in[1], in[2], BatchNormConfig{Training: true})
			return y, err
		}},
		{Name: "BatchNorm (train, 2-D)", Inputs: inputs(shaped(normal, 4, 3), shaped(normal, 3), shaped(normal, 3)), F: func(in []*G.Node) (*G.Node, error) {
			y, _, _, err := BatchNorm(in[0], in[1], in[2], BatchNormConfig{Training: true})
			return y, err
		}},
		{Name: "BatchNorm (inference)", Inputs: inputs(shaped(normal, 3, 2, 2, 2), shaped(normal, 2), shaped(normal, 2), shaped(normal, 2), shaped(positive, 2)), Wrt: []int{0, 1, 2}, F: func(in []*G.Node) (*G.Node, error) {
			y, _, _, err := BatchNorm(in[0], in[1], in[2], BatchNormConfig{RunningMean: in[3], RunningVar: in[4]})
			return y, err
		}},
		{Name: "Dropout", Inputs: func(rng *rand.Rand) []*tensor.Dense { return []*tensor.Dense{normal(rng, 3, 4), mask(rng, 0.8, 3, 4)} }, Wrt: []int{0}, F: two(func(x, m *G.Node) (*G.Node, error) { return Dropout(x, m, 0.8) })},
	}...)
	return append(cases, elementwiseCases(true)...)
}
