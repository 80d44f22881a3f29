package samplers

import (
	"errors"
	"fmt"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Deferrer is a RowStepper that can leave the rows of a parameter outside a step's rows
// behind, owing the update a gradient of zeros makes there (Adam's moments move every weight
// at every step), and apply the owed updates later, to the bits the steps would have given.
// A first layer behind one-hot inputs is read, at a step, only in the rows the batch's inputs
// select (graph.Program.ReadOnlyThroughProduct), so its other rows can wait until a batch
// selects them: k owed steps of a row then cost one pass over its memory, not k.
//
// The caller must Settle the rows a computation reads before it reads them, and every row
// (rows nil) before anything else reads the parameters. Step and StepRows settle every row
// first.
type Deferrer interface {
	RowStepper
	// StepDeferred is StepRows, except that for each i with lazy[i] and rows[i] not nil, the
	// rows of parameter i outside rows[i] may be left as they are, owing this step's update
	// (lazy permits; the optimizer may update them all where that costs less). It fails,
	// changing nothing, if a row in rows[i] owes updates.
	StepDeferred(params []*tensor.Dense, grads []G.Value, rows [][]int32, lazy []bool) error
	// Settle applies the updates rows of parameter i owe (every row's when rows is nil);
	// rows are increasing indices into its leading dimension. It fails if a settled
	// parameter entry is NaN or infinite.
	Settle(params []*tensor.Dense, i int, rows []int32) error
}

var _ Deferrer = (*Adam)(nil)

// deferMinWidth is the narrowest row (in elements) whose updates Adam defers. A narrower
// layer's moments stay in a core's cache, where a pass over all of them at every step costs
// about what replaying a few weights at a time row by row does (graph.AdamZeroSteps).
// BenchmarkAdamDeferred (kc1's 5,420 one-hot inputs, skewed batches, one core of a Zen 1 EPYC,
// ms a step, eager → deferred; the benchmark clears the whole gradient in both): width 64
// 0.75–0.78 → 0.75–0.79, 128 1.66–1.68 → 1.54–2.54, 256 4.7–4.9 → 2.9–3.8, 1,024 14.9–15.2 →
// 11.6–12.2; a kc1 authors'-protocol trial at width 128 (20 epochs) takes 2.06–2.11 user-s
// deferred from 64 on, 2.23–2.46 from 256 on, so the floor stays at 64.
const deferMinWidth = 64

// ErrNonFinite is wrapped by Settle's error when an update it applies leaves a NaN or
// infinite parameter entry.
var ErrNonFinite = errors.New("samplers: a parameter entry is NaN or infinite")

// StepDeferred is Step with deferred updates (see Deferrer).
func (o *Adam) StepDeferred(params []*tensor.Dense, grads []G.Value, rows [][]int32, lazy []bool) error {
	if lazy == nil {
		lazy = []bool{} // not StepRows: the length check refuses it
	}
	return o.stepDeferred(params, grads, rows, lazy)
}

// Settle applies what rows of parameter i owe (see Deferrer).
func (o *Adam) Settle(params []*tensor.Dense, i int, rows []int32) error {
	if i < 0 || i >= len(params) {
		return fmt.Errorf("samplers: Settle of parameter %d of %d", i, len(params))
	}
	if err := checkRowsOf(params[i], i, rows); err != nil {
		return err
	}
	if o.owes == nil || i >= len(o.owes.done) || o.owes.done[i] == nil {
		return nil
	}
	var err error
	if params[i].Dtype() == tensor.Float32 {
		err = settle[float32](o, params, i, rows)
	} else {
		err = settle[float64](o, params, i, rows)
	}
	logStepless(&o.owes)
	return err
}

// owing is what an Adam's deferred steps left behind.
type owing struct {
	// done[i][r] is the number of steps row r of parameter i has had; done[i] is nil when
	// every row of parameter i is up to date.
	done [][]int32
	base int // the step (counted from 0) whose constants are cs[0]
	cs   any // *graph.AdamSteps[T]: the constants of steps base, base+1, …
}

// settleForStep prepares an Adam step in which the parameters i with deferred(i) leave rows
// behind: those must not owe anything in the rows the step updates, and the others take
// everything they owe.
func settleForStep[T graph.Float](o *Adam, params []*tensor.Dense, rows [][]int32, deferred func(int) bool) error {
	some := false
	for i := range params {
		some = some || deferred(i)
	}
	if o.owes == nil {
		if !some {
			return nil
		}
		o.owes = &owing{done: make([][]int32, len(params)), base: o.st.steps, cs: &graph.AdamSteps[T]{}}
	}
	for i := range params {
		done := o.owes.done[i]
		if done == nil {
			continue
		}
		if !deferred(i) {
			if err := settle[T](o, params, i, nil); err != nil {
				return err
			}
			continue
		}
		for _, r := range rows[i] {
			if int(done[r]) != o.st.steps {
				return fmt.Errorf("samplers: row %d of parameter %d owes %d deferred updates and was read by this step; settle it first", r, i, o.st.steps-int(done[r]))
			}
		}
	}
	return nil
}

// stepOwedRows updates the rows of parameter i in rows (p, its gradient g and moments m, v,
// in rows of width elements) at step steps with constants c, and leaves its other rows owing
// the step. It reports whether an updated entry is NaN or infinite.
func stepOwedRows[T graph.Float](w *owing, i int, p, g, m, v []T, width int, rows []int32, steps int, c graph.AdamCoeffs[T]) (bad bool) {
	done := w.done[i]
	if done == nil {
		done = make([]int32, len(p)/width)
		for r := range done {
			done[r] = int32(steps)
		}
		w.done[i] = done
	}
	for t := 0; t < len(rows); {
		r0, r1 := int(rows[t]), int(rows[t])+1
		for t++; t < len(rows) && int(rows[t]) == r1; t++ {
			r1++
		}
		a, b := r0*width, r1*width
		bad = graph.AdamUpdate(p[a:b], g[a:b], m[a:b], v[a:b], c) || bad
		for r := r0; r < r1; r++ {
			done[r] = int32(steps + 1)
		}
	}
	return bad
}

// logStep records the constants of the step just taken, which rows may owe, or forgets the
// log when none does.
func logStep[T graph.Float](w **owing, c graph.AdamCoeffs[T]) {
	if logStepless(w); *w != nil {
		(*w).cs.(*graph.AdamSteps[T]).Append(c)
	}
}

// settle applies what rows of parameter i owe (every row's when rows is nil), in runs of
// consecutive rows that owe the same steps.
func settle[T graph.Float](o *Adam, params []*tensor.Dense, i int, rows []int32) error {
	w := o.owes
	sl, err := get[T](&o.st, params, 2)
	if err != nil {
		return err
	}
	p, err := graph.Elements[T](params[i])
	if err != nil {
		return fmt.Errorf("samplers: parameter %d: %w", i, err)
	}
	m, v, width, done := sl[0][i], sl[1][i], rowWidth(params[i]), w.done[i]
	cs := w.cs.(*graph.AdamSteps[T])
	bad := false
	replay := func(r0, r1 int) {
		if d := int(done[r0]); d < o.st.steps {
			a, b := r0*width, r1*width
			bad = cs.ZeroSteps(p[a:b], m[a:b], v[a:b], d-w.base, o.st.steps-w.base) || bad
			for r := r0; r < r1; r++ {
				done[r] = int32(o.st.steps)
			}
		}
	}
	if rows == nil {
		for r0 := 0; r0 < len(done); {
			r1 := r0 + 1
			for r1 < len(done) && done[r1] == done[r0] {
				r1++
			}
			replay(r0, r1)
			r0 = r1
		}
		w.done[i] = nil
	} else {
		for t := 0; t < len(rows); {
			r0, r1 := int(rows[t]), int(rows[t])+1
			for t++; t < len(rows) && int(rows[t]) == r1 && done[r1] == done[r0]; t++ {
				r1++
			}
			replay(r0, r1)
		}
	}
	if bad {
		return fmt.Errorf("%w: parameter %d, after its deferred updates", ErrNonFinite, i)
	}
	return nil
}

// logStepless forgets the log of constants once no row owes a step.
func logStepless(w **owing) {
	for _, d := range (*w).done {
		if d != nil {
			return
		}
	}
	*w = nil
}
