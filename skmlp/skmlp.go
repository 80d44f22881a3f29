// Package skmlp is scikit-learn's MLPClassifier(solver="adam", activation="relu") in Go,
// float64, bit for bit in its random draws and to rounding in its arithmetic: what
// Bayesmark's MLP-adam problem trains (uber/bayesmark bayesmark/sklearn_funcs.py: the
// searched hyperparameters plus solver="adam", early_stopping=True, every other argument
// scikit-learn's default).
//
// The definitions followed are scikit-learn 1.2's sklearn/neural_network
// (_multilayer_perceptron.py: _init_coef, _backprop, _fit_stochastic,
// _update_no_improvement_count; _base.py: the activations and log losses;
// _stochastic_optimizers.py: AdamOptimizer), sklearn/model_selection/_split.py
// (train_test_split, ShuffleSplit, StratifiedShuffleSplit), sklearn/utils/__init__.py
// (shuffle, _approximate_mode) and NumPy's legacy RandomState (internal/nprand). One
// RandomState(seed) stream draws, in scikit-learn's order, the initial weights (layer by
// layer, the kernel then the intercept, each uniform in ±√(6/(fan_in+fan_out))), the
// early-stopping split and every epoch's shuffle, so that Fit with a seed is
// MLPClassifier(random_state=seed).fit. TestAgainstScikitLearn checks it against scikit-learn.
package skmlp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hyperflat/hyperflat/internal/nprand"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Params are MLPClassifier's arguments for solver="adam" (activation is "relu",
// learning_rate "constant": the adam solver ignores the schedule).
type Params struct {
	Hidden []int   // hidden_layer_sizes
	Alpha  float64 // L2 penalty on the weights (not the intercepts), ≥ 0
	// BatchSize is batch_size: 0 is "auto", min(200, n); larger than the training rows, it
	// is clipped to them (scikit-learn warns and clips).
	BatchSize        int
	LearningRateInit float64 // > 0
	MaxIter          int     // ≥ 1: the most epochs
	Shuffle          bool    // reshuffle the training rows every epoch
	Tol              float64 // ≥ 0
	// EarlyStopping holds out ValidationFraction of the data (stratified for two classes)
	// and stops when its accuracy has not improved by Tol for more than NIterNoChange
	// epochs, restoring the weights of the best accuracy; without it, training stops when
	// the training loss has not improved by Tol for more than NIterNoChange epochs.
	EarlyStopping      bool
	ValidationFraction float64 // in [0, 1)
	Beta1, Beta2       float64 // in [0, 1)
	Epsilon            float64 // > 0
	NIterNoChange      int     // ≥ 1
	// BeforeStep, if set, is called before Adam step t (t counts the steps taken so far,
	// across epochs: 0 before the first) for every t divisible by StepEvery (0 or 1: every
	// step), with the network as it stands; it must not change it. An error stops Fit and is
	// returned. It is how a caller follows the training's iterates (convexity's white-box
	// record); it plays no part in the fit.
	BeforeStep func(ctx context.Context, t int, net *Net) error
	StepEvery  int
}

// Defaults are MLPClassifier's defaults (scikit-learn 1.2) for solver="adam".
func Defaults() Params {
	return Params{Hidden: []int{100}, Alpha: 1e-4, LearningRateInit: 1e-3, MaxIter: 200, Shuffle: true,
		Tol: 1e-4, ValidationFraction: 0.1, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, NIterNoChange: 10}
}

