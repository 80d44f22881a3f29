package main

import (
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gen is the deterministic data both sides use (bench/ref.py computes the same doubles):
// element i of stream seed is frac((i+1)·φ⁻¹ + seed·ρ⁻¹) − ½, uniform on [−½, ½).
func gen(seed, i int) float64 {
	x := float64(i+1)*0.6180339887498949 + float64(seed)*0.7548776662466927
	return x - math.Floor(x) - 0.5
}

// values is n elements of stream seed scaled by s (uniform with standard deviation s/√12·√12 = s
// when s includes the √12 factor).
func values(dt tensor.Dtype, seed int, s float64, shape ...int) *tensor.Dense {
	n := tensor.Shape(shape).TotalSize()
	if dt == tensor.Float32 {
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(gen(seed, i) * s)
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = gen(seed, i) * s
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

// he is the scale of a uniform He initialization for the given fan-in: std √(2/fanIn).
func he(fanIn int) float64 { return math.Sqrt(12 * 2 / float64(fanIn)) }

func input(g *G.ExprGraph, name string, v *tensor.Dense) *G.Node {
	return G.NewTensor(g, v.Dtype(), v.Dims(), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
}

// labels are y[i] = (7i + 3 + seed) mod k, one-hot.
func labels(g *G.ExprGraph, dt tensor.Dtype, name string, seed, n, k int) *G.Node {
	v := tensor.New(tensor.Of(dt), tensor.WithShape(n, k))
	for i := 0; i < n; i++ {
		c := (7*i + 3 + seed) % k
		switch d := v.Data().(type) {
		case []float32:
			d[i*k+c] = 1
		case []float64:
			d[i*k+c] = 1
		}
	}
	return input(g, name, v)
}

type model struct {
	g      *G.ExprGraph
	params []*G.Node
	loss   *G.Node
}

// mlp is 784-256-256-10 ReLU, batch 128, mean softmax cross-entropy (bench/ref.py mlp).
func mlp(dt tensor.Dtype) model {
	g := G.NewGraph()
	x := input(g, "x", values(dt, 1, 2, 128, 784))
	y := labels(g, dt, "y", 0, 128, 10)
	sizes := []int{784, 256, 256, 10}
	var params []*G.Node
	h := x
	for l := 0; l < 3; l++ {
		w := input(g, fmt.Sprint("w", l), values(dt, 10+l, he(sizes[l]), sizes[l], sizes[l+1]))
		b := input(g, fmt.Sprint("b", l), values(dt, 20+l, 0.1, sizes[l+1]))
		params = append(params, w, b)
		h = must(graph.Add(must(graph.MatMul(h, w)), b))
		if l < 2 {
			h = must(graph.ReLU(h))
		}
	}
	return model{g: g, params: params, loss: must(graph.CrossEntropy(h, y))}
}

// cnn is 64×1×28×28 → conv3×3(16, pad 1) ReLU maxpool2 → conv3×3(32, pad 1) ReLU maxpool2 →
// dense 1568→10, mean softmax cross-entropy (bench/ref.py cnn).
func cnn(dt tensor.Dtype) model {
	g := G.NewGraph()
	x := input(g, "x", values(dt, 2, 2, 64, 1, 28, 28))
	y := labels(g, dt, "y", 1, 64, 10)
	w1 := input(g, "w1", values(dt, 30, he(9), 16, 1, 3, 3))
	b1 := input(g, "b1", values(dt, 31, 0.1, 1, 16, 1, 1))
	w2 := input(g, "w2", values(dt, 32, he(144), 32, 16, 3, 3))
	b2 := input(g, "b2", values(dt, 33, 0.1, 1, 32, 1, 1))
	wd := input(g, "wd", values(dt, 34, he(1568), 1568, 10))
	bd := input(g, "bd", values(dt, 35, 0.1, 10))
	same := graph.Geometry{PadH: 1, PadW: 1}
	h := must(graph.ReLU(must(graph.Add(must(graph.Conv2d(x, w1, same)), b1))))
	h = must(graph.MaxPool2d(h, 2, 2, graph.Geometry{}))
	h = must(graph.ReLU(must(graph.Add(must(graph.Conv2d(h, w2, same)), b2))))
	h = must(graph.MaxPool2d(h, 2, 2, graph.Geometry{}))
	h = must(graph.Reshape(h, 64, -1))
	o := must(graph.Add(must(graph.MatMul(h, wd)), bd))
	return model{g: g, params: []*G.Node{w1, b1, w2, b2, wd, bd}, loss: must(graph.CrossEntropy(o, y))}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// mlpFlops is the useful float work of one MLP training step: forward and weight gradients
// of every layer, input gradients of all but the first (2 FLOPs per multiply-add).
func mlpFlops() float64 {
	const b = 128
	macs := 0.0
	sizes := []int{784, 256, 256, 10}
	for l := 0; l < 3; l++ {
		mk := float64(b * sizes[l] * sizes[l+1])
		macs += 2 * mk // forward, weight gradient
		if l > 0 {
			macs += mk // input gradient
		}
	}
	return 2 * macs
}
