package graph

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestFloat32MatchesFloat64 runs the benchmark models' gradients and Hessian-vector products
// in float32 and float64 on the same data: the float32 paths (AVX2 kernels, fused elementwise
// kernels, parallel splits) must agree with float64 to float32 precision.
func TestFloat32MatchesFloat64(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(tensor.Dtype) benchModel
	}{{"mlp", benchMLP}, {"cnn", benchCNN}} {
		var got [2][]float64
		for d, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			m := tc.build(dt)
			gs, err := Grad(m.cost, m.params...)
			if err != nil {
				t.Fatal(err)
			}
			vs := make([]*G.Node, len(m.params))
			for i, p := range m.params {
				vs[i] = G.NewTensor(m.g, dt, p.Dims(), G.WithShape(p.Shape()...), G.WithValue(m.params[i].Value()))
			}
			hv, err := HVP(m.cost, m.params, vs)
			if err != nil {
				t.Fatal(err)
			}
			outs := append(append([]*G.Node{m.cost}, gs...), hv...)
			p, err := Compile(outs...)
			if err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 2; r++ { // the second run reuses every buffer
				if err := p.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if got[d], err = p.Flatten(outs...); err != nil {
				t.Fatal(err)
			}
		}
		worst, scale := 0.0, 0.0
		for i := range got[0] {
			worst = max(worst, math.Abs(got[0][i]-got[1][i]))
			scale = max(scale, math.Abs(got[1][i]))
		}
		if worst > 1e-4*scale {
			t.Errorf("%s: float32 and float64 differ by %g (largest value %g)", tc.name, worst, scale)
		}
	}
}

// TestFusionMatchesUnfused computes the benchmark models' gradients and HVPs with and without
// elementwise fusion (broadcast operands, multi-consumer recomputation, fused sums) and
// requires the same values, and reads fused-away nodes through Value.
func TestFusionMatchesUnfused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(tensor.Dtype) benchModel
	}{{"mlp", benchMLP}, {"cnn", benchCNN}} {
		var got [2][]float64
		var fusedAway int
		for f, nofuse := range []string{"", "1"} {
			setSwitch(t, "HYPERFLAT_NOFUSE", nofuse)
			m := tc.build(tensor.Float64)
			gs, err := Grad(m.cost, m.params...)
			if err != nil {
				t.Fatal(err)
			}
			vs := make([]*G.Node, len(m.params))
			for i, p := range m.params {
				vs[i] = G.NewTensor(m.g, tensor.Float64, p.Dims(), G.WithShape(p.Shape()...), G.WithValue(m.params[i].Value()))
			}
			hv, err := HVP(m.cost, m.params, vs)
			if err != nil {
				t.Fatal(err)
			}
			pen, err := SquaredNorm(m.params...)
			if err != nil {
				t.Fatal(err)
			}
			outs := append(append([]*G.Node{m.cost, pen}, gs...), hv...)
			p, err := Compile(outs...)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got[f], err = p.Flatten(outs...); err != nil {
				t.Fatal(err)
			}
			// every node, fused away or not, can be read
			for i, n := range p.nodes {
				if p.inlined != nil && p.inlined[i] {
					fusedAway++
				}
				v, err := p.Float64s(n)
				if err != nil {
					t.Fatal(err)
				}
				got[f] = append(got[f], v...)
			}
		}
		if fusedAway == 0 {
			t.Errorf("%s: nothing was fused", tc.name)
		}
		if len(got[0]) != len(got[1]) {
			t.Fatalf("%s: %d and %d values", tc.name, len(got[0]), len(got[1]))
		}
		for i := range got[0] {
			if d := math.Abs(got[0][i] - got[1][i]); d > 1e-9*(1+math.Abs(got[1][i])) {
				t.Fatalf("%s: value %d fused %v, unfused %v", tc.name, i, got[0][i], got[1][i])
			}
		}
	}
}

