package datasets

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
)

// StratifiedIndices partitions the row indices 0…len(y)-1 into len(fractions) parts of
// sizes proportional to fractions (which must be positive and sum to 1), each class spread
// over the parts in the same proportions (within one row per class and part). The result is
// a deterministic function of y, fractions and the state of rng; each part is in random
// order.
//
// Part sizes are N·fraction rounded by the largest-remainder method, so they sum to N; a
// fraction that leaves a part empty is an error.
func StratifiedIndices(y []int, rng *rand.Rand, fractions ...float64) ([][]int, error) {
	if slices.ContainsFunc(y, func(c int) bool { return c < 0 }) {
		return nil, errors.New("datasets: StratifiedIndices: negative class label")
	}
	return splitIndices(len(y), y, rng, fractions)
}

// Split partitions d into len(fractions) datasets (train/validation/test, say), stratified
// by class when d has class labels and purely random otherwise; see [StratifiedIndices].
// Rows are copied.
func Split(d *Dataset, rng *rand.Rand, fractions ...float64) ([]*Dataset, error) {
	if d == nil {
		return nil, errors.New("datasets: Split: nil dataset")
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	parts, err := splitIndices(d.N, d.Y, rng, fractions)
	if err != nil {
		return nil, err
	}
	out := make([]*Dataset, len(parts))
	for i, p := range parts {
		out[i] = d.Subset(p)
	}
	return out, nil
}

func splitIndices(n int, y []int, rng *rand.Rand, fractions []float64) ([][]int, error) {
	if rng == nil {
		return nil, errors.New("datasets: split: nil *rand.Rand; pass a seeded one, e.g. rand.New(rand.NewPCG(seed, 0))")
	}
	if len(fractions) == 0 {
		return nil, errors.New("datasets: split: no fractions")
	}
	sum := 0.0
	for _, f := range fractions {
		if !(f > 0) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("datasets: split: fraction %v, fractions must be positive", f)
		}
		sum += f
	}
	if math.Abs(sum-1) > 1e-9 {
		return nil, fmt.Errorf("datasets: split: fractions %v sum to %v, not 1", fractions, sum)
	}
	// Part sizes by the largest-remainder method.
	sizes := make([]int, len(fractions))
	rem := make([]float64, len(fractions))
	total := 0
	for p, f := range fractions {
		exact := f * float64(n)
		sizes[p] = int(math.Floor(exact))
		rem[p] = exact - float64(sizes[p])
		total += sizes[p]
	}
	order := make([]int, len(fractions))
	for p := range order {
		order[p] = p
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case rem[a] > rem[b]:
			return -1
		case rem[a] < rem[b]:
			return 1
		}
		return 0
	})
	for _, p := range order[:n-total] {
		sizes[p]++
	}
	for p, s := range sizes {
		if s == 0 {
			return nil, fmt.Errorf("datasets: split: fraction %v of %d rows leaves part %d empty", fractions[p], n, p)
		}
	}
	// Rows grouped by class (one group when unlabelled), shuffled within each class.
	var seq []int
	if y == nil {
		seq = make([]int, n)
		for i := range seq {
			seq[i] = i
		}
		rng.Shuffle(n, func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
	} else {
		k := 0
		for _, c := range y {
			k = max(k, c+1)
		}
		groups := make([][]int, k)
		for i, c := range y {
			groups[c] = append(groups[c], i)
		}
		for _, g := range groups {
			rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
			seq = append(seq, g...)
		}
	}
	// Deal the sequence to the parts, each row to the part furthest behind its share, so
	// every contiguous class block is split in the parts' proportions.
	parts := make([][]int, len(sizes))
	for p, s := range sizes {
		parts[p] = make([]int, 0, s)
	}
	for i, row := range seq {
		// deficit·n = (i+1)·size − n·assigned, in exact integer arithmetic.
		best, bestDeficit := -1, int64(0)
		for p, s := range sizes {
			deficit := int64(i+1)*int64(s) - int64(n)*int64(len(parts[p]))
			if best < 0 || deficit > bestDeficit {
				best, bestDeficit = p, deficit
			}
		}
		parts[best] = append(parts[best], row)
	}
	for _, p := range parts {
		rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	}
	return parts, nil
}

// Batches returns the row indices 0…n-1 in mini-batches of size rows, the last one
// possibly smaller. With a nil rng the order is sequential; otherwise it is a permutation
// drawn from rng when Batches is called, so ranging over the result twice gives the same
// batches (call Batches again for a new epoch). The yielded slices must not be modified.
func Batches(n, size int, rng *rand.Rand) (iter.Seq[[]int], error) {
	if n < 0 || size <= 0 {
		return nil, fmt.Errorf("datasets: Batches: %d rows in batches of %d; need n ≥ 0 and size ≥ 1", n, size)
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	if rng != nil {
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	}
	return func(yield func([]int) bool) {
		for lo := 0; lo < n; lo += size {
			hi := min(lo+size, n)
			if !yield(perm[lo:hi:hi]) {
				return
			}
		}
	}, nil
}
