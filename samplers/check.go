package samplers

import (
	"errors"
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// checkParams checks that params is a non-empty list of contiguous float32 or float64
// tensors of one dtype, which it returns.
func checkParams(params []*tensor.Dense) (tensor.Dtype, error) {
	if len(params) == 0 {
		return tensor.Dtype{}, errors.New("samplers: no parameters")
	}
	var dt tensor.Dtype
	for i, p := range params {
		if p == nil {
			return tensor.Dtype{}, fmt.Errorf("samplers: parameter %d is nil", i)
		}
		if p.IsMaterializable() || p.RequiresIterator() {
			return tensor.Dtype{}, fmt.Errorf("samplers: parameter %d is a view, transposed or masked; it must own contiguous data to be updated in place", i)
		}
		switch d := p.Dtype(); {
		case d != tensor.Float32 && d != tensor.Float64:
			return tensor.Dtype{}, fmt.Errorf("samplers: parameter %d has dtype %v; want float32 or float64", i, d)
		case i == 0:
			dt = d
		case d != dt:
			return tensor.Dtype{}, fmt.Errorf("samplers: parameter %d has dtype %v but parameter 0 has %v; all parameters must share one dtype", i, d, dt)
		}
	}
	return dt, nil
}

// checkGrads checks that grads has one value per parameter, of the parameters' dtype and
// of the parameter's shape (a one-element parameter also takes a scalar).
func checkGrads(params []*tensor.Dense, grads []G.Value, dt tensor.Dtype) error {
	if len(grads) != len(params) {
		return fmt.Errorf("samplers: %d gradients for %d parameters", len(grads), len(params))
	}
	for i, g := range grads {
		if g == nil {
			return fmt.Errorf("samplers: gradient %d is nil", i)
		}
		if g.Dtype() != dt {
			return fmt.Errorf("samplers: gradient %d has dtype %v; parameter %d has %v", i, g.Dtype(), i, dt)
		}
		ps, gs := params[i].Shape(), g.Shape()
		if !ps.Eq(gs) && !(ps.TotalSize() == 1 && g.Size() == 1) {
			return fmt.Errorf("samplers: gradient %d has shape %v; parameter %d has shape %v", i, gs, i, ps)
		}
	}
	return nil
}

// check validates a parameter list with its gradients and returns their dtype.
func check(params []*tensor.Dense, grads []G.Value) (tensor.Dtype, error) {
	dt, err := checkParams(params)
	if err != nil {
		return tensor.Dtype{}, err
	}
	return dt, checkGrads(params, grads, dt)
}

// values returns the elements of a value as []T, reading a view or a lazily transposed
// tensor in its logical (row-major) order.
func values[T graph.Float](v G.Value) ([]T, error) {
	if d, ok := v.(*tensor.Dense); ok && d.IsMaterializable() {
		v = d.Materialize().(*tensor.Dense)
	}
	return graph.Elements[T](v)
}

// finiteGrads fails naming the first parameter whose gradient (validated by check) has
// a NaN or infinite entry.
func finiteGrads[T graph.Float](grads []G.Value) error {
	for i, g := range grads {
		e, err := values[T](g)
		if err != nil {
			return fmt.Errorf("samplers: gradient %d: %w", i, err)
		}
		if j := firstNonFinite(e); j >= 0 {
			return fmt.Errorf("samplers: gradient of parameter %d has a non-finite entry (%v at flat index %d)", i, e[j], j)
		}
	}
	return nil
}

// each calls f with the backing slice of each parameter and its gradient's elements, in
// parameter order. params and grads have been validated by check (and finiteGrads), so
// it does not fail once it has called f.
func each[T graph.Float](params []*tensor.Dense, grads []G.Value, f func(i int, p, g []T)) error {
	for i, p := range params {
		pe, err := graph.Elements[T](p)
		if err != nil {
			return fmt.Errorf("samplers: parameter %d: %w", i, err)
		}
		ge, err := values[T](grads[i])
		if err != nil {
			return fmt.Errorf("samplers: gradient %d: %w", i, err)
		}
		f(i, pe, ge)
	}
	return nil
}

func firstNonFinite[T graph.Float](xs []T) int {
	for j, x := range xs {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return j
		}
	}
	return -1
}

// finite reports whether x is a finite number.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
