package samplers_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hyperflat/hyperflat/samplers"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestAdamStepDeferred: deferring the rows a step does not read, and settling them only
// when a later step reads them (or all of them at random points), gives the weights Step
// gives, to the bit, over forty steps (float32 and float64; PyTorch's form, and Keras's with
// coupled weight decay, whose zero-gradient update depends on the weight itself). A plain
// Step after deferred ones settles first; reading an unsettled row is refused.
func TestAdamStepDeferred(t *testing.T) {
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
			eager, lazy := mk(), mk()
			rng := rand.New(rand.NewPCG(5, 6))
			const r, w = 300, 64
			init := make([]float64, r*w)
			for i := range init {
				init[i] = rng.NormFloat64()
			}
			pe := []*tensor.Dense{tensorOf(dt, init, r, w), tensorOf(dt, init[:w], w)}
			pl := []*tensor.Dense{tensorOf(dt, init, r, w), tensorOf(dt, init[:w], w)}
			same := func(step int, what string) {
				t.Helper()
				for k := range pe {
					a, b := f64s(t, pe[k]), f64s(t, pl[k])
					for i := range a {
						if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
							t.Fatalf("%v keras=%v step %d (%s) parameter %d element %d: %v deferred, %v eager", dt, keras, step, what, k, i, b[i], a[i])
						}
					}
				}
			}
			owes := make([]bool, r) // which rows the deferred steps left behind
			refused := 0
			for step := 0; step < 40; step++ {
				var rows []int32
				gw := make([]float64, r*w)
				for i := 0; i < r; i++ {
					// rows 0–9 are read often, the rest rarely, so that both short and
					// long debts are paid
					if (i < 10 && rng.IntN(2) == 0) || rng.IntN(15) == 0 {
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
				if err := eager.Step(pe, grads); err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(rows, func(i int32) bool { return owes[i] }) {
					// a row this step reads and has not settled is refused, changing nothing
					before := f64s(t, pl[1])
					err := lazy.StepDeferred(pl, grads, [][]int32{rows, nil}, []bool{true, false})
					if err == nil || !strings.Contains(err.Error(), "settle it first") {
						t.Fatalf("step %d: reading unsettled rows: %v", step, err)
					}
					if b := f64s(t, pl[1]); b[0] != before[0] {
						t.Fatal("a refused step changed a parameter")
					}
					refused++
				}
				if err := lazy.Settle(pl, 0, rows); err != nil {
					t.Fatal(err)
				}
				if err := lazy.StepDeferred(pl, grads, [][]int32{rows, nil}, []bool{true, false}); err != nil {
					t.Fatal(err)
				}
				for i := range owes {
					owes[i] = !slices.Contains(rows, int32(i))
				}
				if rng.IntN(8) == 0 {
					if err := lazy.Settle(pl, 0, nil); err != nil {
						t.Fatal(err)
					}
					same(step, "all settled")
					clear(owes)
				}
			}
			if err := lazy.Settle(pl, 0, nil); err != nil {
				t.Fatal(err)
			}
			same(40, "end")
			if refused < 20 {
				t.Fatalf("only %d steps read unsettled rows", refused)
			}
			// deferred steps, then a plain one: it settles everything first
			for step := 0; step < 3; step++ {
				gw := make([]float64, r*w)
				gw[5*w] = 1
				grads := []G.Value{tensorOf(dt, gw, r, w), tensorOf(dt, make([]float64, w), w)}
				if err := eager.Step(pe, grads); err != nil {
					t.Fatal(err)
				}
				if err := lazy.Settle(pl, 0, []int32{5}); err != nil {
					t.Fatal(err)
				}
				if err := lazy.StepDeferred(pl, grads, [][]int32{{5}, nil}, []bool{true, false}); err != nil {
					t.Fatal(err)
				}
			}
			grads := []G.Value{tensorOf(dt, make([]float64, r*w), r, w), tensorOf(dt, make([]float64, w), w)}
			if err := eager.Step(pe, grads); err != nil {
				t.Fatal(err)
			}
			if err := lazy.Step(pl, grads); err != nil {
				t.Fatal(err)
			}
			same(44, "plain Step after deferred ones")
		}
	}
	// rows narrower than a cache line's worth of work are not deferred: the step updates them
	narrow := samplers.NewAdam(1e-2)
	p := []*tensor.Dense{tensorOf(tensor.Float64, make([]float64, 40), 20, 2)}
	g := []G.Value{tensorOf(tensor.Float64, make([]float64, 40), 20, 2)}
	g[0].Data().([]float64)[0], g[0].Data().([]float64)[2] = 1, 1
	for r := range 2 { // row 1 would owe the first step, were it deferred
		if err := narrow.StepDeferred(p, g, [][]int32{{int32(r)}}, []bool{true}); err != nil {
			t.Fatalf("narrow rows: %v", err)
		}
	}
	if p[0].Data().([]float64)[0] == 0 {
		t.Fatal("narrow rows: the step did nothing")
	}
}

