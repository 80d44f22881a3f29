package graph

import (
	"math"
	"unsafe"

	"github.com/hyperflat/hyperflat/graph/internal/vec"
)

// Kernels for the optimizers in package samplers and the divergence checks in package train:
// Go does not vectorize their per-element loops, and on a small model (the OpenML MLP's
// 280k weights) the scalar Adam update and the non-finite scans around it cost more than the
// step's matrix products. The vector paths reproduce the scalar loops here bit for bit, and
// large tensors are split across cores (the updates are elementwise, so the split changes no
// result).

// optimGrain is the number of elements worth a goroutine of their own in a memory-bound pass.
const optimGrain = 1 << 15

// AdamCoeffs are the per-step constants of an Adam update (see AdamUpdate).
// (vec.AdamZeroStepsF32 reads the float32 fields B1c, B2, Step and Eps at their offsets, which
// heldLayout checks.)
type AdamCoeffs[T Float] struct {
	B1c  T // 1 − β1
	B2   T // β2
	B2c  T // 1 − β2
	Step T // lr / (1 − β1ᵗ); with Hat, lr·√(1 − β2ᵗ) / (1 − β1ᵗ)
	Bc2  T // √(1 − β2ᵗ) (unused with Hat)
	Eps  T
	WD   T // coupled L2 weight decay, 0 for none
	// Hat adds Eps to the uncorrected √v, both bias corrections being folded into Step
	// (Kingma & Ba's ε̂ form, Keras's and scikit-learn's), instead of to √v / Bc2
	// (PyTorch's).
	Hat bool
}

// AdamUpdate applies one Adam step in place, element by element,
//
//	g′ = g + WD·p (g when WD is 0),  m ← m + B1c·(g′ − m),  v ← B2·v + (B2c·g′)·g′,
//	p ← p − Step·(m / (√v / Bc2 + Eps))    or, with Hat,    p ← p − (Step·m) / (√v + Eps),
//
// and reports whether any updated p is NaN or infinite, so that the caller's divergence check
// needs no pass of its own. p, g, m and v have one length.
func AdamUpdate[T Float](p, g, m, v []T, c AdamCoeffs[T]) (nonFinite bool) {
	n := len(p)
	g, m, v = g[:n], m[:n], v[:n]
	if n < 2*optimGrain {
		return adamRange(p, g, m, v, c) // no closure: this runs for every run of rows, every step
	}
	return inChunks(n, func(a, b int) bool { return adamRange(p[a:b], g[a:b], m[a:b], v[a:b], c) })
}

// AdamUpdateRows is AdamUpdate for a gradient known to be zero outside rows, indices in
// increasing order of runs of width elements (graph.Program.NonzeroRows): it reads g only in
// those rows, and updates the others with a gradient of zeros, to the bits AdamUpdate gives
// them. (With a gradient of zeros Adam still moves a weight, by its momentum.) A layer behind
// one-hot inputs has most of its rows outside any one batch, and not reading their gradient
// saves a seventh of the update's memory traffic.
func AdamUpdateRows[T Float](p, g, m, v []T, width int, rows []int32, c AdamCoeffs[T]) (nonFinite bool) {
	n := len(p)
	g, m, v = g[:n], m[:n], v[:n]
	gap := 0 // where the rows without terms since the last run of rows began
	rowRuns(rows, func(r0, r1 int) bool {
		a, b := r0*width, r1*width
		nonFinite = adamZeroGrad(p[gap:a], m[gap:a], v[gap:a], c) || nonFinite
		nonFinite = AdamUpdate(p[a:b], g[a:b], m[a:b], v[a:b], c) || nonFinite
		gap = b
		return true
	})
	return adamZeroGrad(p[gap:], m[gap:], v[gap:], c) || nonFinite
}

