package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Interval is a confidence interval [Low, High] of a statistic.
type Interval struct{ Low, High float64 }

// BootstrapOptions set a percentile bootstrap: the confidence level (0.95 when zero), the
// number of resamples (10,000 when zero) and the seed of the resampling stream, so that an
// interval is reproducible.
type BootstrapOptions struct {
	Level     float64
	Resamples int
	Seed      uint64
}

// maxResamples bounds the work of one interval.
const maxResamples = 1_000_000

// Bootstrap is the percentile bootstrap confidence interval of stat over xs (Efron's
// percentile method, scipy.stats.bootstrap's method="percentile"): stat of Resamples
// samples of len(xs) values drawn from xs with replacement, and the (1 − Level)/2 and
// (1 + Level)/2 quantiles of those statistics, interpolated linearly between order
// statistics as numpy.percentile does. The draws come from a PCG stream seeded by Seed
// alone, so the same inputs give the same interval. Errors: no values, a NaN among them, a
// nil stat, a level outside (0, 1) or resamples outside [1, 10⁶].
func Bootstrap(xs []float64, stat func([]float64) float64, opt BootstrapOptions) (Interval, error) {
	nan := Interval{math.NaN(), math.NaN()}
	level, resamples := opt.Level, opt.Resamples
	if level == 0 {
		level = 0.95
	}
	if resamples == 0 {
		resamples = 10000
	}
	switch {
	case stat == nil:
		return nan, fmt.Errorf("stats: bootstrap: nil statistic: %w", ErrBadOption)
	case len(xs) == 0:
		return nan, fmt.Errorf("stats: bootstrap: %w", ErrEmpty)
	case !(level > 0 && level < 1):
		return nan, fmt.Errorf("stats: bootstrap: level %v outside (0, 1): %w", level, ErrBadOption)
	case resamples < 1 || resamples > maxResamples:
		return nan, fmt.Errorf("stats: bootstrap: %d resamples outside [1, %d]: %w", resamples, maxResamples, ErrBadOption)
	}
	if slices.ContainsFunc(xs, math.IsNaN) {
		return nan, fmt.Errorf("stats: bootstrap: %w", ErrNaN)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x626f6f74)) // "boot"
	sample := make([]float64, len(xs))
	stats := make([]float64, resamples)
	for r := range stats {
		for i := range sample {
			sample[i] = xs[rng.IntN(len(xs))]
		}
		stats[r] = stat(sample)
	}
	slices.Sort(stats)
	alpha := (1 - level) / 2
	return Interval{percentile(stats, alpha), percentile(stats, 1-alpha)}, nil
}

// percentile is numpy.percentile's default ("linear") quantile q ∈ [0, 1] of the sorted s.
func percentile(s []float64, q float64) float64 {
	h := q * float64(len(s)-1)
	i := int(math.Floor(h))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}