// TestAdamSettleErrors: Settle refuses rows that are not increasing indices and a parameter
// index out of range, and reports a weight that its owed updates make non-finite.
func TestAdamSettleErrors(t *testing.T) {
	o := samplers.NewAdam(1e-2)
	const w = 64
	p := []*tensor.Dense{tensorOf(tensor.Float64, make([]float64, 4*w), 4, w)}
	for _, c := range []struct {
		i    int
		rows []int32
	}{{1, nil}, {-1, nil}, {0, []int32{2, 1}}, {0, []int32{4}}} {
		if err := o.Settle(p, c.i, c.rows); err == nil {
			t.Errorf("Settle(%d, %v) accepted", c.i, c.rows)
		}
	}
	ones := make([]float64, 4*w)
	for i := range ones {
		ones[i] = 1
	}
	g := []G.Value{tensorOf(tensor.Float64, ones, 4, w)}
	if err := o.StepRows(p, g, [][]int32{{0, 1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if err := o.StepDeferred(p, g, [][]int32{{0}}, []bool{true}); err != nil {
		t.Fatal(err)
	}
	if err := o.StepDeferred(p, g, [][]int32{{0}}, nil); err == nil {
		t.Error("StepDeferred without deferral flags accepted")
	}

	p[0].Data().([]float64)[2*w] = math.Inf(1) // row 2 owes a step
	if err := o.Settle(p, 0, []int32{1}); err != nil {
		t.Fatal(err)
	}
	if err := o.Settle(p, 0, nil); err == nil || !strings.Contains(err.Error(), "is NaN or infinite") || !errors.Is(err, samplers.ErrNonFinite) {
		t.Errorf("an infinite weight after its owed updates: %v", err)
	}
	// no rows known: a whole step, deferring nothing, whatever lazy says
	if err := o.StepDeferred(p, g, nil, []bool{true}); err != nil {
		t.Errorf("a deferred step without rows: %v", err)
	}
}

// BenchmarkAdamDeferred times Adam on a one-hot first layer at kc1's shape under the AHSC
// authors' protocol (5,420 inputs; batches of 32 rows of 21 inputs, 44 a pass over the data)
// at several widths, per step: eager (StepRows: every weight moves at every step, the
// gradient read in the batch's rows) against deferred (each batch's rows settled, the others
// left owing, every row settled at the pass's end), the choice deferMinWidth makes.
func BenchmarkAdamDeferred(b *testing.B) {
	const in, batches = 5420, 44
	rng := rand.New(rand.NewPCG(13, 14))
	batch := make([][]int32, batches)
	for s := range batch {
		for range 32 * 21 {
			// skewed as a one-hot table's categories are: a few values in most rows,
			// most values in a few
			u := rng.Float64()
			batch[s] = append(batch[s], int32(float64(in)*u*u*u))
		}
		slices.Sort(batch[s])
		batch[s] = slices.Compact(batch[s])
	}
	for _, width := range []int{16, 64, 128, 256, 1024} {
		for _, deferred := range []bool{false, true} {
			name := map[bool]string{false: "eager", true: "deferred"}[deferred]
			b.Run(name+"/width="+strconv.Itoa(width), func(b *testing.B) {
				o := samplers.NewKerasAdam(1e-3)
				p := tensor.New(tensor.WithShape(in, width), tensor.WithBacking(make([]float32, in*width)))
				gd := make([]float32, in*width)
				g := tensor.New(tensor.WithShape(in, width), tensor.WithBacking(gd))
				params, grads := []*tensor.Dense{p}, []G.Value{g}
				steps := 0
				for b.Loop() {
					s := steps % batches
					rows := [][]int32{batch[s]}
					clear(gd)
					for _, r := range batch[s] {
						for j := range width {
							gd[int(r)*width+j] = 1e-3 * float32(j%5+1)
						}
					}
					var err error
					if deferred {
						if err = o.Settle(params, 0, batch[s]); err == nil {
							err = o.StepDeferred(params, grads, rows, []bool{true})
						}
						if err == nil && s == batches-1 {
							err = o.Settle(params, 0, nil)
						}
					} else {
						err = o.StepRows(params, grads, rows)
					}
					if err != nil {
						b.Fatal(err)
					}
					steps++
				}
			})
		}
	}
}
