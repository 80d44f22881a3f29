package samplers

import (
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
	"gorgonia.org/tensor"
)

// state is an optimizer's per-parameter state: a fixed number of buffers ("slots") per
// parameter, in the parameters' dtype, sized on the first step.
type state struct {
	dt     tensor.Dtype
	shapes []tensor.Shape
	steps  int // completed steps
	slots  any // *slots[float32] or *slots[float64]
}

// slots[k][i] is slot k of parameter i.
type slots[T graph.Float] [][][]T

// get returns the slots of params, allocating n zeroed slots per parameter on the first
// call, and fails if the parameter list has changed since.
func get[T graph.Float](s *state, params []*tensor.Dense, n int) (slots[T], error) {
	if s.slots == nil {
		sl := make(slots[T], n)
		for k := range sl {
			sl[k] = make([][]T, len(params))
			for i, p := range params {
				sl[k][i] = make([]T, p.Shape().TotalSize())
			}
		}
		s.shapes = make([]tensor.Shape, len(params))
		for i, p := range params {
			s.shapes[i] = p.Shape().Clone()
		}
		s.dt = params[0].Dtype()
		s.slots = sl
		return sl, nil
	}
	if dt := params[0].Dtype(); dt != s.dt {
		return nil, fmt.Errorf("samplers: parameters are %v but the optimizer state is %v; call Reset to start over", dt, s.dt)
	}
	if len(params) != len(s.shapes) {
		return nil, fmt.Errorf("samplers: %d parameters but the optimizer state holds %d; call Reset to start over", len(params), len(s.shapes))
	}
	for i, p := range params {
		if !p.Shape().Eq(s.shapes[i]) {
			return nil, fmt.Errorf("samplers: parameter %d has shape %v but the optimizer state has %v; call Reset to start over", i, p.Shape(), s.shapes[i])
		}
	}
	sl := s.slots.(slots[T])
	if len(sl) != n {
		return nil, fmt.Errorf("samplers: the optimizer's settings changed its state (%d buffers per parameter, now %d); call Reset to start over", len(sl), n)
	}
	return sl, nil
}
