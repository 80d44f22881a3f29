package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"

	kern "github.com/hyperflat/hyperflat/graph/internal/sgemm"
	"gorgonia.org/tensor"
)

// refConv computes the three convolution kinds from their definitions, in float64:
// y[n,f,oh,ow] = Σ_{c,kh,kw} x[n,c,oh·SH−PH+kh, ow·SW−PW+kw]·w[f,c,kh,kw] (padding zero),
// dx and dw its adjoints for the output adjoint g.
func refConv(w window, F int, x, filt, g []float64) (y, dx, dw []float64) {
	y = make([]float64, w.N*F*w.OH*w.OW)
	dx = make([]float64, w.N*w.C*w.H*w.W)
	dw = make([]float64, F*w.C*w.KH*w.KW)
	for n := 0; n < w.N; n++ {
		for f := 0; f < F; f++ {
			for oh := 0; oh < w.OH; oh++ {
				for ow := 0; ow < w.OW; ow++ {
					o := ((n*F+f)*w.OH+oh)*w.OW + ow
					for c := 0; c < w.C; c++ {
						for kh := 0; kh < w.KH; kh++ {
							ih := oh*w.SH - w.PH + kh
							if ih < 0 || ih >= w.H {
								continue
							}
							for kw := 0; kw < w.KW; kw++ {
								iw := ow*w.SW - w.PW + kw
								if iw < 0 || iw >= w.W {
									continue
								}
								xi := ((n*w.C+c)*w.H+ih)*w.W + iw
								wi := ((f*w.C+c)*w.KH+kh)*w.KW + kw
								y[o] += x[xi] * filt[wi]
								dx[xi] += g[o] * filt[wi]
								dw[wi] += g[o] * x[xi]
							}
						}
					}
				}
			}
		}
	}
	return y, dx, dw
}

