package search

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// productKDE is a multivariate kernel density estimate with a product kernel, as statsmodels'
// KDEMultivariate computes it for BOHB: a Gaussian kernel on each continuous dimension (Float
// and Int, in unit coordinates) and an Aitchison–Aitken kernel on each categorical one (the
// choice index), with bandwidths from the normal reference rule.
type productKDE struct {
	data   [][]float64 // points; continuous dimensions in [0, 1], categorical as choice index
	levels []int       // 0 for a continuous dimension, the number of choices for a categorical
	bw     []float64
}

// newProductKDE fits the estimate to data with statsmodels' normal_reference bandwidths,
// 1.06·σ̂·n^(−1/(4+d)) per dimension (σ̂ the population standard deviation), raised to at
// least minBW as BOHB does. Unlike statsmodels, a categorical bandwidth is also capped at
// (k−1)/k, the uniform kernel: beyond it the Aitchison–Aitken kernel would favour the other
// choices over the observed one, or go negative. statsmodels also takes the number of levels
// from the distinct values in the data, so a choice absent from the data gets zero or
// undefined density; levels here are the true number of choices.
func newProductKDE(data [][]float64, levels []int, minBW float64) *productKDE {
	n, d := len(data), len(levels)
	k := &productKDE{data: data, levels: levels, bw: make([]float64, d)}
	col := make([]float64, n)
	scale := 1.06 * math.Pow(float64(n), -1/(4+float64(d)))
	for j := range d {
		for i, x := range data {
			col[i] = x[j]
		}
		mean := floats.Sum(col) / float64(n)
		ss := 0.0
		for _, v := range col {
			ss += (v - mean) * (v - mean)
		}
		bw := math.Max(scale*math.Sqrt(ss/float64(n)), minBW)
		if c := levels[j]; c > 0 {
			bw = math.Min(bw, float64(c-1)/float64(c))
		}
		k.bw[j] = bw
	}
	return k
}

// logPDF is the log density at x.
func (k *productKDE) logPDF(x []float64) float64 {
	terms := make([]float64, len(k.data))
	for i, xi := range k.data {
		s := 0.0
		for j, bw := range k.bw {
			if c := k.levels[j]; c > 0 {
				if int(xi[j]) == int(x[j]) {
					s += math.Log(1 - bw)
				} else if c > 1 {
					s += math.Log(bw / float64(c-1))
				}
				continue
			}
			z := (x[j] - xi[j]) / bw
			s += -0.5*z*z - math.Log(bw) - 0.5*math.Log(2*math.Pi)
		}
		terms[i] = s
	}
	return floats.LogSumExp(terms) - math.Log(float64(len(k.data)))
}
