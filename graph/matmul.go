package graph

import (
	"fmt"
	"unsafe"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// matMulOp is the matrix product op(A)·op(B), where op transposes when asked. Its adjoints are
// matrix products with other transpose flags, so no transpose is ever materialized.
type matMulOp struct {
	base
	ta, tb  bool
	m, n, k int
}

// MatMul returns the matrix product a·b of 2-D nodes.
func MatMul(a, b *G.Node) (*G.Node, error) { return MatMulT(a, b, false, false) }

// MatMulT returns op(a)·op(b) of 2-D nodes, where op transposes its argument when the
// corresponding flag is set.
func MatMulT(a, b *G.Node, transA, transB bool) (*G.Node, error) {
	if a == nil || b == nil {
		return nil, fmt.Errorf("graph: MatMul of a nil node")
	}
	if err := checkDtype(a); err != nil {
		return nil, err
	}
	as, bs := a.Shape(), b.Shape()
	if len(as) != 2 || len(bs) != 2 {
		return nil, fmt.Errorf("graph: MatMul needs 2-D operands, got %v and %v", shapeString(as), shapeString(bs))
	}
	m, k := as[0], as[1]
	if transA {
		m, k = k, m
	}
	k2, n := bs[0], bs[1]
	if transB {
		k2, n = n, k2
	}
	if k != k2 {
		return nil, fmt.Errorf("graph: MatMul inner dims differ: %v%s · %v%s", shapeString(as), tmark(transA), shapeString(bs), tmark(transB))
	}
	op := &matMulOp{base: newBase("MatMul", fmt.Sprint(transA, transB), tensor.Shape{m, n}, a, b), ta: transA, tb: transB, m: m, n: n, k: k}
	return apply(op, a, b)
}

func tmark(t bool) string {
	if t {
		return "ᵀ"
	}
	return ""
}

func (op *matMulOp) Do(in ...G.Value) (G.Value, error) { return op.DoInto(nil, in...) }

func (op *matMulOp) DoInto(dst G.Value, in ...G.Value) (G.Value, error) {
	return op.doIntoSupport(dst, nil, in...)
}

// doIntoSupport is DoInto that records in s (when not nil) the rows of the product that may be
// nonzero, when the sparse path computed it.
func (op *matMulOp) doIntoSupport(dst G.Value, s *rowSupport, in ...G.Value) (G.Value, error) {
	v, _, err := op.doIntoLazy(dst, s, false, in...)
	return v, err
}

// doIntoLazy is doIntoSupport that, with lazy, leaves the product uncomputed where the dense
// kernels would compute it (productDeferrable, and the sparse path declines it): it then
// returns dst (allocated, its contents unchanged) and deferred = true (Program.DeferProduct).
func (op *matMulOp) doIntoLazy(dst G.Value, s *rowSupport, lazy bool, in ...G.Value) (v G.Value, deferred bool, err error) {
	switch op.dt {
	case tensor.Float32:
		return matMulDo[float32](op, dst, in[0], in[1], s, lazy)
	case tensor.Float64:
		return matMulDo[float64](op, dst, in[0], in[1], s, lazy)
	}
	return nil, false, fmt.Errorf("graph: unsupported dtype %v", op.dt)
}

func matMulDo[T Float](op *matMulOp, dst, av, bv G.Value, s *rowSupport, lazy bool) (G.Value, bool, error) {
	a, err := Elements[T](av)
	if err != nil {
		return nil, false, err
	}
	b, err := Elements[T](bv)
	if err != nil {
		return nil, false, err
	}
	if len(a) != op.m*op.k || len(b) != op.k*op.n {
		return nil, false, fmt.Errorf("graph: %v: operands have %d and %d elements, want %d and %d", op, len(a), len(b), op.m*op.k, op.k*op.n)
	}
	v, c := output[T](dst, op.out)
	if s == nil {
		gemm(op.ta, op.tb, op.m, op.n, op.k, a, b, c)
		return v, false, nil
	}
	var dirty *[]int32
	if s.readOnly && s.clean && len(c) > 0 && s.buf == unsafe.Pointer(&c[0]) {
		dirty = &s.dirty
	}
	s.clean = false // until this product is done (a panic would leave c anything)
	if lazy && productDeferrable[T](op.ta, op.tb, op.m, op.n, op.k) {
		// gemmSupport's own first step, its memo and support included; where it declines,
		// gemmDense would follow
		if s.known = gemmSparse(op.ta, op.tb, op.m, op.n, op.k, a, b, 0, c, &s.rows, dirty, s.left); !s.known {
			return v, true, nil
		}
	} else {
		s.known = gemmSupport(op.ta, op.tb, op.m, op.n, op.k, a, b, 0, c, &s.rows, dirty, s.left)
	}
	s.clean = s.readOnly && s.known && len(c) > 0
	if s.clean {
		s.dirty, s.buf = append(s.dirty[:0], s.rows...), unsafe.Pointer(&c[0])
	}
	return v, false, nil
}

func (op *matMulOp) VJP(in []*G.Node, _, g *G.Node, need []bool) ([]*G.Node, error) {
	a, b := in[0], in[1]
	out := make([]*G.Node, 2)
	var err error
	// C = op(A)·op(B); each case below is dA, dB written as products without transposes.
	switch {
	case !op.ta && !op.tb: // dA = G·Bᵀ, dB = Aᵀ·G
		if need[0] {
			if out[0], err = MatMulT(g, b, false, true); err != nil {
				return nil, err
			}
		}
		if need[1] {
			out[1], err = MatMulT(a, g, true, false)
		}
	case op.ta && !op.tb: // C = AᵀB: dA = B·Gᵀ, dB = A·G
		if need[0] {
			if out[0], err = MatMulT(b, g, false, true); err != nil {
				return nil, err
			}
		}
		if need[1] {
			out[1], err = MatMulT(a, g, false, false)
		}
	case !op.ta && op.tb: // C = ABᵀ: dA = G·B, dB = Gᵀ·A
		if need[0] {
			if out[0], err = MatMulT(g, b, false, false); err != nil {
				return nil, err
			}
		}
		if need[1] {
			out[1], err = MatMulT(g, a, true, false)
		}
	default: // C = AᵀBᵀ: dA = Bᵀ·Gᵀ, dB = Gᵀ·Aᵀ
		if need[0] {
			if out[0], err = MatMulT(b, g, true, true); err != nil {
				return nil, err
			}
		}
		if need[1] {
			out[1], err = MatMulT(g, a, true, true)
		}
	}
	return out, err
}
