package graph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAdamZeroSteps: k zero-gradient steps through AdamZeroSteps give the bits of k
// AdamUpdate calls with a gradient of zeros, step constants changing at every step, for
// lengths around the vector width, the cache block and the core split, in both Adam forms
// and with weight decay, with pieces of weights whose moments are zero (skipped without
// weight decay); a weight that turns infinite is reported.
func TestAdamZeroSteps(t *testing.T) {
	testAdamZeroSteps[float32](t)
	testAdamZeroSteps[float64](t)
}

// bitsOf is x's bit pattern (as a float64: float32 widens exactly, signed zeros included).
func bitsOf[T Float](x T) uint64 { return math.Float64bits(float64(x)) }

func testAdamZeroSteps[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 9, 24, 41, 2047, 2049, 5000, 2*optimGrain + 13} {
		for variant := range 4 {
			hat, wd := variant&1 == 1, variant&2 == 2
			p, m, v := make([]T, n), make([]T, n), make([]T, n)
			for i := range p {
				p[i], m[i], v[i] = T(rng.NormFloat64()), T(rng.NormFloat64()*1e-2), T(rng.Float64()*1e-3)
				// weights no gradient has reached yet, in pieces shorter than, as long as
				// and longer than the pieces skipped, and one with only m zero
				if (i >= 100 && i < 900) || (i >= 1024 && i < 1280) || (n > 1000 && i >= n-300) || (i >= 1500 && i < 1800 && i%2 == 0) {
					m[i], v[i] = 0, 0
				}
				if i >= 2000 && i < 2600 {
					m[i] = 0
				}
			}
			p2, m2, v2 := append([]T(nil), p...), append([]T(nil), m...), append([]T(nil), v...)
			var cs []AdamCoeffs[T]
			for k := range 6 {
				c := AdamCoeffs[T]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: T(1e-3 * (1 + 0.1*float64(k))), Bc2: T(0.03 * float64(k+1)), Eps: 1e-7, Hat: hat}
				if wd && k%2 == 1 {
					c.WD = 1e-2
				}
				cs = append(cs, c)
			}
			zero := make([]T, n)
			for _, c := range cs {
				if AdamUpdate(p, zero, m, v, c) {
					t.Fatal("non-finite")
				}
			}
			if AdamZeroSteps(p2, m2, v2, cs) {
				t.Fatal("non-finite reported")
			}
			for i := range p {
				if bitsOf(p[i]) != bitsOf(p2[i]) || bitsOf(m[i]) != bitsOf(m2[i]) || bitsOf(v[i]) != bitsOf(v2[i]) {
					t.Fatalf("%T n=%d hat=%v wd=%v element %d: (%v %v %v) stepped, (%v %v %v) replayed", p[i], n, hat, wd, i, p[i], m[i], v[i], p2[i], m2[i], v2[i])
				}
			}
			if n > 400 {
				p2[n-400] = T(math.Inf(-1))
				if !AdamZeroSteps(p2, m2, v2, cs) {
					t.Fatalf("n=%d: an infinite weight not reported", n)
				}
			}
		}
	}
}