// adamZeroGrad is AdamUpdate with a gradient of zeros, read from a small block that stays in
// cache.
func adamZeroGrad[T Float](p, m, v []T, c AdamCoeffs[T]) bool {
	zeros := zeroGrad[T]()
	if len(p) < 2*optimGrain {
		return adamZeroRange(p, m, v, zeros, c)
	}
	return inChunks(len(p), func(a, b int) bool { return adamZeroRange(p[a:b], m[a:b], v[a:b], zeros, c) })
}

// adamZeroRange is adamZeroGrad on one goroutine, zeros a block of them.
func adamZeroRange[T Float](p, m, v, zeros []T, c AdamCoeffs[T]) bool {
	bad := false
	for a := 0; a < len(p); a += len(zeros) {
		e := min(len(p), a+len(zeros))
		bad = adamRange(p[a:e], zeros[:e-a], m[a:e], v[a:e], c) || bad
	}
	return bad
}

// AdamZeroSteps applies len(cs) Adam steps with a gradient of zeros to p, m and v, the
// step with cs[k] after the one with cs[k−1], to the bits that many AdamUpdate calls with a
// zero gradient give, and reports whether any p it wrote, at any step, is NaN or infinite
// (one that is stays so, or turns NaN, at later steps). It works through
// blocks that stay in the core's first-level cache, taking each through every step before the
// next, so that k deferred steps of a row cost one pass over memory rather than k
// (samplers.Adam's deferred updates of rows no batch has read).
func AdamZeroSteps[T Float](p, m, v []T, cs []AdamCoeffs[T]) (nonFinite bool) {
	n := len(p)
	m, v = m[:n], v[:n]
	if len(cs) == 0 {
		return false
	}
	return adamZeroStepsPlanned(p, m, v, cs, planZeroSteps(cs))
}

func adamZeroStepsPlanned[T Float](p, m, v []T, cs []AdamCoeffs[T], plan zeroStepsPlan) bool {
	n := len(p)
	if n < 2*optimGrain {
		return adamZeroSteps(p, m, v, cs, plan)
	}
	return inChunks(n, func(a, b int) bool { return adamZeroSteps(p[a:b], m[a:b], v[a:b], cs, plan) })
}

// AdamSteps is a log of Adam steps' constants whose runs of steps AdamZeroSteps-style replays
// take without a pass over them first (samplers.Adam's deferred rows replay the log's last
// steps, each row from where it was left): it keeps what the replay's plan needs of every
// step logged, and a run's plan follows from that in a few operations. The zero value is an
// empty log.
type AdamSteps[T Float] struct {
	cs []AdamCoeffs[T]
	// of every step logged: whether each has the property planZeroSteps asks of all of a
	// run's steps; the largest step size and the least ε; β2, and whether it is one constant
	skip, hat, bounded, decays, sameB2 bool
	maxStep, minEps, b2                T
	// b2Powers[j] is β2 to the j, while β2 is one constant (a product of j factors: its
	// rounding, j·2⁻⁵³ at most, is far inside stillBounds's margin)
	b2Powers []float64
}

// Append logs the constants of the next step.
func (s *AdamSteps[T]) Append(c AdamCoeffs[T]) {
	if len(s.cs) == 0 {
		s.start(c.B2)
	}
	s.cs = append(s.cs, c)
	s.fold(&c)
	if s.sameB2 {
		if len(s.b2Powers) == 0 {
			s.b2Powers = append(s.b2Powers, 1)
		}
		s.b2Powers = append(s.b2Powers, s.b2Powers[len(s.b2Powers)-1]*float64(c.B2))
	}
}

// start sets what the log keeps of its steps to that of no steps, with β2 b2 to come.
func (s *AdamSteps[T]) start(b2 T) {
	s.skip, s.hat, s.bounded, s.decays, s.sameB2 = true, true, true, true, true
	s.maxStep, s.minEps, s.b2 = 0, T(math.Inf(1)), b2
}

