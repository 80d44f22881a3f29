package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// TestSumColumnsIsTheWalk checks sumColumns, SumTo's path for a bias's gradient, against the
// walk it replaces, bit for bit, on rows narrower and wider than narrowColumns (−0 included).
func TestSumColumnsIsTheWalk(t *testing.T) {
	testSumColumns[float32](t)
	testSumColumns[float64](t)
}

func testSumColumns[T Float](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []int{2, 3, 16, narrowColumns - 1, narrowColumns, 100} {
		for _, r := range []int{1, 2, 33, 256} {
			x := make([]T, r*c)
			for i := range x {
				x[i] = T(rng.NormFloat64() * math.Exp(4*rng.NormFloat64()))
				if i%7 == 0 {
					x[i] = T(math.Copysign(0, -1))
				}
			}
			src, keep := tensor.Shape{r, c}, tensor.Shape{1, c}
			want, got := make([]T, c), make([]T, c)
			sumToWalk(keep, src, x, want)
			sumColumns(x, got, r)
			for j := range want {
				if math.Float64bits(float64(want[j])) != math.Float64bits(float64(got[j])) {
					t.Fatalf("%T %d×%d column %d: %v, want the walk's %v", want[j], r, c, j, got[j], want[j])
				}
			}
		}
	}
}

// TestBroadcastRows checks BroadcastTo's path for a row over a batch (broadcastRows), on
// blocks of rows below and past broadcastBlock, and that a scalar over a matrix (keep 1×1,
// the walk's) is not taken for a row.
func TestBroadcastRows(t *testing.T) {
	for _, c := range []int{1, 2, 16, 100, 1000} {
		for _, r := range []int{1, 2, 3, 33, 256} {
			testBroadcast(t, r, c, c)
			testBroadcast(t, r, c, 1)
		}
	}
}

func testBroadcast(t *testing.T, r, c, k int) {
	{
		{
			x := make([]float32, k)
			for i := range x {
				x[i] = float32(i) - 0.5
			}
			out, keep := tensor.Shape{r, c}, tensor.Shape{1, k}
			op := &broadcastToOp{base: newBase("BroadcastTo", "", out), keep: keep}
			op.dt = tensor.Float32
			v, err := broadcastToDo[float32](op, nil, tensor.New(tensor.WithShape(1, k), tensor.WithBacking(x)))
			if err != nil {
				t.Fatal(err)
			}
			y, err := Elements[float32](v)
			if err != nil {
				t.Fatal(err)
			}
			if len(y) != r*c {
				t.Fatalf("%d×%d: %d elements", r, c, len(y))
			}
			for i, e := range y {
				if e != x[i%c%k] {
					t.Fatalf("%d×%d from 1×%d: element %d is %v, want %v", r, c, k, i, e, x[i%c%k])
				}
			}
		}
	}
}