// TestAdamZeroStepsStill: the replay's shortcut for weights that no longer move (their first
// moment too small for a step to change them) gives the bits of the step-by-step definition, for
// weights at powers of two (the nearest neighbour below, and a step of nearly the bound: v = 0
// or √v ≫ ε over enough steps for v to fall by more than the margins, and the largest step
// size at every step), weights that fall several binades before they stop
// (a bound taken from where a weight was would be too large), tiny, zero, subnormal and
// infinite weights, NaN and infinite v, and steps whose ε turns the shortcut off.
func TestAdamZeroStepsStill(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	logUniform := func(lo, hi float64) float64 { return math.Pow(10, lo+(hi-lo)*rng.Float64()) }
	sign := func() float64 { return float64(2*rng.IntN(2) - 1) }
	const groups, k, lr = 120, 2500, 1e-3
	for _, b1c := range []float32{0.1, 0} {
		for _, eps := range []float32{1e-7, 1e-8, 0} {
			for _, constant := range []bool{true, false} {
				cs := make([]AdamCoeffs[float32], k)
				for j := range cs {
					step := float32(lr)
					if !constant { // Keras's bias corrections, from step 3 on
						tt := float64(j + 3)
						step = float32(lr * math.Sqrt(1-math.Pow(0.999, tt)) / (1 - math.Pow(0.9, tt)))
					}
					cs[j] = AdamCoeffs[float32]{B1c: b1c, B2: 0.999, B2c: 1e-3, Step: step, Bc2: 1, Eps: eps, Hat: true}
					if !constant { // and β1, β2 varying, so that a step taken with another's constants
						// shows (1−β1 small enough that m stays normal through the steps)
						cs[j].B1c, cs[j].B2 = b1c*(0.1+0.05*float32(j%7)), 0.999-0.0002*float32(j%5)
					}
				}
				// a first moment Q·ε/S, after the first step (S the largest step size), moves a
				// weight by about Q at most when √v = 0, and one Q·√v/S by about Q at most at
				// a step with that v (v only shrinks, by β2ᵏ over all steps: with β1 = 1, 1−β1 =
				// 0, m keeps its value and its move grows as v shrinks)
				maxStep := float64(slices.MaxFunc(cs, func(a, b AdamCoeffs[float32]) int { return cmp.Compare(a.Step, b.Step) }).Step)
				decay := 1.0
				for _, c := range cs {
					decay *= float64(c.B2)
				}
				still, first := float64(eps)/maxStep, 1-float64(cs[0].B1c)
				n := 16*groups + 8 + 5 // vectors of 16 and of 8, and the scalar tail
				p, m, v := make([]float32, n), make([]float32, n), make([]float32, n)
				for a := 0; a < n; a += 16 {
					kind := (a / 16) % 5
					e := rng.IntN(30) - 22
					r := math.Exp2(4*rng.Float64() - 1) // how far the group's m is over the bound
					for i := a; i < min(n, a+16); i++ {
						s, ri := sign(), r*(1+0x1p-8*rng.Float64())
						switch kind {
						case 0: // at a power of two, moving towards zero, v = 0, m from half to
							// eight times the bound after the first step
							p[i], m[i], v[i] = float32(s*math.Ldexp(1, e)), float32(s*math.Ldexp(still, e-26)/first*ri), 0
						case 1: // just above 8, moved down to about 1 before it stops
							p[i], m[i], v[i] = float32(s*8*(1+0x1p-20)), float32(s*(6.5+rng.Float64())*float64(max(eps, 1e-8))/(9*lr)), 0
						case 2: // anything
							p[i], m[i], v[i] = float32(rng.NormFloat64()*logUniform(-30, 3)), float32(rng.NormFloat64()*logUniform(-45, -1)), float32(logUniform(-40, 0))
							switch rng.IntN(12) {
							case 0:
								p[i] = 0
							case 1:
								p[i] = float32(s * logUniform(-44, -39)) // subnormal
							case 2:
								p[i] = float32(s * math.Inf(1))
							case 3:
								v[i] = 0
							case 4:
								v[i] = float32(math.Inf(1))
							case 5:
								m[i] = 0
							}
						case 3: // one NaN v among still weights
							p[i], m[i], v[i] = float32(s*logUniform(-3, 1)), float32(s*logUniform(-20, -14)), float32(logUniform(-12, -6))
							if i == a+5 {
								v[i] = float32(math.NaN())
							}
						case 4: // at a power of two, moving towards zero, √v ≫ ε, m from half to
							// eight times the bound for v at the last step, after the first
							v[i] = float32(logUniform(-8, -4))
							p[i], m[i] = float32(s*math.Ldexp(1, e)), float32(s*math.Ldexp(math.Sqrt(float64(v[i])*decay)/maxStep, e-26)/first*ri)
						}
					}
				}
				// replayed whole, in rows 24 wide (a vector of 16 and one of 8 each), and whole
				// from a log of the steps (whose plan is the log's)
				p2, m2, v2 := slices.Clone(p), slices.Clone(m), slices.Clone(v)
				p3, m3, v3 := slices.Clone(p), slices.Clone(m), slices.Clone(v)
				p4, m4, v4 := slices.Clone(p), slices.Clone(m), slices.Clone(v)
				var log AdamSteps[float32]
				for _, c := range cs {
					log.Append(c)
				}
				log.ZeroSteps(p4, m4, v4, 0, k)
				zero := make([]float32, n)
				for _, c := range cs {
					adamScalar(p, zero, m, v, c)
				}
				AdamZeroSteps(p2, m2, v2, cs)
				for a := 0; a < n; a += 24 {
					e := min(n, a+24)
					AdamZeroSteps(p3[a:e], m3[a:e], v3[a:e], cs)
				}
				for i := range p {
					for _, got := range [][3]float32{{p2[i], m2[i], v2[i]}, {p3[i], m3[i], v3[i]}, {p4[i], m4[i], v4[i]}} {
						if bitsOf(p[i]) != bitsOf(got[0]) || bitsOf(m[i]) != bitsOf(got[1]) || bitsOf(v[i]) != bitsOf(got[2]) {
							t.Fatalf("1−β1=%v ε=%v constant steps %v, weight %d (kind %d): (%v %v %v) stepped, %v replayed", b1c, eps, constant, i, (i/16)%5, p[i], m[i], v[i], got)
						}
					}
				}
			}
		}
	}
}