// fold adds c to what the log keeps of its steps.
func (s *AdamSteps[T]) fold(c *AdamCoeffs[T]) {
	finite := isFinite(c.B1c) && isFinite(c.B2) && isFinite(c.B2c) && isFinite(c.Step) && isFinite(c.Eps)
	s.skip = s.skip && finite && c.WD == 0 && c.Eps > 0 && (c.Hat || c.Bc2 > 0)
	s.hat = s.hat && c.Hat && c.WD == 0
	s.bounded = s.bounded && finite && c.B1c >= 0 && c.B1c <= 1 && c.B2 > 0 && c.Step > 0 && c.Eps > 0
	s.decays = s.decays && c.B2 <= 1
	s.sameB2 = s.sameB2 && c.B2 == s.b2
	if c.Step > s.maxStep {
		s.maxStep = c.Step
	}
	if c.Eps < s.minEps {
		s.minEps = c.Eps
	}
}

// ZeroSteps is AdamZeroSteps(p, m, v, cs) for the logged steps cs[from:to], to the same bits.
// Its plan takes what the whole log has: every property all of its steps have holds for any
// of its runs, and its largest step size and least ε bound any run's, so that the bounds are
// at least as tight as the run's own (and about as tight: Adam's bias corrections make the
// largest step size a late step's, which a run to the log's end has); a log without those
// properties is planned run by run.
func (s *AdamSteps[T]) ZeroSteps(p, m, v []T, from, to int) (nonFinite bool) {
	cs := s.cs[from:to]
	n := len(p)
	m, v = m[:n], v[:n]
	if len(cs) == 0 {
		return false
	}
	if !s.skip || !s.hat || !s.bounded {
		return adamZeroStepsPlanned(p, m, v, cs, planZeroSteps(cs))
	}
	return adamZeroStepsPlanned(p, m, v, cs, s.plan(cs, s.b2Powers))
}

// zeroStepsPlan is what a replay needs to know of its steps: from one pass over them
// (planZeroSteps), or from what a log keeps of all its steps (AdamSteps.plan).
type zeroStepsPlan struct {
	// skip: weights whose moments are both zero keep them and their value (adamZeroSteps)
	skip bool
	// held: the steps can go to vec.AdamZeroStepsF32, which takes eight weights at a time
	// through every step in registers rather than through memory, reading each step's
	// constants from the steps themselves: float32 with AVX2, ε̂, no weight decay, and the
	// field offsets the kernel reads
	held bool
	// the bounds under which the kernel lets a weight stay where it is (stillBounds)
	still, cvs, qmin float32
}

// planZeroSteps plans the replay of cs.
func planZeroSteps[T Float](cs []AdamCoeffs[T]) zeroStepsPlan {
	var s AdamSteps[T]
	s.start(cs[0].B2)
	for i := range cs {
		s.fold(&cs[i])
	}
	return s.plan(cs, nil)
}

// plan plans the replay of cs, steps that have every property s keeps and are bounded by its
// extremes; powers, when it has them, are β2's (AdamSteps.b2Powers).
func (s *AdamSteps[T]) plan(cs []AdamCoeffs[T], powers []float64) zeroStepsPlan {
	plan := zeroStepsPlan{skip: s.skip, still: -1}
	if _, f32 := any(cs).([]AdamCoeffs[float32]); !f32 || !haveVec || !heldLayout || !s.hat {
		return plan
	}
	plan.held = true
	if s.bounded {
		// β2 is one constant in every Adam here; a product of varying ones is the rare case
		var prod float64
		switch {
		case s.sameB2 && len(cs) < len(powers):
			prod = powers[len(cs)]
		case s.sameB2:
			prod = math.Pow(float64(s.b2), float64(len(cs)))
		default:
			prod = 1
			for i := range cs {
				prod *= float64(cs[i].B2)
			}
		}
		plan.still, plan.cvs, plan.qmin = stillBounds(float64(s.maxStep), float64(s.minEps), prod, len(cs), s.decays)
	}
	return plan
}

