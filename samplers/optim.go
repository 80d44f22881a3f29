package samplers

import (
	"errors"
	"fmt"
	"math"

	"github.com/hyperflat/hyperflat/graph"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Optimizer updates parameters in place from their gradients. grads[i] is the gradient
// with respect to params[i] and has its shape and dtype. All parameters of one list share
// one dtype, float32 or float64.
//
// Step checks every gradient before it changes anything: a shape or dtype mismatch, or a
// NaN or infinite gradient entry, is an error naming the parameter and leaves params (and
// the optimizer's state) unchanged. Optimizers with state size it on the first Step and
// fail if a later Step passes a different list of shapes.
type Optimizer interface {
	Step(params []*tensor.Dense, grads []G.Value) error
}

var (
	_ Optimizer = (*SGD)(nil)
	_ Optimizer = (*Adam)(nil)
	_ Optimizer = (*RMSprop)(nil)
	_ Optimizer = (*Langevin)(nil)
)

// SGD is stochastic gradient descent with momentum, with PyTorch's torch.optim.SGD
// semantics: with d = g + WeightDecay·θ,
//
//	b ← d (first step),  b ← Momentum·b + (1−Dampening)·d (later steps)
//	d ← d + Momentum·b (Nesterov) or d ← b (otherwise; no momentum buffer when Momentum = 0)
//	θ ← θ − LR·d
//
// The zero value with LR set is plain gradient descent. Set the fields before the first Step.
type SGD struct {
	LR          float64
	Momentum    float64
	Dampening   float64
	Nesterov    bool    // needs Momentum > 0 and Dampening = 0, as in PyTorch
	WeightDecay float64 // L2 penalty added to the gradient (coupled)

	st state
}

// Reset forgets the momentum buffers, so that the next Step starts afresh (with any
// parameter list).
func (o *SGD) Reset() { o.st = state{} }

// Step applies one SGD update to params in place.
func (o *SGD) Step(params []*tensor.Dense, grads []G.Value) error {
	switch {
	case !(o.LR >= 0) || math.IsInf(o.LR, 0):
		return fmt.Errorf("samplers: SGD learning rate %v; want a finite LR ≥ 0", o.LR)
	case !(o.Momentum >= 0) || math.IsInf(o.Momentum, 0):
		return fmt.Errorf("samplers: SGD momentum %v; want finite ≥ 0", o.Momentum)
	case !finite(o.Dampening) || !finite(o.WeightDecay):
		return errors.New("samplers: SGD dampening and weight decay must be finite")
	case o.Nesterov && (o.Momentum <= 0 || o.Dampening != 0):
		return errors.New("samplers: Nesterov momentum needs Momentum > 0 and Dampening = 0")
	}
	dt, err := check(params, grads)
	if err != nil {
		return err
	}
	if dt == tensor.Float32 {
		return sgdStep[float32](o, params, grads)
	}
	return sgdStep[float64](o, params, grads)
}

func sgdStep[T graph.Float](o *SGD, params []*tensor.Dense, grads []G.Value) error {
	if err := finiteGrads[T](grads); err != nil {
		return err
	}
	n := 0
	if o.Momentum != 0 {
		n = 1
	}
	sl, err := get[T](&o.st, params, n)
	if err != nil {
		return err
	}
	lr, mom, damp, wd := T(o.LR), T(o.Momentum), T(o.Dampening), T(o.WeightDecay)
	first := o.st.steps == 0
	err = each(params, grads, func(i int, p, g []T) {
		if n == 0 {
			for j := range p {
				d := g[j]
				if wd != 0 {
					d += wd * p[j]
				}
				p[j] -= lr * d
			}
			return
		}
		b := sl[0][i]
		for j := range p {
			d := g[j]
			if wd != 0 {
				d += wd * p[j]
			}
			if first {
				b[j] = d
			} else {
				b[j] = mom*b[j] + (1-damp)*d
			}
			if o.Nesterov {
				d += mom * b[j]
			} else {
				d = b[j]
			}
			p[j] -= lr * d
		}
	})
	o.st.steps++
	return err
}

// Adam is the Adam optimizer (Kingma & Ba 2015) with PyTorch's torch.optim.Adam semantics
// (bias-corrected, ε added outside the square root, amsgrad off): with g ← g +
// WeightDecay·θ and step t = 1, 2, …,
//
//	m ← m + (1−β1)(g − m),  v ← β2·v + (1−β2)·g²
//	θ ← θ − (LR / (1−β1ᵗ)) · m / (√v / √(1−β2ᵗ) + ε)
//
// Use NewAdam for PyTorch's defaults. Keras's Adam (keras.optimizers.Adam, ε = 1e-7) and
// scikit-learn's (the adam solver of MLPClassifier) add ε elsewhere: set EpsHat, or use
// NewKerasAdam. Decoupled (AdamW-style) decay is DecoupledDecay, applied after Step.
type Adam struct {
	LR           float64
	Beta1, Beta2 float64
	Eps          float64
	WeightDecay  float64 // L2 penalty added to the gradient (coupled), as in torch.optim.Adam
	// EpsHat adds Eps to the uncorrected √v and folds both bias corrections into the step
	// size (Kingma & Ba's efficient form, their ε̂), as Keras and scikit-learn compute Adam:
	//
	//	θ ← θ − α·m / (√v + ε),  α = LR·√(1−β2ᵗ) / (1−β1ᵗ)
	//
	// with α computed in the parameters' float type, as Keras does. It is PyTorch's update
	// with ε·√(1−β2ᵗ) in place of ε: the two differ where √v is within a few ε, early in
	// training (√(1−β2ᵗ) ≈ 0.03 at t = 1) and for weights whose gradients are small or rare.
	EpsHat bool

	st   state
	bad  int    // NonFiniteAfterStep
	owes *owing // what StepDeferred left behind (defer.go)
	// proved is what TellFinite said of the next step's gradients, when told
	proved []bool
	told   bool
	// prods is what TellProducts said of them, when toldProds
	prods     []Product
	toldProds bool
}

// NewAdam returns Adam with learning rate lr and PyTorch's defaults β1 = 0.9, β2 = 0.999,
// ε = 1e-8 and no weight decay.
func NewAdam(lr float64) *Adam { return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8} }

