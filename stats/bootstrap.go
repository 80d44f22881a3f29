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

// SpearmanBootstrap is the percentile bootstrap interval of Spearman's ρ of the paired x and
// y with the pairs resampled: Bootstrap over the pair indices 0, …, n−1 (so the same options
// draw the same pairs), each resample's statistic the ρ of the pairs it drew, or 0 where x
// or y is constant in it and ρ is undefined (counted as no association rather than dropped,
// which would narrow the interval towards the resamples that vary). Errors: Spearman's on the
// whole sample (different lengths, a NaN, a constant input), fewer than three pairs (whose
// resamples have ρ only ±1 or undefined), and Bootstrap's on the options.
func SpearmanBootstrap(x, y []float64, opt BootstrapOptions) (Interval, error) {
	nan := Interval{math.NaN(), math.NaN()}
	if _, err := Spearman(x, y); err != nil {
		return nan, err
	}
	if len(x) < 3 {
		return nan, fmt.Errorf("stats: Spearman bootstrap: %d pairs, need at least 3: %w", len(x), ErrTooFew)
	}
	idx := make([]float64, len(x))
	for i := range idx {
		idx[i] = float64(i)
	}
	a, b := make([]float64, len(x)), make([]float64, len(x))
	rho := func(s []float64) float64 {
		for k, i := range s {
			a[k], b[k] = x[int(i)], y[int(i)]
		}
		r, err := Spearman(a, b)
		if err != nil {
			return 0
		}
		return r.Rho
	}
	return Bootstrap(idx, rho, opt)
}
