package weightdecay

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hyperflat/hyperflat/experiments"
	"github.com/hyperflat/hyperflat/stats"
)

// This file holds a small stratified percentile bootstrap: stats.Bootstrap resamples one
// sample, and Table C.1's headline resamples replicates within each pair at once.

// interval is a point estimate with a two-sided percentile bootstrap interval.
type interval struct {
	est, lo, hi float64
}

// bootResamples and bootSeed are the project's bootstrap settings (experiments.BootCI's, the
// answers' and the other reports'), so that every interval of tablec1.md is drawn alike: each
// cell's from bootSeed, the headline's stratified ones from seeds of their own.
const (
	bootResamples = experiments.BootResamples
	bootSeed      = experiments.BootSeed
)

// bootstrap is the stratified percentile bootstrap of stat: sizes[g] is the number of units
// (replicates) in stratum g (a pair); each resample draws, in every stratum, sizes[g] units
// with replacement and evaluates stat on the drawn indices. The estimate is stat on the
// sample itself; the interval the (1−level)/2 and (1+level)/2 quantiles of the resampled
// statistics (linear interpolation between order statistics), NaN resamples left out. The
// draws come from seed alone, so the interval is the same on every machine and every run.
// A stratum of one unit contributes no variation: the interval covers the initialization
// variance of the pairs with replicates, not the choice of pairs.
func bootstrap(sizes []int, stat func(idx [][]int) float64, resamples int, level float64, seed uint64) (interval, error) {
	if stat == nil {
		return interval{}, fmt.Errorf("weightdecay: bootstrap of a nil statistic")
	}
	if resamples < 1 || !(level > 0 && level < 1) {
		return interval{}, fmt.Errorf("weightdecay: bootstrap of %d resamples at level %v", resamples, level)
	}
	idx := make([][]int, len(sizes))
	for g, n := range sizes {
		if n < 1 {
			return interval{}, fmt.Errorf("weightdecay: bootstrap stratum %d has %d units", g, n)
		}
		idx[g] = make([]int, n)
		for i := range idx[g] {
			idx[g][i] = i
		}
	}
	out := interval{est: stat(idx), lo: math.NaN(), hi: math.NaN()}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	vals := make([]float64, 0, resamples)
	for range resamples {
		for g, n := range sizes {
			for i := range idx[g] {
				idx[g][i] = rng.IntN(n)
			}
		}
		if v := stat(idx); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return out, nil
	}
	slices.Sort(vals)
	out.lo, out.hi = quantile(vals, (1-level)/2), quantile(vals, (1+level)/2)
	return out, nil
}

// quantile is the q-quantile of sorted values, interpolating linearly between order statistics
// (numpy's default, "linear").
func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// meanCI is the 95% percentile bootstrap interval of the mean of xs (a Table C.1 cell's
// replicates; experiments.BootCI); NaN ends for fewer than two values, whose mean is the value.
func meanCI(xs []float64) interval {
	ci := experiments.BootCI(xs, stats.Mean)
	if ci == nil {
		return interval{est: math.NaN(), lo: math.NaN(), hi: math.NaN()}
	}
	return interval{est: stats.Mean(xs), lo: ci.Low, hi: ci.High}
}
