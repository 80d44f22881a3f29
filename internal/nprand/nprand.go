// Package nprand reproduces, bit for bit, the streams of NumPy's legacy generator
// numpy.random.RandomState: the Mersenne Twister MT19937 seeded by an integer, its 53-bit
// doubles and its Gaussian (the polar Box–Muller method, which keeps the second value of each
// pair for the next call). Scripts that seed RandomState(0), such as the authors' freedman.py
// in github.com/DEShawResearch/PACBayesHyperOpt, can then be rerun in Go on exactly their
// data. Bit for bit includes the rounding of the C library's log inside the Gaussian, which
// Go's math.Log does not share (log.go). Only what such scripts and scikit-learn's
// MLPClassifier (package skmlp) call is here: normal, standard_normal, random_sample,
// uniform, shuffle and permutation.
//
// The definitions followed are NumPy's C sources numpy/random/src/mt19937/mt19937.c
// (mt19937_seed, mt19937_gen, the tempering of mt19937_next32),
// numpy/random/src/legacy/legacy-distributions.c (legacy_double, legacy_gauss,
// legacy_normal), numpy/random/src/distributions/distributions.c (random_interval),
// numpy/random/mtrand.pyx (uniform, shuffle, permutation) and, for MT19937 itself,
// Matsumoto and Nishimura's reference mt19937ar.c (init_genrand, genrand_int32).
package nprand

import "math"

const (
	n         = 624
	m         = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// RandomState is the state of numpy.random.RandomState: the twister's 624 words, the
// position in them, and the cached second Gaussian of the last polar pair. The zero value is
// not usable; call New.
type RandomState struct {
	mt       [n]uint32
	pos      int
	hasGauss bool
	gauss    float64
}

// New returns the state of RandomState(seed) for an integer seed (NumPy accepts 0 to 2³²−1
// and seeds by init_genrand, not by init_by_array, for a scalar).
func New(seed uint32) *RandomState {
	r := &RandomState{pos: n}
	r.mt[0] = seed
	for i := 1; i < n; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	return r
}

// twist regenerates the 624 words (mt19937_gen).
func (r *RandomState) twist() {
	mag := func(y uint32) uint32 { return (y & 1) * matrixA }
	var i int
	for ; i < n-m; i++ {
		y := r.mt[i]&upperMask | r.mt[i+1]&lowerMask
		r.mt[i] = r.mt[i+m] ^ y>>1 ^ mag(y)
	}
	for ; i < n-1; i++ {
		y := r.mt[i]&upperMask | r.mt[i+1]&lowerMask
		r.mt[i] = r.mt[i+m-n] ^ y>>1 ^ mag(y)
	}
	y := r.mt[n-1]&upperMask | r.mt[0]&lowerMask
	r.mt[n-1] = r.mt[m-1] ^ y>>1 ^ mag(y)
	r.pos = 0
}

// Uint32 is the next tempered 32-bit output (genrand_int32).
func (r *RandomState) Uint32() uint32 {
	if r.pos == n {
		r.twist()
	}
	y := r.mt[r.pos]
	r.pos++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// Float64 is random_sample(): a uniform double in [0, 1) from the top 27 and 26 bits of two
// outputs (legacy_double), the 53 bits of a double's mantissa.
func (r *RandomState) Float64() float64 {
	a, b := r.Uint32()>>5, r.Uint32()>>6
	return (float64(a)*67108864 + float64(b)) / 9007199254740992
}

// StandardNormal is standard_normal() (legacy_gauss): Marsaglia's polar method on pairs of
// Float64 in (−1, 1)², rejecting points outside the open unit disc and the origin; of the
// pair f·x1, f·x2 it returns the second and keeps the first for the next call. Float64 calls
// in between do not clear the cache, as in NumPy.
func (r *RandomState) StandardNormal() float64 {
	if r.hasGauss {
		r.hasGauss = false
		g := r.gauss
		r.gauss = 0
		return g
	}
	var x1, x2, r2 float64
	for {
		x1 = 2*r.Float64() - 1
		x2 = 2*r.Float64() - 1
		r2 = float64(x1*x1) + float64(x2*x2)
		if r2 < 1 && r2 != 0 {
			break
		}
	}
	f := math.Sqrt(-2 * glibcLog(r2) / r2)
	r.gauss, r.hasGauss = f*x1, true
	return f * x2
}

// Normal is normal(loc, scale) for one value: loc + scale·standard_normal(), in that order of
// operations (legacy_normal), so that normal(0, 2) is exactly 2·standard_normal().
func (r *RandomState) Normal(loc, scale float64) float64 {
	return loc + float64(scale*r.StandardNormal())
}

// NormalFill fills dst with normal(loc, scale, len(dst)): NumPy fills an array of any shape
// in C (row-major) order, one value per element.
func (r *RandomState) NormalFill(dst []float64, loc, scale float64) {
	for i := range dst {
		dst[i] = r.Normal(loc, scale)
	}
}

// Uniform is uniform(low, high) for one value: low + (high−low)·random_sample()
// (random_uniform, with the range computed first, as RandomState.uniform passes it).
func (r *RandomState) Uniform(low, high float64) float64 {
	return low + (high-low)*r.Float64()
}

// Interval is random_interval(max) for max < 2³²: a 32-bit output masked to the smallest
// mask of all ones covering max, redrawn until it is at most max; 0 without a draw for max 0.
func (r *RandomState) Interval(max uint32) uint32 {
	if max == 0 {
		return 0
	}
	mask := max
	for s := uint(1); s < 32; s <<= 1 {
		mask |= mask >> s
	}
	v := r.Uint32() & mask
	for v > max {
		v = r.Uint32() & mask
	}
	return v
}

// ShuffleInts is shuffle(x) of a one-dimensional array (the legacy Fisher–Yates of
// _shuffle_raw): for i = len(x)−1 … 1, x[i] is swapped with x[Interval(i)]. x must have
// fewer than 2³² entries.
func (r *RandomState) ShuffleInts(x []int) {
	for i := len(x) - 1; i > 0; i-- {
		j := r.Interval(uint32(i))
		x[i], x[j] = x[j], x[i]
	}
}

// Permutation is permutation(n): arange(n) shuffled by ShuffleInts.
func (r *RandomState) Permutation(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	r.ShuffleInts(p)
	return p
}
