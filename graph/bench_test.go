package graph

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The benchmark workloads match bench/torch_ref.py shape for shape, so that bench/compare.sh
// can print hyperflat/PyTorch time ratios:
//   MLP: 784-256-256-10, ReLU, batch 128, mean softmax cross-entropy.
//   CNN: 64×1×28×28 → conv3×3(16, pad 1) ReLU maxpool2 → conv3×3(32, pad 1) ReLU maxpool2
//        → dense 32·7·7→10, mean softmax cross-entropy.
// Grad is one forward and backward pass for all parameters; HVP adds the second backward pass
// of double backpropagation.

type benchModel struct {
	g      *G.ExprGraph
	params []*G.Node
	cost   *G.Node
}

func benchTensor(g *G.ExprGraph, dt tensor.Dtype, rng *rand.Rand, name string, scale float64, shape ...int) *G.Node {
	n := tensor.Shape(shape).TotalSize()
	var v *tensor.Dense
	if dt == tensor.Float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(rng.NormFloat64() * scale)
		}
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	} else {
		d := make([]float64, n)
		for i := range d {
			d[i] = rng.NormFloat64() * scale
		}
		v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
}

func benchLabels(g *G.ExprGraph, dt tensor.Dtype, rng *rand.Rand, n, k int) *G.Node {
	oh := oneHot(rng, n, k)
	v := oh
	if dt == tensor.Float32 {
		v = toF32(oh)
	}
	return G.NewTensor(g, dt, 2, G.WithShape(n, k), G.WithName("labels"), G.WithValue(v))
}

func benchMLP(dt tensor.Dtype) benchModel {
	rng := rand.New(rand.NewPCG(1, 1))
	g := G.NewGraph()
	x := benchTensor(g, dt, rng, "x", 1, 128, 784)
	y := benchLabels(g, dt, rng, 128, 10)
	sizes := []int{784, 256, 256, 10}
	h := x
	var params []*G.Node
	for l := 0; l < 3; l++ {
		w := benchTensor(g, dt, rng, fmt.Sprint("w", l), 1/float64(sizes[l]), sizes[l], sizes[l+1])
		b := benchTensor(g, dt, rng, fmt.Sprint("b", l), 0.1, sizes[l+1])
		params = append(params, w, b)
		h = must(Add(must(MatMul(h, w)), b))
		if l < 2 {
			h = must(ReLU(h))
		}
	}
	return benchModel{g: g, params: params, cost: must(CrossEntropy(h, y))}
}

func benchCNN(dt tensor.Dtype) benchModel {
	rng := rand.New(rand.NewPCG(2, 2))
	g := G.NewGraph()
	x := benchTensor(g, dt, rng, "x", 1, 64, 1, 28, 28)
	y := benchLabels(g, dt, rng, 64, 10)
	w1 := benchTensor(g, dt, rng, "w1", 1.0/3, 16, 1, 3, 3)
	b1 := benchTensor(g, dt, rng, "b1", 0.1, 1, 16, 1, 1)
	w2 := benchTensor(g, dt, rng, "w2", 1.0/12, 32, 16, 3, 3)
	b2 := benchTensor(g, dt, rng, "b2", 0.1, 1, 32, 1, 1)
	wd := benchTensor(g, dt, rng, "wd", 1.0/40, 32*7*7, 10)
	bd := benchTensor(g, dt, rng, "bd", 0.1, 10)
	same := Geometry{PadH: 1, PadW: 1}
	h := must(ReLU(must(Add(must(Conv2d(x, w1, same)), b1))))
	h = must(MaxPool2d(h, 2, 2, Geometry{}))
	h = must(ReLU(must(Add(must(Conv2d(h, w2, same)), b2))))
	h = must(MaxPool2d(h, 2, 2, Geometry{}))
	h = must(Reshape(h, 64, -1))
	o := must(Add(must(MatMul(h, wd)), bd))
	return benchModel{g: g, params: []*G.Node{w1, b1, w2, b2, wd, bd}, cost: must(CrossEntropy(o, y))}
}

func benchRun(b *testing.B, build func(tensor.Dtype) benchModel, hvp bool) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		name := map[tensor.Dtype]string{tensor.Float32: "f32", tensor.Float64: "f64"}[dt]
		b.Run(name, func(b *testing.B) {
			m := build(dt)
			outs, err := Grad(m.cost, m.params...)
			if err != nil {
				b.Fatal(err)
			}
			if hvp {
				rng := rand.New(rand.NewPCG(3, 3))
				vs := make([]*G.Node, len(m.params))
				for i, p := range m.params {
					vs[i] = benchTensor(m.g, dt, rng, fmt.Sprint("v", i), 1, p.Shape()...)
				}
				if outs, err = HVP(m.cost, m.params, vs); err != nil {
					b.Fatal(err)
				}
			}
			p, err := Compile(append([]*G.Node{m.cost}, outs...)...)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := p.Run(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := p.Run(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMLPGrad(b *testing.B) { benchRun(b, benchMLP, false) }
func BenchmarkMLPHVP(b *testing.B)  { benchRun(b, benchMLP, true) }
func BenchmarkCNNGrad(b *testing.B) { benchRun(b, benchCNN, false) }
func BenchmarkCNNHVP(b *testing.B)  { benchRun(b, benchCNN, true) }

// BenchmarkCNNTrainStep is one float32 training step of the CNN (forward, gradients of every
// parameter, SGD update) with -benchmem's allocation per step set against the bytes of the
// tensors the step keeps live (inputs, activations, workspaces' results, gradients):
// alloc/live must stay far below 2 — every buffer, im2col and pooling workspace included, is
// reused across steps.
func BenchmarkCNNTrainStep(b *testing.B) {
	m := benchCNN(tensor.Float32)
	gs, err := Grad(m.cost, m.params...)
	if err != nil {
		b.Fatal(err)
	}
	p, err := Compile(append([]*G.Node{m.cost}, gs...)...)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	step := func() {
		if err := p.Run(ctx); err != nil {
			b.Fatal(err)
		}
		for i, w := range m.params {
			gv, err := p.Value(gs[i])
			if err != nil {
				b.Fatal(err)
			}
			wd, _ := Elements[float32](w.Value())
			gd, _ := Elements[float32](gv)
			for j := range wd {
				wd[j] -= 0.01 * gd[j]
			}
		}
	}
	for i := 0; i < 3; i++ {
		step()
	}
	live := p.LiveBytes()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms)
	perStep := float64(ms.TotalAlloc-before) / float64(b.N)
	b.ReportMetric(float64(live), "live-B")
	b.ReportMetric(perStep/float64(live), "alloc/live")
	if perStep > 2*float64(live) {
		b.Errorf("a step allocates %.0f bytes, more than twice its %d live bytes", perStep, live)
	}
}
