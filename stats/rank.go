package stats

import (
	"fmt"
	"math"
	"sort"
)

// ranking holds the average (mid-)ranks of a pooled sample.
type ranking struct {
	// doubled[i] is twice the 1-based average rank of observation i; it is
	// always an integer.
	doubled []int
	// ties holds the size of every group of equal values (size 1 included).
	ties []int
}

// rank returns the average ranks of v, as scipy.stats.rankdata(method='average').
// v must not contain NaN.
func rank(v []float64) ranking {
	n := len(v)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := ranking{doubled: make([]int, n)}
	for i := 0; i < n; {
		j := i + 1
		for j < n && v[idx[j]] == v[idx[i]] {
			j++
		}
		// Positions i..j-1 (0-based) hold ranks i+1..j; their average,
		// doubled, is i+1+j.
		for k := i; k < j; k++ {
			r.doubled[idx[k]] = i + 1 + j
		}
		r.ties = append(r.ties, j-i)
		i = j
	}
	return r
}

// rank returns the average rank of observation i.
func (r ranking) rank(i int) float64 { return float64(r.doubled[i]) / 2 }

// tieTerm returns Σ (t³ − t) over the tie groups.
func (r ranking) tieTerm() float64 {
	var s float64
	for _, t := range r.ties {
		ft := float64(t)
		s += ft*ft*ft - ft
	}
	return s
}

// hasTies reports whether any two observations are equal.
func (r ranking) hasTies() bool { return len(r.ties) != len(r.doubled) }

// checkSample returns an error if v is empty or contains NaN.
func checkSample(name string, v []float64) error {
	if len(v) == 0 {
		return fmt.Errorf("stats: %s: %w", name, ErrEmpty)
	}
	for _, x := range v {
		if math.IsNaN(x) {
			return fmt.Errorf("stats: %s: %w", name, ErrNaN)
		}
	}
	return nil
}
