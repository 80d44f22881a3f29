package graph

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// poolCases are graphs whose programs TestPoolSameBits runs with and without a pool: an MLP's
// gradient and Hessian-vector product (products, fused elementwise kernels, reductions), and
// a convolution, max pooling and reshape (im2col and pooling buffers, the ops that write only
// part of an output where a shortcut would leave the rest as allocated), and a product through
// a one-hot-like input (the sparse path, which after its first run clears and writes only the
// rows a batch selects, trusting what it left in its buffer).
func poolCases(t *testing.T, dt tensor.Dtype) map[string][]*G.Node {
	t.Helper()
	m := buildMLP(t, dt, mlpValues(3), true)
	rng := rand.New(rand.NewPCG(4, 4))
	vs := make([]*G.Node, len(m.params))
	for i, p := range m.params {
		v := normal(rng, p.Shape()...)
		if dt == tensor.Float32 {
			v = toF32(v)
		}
		vs[i] = G.NewTensor(m.g, dt, len(v.Shape()), G.WithShape(v.Shape()...), G.WithName(fmt.Sprintf("v%d", i)), G.WithValue(v))
	}
	hv, err := HVP(m.cost, m.params, vs)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := Grad(m.cost, m.params...)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]*G.Node{"mlp": append(append(hv, grads...), m.cost)}
	// A one-hot-like input takes the sparse product (sparse.go) and its weight gradient xᵀ·G.
	sg := G.NewGraph()
	srng := rand.New(rand.NewPCG(8, 8))
	sin := func(name string, v *tensor.Dense) *G.Node {
		if dt == tensor.Float32 {
			v = toF32(v)
		}
		return G.NewTensor(sg, dt, len(v.Shape()), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
	}
	sx, sw, sy := sin("x", sparseNormal(srng, 16, 512, 2)), sin("w", normal(srng, 512, 9)), sin("y", oneHot(srng, 16, 9))
	sloss := must(CrossEntropy(must(MatMul(sx, sw)), sy))
	sgrads, err := Grad(sloss, sw)
	if err != nil {
		t.Fatal(err)
	}
	cases["sparse"] = append(sgrads, sloss)
	if dt != tensor.Float64 {
		return cases
	}
	g := G.NewGraph()
	crng := rand.New(rand.NewPCG(6, 6))
	in := func(name string, v *tensor.Dense) *G.Node {
		return G.NewTensor(g, dt, len(v.Shape()), G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
	}
	x, w := in("x", normal(crng, 2, 1, 6, 6)), in("w", normal(crng, 3, 1, 3, 3))
	dense, y := in("dense", normal(crng, 3*3*3, 4)), in("y", oneHot(crng, 2, 4))
	c := must(Conv2d(x, w, Geometry{PadH: 1, PadW: 1}))
	p := must(MaxPool2d(c, 2, 2, Geometry{}))
	loss := must(CrossEntropy(must(MatMul(must(Reshape(p, 2, -1)), dense)), y))
	cgrads, err := Grad(loss, w, dense)
	if err != nil {
		t.Fatal(err)
	}
	cases["conv"] = append(cgrads, loss)
	return cases
}

// runFlat compiles outs with pool (nil: none), runs the program and returns its outputs.
func runFlat(t *testing.T, pool *Pool, outs []*G.Node) (*Program, []float64) {
	t.Helper()
	p, err := Compile(outs...)
	if err != nil {
		t.Fatal(err)
	}
	p.UsePool(pool)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, err := p.Flatten(outs...)
	if err != nil {
		t.Fatal(err)
	}
	return p, f
}

// TestPoolSameBits: a program whose buffers come from a pool, whose buffers last held
// NaNs, computes what one that allocates them computes, bit for bit; Release gives them back
// and leaves the program unusable.
func TestPoolSameBits(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		for name, outs := range poolCases(t, dt) {
			_, want := runFlat(t, nil, outs)
			pool := NewPool(1 << 30)
			first, _ := runFlat(t, pool, outs)
			first.Release()
			if pool.Bytes() == 0 {
				t.Fatalf("%v %s: a released program gave its pool nothing", dt, name)
			}
			if err := first.Run(context.Background()); err == nil {
				t.Errorf("%v %s: a released program ran", dt, name)
			}
			poison(pool)
			second, got := runFlat(t, pool, outs)
			if pool.Bytes() != 0 {
				t.Errorf("%v %s: the second program left %d bytes in the pool; want it to take them all", dt, name, pool.Bytes())
			}
			for i := range want {
				if math.Float64bits(want[i]) != math.Float64bits(got[i]) {
					t.Fatalf("%v %s: output %d is %v from pooled buffers, %v from fresh ones", dt, name, i, got[i], want[i])
				}
			}
			second.Release()
		}
	}
}

