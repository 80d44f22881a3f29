package convexity

import (
	"context"
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/datasets"
	"github.com/hyperflat/hyperflat/graph"
	"github.com/hyperflat/hyperflat/layers"
	"github.com/hyperflat/hyperflat/losses"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Reduce combines the per-batch ratios into μ.
type Reduce int

const (
	// MaxOverBatches is what Algorithm 1 and the paper's image/OpenML code compute.
	MaxOverBatches Reduce = iota
	// MinOverBatches is Theorem 1's infimum (and the Bayesmark code's).
	MinOverBatches
	// MinOverFullBatches is the minimum over the batches of the full batch size, leaving out
	// a smaller last batch, whose ratio shrinks with its size alone (‖a_B‖_F grows as √|B|),
	// so that under MinOverBatches it decides μ whenever the batch size does not divide the
	// data (an alternative reading of the Bayesmark code, see ahsc-bbo's --bbo-screen).
	MinOverFullBatches
)

// MuOptions select the variant of the closed form.
type MuOptions struct {
	// BatchSize of the consecutive, unshuffled mini-batches (the last may be smaller); 64 in
	// the paper's image runs, the configuration's batch size for OpenML.
	BatchSize int
	Reduce    Reduce
	// PerSample multiplies by 1/m, m the number of training examples (Theorem 1's factor; the
	// code omits it).
	PerSample bool
	// OutputNorm multiplies each batch's ratio by ‖a^L_B‖_F, the norm of the softmax outputs
	// (the authors' revision of December 2024, not in the paper).
	OutputNorm bool
}

// StrongConvexity is the closed-form estimate of Theorem 1: over consecutive mini-batches B of
// ds, μ_B = ‖a^{L−1}_B‖_F / ‖W^L‖_F, where a^{L−1}_B (|B| × d) are the model's features in
// inference mode and W^L is the kernel of its last layer (bias excluded), reduced over batches
// as opt says. Batches with an infinite ratio (a zero kernel) are ignored.
func StrongConvexity(ctx context.Context, m layers.FeatureModel, ds *datasets.Dataset, opt MuOptions) (float64, error) {
	mu, _, err := strongConvexity(ctx, m, ds, opt, nil, nil)
	return mu, err
}

// strongConvexity is StrongConvexity; with risk set, it also returns the mean risk of that
// kind on ds in inference mode (what train.Trainer.Evaluate reports as the loss) from the
// same forward passes, the head and the loss added to each batch's features. With pool set,
// its programs take their buffers from pool and give them back on return.
func strongConvexity(ctx context.Context, m layers.FeatureModel, ds *datasets.Dataset, opt MuOptions, risk *losses.Kind, pool *graph.Pool) (float64, float64, error) {
	if ds == nil || ds.N == 0 {
		return 0, 0, fmt.Errorf("convexity: no data")
	}
	if m == nil {
		return 0, 0, fmt.Errorf("convexity: StrongConvexity of a nil model")
	}
	if risk != nil && opt.Reduce == MinOverFullBatches {
		return 0, 0, fmt.Errorf("convexity: the mean risk over the full batches only")
	}
	bs := opt.BatchSize
	if bs <= 0 || bs > ds.N {
		bs = ds.N
	}
	wv, err := graph.ToFloat64s(m.Head().W.Value)
	if err != nil {
		return 0, 0, err
	}
	wNorm := math.Sqrt(sumSq(wv))
	minimum := opt.Reduce == MinOverBatches || opt.Reduce == MinOverFullBatches
	mu := math.Inf(-1)
	if minimum {
		mu = math.Inf(1)
	}
	progs := map[int]*featureProgram{}
	defer func() {
		for _, p := range progs {
			p.prog.Release()
		}
	}()
	total := 0.0
	for start := 0; start < ds.N; start += bs {
		n := min(bs, ds.N-start)
		if n < bs && opt.Reduce == MinOverFullBatches {
			break // the last, partial batch; the first is always full (bs ≤ N)
		}
		p, ok := progs[n]
		if !ok {
			if p, err = newFeatureProgram(m, ds.Shape, n, opt.OutputNorm, risk); err != nil {
				return 0, 0, err
			}
			p.prog.UsePool(pool)
			progs[n] = p
		}
		a, out, err := p.run(ctx, ds, start)
		if err != nil {
			return 0, 0, err
		}
		if risk != nil {
			l, err := p.prog.Scalar(p.risk)
			if err != nil {
				return 0, 0, err
			}
			total += l * float64(n)
		}
		ratio := a / wNorm
		if opt.OutputNorm {
			ratio *= out
		}
		if math.IsInf(ratio, 0) || math.IsNaN(ratio) {
			continue
		}
		if minimum {
			mu = math.Min(mu, ratio)
		} else {
			mu = math.Max(mu, ratio)
		}
	}
	if math.IsInf(mu, 0) {
		return mu, 0, fmt.Errorf("convexity: every batch gave an infinite or undefined ratio")
	}
	if opt.PerSample {
		mu /= float64(ds.N)
	}
	return mu, total / float64(ds.N), nil
}

func sumSq(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return s
}

type featureProgram struct {
	x        *G.Node
	xv       *tensor.Dense
	yv       *tensor.Dense // the labels of the risk, with risk
	features *G.Node
	probs    *G.Node
	risk     *G.Node
	prog     *graph.Program
}

func newFeatureProgram(m layers.FeatureModel, shape []int, n int, withOutput bool, risk *losses.Kind) (*featureProgram, error) {
	net := m.Net()
	fp := &featureProgram{}
	xs := append([]int{n}, shape...)
	fp.x = net.Input("mu.x", xs...)
	fp.xv = tensor.New(tensor.Of(net.Dtype()), tensor.WithShape(xs...))
	if err := G.Let(fp.x, fp.xv); err != nil {
		return nil, err
	}
	pass := layers.NewPass(layers.Eval)
	var err error
	if fp.features, err = m.Features(fp.x, pass); err != nil {
		return nil, err
	}
	outs := []*G.Node{fp.features}
	var logits *G.Node
	if withOutput || risk != nil {
		if logits, err = m.Head().Forward(fp.features, pass); err != nil {
			return nil, err
		}
	}
	if withOutput {
		if fp.probs, err = graph.Softmax(logits, 1); err != nil {
			return nil, err
		}
		outs = append(outs, fp.probs)
	}
	if risk != nil {
		k := m.Head().Out
		y := net.Input("mu.y", n, k)
		fp.yv = tensor.New(tensor.Of(net.Dtype()), tensor.WithShape(n, k))
		if err := G.Let(y, fp.yv); err != nil {
			return nil, err
		}
		kind := *risk
		if kind == "" {
			kind = losses.Multiclass
		}
		if fp.risk, err = losses.Risk(kind, logits, y); err != nil {
			return nil, err
		}
		outs = append(outs, fp.risk)
	}
	if fp.prog, err = graph.Compile(outs...); err != nil {
		return nil, err
	}
	return fp, nil
}

// run returns ‖features‖_F and ‖softmax outputs‖_F for rows start… of ds.
func (fp *featureProgram) run(ctx context.Context, ds *datasets.Dataset, start int) (float64, float64, error) {
	n := fp.xv.Shape()[0]
	src := ds.X[start*ds.D : (start+n)*ds.D]
	switch x := fp.xv.Data().(type) {
	case []float64:
		copy(x, src)
	case []float32:
		for i, v := range src {
			x[i] = float32(v)
		}
	}
	if fp.yv != nil {
		if err := setLabels(fp.yv, ds.Y[start:start+n]); err != nil {
			return 0, 0, err
		}
	}
	if err := fp.prog.Run(ctx); err != nil {
		return 0, 0, err
	}
	f, err := fp.valueSumSq(fp.features)
	if err != nil {
		return 0, 0, err
	}
	out := 0.0
	if fp.probs != nil {
		p, err := fp.valueSumSq(fp.probs)
		if err != nil {
			return 0, 0, err
		}
		out = math.Sqrt(p)
	}
	return math.Sqrt(f), out, nil
}

// valueSumSq is sumSq of n's value from the last run, read in place: the copy (Float64s) of
// every batch's features cost a trial of the white-box record as much memory as its
// programs.
func (fp *featureProgram) valueSumSq(n *G.Node) (float64, error) {
	v, err := fp.prog.Value(n)
	if err != nil {
		return 0, err
	}
	switch v.Dtype() {
	case tensor.Float64:
		return elementsSumSq[float64](v)
	case tensor.Float32:
		return elementsSumSq[float32](v)
	}
	return 0, fmt.Errorf("convexity: node %s of dtype %v", n.Name(), v.Dtype())
}

// elementsSumSq is sumSq of v's elements converted to float64, in the same order.
func elementsSumSq[T float32 | float64](v G.Value) (float64, error) {
	e, err := graph.Elements[T](v)
	if err != nil {
		return 0, err
	}
	s := 0.0
	for _, x := range e {
		f := float64(x)
		s += f * f
	}
	return s, nil
}

// setLabels writes the classes y into the labels tensor of a risk with k outputs: y itself
// for one output (a binary label), one-hot rows for more.
func setLabels(dst *tensor.Dense, y []int) error {
	k := dst.Shape()[1]
	switch d := dst.Data().(type) {
	case []float64:
		return fillLabels(d, y, k)
	case []float32:
		return fillLabels(d, y, k)
	}
	return fmt.Errorf("convexity: labels of dtype %v", dst.Dtype())
}

func fillLabels[T float32 | float64](d []T, y []int, k int) error {
	clear(d)
	for i, c := range y {
		switch {
		case k == 1:
			d[i] = T(c)
		case c >= 0 && c < k:
			d[i*k+c] = 1
		default:
			return fmt.Errorf("convexity: row %d has class %d of a model with %d outputs", i, c, k)
		}
	}
	return nil
}
