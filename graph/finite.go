package graph

import (
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Finite reports whether n's value from the last Run is certainly free of NaN and infinite
// entries, known without reading it: n is a matrix product op(a)·op(b) whose operands are
// finite and bounded so that no sum of k of their products can overflow, in any order
// (k·max|a|·max|b| ≤ a quarter of the type's largest value). It looks only at the operands,
// and only where they are at most an eighth of the product's size — a weight gradient Xᵀ·dY,
// whose operands are a batch's rows — and says false otherwise, or when it cannot tell: a
// caller then scans the value itself (FirstNonFinite). The answer holds until the next Run,
// provided nothing writes into the operands' values meanwhile (ask before an optimizer steps).
func (p *Program) Finite(n *G.Node) bool {
	if p == nil {
		return false
	}
	i, ok := p.index[n]
	if !ok || p.runs == 0 || p.vals[i] == nil || (p.inlined != nil && p.inlined[i]) {
		return false
	}
	op, ok := n.Op().(*matMulOp)
	if !ok || (p.fused != nil && p.fused[i] != nil) || len(p.kids[i]) != 2 {
		return false
	}
	if finiteOperandsRatio*(op.m*op.k+op.k*op.n) > op.m*op.n || op.k >= finiteMaxK {
		return false
	}
	a, b := p.kids[i][0], p.kids[i][1]
	if p.inlined != nil && (p.inlined[a] || p.inlined[b]) || p.vals[a] == nil || p.vals[b] == nil {
		return false
	}
	switch op.dt {
	case tensor.Float64:
		return productFinite[float64](p.vals[a], p.vals[b], op.k)
	case tensor.Float32:
		return productFinite[float32](p.vals[a], p.vals[b], op.k)
	}
	return false
}

const (
	// finiteOperandsRatio is how many times smaller than a product its operands must be for
	// Finite to read them rather than leave the product to a scan.
	finiteOperandsRatio = 8
	// finiteMaxK keeps (1+u)ᵏ, the most rounding can grow a sum of k products above the sum of
	// their magnitudes, below 2 in float32 (u = 2⁻²⁴; (1+u)^(2²³) ≈ 1.65).
	finiteMaxK = 1 << 23
)

// productFinite reports whether a and b (k-long sums' operands) are finite and every sum of k
// products of their entries, however rounded, stays below the largest finite T: each partial
// sum is at most (1+u)ᵏ·k·max|a|·max|b| < 2·k·max|a|·max|b| ≤ max/2 in magnitude, and finite
// operands make no NaN unless some sum overflows.
func productFinite[T Float](av, bv G.Value, k int) bool {
	a, err := Elements[T](av)
	if err != nil {
		return false
	}
	b, err := Elements[T](bv)
	if err != nil {
		return false
	}
	var zero T
	largest := math.MaxFloat64
	if _, ok := any(zero).(float32); ok {
		largest = math.MaxFloat32
	}
	ma, okA := maxAbsFinite(a)
	mb, okB := maxAbsFinite(b)
	// in float64 the bound's product is exact enough for float32 and at worst +Inf (refused)
	// for float64
	return okA && okB && float64(k)*ma*mb <= largest/4
}

// maxAbsFinite is the largest |x| of xs and whether every x is finite.
func maxAbsFinite[T Float](xs []T) (float64, bool) {
	var m T
	for _, x := range xs {
		ax := x
		if ax < 0 {
			ax = -ax
		}
		if ax > m {
			m = ax
		} else if !(ax <= m) { // NaN
			return 0, false
		}
	}
	return float64(m), !math.IsInf(float64(m), 0)
}