// TestAdamStepsZeroSteps: a logged run of steps replays to the bits of AdamZeroSteps on the
// same steps, from the start, the middle or near the end of the log, with the log's plan
// (every step ε̂ without weight decay) and with a log that has a step with weight decay, which
// plans each run alone.
func TestAdamStepsZeroSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const n, k = 16*24 + 8 + 3, 900
	var log AdamSteps[float32]
	for j := range k {
		tt := float64(j + 1)
		log.Append(AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: float32(1e-3 * math.Sqrt(1-math.Pow(0.999, tt)) / (1 - math.Pow(0.9, tt))), Bc2: 1, Eps: 1e-7, Hat: true})
	}
	for _, decay := range []bool{false, true} {
		if decay { // an early step with weight decay: no run plans from the whole log
			var l AdamSteps[float32]
			for j, c := range log.cs {
				if j == 3 {
					c.WD = 1e-2
				}
				l.Append(c)
			}
			log = l
		}
		for _, run := range [][2]int{{0, k}, {4, k}, {k / 2, k}, {k - 40, k}, {10, 500}, {k - 1, k}, {k, k}} {
			p, m, v := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range p {
				p[i] = float32(rng.NormFloat64() * 1e-2)
				m[i] = float32(rng.NormFloat64() * math.Pow(10, -3-10*rng.Float64()))
				v[i] = float32(math.Pow(10, -12+8*rng.Float64()))
			}
			p2, m2, v2 := slices.Clone(p), slices.Clone(m), slices.Clone(v)
			AdamZeroSteps(p, m, v, log.cs[run[0]:run[1]])
			log.ZeroSteps(p2, m2, v2, run[0], run[1])
			for i := range p {
				if bitsOf(p[i]) != bitsOf(p2[i]) || bitsOf(m[i]) != bitsOf(m2[i]) || bitsOf(v[i]) != bitsOf(v2[i]) {
					t.Fatalf("weight decay at step 3 %v, steps %v, weight %d: (%v %v %v) from the steps, (%v %v %v) from the log", decay, run, i, p[i], m[i], v[i], p2[i], m2[i], v2[i])
				}
			}
		}
	}
}