// TestFusionExpandSameBits: a float32 batch-norm-and-ReLU step and its gradients on maps whose
// channels' runs are short (4×4, 7×7, 16 rows of 3, 2×2, 1×1) give the same bits with fused
// kernels that expand their broadcast operands into registers (and fuse runs shorter than
// fuseRunMin) as with kernels that compute one run at a time and leave those runs unfused;
// and kernels do expand.
func TestFusionExpandSameBits(t *testing.T) {
	blk := fuseBlockEW
	defer func() {
		fuseExpandOn, fuseShortRuns, fuseChannelsOn, fuseChannelSums, fuseBlockEW = true, true, true, true, blk
	}()
	for _, s := range [][4]int{{20, 5, 4, 4}, {3, 7, 7, 7}, {8, 3, 16, 3}, {64, 8, 2, 2}, {128, 16, 1, 1}} {
		var got [6][]float64
		expanded, channels, planes := 0, 0, 0
		for i, on := range [][5]bool{{true, true, true, true, true}, {true, false, true, true, true}, {false, false, true, true, true},
			{true, true, false, true, true}, {true, true, true, false, true}, {true, true, true, true, false}} {
			fuseExpandOn, fuseShortRuns, fuseChannelsOn, fuseChannelSums = on[0], on[1], on[2], on[3]
			fuseBlockEW = blk
			if !on[4] {
				fuseBlockEW = fuseBlock
			}
			g := G.NewGraph()
			rng := rand.New(rand.NewPCG(uint64(s[1]), 7))
			x := G.NewTensor(g, tensor.Float32, 4, G.WithShape(s[:]...), G.WithName("x"),
				G.WithValue(asDense[float32](randSlice(rng, s[0]*s[1]*s[2]*s[3]), tensor.Shape(s[:]))))
			gamma := G.NewVector(g, tensor.Float32, G.WithShape(s[1]), G.WithName("gamma"), G.WithValue(asDense[float32](randSlice(rng, s[1]), tensor.Shape{s[1]})))
			beta := G.NewVector(g, tensor.Float32, G.WithShape(s[1]), G.WithName("beta"), G.WithValue(asDense[float32](randSlice(rng, s[1]), tensor.Shape{s[1]})))
			y, _, _, err := BatchNorm(x, gamma, beta, BatchNormConfig{Training: true})
			if err != nil {
				t.Fatal(err)
			}
			if y, err = ReLU(y); err != nil {
				t.Fatal(err)
			}
			sq, err := Square(y)
			if err != nil {
				t.Fatal(err)
			}
			cost, err := Sum(sq)
			if err != nil {
				t.Fatal(err)
			}
			gs, err := Grad(cost, x, gamma, beta)
			if err != nil {
				t.Fatal(err)
			}
			// and a sum whose input has an operand broadcast along the runs (fused into the sum
			// where allowed: it would change the order of the sum)
			gm, err := Reshape(gamma, 1, s[1], 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			xg, err := Mul(x, gm)
			if err != nil {
				t.Fatal(err)
			}
			extra, err := Sum(xg)
			if err != nil {
				t.Fatal(err)
			}
			outs := append([]*G.Node{cost, y, extra}, gs...)
			p, err := Compile(outs...)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range p.fused {
				if k != nil && k.expand != nil && i == 0 {
					expanded++
				}
				if k != nil && i == 0 && slices.Contains(k.channel, true) {
					channels++
				}
				if k != nil && i == 0 && k.planes != nil {
					planes++
				}
			}
			if err := p.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got[i], err = p.Flatten(outs...); err != nil {
				t.Fatal(err)
			}
		}
		if expanded == 0 || channels == 0 || planes == 0 {
			t.Fatalf("%v: no kernel expanded its broadcast operands (%d), read a per-channel broadcast's values (%d) or summed per channel (%d)", s, expanded, channels, planes)
		}
		for i := range got[0] {
			for j := 1; j < len(got); j++ {
				if math.Float32bits(float32(got[0][i])) != math.Float32bits(float32(got[j][i])) {
					t.Fatalf("%v: value %d is %v expanded with short runs fused, %v (%s)", s, i, got[0][i], got[j][i],
						[]string{"", "short runs unfused", "run by run, short runs unfused", "per-channel broadcasts materialized", "per-channel sums unfused",
							"blocks of fuseBlock"}[j])
				}
			}
		}
	}
}

// TestSumPerChannelSameBits: the per-channel sum (a batch norm's statistics) gives the bits of
// the general walk, in float32 and float64, on maps of 1 to 256 pixels (those of a multiple of
// 8 through vec.SumPlanesF32 in float32), with negative zeros, infinities, subnormals and NaN
// among the values.
func TestSumPerChannelSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 9))
	for _, s := range [][4]int{{5, 3, 1, 1}, {4, 6, 1, 2}, {3, 5, 2, 2}, {2, 4, 1, 7}, {3, 2, 2, 4}, {2, 3, 3, 3}, {2, 2, 4, 4}, {2, 3, 7, 7}, {3, 5, 4, 6}, {2, 3, 4, 8}, {2, 4, 4, 10}, {3, 3, 8, 8}, {2, 2, 9, 8}, {1, 3, 16, 16}, {50, 64, 8, 8}, {50, 130, 2, 2}} {
		src := tensor.Shape(s[:])
		keep := tensor.Shape{1, s[1], 1, 1}
		if !perChannel(keep, src) {
			t.Fatalf("%v → %v is not per channel", src, keep)
		}
		for _, inf := range []bool{true, false} { // with infinities and a NaN, and with finite values only
			sumPerChannelCase(t, rng, src, keep, inf)
		}
	}
}