// poison fills every buffer pool holds with NaN.
func poison(pool *Pool) {
	for _, list := range pool.free {
		for _, b := range list {
			switch b := b.(type) {
			case []float32:
				for i := range b {
					b[i] = float32(math.NaN())
				}
			case []float64:
				for i := range b {
					b[i] = math.NaN()
				}
			}
		}
	}
}

// TestPoolBounds: a pool keeps no more than its bytes, hands buffers out zeroed, and a nil
// pool allocates.
func TestPoolBounds(t *testing.T) {
	pool := NewPool(100)
	pool.Put(make([]float64, 20)) // 160 bytes: over the bound
	if pool.Bytes() != 0 {
		t.Fatalf("a pool of 100 bytes keeps %d", pool.Bytes())
	}
	buf := []float64{1, math.NaN(), 3}
	pool.Put(buf, "not a buffer", nil)
	if pool.Bytes() != 24 {
		t.Fatalf("pool holds %d bytes; want 24", pool.Bytes())
	}
	got := pool.Float64s(3)
	if &got[0] != &buf[0] || got[0] != 0 || got[1] != 0 || got[2] != 0 {
		t.Fatalf("Float64s(3) = %v; want the buffer given back, zeroed", got)
	}
	pool.Put(tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, 2, 3, 4, 5, 6})))
	d := pool.Dense(tensor.Float32, 3, 2)
	if e := d.Data().([]float32); !d.Shape().Eq(tensor.Shape{3, 2}) || e[0] != 0 || e[5] != 0 || pool.Bytes() != 0 {
		t.Fatalf("Dense(float32, 3, 2) = %v %v with %d bytes left", d.Shape(), e, pool.Bytes())
	}
	var none *Pool
	if len(none.Float64s(4)) != 4 || none.Dense(tensor.Float64, 2).Shape()[0] != 2 || none.Bytes() != 0 {
		t.Fatal("a nil pool does not allocate")
	}
	none.Put(buf)
	(*Program)(nil).Release()
}

// TestPoolConcurrent: programs on several goroutines sharing one pool compute what a program
// without one computes (run it with -race).
func TestPoolConcurrent(t *testing.T) {
	outs := poolCases(t, tensor.Float32)["mlp"]
	_, want := runFlat(t, nil, outs)
	pool := NewPool(1 << 20)
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		// each goroutine its own graph: a gorgonia graph's input values are shared state
		cases := poolCases(t, tensor.Float32)["mlp"]
		go func() {
			for range 10 {
				p, err := Compile(cases...)
				if err != nil {
					errs <- err
					return
				}
				p.UsePool(pool)
				if err := p.Run(context.Background()); err != nil {
					errs <- err
					return
				}
				got, err := p.Flatten(cases...)
				p.Release()
				if err != nil {
					errs <- err
					return
				}
				for i := range want {
					if math.Float64bits(want[i]) != math.Float64bits(got[i]) {
						errs <- fmt.Errorf("output %d is %v on a goroutine sharing the pool, %v alone", i, got[i], want[i])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