// TestStillBounds: the bounds for steps Keras's Adam takes, and none for steps outside the
// proof (ε or a step size not positive, β2 = 0, 1 − β1 > 1).
func TestStillBounds(t *testing.T) {
	c := AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, Step: 1e-3, Eps: 1e-7, Hat: true}
	d := AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, Step: 2e-3, Eps: 1e-7, Hat: true}
	eps, step := float64(float32(1e-7)), float64(float32(2e-3))
	b2 := float64(float32(0.999))
	still, cvs, qmin := stillBounds(step, eps, b2*b2, 2, true)
	if want := eps / step * (1 - 0x1p-9); float64(still) > want || float64(still) < want*(1-0x1p-23) {
		t.Errorf("still = %v, want the least ε over the largest step, %v, rounded down", still, want)
	}
	if want := float64(float32(0.999)) / step * (1 - 18*0x1p-24) * (1 - 0x1p-9); float64(cvs) > want || float64(cvs) < want*(1-0x1p-23) {
		t.Errorf("cvs = %v, want √(β2²) over the largest step, %v, rounded down", cvs, want)
	}
	if want := 0x1p-125 / eps; float64(qmin) < want || float64(qmin) > want*(1+0x1p-22) {
		t.Errorf("qmin = %v, want 2⁻¹²⁵/ε = %v rounded up", qmin, want)
	}
	if still, cvs, _ := stillBounds(step, eps, b2*b2, 2, false); still <= 0 || cvs != 0 {
		t.Errorf("β2 > 1 somewhere: still = %v, cvs = %v, want ε's bound only", still, cvs)
	}
	if still, cvs, _ := stillBounds(step, 0x1p-61, b2*b2, 2, true); still <= 0 || cvs != 0 {
		t.Errorf("ε = 2⁻⁶¹: still = %v, cvs = %v, want ε's bound only (v's needs ε far above the subnormals)", still, cvs)
	}
	// what planZeroSteps makes of steps: the bounds (where the kernel runs at all), and the
	// zero-moment skip
	if !haveVec {
		t.Log("no AVX2: the plans below have no bounds")
	}
	if plan := planZeroSteps([]AdamCoeffs[float32]{c, d}); haveVec && (plan.still != still || plan.cvs != cvs || plan.qmin != qmin) {
		t.Errorf("planned %+v, want stillBounds's %v %v %v", plan, still, cvs, qmin)
	}
	d.B2 = 0.99 // β2 varying: their product
	if cvs, want := planZeroSteps([]AdamCoeffs[float32]{c, d}).cvs, math.Sqrt(b2*float64(float32(0.99)))/step*(1-18*0x1p-24)*(1-0x1p-9); haveVec && (float64(cvs) > want || float64(cvs) < want*(1-0x1p-23)) {
		t.Errorf("cvs = %v with β2 0.999 and 0.99, want %v", cvs, want)
	}
	for name, bad := range map[string]func(*AdamCoeffs[float32]){
		"ε = 0":      func(c *AdamCoeffs[float32]) { c.Eps = 0 },
		"step = 0":   func(c *AdamCoeffs[float32]) { c.Step = 0 },
		"β2 = 0":     func(c *AdamCoeffs[float32]) { c.B2 = 0 },
		"1−β1 > 1":   func(c *AdamCoeffs[float32]) { c.B1c = 1.5 },
		"NaN step":   func(c *AdamCoeffs[float32]) { c.Step = float32(math.NaN()) },
		"infinite ε": func(c *AdamCoeffs[float32]) { c.Eps = float32(math.Inf(1)) },
	} {
		d := c
		bad(&d)
		if plan := planZeroSteps([]AdamCoeffs[float32]{c, d}); plan.still >= 0 || plan.cvs != 0 || plan.skip != (name == "step = 0" || name == "β2 = 0" || name == "1−β1 > 1") {
			t.Errorf("%s: %+v, want the shortcut off (still negative, cvs 0), and the zero-moment skip only with ε > 0 and finite constants", name, plan)
		}
	}
	// v's bound needs v to shrink, and ε far above the subnormals (planned)
	for name, d := range map[string]AdamCoeffs[float32]{
		"β2 > 1": {B1c: 0.1, B2: 1.001, Step: 1e-3, Eps: 1e-7, Hat: true},
		"tiny ε": {B1c: 0.1, B2: 0.999, Step: 1e-3, Eps: 0x1p-61, Hat: true},
	} {
		if plan := planZeroSteps([]AdamCoeffs[float32]{c, d}); haveVec && (plan.still <= 0 || plan.cvs != 0) {
			t.Errorf("%s: %+v, want ε's bound only", name, plan)
		}
	}
}

