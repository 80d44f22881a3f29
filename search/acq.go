package search

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// Acquisition functions for minimization, on a Gaussian posterior N(mean, sd²) at a point and
// the incumbent value best. The log forms stay finite far below the incumbent, where EI and
// PI underflow to 0 and would make every unpromising candidate tie.

// ExpectedImprovement is E[max(best − f, 0)].
func ExpectedImprovement(mean, sd, best float64) float64 {
	if !(sd > 0) {
		return math.Max(best-mean, 0)
	}
	z := (best - mean) / sd
	return sd * (z*normCDF(z) + normPDF(z))
}

// LogExpectedImprovement is log ExpectedImprovement, accurate for any z = (best − mean)/sd:
// directly down to z = −25 (erfc keeps full relative precision there and the cancellation in
// zΦ(z) + φ(z) costs under three digits), by the asymptotic series below.
func LogExpectedImprovement(mean, sd, best float64) float64 {
	sd = math.Max(sd, 1e-300)
	z := (best - mean) / sd
	if z > -25 {
		return math.Log(sd) + math.Log(z*normCDF(z)+normPDF(z))
	}
	// zΦ(z) + φ(z) = φ(z)/z² (1 − 3/z² + 15/z⁴ − 105/z⁶ + 945/z⁸ − 10395/z¹⁰ + …); at
	// |z| ≥ 25 the next term is below 10⁻¹³.
	w := 1 / (z * z)
	s := 1 + w*(-3+w*(15+w*(-105+w*(945-10395*w))))
	return math.Log(sd) + logNormPDF(z) + math.Log(w*s)
}

// ProbabilityOfImprovement is P(f < best).
func ProbabilityOfImprovement(mean, sd, best float64) float64 {
	return math.Exp(LogProbabilityOfImprovement(mean, sd, best))
}

// LogProbabilityOfImprovement is log P(f < best), accurate far into the lower tail.
func LogProbabilityOfImprovement(mean, sd, best float64) float64 {
	sd = math.Max(sd, 1e-300)
	z := (best - mean) / sd
	if z > -30 {
		return math.Log(normCDF(z))
	}
	// Φ(z) = φ(z)/|z| (1 − 1/z² + 3/z⁴ − 15/z⁶ + 105/z⁸ − …).
	w := 1 / (z * z)
	return logNormPDF(z) - math.Log(-z) + math.Log(1+w*(-1+w*(3+w*(-15+105*w))))
}

// LowerConfidenceBound is mean − κ·sd (the UCB rule written for minimization; smaller is more
// promising).
func LowerConfidenceBound(mean, sd, kappa float64) float64 { return mean - kappa*sd }

func normCDF(z float64) float64    { return 0.5 * math.Erfc(-z/math.Sqrt2) }
func normPDF(z float64) float64    { return math.Exp(logNormPDF(z)) }
func logNormPDF(z float64) float64 { return -0.5*z*z - 0.5*math.Log(2*math.Pi) }

// paretoFront returns the indices (ascending) of the points of objs not dominated by any
// other (all objectives minimized). Of points with identical objectives, only the first is kept.
func paretoFront(objs [][]float64, idx []int) []int {
	var front []int
	for _, i := range idx {
		dominated := false
		for _, j := range idx {
			if i != j && dominates(objs[j], objs[i], j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, i)
		}
	}
	return front
}

// dominates reports whether a is no worse than b everywhere and better somewhere (or, with
// tieWins, equal everywhere).
func dominates(a, b []float64, tieWins bool) bool {
	better := false
	for k := range a {
		if a[k] > b[k] {
			return false
		}
		if a[k] < b[k] {
			better = true
		}
	}
	return better || tieWins
}

// lhsNext continues a Latin hypercube of strata strata per dimension whose earlier points are
// prev: in each dimension it draws a stratum no earlier point occupies (any stratum once all
// are taken) and a uniform position inside it. Drawing the n points of a design this way one
// at a time gives exactly a random Latin hypercube (independent random permutations per
// dimension), which lets a stateless sampler build one across Ask calls.
func lhsNext(rng *rand.Rand, prev [][]float64, strata, d int) []float64 {
	u := make([]float64, d)
	used := make([]bool, strata)
	free := make([]int, 0, strata)
	for j := 0; j < d; j++ {
		clear(used)
		for _, p := range prev {
			used[min(int(p[j]*float64(strata)), strata-1)] = true
		}
		free = free[:0]
		for s, taken := range used {
			if !taken {
				free = append(free, s)
			}
		}
		var s int
		if len(free) > 0 {
			s = free[rng.IntN(len(free))]
		} else {
			s = rng.IntN(strata)
		}
		u[j] = (float64(s) + rng.Float64()) / float64(strata)
	}
	return u
}

// latinHypercube draws n points of [lo, hi] (per dimension) stratified in every dimension.
func latinHypercube(rng *rand.Rand, n int, lo, hi []float64) [][]float64 {
	d := len(lo)
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = make([]float64, d)
	}
	for j := 0; j < d; j++ {
		perm := rng.Perm(n)
		for i := range pts {
			t := (float64(perm[i]) + rng.Float64()) / float64(n)
			pts[i][j] = lo[j] + t*(hi[j]-lo[j])
		}
	}
	return pts
}

// canonical maps a unit point to the unit point of the config it denotes, so that a model sees
// the point that will actually be evaluated (integers rounded, categories picked), and returns
// that config's key for de-duplication.
func canonical(space Space, u []float64) ([]float64, Config, string) {
	c := space.FromUnit(u)
	return space.ToUnit(c), c, configKey(c)
}

// configKey identifies a config by the exact bits of its values.
func configKey(c Config) string {
	b := make([]byte, 8*len(c.Values))
	for i, v := range c.Values {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return string(b)
}

// observation is a trial as a model sees it: its unit point and, when it finished, its loss.
type observation struct {
	u     []float64
	y     float64
	state State
	key   string
}

// observations extracts the full-fidelity trials (the ones Best considers; lower-fidelity
// results of another method are not comparable) in order. A Complete trial with a non-finite
// value (which Study.Tell never makes, but a hand-built trial list might) is seen as Failed, so
// that no GP is ever fitted to a NaN or an infinity.
func observations(space Space, trials []Trial) []observation {
	var obs []observation
	for _, t := range trials {
		if t.Fidelity < 1 || len(t.Config.Values) != len(space) {
			continue
		}
		st := t.State
		if st == Complete && (math.IsNaN(t.Value) || math.IsInf(t.Value, 0)) {
			st = Failed // never hand a model a non-finite loss, whatever built the trial
		}
		obs = append(obs, observation{u: space.ToUnit(t.Config), y: t.Value, state: st, key: configKey(t.Config)})
	}
	return obs
}
