package samplers_test

import (
	"math"
	"testing"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// dense returns a new tensor of dtype T holding vals.
func dense[T graph.Float](vals []float64, shape ...int) *tensor.Dense {
	b := make([]T, len(vals))
	for i, v := range vals {
		b[i] = T(v)
	}
	if len(shape) == 0 {
		shape = []int{len(vals)}
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(b))
}

// f64s copies a tensor's elements to float64s.
func f64s(t testing.TB, v G.Value) []float64 {
	t.Helper()
	xs, err := graph.ToFloat64s(v)
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

// close reports whether got is within rel·max(1, |want|) of want.
func closeTo(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}