// heldLayout: AdamCoeffs[float32] has the field offsets vec.AdamZeroStepsF32 reads.
var heldLayout = func() bool {
	var c AdamCoeffs[float32]
	return unsafe.Offsetof(c.B1c) == 0 && unsafe.Offsetof(c.B2) == 4 && unsafe.Offsetof(c.Step) == 12 && unsafe.Offsetof(c.Eps) == 20
}()

// adamZeroSteps is AdamZeroSteps on one goroutine. Weights whose moments are both zero (an
// input no batch has had yet) keep them, and their value, through steps without weight decay,
// to the bit (m + (1−β1)(0 − m) is +0 for m = +0, and moments never hold −0, and the step
// divides +0 by ε > 0), so pieces of zeroMomentChunk such weights are skipped: a one-hot layer
// has many. (With ε = 0 the step is 0/0, a NaN, which the steps must be taken to give.)
func adamZeroSteps[T Float](p, m, v []T, cs []AdamCoeffs[T], plan zeroStepsPlan) bool {
	zeros := zeroGrad[T]()
	stillMoments := func(a int) bool { // whether chunk a's moments are all zero
		// a chunk that is moving mostly shows it in its first moment's first weight: testing
		// that here spares the call into the scan
		if !plan.skip || m[a] != 0 {
			return false
		}
		e := min(len(p), a+zeroMomentChunk)
		return firstNonzero(m[a:e]) == e-a && firstNonzero(v[a:e]) == e-a
	}
	bad := false
	for a := 0; a < len(p); {
		if stillMoments(a) {
			a += zeroMomentChunk
			continue
		}
		e := a + zeroMomentChunk
		for e < len(p) && e-a < len(zeros) && !stillMoments(e) {
			e += zeroMomentChunk
		}
		e = min(e, len(p))
		done := 0
		if plan.held && e-a >= 8 {
			done = (e - a) &^ 7
			pa, ma, va := any(p[a:e]).([]float32), any(m[a:e]).([]float32), any(v[a:e]).([]float32)
			c := any(cs).([]AdamCoeffs[float32])
			bad = vec.AdamZeroStepsF32(p32(pa), p32(ma), p32(va), done, &c[0].B1c, len(c), int(unsafe.Sizeof(c[0])), plan.still, plan.cvs, plan.qmin) || bad
		}
		if done < e-a { // a tail the kernel left, or all of a range it does not take
			for _, c := range cs {
				bad = adamRange(p[a+done:e], zeros[:e-a-done], m[a+done:e], v[a+done:e], c) || bad
			}
		}
		a = e
	}
	return bad
}

// stillBounds gives vec.AdamZeroStepsF32 the bounds under which a weight stays where it is
// through every one of k steps, given the largest step size S, the least ε E, the product P of
// the steps' β2, whether every β2 ≤ 1, and that every step has 0 ≤ 1−β1 ≤ 1, β2 > 0 and S and
// E positive and finite (AdamSteps.plan). A weight p with 2^e ≤ |p| < 2^(e+1), Q = 2^(e−26) and
//
//	|m| ≤ Q·max(still, cvs·√v),   still = (E/S)·(1 − 2⁻⁹),   cvs = (√P/S)·(1 − (k+16)·2⁻²⁴)·(1 − 2⁻⁹)
//
// (both rounded down; Q ≥ qmin = max(2⁻¹²⁶, 2⁻¹²⁵/E), rounded up, and the bound a normal float,
// so that Q times it is exact) moves by at most Q at this step and every later one: |m| only
// shrinks when 0 ≤ 1−β1 ≤ 1; v shrinks by at most a factor β2·(1 − 2⁻²⁴) a step while it is
// normal, so that √v stays ≥ √(P·(1 − k·2⁻²⁴))·√v_now over the k steps when 0 < β2 ≤ 1, and
// stays normal whenever that bound exceeds E (cvs is zero unless E ≥ 2⁻⁶⁰); and the step's
// denominator √v + ε is at least both. The margins cover the roundings of step·|m|, √v and the
// bound's products; fl(step·|m|) is normal since Q·E ≥ 2⁻¹²⁵. A move of at most Q is less than
// half the distance, 2^(e−25), from p to a neighbour (the one below a power of two is
// nearer), so p − move rounds to p. (Steps outside the proof get no bounds: still = −1, cvs = 0.)
func stillBounds(maxStep, minEps, prod float64, k int, decays bool) (still, cvs, qmin float32) {
	q := max(0x1p-126, 0x1p-125/minEps)
	qmin = float32(q)
	if float64(qmin) < q {
		qmin = math.Nextafter32(qmin, float32(math.Inf(1)))
	}
	if math.IsInf(float64(qmin), 1) {
		return -1, 0, 0
	}
	if c := math.Sqrt(prod) * (1 - float64(k+16)*0x1p-24); decays && minEps >= 0x1p-60 && c > 0 {
		cvs = roundDown32(c / maxStep * (1 - 0x1p-9))
	}
	return roundDown32(minEps / maxStep * (1 - 0x1p-9)), cvs, qmin
}