// NewKerasAdam returns keras.optimizers.Adam's defaults at learning rate lr: β1 = 0.9,
// β2 = 0.999, ε̂ = 1e-7 (EpsHat) and no weight decay.
func NewKerasAdam(lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-7, EpsHat: true}
}

// Reset forgets the moment estimates, the step count, any deferred updates and what TellFinite
// said.
func (o *Adam) Reset() { o.st, o.owes, o.told, o.toldProds = state{}, nil, false, false }

// TellFinite says which gradients of the next step the caller has proved finite (see
// FiniteTeller); that step fails if their number is not the gradients'.
func (o *Adam) TellFinite(proved []bool) { o.proved, o.told = append(o.proved[:0], proved...), true }

// TellProducts says which gradients of the next step are given as products (see
// ProductTeller); that step fails if their number is not the gradients', or if a product is
// not proved finite (TellFinite) or comes with nonzero rows.
func (o *Adam) TellProducts(prods []Product) {
	o.prods, o.toldProds = append(o.prods[:0], prods...), true
}

// Step applies one Adam update to params in place.
func (o *Adam) Step(params []*tensor.Dense, grads []G.Value) error {
	return o.StepRows(params, grads, nil)
}

// StepRows is Step given, for each gradient, the rows outside which it is zero, or nil (see
// RowStepper); rows itself may be nil. It reads no gradient outside those rows and leaves
// params and the moments as Step does, to the bit.
func (o *Adam) StepRows(params []*tensor.Dense, grads []G.Value, rows [][]int32) error {
	return o.stepDeferred(params, grads, rows, nil)
}

// stepDeferred is StepDeferred, and with lazy nil StepRows.
func (o *Adam) stepDeferred(params []*tensor.Dense, grads []G.Value, rows [][]int32, lazy []bool) error {
	var proved []bool
	if o.told {
		proved, o.told = o.proved, false
	}
	var prods []Product
	if o.toldProds {
		prods, o.toldProds = o.prods, false
	}
	switch {
	case !(o.LR >= 0) || math.IsInf(o.LR, 0):
		return fmt.Errorf("samplers: Adam learning rate %v; want a finite LR ≥ 0", o.LR)
	case !(o.Beta1 >= 0 && o.Beta1 < 1) || !(o.Beta2 >= 0 && o.Beta2 < 1):
		return fmt.Errorf("samplers: Adam betas (%v, %v); want each in [0, 1)", o.Beta1, o.Beta2)
	case !(o.Eps >= 0) || math.IsInf(o.Eps, 0) || !finite(o.WeightDecay):
		return errors.New("samplers: Adam ε must be finite and ≥ 0, and weight decay finite")
	}
	dt, err := check(params, grads)
	if err != nil {
		return err
	}
	if err := checkRows(params, rows); err != nil {
		return err
	}
	if lazy != nil && len(lazy) != len(params) {
		return fmt.Errorf("samplers: %d deferral flags for %d parameters", len(lazy), len(params))
	}
	if proved != nil && len(proved) != len(grads) {
		return fmt.Errorf("samplers: TellFinite gave %d flags for %d gradients", len(proved), len(grads))
	}
	if dt == tensor.Float32 {
		return adamStep[float32](o, params, grads, rows, lazy, proved, prods)
	}
	return adamStep[float64](o, params, grads, rows, lazy, proved, prods)
}

