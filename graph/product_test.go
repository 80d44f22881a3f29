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

// someFloat32s draws n values spanning many binades, with zeros of both signs and subnormals
// among them.
func someFloat32s(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch rng.IntN(16) {
		case 0:
			x[i] = 0
		case 1:
			x[i] = float32(math.Copysign(0, -1))
		case 2:
			x[i] = float32(rng.NormFloat64()) * 1e-39 // subnormal
		default:
			x[i] = float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(20)-10)))
		}
	}
	return x
}

// productCase fills a k×r and b k×c (someFloat32s), and p, m and v for an r×c layer.
func productCase(rng *rand.Rand, k, r, c int) (a, b, p, m, v []float32) {
	a, b, p, m = someFloat32s(rng, k*r), someFloat32s(rng, k*c), someFloat32s(rng, r*c), someFloat32s(rng, r*c)
	v = someFloat32s(rng, r*c)
	for i := range v {
		v[i] = v[i] * v[i]
	}
	return a, b, p, m, v
}

// TestAdamUpdateProduct checks AdamUpdateProduct against the Program's product (gemm, as a
// run computes the gradient) followed by AdamUpdate, bit for bit, on shapes that take the
// vector kernel (rows of a multiple of 8, at least productRowMin wide) and the buffer (others),
// several cores' chunks, and k from 1 to productMaxK.
func TestAdamUpdateProduct(t *testing.T) {
	if !haveVec || !haveSgemmKernels {
		t.Skip("no AVX2/FMA: AdamUpdateProduct is a plain product and update here")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	shapes := [][2]int{{1, 1}, {3, 5}, {5, 1024}, {17, 64}, {64, 72}, {9, 100}, {256, 256}, {1024, 1024}, {300, 8}, {2, 24}}
	for _, sh := range shapes {
		for _, k := range []int{1, 2, 3, 4, 8, 13, 16} {
			for _, variant := range []AdamCoeffs[float32]{
				{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: 1e-3, Bc2: 0.03, Eps: 1e-7, Hat: true},
				{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: 1e-3, Bc2: 0.03, Eps: 1e-8},
				{B1c: 0.2, B2: 0.99, B2c: 0.01, Step: 0.5, Bc2: 0.3, Eps: 1e-6, WD: 0.01, Hat: true},
			} {
				r, c := sh[0], sh[1]
				if r*c > 1<<16 && k > 4 {
					continue
				}
				a, b, p, m, v := productCase(rng, k, r, c)
				g := make([]float32, r*c)
				gemm(true, false, r, c, k, a, b, g)
				wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
				wantBad := AdamUpdate(wp, g, wm, wv, variant)
				bad := AdamUpdateProduct(p, m, v, a, b, k, variant)
				name := fmt.Sprintf("%dx%d k=%d wd=%v hat=%v", r, c, k, variant.WD, variant.Hat)
				if bad != wantBad {
					t.Errorf("%s: reports %v, want %v", name, bad, wantBad)
				}
				for i := range p {
					if math.Float32bits(p[i]) != math.Float32bits(wp[i]) || math.Float32bits(m[i]) != math.Float32bits(wm[i]) || math.Float32bits(v[i]) != math.Float32bits(wv[i]) {
						t.Errorf("%s: entry %d (row %d): p, m, v = %v, %v, %v; want %v, %v, %v (gradient %v)", name, i, i/c, p[i], m[i], v[i], wp[i], wm[i], wv[i], g[i])
						break
					}
				}
			}
		}
	}
}

// BenchmarkAdamUpdateProduct times a hidden layer's (r × c float32) weight update from a batch
// of k rows: the product written out and AdamUpdate (the Program's path without
// DeferProduct), against AdamUpdateProduct.
func BenchmarkAdamUpdateProduct(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range [][3]int{{1024, 1024, 4}, {1024, 1024, 8}, {1024, 1024, 16}, {256, 256, 4}, {256, 256, 8}, {64, 64, 4}} {
		r, c, k := sh[0], sh[1], sh[2]
		a, bb, p, m, v := productCase(rng, k, r, c)
		for i := range p {
			p[i], m[i], v[i] = 0.01, 1e-4, 1e-6
		}
		g := make([]float32, r*c)
		cf := AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: 1e-9, Bc2: 0.03, Eps: 1e-7, Hat: true}
		b.Run(fmt.Sprintf("%dx%d/k=%d/product+update", r, c, k), func(b *testing.B) {
			for range b.N {
				gemm(true, false, r, c, k, a, bb, g)
				AdamUpdate(p, g, m, v, cf)
			}
		})
		b.Run(fmt.Sprintf("%dx%d/k=%d/fused", r, c, k), func(b *testing.B) {
			for range b.N {
				AdamUpdateProduct(p, m, v, a, bb, k, cf)
			}
		})
	}
}