// sumPerChannelCase is one case of TestSumPerChannelSameBits.
func sumPerChannelCase(t *testing.T, rng *rand.Rand, src, keep tensor.Shape, inf bool) {
	t.Helper()
	x := randSlice(rng, src.TotalSize())
	for i := range x {
		switch rng.IntN(12) {
		case 0:
			x[i] = math.Copysign(0, -1)
		case 1:
			if inf {
				x[i] = math.Inf(1 - 2*rng.IntN(2))
			}
		case 2:
			x[i] = 0
		case 3:
			x[i] = 0x1p-140 * float64(1+rng.IntN(100)) // subnormal in float32
		}
	}
	if inf {
		x[rng.IntN(len(x))] = math.NaN()
	}
	check := func(name string, got, want []float64) {
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("%v %s: channel %d is %v, the walk gives %v", src, name, i, got[i], want[i])
			}
		}
	}
	g64, w64 := make([]float64, src[1]), make([]float64, src[1])
	sumPerChannel(x, g64, src[0], src[1], src[2]*src[3])
	sumToWalk(keep, src, x, w64)
	check("float64", g64, w64)
	x32 := make([]float32, len(x))
	for i, e := range x {
		x32[i] = float32(e)
	}
	g32, w32 := make([]float32, src[1]), make([]float32, src[1])
	sumPerChannel(x32, g32, src[0], src[1], src[2]*src[3])
	sumToWalk(keep, src, x32, w32)
	for i := range w32 {
		if math.Float32bits(g32[i]) != math.Float32bits(w32[i]) {
			t.Fatalf("%v float32: channel %d is %v, the walk gives %v", src, i, g32[i], w32[i])
		}
	}
}

// TestBinaryPerChannelSameBits: a binary op with one operand per channel (1×C×1×1, either
// side) on an N×C×H×W output gives, through binaryPerChannel, the bits the walk gives, for
// every kind and both element types, on 1×1, 2×2 and odd maps (runs under and over a vector
// block) with zeros of both signs, infinities, subnormals and NaNs in both operands.
func TestBinaryPerChannelSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 3))
	awkward := func(v []float64) {
		for i := range v {
			switch rng.IntN(10) {
			case 0:
				v[i] = math.Copysign(0, -1)
			case 1:
				v[i] = math.Inf(1 - 2*rng.IntN(2))
			case 2:
				v[i] = 0x1p-140 * float64(1+rng.IntN(100)) // subnormal in float32
			case 3:
				v[i] = math.NaN()
			}
		}
	}
	for _, s := range [][4]int{{5, 3, 1, 1}, {1, 40, 2, 1}, {3, 5, 2, 2}, {2, 4, 1, 7}, {2, 3, 3, 5}, {2, 2, 5, 5}, {70, 9, 2, 2}} {
		out := tensor.Shape(s[:])
		full, ch := randSlice(rng, out.TotalSize()), randSlice(rng, s[1])
		awkward(full)
		awkward(ch)
		for kind := binaryKind(0); kind < numBinary; kind++ {
			for which := 1; which <= 2; which++ {
				checkPerChannel[float64](t, kind, which, out, full, ch)
				checkPerChannel[float32](t, kind, which, out, full, ch)
			}
		}
	}
}