func adamStep[T graph.Float](o *Adam, params []*tensor.Dense, grads []G.Value, rows [][]int32, lazy, proved []bool, prods []Product) error {
	if err := checkProducts[T](params, rows, proved, prods); err != nil {
		return err
	}
	if err := fastFiniteGrads[T](params, grads, rows, proved); err != nil {
		return err
	}
	sl, err := get[T](&o.st, params, 2)
	if err != nil {
		return err
	}
	// which parameters leave rows behind at this step (lazy, rows known); the others first
	// take what they owe, so that this step finds them as Step would
	deferred := func(i int) bool {
		return lazy != nil && lazy[i] && rowsOf(rows, i) != nil && rowWidth(params[i]) >= deferMinWidth
	}
	if err := settleForStep[T](o, params, rows, deferred); err != nil {
		return err
	}
	c := adamCoeffs[T](o)
	o.bad = -1
	err = each(params, grads, func(i int, p, g []T) {
		// the vector kernel computes exactly the scalar update of the type's doc comment
		var bad bool
		switch r := rowsOf(rows, i); {
		case prods != nil && prods[i].A != nil:
			a, b, _ := productOperands[T](prods[i]) // checked above
			bad = graph.AdamUpdateProduct(p, sl[0][i], sl[1][i], a, b, prods[i].A.Shape()[0], c)
		case deferred(i):
			bad = stepOwedRows(o.owes, i, p, g, sl[0][i], sl[1][i], rowWidth(params[i]), r, o.st.steps, c)
		case r != nil:
			bad = graph.AdamUpdateRows(p, g, sl[0][i], sl[1][i], rowWidth(params[i]), r, c)
		default:
			bad = graph.AdamUpdate(p, g, sl[0][i], sl[1][i], c)
		}
		if bad && o.bad < 0 {
			o.bad = i
		}
	})
	if o.owes != nil {
		logStep(&o.owes, c)
	}
	o.st.steps++
	return err
}

// adamCoeffs are the constants of o's next step.
func adamCoeffs[T graph.Float](o *Adam) graph.AdamCoeffs[T] {
	t := float64(o.st.steps + 1)
	c := graph.AdamCoeffs[T]{
		B1c: T(1 - o.Beta1), B2: T(o.Beta2), B2c: T(1 - o.Beta2),
		Step: T(o.LR / (1 - math.Pow(o.Beta1, t))), Bc2: T(math.Sqrt(1 - math.Pow(o.Beta2, t))),
		Eps: T(o.Eps), WD: T(o.WeightDecay),
	}
	if o.EpsHat {
		// keras.optimizers.Adam.update_step: alpha = lr·sqrt(1 − β2ᵗ) / (1 − β1ᵗ), every
		// factor in the variable's dtype (scikit-learn's float64 is the same expression)
		b1t, b2t := T(math.Pow(float64(T(o.Beta1)), t)), T(math.Pow(float64(T(o.Beta2)), t))
		c.Step, c.Bc2, c.Hat = T(o.LR)*T(math.Sqrt(float64(1-b2t)))/(1-b1t), 1, true
	}
	return c
}

// NonFiniteAfterStep is the index of the first parameter the last Step left with a NaN or
// infinite entry, or −1 (see Checked).
func (o *Adam) NonFiniteAfterStep() int { return o.bad }

// RMSprop is the RMSprop optimizer with PyTorch's torch.optim.RMSprop semantics, the outer
// (hyperparameter) optimizer of Cherian et al. With g ← g + WeightDecay·θ,
//
//	s ← α·s + (1−α)·g²
//	a ← a + (1−α)(g − a),  r = √(s − a²) + ε   (Centered)
//	r = √s + ε                                  (otherwise)
//	b ← Momentum·b + g/r,  θ ← θ − LR·b          (Momentum > 0)
//	θ ← θ − LR·g/r                               (otherwise)
//
// with s, a and b starting at zero. (s − a² is clamped at zero against rounding.) The update
// is graph.RMSpropUpdate, whose pass notes a non-finite result (Checked).
// Use NewRMSprop for PyTorch's defaults.
type RMSprop struct {
	LR          float64
	Alpha       float64
	Eps         float64
	Momentum    float64
	Centered    bool
	WeightDecay float64 // L2 penalty added to the gradient (coupled)

	st  state
	bad int // NonFiniteAfterStep
}

// NewRMSprop returns RMSprop with learning rate lr and PyTorch's defaults α = 0.99,
// ε = 1e-8, no momentum, not centered (PyTorch's default lr is 0.01).
func NewRMSprop(lr float64) *RMSprop { return &RMSprop{LR: lr, Alpha: 0.99, Eps: 1e-8} }

// Reset forgets the running averages and momentum buffers.
func (o *RMSprop) Reset() { o.st = state{} }