// TestReadOnlyThroughProduct: a weight read only by x·w qualifies; one also read elsewhere
// (a penalty on it, a product with another operand or transposed) does not, nor does a
// node outside the program.
func TestReadOnlyThroughProduct(t *testing.T) {
	build := func(extra func(g *G.ExprGraph, x, w *G.Node) *G.Node) (*Program, *G.Node, *G.Node) {
		x, w, loss, _ := productLoss(t, 4, 8, 3, nil)
		var err error
		if extra != nil {
			if loss, err = Add(loss, extra(x.Graph(), x, w)); err != nil {
				t.Fatal(err)
			}
		}
		grads, err := Grad(loss, w)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Compile(loss, grads[0])
		if err != nil {
			t.Fatal(err)
		}
		return p, x, w
	}
	must := func(n *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	p, x, w := build(nil)
	if !p.ReadOnlyThroughProduct(x, w) {
		t.Error("a weight read only as x·w does not qualify")
	}
	if p.ReadOnlyThroughProduct(w, x) || p.ReadOnlyThroughProduct(x, x) {
		t.Error("operands swapped, or one node as both, qualify")
	}
	for name, extra := range map[string]func(g *G.ExprGraph, x, w *G.Node) *G.Node{
		"penalty": func(g *G.ExprGraph, x, w *G.Node) *G.Node { return must(Sum(must(Square(w)))) },
		"other product": func(g *G.ExprGraph, x, w *G.Node) *G.Node {
			z := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 8), G.WithName("z"))
			return must(Sum(must(MatMul(z, w))))
		},
		"transposed": func(g *G.ExprGraph, x, w *G.Node) *G.Node {
			z := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 3), G.WithName("z"))
			return must(Sum(must(MatMulT(z, w, false, true))))
		},
	} {
		p, x, w := build(extra)
		if p.ReadOnlyThroughProduct(x, w) {
			t.Errorf("%s: a weight also read elsewhere qualifies", name)
		}
	}
	other := G.NewMatrix(G.NewGraph(), tensor.Float64, G.WithShape(8, 3), G.WithName("other"))
	if p.ReadOnlyThroughProduct(x, other) {
		t.Error("a node outside the program qualifies")
	}
}