// roundDown32 is the largest float32 not above x ≥ 0.
func roundDown32(x float64) float32 {
	r := float32(x)
	if float64(r) > x {
		r = math.Nextafter32(r, 0)
	}
	return r
}

// zeroMomentChunk is the piece of weights adamZeroSteps skips when its moments are zero.
const zeroMomentChunk = 256

// zeroGrad is the block of zeros of T that adamZeroGrad and adamZeroSteps read as gradients.
func zeroGrad[T Float]() []T {
	if unsafe.Sizeof(T(0)) == 4 {
		return unsafe.Slice((*T)(unsafe.Pointer(&zeroGrad32[0])), len(zeroGrad32))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&zeroGrad64[0])), len(zeroGrad64))
}

// zeroGrad32 and zeroGrad64 are adamZeroGrad's gradients; nothing writes them.
var (
	zeroGrad32 [2048]float32
	zeroGrad64 [2048]float64
)

// inChunks calls f on [0, n) (n ≥ 2·optimGrain) in pieces of optimGrain elements, on several
// cores, and reports whether any call returned true.
func inChunks(n int, f func(a, b int) bool) bool { return inChunksOf(n, optimGrain, f) }

// inChunksOf is inChunks in chunks of grain.
func inChunksOf(n, grain int, f func(a, b int) bool) (any bool) {
	chunks := (n + grain - 1) / grain
	flags := make([]bool, chunks)
	parallelFor(chunks, 1, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			flags[k] = f(k*grain, min(n, (k+1)*grain))
		}
	})
	for _, f := range flags {
		any = any || f
	}
	return any
}

func adamRange[T Float](p, g, m, v []T, c AdamCoeffs[T]) bool {
	done, bad := 0, false
	wd := 0
	if c.WD != 0 {
		wd = 1
	}
	hat := 0
	if c.Hat {
		hat = 1
	}
	switch p := any(p).(type) {
	case []float32:
		if haveVec && len(p) >= 8 {
			k := [7]float32{float32(c.B1c), float32(c.B2), float32(c.B2c), float32(c.Step), float32(c.Bc2), float32(c.Eps), float32(c.WD)}
			g, m, v := any(g).([]float32), any(m).([]float32), any(v).([]float32)
			if adam512 && len(p) >= 16 {
				done = len(p) &^ 15
				bad = vec.AdamF32Z(p32(p), p32(g), p32(m), p32(v), done, &k, wd, hat)
			}
			if e := len(p) &^ 7; e > done {
				bad = vec.AdamF32(p32(p[done:]), p32(g[done:]), p32(m[done:]), p32(v[done:]), e-done, &k, wd, hat) || bad
				done = e
			}
		}
	case []float64:
		if haveVec && len(p) >= 4 {
			done = len(p) &^ 3
			k := [7]float64{float64(c.B1c), float64(c.B2), float64(c.B2c), float64(c.Step), float64(c.Bc2), float64(c.Eps), float64(c.WD)}
			g, m, v := any(g).([]float64), any(m).([]float64), any(v).([]float64)
			bad = vec.AdamF64(p64(p), p64(g), p64(m), p64(v), done, &k, wd, hat)
		}
	}
	return adamScalar(p[done:], g[done:], m[done:], v[done:], c) || bad
}