// Validate checks p against MLPClassifier's parameter constraints.
func (p Params) Validate() error {
	if len(p.Hidden) == 0 {
		return errors.New("skmlp: no hidden layer")
	}
	for _, h := range p.Hidden {
		if h <= 0 {
			return fmt.Errorf("skmlp: hidden_layer_sizes %v: want positive sizes", p.Hidden)
		}
	}
	in01 := func(v float64) bool { return v >= 0 && v < 1 }
	switch {
	case !(p.Alpha >= 0) || math.IsInf(p.Alpha, 0):
		return fmt.Errorf("skmlp: alpha %v: want ≥ 0", p.Alpha)
	case p.BatchSize < 0:
		return fmt.Errorf("skmlp: batch_size %d: want ≥ 1 (0: auto)", p.BatchSize)
	case !(p.LearningRateInit > 0) || math.IsInf(p.LearningRateInit, 0):
		return fmt.Errorf("skmlp: learning_rate_init %v: want > 0", p.LearningRateInit)
	case p.MaxIter < 1:
		return fmt.Errorf("skmlp: max_iter %d: want ≥ 1", p.MaxIter)
	case !(p.Tol >= 0) || math.IsInf(p.Tol, 0):
		return fmt.Errorf("skmlp: tol %v: want ≥ 0", p.Tol)
	case !in01(p.ValidationFraction):
		return fmt.Errorf("skmlp: validation_fraction %v: want [0, 1)", p.ValidationFraction)
	case !in01(p.Beta1) || !in01(p.Beta2):
		return fmt.Errorf("skmlp: beta_1 %v, beta_2 %v: want [0, 1)", p.Beta1, p.Beta2)
	case !(p.Epsilon > 0) || math.IsInf(p.Epsilon, 0):
		return fmt.Errorf("skmlp: epsilon %v: want > 0", p.Epsilon)
	case p.NIterNoChange < 1:
		return fmt.Errorf("skmlp: n_iter_no_change %d: want ≥ 1", p.NIterNoChange)
	}
	return nil
}

// Net is an MLP's weights in scikit-learn's layout: Coefs[i] is the Units[i]×Units[i+1]
// kernel, row-major (coefs_[i]), Intercepts[i] its Units[i+1] biases; ReLU hidden layers and
// a logistic output (one unit, two classes) or a softmax (three or more).
type Net struct {
	Units      []int
	Coefs      [][]float64
	Intercepts [][]float64
	Logistic   bool
}

// InitBound is _init_coef's bound for a ReLU network: √(6/(fan_in+fan_out)) for every layer,
// the output layer included (the factor is 2 only for activation="logistic", the hidden
// activation, which Bayesmark does not set).
func InitBound(fanIn, fanOut int) float64 { return math.Sqrt(6.0 / float64(fanIn+fanOut)) }

// outputs is the output units for the classes: one logistic unit for two (LabelBinarizer's
// single column), one softmax unit per class otherwise.
func outputs(classes int) int {
	if classes == 2 {
		return 1
	}
	return classes
}

// Init draws a network for in features, the hidden sizes and the classes as _initialize
// does: layer by layer, the kernel (row-major) then the intercepts, each uniform in
// ±InitBound, from rng.
func Init(rng *nprand.RandomState, in int, hidden []int, classes int) *Net {
	units := append(append([]int{in}, hidden...), outputs(classes))
	n := &Net{Units: units, Logistic: classes == 2}
	for i := 0; i+1 < len(units); i++ {
		b := InitBound(units[i], units[i+1])
		w := make([]float64, units[i]*units[i+1])
		for j := range w {
			w[j] = rng.Uniform(-b, b)
		}
		c := make([]float64, units[i+1])
		for j := range c {
			c[j] = rng.Uniform(-b, b)
		}
		n.Coefs, n.Intercepts = append(n.Coefs, w), append(n.Intercepts, c)
	}
	return n
}

func (n *Net) clone() *Net {
	c := &Net{Units: n.Units, Logistic: n.Logistic}
	for i := range n.Coefs {
		c.Coefs = append(c.Coefs, slices.Clone(n.Coefs[i]))
		c.Intercepts = append(c.Intercepts, slices.Clone(n.Intercepts[i]))
	}
	return c
}

// finite reports whether every weight is finite (scikit-learn refuses a fit that is not).
func (n *Net) finite() bool {
	for i := range n.Coefs {
		for _, s := range [][]float64{n.Coefs[i], n.Intercepts[i]} {
			for _, v := range s {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return false
				}
			}
		}
	}
	return true
}