// Step applies one RMSprop update to params in place.
func (o *RMSprop) Step(params []*tensor.Dense, grads []G.Value) error {
	switch {
	case !(o.LR >= 0) || math.IsInf(o.LR, 0):
		return fmt.Errorf("samplers: RMSprop learning rate %v; want a finite LR ≥ 0", o.LR)
	case !(o.Alpha >= 0 && o.Alpha < 1):
		return fmt.Errorf("samplers: RMSprop α %v; want it in [0, 1)", o.Alpha)
	case !(o.Eps >= 0) || math.IsInf(o.Eps, 0):
		return fmt.Errorf("samplers: RMSprop ε %v; want finite ≥ 0", o.Eps)
	case !(o.Momentum >= 0) || math.IsInf(o.Momentum, 0) || !finite(o.WeightDecay):
		return errors.New("samplers: RMSprop momentum must be finite and ≥ 0, and weight decay finite")
	}
	dt, err := check(params, grads)
	if err != nil {
		return err
	}
	if dt == tensor.Float32 {
		return rmspropStep[float32](o, params, grads)
	}
	return rmspropStep[float64](o, params, grads)
}

func rmspropStep[T graph.Float](o *RMSprop, params []*tensor.Dense, grads []G.Value) error {
	if err := fastFiniteGrads[T](nil, grads, nil, nil); err != nil {
		return err
	}
	// slot 0: s; slot 1: b (momentum); slot 2: a (centered)
	sl, err := get[T](&o.st, params, 3)
	if err != nil {
		return err
	}
	c := graph.RMSpropCoeffs[T]{Alpha: T(o.Alpha), Alphac: T(1 - o.Alpha), Eps: T(o.Eps), LR: T(o.LR),
		Momentum: T(o.Momentum), WD: T(o.WeightDecay), Centered: o.Centered}
	o.bad = -1
	err = each(params, grads, func(i int, p, g []T) {
		// the vector kernel computes exactly the scalar update of the type's doc comment
		if graph.RMSpropUpdate(p, g, sl[0][i], sl[2][i], sl[1][i], c) && o.bad < 0 {
			o.bad = i
		}
	})
	o.st.steps++
	return err
}

// NonFiniteAfterStep is the index of the first parameter the last Step left with a NaN or
// infinite entry, or −1 (see Checked).
func (o *RMSprop) NonFiniteAfterStep() int { return o.bad }

// DecoupledDecay applies decoupled weight decay (Loshchilov & Hutter 2019) in place:
// θ ← θ − lr·λ⊙θ for each parameter θ = params[i] and its decay λ = decay[i], which has
// θ's shape (one coefficient per entry, as in Cherian et al.'s per-parameter weight-decay
// hyperparameters) or a single element (one coefficient for the tensor). It is the step
// the inner loop of Cherian et al. takes after each Adam step.
func DecoupledDecay(params, decay []*tensor.Dense, lr float64) error {
	if !finite(lr) {
		return fmt.Errorf("samplers: decay learning rate %v is not finite", lr)
	}
	dt, err := checkParams(params)
	if err != nil {
		return err
	}
	if len(decay) != len(params) {
		return fmt.Errorf("samplers: %d decay tensors for %d parameters", len(decay), len(params))
	}
	for i, l := range decay {
		switch {
		case l == nil:
			return fmt.Errorf("samplers: decay %d is nil", i)
		case l.Dtype() != dt:
			return fmt.Errorf("samplers: decay %d has dtype %v; parameter %d has %v", i, l.Dtype(), i, dt)
		case !l.Shape().Eq(params[i].Shape()) && l.Size() != 1:
			return fmt.Errorf("samplers: decay %d has shape %v; want parameter %d's shape %v or one element", i, l.Shape(), i, params[i].Shape())
		}
	}
	if dt == tensor.Float32 {
		return decay1[float32](params, decay, lr)
	}
	return decay1[float64](params, decay, lr)
}

func decay1[T graph.Float](params, decay []*tensor.Dense, lr float64) error {
	ls := make([][]T, len(decay))
	for i, l := range decay {
		var err error
		if ls[i], err = values[T](l); err != nil {
			return fmt.Errorf("samplers: decay %d: %w", i, err)
		}
		if j := firstNonFinite(ls[i]); j >= 0 {
			return fmt.Errorf("samplers: decay of parameter %d has a non-finite entry (%v at flat index %d)", i, ls[i][j], j)
		}
	}
	r := T(lr)
	for i, pt := range params {
		p, err := graph.Elements[T](pt)
		if err != nil {
			return fmt.Errorf("samplers: parameter %d: %w", i, err)
		}
		l := ls[i]
		if len(l) == 1 && len(p) != 1 {
			c := r * l[0]
			for j := range p {
				p[j] -= c * p[j]
			}
			continue
		}
		for j := range p {
			p[j] -= r * l[j] * p[j]
		}
	}
	return nil
}