// TestReadOnlyClearsDirtyRows: a weight gradient behind one-hot batches, promised read-only,
// is recomputed by clearing only the rows the last run wrote, and equals, run after run, the
// gradient of a Program that clears all of it; a dense batch in between (rows unknown) and a
// second Program (another buffer) change nothing; withdrawn, the promise lets a write into the
// value be cleared.
func TestReadOnlyClearsDirtyRows(t *testing.T) {
	const batch, in, out = 16, 512, 16
	rng := rand.New(rand.NewPCG(3, 4))
	x, _, loss, grads := productLoss(t, batch, in, out, rng)
	clean, err := Compile(loss, grads[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := clean.SetReadOnly(grads[0], true); err != nil {
		t.Fatal(err)
	}
	whole, err := Compile(loss, grads[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.SetReadOnly(G.NewScalar(G.NewGraph(), tensor.Float64), true); err == nil {
		t.Error("SetReadOnly of a node outside the program accepted")
	}
	run := func(p *Program, xs []float64) ([]float64, bool) {
		t.Helper()
		if err := p.Let(x, tensor.New(tensor.WithShape(batch, in), tensor.WithBacking(xs))); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		v, err := p.Value(grads[0])
		if err != nil {
			t.Fatal(err)
		}
		_, known := p.NonzeroRows(grads[0])
		return v.Data().([]float64), known
	}
	sparseRuns := 0
	for step := 0; step < 6; step++ {
		xs := make([]float64, batch*in)
		if step == 3 {
			for i := range xs {
				xs[i] = rng.NormFloat64()
			}
		} else {
			for r := 0; r < batch; r++ {
				xs[r*in+rng.IntN(in)] = 1
				xs[r*in+rng.IntN(in)] = 2
			}
		}
		got, known := run(clean, xs)
		want, _ := run(whole, slices.Clone(xs))
		if step == 4 {
			// the promise withdrawn, a write into the value is cleared by the next run
			if err := clean.SetReadOnly(grads[0], false); err != nil {
				t.Fatal(err)
			}
			got[0] = 7
			if err := clean.SetReadOnly(grads[0], true); err != nil {
				t.Fatal(err)
			}
			got, known = run(clean, xs)
		}
		if known {
			sparseRuns++
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("step %d: element %d is %v clearing the last run's rows, %v clearing all", step, i, got[i], want[i])
			}
		}
	}
	if sparseRuns != 5 {
		t.Fatalf("%d of 5 one-hot runs went through the sparse product", sparseRuns)
	}
}

// productLoss builds loss = Σ (x·w)² for a batch x of b rows of in inputs and a weight w of out
// columns (random, from rng, when rng is not nil), and loss's gradient with respect to w.
func productLoss(t *testing.T, b, in, out int, rng *rand.Rand) (x, w, loss *G.Node, grads G.Nodes) {
	t.Helper()
	return productLossOf(t, tensor.Float64, b, in, out, rng)
}

// productLossOf is productLoss in dtype dt; rng, when not nil, draws w's values.
func productLossOf(t *testing.T, dt tensor.Dtype, b, in, out int, rng *rand.Rand) (x, w, loss *G.Node, grads G.Nodes) {
	t.Helper()
	g := G.NewGraph()
	x = G.NewMatrix(g, dt, G.WithShape(b, in), G.WithName("x"))
	opts := []G.NodeConsOpt{G.WithShape(in, out), G.WithName("w")}
	if rng != nil {
		opts = append(opts, G.WithValue(denseOf(dt, randomMatrix(rng, in, out, 1), in, out)))
	}
	w = G.NewMatrix(g, dt, opts...)
	y, err := MatMul(x, w)
	if err == nil {
		if y, err = Square(y); err == nil {
			if loss, err = Sum(y); err == nil {
				grads, err = Grad(loss, w)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return x, w, loss, grads
}

// BenchmarkAdamZeroSteps times the replay of 32 owed zero-gradient Adam steps (ε̂, as the
// authors' protocol runs it) over rows of a one-hot layer, one row at a time as a batch's rows
// are settled, through a log of the steps as samplers.Adam keeps it, per weight and step: one
// row 1,024 wide, and sixteen rows 64 wide, each from the same moving weights at every
// iteration (so that every step moves them).
func BenchmarkAdamZeroSteps(b *testing.B) {
	for _, rows := range []struct{ n, width int }{{1, 1024}, {16, 64}} {
		b.Run(fmt.Sprintf("%dx%d", rows.n, rows.width), func(b *testing.B) {
			const steps = 32
			n := rows.n * rows.width
			p0, m0, v0 := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range p0 {
				p0[i], m0[i], v0[i] = 0.1, 1e-3*float32(i%7+1), 1e-6*float32(i%5+1)
			}
			var log AdamSteps[float32]
			for t := range steps {
				log.Append(AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: 1e-3 / float32(t+1), Bc2: 1, Eps: 1e-7, Hat: true})
			}
			benchReplay(b, &log, p0, m0, v0, rows.width)
		})
	}
	// a row 1,024 wide owing 384 steps from a batch's touch (a row a batch of 4 selects about
	// once an epoch): its weights stop moving partway, from where the replay takes only the
	// moments
	b.Run("1x1024-touched", func(b *testing.B) {
		const n, steps = 1024, 384
		rng := rand.New(rand.NewPCG(1, 2))
		p0, m0, v0 := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range p0 {
			g := rng.NormFloat64() * 1e-3
			p0[i], m0[i], v0[i] = float32((2*rng.Float64()-1)*0.017), float32(0.1*g), float32(1e-3*g*g)
		}
		var log AdamSteps[float32]
		for t := range steps {
			tt := float64(t + 100)
			log.Append(AdamCoeffs[float32]{B1c: 0.1, B2: 0.999, B2c: 1e-3, Step: float32(1e-3 * math.Sqrt(1-math.Pow(0.999, tt)) / (1 - math.Pow(0.9, tt))), Bc2: 1, Eps: 1e-7, Hat: true})
		}
		benchReplay(b, &log, p0, m0, v0, n)
	})
}

// benchReplay times the replay of all of log's steps over weights p0, moments m0, v0 (restored
// before each iteration, untimed), in rows of width, and reports the time a weight-step.
func benchReplay(b *testing.B, log *AdamSteps[float32], p0, m0, v0 []float32, width int) {
	n, steps := len(p0), len(log.cs)
	p, m, v := make([]float32, n), make([]float32, n), make([]float32, n)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		copy(p, p0)
		copy(m, m0)
		copy(v, v0)
		b.StartTimer()
		for r := 0; r < n; r += width {
			log.ZeroSteps(p[r:r+width], m[r:r+width], v[r:r+width], 0, steps)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*steps), "ns/weight-step")
}