// TestDeferProduct: a Program leaves a weight gradient uncomputed exactly where
// productDeferrable allows and the sparse path declines it, hands over its operands, vouches
// for it from them (Finite), and computes it, to the bits of a Program that never deferred it,
// as soon as anything reads it; nodes that are not such products are refused.
func TestDeferProduct(t *testing.T) {
	if !haveVec || !haveSgemmKernels {
		t.Skip("no AVX2/FMA: Run never defers a product here")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		name       string
		dt         tensor.Dtype
		b, in, out int
		fill       float64 // of the batch's entries
		off        bool    // HYPERFLAT_PRODUCTS=off
		want       bool
	}{
		{"hidden layer", tensor.Float32, 4, 512, 512, 1, false, true},
		{"eight rows", tensor.Float32, 8, 1024, 128, 0.5, false, true},
		{"nine rows", tensor.Float32, 9, 512, 512, 1, false, false},
		{"in cache", tensor.Float32, 4, 256, 256, 1, false, false},
		{"one-hot batch", tensor.Float32, 4, 4096, 64, 1.0 / 512, false, false},
		{"float64", tensor.Float64, 4, 512, 512, 1, false, false},
		{"switched off", tensor.Float32, 4, 512, 512, 1, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.off {
				setSwitch(t, "HYPERFLAT_PRODUCTS", "off")
			}
			x, _, loss, grads := productLossOf(t, tc.dt, tc.b, tc.in, tc.out, rng)
			gw := grads[0]
			p, err := Compile(loss, gw)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := Compile(loss, gw)
			if err != nil {
				t.Fatal(err)
			}
			if !p.DeferProduct(gw, true) {
				t.Fatal("DeferProduct refuses a weight gradient no node reads")
			}
			for run := range 2 {
				if err := G.Let(x, denseOf(tc.dt, randomMatrix(rng, tc.b, tc.in, tc.fill), tc.b, tc.in)); err != nil {
					t.Fatal(err)
				}
				if err := p.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				if err := ref.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				a, b, c, ok := p.DeferredProduct(gw)
				if ok != tc.want {
					t.Fatalf("run %d: DeferredProduct says %v, want %v", run, ok, tc.want)
				}
				if ok {
					if a != x.Value() || !b.Shape().Eq(tensor.Shape{tc.b, tc.out}) || !c.Shape().Eq(tensor.Shape{tc.in, tc.out}) {
						t.Fatalf("operands of shapes %v, %v and buffer %v; want x, %d×%d, %d×%d", a.Shape(), b.Shape(), c.Shape(), tc.b, tc.out, tc.in, tc.out)
					}
					if !p.Finite(gw) {
						t.Error("Finite refuses a deferred product of finite, small operands")
					}
					if _, known := p.NonzeroRows(gw); known {
						t.Error("NonzeroRows known for a product the run left")
					}
				}
				_, knownRef := ref.NonzeroRows(gw)
				if _, known := p.NonzeroRows(gw); !ok && known != knownRef {
					t.Errorf("NonzeroRows known %v; the Program that never defers says %v", known, knownRef)
				}
				got, err := p.Float64s(gw)
				if err != nil {
					t.Fatal(err)
				}
				want, err := ref.Float64s(gw)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("run %d: entry %d is %v read through the Program, %v computed by the run", run, i, got[i], want[i])
					}
				}
				if _, _, _, still := p.DeferredProduct(gw); still {
					t.Error("DeferredProduct still reports a product that Value has computed")
				}
			}
			if !p.DeferProduct(gw, false) {
				t.Fatal("DeferProduct(false) refuses")
			}
			if err := p.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, _, _, ok := p.DeferredProduct(gw); ok {
				t.Error("a run after DeferProduct(false) left the product")
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		x, w, loss, grads := productLossOf(t, tensor.Float32, 4, 512, 512, rng)
		s, err := Sum(grads[0])
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(loss, grads[0], s)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []*G.Node{grads[0], loss, x, w, s} {
			if p.DeferProduct(n, true) {
				t.Errorf("DeferProduct accepts %s", n.Name())
			}
		}
		fwd, err := MatMul(x, w)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Compile(fwd)
		if err != nil {
			t.Fatal(err)
		}
		if q.DeferProduct(fwd, true) {
			t.Error("DeferProduct accepts X·W (not a weight gradient Xᵀ·dY)")
		}
	})
}