// checkPerChannel runs one per-channel binary op both ways (see TestBinaryPerChannelSameBits).
func checkPerChannel[T Float](t *testing.T, kind binaryKind, which int, out tensor.Shape, full, ch []float64) {
	t.Helper()
	dt := tensor.Float64
	if _, ok := any(T(0)).(float32); ok {
		dt = tensor.Float32
	}
	g := G.NewGraph()
	fv, cv := asDense[T](full, out), asDense[T](ch, tensor.Shape{1, out[1], 1, 1})
	fn := G.NewTensor(g, dt, 4, G.WithShape(out...), G.WithName("full"), G.WithValue(fv))
	cn := G.NewTensor(g, dt, 4, G.WithShape(1, out[1], 1, 1), G.WithName("ch"), G.WithValue(cv))
	a, b, av, bv := cn, fn, G.Value(cv), G.Value(fv)
	if which == 2 {
		a, b, av, bv = fn, cn, fv, cv
	}
	y, err := binary(kind, a, b)
	if err != nil {
		t.Fatal(err)
	}
	op := y.Op().(*binaryOp)
	if op.chanOperand != which {
		t.Fatalf("%v, operand %d per channel: chanOperand %d", out, which, op.chanOperand)
	}
	got, err := binaryDo[T](op, nil, av, bv)
	if err != nil {
		t.Fatal(err)
	}
	walked := *op
	walked.chanOperand = 0 // the general walk
	want, err := binaryDo[T](&walked, nil, av, bv)
	if err != nil {
		t.Fatal(err)
	}
	gs, ws := got.Data().([]T), want.Data().([]T)
	for i := range ws {
		if math.Float64bits(float64(gs[i])) != math.Float64bits(float64(ws[i])) && !(gs[i] != gs[i] && ws[i] != ws[i]) {
			t.Fatalf("%v %v %s, operand %d per channel: element %d is %v, the walk gives %v", dt, out, op, which, i, gs[i], ws[i])
		}
	}
}

// TestBroadcastPerChannel: a channel's value repeated over its planes (the per-channel path
// of BroadcastTo), against the definition, and the same through the general walk.
func TestBroadcastPerChannel(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, s := range [][4]int{{3, 5, 1, 1}, {1, 6, 2, 2}, {2, 4, 2, 2}, {2, 3, 1, 7}, {2, 2, 7, 7}} {
		out := tensor.Shape(s[:])
		keep := tensor.Shape{1, s[1], 1, 1}
		x := randSlice(rng, s[1])
		x[0] = math.Copysign(0, -1)
		op := &broadcastToOp{keep: keep}
		op.out = out
		v, err := broadcastToDo[float64](op, nil, tensor.New(tensor.WithShape(keep...), tensor.WithBacking(x)))
		if err != nil {
			t.Fatal(err)
		}
		got := v.Data().([]float64)
		for i, e := range got {
			want := x[(i/(s[2]*s[3]))%s[1]]
			if math.Float64bits(e) != math.Float64bits(want) {
				t.Fatalf("%v: element %d is %v, want %v", out, i, e, want)
			}
		}
		// the walk, as for any other broadcast: a 5-D shape with the same elements
		op5 := &broadcastToOp{keep: tensor.Shape{1, s[1], 1, 1, 1}}
		op5.out = tensor.Shape{s[0], s[1], s[2], s[3], 1}
		v5, err := broadcastToDo[float64](op5, nil, tensor.New(tensor.WithShape(op5.keep...), tensor.WithBacking(x)))
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range v5.Data().([]float64) {
			if math.Float64bits(e) != math.Float64bits(got[i]) {
				t.Fatalf("%v: element %d is %v per channel, %v through the walk", out, i, got[i], e)
			}
		}
	}
}