// adamScalar is AdamUpdate's definition, and the tail of the vector path.
func adamScalar[T Float](p, g, m, v []T, c AdamCoeffs[T]) bool {
	bad := false
	for j := range p {
		gj := g[j]
		if c.WD != 0 {
			gj += c.WD * p[j]
		}
		m[j] += c.B1c * (gj - m[j])
		v[j] = c.B2*v[j] + c.B2c*gj*gj
		if c.Hat {
			p[j] -= (c.Step * m[j]) / (T(math.Sqrt(float64(v[j]))) + c.Eps)
		} else {
			p[j] -= c.Step * (m[j] / (T(math.Sqrt(float64(v[j])))/c.Bc2 + c.Eps))
		}
		bad = bad || !isFinite(p[j])
	}
	return bad
}

func isFinite[T Float](x T) bool {
	f := float64(x)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// FirstNonFinite is the index of x's first NaN or infinite element, or −1: a vector scan,
// then a scalar one only within the block that failed.
func FirstNonFinite[T Float](x []T) int {
	if !anyNonFinite(x) {
		return -1
	}
	for j, e := range x {
		if !isFinite(e) {
			return j
		}
	}
	return -1
}

// FirstNonFiniteRows is FirstNonFinite for an x known to be zero outside rows (increasing
// indices of runs of width elements, as for AdamUpdateRows): it reads only those rows.
func FirstNonFiniteRows[T Float](x []T, width int, rows []int32) int {
	first := -1
	rowRuns(rows, func(r0, r1 int) bool {
		if j := FirstNonFinite(x[r0*width : r1*width]); j >= 0 {
			first = r0*width + j
		}
		return first < 0
	})
	return first
}

// rowRuns calls f(r0, r1) for each run r0, r0+1, …, r1−1 of consecutive indices in rows
// (increasing), in order, until f returns false.
func rowRuns(rows []int32, f func(r0, r1 int) bool) {
	for t := 0; t < len(rows); {
		r0, r1 := int(rows[t]), int(rows[t])+1
		for t++; t < len(rows) && int(rows[t]) == r1; t++ {
			r1++
		}
		if !f(r0, r1) {
			return
		}
	}
}

func anyNonFinite[T Float](x []T) bool {
	n := len(x)
	if n < 2*optimGrain {
		return nonFiniteRange(x)
	}
	chunks := (n + optimGrain - 1) / optimGrain
	flags := make([]bool, chunks)
	parallelFor(chunks, 1, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			flags[k] = nonFiniteRange(x[k*optimGrain : min(n, (k+1)*optimGrain)])
		}
	})
	for _, f := range flags {
		if f {
			return true
		}
	}
	return false
}

func nonFiniteRange[T Float](x []T) bool {
	done := 0
	switch x := any(x).(type) {
	case []float32:
		if haveVec && len(x) >= 8 {
			done = len(x) &^ 7
			if vec.NonFiniteF32(p32(x), done) {
				return true
			}
		}
	case []float64:
		if haveVec && len(x) >= 4 {
			done = len(x) &^ 3
			if vec.NonFiniteF64(p64(x), done) {
				return true
			}
		}
	}
	for _, e := range x[done:] {
		if !isFinite(e) {
			return true
		}
	}
	return false
}

func p64(s []float64) *float64 { return (*float64)(unsafe.Pointer(unsafe.SliceData(s))) }