// forward fills acts[1:] for the rows of acts[0] (rows × Units[0]): ReLU hidden layers and
// the output activation, as _forward_pass.
func (n *Net) forward(acts [][]float64, rows int) {
	last := len(n.Coefs) - 1
	for i, w := range n.Coefs {
		in, out := n.Units[i], n.Units[i+1]
		a := acts[i+1][:rows*out]
		for r := 0; r < rows; r++ {
			copy(a[r*out:(r+1)*out], n.Intercepts[i])
		}
		// safe_sparse_dot(activations[i], coefs_[i]) += intercepts_[i]: the product is
		// added to the broadcast intercepts here, the same sum in another order.
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: rows, Cols: in, Stride: in, Data: acts[i][:rows*in]},
			blas64.General{Rows: in, Cols: out, Stride: out, Data: w}, 1,
			blas64.General{Rows: rows, Cols: out, Stride: out, Data: a})
		if i < last {
			for j, v := range a {
				a[j] = math.Max(v, 0) // np.maximum(X, 0): a NaN stays NaN, as here
			}
			continue
		}
		if n.Logistic {
			for j, v := range a {
				a[j] = 1 / (1 + math.Exp(-v)) // scipy.special.expit
			}
			continue
		}
		for r := 0; r < rows; r++ { // inplace_softmax
			row := a[r*out : (r+1)*out]
			m := row[0]
			for _, v := range row[1:] {
				if v > m || math.IsNaN(v) {
					m = v
				}
			}
			s := 0.0
			for j, v := range row {
				row[j] = math.Exp(v - m)
				s += row[j]
			}
			for j := range row {
				row[j] /= s
			}
		}
	}
}

// logLoss is log_loss (softmax) or binary_log_loss (logistic) of the probabilities p (rows ×
// out) against labels y, the probabilities clipped to [ε, 1−ε] (ε the float64 machine
// epsilon), as _base.py computes them.
func logLoss(p []float64, out int, y []int) float64 {
	const eps = 2.220446049250313e-16
	clip := func(v float64) float64 { return min(max(v, eps), 1-eps) }
	s := 0.0
	if out == 1 {
		pos, neg := 0.0, 0.0
		for r, c := range y {
			if c == 1 {
				pos += math.Log(clip(p[r]))
			} else {
				neg += math.Log(1 - clip(p[r]))
			}
		}
		return -(pos + neg) / float64(len(y))
	}
	for r, c := range y {
		s += math.Log(clip(p[r*out+c]))
	}
	return -s / float64(len(y))
}

// predict is _predict's class of each row of the output probabilities: p > 0.5 for one
// logistic unit (LabelBinarizer's threshold), else the first largest probability.
func predict(p []float64, out, rows int) []int {
	pred := make([]int, rows)
	for r := range pred {
		if out == 1 {
			if p[r] > 0.5 {
				pred[r] = 1
			}
			continue
		}
		row := p[r*out : (r+1)*out]
		best := 0
		for j, v := range row {
			// np.argmax: the first maximum, a NaN being the maximum
			if math.IsNaN(row[best]) {
				break
			}
			if v > row[best] || math.IsNaN(v) {
				best = j
			}
		}
		pred[r] = best
	}
	return pred
}

// PredictProba is predict_proba's probabilities of the rows of x (rows × Units[0],
// row-major): one column per class (two for a logistic output: 1−p, p).
func (n *Net) PredictProba(x []float64, rows int) []float64 {
	acts := n.buffers(rows)
	copy(acts[0], x)
	n.forward(acts, rows)
	p := acts[len(acts)-1]
	if !n.Logistic {
		return p
	}
	q := make([]float64, 2*rows)
	for r := range rows {
		q[2*r], q[2*r+1] = 1-p[r], p[r]
	}
	return q
}

func (n *Net) buffers(rows int) [][]float64 {
	acts := make([][]float64, len(n.Units))
	for i, u := range n.Units {
		acts[i] = make([]float64, rows*u)
	}
	return acts
}
