package samplers_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAdamStepRows: steps told each gradient's nonzero rows leave the weights as Step does,
// to the bit, over several steps whose rows change (float32 and float64, Keras's and
// PyTorch's forms); a non-finite entry in a named row fails with Step's error, and rows
// that are not increasing indices of the leading dimension are refused.
func TestAdamStepRows(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, keras := range []bool{false, true} {
			mk := func() *samplers.Adam {
				if keras {
					o := samplers.NewKerasAdam(1e-2)
					o.WeightDecay = 1e-3
					return o
				}
				return samplers.NewAdam(1e-2)
			}
			dense, sparse := mk(), mk()
			rng := rand.New(rand.NewPCG(3, 4))
			const r, w = 300, 12
			init := make([]float64, r*w)
			for i := range init {
				init[i] = rng.NormFloat64()
			}
			pd := []*tensor.Dense{tensorOf(dt, init, r, w), tensorOf(dt, init[:w], w)}
			ps := []*tensor.Dense{tensorOf(dt, init, r, w), tensorOf(dt, init[:w], w)}
			for step := 0; step < 5; step++ {
				var rows []int32
				gw := make([]float64, r*w)
				for i := 0; i < r; i++ {
					if rng.IntN(10) == 0 {
						rows = append(rows, int32(i))
						for j := 0; j < w; j++ {
							gw[i*w+j] = rng.NormFloat64()
						}
					}
				}
				gb := make([]float64, w)
				for j := range gb {
					gb[j] = rng.NormFloat64()
				}
				grads := []G.Value{tensorOf(dt, gw, r, w), tensorOf(dt, gb, w)}
				if err := dense.Step(pd, grads); err != nil {
					t.Fatal(err)
				}
				if err := sparse.StepRows(ps, grads, [][]int32{rows, nil}); err != nil {
					t.Fatal(err)
				}
				for k := range pd {
					a, b := f64s(t, pd[k]), f64s(t, ps[k])
					for i := range a {
						if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
							t.Fatalf("%v keras=%v step %d parameter %d element %d: %v with rows, %v without", dt, keras, step, k, i, b[i], a[i])
						}
					}
				}
			}
			// a NaN in a named row: Step's error, nothing changed
			before := f64s(t, ps[0])
			gw := make([]float64, r*w)
			gw[7*w+3] = math.NaN()
			grads := []G.Value{tensorOf(dt, gw, r, w), tensorOf(dt, make([]float64, w), w)}
			errRows := sparse.StepRows(ps, grads, [][]int32{{2, 7}, nil})
			errDense := dense.Step(pd, grads)
			if errRows == nil || errDense == nil || errRows.Error() != errDense.Error() {
				t.Fatalf("non-finite gradient: %v with rows, %v without", errRows, errDense)
			}
			if !slices.Equal(before, f64s(t, ps[0])) {
				t.Fatal("a refused step changed the weights")
			}
			zero := []G.Value{tensorOf(dt, make([]float64, r*w), r, w), tensorOf(dt, make([]float64, w), w)}
			for _, bad := range []struct {
				rows [][]int32
				want string
			}{
				{[][]int32{{1}}, "row lists for"},
				{[][]int32{{5, 5}, nil}, "not increasing"},
				{[][]int32{{9, 2}, nil}, "not increasing"},
				{[][]int32{{r}, nil}, "not increasing"},
				{[][]int32{{-1}, nil}, "not increasing"},
				{[][]int32{nil, {0}}, ""}, // a 1-D parameter's rows are its elements: allowed
			} {
				err := sparse.StepRows(ps, zero, bad.rows)
				if bad.want == "" {
					if err != nil {
						t.Fatalf("rows %v: %v", bad.rows, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), bad.want) {
					t.Fatalf("rows %v: error %v; want one saying %q", bad.rows, err, bad.want)
				}
			}
		}
	}
}

func tensorOf(dt tensor.Dtype, vals []float64, shape ...int) *tensor.Dense {
	if dt == tensor.Float32 {
		return dense[float32](vals, shape...)
	}
	return dense[float64](vals, shape...)
}