func randSlice(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func asDense[T Float](v []float64, shape tensor.Shape) *tensor.Dense {
	d := make([]T, len(v))
	for i, e := range v {
		d[i] = T(e)
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(d))
}

// TestConvPathsMatchReference checks every convolution kind, on the batched path (image
// blocks, live taps only; with and without the small maps' gather table) and on the
// per-image path, against refConv, in float32 and float64:
// 1×1 and 2×2 maps with padding (dead taps), strides, even kernels with "same" padding, maps
// above convBatchMaxMap, and a batch split into several blocks.
func TestConvPathsMatchReference(t *testing.T) {
	cases := []struct {
		n, c, h, wd, f, k int
		g                 Geometry
	}{
		{5, 6, 1, 1, 7, 3, Geometry{PadH: 1, PadW: 1}},                           // ResNet's last stage: 1 live tap
		{4, 5, 2, 2, 6, 3, Geometry{PadH: 1, PadW: 1}},                           // every tap live, tiny map
		{3, 4, 2, 2, 5, 3, Geometry{StrideH: 2, StrideW: 2, PadH: 1, PadW: 1}},   // 4 live taps
		{3, 2, 5, 4, 3, 2, SamePadding(2, 2)},                                    // even kernel, extra bottom/right
		{2, 3, 7, 6, 4, 3, Geometry{StrideH: 2, StrideW: 1, PadH: 1}},            // mixed strides
		{2, 2, 9, 9, 3, 1, Geometry{StrideH: 2, StrideW: 2}},                     // 1×1 downsample
		{2, 3, 20, 18, 4, 3, Geometry{PadH: 1, PadW: 1}},                         // map above convBatchMaxMap
		{2, 1, 28, 28, 4, 7, Geometry{StrideH: 2, StrideW: 2, PadH: 3, PadW: 3}}, // ResNet stem
		{40, 64, 8, 8, 8, 3, Geometry{PadH: 1, PadW: 1}},                         // several image blocks
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range cases {
		w, err := newWindow(tensor.Shape{tc.n, tc.c, tc.h, tc.wd}, tc.k, tc.k, tc.g, false)
		if err != nil {
			t.Fatal(err)
		}
		x := randSlice(rng, w.N*w.C*w.H*w.W)
		filt := randSlice(rng, tc.f*w.C*w.KH*w.KW)
		g := randSlice(rng, w.N*tc.f*w.OH*w.OW)
		y, dx, dw := refConv(w, tc.f, x, filt, g)
		for _, path := range []struct{ batched, table bool }{{true, true}, {true, false}, {false, false}} {
			batched, table := path.batched, path.table
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				name := fmt.Sprintf("%v f%d batched=%v table=%v %v", w, tc.f, batched, table, dt)
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 2e-5
				}
				for kind, want := range [][]float64{y, dx, dw} {
					var in0, in1 []float64
					var s0, s1 tensor.Shape
					switch convKind(kind) {
					case convFwd:
						in0, in1, s0, s1 = x, filt, w.inShape(), w.filterShape(tc.f)
					case convBackX:
						in0, in1, s0, s1 = g, filt, w.outShape(tc.f), w.filterShape(tc.f)
					default:
						in0, in1, s0, s1 = x, g, w.inShape(), w.outShape(tc.f)
					}
					out := [...]tensor.Shape{w.outShape(tc.f), w.inShape(), w.filterShape(tc.f)}[kind]
					op := &convOp{w: w, f: tc.f, kind: convKind(kind), taps: w.liveTaps(), batched: batched}
					if batched && table {
						op.tab = w.gatherTable(op.taps)
					}
					op.out, op.dt = out, dt
					var got []float64
					if dt == tensor.Float32 {
						v, err := convDo[float32](op, nil, asDense[float32](in0, s0), asDense[float32](in1, s1), nil)
						if err != nil {
							t.Fatal(err)
						}
						got, _ = ToFloat64s(v)
					} else {
						v, err := convDo[float64](op, nil, asDense[float64](in0, s0), asDense[float64](in1, s1), nil)
						if err != nil {
							t.Fatal(err)
						}
						got, _ = ToFloat64s(v)
					}
					scale := 1.0
					for _, e := range want {
						scale = math.Max(scale, math.Abs(e))
					}
					for i := range want {
						if d := math.Abs(got[i] - want[i]); d > tol*scale*10 {
							t.Fatalf("%s kind %s: element %d is %v, want %v", name, convNames[kind], i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestConvShiftSameBits: the batched path gives the same bits with the AVX-512 layout kernels
// (sgemm.ShiftPlan) as with graph's scalar im2col and col2im (gather table or shifted copies),
// for every kind, on ResNet's stride-1 shapes and awkward ones (odd maps, an even kernel with
// extra bottom and right padding, a 5×5 kernel, several image blocks), with NaN, infinities and
// negative zeros among the inputs; and with AVX-512 off (HYPERFLAT_SIMD=avx2) as with it on.
func TestConvShiftSameBits(t *testing.T) {
	if !kern.HasAVX512 {
		t.Skip("this CPU (or its operating system) lacks AVX512F: the AVX-512 layout kernels cannot run here (sgemm's tests check them against their definitions where it can)")
	}
	cases := []struct {
		n, c, h, wd, f, k int
		g                 Geometry
	}{
		{50, 64, 8, 8, 64, 3, Geometry{PadH: 1, PadW: 1}},
		{9, 16, 7, 7, 24, 3, Geometry{PadH: 1, PadW: 1}},
		{12, 32, 4, 4, 16, 3, Geometry{PadH: 1, PadW: 1}},
		{30, 8, 2, 2, 8, 3, Geometry{PadH: 1, PadW: 1}},
		{7, 5, 1, 1, 6, 3, Geometry{PadH: 1, PadW: 1}},
		{3, 3, 5, 3, 5, 2, SamePadding(2, 2)},
		{4, 3, 9, 13, 4, 5, Geometry{PadH: 2, PadW: 2}},
		{40, 64, 8, 8, 8, 3, Geometry{PadH: 1, PadW: 1}},
		{3, 4, 6, 6, 5, 3, Geometry{PadH: 0, PadW: 1}}, // fewer output rows than input rows
	}
	rng := rand.New(rand.NewPCG(8, 1))
	odd := func(n int) []float64 {
		v := randSlice(rng, n)
		for i := range v {
			switch rng.IntN(50) {
			case 0:
				v[i] = math.NaN()
			case 1:
				v[i] = math.Inf(1)
			case 2:
				v[i] = math.Copysign(0, -1)
			}
		}
		return v
	}
	for _, tc := range cases {
		w, err := newWindow(tensor.Shape{tc.n, tc.c, tc.h, tc.wd}, tc.k, tc.k, tc.g, false)
		if err != nil {
			t.Fatal(err)
		}
		x := asDense[float32](odd(w.inShape().TotalSize()), w.inShape())
		filt := asDense[float32](odd(w.filterShape(tc.f).TotalSize()), w.filterShape(tc.f))
		g := asDense[float32](odd(w.outShape(tc.f).TotalSize()), w.outShape(tc.f))
		for kind := convFwd; kind <= convBackW; kind++ {
			in := [...][2]*tensor.Dense{{x, filt}, {g, filt}, {x, g}}[kind]
			op := &convOp{w: w, f: tc.f, kind: kind, taps: w.liveTaps(), batched: true}
			op.plan()
			if op.shift == nil {
				t.Fatalf("%v: no shift plan for a stride-1 convolution as wide as its input", w)
			}
			op.out, op.dt = [...]tensor.Shape{w.outShape(tc.f), w.inShape(), w.filterShape(tc.f)}[kind], tensor.Float32
			run := func() []float32 {
				v, err := convDo[float32](op, nil, in[0], in[1], nil)
				if err != nil {
					t.Fatal(err)
				}
				return v.Data().([]float32)
			}
			got := run()
			was := kern.UseAVX512(false)
			avx2 := run()
			kern.UseAVX512(was)
			op.shift = nil
			want := run()
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(avx2[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v f%d %s: element %d is %v with the AVX-512 layout, %v with AVX-512 off, %v with the scalar layout",
						w, tc.f, convNames[kind], i, got[i], avx2[i], want[i])
				}
			}
		}
	}
}

// TestLiveTaps: taps that only ever read padding are the ones dropped.
func TestLiveTaps(t *testing.T) {
	for _, tc := range []struct {
		h, k int
		g    Geometry
		want int
	}{
		{1, 3, Geometry{PadH: 1, PadW: 1}, 1},
		{2, 3, Geometry{PadH: 1, PadW: 1}, 9},
		{2, 3, Geometry{StrideH: 2, StrideW: 2, PadH: 1, PadW: 1}, 4},
		{7, 3, Geometry{PadH: 1, PadW: 1}, 9},
	} {
		w, err := newWindow(tensor.Shape{1, 1, tc.h, tc.h}, tc.k, tc.k, tc.g, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(w.liveTaps()); got != tc.want {
			t.Errorf("%v: %d live taps, want %d", w, got, tc.want)
		}
	}
}

// BenchmarkConvKinds times each convolution kind on ResNet-18's 3×3 shapes at batch 50 (8×8: the CIFAR net's first stage)
// (HYPERFLAT_CONV=image for the per-image path).
func BenchmarkConvKinds(b *testing.B) {
	for _, s := range [][4]int{{64, 8, 8, 64}, {64, 7, 7, 64}, {128, 4, 4, 128}, {256, 2, 2, 256}, {512, 1, 1, 512}} {
		benchConvKinds(b, "", tensor.Shape{50, s[0], s[1], s[2]}, s[3], 3, Geometry{PadH: 1, PadW: 1})
	}
}

// BenchmarkConvStride2 times each convolution kind on the CIFAR ResNet-18's strided shapes at
// batch 50: the 7×7 stem on 3×32×32, the stages' first 3×3 and their 1×1 downsamples.
func BenchmarkConvStride2(b *testing.B) {
	benchConvKinds(b, "k7s2/", tensor.Shape{50, 3, 32, 32}, 64, 7, Geometry{StrideH: 2, StrideW: 2, PadH: 3, PadW: 3})
	for _, s := range [][4]int{{64, 8, 8, 128}, {128, 4, 4, 256}, {256, 2, 2, 512}} {
		benchConvKinds(b, "k3s2/", tensor.Shape{50, s[0], s[1], s[2]}, s[3], 3, Geometry{StrideH: 2, StrideW: 2, PadH: 1, PadW: 1})
		benchConvKinds(b, "k1s2/", tensor.Shape{50, s[0], s[1], s[2]}, s[3], 1, Geometry{StrideH: 2, StrideW: 2})
	}
}

func benchConvKinds(b *testing.B, tag string, in tensor.Shape, F, k int, g Geometry) {
	w, err := newWindow(in, k, k, g, false)
	if err != nil {
		b.Fatal(err)
	}
	s := [3]int{in[1], in[2], in[3]}
	rng := rand.New(rand.NewPCG(1, 1))
	x := asDense[float32](randSlice(rng, w.inShape().TotalSize()), w.inShape())
	filt := asDense[float32](randSlice(rng, w.filterShape(F).TotalSize()), w.filterShape(F))
	dy := asDense[float32](randSlice(rng, w.outShape(F).TotalSize()), w.outShape(F))
	for kind := convFwd; kind <= convBackW; kind++ {
		in := [...][2]*tensor.Dense{{x, filt}, {dy, filt}, {x, dy}}[kind]
		out := [...]tensor.Shape{w.outShape(F), w.inShape(), w.filterShape(F)}[kind]
		op := &convOp{w: w, f: F, kind: kind, taps: w.liveTaps(), batched: w.useBatched() && convPath != "image"}
		op.plan()
		op.out, op.dt = out, tensor.Float32
		dst := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(out...))
		b.Run(fmt.Sprintf("%s/%s%dx%dx%d", convNames[kind], tag, s[0], s[1], s[2]), func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuSecondsNow()
			for i := 0; i < b.N; i++ {
				if _, err := convDo[float32](op, dst, in[0], in[1], nil); err != nil {
					b.Fatal(err)
				}
			}
			flops := 2.0 * float64(w.N*F*w.OH*w.OW*w.C*len(op.taps))
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric((cpuSecondsNow()-c0)/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

// cpuSecondsNow is the process's user and system CPU time: under load from other processes a
// less noisy measure than wall time.
func cpuSecondsNow() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// TestConvDeterministicAcrossCores: the batched path's results are bit-identical whether its
// blocks and products run on one core or several (Concurrent takes cores away).
func TestConvDeterministicAcrossCores(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, s := range [][5]int{{50, 64, 7, 7, 64}, {50, 256, 2, 2, 128}, {50, 128, 1, 1, 256}} {
		w, err := newWindow(tensor.Shape{s[0], s[1], s[2], s[3]}, 3, 3, Geometry{PadH: 1, PadW: 1}, false)
		if err != nil {
			t.Fatal(err)
		}
		F := s[4]
		x := asDense[float32](randSlice(rng, w.inShape().TotalSize()), w.inShape())
		filt := asDense[float32](randSlice(rng, w.filterShape(F).TotalSize()), w.filterShape(F))
		g := asDense[float32](randSlice(rng, w.outShape(F).TotalSize()), w.outShape(F))
		for kind := convFwd; kind <= convBackW; kind++ {
			in := [...][2]*tensor.Dense{{x, filt}, {g, filt}, {x, g}}[kind]
			op := &convOp{w: w, f: F, kind: kind, taps: w.liveTaps(), batched: true}
			op.plan()
			op.out, op.dt = [...]tensor.Shape{w.outShape(F), w.inShape(), w.filterShape(F)}[kind], tensor.Float32
			run := func() []float32 {
				v, err := convDo[float32](op, nil, in[0], in[1], nil)
				if err != nil {
					t.Fatal(err)
				}
				return v.Data().([]float32)
			}
			all := run()
			done := Concurrent(64) // every kernel on the calling goroutine
			one := run()
			done()
			for i := range all {
				if math.Float32bits(all[i]) != math.Float32bits(one[i]) {
					t.Fatalf("%v %s: element %d is %v on all cores, %v on one", w, convNames[kind], i, all[i], one[i])
				}
			}
		}
	}
}

// TestGatherScatterTaps: gatherTaps and scatterTaps against their definitions, on every
// subset of live taps of kernels of 1 to 9 taps (one tap, all, and random ones between), and
// row counts around scatterTaps' blocks.
func TestGatherScatterTaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for kk := 1; kk <= 9; kk++ {
		for trial := 0; trial < 12; trial++ {
			var taps []int
			for k := 0; k < kk; k++ {
				if trial == 0 && k == kk/2 || trial == 1 || trial > 1 && rng.IntN(2) == 0 {
					taps = append(taps, k)
				}
			}
			if len(taps) == 0 {
				taps = []int{rng.IntN(kk)}
			}
			L := len(taps)
			for _, rows := range []int{0, 1, 7, scatterTapRows - 1, scatterTapRows, scatterTapRows + 3, 2*scatterTapRows + 1} {
				src := f32Slice(randSlice(rng, rows*kk))
				got, want := make([]float32, rows*L), make([]float32, rows*L)
				for r := 0; r < rows; r++ {
					for t, k := range taps {
						want[r*L+t] = src[r*kk+k]
					}
				}
				gatherTaps(got, src, kk, taps)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("gather kk=%d taps=%v rows=%d: element %d %v, want %v", kk, taps, rows, i, got[i], want[i])
					}
				}
				back := f32Slice(randSlice(rng, rows*kk)) // stale values scatterTaps must overwrite
				scatterTaps(back, got, kk, taps)
				for r := 0; r < rows; r++ {
					for k := 0; k < kk; k++ {
						w := float32(0)
						for t, q := range taps {
							if q == k {
								w = got[r*L+t]
							}
						}
						if g := back[r*kk+k]; math.Float32bits(g) != math.Float32bits(w) {
							t.Fatalf("scatter kk=%d taps=%v rows=%d: row %d tap %d %v, want %v", kk, taps, rows, r, k, g, w)
						}
					}
				}
			}
		}
	}
}

func f32Slice(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, e := range x {
		y[i] = float32(e)
	}
	return y
}

// BenchmarkPoolCIFAR times the CIFAR ResNet-18's max-pool (3×3, stride 2, padding 1 over
// 50×64×16×16) forward (argmax, gather) and backward (scatter).
func BenchmarkPoolCIFAR(b *testing.B) {
	w, err := newWindow(tensor.Shape{50, 64, 16, 16}, 3, 3, Geometry{StrideH: 2, StrideW: 2, PadH: 1, PadW: 1}, true)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x := asDense[float32](randSlice(rng, w.inShape().TotalSize()), w.inShape())
	arg := &poolOp{base: base{dt: tensor.Float32, out: w.poolShape()}, w: w, kind: poolArgmax}
	idx, err := poolArgmaxDo[float32](arg, nil, x)
	if err != nil {
		b.Fatal(err)
	}
	g := asDense[float32](randSlice(rng, w.poolShape().TotalSize()), w.poolShape())
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"argmax", func() error { _, err := poolArgmaxDo[float32](arg, idx, x); return err }},
		{"gather", func() error {
			op := &poolOp{base: base{dt: tensor.Float32, out: w.poolShape()}, w: w, kind: poolGatherK}
			_, err := poolMoveDo[float32](op, g, idx, x)
			return err
		}},
		{"scatter", func() error {
			op := &poolOp{base: base{dt: tensor.Float32, out: w.inShape()}, w: w, kind: poolScatterK}
			_, err := poolMoveDo[float32](op, x, idx, g)
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			c0 := cpuSecondsNow()
			for i := 0; i < b.N; i++ {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSecondsNow()-c0)/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

// TestIm2colTapVector compares the gathering layout of strided taps (vec.Im2colTapF32) with
// the scalar loop, bit for bit, on strides 2–3, kernels 1–7, padding up to 3 and maps whose
// output rows are 8 to 20 wide, through the batched path's column blocks at an offset, with
// NaNs, infinities, signed zeros and subnormals among the pixels and NaN in the workspace
// (every element must be written).
func TestIm2colTapVector(t *testing.T) {
	if !vecAvailable() {
		t.Skip("this CPU lacks AVX2/FMA: no vector layout to compare")
	}
	rng := rand.New(rand.NewPCG(5, 53))
	for tried := 0; tried < 300; {
		k, s, p := 1+rng.IntN(7), 2+rng.IntN(2), rng.IntN(4)
		h, wd := 1+rng.IntN(40), 14+rng.IntN(30)
		w, err := newWindow(tensor.Shape{1, 1 + rng.IntN(3), h, wd}, k, 1+rng.IntN(7),
			Geometry{StrideH: 1 + rng.IntN(3), StrideW: s, PadH: p, PadW: rng.IntN(4)}, false)
		if err != nil || w.OW < 8 {
			continue
		}
		tried++
		img := imageWithSpecials(rng, w.C*w.H*w.W)
		taps := w.liveTaps()
		np := w.OH * w.OW
		col0 := rng.IntN(3) * np
		ld := col0 + np + rng.IntN(5)
		vectorMatchesScalar(t, w, w.C*len(taps), ld, func(cols []float32) { im2colTaps(w, taps, img, cols, ld, col0) })
	}
}

// imageWithSpecials is n normal pixels with one in twenty a NaN, an infinity, −0 or a subnormal.
func imageWithSpecials(rng *rand.Rand, n int) []float32 {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32}
	img := make([]float32, n)
	for i := range img {
		img[i] = float32(rng.NormFloat64())
		if rng.IntN(20) == 0 {
			img[i] = specials[rng.IntN(len(specials))]
		}
	}
	return img
}

// vectorMatchesScalar fills rows×ld columns, NaN first so that every element must be
// written, with the vector kernels and with the scalar loops, and fails on the first element
// whose bits differ.
func vectorMatchesScalar(t *testing.T, w window, rows, ld int, fill func(cols []float32)) {
	t.Helper()
	run := func(vector bool) []float32 {
		cols := make([]float32, rows*ld)
		for i := range cols {
			cols[i] = float32(math.NaN())
		}
		haveVec = vector
		defer func() { haveVec = vecAvailable() }()
		fill(cols)
		return cols
	}
	got, want := run(true), run(false)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%v: element %d (row %d, column %d) is %v, want %v", w, i, i/ld, i%ld, got[i], want[i])
		}
	}
}

// TestIm2colTableVector compares the gathering layout through a table (vec.Im2colTableF32)
// with the scalar loop, bit for bit, on small output maps (1–16 positions, ResNet's strided
// 4×4, 2×2 and 1×1 ones among them) of kernels 1–5, strides 1–3 and padding up to 2, columns at
// an offset, with specials among the pixels and NaN in the workspace.
func TestIm2colTableVector(t *testing.T) {
	if !vecAvailable() {
		t.Skip("this CPU lacks AVX2/FMA: no vector layout to compare")
	}
	rng := rand.New(rand.NewPCG(5, 54))
	for tried := 0; tried < 300; {
		k := 1 + rng.IntN(5)
		w, err := newWindow(tensor.Shape{1, 1 + rng.IntN(20), 1 + rng.IntN(9), 1 + rng.IntN(9)}, k, 1+rng.IntN(5),
			Geometry{StrideH: 1 + rng.IntN(3), StrideW: 1 + rng.IntN(3), PadH: rng.IntN(3), PadW: rng.IntN(3)}, false)
		if err != nil {
			continue
		}
		taps := w.liveTaps()
		tab := w.gatherTable(taps)
		if tab == nil || len(taps) == 0 {
			continue
		}
		tried++
		img := imageWithSpecials(rng, w.C*w.H*w.W)
		np := w.OH * w.OW
		col0 := rng.IntN(3) * np
		ld := col0 + np + rng.IntN(5)
		vectorMatchesScalar(t, w, w.C*len(taps), ld, func(cols []float32) { im2colTable(w, tab, len(taps), img, cols, ld, col0) })
	}
}
